package redisson

import (
	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/wait"
)

// redissonSpinLayout is Java Redisson's RSpinLock (a SpinLock on a Client made WithRedissonCompat):
// the RLock hash at the lock's key, acquired and renewed as redissonLayout's, whose waiters poll
// instead of listening: a release and a force unlock publish nothing (RSpinLock's unlock keeps
// Redisson's unlock latch, as RLock's, and its forceUnlock only deletes). A Java RLock and RSpinLock
// of one name are one lock, and so they are here.
type redissonSpinLayout struct{ redissonLayout }

func (redissonSpinLayout) lay(m *mutex, _ func(string) string) {
	m.keys = []string{m.key}
	m.wakeChannel = "" // nobody listens
}

// waiter: never called (the kind spins); a spinning acquisition is in no queue.
func (redissonSpinLayout) waiter(*mutex, *wait.Waiter) bool { return false }

// releaseCall: compat_lock_release.lua without its message.
func (redissonSpinLayout) releaseCall(m *mutex, q releaseReq) (*redis.Script, []string, []any, string) {
	return redissonLayout{}.releaseCall(m, q) // m.wakeChannel is "": nothing published
}

// forceUnlockCall: compat_lock_force_unlock.lua without its message.
func (redissonSpinLayout) forceUnlockCall(m *mutex, side string) (*redis.Script, []any) {
	return redissonLayout{}.forceUnlockCall(m, side)
}
