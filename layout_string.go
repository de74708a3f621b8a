package redisson

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/wait"
)

// stringLayout is the lock string of Lock, FairLock, FencedLock and SpinLock (layoutString):
// "<owner>|<levels>|<mark>..." at the lock's key (lock_value.lua, decodeLockValue), its wait queue
// and queue deadlines, and the fencing counter. Scripts: lock_acquire.lua, lock_release.lua,
// lock_force_unlock.lua, lock_renew.lua; KEYS of each: the lock key, the queue, the deadlines, the
// fencing counter (m.keys).
type stringLayout struct{}

func (stringLayout) lay(m *mutex, aux func(string) string) {
	q, qt, fence := aux(m.kind.marker+sfxQueue), aux(m.kind.marker+sfxDeadlines), aux(sfxFence)
	m.keys = []string{m.key, q, qt, fence}
	m.wakePrefix = aux(sfxWake)
	m.wakeArg = m.wakePrefix
	m.wakeChannel = m.wakePrefix + m.c.id
}

func (stringLayout) queues() bool              { return true }
func (stringLayout) recordsReleases() bool     { return false }
func (stringLayout) redisson() bool            { return false }
func (stringLayout) enqueuesWaiters() bool     { return false }
func (stringLayout) renewKeys(*mutex) []string { return nil }

// waiter: the waiter's heartbeat keeps its place in the queue (wait_beat.lua: lock, queue,
// deadlines).
func (stringLayout) waiter(m *mutex, w *wait.Waiter) bool {
	w.Beat.Key, w.Beat.Keys = m.keys[1], m.keys[:3:3]
	return true
}

// acquire: with q.fast, first a plain SET NX PX, which takes a free lock in one cheap command; when
// that finds the key, lock_acquire.lua decides (held by another, handed over, or a SET whose reply
// was lost and re-sent).
func (stringLayout) acquire(ctx context.Context, m *mutex, q acquireReq) (acquireRes, error) {
	c := m.c
	var fastResent, resent bool // a copy of the SET NX, or of the script, may still be travelling
	if q.fast {
		// Safe to send again: a repeat finds the key set, and the script recognises the owner's value.
		cmd, aerr := send(ctx, c, m.key, nil, func() *redis.BoolCmd {
			return redis.NewBoolCmd(ctx, "set", m.key, encodeLockValue(q.owner, q.level, m.kind), "px", c.msArg(q.leaseMs), "nx")
		}, sendOpts{resend: true, acked: true, repeat: &fastResent})
		set, err := cmd.Result()
		if err != nil {
			return acquireRes{}, err
		}
		if set {
			return acquireRes{n: 1, ackErr: aerr, resent: fastResent}, nil
		}
	}
	known := ""
	if q.mode == modeWait {
		known = c.knownEpoch(m.gateName, q.sent)
	}
	opts := sendOpts{resend: true, acked: true, repeat: &resent}
	cmd, ackErr := c.evalOpts(ctx, opts, scripts.LockAcquire, m.keys, q.owner, q.leaseMs, q.level, q.mode, m.kind.marker, c.waiterArg, known)
	r, err := cmd.Int64Slice()
	if err == nil && len(r) != 4 {
		err = errors.New("redisson: unexpected reply to an acquisition")
	}
	if err != nil {
		return acquireRes{}, err
	}
	if r[3] > 0 {
		c.noteEpoch(m.gateName, r[3], q.sent)
	}
	if r[0] < 1 {
		ackErr = nil // nothing was granted; a queued waiter needs no replica
	}
	return acquireRes{n: r[0], token: r[1], ticket: r[2], ackErr: ackErr, resent: resent || fastResent}, nil
}

// releaseCall: lock_release.lua. A final release may transfer the lock to a local heir, or make the
// releasing owner rejoin the queue (a give-back).
func (stringLayout) releaseCall(m *mutex, q releaseReq) (*redis.Script, []string, []any, string) {
	c := m.c
	args := []any{q.owner, q.level, finalArg(q), q.expected, c.msArg(q.leaseMs), c.publish, m.wakeArg, m.kind.marker, c.waiterArg}
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

// read returns the lock's current value (zero if free).
func (m *mutex) read(ctx context.Context) (lockValue, error) {
	var get *redis.StringCmd
	_ = m.c.read(ctx, m.key, func(p redis.Pipeliner) { get = p.Get(ctx, m.key) })
	v, err := get.Result()
	return m.decode(v, err, "read")
}

// decode decodes the lock key's value as read with err; a missing key is a free lock, not an error.
// A lock of another kind is refused like any foreign value.
func (m *mutex) decode(s string, err error, op string) (lockValue, error) {
	if errors.Is(err, redis.Nil) {
		return lockValue{}, nil
	}
	if err != nil {
		return lockValue{}, opErr(op, m.name, redisErr(err))
	}
	v, ok := decodeLockValue(s)
	if !ok || v.kind != m.kind.marker {
		return lockValue{}, opErr(op, m.name, ErrWrongType, errors.New("the key holds no lock of this kind"))
	}
	return v, nil
}

// lockValue is a decoded lock string.
type lockValue struct {
	owner  string
	levels int
	kind   string
	token  int64
}

// encodeLockValue is the lock string of a Lock (kind "") or SpinLock held by owner with the one
// level id, unmarked ("" for the other kinds, whose strings carry more): the format is defined, and
// decoded on the server, by internal/scripts/lock_value.lua.
func encodeLockValue(owner, level string, kind *lockKind) string {
	switch kind {
	case kindPlain:
		return owner + "|" + level + "|"
	case kindSpin:
		return owner + "|" + level + "||" + kindSpin.marker
	}
	return ""
}

// decodeLockValue is the one Go decoder of the lock string "<owner>|<levels>|<mark>[|f|t<token>]"
// (see internal/scripts/lock_value.lua); ok is false if s is not a lock string.
func decodeLockValue(s string) (v lockValue, ok bool) {
	owner, rest, ok1 := strings.Cut(s, "|")
	ids, rest, ok2 := strings.Cut(rest, "|")
	if !ok1 || !ok2 || owner == "" || strings.ContainsAny(owner, ",@=;") {
		return lockValue{}, false
	}
	mark, kind, hasKind := strings.Cut(rest, "|")
	if mark != "" && (mark[0] != 'w' || strings.Trim(mark[1:], "0123456789") != "") {
		return lockValue{}, false
	}
	v.owner = owner
	switch {
	case !hasKind:
	case kind == kindFair.marker || kind == kindSpin.marker:
		v.kind = kind
	case strings.HasPrefix(kind, kindFenced.marker) && len(kind) > 1 && strings.Trim(kind[1:], "0123456789") == "":
		token, err := strconv.ParseInt(kind[1:], 10, 64)
		if err != nil {
			return lockValue{}, false
		}
		v.kind, v.token = kindFenced.marker, token
	default:
		return lockValue{}, false
	}
	if ids == "" {
		return v, true
	}
	for _, id := range strings.Split(ids, ",") {
		if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
			return lockValue{}, false
		}
		v.levels++
	}
	return v, true
}
