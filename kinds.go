package redisson

import "time"

// The kind table: every lock kind, what it does differently (data, read by the protocol, mutex.go
// and hold.go, not comparisons of kinds spread over the package) and the layout it is stored in.

// lockKind is one kind of lock.
type lockKind struct {
	// marker: the kind's marker in its lock string (lock_value.lua: "" Lock, "f" FairLock, "t"
	// FencedLock, "s" SpinLock), or "R"/"W" for the sides of a ReadWriteLock, stored in a hash
	// (rw_value.lua). It also names the kind's local queue and its wait queue keys.
	marker string
	side   string // a ReadWriteLock side in its scripts: "r" read, "x" write; "" for a lock string
	other  string // a ReadWriteLock side: the other side's marker (a vouching writer, a refused upgrade)
	// local: the goroutines of one Client queue locally (internal/gate) and only the head contends
	// in Redis. Without it every acquisition queues in Redis, so that the order is that of arrival
	// at Redis (FairLock; readers, which share the lock).
	local bool
	setNX bool // a free lock is taken with one SET NX when it does not look contended
	// heirs: a final release may transfer the lock to the Client's next local waiter (not a
	// FencedLock: the heir would need a token of its own)
	heirs  bool
	spins  bool   // waits by polling, in no Redis queue
	fenced bool   // holds carry a fencing token: refused on a server that evicts keys
	hold   int    // the renewal kind (renewKinds) of its holds
	waiter int    // the renewal kind of its waiters' heartbeats (a format with a queue)
	layout layout // how its lock is stored (layout.go)
	object string // Event.Object of its events (a compat kind: that of the kind it serves)
	// compat is the kind that serves this one on a Client made WithRedissonCompat, in Java
	// Redisson's layout; nil: the kind has no such layout here, and its calls fail with an error
	// matching errors.ErrUnsupported (see newMutex).
	compat *lockKind
}

// The lock kinds.
var (
	kindPlain  = &lockKind{object: ObjectLock, marker: "", local: true, setNX: true, heirs: true, hold: kindLock, waiter: kindWaiter, compat: kindCompat, layout: layoutString}
	kindFair   = &lockKind{object: ObjectFairLock, marker: "f", hold: kindLock, waiter: kindWaiter, compat: kindCompatFair, layout: layoutString}
	kindFenced = &lockKind{object: ObjectFencedLock, marker: "t", local: true, fenced: true, hold: kindLock, waiter: kindWaiter, compat: kindCompatFenced, layout: layoutString}
	kindSpin   = &lockKind{object: ObjectSpinLock, marker: "s", local: true, setNX: true, spins: true, hold: kindLock, waiter: kindWaiter, compat: kindCompatSpin, layout: layoutString}
	kindRead   = &lockKind{object: ObjectReadLock, marker: "R", side: "r", other: "W", hold: kindRWRead, waiter: kindRWReadWaiter, layout: layoutRW, compat: kindCompatRead}
	kindWrite  = &lockKind{object: ObjectWriteLock, marker: "W", side: "x", other: "R", local: true, hold: kindRWWrite, waiter: kindRWWaiter, layout: layoutRW, compat: kindCompatWrite}
	// kindCompat is a Lock on a Client made WithRedissonCompat: Java Redisson's RLock. Goroutines of
	// a Client queue locally, and only the head contends; no SET NX (the lock is a hash), no
	// transfer to a local heir (a release frees the lock for Java clients too), no Redis queue.
	kindCompat = &lockKind{object: ObjectLock, marker: "J", local: true, hold: kindCompatLock, layout: layoutRedisson}
	// kindCompatFenced is a FencedLock on a Client made WithRedissonCompat: Java Redisson's
	// RFencedLock, the RLock's hash and Redisson's token counter. Goroutines of a Client queue
	// locally (only the head contends); no transfer to a local heir (the heir would need a token).
	kindCompatFenced = &lockKind{object: ObjectFencedLock, marker: "JT", local: true, fenced: true, hold: kindCompatLock, layout: layoutRedissonFenced}
	// kindCompatSpin is a SpinLock on a Client made WithRedissonCompat: Java Redisson's RSpinLock,
	// the RLock's hash, polled with backoff (this package's: WithSpinBackoff), no messages. Goroutines
	// of a Client queue locally, and only the head spins.
	kindCompatSpin = &lockKind{object: ObjectSpinLock, marker: "JS", local: true, spins: true, hold: kindCompatLock, layout: layoutRedissonSpin}
	// kindCompatFair is a FairLock on a Client made WithRedissonCompat: Java Redisson's RFairLock.
	// Every acquisition, whatever its Client, queues in Redisson's queue (no local queue), so that
	// Java and Go waiters are served in the order they queued. Its holds are an RLock's hash, renewed
	// as the compat Lock's.
	kindCompatFair = &lockKind{object: ObjectFairLock, marker: "JF", hold: kindCompatLock, layout: layoutRedissonFair}
	// kindCompatRead and kindCompatWrite are the sides of a ReadWriteLock on a Client made
	// WithRedissonCompat: Java Redisson's RReadWriteLock. Writers of a Client queue locally (only the
	// head contends); readers do not (they share the lock). No Redis queue, no hand-over.
	kindCompatRead  = &lockKind{object: ObjectReadLock, marker: "JR", side: "r", other: "JW", hold: kindCompatRWRead, layout: layoutRedissonRW}
	kindCompatWrite = &lockKind{object: ObjectWriteLock, marker: "JW", side: "x", other: "JR", local: true, hold: kindCompatRWWrite, layout: layoutRedissonRW}
)

