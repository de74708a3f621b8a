package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// semResult is the Semaphore scenario: acquire/release ops/s of one Client uncontended, and of N
// Clients (one goroutine each, as N processes) on P permits holding each for the critical section,
// against the floor of P Locks on P names (none of the peers has a semaphore); Redis commands per
// acquisition with 16 and with 64 Clients.
type semResult struct {
	Permits         int64   `json:"permits"`
	UncontendedOps  float64 `json:"uncontended_ops_per_sec"`
	Contended16Ops  float64 `json:"contended_16_ops_per_sec"`
	LocksFloor16Ops float64 `json:"locks_floor_16_ops_per_sec"`
	Ratio16         float64 `json:"semaphore_over_locks_16"`
	CmdsPerAcq16    float64 `json:"cmds_per_acquisition_16"`
	CmdsPerAcq64    float64 `json:"cmds_per_acquisition_64"`
	Errors          int64   `json:"errors"`
}

// semBench runs the Semaphore scenario.
func semBench(ctx context.Context, addr string, stats *redis.Client, permits int64, critical, d time.Duration) (*semResult, error) {
	res := &semResult{Permits: permits}
	var errs []error
	run := func(mode string, clients int, critical time.Duration) float64 {
		before, err := commandStats(ctx, stats)
		if err != nil {
			errs = append(errs, err)
			return 0
		}
		ops, nerr, err := semRun(ctx, addr, mode, clients, permits, critical, d)
		if err != nil {
			errs = append(errs, err)
		}
		res.Errors += nerr
		after, err := commandStats(ctx, stats)
		if err != nil {
			errs = append(errs, err)
			return ops
		}
		var cmds int64
		for name, n := range after {
			if !housekeeping(name) && !strings.HasPrefix(name, usecKey) {
				cmds += n - before[name]
			}
		}
		if ops > 0 && mode == "sem" && clients >= 16 {
			perAcq := float64(cmds) / (ops * d.Seconds())
			if clients == 16 {
				res.CmdsPerAcq16 = perAcq
			} else {
				res.CmdsPerAcq64 = perAcq
			}
		}
		return ops
	}
	res.UncontendedOps = run("sem", 1, 0)
	res.Contended16Ops = run("sem", 16, critical)
	res.LocksFloor16Ops = run("locks", 16, critical)
	run("sem", 64, critical)
	if res.LocksFloor16Ops > 0 {
		res.Ratio16 = res.Contended16Ops / res.LocksFloor16Ops
	}
	return res, errors.Join(errs...)
}

// semRun runs clients Clients, one goroutine each, for d: mode "sem" acquires and releases one permit
// of a semaphore of permits; "locks" locks and unlocks one of permits Locks (goroutine i uses name
// i mod permits).
func semRun(ctx context.Context, addr, mode string, clients int, permits int64, critical, d time.Duration) (ops float64, nerr int64, err error) {
	name := fmt.Sprintf("bench:sem:%s:%d:%d", mode, clients, time.Now().UnixNano())
	var done atomic.Int64
	var errCount atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for i := range clients {
		rdb := redis.NewClient(goRedisOptions(addr))
		c, cerr := redisson.New(rdb)
		if cerr != nil {
			rdb.Close()
			return 0, 0, cerr
		}
		if i == 0 && mode == "sem" {
			if _, err := c.Semaphore(name).TrySetPermits(ctx, permits); err != nil {
				c.Close()
				rdb.Close()
				return 0, 0, err
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rdb.Close()
			defer c.Close()
			s := c.Semaphore(name)
			l := c.Lock(fmt.Sprintf("%s:%d", name, int64(i)%permits))
			for time.Now().Before(stop) && ctx.Err() == nil {
				var h *redisson.Hold
				var err error
				if mode == "sem" {
					err = s.Acquire(ctx, 1)
				} else {
					h, err = l.Lock(ctx)
				}
				if err != nil {
					errCount.Add(1)
					continue
				}
				if critical > 0 {
					time.Sleep(critical)
				}
				if mode == "sem" {
					err = s.Release(ctx, 1)
				} else {
					err = h.Unlock(ctx)
				}
				if err != nil {
					errCount.Add(1)
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / d.Seconds(), errCount.Load(), nil
}

func printSem(w io.Writer, r *semResult) {
	fmt.Fprintf(w, "\n### Semaphore\n\n")
	fmt.Fprintf(w, "One Client uncontended; 16 Clients (one goroutine each) on %d permits, each held for the critical section, against %d Locks on %d names (the floor: no peer has a semaphore).\n\n", r.Permits, r.Permits, r.Permits)
	fmt.Fprintf(w, "| | Semaphore | %d Locks |\n|---|---:|---:|\n", r.Permits)
	fmt.Fprintf(w, "| uncontended ops/s (1 Client) | %.0f | |\n", r.UncontendedOps)
	fmt.Fprintf(w, "| 16 Clients ops/s | %.0f | %.0f |\n", r.Contended16Ops, r.LocksFloor16Ops)
	fmt.Fprintf(w, "| Redis commands per acquisition, 16 / 64 Clients | %.1f / %.1f | |\n", r.CmdsPerAcq16, r.CmdsPerAcq64)
	fmt.Fprintf(w, "\nRESULT scenario=semaphore uncontended_ops_per_sec=%.1f contended16_ops_per_sec=%.1f locks_floor16_ops_per_sec=%.1f ratio16=%.3f cmds_per_acq16=%.2f cmds_per_acq64=%.2f errors=%d\n",
		r.UncontendedOps, r.Contended16Ops, r.LocksFloor16Ops, r.Ratio16, r.CmdsPerAcq16, r.CmdsPerAcq64, r.Errors)
	fmt.Fprintln(w)
}
