package redisson

import (
	"context"
	"time"
)

// ReadWriteLock is a distributed reader/writer mutual exclusion lock, the equivalent of Redisson's
// RReadWriteLock: any number of readers or one writer. Get one with Client.ReadWriteLock; it is a
// name plus a client, does no I/O, and is safe to share between goroutines.
//
// Both sides are reentrant (Hold.Reenter, ContextWithHold), renewed by the watchdog (or given a fixed
// lease with WithLease) and signal their loss through the hold's context, as Lock does. Each reader
// has its own lease: a reader whose process dies frees its share after its lease, while the others
// keep theirs.
//
// Policy, as sync.RWMutex: once a writer waits, readers that are not already reading wait behind it,
// so a steady stream of readers cannot starve a writer; readers holding the lock keep it (and may
// re-enter) until they release it. And the readers waiting when a writer releases enter before the
// next writer, so writers cannot starve readers either: waiters take tickets in Redis and are served
// in ticket order, consecutive readers together. Waiters are kept alive by heartbeats (one whose
// process died stops blocking the others after the waiter timeout, WithWaiterTimeout). A release
// that frees the lock gives it, in the same script, to the waiters whose turn it is (the readers
// ahead of the next writer, or that writer) and wakes just them, on their own Client's channel: they
// hold it without another round trip. A waiter given the lock just before it died or gave up holds
// it for at most its own waiter timeout (its Client's WithWaiterTimeout, whatever the releasing
// Client's), as a Lock's waiter does. Waiters also re-poll (WithRepollInterval), and a heartbeat that
// finds the way clear (a holder's lease lapsed) makes its waiter try at once.
//
// Downgrade: the writer may also take the read lock, with a context marked by its write hold
// (ContextWithHold), and then release the write lock, keeping the read lock. Upgrade is refused: a
// write acquisition with a context marked by a read hold of the same lock fails at once (it would
// wait for itself). Without the mark nothing identifies a goroutine as a reader, and a reader that
// asks for the write lock waits, like one that calls sync.RWMutex.Lock while holding RLock, until its
// context ends.
//
// The writer side is a Locker (Lock, TryLock, ForceUnlock, IsLocked, RemainingTTL): a MultiLock or
// RedLock over ReadWriteLocks takes their write locks. ForceUnlock and IsLocked act on the whole
// lock; ForceReadUnlock, IsReadLocked, ForceWriteUnlock and IsWriteLocked on one side, as the
// forceUnlock and isLocked of Redisson's readLock() and writeLock() do. The name is stored as a hash: using it as a
// Lock, FairLock, FencedLock or SpinLock fails with ErrWrongType, and the reverse.
//
// On a Client made WithRedissonCompat it is Java Redisson's RReadWriteLock instead, shared with Java
// readers and writers: Redisson's policy (no waiting-writer priority: readers keep entering while
// readers hold it; no ticket order; every release wakes every waiting Client, which tries again),
// Redisson's TTL rules and a lease per read acquisition; the downgrade and the refused upgrade are as
// above. A Java reader's watchdog sets the hash's TTL to its own lockWatchdogTimeout, so Go readers
// are renewed at least every third of it (see WithRedissonWatchdogTimeout); a Go reader's fixed
// lease longer than it is not protected when a Java reader dies. See "Sharing locks with Java
// services" in the package documentation.
type ReadWriteLock struct {
	read, write mutex
}

var _ Locker = (*ReadWriteLock)(nil)

// ReadWriteLock returns the read/write lock called name (Redisson's RReadWriteLock). It does no I/O;
// the handle is cheap and safe to share. A bad name is reported by the first call on the handle
// (ErrInvalidArgument).
// On a Client made WithRedissonCompat it is kept in Java Redisson's RReadWriteLock layout (see
// ReadWriteLock).
func (c *Client) ReadWriteLock(name string) *ReadWriteLock {
	return &ReadWriteLock{read: c.newMutex(name, kindRead), write: c.newMutex(name, kindWrite)}
}

// Name returns the name the lock was created with ("" for a nil handle).
func (l *ReadWriteLock) Name() string {
	if l == nil {
		return ""
	}
	return l.write.name
}

// RLock acquires a read hold, waiting while a writer holds or waits for the lock, until it is
// acquired, ctx ends, the optional WithWait bound passes, or the Client is closed. It blocks. Options
// and errors are those of Lock.Lock; a context marked with a read hold of this lock re-enters it, one
// marked with the write hold is let in beside the writer (see ReadWriteLock, Downgrade).
func (l *ReadWriteLock) RLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("lock", "", ErrNotObtained, errNilHandle)
	}
	return l.read.acquire(ctx, opts, true)
}

