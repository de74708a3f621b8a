package main

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// clusterHoldResult is the many-locks test of this library on a Redis Cluster: renewal round trips
// per node when nearly every lock has a slot of its own.
type clusterHoldResult struct {
	Locks               int     `json:"locks"`
	Masters             int     `json:"masters"`
	Watchdog            string  `json:"watchdog_timeout"`
	AcquireSeconds      float64 `json:"acquire_seconds"`
	AcquireErrors       int64   `json:"acquire_errors"`
	IntervalsElapsed    float64 `json:"renew_intervals_elapsed"`
	RenewCallsPerPeriod float64 `json:"renew_calls_per_interval"`
	PerNodePerPeriod    float64 `json:"renew_calls_per_node_per_interval"`
	RenewedPerPeriod    float64 `json:"renewed_per_interval"`
	LostDuringWindow    uint64  `json:"lost_during_window"`
	UnlockErrors        int64   `json:"unlock_errors"`
}

// clusterHoldTest starts a redistest Cluster, acquires n watchdog locks with random names, watches
// the renewals for a few intervals, and unlocks them.
func clusterHoldTest(ctx context.Context, n int, watchdog time.Duration, intervals, workers int) (*clusterHoldResult, error) {
	cl, err := redistest.StartClusterProcess()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	masters, err := cl.Masters(ctx)
	if err != nil {
		return nil, err
	}
	opt := cl.Options()
	rdb := redis.NewClusterClient(opt)
	defer rdb.Close()
	c, err := redisson.New(rdb, redisson.WithWatchdogTimeout(watchdog))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res := &clusterHoldResult{Locks: n, Masters: len(masters), Watchdog: watchdog.String()}
	holds := make([]*redisson.Hold, n)
	t0 := time.Now()
	res.AcquireErrors, _ = forEach(n, workers, func(i int) error {
		h, err := c.Lock(fmt.Sprintf("hold:%d:%d", i, t0.UnixNano())).Lock(ctx)
		holds[i] = h
		return err
	})
	res.AcquireSeconds = time.Since(t0).Seconds()
	period := watchdog / 3
	s0, s1, w0, w1, err := renewWindow(ctx, c, time.Duration(intervals)*period)
	if err != nil {
		return nil, err
	}
	res.IntervalsElapsed = float64(w1.Sub(w0)) / float64(period)
	res.RenewCallsPerPeriod = float64(s1.RenewCalls-s0.RenewCalls) / res.IntervalsElapsed
	res.PerNodePerPeriod = res.RenewCallsPerPeriod / float64(len(masters))
	res.RenewedPerPeriod = float64(s1.Renewed-s0.Renewed) / res.IntervalsElapsed
	res.LostDuringWindow = s1.Lost - s0.Lost
	res.UnlockErrors, _ = forEach(n, workers, func(i int) error {
		if holds[i] == nil {
			return nil
		}
		return holds[i].Unlock(context.Background())
	})
	return res, nil
}
