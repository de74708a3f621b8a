package javadouble

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/fair_acquire.lua
	fairAcquireSrc string
	fairAcquire    = redis.NewScript(fairAcquireSrc)

	//go:embed lua/fair_acquire_failed.lua
	fairAcquireFailedSrc string
	fairAcquireFailed    = redis.NewScript(fairAcquireFailedSrc)

	//go:embed lua/fair_unlock.lua
	fairUnlockSrc string
	fairUnlock    = redis.NewScript(fairUnlockSrc)

	//go:embed lua/fair_force_unlock.lua
	fairForceUnlockSrc string
	fairForceUnlock    = redis.NewScript(fairForceUnlockSrc)
)

// FairLock returns the fair lock name (Redisson getFairLock): the Lock's HASH plus the waiter queue
// LIST redisson_lock_queue:{name} and the deadline ZSET redisson_lock_timeout:{name} (client-clock
// deadlines), and one channel per waiting thread, redisson_lock__channel:{name}:<uuid>:<tid>, to
// which an unlock publishes only for the queue's head. A waiter's stale timeout (threadWaitTime) is
// the TryLock wait, or FairLockWaitTimeout for Lock. It does not touch Redis.
func (c *Client) FairLock(name string) *Lock { return c.newLock(name, fairLock) }

// fairKeys are the lock hash, the queue and the timeout zset.
func (l *Lock) fairKeys() []string {
	return []string{l.name, prefixName("redisson_lock_queue", l.name), prefixName("redisson_lock_timeout", l.name)}
}

// threadWait is the fair lock's threadWaitTime: the tryLock wait if > 0, else fairLockWaitTimeout.
func (l *Lock) threadWait(waitMs int64) int64 {
	if waitMs > 0 {
		return waitMs
	}
	return ms(l.c.fairWait)
}
