// Package scripts holds the Lua scripts of every operation, one .lua file each, with a contract header
// (KEYS, ARGV, returns) at the top of the file. Each is wrapped once with redis.NewScript, so calls go
// out as EVALSHA and fall back to EVAL when the server answers NOSCRIPT.
//
// A stored format is encoded and decoded in exactly one Lua prelude, prepended to every script that
// touches it: wait_queue.lua (an object's wait queue), then lock_value.lua (the lock string and the
// release records); rw_value.lua (a ReadWriteLock's hash); sem_value.lua (a Semaphore's permits and
// waiters); int64_value.lua (an AtomicLong's value); compat_lock_value.lua (Java Redisson's RLock hash,
// for a Client made WithRedissonCompat), then compat_fair_queue.lua (Redisson's RFairLock queue);
// compat_rw_value.lua (Redisson's RReadWriteLock hash and read acquisitions' keys). A script whose
// common case needs none of it (lock_release.lua) answers that case first and has the prelude
// inserted at its "-- @prelude" line.
//
// Every script must be safe to run twice: go-redis re-sends a command after a network error, so the
// header of each file says how a repeat is recognised. The data objects' scripts (atomic.lua,
// bitset.lua, bloom.lua, bloom_compat.lua) are the exception: they are sent once (marked NoRetry), and say so.
package scripts

import (
	_ "embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed wait_queue.lua
	waitQueueSrc string
	//go:embed lock_value.lua
	lockValueSrc string
	//go:embed lock_acquire.lua
	lockAcquireSrc string
	//go:embed lock_release.lua
	lockReleaseSrc string
	//go:embed lock_force_unlock.lua
	lockForceUnlockSrc string
	//go:embed lock_renew.lua
	lockRenewSrc string
	//go:embed track_check.lua
	trackCheckSrc string
	//go:embed wait_beat.lua
	waitBeatSrc string
	//go:embed fenced_set.lua
	fencedSetSrc string
	//go:embed rw_value.lua
	rwValueSrc string
	//go:embed rw_acquire.lua
	rwAcquireSrc string
	//go:embed rw_release.lua
	rwReleaseSrc string
	//go:embed rw_renew.lua
	rwRenewSrc string
	//go:embed rw_state.lua
	rwStateSrc string
	//go:embed rw_force_unlock.lua
	rwForceUnlockSrc string
	//go:embed inspect.lua
	inspectSrc string
	//go:embed sem_value.lua
	semValueSrc string
	//go:embed sem_acquire.lua
	semAcquireSrc string
	//go:embed sem_release.lua
	semReleaseSrc string
	//go:embed sem_beat.lua
	semBeatSrc string
	//go:embed sem_renew.lua
	semRenewSrc string
	//go:embed latch.lua
	latchSrc string
	//go:embed int64_value.lua
	int64ValueSrc string
	//go:embed atomic.lua
	atomicSrc string
	//go:embed bitset.lua
	bitsetSrc string
	//go:embed bloom.lua
	bloomSrc string
	//go:embed bloom_compat.lua
	bloomCompatSrc string
	//go:embed compat_lock_value.lua
	compatLockValueSrc string
	//go:embed compat_lock_acquire.lua
	compatLockAcquireSrc string
	//go:embed compat_fenced_acquire.lua
	compatFencedAcquireSrc string
	//go:embed compat_lock_release.lua
	compatLockReleaseSrc string
	//go:embed compat_lock_force_unlock.lua
	compatLockForceUnlockSrc string
	//go:embed compat_lock_renew.lua
	compatLockRenewSrc string
	//go:embed compat_fair_queue.lua
	compatFairQueueSrc string
	//go:embed compat_fair_acquire.lua
	compatFairAcquireSrc string
	//go:embed compat_fair_release.lua
	compatFairReleaseSrc string
	//go:embed compat_fair_force_unlock.lua
	compatFairForceUnlockSrc string
	//go:embed compat_rw_value.lua
	compatRWValueSrc string
	//go:embed compat_rw_acquire.lua
	compatRWAcquireSrc string
	//go:embed compat_rw_release.lua
	compatRWReleaseSrc string
	//go:embed compat_rw_force_unlock.lua
	compatRWForceUnlockSrc string
	//go:embed compat_rw_renew.lua
	compatRWRenewSrc string
)

// lockPrelude is what every lock script starts with.
var lockPrelude = waitQueueSrc + lockValueSrc

// LockPrelude returns what every lock script starts with (for measuring its cost: see the bench
// module's BenchmarkScriptCost).
func LockPrelude() string { return lockPrelude }

