package javadouble

import (
	"context"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/lock_acquire.lua
	lockAcquireSrc string
	lockAcquire    = redis.NewScript(lockAcquireSrc)

	//go:embed lua/lock_unlock.lua
	lockUnlockSrc string
	lockUnlock    = redis.NewScript(lockUnlockSrc)

	//go:embed lua/lock_force_unlock.lua
	lockForceUnlockSrc string
	lockForceUnlock    = redis.NewScript(lockForceUnlockSrc)
)

type lockKind int

const (
	plainLock lockKind = iota // RedissonLock
	fairLock                  // RedissonFairLock
	readLock                  // RedissonReadLock
	writeLock                 // RedissonWriteLock
)

// Lock is a Redisson RLock object of one kind: the reentrant Lock (Client.Lock), the FairLock
// (Client.FairLock), or a ReadWriteLock's read or write lock. Like a Java RLock instance it remembers
// the last explicit lease (internalLockLeaseTime, used as the TTL on a partial unlock). Safe for
// concurrent use; every call names its Java thread id.
type Lock struct {
	c     *Client
	name  string
	kind  lockKind
	lease atomic.Int64 // internalLockLeaseTime, ms
}

// Lock returns the reentrant lock name (Redisson getLock): HASH name, owner field "<uuid>:<tid>",
// channel redisson_lock__channel:{name}. It does not touch Redis.
func (c *Client) Lock(name string) *Lock { return c.newLock(name, plainLock) }

func (c *Client) newLock(name string, kind lockKind) *Lock {
	l := &Lock{c: c, name: name, kind: kind}
	l.lease.Store(ms(c.watchdog))
	return l
}

// Name returns the lock's key.
func (l *Lock) Name() string { return l.name }

// field is tid's owner field in the lock hash.
func (l *Lock) field(tid int64) string {
	if l.kind == writeLock {
		return l.c.Owner(tid) + ":write"
	}
	return l.c.Owner(tid)
}

// channel is the channel tid waits on.
func (l *Lock) channel(tid int64) string {
	switch l.kind {
	case fairLock:
		return prefixName("redisson_lock__channel", l.name) + ":" + l.c.Owner(tid)
	case readLock, writeLock:
		return prefixName("redisson_rwlock", l.name)
	}
	return prefixName("redisson_lock__channel", l.name)
}

// tryLockInner runs the kind's acquire script once: acquired, or the ttl to sleep at most.
func (l *Lock) tryLockInner(ctx context.Context, tid, leaseMs, waitMs int64) (ttl int64, acquired bool, err error) {
	owner := l.c.Owner(tid)
	switch l.kind {
	case fairLock:
		ttl, ok, err := l.c.runInt(ctx, fairAcquire, l.fairKeys(), leaseMs, owner, l.threadWait(waitMs), nowMs())
		return ttl, !ok && err == nil, err
	case readLock:
		ttl, ok, err := l.c.runInt(ctx, rwReadAcquire, []string{l.name, l.readTimeoutPrefix(tid)}, leaseMs, owner, owner+":write")
		return ttl, !ok && err == nil, err
	case writeLock:
		ttl, ok, err := l.c.runInt(ctx, rwWriteAcquire, []string{l.name}, leaseMs, l.field(tid))
		return ttl, !ok && err == nil, err
	}
	ttl, ok, err := l.c.runInt(ctx, lockAcquire, []string{l.name}, leaseMs, owner)
	return ttl, !ok && err == nil, err
}

// tryAcquire is one attempt with Redisson's lease handling: lease > 0 is remembered, lease <= 0
// takes the watchdog timeout and arms the watchdog on success.
func (l *Lock) tryAcquire(ctx context.Context, tid int64, lease time.Duration, waitMs int64) (int64, bool, error) {
	leaseMs := ms(lease)
	watchdog := leaseMs <= 0
	if watchdog {
		leaseMs = ms(l.c.watchdog)
	}
	ttl, ok, err := l.tryLockInner(ctx, tid, leaseMs, waitMs)
	if err != nil || !ok {
		return ttl, false, err
	}
	if watchdog {
		l.scheduleRenewal(tid)
	} else {
		l.lease.Store(leaseMs)
	}
	return 0, true, nil
}

func (l *Lock) scheduleRenewal(tid int64) {
	if l.kind == readLock {
		l.c.readTask.add(l.name, tagged(l.name), tid, l.field(tid))
		return
	}
	l.c.lockTask.add(l.name, "", tid, l.field(tid))
}

