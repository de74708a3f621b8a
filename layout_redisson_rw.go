package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/wait"
)

// redissonRWLayout is Java Redisson's RReadWriteLock (layoutRedissonRW), for a Client made
// WithRedissonCompat: the hash and the read acquisitions' keys "<tag>:<owner>:rwlock_timeout:<n>"
// (compat_rw_value.lua, decodeRedissonRW), and Redisson's read/write lock channel, on which every
// Client of the lock is woken. Scripts: compat_rw_acquire.lua, compat_rw_release.lua,
// compat_rw_force_unlock.lua, compat_rw_renew.lua; KEYS: the hash and its tag "{<key>}".
type redissonRWLayout struct{}

func (redissonRWLayout) lay(m *mutex, _ func(string) string) {
	m.keys = []string{m.key, redissonTagged(m.key)}
	m.wakeChannel = redissonPrefixed(redissonRWChannel, m.key)
	m.otherKey = markKey{m.c, m.kind.other, m.key}
}

func (redissonRWLayout) queues() bool          { return false }
func (redissonRWLayout) recordsReleases() bool { return true }
func (redissonRWLayout) redisson() bool        { return false }
func (redissonRWLayout) enqueuesWaiters() bool { return false }

// renewKeys: the hash and the tag of its read acquisitions' keys (compat_rw_renew.lua).
func (redissonRWLayout) renewKeys(m *mutex) []string { return m.keys }

// waiter: as redissonLayout's.
func (redissonRWLayout) waiter(_ *mutex, w *wait.Waiter) bool {
	w.Every = true
	return false
}

// acquire: compat_rw_acquire.lua; a reader may be vouched for by the writer whose hold marks ctx.
func (redissonRWLayout) acquire(ctx context.Context, m *mutex, q acquireReq) (acquireRes, error) {
	var resent bool
	cmd, ackErr := m.c.evalOpts(ctx, sendOpts{resend: true, acked: true, repeat: &resent}, scripts.CompatRWAcquire, m.keys,
		q.owner, q.leaseMs, q.mode, m.kind.side, m.vouch(ctx))
	return redissonAcquired(cmd, ackErr, resent)
}

func (redissonRWLayout) sideLocked(ctx context.Context, m *mutex) (bool, error) {
	v, err := m.redissonRWState(ctx, "is locked")
	if m.kind.side == "r" {
		return v.mode == "read" || len(v.readers) > 0, err
	}
	return v.mode == "write", err
}

// releaseCall: compat_rw_release.lua, KEYS the hash, its tag and the release's record (see
// redissonLayout.releaseCall).
func (redissonRWLayout) releaseCall(m *mutex, q releaseReq) (*redis.Script, []string, []any, string) {
	record, recordMs := unlockRecord(m, q)
	keys := []string{m.keys[0], m.keys[1], m.key}
	if record != "" {
		keys[2] = record
	}
	return scripts.CompatRWRelease, keys, []any{q.owner, finalArg(q), q.leaseMs, m.kind.side, m.c.publish, m.wakeChannel, recordMs}, record
}

func (redissonRWLayout) forceUnlockCall(m *mutex, side string) (*redis.Script, []any) {
	return scripts.CompatRWForceUnlock, []any{m.c.publish, m.wakeChannel, side}
}

func (redissonRWLayout) isLocked(ctx context.Context, m *mutex) (bool, error) {
	v, err := m.redissonRWState(ctx, "is locked")
	return v.mode != "", err
}

func (redissonRWLayout) remainingTTL(ctx context.Context, m *mutex) (time.Duration, error) {
	v, err := m.redissonRWState(ctx, "remaining ttl")
	return v.ttl, err
}

func (redissonRWLayout) levelsOf(ctx context.Context, m *mutex, owner string) (int, error) {
	v, err := m.redissonRWState(ctx, "hold count")
	if m.kind.side == "x" {
		if v.writer != owner {
			return 0, err
		}
		return v.writes, err
	}
	return v.readers[owner], err
}
