package redisson

import (
	"context"
	"time"
)

// SpinLock is a reentrant distributed mutex whose waiters poll instead of waiting for a message, the
// equivalent of Redisson's RSpinLock. Get one with Client.SpinLock; it is a name plus a client, does
// no I/O, and is safe to share between goroutines. Ownership, re-entry, leases, the watchdog and the
// loss signal are those of Lock (see Lock and Hold).
//
// Waiting: a waiter tries, and after each failed attempt pauses before the next one: the first pause
// is the initial backoff, each following one twice the last, up to the maximum, each plus a random
// jitter of up to half of it (WithSpinBackoff; default 1ms doubling to 128ms). It subscribes to
// nothing and queues nowhere in Redis, so it suits deployments where pub/sub is unavailable (some
// proxies) or too many names are waited on at once for one subscription each; the price is the
// polling (one command per attempt) and no order among waiters: whoever tries right after a release
// wins. Goroutines of one Client still take turns locally, as with Lock.
//
// A name is either a Lock, a FairLock, a FencedLock or a SpinLock: using it as another kind fails
// with ErrWrongType.
type SpinLock struct{ mutex }

// SpinLock returns the spin lock called name (Redisson's RSpinLock). It does no I/O; the handle is
// cheap and safe to share. A bad name is reported by the first call on the handle
// (ErrInvalidArgument).
// On a Client made WithRedissonCompat it is Java Redisson's RSpinLock, in its layout: see "Sharing
// locks with Java services" in the package documentation.
func (c *Client) SpinLock(name string) *SpinLock { return &SpinLock{c.newMutex(name, kindSpin)} }

// Name returns the name the lock was created with ("" for a nil handle).
func (l *SpinLock) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Lock acquires the lock, trying again after each failed attempt after a growing pause (see
// SpinLock), until it is acquired, ctx ends, the optional WithWait bound passes, or the Client is
// closed. Otherwise it behaves as Lock.Lock: the lease options, re-entry through a context marked
// with ContextWithHold, and the errors are the same. It blocks.
func (l *SpinLock) Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("lock", "", ErrNotObtained, errNilHandle)
	}
	return l.acquire(ctx, opts, true)
}

// TryLock makes one attempt, or, with WithWait, keeps trying (see Lock) for up to that long;
// otherwise it behaves as Lock.
func (l *SpinLock) TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("try lock", "", ErrNotObtained, errNilHandle)
	}
	return l.acquire(ctx, opts, false)
}

// ForceUnlock deletes the lock whoever holds it; it reports whether there was a lock to delete. See
// Lock.ForceUnlock.
func (l *SpinLock) ForceUnlock(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("force unlock", "", errNilHandle)
	}
	return l.forceUnlock(ctx)
}

// IsLocked reports whether anyone holds the lock. It blocks for one round trip.
func (l *SpinLock) IsLocked(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("is locked", "", errNilHandle)
	}
	return l.isLocked(ctx)
}

// RemainingTTL returns how long the lock will live unless renewed: 0 if it is not held. It blocks for
// one round trip.
func (l *SpinLock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	if l == nil {
		return 0, opErr("remaining ttl", "", errNilHandle)
	}
	return l.remainingTTL(ctx)
}
