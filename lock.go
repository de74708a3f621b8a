package redisson

import (
	"context"
	"time"
)

// Lock is a reentrant distributed mutex, the equivalent of Redisson's RLock. Get one with
// Client.Lock; it is a name plus a client, does no I/O, and is safe to share between goroutines.
//
// Each successful acquisition creates a new owner and returns a *Hold that owns it: two acquisitions
// exclude each other even through the same handle, as with sync.Mutex, and only the Hold can release
// what it acquired. Re-entry is explicit: Hold.Reenter, or an acquisition with a context marked by
// ContextWithHold. The owner's levels are kept in Redis; the unlock of the last one releases the
// lock.
//
// Fairness: not FIFO, and no starvation. Within a process, goroutines waiting for the same lock
// through one Client queue first come first served and only the head of that queue contends in
// Redis; between processes, those heads queue in Redis, first come first served. A release hands
// the lock to the head of the Redis queue (waking only that waiter), or, if no other process waits,
// transfers it to the next goroutine of its own Client. A free lock is taken by whoever asks first
// (one SET NX), so a newcomer may overtake queued waiters only in the moments the lock is free
// without having been handed over (it expired, or a waiter the release was handed to had died). A
// lock taken that way carries no queue mark, so its release would not look at the queue: the queued
// waiters' next heartbeat (a third of the waiter timeout) marks it, and its next final release hands
// it to the head of the queue, even if the newcomer's process has goroutines waiting for it too. Use
// FairLock for strict first come, first served.
//
// On a Client made WithRedissonCompat the lock is kept in Java Redisson's RLock layout and shared
// with Java services: no queue in Redis, every release wakes every waiting Client (Java or Go) and
// the first to ask takes it; see "Sharing locks with Java services" in the package documentation.
type Lock struct{ mutex }

// Locker is what every lock of this package offers. Seven kinds satisfy it: Lock, FairLock,
// FencedLock, SpinLock, ReadWriteLock (its write side), MultiLock and RedLock. Code that takes a lock
// without caring which kind can take a Locker; a MultiLock or RedLock is built from Lockers, but not
// from other MultiLocks or RedLocks (give their parts instead).
type Locker interface {
	// Name returns the lock's name.
	Name() string
	// Lock acquires the lock, waiting until it is acquired or ctx ends (see Lock.Lock).
	Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error)
	// TryLock makes one attempt, or waits up to a WithWait bound (see Lock.TryLock).
	TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error)
	// ForceUnlock deletes the lock whoever holds it (see Lock.ForceUnlock).
	ForceUnlock(ctx context.Context) (bool, error)
	// IsLocked reports whether anyone holds the lock.
	IsLocked(ctx context.Context) (bool, error)
	// RemainingTTL returns how long the lock will live unless renewed.
	RemainingTTL(ctx context.Context) (time.Duration, error)
}

var (
	_ Locker = (*Lock)(nil)
	_ Locker = (*FairLock)(nil)
	_ Locker = (*FencedLock)(nil)
	_ Locker = (*SpinLock)(nil)
)

// Name returns the name the lock was created with ("" for a nil handle).
func (l *Lock) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Lock acquires the lock, blocking until it is acquired, ctx ends, the optional WithWait bound
// passes, or the Client is closed. Without WithLease the watchdog keeps the lock alive until the
// final Unlock; with WithLease(d) it expires after d. If ctx was marked with a Hold of this lock
// (ContextWithHold), Lock re-enters that owner at once instead, as Hold.Reenter does; options are
// then ignored.
//
// On success it returns the Hold of the new owner (see Hold). On failure nothing is held and the
// error matches ErrNotObtained; it also matches ErrBusy if another owner held the lock until the
// wait ended (and only then: Redis failing is not contention), ctx.Err() if ctx ended the wait,
// ErrClosed if the Client was closed, ErrWrongType if the name holds another type of value (or
// another kind of lock), ErrInvalidArgument for bad input; any other error is Redis's or the
// network's, wrapped. It returns within the earlier of ctx's deadline and the WithWait bound (plus
// its grace: see WithWait), whatever Redis does.
func (l *Lock) Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("lock", "", ErrNotObtained, errNilHandle)
	}
	return l.acquire(ctx, opts, true)
}

// TryLock makes one attempt to acquire the lock, or keeps trying for up to the WithWait duration, and
// otherwise behaves as Lock. It does not wait for goroutines of this process that are queued for the
// same lock when no wait is given: the lock is then reported as not obtained (ErrBusy).
func (l *Lock) TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("try lock", "", ErrNotObtained, errNilHandle)
	}
	return l.acquire(ctx, opts, false)
}

// ForceUnlock deletes the lock whoever holds it; if waiters are queued, it hands the lock to the
// first of them, as a release would. It reports whether there was a lock to delete. The holder learns
// of it at its next renewal or operation (ErrLockLost). It blocks for one round trip; on error nothing
// was deleted or the outcome is unknown. It is never re-sent after a lost reply (a second run would
// delete the lock of whoever acquired it since, and Redis keeps no record of it): such an error
// leaves the outcome unknown, and calling ForceUnlock again is safe (it deletes whatever lock is
// held then).
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("force unlock", "", errNilHandle)
	}
	return l.forceUnlock(ctx)
}

// IsLocked reports whether anyone holds the lock. It blocks for one round trip.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("is locked", "", errNilHandle)
	}
	return l.isLocked(ctx)
}

// RemainingTTL returns how long the lock will live unless renewed: 0 if it is not held, -1 if it has
// no expiry (never set by this package). It blocks for one round trip.
func (l *Lock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	if l == nil {
		return 0, opErr("remaining ttl", "", errNilHandle)
	}
	return l.remainingTTL(ctx)
}

var errNilHandle = invalidf("nil lock handle")