// redissonFairWait is the threadWaitTime of a compat FairLock's waiter that gives no WithWait bound,
// on a Client given no WithWaiterTimeout: Java Redisson's default fairLockWaitTimeout (5 minutes), by
// which Java waiters purge ours as stale (and ours theirs); with WithWait(d), d, as Redisson's
// tryLock(waitTime) does (see fairThreadWait).
const redissonFairWait = 5 * time.Minute

// markKey is the context key of ContextWithHold: one per Client, kind and lock key.
type markKey struct {
	c    *Client
	kind string
	key  string
}

// newMutex lays out a lock of kind called name (see keys.go).
func (c *Client) newMutex(name string, kind *lockKind) mutex {
	if err := c.checkValid(); err != nil {
		return mutex{name: name, kind: kind, err: err}
	}
	if c.cfg.compat {
		if kind.compat == nil {
			return mutex{c: c, name: name, kind: kind, err: unsupportedf("this kind of lock has no Java Redisson layout this package can keep (WithRedissonCompat)")}
		}
		kind = kind.compat
	}
	m := mutex{c: c, name: name, kind: kind}
	var aux func(string) string
	m.key, aux, m.err = objectKeys(c.cfg.prefix, name)
	if m.err != nil {
		return m
	}
	m.ctxKey = markKey{c, kind.marker, m.key}
	m.gateName = kind.marker + "|" + m.key
	kind.layout.lay(&m, aux)
	return m
}

// Java Redisson's names beside a lock's key (see redissonPrefixed).
const (
	redissonLockChannel  = "redisson_lock__channel" // unlock messages ("0")
	redissonUnlockLatch  = "redisson_unlock_latch"  // + ":" + request id: the record of one release
	redissonFairQueue    = "redisson_lock_queue"    // a FairLock's waiters (LIST)
	redissonFairTimeouts = "redisson_lock_timeout"  // their deadlines (ZSET, client-clock ms)
	redissonRWChannel    = "redisson_rwlock"        // a ReadWriteLock's releases ("0" read, "1" write)
	redissonLockToken    = "redisson_lock_token"    // a FencedLock's token counter (a plain integer)
)
