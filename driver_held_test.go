package redisson_test

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// heldDriver adapts the held-value API: acquisitions return a *Hold, which re-enters and unlocks.
type heldDriver struct{}

func newRegressDriver(*redis.Client) lockDriver { return heldDriver{} }

func (heldDriver) Name() string { return "held values" }

// kindOf tells which kind of lock a test uses for name: names containing "fair" are FairLocks,
// "fenced" FencedLocks, "spin" SpinLocks, the others Locks.
func kindOf(name string) string {
	switch {
	case strings.Contains(name, "spin"):
		return "SpinLock"
	case strings.Contains(name, "fair"):
		return "FairLock"
	case strings.Contains(name, "fenced"):
		return "FencedLock"
	}
	return "Lock"
}

func (heldDriver) Lock(ctx context.Context, c *redisson.Client, name string, wait, lease time.Duration) (driverHold, error) {
	l := lockOf(c, kindOf(name), name)
	opts := []redisson.AcquireOption{redisson.WithWait(wait)}
	if lease > 0 {
		opts = append(opts, redisson.WithLease(lease))
	}
	acquire := l.TryLock
	if wait > 0 {
		acquire = l.Lock
	}
	h, err := acquire(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return heldHold{h}, nil
}

func (heldDriver) ForceUnlock(ctx context.Context, c *redisson.Client, name string) (bool, error) {
	return lockOf(c, kindOf(name), name).ForceUnlock(ctx)
}

func (heldDriver) Key(name string) string { return "{" + name + "}" }

func (heldDriver) Decode(v string) (string, int, bool) { return redisson.DecodeLockValue(v) }

func (heldDriver) Leftover(key string) bool {
	return strings.Contains(key, "}:~") && (strings.Contains(key, "rel:") || strings.Contains(key, "fu:") || strings.HasSuffix(key, "fence"))
}

type heldHold struct{ *redisson.Hold }

func (h heldHold) Owner() string { return redisson.OwnerOf(h.Hold) }

func (h heldHold) Reenter(ctx context.Context) (driverLevel, error) {
	l, err := h.Hold.Reenter(ctx)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// newModelDriver returns the driver TestModel runs its workload through.
func newModelDriver(*redis.Client) lockDriver { return heldDriver{} }
