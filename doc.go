// Package redisson gives Go services the distributed locks of Redisson (Java) on Redis, with Go
// semantics: a reentrant Lock whose lease a watchdog keeps alive, waits woken by pub/sub instead of
// polling, and a signal when a lock is lost.
//
//	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs, ContextTimeoutEnabled: true})
//	c, err := redisson.New(rdb)
//	defer c.Close()
//
//	mu := c.Lock("goods:1000")
//	lctx, err := mu.Lock(ctx)  // waits; the watchdog renews the lease until Unlock
//	if err != nil { ... }      // matches ErrNotObtained (and ctx.Err() if ctx ended the wait)
//	defer mu.Unlock(lctx)
//	work(lctx)                 // lctx is cancelled if the lock is lost: context.Cause(lctx) matches ErrLockLost
//
// # Ownership
//
// A handle (Client.Lock) is a name; it holds no state and is safe to share. Each fresh acquisition
// creates a new owner (the client's random id plus a sequence number) and returns an ownership context
// that carries it. Re-entry and unlocking are explicit: pass that context. Nothing re-enters because
// it runs on the same goroutine or uses the same handle; two acquisitions without the ownership
// context exclude each other, as with sync.Mutex. The hold count lives in Redis.
//
// When the parent context of an acquisition ends while the lock is held, the ownership context is
// cancelled too, but the lock is not released: it stays held, and renewed, until Unlock, which works
// with a cancelled context. This keeps "cancel the work" and "release the lock" separate decisions, as
// with a sync.Mutex held by a goroutine whose request was cancelled.
//
// # Acquisition forms
//
//	Lock(ctx)                              wait until acquired or ctx ends; watchdog lease
//	Lock(ctx, WithLease(d))                wait; the lock expires d after acquisition, no watchdog
//	TryLock(ctx)                           one attempt
//	TryLock(ctx, WithWait(w), WithLease(d)) try for up to w; optional fixed lease
//
// Every failure matches ErrNotObtained and leaves nothing held.
//
// # Watchdog
//
// One goroutine per Client renews every watchdog lock every third of the watchdog timeout (default
// 30s, so every 10s), up to 100 locks per script call. It is registered before the acquisition returns
// and stopped by the final unlock; its script checks the owner, so it never extends a lock that has
// changed hands. If Redis says the lock is gone, or renewals keep failing until the lease may have
// lapsed, the ownership context is cancelled with a cause matching ErrLockLost. A fixed-lease hold is
// ended (and its context cancelled with ErrLockLost) when its lease has passed, counted from when the
// acquire request was sent.
//
// # Waiting
//
// All waits of a Client share one pub/sub connection, opened on the first wait, with one
// reference-counted subscription per lock (kept for 2s after its last waiter leaves). A failed
// attempt marks the lock as awaited; the final release of an awaited lock publishes one message,
// which wakes one waiter per subscribed process (an uncontended release publishes nothing). After a
// pub/sub reconnect every waiter is woken. Every wait is also bounded by the holder's remaining TTL
// and by the re-poll interval (default 500ms), so a lost message delays a waiter, never strands it.
//
// Fairness. Inside a process, goroutines waiting for one lock queue first come first served and only
// the head contends in Redis; when a watchdog holder unlocks and no other process waits, the release
// transfers the lock to that head in the same round trip. So a goroutine that unlocks and
// immediately locks again queues behind the others. Between processes the lock is not FIFO: on each
// release the head waiter of every process races for it. To keep that race from starving anyone, a
// waiter that has waited 10ms claims the lock (one claim at a time), and the holder's final release
// hands the lock to the claimer instead of freeing it: the goroutine that just unlocked cannot take
// it back. The hand-over is reserved for 2×re-poll+1s; a claimer that died in between stalls the
// lock that long at most, and one that gives up withdraws its claim.
//
// # Re-sent commands
//
// go-redis re-sends a command after a network error (MaxRetries), so a command may run twice. Every
// acquire and release carries a request id: a repeat of an applied request is recognised and answered
// as the first run was, so hold counts stay exact and the owner's final unlock is not misreported as
// ErrNotHeld. An acquisition whose outcome is unknown (network error, context ended mid-call) is undone
// on a detached context before the error is returned.
//
// # Keys
//
// The lock is a string at <prefix><name>, "<owner>|<hold count>|<last request id>", absent when free,
// so a free lock is taken with one plain SET NX PX. The final release renames it to
// {<prefix><name>}:rel, where it stays (with its remaining TTL) until the next final release, so that a
// re-sent release is recognised. The wake-up channel is {<prefix><name>}:ch. (When the name has its own
// {hash tag}, suffixes are appended to the name instead.) All keys and channels of one lock
// share a hash tag, so every script touches one Cluster slot. A name holding another type of value
// gets ErrWrongType and is not modified.
//
// # What is guaranteed, and what is not
//
// While Redis keeps its data, at most one owner holds a lock at a time, and the owner is told
// (ErrLockLost) when the watchdog can no longer vouch for its lease. That is not mutual exclusion of
// your side effects:
//
//   - A process paused longer than the lease (GC, SIGSTOP, swapped out) may resume believing it holds a
//     lock that expired and was taken by another; the loss signal arrives after the fact.
//   - Redis replication is asynchronous: after a failover the new master may not have the lock, and a
//     second owner can acquire it.
//   - A Close, or a crashed process, leaves its locks in Redis until their lease runs out.
//
// Protect resources that must never see two writers with a fencing token checked by the resource
// itself (a monotonically increasing number issued with each acquisition), which a later release of
// this library adds.
//
// # go-redis settings
//
// Set ContextTimeoutEnabled: true, or context deadlines do not bound network waits (New logs a warning
// when it can tell). A Cluster given a single seed address needs IsClusterMode: true.
package redisson
