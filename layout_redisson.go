package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
)

// redissonLayout is Java Redisson's RLock (formatRedisson), for a Client made WithRedissonCompat:
// the hash owner -> count at the lock's key (compat_lock_value.lua, decodeRedissonLock), and
// Redisson's lock channel, on which every Client of the lock, Java or Go, is woken. Scripts:
// compat_lock_acquire.lua, compat_lock_release.lua, compat_lock_force_unlock.lua,
// compat_lock_renew.lua.
type redissonLayout struct{}

func (redissonLayout) lay(m *mutex, _ func(string) string) {
	m.keys = []string{m.key}
	m.wakeChannel = redissonPrefixed(redissonLockChannel, m.key)
}

func (redissonLayout) queues() bool          { return false }
func (redissonLayout) recordsReleases() bool { return true }
func (redissonLayout) redisson() bool        { return true }

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
