// Package javadouble is a test double of a Java client using Redisson 3.x (default single-server,
// Sentinel or Cluster config; lockWatchdogTimeout 30 s, fairLockWaitTimeout 5 min): the other side
// of interop tests for the compatibility mode, which shares locks, semaphores and latches with Java
// services on the same Redis. It is written from /work/shared/docs/redisson-reference.md, with its
// own Lua (lua/*.lua), and shares no code with the root package on purpose.
//
// What it reproduces, on the wire:
//
//   - Identity: one random UUID per Client; owner "<uuid>:<threadId>", writer "<uuid>:<threadId>:write".
//     Java threads are explicit int64 thread ids (Redisson's async API with threadId).
//   - Key and channel names: prefixName / suffixName ({name} unless name carries a '{'), the latch
//     channel redisson_countdownlatch__channel__{name}, the unlock latch
//     redisson_unlock_latch:{name}:<requestId> (set by every unlock, deleted after it).
//   - Data layouts and script semantics of Lock (§1), FairLock (§3, client-clock deadlines, per-waiter
//     channels, acquireFailed), ReadWriteLock (§4, per-acquisition rwlock_timeout keys), Semaphore
//     (§9), PermitExpirableSemaphore (§10, raw 16-byte ids in {name}:timeout) and CountDownLatch (§11),
//     including the return conventions (nil = acquired, else PTTL) and the messages published.
//   - Waiting (§0.6, §1.6): one refcounted subscription per channel and Client; an attempt is always
//     made after the subscription is confirmed; sleeps bounded by the returned PTTL (lock) or the
//     earliest permit expiry (PermitExpirableSemaphore); blocking semaphore Acquire and latch Await
//     have no fallback. Message effects: lock 0 wakes one local waiter, 1 all; semaphore N wakes
//     min(subscriptions, N); latch 0 opens, 1 closes; a message nobody waits for stays as a permit.
//   - Pub/sub commands: SSUBSCRIBE/SPUBLISH on a *redis.ClusterClient (shardedSubscriptionMode AUTO
//     on Redis 7), SUBSCRIBE/PUBLISH otherwise.
//   - Watchdog (§2): LockTask and ReadLockTask, each one timer armed at watchdogTimeout/3 by the first
//     registration, re-armed after each complete pass, stopped when nothing is registered; renewal
//     in chunks of 100 (one slot per chunk on a Cluster), one EVAL at a time; a lock whose owner
//     field is gone is silently de-registered; an error aborts the pass. Unlock cancels one
//     registration, ForceUnlock all of the lock's; Close stops the tasks.
//
// What it leaves out: WAIT/WAITAOF after mutations (synced eval) and NoSyncedSlaves handling, command
// retries and response timeouts (acquire scripts are never re-sent, as Redisson's NoRetry), the
// subscription connection pool limits and the 50 striped subscribe semaphores (each subscription has
// its own go-redis PubSub connection), the non-waiting fair tryLock() variant, the non-reentrant,
// spin, fenced and multi locks, trySetPermits with a TTL, releaseIfExists, PES multi-permit calls,
// setPermits/updateLeaseTime/getLeaseTime, NameMapper, codecs other than integers, listeners, and the
// cancelled-future auto-unlock. Ctx cancellation plays the role of a Java interrupt (no acquireFailed).
package javadouble
