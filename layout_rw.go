package redisson

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/wait"
)

// rwLayout is a ReadWriteLock's hash (layoutRW): the writer, one field per reader owner, and the
// waiters registered in the hash (rw_value.lua), read through rw_state.lua. Scripts:
// rw_acquire.lua, rw_release.lua, rw_force_unlock.lua, rw_renew.lua; KEYS: the hash alone.
type rwLayout struct{}

func (rwLayout) lay(m *mutex, aux func(string) string) {
	m.keys = []string{m.key}
	m.wakePrefix = aux(sfxWake)
	m.wakeChannel = m.wakePrefix + m.c.id
	m.otherKey = markKey{m.c, m.kind.other, m.key}
}

func (rwLayout) queues() bool                     { return true }
func (rwLayout) recordsReleases() bool            { return false }
func (rwLayout) redisson() bool                   { return false }
func (rwLayout) enqueuesWaiters() bool            { return false }
func (rwLayout) renewKeys(*mutex) []string        { return nil }
func (rwLayout) waiter(*mutex, *wait.Waiter) bool { return true } // registered in the hash by its attempts

// acquire: rw_acquire.lua; a reader may be vouched for by the writer whose hold marks ctx.
func (rwLayout) acquire(ctx context.Context, m *mutex, q acquireReq) (acquireRes, error) {
	c := m.c
	var resent bool
	opts := sendOpts{resend: true, acked: true, repeat: &resent}
	cmd, ackErr := c.evalOpts(ctx, opts, scripts.RWAcquire, m.keys, q.owner, q.leaseMs, q.level, q.mode, m.kind.side, c.waiterArg, m.vouch(ctx))
	r, err := cmd.Int64Slice()
	if err == nil && len(r) != 4 {
		err = errors.New("redisson: unexpected reply to an acquisition")
	}
	if err != nil {
		return acquireRes{}, err
	}
	if r[0] < 1 {
		ackErr = nil
	}
	return acquireRes{n: r[0], ticket: r[2], ackErr: ackErr, resent: resent}, nil
}

func (rwLayout) sideLocked(ctx context.Context, m *mutex) (bool, error) {
	st, err := m.rwState(ctx, "")
	if m.kind.side == "r" {
		return st.readers > 0, err
	}
	return st.writer, err
}

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

// rwState is a ReadWriteLock's state (rw_state.lua): writer held, live readers, time until the
// latest holder's lease ends, and the levels owner holds on m's side.
type rwState struct {
	writer  bool
	readers int
	ttl     time.Duration
	levels  int
}

func (m *mutex) rwState(ctx context.Context, owner string) (rwState, error) {
	r, err := m.c.run(ctx, scripts.RWState, m.keys, m.kind.side, owner).Int64Slice()
	if err == nil && len(r) != 4 {
		err = errors.New("redisson: unexpected reply to a state query")
	}
	if err != nil {
		return rwState{}, opErr("read", m.name, redisErr(err))
	}
	return rwState{writer: r[0] == 1, readers: int(r[1]), ttl: time.Duration(r[2]) * time.Millisecond, levels: int(r[3])}, nil
}
