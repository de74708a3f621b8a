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

func newLockDriver(*redis.Client) lockDriver { return heldDriver{} }

func (heldDriver) Name() string { return "held values" }

// kindOf tells which kind of lock a test uses for name: names containing "rwlock" are
// ReadWriteLocks (their write side), "multilock" MultiLocks, "redlock" RedLocks (see lockOf for
// their parts; TestModel builds its own), "fair" FairLocks, "fenced" FencedLocks, "spin" SpinLocks,
// the others Locks.
func kindOf(name string) string {
	switch {
	case strings.Contains(name, "rwlock"):
		return "ReadWriteLock"
	case strings.Contains(name, "multilock"):
		return "MultiLock"
	case strings.Contains(name, "redlock"):
		return "RedLock"
	case strings.Contains(name, "spin"):
		return "SpinLock"
	case strings.Contains(name, "fair"):
		return "FairLock"
	case strings.Contains(name, "fenced"):
		return "FencedLock"
	}
	return "Lock"
}

func (d heldDriver) Lock(ctx context.Context, c *redisson.Client, name string, wait, lease time.Duration) (driverHold, error) {
	l := lockOf(c, kindOf(name), name)
	return d.LockWith(ctx, l.Lock, l.TryLock, wait, lease)
}

// acquireFunc is an acquisition method: a Locker's Lock or TryLock, a ReadWriteLock's RLock or
// TryRLock.
type acquireFunc func(ctx context.Context, opts ...redisson.AcquireOption) (*redisson.Hold, error)

// LockWith acquires as Lock does, through the given methods (lock with a wait, try without): for
// the locks TestModel builds itself (groups over several Clients, a ReadWriteLock's read side).
func (heldDriver) LockWith(ctx context.Context, lock, try acquireFunc, wait, lease time.Duration) (driverHold, error) {
	opts := []redisson.AcquireOption{redisson.WithWait(wait)}
	if lease > 0 {
		opts = append(opts, redisson.WithLease(lease))
	}
	acquire := try
	if wait > 0 {
		acquire = lock
	}
	h, err := acquire(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return heldHold{h}, nil
}

// Mark returns ctx marked with h's ownership (ContextWithHold): a ReadWriteLock's writer lets a
// read acquisition with it in beside itself (downgrade).
func (heldDriver) Mark(ctx context.Context, h driverHold) context.Context {
	return redisson.ContextWithHold(ctx, h.(heldHold).Hold)
}

func (heldDriver) ForceUnlock(ctx context.Context, c *redisson.Client, name string) (bool, error) {
	return lockOf(c, kindOf(name), name).ForceUnlock(ctx)
}

func (heldDriver) Key(name string) string { return name }

func (heldDriver) Decode(v string) (string, int, bool) { return redisson.DecodeLockValue(v) }

func (heldDriver) Leftover(key string) bool {
	return strings.Contains(key, "}:~") && (strings.Contains(key, "rel:") || strings.Contains(key, "fu:") || strings.HasSuffix(key, "fence"))
}

type heldHold struct{ *redisson.Hold }

// Owner is "" for a MultiLock's or RedLock's hold: see GroupParts for its parts' owners.
func (h heldHold) Owner() string {
	if h.Hold.Parts() != nil {
		return ""
	}
	return redisson.OwnerOf(h.Hold)
}

// GroupParts returns, for a MultiLock's or RedLock's hold, the holds of its parts (nil for a part
// not acquired), in the order of the group's locks; nil for any other hold.
func (h heldHold) GroupParts() []driverHold {
	ps := h.Hold.Parts()
	if ps == nil {
		return nil
	}
	out := make([]driverHold, len(ps))
	for i, p := range ps {
		if p != nil {
			out[i] = heldHold{p}
		}
	}
	return out
}

func (h heldHold) Reenter(ctx context.Context) (driverLevel, error) {
	l, err := h.Hold.Reenter(ctx)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// newModelDriver returns the driver TestModel runs its workload through.
func newModelDriver(*redis.Client) lockDriver { return heldDriver{} }
