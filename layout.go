package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/wait"
)

// Layouts: how a lock kind's state is stored in Redis, one implementation of layout per stored
// format (lockKind.layout), each in a file of its own (layout_*.go) beside the contracts of its
// scripts. A layout says what to send and how to read the answer; mutex (mutex.go, hold.go) drives
// the protocol through it (the local queue, heirs, waiting, spinning, undo, hand-over) and does not
// know which layout it runs on. A new layout is a file and a row of the kind table (kinds.go).
//
//	Lock, FairLock, ... (the handles)        lock.go, fairlock.go, rwlock.go, ...
//	        │
//	mutex: acquire, release, undo, hand-over  mutex.go, hold.go (kinds: kinds.go)
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
	// enqueuesWaiters reports whether a waiting attempt may queue its owner in a queue of the
	// layout's own (Redisson's fair queue), which the end of the wait must leave.
	enqueuesWaiters() bool
	// acquire makes the attempt q (see runAcquire) and reads its answer.
	acquire(ctx context.Context, m *mutex, q acquireReq) (acquireRes, error)
	// waiter sets up w, a waiting acquisition's registration with the waiting engine (its channel,
	// its heartbeat), and reports whether the waiter waits in a queue in Redis (false: it is woken
	// by every message on the lock's channel, and counted as waiting in no queue).
	waiter(m *mutex, w *wait.Waiter) (queued bool)
	// renewKeys are the keys a hold's renewal needs, if more than the lock's key (renew.Entry.Keys).
	renewKeys(m *mutex) []string
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

// sidedLayout is what the layouts of a ReadWriteLock add: whether m's side holds it.
type sidedLayout interface {
	sideLocked(ctx context.Context, m *mutex) (bool, error)
}

// The layouts. Values of empty structs, so that kinds and the protocol may compare them.
var (
	// layoutString: a lock string "<owner>|<levels>|<mark>..." (lock_value.lua, decodeLockValue),
	// with a wait queue in Redis and hand-overs.
	layoutString layout = stringLayout{}
	// layoutRW: a ReadWriteLock's hash (rw_value.lua, read through rw_state.lua), with waiters
	// registered in the hash.
	layoutRW layout = rwLayout{}
	// layoutRedisson: Java Redisson's RLock hash, owner -> count (compat_lock_value.lua,
	// decodeRedissonLock), for a Client made WithRedissonCompat: no queue of this package, waiters
	// woken by every message on Redisson's lock channel.
	layoutRedisson layout = redissonLayout{}
	// layoutRedissonFenced: Java Redisson's RFencedLock, the RLock hash and its token counter (see
	// redissonFencedLayout).
	layoutRedissonFenced layout = redissonFencedLayout{}
	// layoutRedissonSpin: Java Redisson's RSpinLock, the RLock hash without messages (see
	// redissonSpinLayout).
	layoutRedissonSpin layout = redissonSpinLayout{}
	// layoutRedissonFair: Java Redisson's RFairLock, the RLock hash (decoded as layoutRedisson's) and
	// Redisson's queue of waiters with client-clock deadlines (compat_fair_queue.lua), for a Client
	// made WithRedissonCompat: a waiting attempt queues its owner there, a release wakes the head
	// only, on the head's own channel; no hand-over.
	layoutRedissonFair layout = redissonFairLayout{}
	// layoutRedissonRW: Java Redisson's RReadWriteLock hash and read acquisitions' keys
	// (compat_rw_value.lua, decodeRedissonRW), for a Client made WithRedissonCompat: no queue,
	// waiters woken by every message on Redisson's read/write lock channel.
	layoutRedissonRW layout = redissonRWLayout{}
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