var (
	// LockAcquire acquires or re-enters a Lock, FairLock or FencedLock. See lock_acquire.lua.
	LockAcquire = newScript(lockPrelude + lockAcquireSrc)
	// LockRelease releases one level or the whole hold, or undoes an acquisition. See lock_release.lua.
	LockRelease = newScript(withPrelude(lockPrelude, lockReleaseSrc))
	// LockForceUnlock deletes a lock regardless of owner. See lock_force_unlock.lua.
	LockForceUnlock = newScript(lockPrelude + lockForceUnlockSrc)
	// LockRenew extends many watchdog locks at once. See lock_renew.lua.
	LockRenew = newScript(lockPrelude + trackCheckSrc + lockRenewSrc)
	// WaitBeat keeps many queued waiters alive at once. See wait_beat.lua.
	WaitBeat = newScript(lockPrelude + waitBeatSrc)
	// FencedSet writes a value only with a token not older than the last accepted. See fenced_set.lua.
	FencedSet = newScript(fencedSetSrc)

	// RWAcquire acquires or re-enters a side of a ReadWriteLock. See rw_acquire.lua.
	RWAcquire = newScript(rwValueSrc + rwAcquireSrc)
	// RWRelease releases a level or the hold of a side of a ReadWriteLock. See rw_release.lua.
	RWRelease = newScript(rwValueSrc + rwReleaseSrc)
	// RWRenew extends many ReadWriteLock holds, or waiting writers, at once. See rw_renew.lua.
	RWRenew = newScript(rwValueSrc + trackCheckSrc + rwRenewSrc)
	// RWState reads a ReadWriteLock's state. See rw_state.lua.
	RWState = newScript(rwValueSrc + rwStateSrc)
	// RWForceUnlock deletes every hold of a ReadWriteLock, or of one side. See rw_force_unlock.lua.
	RWForceUnlock = newScript(rwValueSrc + rwForceUnlockSrc)
	// Inspect reads everything stored under a name in one snapshot. See inspect.lua.
	Inspect = newScript(rwValueSrc + inspectSrc)
	// SemAcquire makes one attempt to take permits of a Semaphore. See sem_acquire.lua.
	SemAcquire = newScript(semValueSrc + semAcquireSrc)
	// SemRelease releases, adds, drains or sets permits, or ends a wait. See sem_release.lua.
	SemRelease = newScript(semValueSrc + semReleaseSrc)
	// SemBeat keeps many Semaphore waiters alive at once. See sem_beat.lua.
	SemBeat = newScript(semValueSrc + semBeatSrc)
	// SemRenew extends many leased permits at once. See sem_renew.lua.
	SemRenew = newScript(semValueSrc + trackCheckSrc + semRenewSrc)
	// Latch sets or counts down a CountDownLatch. See latch.lua.
	Latch = newScript(latchSrc)
	// Atomic runs the AtomicLong operations that read before they write. See atomic.lua.
	Atomic = newScript(int64ValueSrc + atomicSrc)
	// BitSet runs the BitSet operations that are not one Redis command. See bitset.lua.
	BitSet = newScript(bitsetSrc)
	// Bloom initializes, adds to and queries a BloomFilter. See bloom.lua.
	Bloom = newScript(bloomSrc)
	// BloomCompat initializes, adds to and queries a BloomFilter in Java Redisson's layout. See
	// bloom_compat.lua.
	BloomCompat = newScript(bloomCompatSrc)

	// CompatLockAcquire acquires or re-enters a Lock in Java Redisson's RLock format. See
	// compat_lock_acquire.lua.
	CompatLockAcquire = newScript(compatLockValueSrc + compatLockAcquireSrc)
	// CompatFencedAcquire acquires or re-enters a FencedLock in Redisson's RFencedLock layout. See
	// compat_fenced_acquire.lua.
	CompatFencedAcquire = newScript(compatLockValueSrc + compatFencedAcquireSrc)
	// CompatLockRelease releases a level or the hold of a Lock in Redisson's format, or undoes an
	// acquisition. See compat_lock_release.lua.
	CompatLockRelease = newScript(compatLockValueSrc + compatLockReleaseSrc)
	// CompatLockForceUnlock deletes a Lock in Redisson's format. See compat_lock_force_unlock.lua.
	CompatLockForceUnlock = newScript(compatLockValueSrc + compatLockForceUnlockSrc)
	// CompatLockRenew extends many watchdog Locks in Redisson's format at once. See
	// compat_lock_renew.lua.
	CompatLockRenew = newScript(compatLockValueSrc + trackCheckSrc + compatLockRenewSrc)

	// CompatFairAcquire acquires, queues for or re-enters a FairLock in Java Redisson's RFairLock
	// layout. See compat_fair_acquire.lua.
	CompatFairAcquire = newScript(compatFairPrelude + compatFairAcquireSrc)
	// CompatFairRelease releases a level or the hold of a FairLock in Redisson's layout, or undoes an
	// acquisition or a wait. See compat_fair_release.lua.
	CompatFairRelease = newScript(compatFairPrelude + compatFairReleaseSrc)
	// CompatFairForceUnlock deletes a FairLock in Redisson's layout. See compat_fair_force_unlock.lua.
	CompatFairForceUnlock = newScript(compatFairPrelude + compatFairForceUnlockSrc)

	// CompatRWAcquire acquires or re-enters a side of a ReadWriteLock in Java Redisson's
	// RReadWriteLock layout. See compat_rw_acquire.lua.
	CompatRWAcquire = newScript(compatRWValueSrc + compatRWAcquireSrc)
	// CompatRWRelease releases a level or the hold of a side of a ReadWriteLock in Redisson's layout,
	// or undoes an acquisition. See compat_rw_release.lua.
	CompatRWRelease = newScript(compatRWValueSrc + compatRWReleaseSrc)
	// CompatRWForceUnlock deletes a ReadWriteLock in Redisson's layout, whatever its mode or in one
	// mode. See compat_rw_force_unlock.lua.
	CompatRWForceUnlock = newScript(compatRWValueSrc + compatRWForceUnlockSrc)
	// CompatRWRenew extends many ReadWriteLock holds in Redisson's layout at once. See
	// compat_rw_renew.lua.
	CompatRWRenew = newScript(compatRWValueSrc + trackCheckSrc + compatRWRenewSrc)
)

