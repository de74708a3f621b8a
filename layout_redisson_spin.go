package redisson

// redissonSpinLayout is Java Redisson's RSpinLock (a SpinLock on a Client made WithRedissonCompat):
// the RLock hash at the lock's key, acquired, released, force-unlocked, renewed and read as
// redissonLayout's, except that nobody listens: its waiters poll (the kind spins), so its channel
// is "", for which compat_lock_release.lua and compat_lock_force_unlock.lua publish nothing, as
// RSpinLock's unlock (which keeps Redisson's unlock latch, as RLock's) and forceUnlock (a DEL) do.
// A Java RLock and RSpinLock of one name are one lock, and so they are here.
type redissonSpinLayout struct{ redissonLayout }

func (redissonSpinLayout) lay(m *mutex, _ func(string) string) {
	m.keys = []string{m.key}
	m.wakeChannel = "" // nobody listens
}
