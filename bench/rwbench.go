package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// rwResult is the read-heavy ReadWriteLock scenario: N Clients (one goroutine each, as N processes)
// on one name, each operation a read with probability readShare, the critical section a sleep;
// against the plain Lock doing the same operations exclusively, in the same run.
type rwResult struct {
	Clients         int     `json:"clients"`
	ReadShare       float64 `json:"read_share"`
	RWOpsPerSec     float64 `json:"rwlock_ops_per_sec"`
	LockOpsPerSec   float64 `json:"lock_ops_per_sec"`
	CeilOpsPerSec   float64 `json:"rwmutex_ops_per_sec"` // an in-process sync.RWMutex: the ceiling
	Ratio           float64 `json:"rwlock_over_lock"`
	WriterWaitP99Ms float64 `json:"writer_wait_p99_ms"`
	ReaderWaitP99Ms float64 `json:"reader_wait_p99_ms"`
	Errors          int     `json:"errors"`
}

// rwBench runs the read-heavy scenario with the ReadWriteLock, then with the Lock.
func rwBench(ctx context.Context, addr string, clients int, readShare float64, critical, d time.Duration) (*rwResult, error) {
	res := &rwResult{Clients: clients, ReadShare: readShare}
	var errs []error
	for _, mode := range []string{"rw", "lock", "rwmutex"} {
		ops, writerWaits, readerWaits, nerr, err := rwRun(ctx, addr, clients, readShare, critical, d, mode)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		res.Errors += nerr
		switch mode {
		case "rw":
			res.RWOpsPerSec = ops
			res.WriterWaitP99Ms = ms(percentile(writerWaits, 0.99))
			res.ReaderWaitP99Ms = ms(percentile(readerWaits, 0.99))
		case "lock":
			res.LockOpsPerSec = ops
		default:
			res.CeilOpsPerSec = ops
		}
	}
	if res.LockOpsPerSec > 0 {
		res.Ratio = res.RWOpsPerSec / res.LockOpsPerSec
	}
	return res, errors.Join(errs...)
}

// rwRun runs the scenario with mode "rw" (the ReadWriteLock), "lock" (the Lock) or "rwmutex" (one
// in-process sync.RWMutex shared by the goroutines: the ceiling).
func rwRun(ctx context.Context, addr string, clients int, readShare float64, critical, d time.Duration, mode string) (ops float64, writerWaits, readerWaits []time.Duration, nerr int, err error) {
	name := fmt.Sprintf("bench:rw:%s:%d", mode, time.Now().UnixNano())
	var ceiling sync.RWMutex
	var mu sync.Mutex
	var wg sync.WaitGroup
	var done int64
	stop := time.Now().Add(d)
	for range clients {
		rdb := redis.NewClient(goRedisOptions(addr))
		c, cerr := redisson.New(rdb)
		if cerr != nil {
			rdb.Close()
			return 0, nil, nil, 0, cerr
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rdb.Close()
			defer c.Close()
			for time.Now().Before(stop) && ctx.Err() == nil {
				read := rand.Float64() < readShare
				start := time.Now()
				var h *redisson.Hold
				var err error
				switch {
				case mode == "rwmutex" && read:
					ceiling.RLock()
				case mode == "rwmutex":
					ceiling.Lock()
				case mode == "lock":
					h, err = c.Lock(name).Lock(ctx)
				case read:
					h, err = c.ReadWriteLock(name).RLock(ctx)
				default:
					h, err = c.ReadWriteLock(name).Lock(ctx)
				}
				waited := time.Since(start)
				if err != nil {
					mu.Lock()
					nerr++
					mu.Unlock()
					continue
				}
				time.Sleep(critical)
				var uerr error
				switch {
				case mode == "rwmutex" && read:
					ceiling.RUnlock()
				case mode == "rwmutex":
					ceiling.Unlock()
				default:
					uerr = h.Unlock(ctx)
				}
				mu.Lock()
				if uerr != nil {
					nerr++
				}
				done++
				if read {
					readerWaits = append(readerWaits, waited)
				} else {
					writerWaits = append(writerWaits, waited)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(writerWaits)
	slices.Sort(readerWaits)
	return float64(done) / d.Seconds(), writerWaits, readerWaits, nerr, nil
}

func printRW(w io.Writer, r *rwResult) {
	fmt.Fprintf(w, "\n### ReadWriteLock, read-heavy\n\n")
	fmt.Fprintf(w, "%d Clients (one goroutine each) on one name, %.0f%% reads, critical section as above; the Lock does the same operations exclusively.\n\n",
		r.Clients, r.ReadShare*100)
	fmt.Fprintf(w, "| | ReadWriteLock | Lock | in-process sync.RWMutex |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(w, "| ops/s | %.0f | %.0f | %.0f |\n", r.RWOpsPerSec, r.LockOpsPerSec, r.CeilOpsPerSec)
	fmt.Fprintf(w, "| ReadWriteLock / Lock | %.2f | | |\n", r.Ratio)
	fmt.Fprintf(w, "| writer wait p99, ms | %.1f | | |\n", r.WriterWaitP99Ms)
	fmt.Fprintf(w, "| reader wait p99, ms | %.1f | | |\n", r.ReaderWaitP99Ms)
	fmt.Fprintf(w, "\nRESULT scenario=rw-read-heavy rwlock_ops_per_sec=%.1f lock_ops_per_sec=%.1f rwmutex_ops_per_sec=%.1f ratio=%.3f writer_wait_p99_ms=%.3f reader_wait_p99_ms=%.3f errors=%d\n",
		r.RWOpsPerSec, r.LockOpsPerSec, r.CeilOpsPerSec, r.Ratio, r.WriterWaitP99Ms, r.ReaderWaitP99Ms, r.Errors)
}
