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

// redissonWriteSuffix ends a writer's field in Java Redisson's RReadWriteLock hash: "<owner>:write".
const redissonWriteSuffix = ":write"

// redissonTagged is the tag Redisson puts before a ReadWriteLock's read acquisitions' keys: "{full}",
// or full itself when it has a hash tag (see redissonSuffixed).
func redissonTagged(full string) string {
	if strings.IndexByte(full, '{') >= 0 {
		return full
	}
	return "{" + full + "}"
}

// redissonRW is the state of a ReadWriteLock in Java Redisson's layout (see decodeRedissonRW).
type redissonRW struct {
	mode    string         // "read", "write", or "" (free)
	writer  string         // the writer's owner ("" none)
	writes  int            // the writer's hold count
	readers map[string]int // the readers' hold counts, by owner
	ttl     time.Duration  // the hash's remaining TTL (0 free, -1 no expiry)
}

// redissonRWState reads a ReadWriteLock in Java Redisson's layout (one round trip, to the master).
func (m *mutex) redissonRWState(ctx context.Context, op string) (redissonRW, error) {
	fields, ttl, err := m.readHash(ctx, op)
	if err != nil {
		return redissonRW{}, err
	}
	v, ok := decodeRedissonRW(fields)
	if !ok {
		return redissonRW{}, opErr(op, m.name, ErrWrongType, errors.New("the key holds no Java Redisson read/write lock"))
	}
	if v.mode != "" && ttl != -2 { // -2: expired meanwhile, free
		v.ttl = ttl
	} else {
		v = redissonRW{}
	}
	return v, nil
}

// decodeRedissonRW is the one Go decoder of Java Redisson's RReadWriteLock hash (see
// internal/scripts/compat_rw_value.lua), as HGETALL returns it: no field is a free lock; otherwise
// "mode" is "read" or "write", "<owner>:write" the writer's count (exactly one in mode "write",
// none in mode "read"), every other field a reader's count; counts are positive integers. ok is
// false for anything else (an RLock's hash, application data).
func decodeRedissonRW(fields map[string]string) (v redissonRW, ok bool) {
	if len(fields) == 0 {
		return redissonRW{}, true
	}
	v.readers = map[string]int{}
	for f, val := range fields {
		if f == "mode" {
			if val != "read" && val != "write" {
				return redissonRW{}, false
			}
			v.mode = val
			continue
		}
		n, err := strconv.Atoi(val)
		if f == "" || err != nil || n < 1 || val[0] == '+' || val[0] == '0' {
			return redissonRW{}, false
		}
		if w, isWriter := strings.CutSuffix(f, redissonWriteSuffix); isWriter {
			if v.writer != "" || w == "" {
				return redissonRW{}, false
			}
			v.writer, v.writes = w, n
			continue
		}
		v.readers[f] = n
	}
	if v.mode == "" || (v.mode == "write") != (v.writer != "") {
		return redissonRW{}, false
	}
	return v, true
}
