package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/wait"
)

// redissonFairLayout is Java Redisson's RFairLock (layoutRedissonFair), for a Client made
// WithRedissonCompat: the RLock hash (read as redissonLayout's), Redisson's queue of waiters and
// their client-clock deadlines (compat_fair_queue.lua); each waiter, Java or Go, is woken on its
// own channel, wakePrefix + ":" + its owner. Scripts: compat_fair_acquire.lua,
// compat_fair_release.lua, compat_fair_force_unlock.lua; KEYS: the hash, the queue, the deadlines.
type redissonFairLayout struct{ redissonLayout }

func (redissonFairLayout) lay(m *mutex, _ func(string) string) {
	m.keys = []string{m.key, redissonPrefixed(redissonFairQueue, m.key), redissonPrefixed(redissonFairTimeouts, m.key)}
	m.wakePrefix = redissonPrefixed(redissonLockChannel, m.key)
}

func (redissonFairLayout) enqueuesWaiters() bool { return true }

// waiter: as redissonLayout's, but each waiter is woken on a channel of its own (a release wakes
// the head of the queue only); a waiter is stale in the queue after its deadline, no heartbeat.
func (redissonFairLayout) waiter(m *mutex, w *wait.Waiter) bool {
	w.Channel = m.wakePrefix + ":" + w.ID
	w.Every = true
	return false
}

// acquire: compat_fair_acquire.lua; a waiting attempt queues its owner with its threadWaitTime.
func (redissonFairLayout) acquire(ctx context.Context, m *mutex, q acquireReq) (acquireRes, error) {
	var resent bool
	cmd, ackErr := m.c.evalOpts(ctx, sendOpts{resend: true, acked: true, repeat: &resent}, scripts.CompatFairAcquire, m.keys,
		q.owner, q.leaseMs, q.mode, q.waitMs, time.Now().UnixMilli())
	return redissonAcquired(cmd, ackErr, resent)
}

// releaseCall: compat_fair_release.lua, as redissonLayout's; an undo (no record) also leaves
// Redisson's queue.
func (redissonFairLayout) releaseCall(m *mutex, q releaseReq) (*redis.Script, []string, []any, string) {
	record, recordMs := unlockRecord(m, q)
	keys := []string{m.keys[0], m.keys[1], m.keys[2], m.key}
	if record != "" {
		keys[3] = record
	}
	return scripts.CompatFairRelease, keys, []any{q.owner, finalArg(q), q.leaseMs, m.c.publish, m.wakePrefix, recordMs, time.Now().UnixMilli()}, record
}

func (redissonFairLayout) forceUnlockCall(m *mutex, _ string) (*redis.Script, []any) {
	return scripts.CompatFairForceUnlock, []any{m.c.publish, m.wakePrefix, time.Now().UnixMilli()}
}