func (l *Lock) task() *renewTask {
	if l.kind == readLock {
		return l.c.readTask
	}
	return l.c.lockTask
}

// acquireFailed is Redisson's acquireFailed: the fair lock leaves its queue, others do nothing.
func (l *Lock) acquireFailed(ctx context.Context, tid, waitMs int64) {
	if l.kind == fairLock {
		_, _ = l.c.run(context.WithoutCancel(ctx), fairAcquireFailed, l.fairKeys()[1:], l.c.Owner(tid), l.threadWait(waitMs))
	}
}

// Lock blocks until thread tid holds the lock (Redisson lock(lease) / lockAsync(lease, tid)):
// one attempt, then a subscription (bounded by subscriptionTimeout, 7.5 s), then attempts each
// followed by a sleep bounded by the holder's PTTL (unbounded if it has none) that an unlock message
// ends early. lease <= 0 takes the watchdog timeout and arms the watchdog. It returns ctx.Err() when
// ctx ends (a fair lock's queue entry then lingers, as after a Java interrupt), ErrClosed after
// Close, or a Redis error.
func (l *Lock) Lock(ctx context.Context, tid int64, lease time.Duration) error {
	_, ok, err := l.tryAcquire(ctx, tid, lease, -1)
	if err != nil || ok {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, subscriptionTimeout)
	e, err := l.c.subscribe(sctx, l.channel(tid), lockEntry)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	defer l.c.unsubscribe(e)
	for {
		ttl, ok, err := l.tryAcquire(ctx, tid, lease, -1)
		if err != nil || ok {
			return err
		}
		d := time.Duration(-1)
		if ttl >= 0 {
			d = time.Duration(ttl) * time.Millisecond
		}
		if err := e.acquire(ctx, d); err != nil {
			return err
		}
	}
}

// TryLock tries to take the lock for thread tid within wait (Redisson tryLock(wait, lease) /
// tryLockAsync(wait, lease, tid)): wait <= 0 is exactly one attempt. Sleeps are bounded by
// min(holder's PTTL, remaining wait). On timeout it runs acquireFailed (a fair lock leaves its
// queue) and returns false, nil. It returns an error for ctx's end, Close or Redis errors.
func (l *Lock) TryLock(ctx context.Context, tid int64, wait, lease time.Duration) (bool, error) {
	waitMs := ms(wait)
	remaining := wait
	start := time.Now()
	_, ok, err := l.tryAcquire(ctx, tid, lease, waitMs)
	if err != nil || ok {
		return ok, err
	}
	remaining -= time.Since(start)
	if remaining <= 0 {
		l.acquireFailed(ctx, tid, waitMs)
		return false, nil
	}
	start = time.Now()
	sctx, cancel := context.WithTimeout(ctx, remaining)
	e, err := l.c.subscribe(sctx, l.channel(tid), lockEntry)
	cancel()
	if err != nil {
		l.acquireFailed(ctx, tid, waitMs)
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return false, nil
		}
		return false, err
	}
	defer l.c.unsubscribe(e)
	remaining -= time.Since(start)
	if remaining <= 0 {
		l.acquireFailed(ctx, tid, waitMs)
		return false, nil
	}
	for {
		start = time.Now()
		ttl, ok, err := l.tryAcquire(ctx, tid, lease, waitMs)
		if err != nil || ok {
			return ok, err
		}
		remaining -= time.Since(start)
		if remaining <= 0 {
			l.acquireFailed(ctx, tid, waitMs)
			return false, nil
		}
		start = time.Now()
		d := remaining
		if ttl >= 0 && time.Duration(ttl)*time.Millisecond < remaining {
			d = time.Duration(ttl) * time.Millisecond
		}
		if err := e.acquire(ctx, d); err != nil {
			return false, err
		}
		remaining -= time.Since(start)
		if remaining <= 0 {
			l.acquireFailed(ctx, tid, waitMs)
			return false, nil
		}
	}
}

