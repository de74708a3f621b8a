package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// holdResult is the many-locks test of this library (metric d).
type holdResult struct {
	Locks           int     `json:"locks"`
	Watchdog        string  `json:"watchdog_timeout"`
	RenewPeriod     string  `json:"renew_period"`
	AcquireSeconds  float64 `json:"acquire_seconds"`
	AcquireErrors   int64   `json:"acquire_errors"`
	GoroutinesBase  int     `json:"goroutines_base"`
	GoroutinesAdded int     `json:"goroutines_added"`
	HeapAddedBytes  int64   `json:"heap_added_bytes"`
	HeapPerLock     float64 `json:"heap_bytes_per_lock"`
	HeldStat        int     `json:"stats_held"`
	LockKeys        int64   `json:"lock_keys_in_redis"`

	WindowSeconds       float64 `json:"renew_window_seconds"`
	IntervalsElapsed    float64 `json:"renew_intervals_elapsed"`
	RenewCalls          uint64  `json:"renew_calls"`
	RenewCallsPerPeriod float64 `json:"renew_calls_per_interval"`
	Renewed             uint64  `json:"renewed"`
	RenewedPerPeriod    float64 `json:"renewed_per_interval"`
	LostDuringWindow    uint64  `json:"lost_during_window"`
	LockKeysAfterWindow int64   `json:"lock_keys_after_window"`
	MinPTTLAfterWindow  int64   `json:"min_pttl_ms_after_window"` // over a sample of 100 keys

	UnlockSeconds       float64 `json:"unlock_seconds"`
	UnlockErrors        int64   `json:"unlock_errors"`
	FirstError          string  `json:"first_error,omitempty"`
	HeldAfterUnlock     int     `json:"stats_held_after_unlock"`
	LockKeysAfterUnlock int64   `json:"lock_keys_after_unlock"`
	GoroutinesAfterAll  int     `json:"goroutines_after_unlock_minus_base"`
}

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// settleGoroutines returns runtime.NumGoroutine once it has stopped changing (bounded wait).
func settleGoroutines() int {
	prev := runtime.NumGoroutine()
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n == prev {
			return n
		}
		prev = n
	}
	return prev
}

// countKeys counts keys matching pattern with SCAN.
func countKeys(ctx context.Context, rdb *redis.Client, pattern string) (int64, error) {
	var n int64
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	return n, iter.Err()
}

// renewWindow reads c's stats before and after a window of d (or ctx's end: an error), with the times.
func renewWindow(ctx context.Context, c *redisson.Client, d time.Duration) (s0, s1 redisson.Stats, w0, w1 time.Time, err error) {
	s0, w0 = c.Stats(), time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return s0, s1, w0, w1, ctx.Err()
	}
	return s0, c.Stats(), w0, time.Now(), nil
}

// forEach runs fn(i) for i in [0, n) on workers goroutines and returns the errors counted and the first.
func forEach(n, workers int, fn func(i int) error) (int64, error) {
	var next, errs atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs.Add(1)
					first.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if v := first.Load(); v != nil {
		return errs.Load(), v.(error)
	}
	return 0, nil
}

// holdTest acquires n watchdog locks with this library, watches the renewals for a few periods,
// then unlocks them all.
func holdTest(ctx context.Context, addr string, stats *redis.Client, n int, watchdog time.Duration, intervals, workers int) (res *holdResult, err error) {
	if err := stats.FlushAll(ctx).Err(); err != nil {
		return nil, err
	}
	period := watchdog / 3
	res = &holdResult{Locks: n, Watchdog: watchdog.String(), RenewPeriod: period.String()}
	noteErr := func(e error) {
		if res.FirstError == "" && e != nil {
			res.FirstError = e.Error()
		}
	}

	rdb := redis.NewClient(goRedisOptions(addr))
	defer rdb.Close()
	c, err := redisson.New(rdb, redisson.WithWatchdogTimeout(watchdog))
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()

	locks := make([]*redisson.Lock, n)
	holds := make([]*redisson.Hold, n)
	for i := range locks {
		locks[i] = c.Lock(fmt.Sprintf("hold:%d", i))
	}
	// Warm the connection pool so that pool growth is not counted.
	if _, err := forEach(workers, workers, func(i int) error {
		l := c.Lock(fmt.Sprintf("warm:%d", i))
		h, err := l.Lock(ctx)
		if err != nil {
			return err
		}
		return h.Unlock(ctx)
	}); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}

	res.GoroutinesBase = settleGoroutines()
	heap0 := heapAlloc()

	t0 := time.Now()
	res.AcquireErrors, err = forEach(n, workers, func(i int) error {
		h, err := locks[i].Lock(context.Background())
		holds[i] = h
		return err
	})
	res.AcquireSeconds = time.Since(t0).Seconds()
	noteErr(err)
	res.GoroutinesAdded = settleGoroutines() - res.GoroutinesBase
	res.HeapAddedBytes = heapAlloc() - heap0
	res.HeapPerLock = float64(res.HeapAddedBytes) / float64(n)
	st := c.Stats()
	res.HeldStat = st.Held
	if res.LockKeys, err = countKeys(ctx, stats, "hold:*"); err != nil {
		return nil, err
	}

	// Renewal window: longer than the lease, so the keys only survive if renewed.
	s0, s1, w0, w1, err := renewWindow(ctx, c, time.Duration(intervals)*period)
	if err != nil {
		return nil, err
	}
	res.WindowSeconds = w1.Sub(w0).Seconds()
	res.IntervalsElapsed = float64(w1.Sub(w0)) / float64(period)
	res.RenewCalls = s1.RenewCalls - s0.RenewCalls
	res.Renewed = s1.Renewed - s0.Renewed
	res.RenewCallsPerPeriod = float64(res.RenewCalls) / res.IntervalsElapsed
	res.RenewedPerPeriod = float64(res.Renewed) / res.IntervalsElapsed
	res.LostDuringWindow = s1.Lost - s0.Lost
	if res.LockKeysAfterWindow, err = countKeys(ctx, stats, "hold:*"); err != nil {
		return nil, err
	}
	res.MinPTTLAfterWindow = -3
	for i := 0; i < n; i += max(1, n/100) {
		p, err := stats.PTTL(ctx, fmt.Sprintf("hold:%d", i)).Result()
		if err != nil {
			return nil, err
		}
		if v := p.Milliseconds(); res.MinPTTLAfterWindow == -3 || v < res.MinPTTLAfterWindow {
			res.MinPTTLAfterWindow = v
		}
	}

	t1 := time.Now()
	res.UnlockErrors, err = forEach(n, workers, func(i int) error {
		if holds[i] == nil {
			return nil
		}
		return holds[i].Unlock(context.Background())
	})
	res.UnlockSeconds = time.Since(t1).Seconds()
	noteErr(err)
	res.HeldAfterUnlock = c.Stats().Held
	if res.LockKeysAfterUnlock, err = countKeys(ctx, stats, "hold:*"); err != nil {
		return nil, err
	}
	clear(holds)
	res.GoroutinesAfterAll = settleGoroutines() - res.GoroutinesBase
	closed = true
	if err := c.Close(); err != nil {
		return res, err
	}
	if res.AcquireErrors > 0 || res.UnlockErrors > 0 {
		return res, errors.New("hold test: " + res.FirstError)
	}
	return res, nil
}
