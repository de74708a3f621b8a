package redisson

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
)

// stringLayout is the lock string of Lock, FairLock, FencedLock and SpinLock (formatString):
// "<owner>|<levels>|<mark>..." at the lock's key (lock_value.lua, decodeLockValue), its wait queue
// and queue deadlines, and the fencing counter. Scripts: lock_acquire.lua, lock_release.lua,
// lock_force_unlock.lua, lock_renew.lua; KEYS of each: the lock key, the queue, the deadlines, the
// fencing counter (m.keys).
type stringLayout struct{}

func (stringLayout) lay(m *mutex, aux func(string) string) {
	q, qt, fence := aux(m.kind.marker+sfxQueue), aux(m.kind.marker+sfxDeadlines), aux(sfxFence)
	m.keys = []string{m.key, q, qt, fence}
	m.wakePrefix = aux(sfxWake)
	m.wakeChannel = m.wakePrefix + m.c.id
}

func (stringLayout) queues() bool          { return true }
func (stringLayout) recordsReleases() bool { return false }
func (stringLayout) redisson() bool        { return false }

// releaseCall: lock_release.lua. A final release may transfer the lock to a local heir, or make the
// releasing owner rejoin the queue (a give-back).
func (stringLayout) releaseCall(m *mutex, q releaseReq) (*redis.Script, []string, []any, string) {
	c := m.c
	args := []any{q.owner, q.level, finalArg(q), q.expected, q.leaseMs, c.publish, m.wakePrefix, m.kind.marker, c.waiterArg}
	if q.heir != "" || q.rejoin != "" {
		args = append(args, q.heir)
	}
	if q.rejoin != "" {
		args = append(args, q.rejoin)
	}
	return scripts.LockRelease, m.keys, args, ""
}

func (stringLayout) forceUnlockCall(m *mutex, _ string) (*redis.Script, []any) {
	return scripts.LockForceUnlock, []any{m.c.publish, m.wakePrefix, m.kind.marker}
}

func (stringLayout) isLocked(ctx context.Context, m *mutex) (bool, error) {
	v, err := m.read(ctx)
	return v.owner != "", err
}

func (stringLayout) remainingTTL(ctx context.Context, m *mutex) (time.Duration, error) {
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	err := m.c.read(ctx, m.key, func(p redis.Pipeliner) {
		get = p.Get(ctx, m.key)
		pttl = p.PTTL(ctx, m.key)
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, opErr("remaining ttl", m.name, redisErr(err))
	}
	if v, err := m.decode(get.Val(), get.Err(), "remaining ttl"); err != nil || v.owner == "" {
		return 0, err
	}
	return pttl.Val(), nil
}

func (stringLayout) levelsOf(ctx context.Context, m *mutex, owner string) (int, error) {
	v, err := m.read(ctx)
	if err != nil || v.owner != owner {
		return 0, err
	}
	return v.levels, nil
}
