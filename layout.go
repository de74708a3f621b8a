package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Layouts: how a lock kind's state is stored in Redis. A kind's format (lockKind.format) is one
// layout; each is in a file of its own (layout_*.go) beside the contracts of its scripts, and says
// what to send and how to read the answer, while mutex (lock.go, hold.go) drives the protocol: the
// local queue, heirs, waiting, spinning, undo, hand-over.
//
//	Lock, FairLock, ... (the handles)        lock.go, fairlock.go, rwlock.go, ...
//	        │
//	mutex: acquire, release, undo, hand-over  lock.go, hold.go
//	        │
//	layout: keys, scripts and their replies   layout_string.go, layout_rw.go, layout_redisson*.go
//	        │
//	command path: routing, re-sends, WAIT     send.go
type layout interface {
	// lay sets m's keys and wake-up channels (newMutex); aux names the keys beside the lock's.
	lay(m *mutex, aux func(string) string)
	// queues reports whether waiters queue in this package's wait queue in Redis and are handed
	// the lock by releases.
	queues() bool
	// recordsReleases reports whether releases keep a record of their answer (Redisson's unlock
	// latch, see unlockLatchMs) for their re-sent copies: a re-send that finds neither the record
	// nor the owner then proves that the first copy had not run, and, if it was sent while the
	// owner's lease was in force, that the owner had lost the lock.
	recordsReleases() bool
	// redisson reports whether the lock is Java Redisson's RLock hash (see redissonState).
	redisson() bool
	// releaseCall is the script call of the release q, and the key of its record ("": none; see
	// recordsReleases), deleted once it is answered.
	releaseCall(m *mutex, q releaseReq) (script *redis.Script, keys []string, args []any, record string)
	// forceUnlockCall is the script (run on m.keys) and arguments of a force unlock: of the whole
	// lock, or with side ("r", "x") only while that side of a ReadWriteLock holds it.
	forceUnlockCall(m *mutex, side string) (*redis.Script, []any)
	// isLocked, remainingTTL and levelsOf read the lock's state: held by anyone; how long until it
	// expires unless renewed (0 when free); the levels owner holds on m's side (0: none).
	isLocked(ctx context.Context, m *mutex) (bool, error)
	remainingTTL(ctx context.Context, m *mutex) (time.Duration, error)
	levelsOf(ctx context.Context, m *mutex, owner string) (int, error)
}

// The layouts. Values of empty structs, so that kinds and the protocol may compare them.
var (
	// formatString: a lock string "<owner>|<levels>|<mark>..." (lock_value.lua, decodeLockValue),
	// with a wait queue in Redis and hand-overs.
	formatString layout = stringLayout{}
	// formatRW: a ReadWriteLock's hash (rw_value.lua, read through rw_state.lua), with waiters
	// registered in the hash.
	formatRW layout = rwLayout{}
	// formatRedisson: Java Redisson's RLock hash, owner -> count (compat_lock_value.lua,
	// decodeRedissonLock), for a Client made WithRedissonCompat: no queue of this package, waiters
	// woken by every message on Redisson's lock channel.
	formatRedisson layout = redissonLayout{}
	// formatRedissonFair: Java Redisson's RFairLock, the RLock hash (decoded as formatRedisson's) and
	// Redisson's queue of waiters with client-clock deadlines (compat_fair_queue.lua), for a Client
	// made WithRedissonCompat: a waiting attempt queues its owner there, a release wakes the head
	// only, on the head's own channel; no hand-over.
	formatRedissonFair layout = redissonFairLayout{}
	// formatRedissonRW: Java Redisson's RReadWriteLock hash and read acquisitions' keys
	// (compat_rw_value.lua, decodeRedissonRW), for a Client made WithRedissonCompat: no queue,
	// waiters woken by every message on Redisson's read/write lock channel.
	formatRedissonRW layout = redissonRWLayout{}
)

// finalArg is a release's "final" argument: "1" for the last level, else "0".
func finalArg(q releaseReq) string {
	if q.final {
		return "1"
	}
	return "0"
}

// unlockRecord returns the key of a release's record (its unlock latch, see recordsReleases) and how
// long it lives, or "" and 0 for an undo, which needs none: it is safe to repeat as it is.
func unlockRecord(m *mutex, q releaseReq) (string, int64) {
	if q.undo {
		return "", 0
	}
	return redissonPrefixed(redissonUnlockLatch, m.key) + ":" + m.c.newID(), m.c.unlockLatchMs()
}
