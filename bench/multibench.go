package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// multiResult is the MultiLock order scenario: two MultiLocks over the same two Locks (one on each of
// two servers), each group one goroutine with Clients of its own (as two processes), locking,
// holding for the critical section and unlocking in a loop; once with both groups taking the locks
// in the same order, once in opposite orders, alternately.
type multiResult struct {
	Seconds     float64  `json:"seconds_per_order"`
	SameOps     float64  `json:"same_order_acq_per_sec"`
	OppositeOps float64  `json:"opposite_order_acq_per_sec"`
	Ratio       float64  `json:"opposite_over_same"`
	SameSplit   [2]int64 `json:"same_order_acquisitions_per_group"`
	OppSplit    [2]int64 `json:"opposite_order_acquisitions_per_group"`
	Overlaps    int64    `json:"overlaps"`
	Errors      int64    `json:"errors"`
}

// multiAlternations is how many times each order runs (for d/multiAlternations each time).
const multiAlternations = 2

// multiBench runs the MultiLock order scenario: the first lock on the bench's server (addr), the
// second on a server of its own, started here.
func multiBench(ctx context.Context, addr string, critical, d time.Duration) (res *multiResult, err error) {
	srv2, err := redistest.StartProcess()
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := srv2.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the second redis-server: %w", cerr))
		}
	}()
	res = &multiResult{}
	slot := d / multiAlternations
	var same, opp time.Duration
	for i := range multiAlternations {
		for _, opposite := range []bool{false, true} {
			name := fmt.Sprintf("bench:multi:%d:%v", i, opposite)
			split, took, overlaps, nerr, err := multiRun(ctx, [2]string{addr, srv2.Addr()}, name, opposite, critical, slot)
			if err != nil {
				return res, err
			}
			res.Overlaps += overlaps
			res.Errors += nerr
			sum := &res.SameSplit
			if opposite {
				sum, opp = &res.OppSplit, opp+took
			} else {
				same += took
			}
			sum[0] += split[0]
			sum[1] += split[1]
		}
	}
	res.Seconds = same.Seconds()
	res.SameOps = float64(res.SameSplit[0]+res.SameSplit[1]) / same.Seconds()
	res.OppositeOps = float64(res.OppSplit[0]+res.OppSplit[1]) / opp.Seconds()
	if res.SameOps > 0 {
		res.Ratio = res.OppositeOps / res.SameOps
	}
	return res, nil
}

// multiRun runs the two groups for d and returns their acquisitions, the time until both stopped,
// the critical sections that overlapped and the errors.
func multiRun(ctx context.Context, addrs [2]string, name string, opposite bool, critical, d time.Duration) (split [2]int64, took time.Duration, overlaps, nerr int64, err error) {
	var clients []*redisson.Client
	var rdbs []*redis.Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
		for _, r := range rdbs {
			r.Close()
		}
	}()
	var groups [2]*redisson.MultiLock
	for g := range groups {
		var parts [2]redisson.Locker
		for i, a := range addrs {
			rdb := redis.NewClient(goRedisOptions(a))
			rdbs = append(rdbs, rdb)
			c, cerr := redisson.New(rdb)
			if cerr != nil {
				return split, 0, 0, 0, cerr
			}
			clients = append(clients, c)
			parts[i] = c.Lock(fmt.Sprintf("%s:%d", name, i))
			// Warm up: a connection and the scripts loaded on each server.
			h, lerr := c.Lock(fmt.Sprintf("%s:warm:%d", name, g)).Lock(ctx)
			if lerr != nil {
				return split, 0, 0, 0, lerr
			}
			if lerr := h.Unlock(ctx); lerr != nil {
				return split, 0, 0, 0, lerr
			}
		}
		if opposite && g == 1 {
			parts[0], parts[1] = parts[1], parts[0]
		}
		groups[g] = redisson.NewMultiLock(parts[0], parts[1])
	}
	var inside, overlapN, errN atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for g, m := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) && ctx.Err() == nil {
				// Bounded by the scenario's end: a wait cut off there is not an error.
				wctx, cancel := context.WithDeadline(ctx, stop)
				h, err := m.Lock(wctx)
				cancel()
				if err != nil {
					if time.Now().Before(stop) && ctx.Err() == nil {
						errN.Add(1)
					}
					continue
				}
				if inside.Add(1) > 1 {
					overlapN.Add(1)
				}
				time.Sleep(critical)
				inside.Add(-1)
				if err := h.Unlock(ctx); err != nil {
					errN.Add(1)
				}
				split[g]++ // this goroutine's own slot
			}
		}()
	}
	wg.Wait()
	return split, time.Since(start), overlapN.Load(), errN.Load(), ctx.Err()
}

func printMulti(w io.Writer, r *multiResult) {
	fmt.Fprintf(w, "\n### MultiLock, same vs opposite order\n\n")
	fmt.Fprintf(w, "Two MultiLocks over the same two Locks (one on each of two servers), one goroutine each with Clients of its own, critical section as above; %.1fs per order in %d alternations.\n\n",
		r.Seconds, multiAlternations)
	fmt.Fprintf(w, "| order | acquisitions/s | per group |\n|---|---:|---|\n")
	fmt.Fprintf(w, "| same | %.0f | %d / %d |\n", r.SameOps, r.SameSplit[0], r.SameSplit[1])
	fmt.Fprintf(w, "| opposite | %.0f | %d / %d |\n", r.OppositeOps, r.OppSplit[0], r.OppSplit[1])
	fmt.Fprintf(w, "| opposite / same | %.2f | |\n", r.Ratio)
	fmt.Fprintf(w, "| overlaps, errors | %d, %d | |\n", r.Overlaps, r.Errors)
	fmt.Fprintf(w, "\nRESULT scenario=multilock-order same_acq_per_sec=%.1f opposite_acq_per_sec=%.1f ratio=%.3f same_split=%d/%d opposite_split=%d/%d overlaps=%d errors=%d\n",
		r.SameOps, r.OppositeOps, r.Ratio, r.SameSplit[0], r.SameSplit[1], r.OppSplit[0], r.OppSplit[1], r.Overlaps, r.Errors)
}