// TryRLock makes one attempt at a read hold, or, with WithWait, waits up to that long; otherwise it
// behaves as RLock.
func (l *ReadWriteLock) TryRLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("try lock", "", ErrNotObtained, errNilHandle)
	}
	return l.read.acquire(ctx, opts, false)
}

// Lock acquires the write hold, waiting until no reader and no other writer holds the lock (new
// readers wait behind it meanwhile), ctx ends, the optional WithWait bound passes, or the Client is
// closed. It blocks. Options and errors are those of Lock.Lock; a context marked with a read hold of
// this lock fails at once (no upgrade).
func (l *ReadWriteLock) Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("lock", "", ErrNotObtained, errNilHandle)
	}
	return l.write.acquire(ctx, opts, true)
}

// TryLock makes one attempt at the write hold, or, with WithWait, waits up to that long; otherwise
// it behaves as Lock.
func (l *ReadWriteLock) TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("try lock", "", ErrNotObtained, errNilHandle)
	}
	return l.write.acquire(ctx, opts, false)
}

// ForceUnlock deletes every hold of the lock, the writer's and every reader's, whoever holds them,
// and wakes the waiters; it reports whether anyone held it. It blocks for one round trip. As
// Lock.ForceUnlock, it is never re-sent after a lost reply: such an error leaves the outcome unknown,
// and calling it again is safe.
func (l *ReadWriteLock) ForceUnlock(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("force unlock", "", errNilHandle)
	}
	return l.write.forceUnlock(ctx)
}

// IsLocked reports whether anyone, reader or writer, holds the lock. It blocks for one round trip.
func (l *ReadWriteLock) IsLocked(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("is locked", "", errNilHandle)
	}
	return l.write.isLocked(ctx)
}

// ForceReadUnlock deletes every read hold, whoever holds them, and wakes the waiters, if readers
// hold the lock and no writer does; it reports whether it deleted anything. While a writer holds the
// lock (with or without read holds it took beside it, see Downgrade) it changes nothing and reports
// false, as Redisson's readLock().forceUnlock() does outside mode "read". The readers learn of it as
// from ForceUnlock. It blocks for one round trip and, as ForceUnlock, is never re-sent after a lost
// reply: such an error leaves the outcome unknown, and calling it again is safe.
func (l *ReadWriteLock) ForceReadUnlock(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("force unlock", "", errNilHandle)
	}
	return l.read.forceUnlockSide(ctx, true)
}

// ForceWriteUnlock deletes the writer's hold, whoever holds it, with the read holds the writer took
// beside it (see Downgrade), and wakes the waiters, if a writer holds the lock; it reports whether it
// deleted anything. While only readers hold it, or nobody, it changes nothing and reports false, as
// Redisson's writeLock().forceUnlock() does outside mode "write". Otherwise as ForceReadUnlock.
func (l *ReadWriteLock) ForceWriteUnlock(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("force unlock", "", errNilHandle)
	}
	return l.write.forceUnlockSide(ctx, true)
}

// IsReadLocked reports whether a reader holds the lock: any read hold, including those a writer
// took beside its write hold (Downgrade), as Redisson's readLock().isLocked(). It blocks for one
// round trip.
func (l *ReadWriteLock) IsReadLocked(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("is locked", "", errNilHandle)
	}
	return l.read.sideLocked(ctx)
}

// IsWriteLocked reports whether a writer holds the lock, as Redisson's writeLock().isLocked(). It
// blocks for one round trip.
func (l *ReadWriteLock) IsWriteLocked(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("is locked", "", errNilHandle)
	}
	return l.write.sideLocked(ctx)
}

// sideLocked reports whether m's side of a ReadWriteLock holds it: a reader (side "r"), the writer
// (side "x").
func (m *mutex) sideLocked(ctx context.Context) (bool, error) {
	if err := m.check(ctx); err != nil {
		return false, opErr("is locked", m.name, err)
	}
	return m.kind.layout.(sidedLayout).sideLocked(ctx, m)
}

// RemainingTTL returns how long the lock stays held unless renewed: until the latest holder's lease
// ends, 0 if nobody holds it. It blocks for one round trip.
func (l *ReadWriteLock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	if l == nil {
		return 0, opErr("remaining ttl", "", errNilHandle)
	}
	return l.write.remainingTTL(ctx)
}

// The writer side as a part of a MultiLock or RedLock (see groupPart).
func (l *ReadWriteLock) identity() any                { return l.write.identity() }
func (l *ReadWriteLock) watchdogLease() time.Duration { return l.write.watchdogLease() }
func (l *ReadWriteLock) client() *Client              { return l.write.c }
func (l *ReadWriteLock) refused() error               { return l.write.refused() }