// Unlock releases one hold of thread tid (Redisson unlock / unlockAsync(tid)) with a fresh unlock
// request id (latch key redisson_unlock_latch:{name}:<reqId>, deleted afterwards). It always
// cancels one watchdog registration of tid. It returns an error wrapping ErrIllegalMonitorState
// when tid does not hold the lock, or a Redis error. It does not block beyond the round trips.
func (l *Lock) Unlock(ctx context.Context, tid int64) error {
	latch := prefixName("redisson_unlock_latch", l.name) + ":" + hex.EncodeToString(newID())
	res, ok, err := l.unlockInner(ctx, tid, latch)
	l.task().cancel(l.name, tid, false)
	if ok && res == 1 {
		l.lease.Store(ms(l.c.watchdog))
	}
	_ = l.c.rdb.Del(context.WithoutCancel(ctx), latch).Err()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: attempt to unlock lock, not locked by current thread by node id: %s thread-id: %d",
			ErrIllegalMonitorState, l.c.id, tid)
	}
	return nil
}

func (l *Lock) unlockInner(ctx context.Context, tid int64, latch string) (int64, bool, error) {
	ttl := unlockLatchTTL()
	switch l.kind {
	case fairLock:
		k := l.fairKeys()
		return l.c.runInt(ctx, fairUnlock, []string{k[0], k[1], k[2], prefixName("redisson_lock__channel", l.name), latch},
			msgUnlock, l.lease.Load(), l.c.Owner(tid), nowMs(), l.c.pubCmd, ttl)
	case readLock:
		return l.c.runInt(ctx, rwReadUnlock,
			[]string{l.name, l.channel(tid), l.readTimeoutPrefix(tid), tagged(l.name), latch},
			msgUnlock, l.c.Owner(tid), l.c.pubCmd, ttl)
	case writeLock:
		return l.c.runInt(ctx, rwWriteUnlock, []string{l.name, l.channel(tid), latch},
			msgReadUnlock, l.lease.Load(), l.field(tid), l.c.pubCmd, ttl)
	}
	return l.c.runInt(ctx, lockUnlock, []string{l.name, l.channel(tid), latch},
		msgUnlock, l.lease.Load(), l.c.Owner(tid), l.c.pubCmd, ttl)
}

// ForceUnlock deletes the lock whoever holds it (Redisson forceUnlock) after cancelling this
// client's renewals of it; it reports whether a key was deleted (read/write locks: only in their
// own mode). A deletion publishes the kind's unlock message.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	l.task().cancel(l.name, 0, true)
	var n int64
	var err error
	switch l.kind {
	case fairLock:
		k := l.fairKeys()
		n, _, err = l.c.runInt(ctx, fairForceUnlock, []string{k[0], k[1], k[2], prefixName("redisson_lock__channel", l.name)},
			msgUnlock, nowMs(), l.c.pubCmd)
	case readLock:
		n, _, err = l.c.runInt(ctx, rwForceUnlock, []string{l.name, l.channel(0)}, "read", msgUnlock, l.c.pubCmd)
	case writeLock:
		n, _, err = l.c.runInt(ctx, rwForceUnlock, []string{l.name, l.channel(0)}, "write", msgReadUnlock, l.c.pubCmd)
	default:
		n, _, err = l.c.runInt(ctx, lockForceUnlock, []string{l.name, l.channel(0)}, msgUnlock, l.c.pubCmd)
	}
	return n == 1, err
}

// IsLocked reports whether anyone holds the lock (EXISTS; read lock: mode read, or mode write with
// read holders; write lock: mode write).
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	switch l.kind {
	case readLock, writeLock:
		mode, err := l.c.rdb.HGet(ctx, l.name, "mode").Result()
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if l.kind == writeLock {
			return mode == "write", nil
		}
		if mode == "read" {
			return true, nil
		}
		n, err := l.c.rdb.HLen(ctx, l.name).Result()
		return mode == "write" && n > 2, err
	}
	n, err := l.c.rdb.Exists(ctx, l.name).Result()
	return n == 1, err
}

// HoldCount returns thread tid's hold count (HGET of its field; 0 when absent).
func (l *Lock) HoldCount(ctx context.Context, tid int64) (int64, error) {
	n, err := l.c.rdb.HGet(ctx, l.name, l.field(tid)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// IsHeldByThread reports whether thread tid holds the lock (HEXISTS of its field).
func (l *Lock) IsHeldByThread(ctx context.Context, tid int64) (bool, error) {
	return l.c.rdb.HExists(ctx, l.name, l.field(tid)).Result()
}

// RemainTTL returns the lock key's PTTL in ms as Java's remainTimeToLive: -2 no key, -1 no expiry.
func (l *Lock) RemainTTL(ctx context.Context) (int64, error) {
	return l.c.rdb.Do(ctx, "pttl", l.name).Int64()
}
