package redisson

import (
	"context"
	"time"
)

// FairLock is a reentrant distributed mutex served first come, first served, the equivalent of
// Redisson's RFairLock. Get one with Client.FairLock; it is a name plus a client, does no I/O, and is
// safe to share between goroutines. Ownership, re-entry, leases, the watchdog and the loss signal are
// those of Lock (see Lock and Hold).
//
// Order: every waiting acquisition, whatever its process, queues in Redis in the order of its
// arrival there, and a release hands the lock to the head of the queue, waking only that waiter: a
// hand-over costs the same few commands however many wait. A waiter that must give back what it was
// handed, because the answer came too late to vouch for its lease (a paused or slow server), keeps
// its place at the head (see the package documentation, Re-sent commands). A free lock goes to the head of the
// queue, or to anyone if nobody waits; TryLock without a wait never queues. A live waiter keeps its
// place however long the holder keeps the lock (its Client keeps it alive with heartbeats); one whose
// process died is evicted after the waiter timeout (WithWaiterTimeout), and stalls the lock at most
// that long, plus a third of the next waiter's timeout (its heartbeat), if the lock was handed to it
// just before (see the package documentation, Waiting). The queue's keys are gone once the last
// holder releases with nobody waiting.
//
// A name is either a Lock, a FairLock or a FencedLock: using it as another kind fails with
// ErrWrongType.
//
// On a Client made WithRedissonCompat it is Java Redisson's RFairLock instead: its queue is
// Redisson's (client-clock deadlines, a channel per waiter), shared with Java waiters, which are
// served in the same order; a release wakes the head, which takes the lock itself (no hand-over);
// a waiter whose process died blocks the queue until its deadline (a slot of 5 minutes, or of the
// waiter timeout given with WithWaiterTimeout, or of its WithWait bound); and the name is one
// lock with the Client's Lock of that name (Redisson's RFairLock and RLock share the hash). See
// "Sharing locks with Java services" in the package documentation.
type FairLock struct{ mutex }

// fairThreadWait is the threadWaitTime of a compat FairLock waiter without a WithWait bound (see
// WithWaiterTimeout): the waiter timeout given to the Client, else Redisson's default.
func (c *Client) fairThreadWait() time.Duration {
	if c.cfg.waiterGiven > 0 {
		return c.cfg.waiterGiven
	}
	return redissonFairWait
}

// FairLock returns the fair lock called name (Redisson's RFairLock). It does no I/O; the handle is
// cheap and safe to share. A bad name is reported by the first call on the handle
// (ErrInvalidArgument).
// On a Client made WithRedissonCompat it is kept in Java Redisson's RFairLock layout (see FairLock).
func (c *Client) FairLock(name string) *FairLock { return &FairLock{c.newMutex(name, kindFair)} }

// Name returns the name the lock was created with ("" for a nil handle).
func (l *FairLock) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Lock acquires the lock, waiting its turn in the queue, until it is acquired, ctx ends, the
// optional WithWait bound passes, or the Client is closed; it leaves the queue when the wait ends
// without the lock. Otherwise it behaves as Lock.Lock: the lease options, re-entry through a context
// marked with ContextWithHold, and the errors are the same.
func (l *FairLock) Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("lock", "", ErrNotObtained, errNilHandle)
	}
	return l.acquire(ctx, opts, true)
}

// TryLock makes one attempt, which succeeds only if the lock is free and nobody waits for it (it
// never queues), or, with WithWait, waits its turn for up to that long; otherwise it behaves as
// Lock.
func (l *FairLock) TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("try lock", "", ErrNotObtained, errNilHandle)
	}
	return l.acquire(ctx, opts, false)
}

// ForceUnlock deletes the lock whoever holds it and hands it to the head of the queue, if anyone
// waits; it reports whether there was a lock to delete. See Lock.ForceUnlock.
func (l *FairLock) ForceUnlock(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("force unlock", "", errNilHandle)
	}
	return l.forceUnlock(ctx)
}

// IsLocked reports whether anyone holds the lock. It blocks for one round trip.
func (l *FairLock) IsLocked(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("is locked", "", errNilHandle)
	}
	return l.isLocked(ctx)
}

// RemainingTTL returns how long the lock will live unless renewed: 0 if it is not held. It blocks for
// one round trip.
func (l *FairLock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	if l == nil {
		return 0, opErr("remaining ttl", "", errNilHandle)
	}
	return l.remainingTTL(ctx)
}