// compatFairPrelude is what every compat_fair_*.lua script starts with: the lock's hash is an RLock's.
var compatFairPrelude = compatLockValueSrc + compatFairQueueSrc

// All lists every script by the name of its file, for loading ahead of pipelines and for tests.
var All = map[string]*redis.Script{
	"lock_acquire":      LockAcquire,
	"lock_release":      LockRelease,
	"lock_force_unlock": LockForceUnlock,
	"lock_renew":        LockRenew,
	"wait_beat":         WaitBeat,
	"fenced_set":        FencedSet,
	"rw_acquire":        RWAcquire,
	"rw_release":        RWRelease,
	"rw_renew":          RWRenew,
	"rw_state":          RWState,
	"rw_force_unlock":   RWForceUnlock,
	"inspect":           Inspect,
	"sem_acquire":       SemAcquire,
	"sem_release":       SemRelease,
	"sem_beat":          SemBeat,
	"sem_renew":         SemRenew,
	"latch":             Latch,
	"atomic":            Atomic,
	"bitset":            BitSet,
	"bloom":             Bloom,
	"bloom_compat":      BloomCompat,

	"compat_lock_acquire":      CompatLockAcquire,
	"compat_fenced_acquire":    CompatFencedAcquire,
	"compat_lock_release":      CompatLockRelease,
	"compat_lock_force_unlock": CompatLockForceUnlock,
	"compat_lock_renew":        CompatLockRenew,
	"compat_fair_acquire":      CompatFairAcquire,
	"compat_fair_release":      CompatFairRelease,
	"compat_fair_force_unlock": CompatFairForceUnlock,
	"compat_rw_acquire":        CompatRWAcquire,
	"compat_rw_release":        CompatRWRelease,
	"compat_rw_force_unlock":   CompatRWForceUnlock,
	"compat_rw_renew":          CompatRWRenew,
}

// sources maps every script to its source, for the EVAL that answers a NOSCRIPT (see Source).
var sources = map[*redis.Script]string{}

// hashes maps every script to its SHA1, boxed once (see HashArg).
var hashes = map[*redis.Script]any{}

// newScript wraps src once and remembers it.
// preludeMark is a line of a script that starts with a fast path: its prelude is inserted there
// (withPrelude), so that the fast path does not pay for defining the prelude's functions.
const preludeMark = "\n-- @prelude\n"

// withPrelude is src preceded by prelude, or with prelude at its preludeMark line if it has one.
func withPrelude(prelude, src string) string {
	if head, rest, ok := strings.Cut(src, preludeMark); ok {
		return head + "\n" + prelude + rest
	}
	return prelude + src
}

func newScript(src string) *redis.Script {
	s := redis.NewScript(src)
	sources[s] = src
	hashes[s] = s.Hash()
	return s
}

// Source returns the source of a script of this package ("" for any other script): a command sent
// as it is (not through Script.Run) falls back to EVAL with it when a node answers NOSCRIPT.
func Source(s *redis.Script) string { return sources[s] }

// HashArg returns the SHA1 of s as an EVALSHA argument, boxed once for a script of this package
// (boxing a string allocates, and every call sends one).
func HashArg(s *redis.Script) any {
	if h, ok := hashes[s]; ok {
		return h
	}
	return s.Hash()
}
