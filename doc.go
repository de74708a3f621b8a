// Package redisson gives Go services the distributed locks, synchronizers and objects of Redisson
// (Java) on Redis, with Go semantics: reentrant locks (Lock, FairLock, FencedLock) whose lease a
// watchdog keeps alive, waits served from a queue in Redis and woken one at a time instead of
// polling, a signal when a lock is lost; semaphores and latches; and shared data objects
// (AtomicLong, BitSet, BloomFilter, HyperLogLog).
//
//	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs, ContextTimeoutEnabled: true})
//	defer rdb.Close()
//	c, err := redisson.New(rdb) // create once and share; does no I/O
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//
//	mu := c.Lock("goods:1000")
//	h, err := mu.Lock(ctx) // waits; the watchdog renews the lease until Unlock
//	if err != nil {
//		return err // matches ErrNotObtained (and ctx.Err() if ctx ended the wait)
//	}
//	defer h.Unlock(ctx)
//	return work(h.Context()) // cancelled if the lock is lost: context.Cause matches ErrLockLost
//
// The package's Example runs these steps against a real Redis.
//
// # Ownership
//
// A handle (Client.Lock) is a name; it holds no state and is safe to share. Each successful
// acquisition creates a new owner (the client's random id plus a sequence number, unguessable) and
// returns a *Hold that owns it, as redislock's Obtain and etcd's Mutex do: only that Hold can release
// what it acquired, and it can do so once. Nothing is owned by a goroutine or by a handle: two
// acquisitions exclude each other even through the same handle, as with sync.Mutex, and a Hold may
// be handed to other goroutines, which then act as the owner.
//
// Re-entry is explicit. Hold.Reenter takes one more level for the same owner and returns a Hold for
// it; or a caller marks a context with ContextWithHold, and nested code that locks the same lock by
// name with that context re-enters instead of waiting. A context does not re-enter merely because it
// descends from the hold's context. The owner's levels are kept in Redis; each level is unlocked
// through its own Hold, in any order, and the last unlock releases the lock.
//
// The hold's context, Hold.Context, is for the work done under the lock. It is cancelled when the
// owner's last level is unlocked (cause context.Canceled) or when the lock is lost (cause matching
// ErrLockLost). It carries the values of the context given to the acquisition but not its
// cancellation: cancelling a request's wait never cancels work done under another lock, and a lock
// acquired under a request context stays held, and renewed, until Unlock even after that context
// ends. Unlock is not cut short by its context's cancellation either: a release abandoned halfway
// would leave the lock held for a whole lease.
//
// # Acquisition forms
//
//	Lock(ctx)                               wait until acquired or ctx ends; watchdog lease
//	Lock(ctx, WithLease(d))                 wait; the lock expires d after acquisition, no watchdog
//	TryLock(ctx)                            one attempt
//	TryLock(ctx, WithWait(w), WithLease(d)) try for up to w; optional fixed lease
//
// Every failure matches ErrNotObtained and leaves nothing held. Errors are *Error values naming the
// operation and the lock: redisson: lock "goods:1000": not obtained: context deadline exceeded: busy.
// What the failure means, for every acquisition of the package (locks, semaphores):
//
//	ErrBusy             contention: the lock was another owner's, or too few permits were free, until
//	                    the single attempt answered or the wait ended; retry later
//	ctx.Err()           the caller's context ended the wait (with ErrBusy if it was busy then)
//	ErrClosed           the Client was closed
//	ErrWrongType        the name holds another kind of object or value
//	ErrInvalidArgument  bad input; nothing was sent
//	ErrNotReplicated    too few replicas acknowledged the grant, which was given back
//	anything else       Redis or the network failed (wrapped); a wait whose bound passed while an
//	                    attempt was unanswered says "no answer from Redis in time", not ErrBusy
//
// A wait returns within the earlier of its context's deadline and its WithWait bound, plus a grace
// of at most 50ms and two round trips (in which an attempt sent before the bound may still answer;
// until a Client has had its first answer, which may have to dial, a round trip counts as 100ms),
// whatever Redis does (paused, killed, unreachable): the clean-up of an ended wait (leaving
// the queue, giving back a grant that may have landed) goes on in the background. A single attempt
// (TryLock, WithWait(0)) is bounded by its context only.
//
// # Watchdog
//
// One goroutine per Client renews every watchdog lock every third of the watchdog timeout (default
// 30s, so every 10s), up to 100 locks (of one Cluster slot) per script call, the calls due together
// pipelined in one round trip per Redis node, the nodes of a Cluster in parallel (a slow node delays
// only its own locks' renewals). It is registered before the acquisition returns
// and stopped by the final unlock; its script checks the owner, so it never extends a lock that has
// changed hands. If Redis says the lock is gone, or renewals keep failing until the lease may be
// about to lapse, the hold's context is cancelled with a cause matching ErrLockLost. A fixed-lease
// hold ends the same way shortly before its lease runs out; its Unlock after that still releases the
// lock (owner-checked) and wakes the waiters, rather than leave it to its TTL, and reports the loss.
//
// "About to lapse" leaves a safety margin (WithLossMargin, default a tenth of the lease), counted
// from when the acquiring or renewing request was sent: a holder that stops when its context is
// cancelled has stopped before another owner can take the lock, provided the drift between its clock
// and Redis's and its own reaction time stay within the margin. The signal is given on time even
// while a re-entry or partial unlock of the hold is still waiting for Redis, and however long other
// renewals take: the scheduler never waits on the network itself. (One exception: a renewal that
// finds the key gone while the owner's final Unlock is in flight has most likely run after that
// release; the release's answer then decides, and the holder has finished its work anyway.) When
// renewals fail until the lease is about to lapse, the client also releases the lock in the
// background as soon as it can, so that a renewal still travelling cannot re-arm it for nobody.
//
// # Kinds of lock
//
//	Lock        reentrant mutex (Redisson's RLock); not FIFO, no starvation
//	FairLock    reentrant mutex served first come, first served (RFairLock)
//	FencedLock  Lock whose every acquisition carries a fencing token (RFencedLock); see FencedSet
//	SpinLock    Lock whose waiters poll with backoff instead of pub/sub (RSpinLock)
//	ReadWriteLock  many readers or one writer, phase-fair (RReadWriteLock); its write side is a Locker;
//	            per-side IsReadLocked, IsWriteLocked, ForceReadUnlock, ForceWriteUnlock
//	MultiLock   all of several locks, from one or more Clients, or none (RedissonMultiLock)
//	RedLock     a majority of N independent masters, the Redlock algorithm (RedissonRedLock)
//
// All return a *Hold and share ownership, re-entry, leases, the watchdog and the loss signal; all
// satisfy Locker. On a Client made WithRedissonCompat every kind is kept in Java Redisson's layout
// of the same kind: see "Sharing locks with Java services".
//
// # Synchronizers
//
//	Semaphore                 counting, weighted, no owners (RSemaphore, x/sync/semaphore)
//	PermitExpirableSemaphore  the same semaphore with leased permits that have ids
//	                          (RPermitExpirableSemaphore); watchdog-renewed unless WithLease;
//	                          AcquireHeld's context is cancelled (ErrLockLost) if a permit is lost
//	CountDownLatch            wait until a count reaches zero (RCountDownLatch); re-armable
//
// They wait through the same engine as the locks, with the same bounded fallback (re-poll, waiter
// heartbeats). A change whose outcome their state cannot tell (permits and counts are counters,
// with no identity) carries a request id whose outcome Redis keeps for the waiter timeout, and at
// least 10s or twice the go-redis ReadTimeout (its re-sent copies and an acquisition's undo after a
// lost reply need it); a copy re-sent after a lost reply is answered
// from that record, and one that finds none applies nothing (the call reports an unknown outcome),
// so no request is applied twice, however late a copy lands.
// A leased permit's acquisition keeps one too: its permits may be released before a late copy lands.
// An acquisition whose copies may still be travelling (an unknown outcome, a re-send) keeps its
// record for 20 minutes instead, longer than TCP retransmits by default, and an undo that cannot
// reach Redis is retried in the background meanwhile: a copy landing after the call gave up takes
// nothing, unless it lands later than that or the undo never ran (see Semaphore).
// Permits and counts are integers within ±(2^53-1). A name is one kind: using it as another fails with ErrWrongType. The Hold of a
// MultiLock or RedLock stands for its parts (Hold.Parts): its Unlock and Reenter act on every part,
// and its context ends when too few parts remain held, whereupon the parts still held are released.
//
// # Data objects
//
//	AtomicLong   an int64: Load, Store, Add, Swap, CompareAndSwap (sync/atomic.Int64's words),
//	             SetIfGreater, SetIfLess, GetAndDelete (RAtomicLong)
//	BitSet       bits: single and ranges, counts, AND/OR/XOR/NOT, bytes, typed fields (RBitSet)
//	BloomFilter  a probabilistic set sized from expected insertions and a false-positive rate,
//	             hashed client-side (RBloomFilter)
//	HyperLogLog  a distinct-count estimate in 12 KiB (RHyperLogLog)
//
// They do not wait and hold nothing: each method is one round trip and one atomic step in Redis. Unlike the locks' scripts, which are written to run
// twice, their mutations are sent once: go-redis is told not to re-send them after a network error
// (a second INCRBY would add twice, a second compare-and-swap would report failure), so a mutation
// that fails with a network error may or may not have happened, and none is ever applied twice.
// Operations over several objects (BitSet.And, HyperLogLog.CountWith, MergeWith) take names that,
// on a Cluster, must share the object's slot (a common {hash tag} prefix).
//
// # Waiting
//
// Every blocking acquisition waits through one engine (internal/wait). An attempt that cannot take
// the lock queues its owner in the lock's wait queue in Redis (in order of arrival, and a liveness
// deadline per Client, both from the server's clock), and the final release hands the lock straight to the first live
// waiter in the release script, waking only that waiter: a message naming it on its Client's own
// channel for the lock. The message is the hand-over: a watchdog waiter holds the lock without
// another round trip. The message carries the waiter's ticket (its place in the queue) and how long
// the lock is reserved for it (its waiter timeout at most); the waiter counts that reservation from
// when it sent the attempt that returned the ticket, which ran before the release did. A message
// read late, after the waiter was served and queued again, carries an old ticket and is only a
// prompt to try again. A hand-over costs the same few commands however many wait.
//
// Waiters stay queued through their Client's liveness deadline in the queue, which heartbeats of the
// renewal scheduler move (every third of the waiter timeout, WithWaiterTimeout, default 5s, never
// more than the watchdog timeout), as does a queueing attempt when the Client's last refresh is older
// than that. A release takes a waiter whose Client receives the wake-up message to be alive (a Client
// is subscribed while it has waiters), and reads the deadline only when nobody receives it: a waiter
// whose process died (its connection closed) is skipped once its deadline has passed, and is
// otherwise reserved the lock until that deadline. So a dead waiter stalls the lock at most a waiter
// timeout, and the waiter behind it (not told when that reservation ends) finds the lock free at its
// next heartbeat or re-poll, whichever comes first. A process stopped or cut off while its connection
// stays open (SIGSTOP, a paused container, a partition), or any pattern subscription that matches the
// wake-up channels (PSUBSCRIBE *), makes a dead waiter look alive to the release: it is handed the
// lock and stalls it for its waiter timeout; the attempt that then finds the lock free evicts the
// waiters of every Client whose deadline has passed, so such a process stalls the lock once, not
// once per waiter. A waiter whose wait ended but whose leaving the queue failed (Redis unreachable for the
// undo and its re-checks, about 5s) counts as alive while its Client keeps other waiters of that
// lock alive, and stalls the lock the same way if it reaches the head. A wait that ends without the lock
// (its context, WithWait, Close) leaves the queue at once, and releases the lock if it was handed
// over meanwhile, which hands it on to the next waiter. A lost message, a pub/sub reconnect (which wakes every waiter) or a failover delays a
// waiter by at most the re-poll interval (default 500ms): every wait also re-polls. A lock that
// ends without a release that hands it over (a fixed lease that runs out, a holder that died) is
// noticed at the waiters' next heartbeat, which tells them to try again, or re-poll, whichever comes
// first. A Lock that a newcomer took with SET NX while it was free carries no queue mark, so its
// release would not look at the queue: the waiters' next heartbeat marks it, and its next final
// release hands it over. The queue's keys are gone when the release that finds
// nobody left in the queue runs (and expire two waiter timeouts, of the longest timeout among its
// waiters, after the last liveness refresh if every waiter's process died: a refresh comes with
// every heartbeat, and with a join when the Client's last one is older than a third of its timeout). Dead waiters are evicted, up to about 1,000 per script call, whenever a
// script looks for the head of the queue; should more die at once, the calls that follow evict the
// rest, and a FairLock stays with the queue meanwhile (never to a newcomer).
//
// All waits of a Client share one pub/sub connection, opened on the first wait, with one
// reference-counted subscription per lock (kept for 2s after its last waiter leaves).
//
// Fairness. A FairLock is served strictly in the order of arrival at Redis, across processes and
// goroutines alike, even when a grant's answer comes too late to be relied on (see Re-sent
// commands); TryLock without a wait never queues. A Lock queues one waiter per process in
// Redis (the goroutines of one Client queue locally, first come first served, and only the head of
// that local queue waits in Redis), so processes are served in turn and the goroutines of each in
// order; when nobody else waits, a release transfers the lock to the next goroutine of its own Client
// in the same round trip. A free Lock is taken with one SET NX by whoever asks, which lets a newcomer
// overtake queued waiters only in the moments the lock is free without having been handed over (it
// expired, or the waiter it was handed to had died): not FIFO, but no starvation.
//
// # Lost replies and re-sent commands
//
// go-redis would re-send a command after a network error (MaxRetries). The library tells it not to
// (Cmder.NoRetry) and decides itself, in one place (send.go): it sends a command again only after a
// reply or error proving that it did not run (NOSCRIPT, TRYAGAIN, CLUSTERDOWN, a MOVED or ASK, no
// connection could be made), or, for the lock, semaphore and latch scripts, after a lost reply (a
// few times, while the context lasts; a semaphore or latch request's re-sent copy that finds no
// record of the first applies nothing). A ForceUnlock is never sent again after a lost reply: its error then leaves
// the outcome unknown, and calling it again is safe. A command that provably never left the process
// has no unknown outcome, and nothing is undone for it. So a script may still run twice, and other
// commands of the same owner may run in between. Every lock script is written to be run twice, and
// none keeps a record of what it did: what a repeat finds answers it.
//
//   - Redis keeps the owner's level ids, not a count: adding a level that is there, or removing one
//     that is gone, changes nothing, so re-entries and partial unlocks never count twice.
//   - The final release frees the lock whatever levels are left, so a level whose outcome stayed
//     unknown (its undo failed too) cannot keep the lock alive.
//   - A repeat of a final release finds the owner gone (owner ids are never reused, so it touches
//     nobody else's hold) and answers "not held"; a repeat of a transfer to a goroutine of the same
//     Client finds that goroutine holding the lock. The release is told that the answer is a
//     repeat's, and reports the release as done if the hold was not known lost and its lease was
//     still in force when the first copy was sent: the work under the lock ended before that, so it
//     was protected whichever copy, or expiry, then removed the lock. (A loss the Client could not
//     see before the first copy, such as another process's ForceUnlock, is then reported as a
//     release; not in Java Redisson's formats, whose releases keep a record: see "Sharing locks
//     with Java services".) Otherwise it reports the loss, as a first run finding the owner gone does.
//   - An acquisition whose outcome is unknown (network error, context ended mid-call) is undone. The
//     undo is a clean-up: it runs on a goroutine the Client owns, with a context of its own (5s at
//     most), and the caller waits for it only while its context lasts (and 25ms more), so that no
//     call overstays its deadline when Redis is slow or down. As the request may still be travelling,
//     the undo is repeated in the background after 250ms, 1s and 4s; a request delayed in the network
//     for longer than that leaves the lock held by nobody until its lease ends. A release (Unlock) is
//     a clean-up the same way.
//   - A re-entry or partial unlock still in flight when the hold is lost may set the lease again when
//     it lands; the client then releases the lock at once (and again later if the operation's own
//     outcome stayed unknown).
//   - Only a WRONGTYPE reply, or an error proving the command never left the process, proves that an
//     acquisition changed nothing: the error reply of a re-send (READONLY, LOADING, ...) may follow a
//     first run that was applied, so every other error is treated as an unknown outcome and undone.
//   - An acquisition, or a hand-over to a waiting goroutine, whose answer comes so late that its
//     lease may already be about to lapse is not reported as held: it is undone, and a waiting call
//     tries again, after a randomized pause that doubles with every such give-back (from 1ms to
//     128ms), so that a lease shorter than a round trip does not make it spin. A waiting owner that
//     gives back what it was granted keeps its place at the head of the queue (the release script
//     queues it again with its ticket before serving the queue, so the lock is handed back to it),
//     unless its previous give-back kept it already: a lease too short for the round trip then
//     queues it again at the back instead of holding the queue for ever.
//
// # Keys
//
// Every key and channel of an object is built from the Client's key prefix and the object's name, as
// Redisson builds them: the object's own key is the name (after the prefix), so redis-cli, other
// programs and Java services find it by that name; its other keys and channels are
// "{<prefix><name>}:~<suffix>", or "<prefix><name>:~<suffix>" when the name has a {hash tag} of its
// own. Below, <aux> stands for "{<prefix><name>}" or "<prefix><name>" accordingly:
//
//	<prefix><name>              the lock: a string "<owner>|<level ids>|<mark>", followed by "|f"
//	                            for a FairLock and "|t<token>" for a FencedLock; absent when free,
//	                            so a free Lock is taken with one plain SET NX PX
//	<aux>:~q, :~qt              a Lock's wait queue: arrival order; liveness deadline per Client
//	                            (sorted sets), gone once a release finds nobody waiting; a
//	                            FairLock's is :~fq, :~fqt, a FencedLock's :~tq, :~tqt
//	<aux>:~w:<client id>        the Client's wake-up channel for the lock (pub/sub)
//	<aux>:~fence                a FencedLock's token counter: never deleted by this package
//	<prefix><name>              a ReadWriteLock: a hash (see internal/scripts/rw_value.lua); a
//	                            Semaphore: its permits; a CountDownLatch: its count (strings)
//	<aux>:~sw, :~sl             a Semaphore's waiters (hash) and leased permits (sorted set)
//	<aux>:~sr:<request id>      the outcome of one Semaphore or CountDownLatch request that the
//	                            state cannot tell, with the waiter timeout as TTL (at least 10s
//	                            for an acquisition that took plain permits, for its undo after a
//	                            lost reply; 20 minutes for an acquisition whose copies may still
//	                            be travelling)
//	<aux>:~lw                   a CountDownLatch's wake-up channel, shared by its Clients
//	<aux>:~lr                   a CountDownLatch's rounds (times it reached zero): never deleted
//	                            by this package
//	<prefix><name>              an AtomicLong (an integer), a BitSet, a HyperLogLog (strings in
//	                            Redis's own formats); a BloomFilter's configuration (hash: bits,
//	                            hashes, insertions, fpr, hash)
//	<aux>:~bf:<m>:<k>           a BloomFilter's bits (a string), named after its number of bits and
//	                            of hash functions; in the Redisson-compatible mode Java Redisson's
//	                            layout instead: the bits at <prefix><name>, the configuration
//	                            (hash: size, hashIterations, expectedInsertions, falseProbability)
//	                            at "{<prefix><name>}:config" (see BloomFilter)
//
// And one key per Client, not per object:
//
//	<prefix>redisson:~client:<client id>  the Client's process record (a JSON string: host name,
//	                            pid, program, when New ran; under 4 KiB, ~100 bytes), written
//	                            after its first acquisition, wait or request, TTL 30s renewed every
//	                            10s, deleted by Close; never written WithoutProcessRecord. On a
//	                            Cluster it is on a slot of its own.
//
// Nothing else is written: once every holder and waiter of an object is gone, only its value, the
// keys above that are never deleted, request records (TTL the waiter timeout, 10s, or 20 minutes), and
// the process records of live Clients remain.
//
// Every name containing ":~" belongs to this package: do not store your own data there (WithKeyPrefix
// puts the package's keys in a namespace of their own), and names may not contain it. Keys and
// channels of distinct objects never collide, whatever the names: object keys never contain ":~" and
// auxiliary names always do, and an auxiliary name decodes back into its object's name. Redis hashes
// "{<name>}" to the slot of the key <name>, and "<name>:~x" to that of <name> when <name> has a hash
// tag, so every script touches one Cluster slot; a name with a hash tag, such as "{user:7}:lock", is
// in the slot of every key with that tag, such as the application's "{user:7}:cart", which is how data
// is co-located with a lock. Refused with ErrInvalidArgument: empty names, names containing ":~",
// names with a brace but no hash tag ("a{b", "a}b", "{}x": Redis would hash them whole, and their
// other keys elsewhere), and a name that is only a hash tag ("{x}": its other keys would be those of
// "x"). The prefix may not contain braces. A name holding another type of value, a string this package
// did not write, or a lock of another kind, gets ErrWrongType and is not modified. The kinds of lock
// share only the lock key: each has its own queue, so a release never hands a waiter a lock of
// another kind. Kinds that share one stored format cannot tell each other apart, and must not share a
// name: an AtomicLong, a Semaphore's permits and a CountDownLatch's count are the same decimal integer
// string (so an AtomicLong under a Semaphore's name reads and changes its permits), and a BitSet
// accepts any string, a lock's included (a BitSet under a lock's name corrupts the lock).
//
// Client.Inspect reads what a name holds, in this package's layouts and Java Redisson's, in one
// consistent snapshot: its kind (from the stored format, so kinds that share a format are told
// apart only by what is stored beside them), holders with their hold counts and remaining leases,
// waiters, the fencing counter, permits and leases, a latch's count. It also says who each holder
// is (see Holder), at no cost to acquisitions: a Go owner id is "<client id>:<sequence>", whose
// sequence number is the Unix time in ms when the acquisition began shifted left by 20 bits (plus
// a counter, so that ids stay unique), in either layout: in the Redisson-compatible one it is a
// decimal below 2^63, so "<UUID>:<long>" keeps the form of Java's "<UUID>:<thread id>"; and each
// Client's process record (see Keys, and WithoutProcessRecord) names its host, pid and program. A
// Java holder's owner id tells its Redisson instance's UUID and its thread id, and nothing else.
// The command cmd/redisson prints it (redisson inspect NAME), and runs shell commands under a lock
// or semaphore permits.
//
// # Sharing locks with Java services
//
// A Client made WithRedissonCompat keeps its Locks in Java Redisson 3.x's RLock layout, so that Go
// and Java services (Redisson's default configuration, lockWatchdogTimeout 30s; single server,
// Sentinel or Cluster) exclude each other on the same names:
//
//	<prefix><name>                          a HASH, one field while held: the owner -> its hold count;
//	                                        the key's TTL is the lease (the same hash Redisson's RLock,
//	                                        RFairLock, RFencedLock and RSpinLock keep at the name)
//	redisson_lock__channel:{<prefix><name>} "0" published by every release that frees the lock and by
//	                                        ForceUnlock (SPUBLISH on a Cluster, as Redisson does on
//	                                        Redis 7 with shardedSubscriptionMode AUTO)
//	redisson_unlock_latch:{<prefix><name>}:<request id>  the answer of one Unlock, kept the waiter
//	                                        timeout (10s at least) and deleted once answered
//
// (":<name>" instead of ":{<name>}" when the name has a {hash tag}, as Redisson writes them.) A Java
// owner is "<client UUID>:<thread id>"; a Go owner has the same form, "<client UUID>:<sequence>" (the
// Client's random version 4 UUID and a decimal number, one per acquisition, as always in this
// package), so Java code and tools that parse owners (the UUID before the last colon, a long after
// it) read Go holders alike. Neither library reads the other's ids, they only compare them, so each
// side keeps its own model: a Java thread re-enters by locking again, a Go owner through
// Hold.Reenter or ContextWithHold. What is shared:
//
//   - mutual exclusion: a Go acquisition takes the lock only if it is free (Redisson's test: the key
//     is absent), and a Java one only if it is free or its own; each acquisition and re-entry sets
//     the lease, each partial unlock resets a watchdog lease, as Redisson does;
//   - the watchdog: each side renews its own holds (Go: every third of WithWatchdogTimeout, checking
//     that its owner still holds the hash; a ReadWriteLock's readers at least every third of the Java
//     side's lockWatchdogTimeout, see below), so a Go holder keeps Java clients out and the reverse; a
//     Go holder whose lock was deleted (a Java forceUnlock) is told, ErrLockLost, at once (loss
//     tracking, see "How fast a loss is told"), or at its next renewal without it;
//   - wake-ups: every release that frees the lock, Go or Java, publishes "0", and every waiting
//     Client of either side tries again; a Go waiter also tries again when the holder's lease would
//     end (the TTL its last attempt saw) or at the re-poll interval, whichever comes first, so a lost
//     message costs at most that;
//   - ForceUnlock, IsLocked, RemainingTTL and HoldCount read and act on Java holds too.
//
// What is not: there is no wait queue of this package in Redis and no hand-over (Java would not
// honour them), so a release wakes every waiting Client, Java or Go, and the first to ask takes the
// lock: not FIFO across processes, and no protection from starvation beyond the luck of the race
// (within one Go Client, goroutines still queue locally and only the head contends; a release never
// transfers the lock to the next goroutine of its own Client, so that Java waiters get their
// chance). No SET NX fast path (the lock is a hash). A SpinLock is Redisson's RSpinLock: the same
// hash, acquired alike (so a Java RLock or RSpinLock of the name and a Go SpinLock exclude each
// other), its waiters polling with this package's backoff (WithSpinBackoff), and its releases and
// ForceUnlock publishing nothing, as RSpinLock's. A FencedLock is Redisson's RFencedLock: the same
// hash, released and woken as a Lock, and Redisson's token counter
//
//	redisson_lock_token:{<prefix><name>}   a plain integer, never expired: every fresh acquisition,
//	                                        Java or Go, increments it; a Go hold's token is the value
//	                                        its acquisition took
//
// so tokens are strictly increasing across both sides. Redisson's acquisition also increments it on
// a re-entry; a Go re-entry keeps its hold's token and leaves the counter alone. A FencedLock is
// refused on a server that evicts keys, as in the native layout.
//
// A FairLock is Redisson's RFairLock: the same hash at the name, and
//
//	redisson_lock_queue:{<prefix><name>}       a LIST of the waiting owners, Java and Go, in order
//	redisson_lock_timeout:{<prefix><name>}     a ZSET: each waiter's deadline (ms since the epoch)
//	redisson_lock__channel:{<prefix><name>}:<owner>  each waiter's own channel: a release publishes "0"
//	                                        to the head's only
//
// Every waiting acquisition, Go or Java, queues there (a Go Client keeps no local queue for it), and
// Redisson's rules serve it: the lock goes to the head when free, an acquisition moves every
// remaining deadline one threadWaitTime earlier, a waiter queued behind another gets the other's
// deadline plus its own threadWaitTime. Deadlines are counted on the clock of the client that writes
// them, Java or Go, so the clocks of the machines must agree (as they must among Java services). A
// Go waiter's threadWaitTime is its WithWait bound, as Redisson's tryLock(waitTime); without one, the
// waiter timeout if the Client was given WithWaiterTimeout (as Java's fairLockWaitTimeout, and not
// lowered to the watchdog timeout), else Redisson's default fairLockWaitTimeout, 5 minutes, not the
// default waiter timeout of 5s (Java waiters purge a waiter past its deadline, and deadlines of a few
// seconds would purge live Go waiters behind a lock held longer than that).
// A Go waiter tries again when woken on its channel, when the holder's lease would end, or at the
// re-poll interval; when the lock is free but another waiter heads the queue, after a pause doubling
// from 1ms to 128ms. A Go wait that ends takes its owner out of the queue, as Redisson's acquireFailed
// (the waiters behind it move up by its slot, read from the deadlines). What is Redisson's and not
// this package's: a waiter whose process died blocks the queue until its deadline (its
// threadWaitTime after the deadline of the one ahead, or the lock's TTL), and a live waiter still queued past its deadline (the lock held that long) is purged and queues
// again at the back. TryLock without WithWait never queues.
//
// A ReadWriteLock is Redisson's RReadWriteLock:
//
//	<prefix><name>                          a HASH: "mode" ("read" or "write"), each reader's owner ->
//	                                        its count, the writer's "<owner>:write" -> its count; TTL
//	                                        the longest holder's lease
//	{<prefix><name>}:<owner>:rwlock_timeout:<n>  one STRING per read acquisition n of an owner, with
//	                                        that acquisition's lease
//	redisson_rwlock:{<prefix><name>}        "0" published by a read release that frees the lock, "1"
//	                                        by a write release (and ForceUnlock)
//
// Readers of both languages share it, a writer of either excludes everyone else; Redisson's TTL
// rules (a read acquisition sets the hash's TTL to at least its lease, a write re-entry to PTTL +
// lease) and watchdogs (a writer's renewal sets the hash's TTL, a reader's renews each of its
// acquisitions' keys, then the hash) apply to both sides; this package never lets a TTL it sets cut
// another holder's lease short, but Redisson does: a Java reader's watchdog sets the hash's TTL to
// its lockWatchdogTimeout whatever the other readers' leases. A Go reader renewed by the watchdog
// is therefore renewed at least every third of that timeout (30s, or WithRedissonWatchdogTimeout's),
// whatever WithWatchdogTimeout says, each renewal setting its own lease again, and counts on no
// more than that timeout after each renewal (its loss is signalled before then, less the loss
// margin, if renewals fail), so its renewals keep the hash when Java readers die. A Go reader with a
// fixed lease (WithLease) longer than that timeout is not protected: if a Java reader renewed by its
// watchdog dies, the lock is free that timeout after the reader's last renewal while the Go
// reader's lease is still in force, and the Go reader is not told (as between Java readers). Go
// readers that share a lock with Java readers should use the watchdog, or a lease no longer than
// that timeout. There is no waiting-writer priority (Redisson has none: readers keep
// entering while the lock is read-held) and no queue: every release wakes every waiting Client. The
// downgrade is Redisson's (a writer may read): a Go reader whose context is marked with the write
// hold (ContextWithHold) is let in beside its writer; its owner id is its own, not the writer's (the
// script checks the vouching writer's "<writer>:write" field, which is all Redisson's test amounts
// to, and ids are never reused, which a repeated acquisition is recognised by); Java reads no
// relation between the two. No upgrade. ForceUnlock deletes the hash whatever its mode, with the
// readers' keys, and publishes "1"; ForceReadUnlock and ForceWriteUnlock do so only in their own
// mode ("read", "write"), and IsReadLocked and IsWriteLocked report it, as Redisson's readLock()
// and writeLock() forceUnlock and isLocked do (a writer's read holds make it read-locked too).
//
// Lost replies (every kind): a count cannot tell a re-sent command from a new one. A fresh acquisition is
// recognised by its owner (never reused); an Unlock carries a request id whose answer its first run
// records in Redisson's unlock latch, which answers the re-sent copies (so a final Unlock's copy
// re-sent while the lease was in force that finds neither the latch nor the owner proves that the
// first copy never ran, and reports the loss, ErrLockLost, where the other formats report a
// release); a re-sent Reenter may count twice. The final Unlock deletes the lock whatever count it
// holds, and a partial Unlock never takes the count below 1, so a count made wrong by a copy that
// landed late (after its record was deleted) shows in HoldCount only, never as a lock freed under
// its owner or kept after its release. An acquisition whose outcome is unknown is undone by
// deleting the owner's field (publishing "0" if the lock is then free). A Java owner's hash and a
// Go owner's can never be confused: the name checks go both ways, and any other value at the name
// (a string, a ReadWriteLock's hash, a hash with several fields or a count that is not a positive
// integer) is refused with ErrWrongType.
//
// The other objects in that mode:
//
//   - Semaphore: the permits were already Redisson's (a decimal string at the name); every change
//     that makes permits available publishes the count on "redisson_sc:{<name>}", as a Java release
//     does, and Go waiters wait on that channel, registering in no queue: not first come, first
//     served (Redisson's RSemaphore is not either).
//   - CountDownLatch: the count at the name; reaching zero publishes "0" and setting it "1" on
//     "redisson_countdownlatch__channel__{<name>}" (braces even around a hash tag, as Redisson writes
//     it: on a Cluster such a name is refused, the channel being in another slot).
//   - BloomFilter: Java's RBloomFilter<String> with StringCodec: the bits at the name, the
//     configuration at "{<name>}:config" (size, hashIterations, expectedInsertions, falseProbability),
//     Redisson's sizing and its HighwayHash-128 indices (see BloomFilter).
//   - AtomicLong, BitSet, HyperLogLog: Redis's own formats at the name, in either mode; RBitSet's bit
//     order is Redis's (SETBIT), and an RHyperLogLog<String> with StringCodec adds the same bytes.
//   - PermitExpirableSemaphore: Java's RPermitExpirableSemaphore: the permits at the name, the
//     leases in the sorted set "{<name>}:timeout" (member the raw 16-byte permit id, score its
//     expiry in ms; a Java permit taken without a lease scores 922337203685477 and never ends),
//     permit ids given and taken as 32 hex digits, the count on "redisson_sc:{<name>}". This
//     package scores its leases with the Redis server's clock (TIME, in the script), Java with its
//     client's: they agree as far as the clocks do (keep Java hosts NTP-synced; a Java clock off by
//     d ends leases d early or late as the other side sees them). Go permits taken without
//     WithLease are still watchdog-renewed leases, so a dead Go holder's permits come back to Java
//     within the watchdog timeout. Waiters of both languages wake on the channel and when the
//     earliest lease ends.
//
// What a Client of this package stores beside those in that mode (request records of a Semaphore or
// CountDownLatch, a latch's rounds) is under "{<name>}:~", which Java never reads.
//
// # Events, metrics and traces
//
// WithEventHook sees every fresh acquisition (EventAcquired), failed acquisition (EventNotObtained),
// release (EventReleased) and loss (EventLost) of a Client's locks and semaphores, with the kind of
// object (Event.Object), the caller's context (for a tracing parent), the wait, the time held, the
// attempts made in Redis and whether a releasing holder handed the lock over; Event.Cause classifies
// failures and losses into a few values fit for metric labels. Each acquisition is one event
// (EventAcquired or EventNotObtained), and each lock hold's end one more (EventReleased or
// EventLost), reported after its acquisition; losses the renewal scheduler signals are reported on a
// goroutine of their own, just after the holder's context ends (see WithEventHook). Re-entries and
// partial unlocks are not events; nor are calls refused before any attempt (bad input, a context
// already ended, a closed Client), nor the release of a leased permit (its loss is). MultiLock and
// RedLock report through their parts. Client.Stats gives the gauges and
// counters that are not events (holds and waiters now, renewals and their failures, pub/sub
// reconnects, replica-acknowledgement failures). The modules contrib/redissonprom (Prometheus) and
// contrib/redissonotel (OpenTelemetry spans and metrics) build on both, and keep their dependencies
// out of this module.
//
// # What is guaranteed, and what is not
//
// Bad input is an error, never a panic: on a nil or zero Client (not made by New), a nil or zero
// handle or Hold, every method that can fail returns an error matching ErrInvalidArgument and
// changes nothing in Redis; the others return zero values (a context: one already done).
//
// While Redis keeps its data, at most one owner holds a lock at a time, and the owner is told
// (ErrLockLost) before its lease can lapse when the watchdog can no longer vouch for it. That is not
// mutual exclusion of your side effects:
//
//   - A process paused longer than the loss margin (GC, SIGSTOP, swapped out) may resume believing it
//     holds a lock that expired and was taken by another; the loss signal arrives after the fact.
//   - Redis replication is asynchronous: after a failover the new master may not have the lock, and a
//     second owner can acquire it. The first owner is told (ErrLockLost) once the tracker's
//     connection reaches the new master (see "How fast a loss is told"), or by its next renewal
//     (tested with a Sentinel set-up whose replication was cut), after the fact. A
//     coordinated failover (CLUSTER FAILOVER, SENTINEL FAILOVER) or a slot migration loses nothing.
//     The replica-acknowledged mode (WithReplicaAcks) closes most of this gap: an acquisition is
//     reported only once the required replicas acknowledged it (WAIT on the same connection), and a
//     hold whose renewals they stop acknowledging is declared lost before its acknowledged lease may
//     lapse. WAIT is not consensus: the promoted replica may be one that did not acknowledge (require
//     enough acknowledgements that any promotion has the write), and an acknowledged write is in the
//     replica's memory, not on its disk.
//   - A Close, or a crashed process, leaves its locks in Redis until their lease runs out.
//
// Protect resources that must never see two writers with a fencing token checked by the resource
// itself: a FencedLock issues a strictly increasing token with every acquisition, and FencedSet
// refuses a write whose token is older than the last one accepted (see FencedLock).
//
// # How fast a loss is told
//
// The renewals find a lost hold at the latest: every third of the lease. Before that, each Client
// tracks its holds with Redis's client tracking (WithLossTracking; internal/track):
// one connection per master of its own (RESP3, CLIENT TRACKING on, Redis 6 or later), on which a
// hold that has lived 20ms is checked (its renewal script in a read-only mode: is the owner still
// there?), which makes the server remember the key; the next change to the key by anyone, its
// expiry or eviction, or a flush sends an invalidation, and the hold is checked again. A check
// also answers the hold's time left: one ending sooner than its renewals allow (its TTL shortened)
// is read again when its time is up, which expires it then (Redis announces an expiry only when
// its expiry cycle finds the key, seconds late among many keys that expire). When the
// connection breaks, or its node stops saying it is a master (ROLE, every 250ms while it tracks
// holds), every hold it tracked is checked again as soon as the key's master answers: a restart
// or failover that lost the key is found then. A hold is declared lost only by a check that finds
// the owner gone on the master, confirmed by the same check sent the way the Client's commands go
// (a node that still says it is a master after a Sentinel failover is not the master the Client
// uses: the tracker then reconnects), with a cause matching ErrLockLost that says what preceded
// it; a change the hold's own release makes is left to the release's answer. What it costs: per Client,
// one connection and one goroutine per master; per hold that lives longer than 20ms, one read
// when it starts and one after each renewal (the renewal changes the key too), and the key's entry
// in the server's tracking table (freed with the next change to the key). A key shared by holders
// of several Clients (a ReadWriteLock's readers, a semaphore's permits) is changed by each one's
// renewal, and each change checks every Client's holds of it again: n such Clients cost n checks
// per renewal, n² per renewal period. Holds shorter than 20ms
// cost nothing but a slice append. Where CLIENT TRACKING is refused (ACLs, a proxy that does not
// pass RESP3 pushes), or on go-redis clients other than *redis.Client and *redis.ClusterClient,
// the renewals alone tell. It is on by default; WithLossTracking(false) turns it off.
//
// The bounds, each tested on every topology where it applies with the default watchdog (30s, whose
// renewals alone would tell up to 10s later), and what was measured on loopback:
//
//	event                                          bound    measured
//	ForceUnlock (any Client, the CLI, Java), DEL   100ms    0.2-14ms
//	FLUSHALL, FLUSHDB, eviction                    100ms    0.7-7ms
//	expiry (also among 100,000 keys that expire)   100ms    0.8-13ms
//	restart without the data, failover             1s       36-290ms
//	the network heals after a silent partition     1s       600ms (the tracker's dial is bounded
//	                                                        by 500ms, then redials every 100ms)
//
// A silent connection (a paused server, a black hole) is given up after its ROLE ping goes
// unanswered for 2s; it is never taken for a loss.
//
// # Topologies
//
// Everything works on a standalone server, a Sentinel-managed master (redis.NewFailoverClient) and a
// Redis Cluster (redis.NewClusterClient). On a Cluster every key and channel of an object is in one
// slot; wake-ups use sharded pub/sub (SPUBLISH, and SSUBSCRIBE over one connection per master, moved
// with the slot after a migration or failover), so a wake-up reaches only the shard of its lock;
// renewals are pipelined per master, the masters in parallel.
//
// # Layers
//
// Each primitive has one file (lock.go, fairlock.go, rwlock.go, semaphore.go, bloomfilter.go, ...)
// and its own Lua scripts (internal/scripts, one decoder per stored format); it says what to run and
// what the reply means. The lock kinds (Lock, FairLock, FencedLock, SpinLock, the sides of a
// ReadWriteLock, and their Redisson-compatible kinds) share one protocol, mutex.go and hold.go, in
// layers:
//
//	handle      Lock, FairLock, ReadWriteLock, ...     lock.go, fairlock.go, rwlock.go, ...
//	  │           the public methods, options, errors
//	protocol    mutex, owner, Hold                     mutex.go, hold.go
//	  │           local queue, SET NX fast path, waiting, spinning, heirs, undo, hand-over
//	kind        lockKind: what a kind does differently  kinds.go (the kind table)
//	  │           and the layout it is stored in
//	layout      keys, scripts, replies of one format   layout.go, layout_string.go, layout_rw.go,
//	  │                                                layout_redisson.go, layout_redisson_fair.go,
//	  │                                                layout_redisson_rw.go
//	command     routing, re-sends, WAIT, NOSCRIPT       send.go
//
// The protocol never asks which layout it runs on: a new stored format is a file implementing
// layout and a row of the kind table. Every command and script goes out through one path, send.go:
// where it goes (the master of its key), whether it is sent again, what an error means, the
// replica-acknowledged WAIT, NOSCRIPT, MOVED/ASK/TRYAGAIN/CLUSTERDOWN, reads, clean-ups and the
// renewals' per-node pipelines. Below it, one renewal scheduler per Client (internal/renew; what
// each kind of entry is renewed with is the table renewKinds in client.go), one waiting engine
// (internal/wait), one pub/sub hub (internal/pubsub), the loss tracker (internal/track), and the
// local turns of a process (internal/gate); the hub's sharded connections and the tracker's speak
// the wire protocol through internal/resp. What the Client knows of its servers (replicas,
// eviction policy) is in servers.go.
//
// # go-redis settings
//
// Set ContextTimeoutEnabled: true, or context deadlines do not bound network waits (New logs a
// warning when it can tell, to slog.Default() unless WithLogger says otherwise); with it, every
// blocking call of this package returns within its context's deadline, whether Redis answers or not. A Cluster given a single seed address needs
// IsClusterMode: true. A *redis.Ring is refused: it remaps keys to other shards when shards come and
// go. Read routing (ReadOnly, RouteByLatency, RouteRandomly) is left to your own commands: the
// library's reads go to the master of their key. A server whose maxmemory-policy evicts keys can
// evict a lock (under volatile-* policies, lock keys first, since they have a TTL): the Client warns
// (see ErrEvicting), and a FencedLock refuses to run on an allkeys-* master.
package redisson
