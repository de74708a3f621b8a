package redisson

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/wait"
)

// redissonLayout is Java Redisson's RLock (layoutRedisson), for a Client made WithRedissonCompat:
// the hash owner -> count at the lock's key (compat_lock_value.lua, decodeRedissonLock), and
// Redisson's lock channel, on which every Client of the lock, Java or Go, is woken. Scripts:
// compat_lock_acquire.lua, compat_lock_release.lua, compat_lock_force_unlock.lua,
// compat_lock_renew.lua.
type redissonLayout struct{}

func (redissonLayout) lay(m *mutex, _ func(string) string) {
	m.keys = []string{m.key}
	m.wakeChannel = redissonPrefixed(redissonLockChannel, m.key)
}

func (redissonLayout) queues() bool              { return false }
func (redissonLayout) recordsReleases() bool     { return true }
func (redissonLayout) redisson() bool            { return true }
func (redissonLayout) enqueuesWaiters() bool     { return false }
func (redissonLayout) renewKeys(*mutex) []string { return nil }

// waiter: Java Redisson's waiters are woken by every message on the lock's channel (it says "0":
// the lock was released); no heartbeat keeps them anywhere.
func (redissonLayout) waiter(_ *mutex, w *wait.Waiter) bool {
	w.Every = true
	return false
}

// acquire: compat_lock_acquire.lua.
func (redissonLayout) acquire(ctx context.Context, m *mutex, q acquireReq) (acquireRes, error) {
	var resent bool
	cmd, ackErr := m.c.evalOpts(ctx, sendOpts{resend: true, acked: true, repeat: &resent}, scripts.CompatLockAcquire, m.keys, q.owner, q.leaseMs, q.mode)
	return redissonAcquired(cmd, ackErr, resent)
}

// redissonAcquired reads the answer {n, pttl} of an acquisition in one of Java Redisson's layouts
// ({n, pttl, token} for a FencedLock): n ≥ 1 acquired; else the holder's remaining TTL (-1: no
// expiry), or -2 (the fair queue) the lock is free but another waiter heads the queue.
func redissonAcquired(cmd *redis.Cmd, ackErr error, resent bool) (acquireRes, error) {
	r, err := cmd.Int64Slice()
	if err == nil && len(r) != 2 && len(r) != 3 {
		err = errors.New("redisson: unexpected reply to an acquisition")
	}
	if err != nil {
		return acquireRes{}, err
	}
	if r[0] < 1 {
		ackErr = nil
	}
	retry := time.Duration(-1)
	if r[1] >= 0 {
		retry = max(time.Duration(r[1])*time.Millisecond, time.Millisecond)
	}
	res := acquireRes{n: r[0], retry: retry, otherTurn: r[0] < 1 && r[1] == -2, ackErr: ackErr, resent: resent}
	if len(r) == 3 {
		res.token = r[2]
	}
	return res, nil
}

// releaseCall: compat_lock_release.lua, KEYS the hash and the release's record. A count cannot
// tell a re-sent release from a new one: the first run records its answer for the re-sends.
func (redissonLayout) releaseCall(m *mutex, q releaseReq) (*redis.Script, []string, []any, string) {
	record, recordMs := unlockRecord(m, q)
	keys := []string{m.key, m.key}
	if record != "" {
		keys[1] = record
	}
	return scripts.CompatLockRelease, keys, []any{q.owner, finalArg(q), q.leaseMs, m.c.publish, m.wakeChannel, recordMs}, record
}

func (redissonLayout) forceUnlockCall(m *mutex, _ string) (*redis.Script, []any) {
	return scripts.CompatLockForceUnlock, []any{m.c.publish, m.wakeChannel}
}

func (redissonLayout) isLocked(ctx context.Context, m *mutex) (bool, error) {
	v, err := m.redissonState(ctx, "is locked")
	return v.owner != "", err
}

func (redissonLayout) remainingTTL(ctx context.Context, m *mutex) (time.Duration, error) {
	v, err := m.redissonState(ctx, "remaining ttl")
	return v.ttl, err
}

func (redissonLayout) levelsOf(ctx context.Context, m *mutex, owner string) (int, error) {
	v, err := m.redissonState(ctx, "hold count")
	if err != nil || v.owner != owner {
		return 0, err
	}
	return v.count, nil
}

// redissonLock is the state of a lock in Java Redisson's RLock format (see decodeRedissonLock).
type redissonLock struct {
	owner string        // the holder ("" free): "<uuid>:<thread id>", Java's or Go's (see newClientID)
	count int           // the holder's hold count
	ttl   time.Duration // the lock's remaining TTL (0 free, -1 no expiry)
}

// readHash reads the lock's hash (Java Redisson's formats) and its remaining TTL, in one round
// trip, to the master; a TTL of -2 means the key expired between the two commands.
func (m *mutex) readHash(ctx context.Context, op string) (map[string]string, time.Duration, error) {
	var all *redis.MapStringStringCmd
	var pttl *redis.DurationCmd
	err := m.c.read(ctx, m.key, func(p redis.Pipeliner) {
		all = p.HGetAll(ctx, m.key)
		pttl = p.PTTL(ctx, m.key)
	})
	if err != nil {
		return nil, 0, opErr(op, m.name, redisErr(err))
	}
	return all.Val(), pttl.Val(), nil
}

// redissonState reads a lock in Java Redisson's RLock format (one round trip, to the master).
func (m *mutex) redissonState(ctx context.Context, op string) (redissonLock, error) {
	fields, ttl, err := m.readHash(ctx, op)
	if err != nil {
		return redissonLock{}, err
	}
	v, ok := decodeRedissonLock(fields)
	if !ok {
		return redissonLock{}, opErr(op, m.name, ErrWrongType, errors.New("the key holds no Java Redisson lock"))
	}
	if v.owner != "" && ttl != -2 { // -2: expired meanwhile, free
		v.ttl = ttl
	} else {
		v = redissonLock{}
	}
	return v, nil
}

// decodeRedissonLock is the one Go decoder of Java Redisson's RLock hash (see
// internal/scripts/compat_lock_value.lua), as HGETALL returns it: no field is a free lock; one field,
// the holder (not empty), whose value is its count (a positive integer), a held one; ok is false for
// anything else (a ReadWriteLock's hash, application data).
func decodeRedissonLock(fields map[string]string) (v redissonLock, ok bool) {
	switch len(fields) {
	case 0:
		return redissonLock{}, true
	case 1:
	default:
		return redissonLock{}, false
	}
	for owner, count := range fields {
		n, err := strconv.Atoi(count)
		if owner == "" || err != nil || n < 1 || count[0] == '+' || count[0] == '0' {
			return redissonLock{}, false
		}
		v.owner, v.count = owner, n
	}
	return v, true
}
