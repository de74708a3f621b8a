package redisson_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// floorRelease is the compare-and-delete half of the bare SET NX PX lock that the README compares with.
var floorRelease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

var benchKeys atomic.Int64

// BenchmarkUncontended compares an uncontended lock+unlock of this library (in its own layout and in
// Java Redisson's, WithRedissonCompat) with the bare SET NX PX + compare-and-delete floor, each
// goroutine on its own key. Run with -cpu to vary goroutines.
func BenchmarkUncontended(b *testing.B) {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true, PoolSize: 64})
	defer rdb.Close()
	ctx := context.Background()
	for _, v := range []struct {
		name, prefix string
		opts         []redisson.Option
	}{
		{"redisson", "bench:r:", nil},
		{"redisson-notrack", "bench:n:", []redisson.Option{redisson.WithLossTracking(false)}},       // what the tracking costs a cycle
		{"redisson-autopipeline", "bench:a:", []redisson.Option{redisson.WithAutoPipelining(true)}}, // concurrent commands batched
		{"redisson-compat", "bench:j:", []redisson.Option{redisson.WithRedissonCompat()}},           // Java Redisson's RLock layout
	} {
		b.Run(v.name, func(b *testing.B) {
			c, err := redisson.New(rdb, v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			lockUnlockParallel(b, c, v.prefix)
		})
	}
	b.Run("floor", func(b *testing.B) {
		floorRelease.Load(ctx, rdb)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			key := fmt.Sprint("bench:f:", benchKeys.Add(1))
			for pb.Next() {
				ok, err := rdb.SetNX(ctx, key, "token", 30e9).Result()
				if err != nil || !ok {
					b.Errorf("SET NX = %v, %v", ok, err)
					return
				}
				if err := floorRelease.Run(ctx, rdb, []string{key}, "token").Err(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// lockUnlockParallel runs lock+unlock cycles of c in parallel, each goroutine on a Lock of its own
// (names under prefix).
func lockUnlockParallel(b *testing.B, c *redisson.Client, prefix string) {
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		l := c.Lock(fmt.Sprint(prefix, benchKeys.Add(1)))
		for pb.Next() {
			h, err := l.Lock(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			if err := h.Unlock(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
