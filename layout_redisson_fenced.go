package redisson

import (
	"context"

	"github.com/goredisson/redisson/internal/scripts"
)

// redissonFencedLayout is Java Redisson's RFencedLock (a FencedLock on a Client made
// WithRedissonCompat): the RLock hash at the lock's key, released, renewed and woken as
// redissonLayout's, and Redisson's token counter "redisson_lock_token:{<key>}" beside it, which
// every fresh acquisition, Java or Go, increments: the new value is the holder's token.
// Scripts: compat_fenced_acquire.lua, then redissonLayout's; KEYS: the hash and the counter.
type redissonFencedLayout struct{ redissonLayout }

func (redissonFencedLayout) lay(m *mutex, aux func(string) string) {
	redissonLayout{}.lay(m, aux)
	m.keys = []string{m.key, redissonPrefixed(redissonLockToken, m.key)}
}

// acquire: compat_fenced_acquire.lua, whose answer carries the token.
func (redissonFencedLayout) acquire(ctx context.Context, m *mutex, q acquireReq) (acquireRes, error) {
	var resent bool
	cmd, ackErr := m.c.evalOpts(ctx, sendOpts{resend: true, acked: true, repeat: &resent}, scripts.CompatFencedAcquire, m.keys, q.owner, q.leaseMs, q.mode)
	return redissonAcquired(cmd, ackErr, resent)
}
