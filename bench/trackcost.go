package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// trackCostRow is what n held locks cost with the loss tracking on or off (the -track-cost
// scenario): in Redis (memory, connections, tracking table, commands per second while holding) and
// in the client (goroutines, heap).
type trackCostRow struct {
	Tracking        bool    `json:"tracking"`
	Locks           int     `json:"locks"`
	RedisMemAdded   int64   `json:"redis_used_memory_added_bytes"`
	RedisMemPerLock float64 `json:"redis_used_memory_per_lock_bytes"`
	ConnsAdded      int64   `json:"redis_connections_of_the_client"`
	TrackingKeys    int64   `json:"redis_tracking_total_keys"`
	CmdsPerSec      float64 `json:"redis_commands_per_sec_while_holding"`
	GoroutinesAdded int     `json:"client_goroutines_added"`
	HeapPerLock     float64 `json:"client_heap_per_lock_bytes"`
}

// infoInts reads the integer fields names of INFO section.
func infoInts(ctx context.Context, rdb *redis.Client, section string, names ...string) (map[string]int64, error) {
	s, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, l := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		for _, n := range names {
			if k == n {
				out[k], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return out, nil
}

// redisReading is the server-side state trackCost compares before and after.
func redisReading(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	m, err := infoInts(ctx, rdb, "memory", "used_memory")
	if err != nil {
		return nil, err
	}
	for _, sec := range []string{"clients", "stats"} {
		o, err := infoInts(ctx, rdb, sec, "connected_clients", "tracking_total_keys", "total_commands_processed")
		if err != nil {
			return nil, err
		}
		for k, v := range o {
			m[k] = v
		}
	}
	return m, nil
}

// trackCost holds n locks on one Client, with the loss tracking on or off, for each n of counts,
// and reads what they cost once every hold is tracked; watchdog is the Clients' watchdog timeout
// (the commands per second include a renewal interval's renewals and, tracking on, the reads that
// re-arm the tracking after each renewal).
func trackCost(ctx context.Context, addr string, stats *redis.Client, counts []int, watchdog time.Duration, workers int) ([]trackCostRow, error) {
	var rows []trackCostRow
	for _, n := range counts {
		for _, on := range []bool{false, true} {
			r, err := trackCostOne(ctx, addr, stats, n, on, watchdog, workers)
			if err != nil {
				return rows, fmt.Errorf("%d locks, tracking %v: %w", n, on, err)
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

func trackCostOne(ctx context.Context, addr string, stats *redis.Client, n int, on bool, watchdog time.Duration, workers int) (trackCostRow, error) {
	row := trackCostRow{Tracking: on, Locks: n}
	if err := stats.FlushAll(ctx).Err(); err != nil {
		return row, err
	}
	pre, err := redisReading(ctx, stats)
	if err != nil {
		return row, err
	}
	rdb := redis.NewClient(goRedisOptions(addr))
	defer rdb.Close()
	c, err := redisson.New(rdb, redisson.WithWatchdogTimeout(watchdog), redisson.WithLossTracking(on), redisson.WithoutProcessRecord())
	if err != nil {
		return row, err
	}
	defer c.Close()
	// Warm the pool (and, tracking on, dial the tracker: it dials at the first tracked hold).
	warm, err := c.Lock("trackcost:warm").Lock(ctx)
	if err != nil {
		return row, err
	}
	time.Sleep(100 * time.Millisecond) // past the tracker's delay: the warm hold is tracked
	if _, err := forEach(workers, workers, func(i int) error {
		h, err := c.Lock(fmt.Sprintf("trackcost:w:%d", i)).Lock(ctx)
		if err != nil {
			return err
		}
		return h.Unlock(ctx)
	}); err != nil {
		return row, err
	}
	base := settleGoroutines()
	heap0 := heapAlloc()
	r0, err := redisReading(ctx, stats)
	if err != nil {
		return row, err
	}
	holds := make([]*redisson.Hold, n)
	if _, err := forEach(n, workers, func(i int) error {
		h, err := c.Lock(fmt.Sprintf("trackcost:%d", i)).Lock(ctx)
		holds[i] = h
		return err
	}); err != nil {
		return row, err
	}
	// Past the tracker's delay, and a renewal interval: every hold renewed and re-armed once.
	period := watchdog / 3
	time.Sleep(200 * time.Millisecond)
	r1, err := redisReading(ctx, stats)
	if err != nil {
		return row, err
	}
	row.GoroutinesAdded = settleGoroutines() - base
	row.HeapPerLock = float64(heapAlloc()-heap0) / float64(n)
	time.Sleep(2 * period)
	r2, err := redisReading(ctx, stats)
	if err != nil {
		return row, err
	}
	row.RedisMemAdded = r1["used_memory"] - r0["used_memory"]
	row.RedisMemPerLock = float64(row.RedisMemAdded) / float64(n)
	row.ConnsAdded = r1["connected_clients"] - pre["connected_clients"] // the pool's and the tracker's
	row.TrackingKeys = r1["tracking_total_keys"]
	// INFO itself is counted: the two readings' own commands are negligible against a period.
	row.CmdsPerSec = float64(r2["total_commands_processed"]-r1["total_commands_processed"]) / (2 * period).Seconds()
	for _, h := range holds {
		if h != nil {
			if err := h.Unlock(ctx); err != nil {
				return row, err
			}
		}
	}
	if err := warm.Unlock(ctx); err != nil {
		return row, err
	}
	if l := c.Stats().Lost; l != 0 {
		return row, fmt.Errorf("%d holds lost", l)
	}
	return row, nil
}

func printTrackCost(w io.Writer, rows []trackCostRow) {
	fmt.Fprintln(w, "### redisson: what held locks cost, loss tracking off and on (one Client, after every hold is tracked and renewed once)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| tracking | locks | Redis memory added (bytes) | per lock | connections of the Client | tracking table keys | Redis commands/s while holding | client goroutines added | client heap per lock (bytes) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %v | %d | %d | %.0f | %d | %d | %.0f | %d | %.0f |\n", onOff(r.Tracking), r.Locks, r.RedisMemAdded, r.RedisMemPerLock,
			r.ConnsAdded, r.TrackingKeys, r.CmdsPerSec, r.GoroutinesAdded, r.HeapPerLock)
	}
	fmt.Fprintln(w)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
