package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
)

// rwLayout is a ReadWriteLock's hash (formatRW): the writer, one field per reader owner, and the
// waiters registered in the hash (rw_value.lua), read through rw_state.lua. Scripts:
// rw_acquire.lua, rw_release.lua, rw_force_unlock.lua, rw_renew.lua; KEYS: the hash alone.
type rwLayout struct{}

func (rwLayout) lay(m *mutex, aux func(string) string) {
	m.keys = []string{m.key}
	m.wakePrefix = aux(sfxWake)
	m.wakeChannel = m.wakePrefix + m.c.id
	m.otherKey = markKey{m.c, m.kind.other, m.key}
}

func (rwLayout) queues() bool          { return true }
func (rwLayout) recordsReleases() bool { return false }
func (rwLayout) redisson() bool        { return false }

// releaseCall: rw_release.lua; a give-back rejoins the hash's waiters.
func (rwLayout) releaseCall(m *mutex, q releaseReq) (*redis.Script, []string, []any, string) {
	c := m.c
	args := []any{q.owner, q.level, finalArg(q), m.kind.side, c.publish, m.wakePrefix, c.waiterArg}
	if q.rejoin != "" {
		args = append(args, q.rejoin)
	}
	return scripts.RWRelease, m.keys, args, ""
}

func (rwLayout) forceUnlockCall(m *mutex, side string) (*redis.Script, []any) {
	return scripts.RWForceUnlock, []any{m.c.publish, m.wakePrefix, m.c.waiterArg, side}
}

func (rwLayout) isLocked(ctx context.Context, m *mutex) (bool, error) {
	st, err := m.rwState(ctx, "")
	return st.writer || st.readers > 0, err
}

func (rwLayout) remainingTTL(ctx context.Context, m *mutex) (time.Duration, error) {
	st, err := m.rwState(ctx, "")
	return st.ttl, err
}

func (rwLayout) levelsOf(ctx context.Context, m *mutex, owner string) (int, error) {
	st, err := m.rwState(ctx, owner)
	return st.levels, err
}
