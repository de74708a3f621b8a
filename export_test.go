package redisson

import (
	"context"
	"strconv"
	"strings"
)

// Test-only access to internals, for the external test package (redisson_test).

// LockKeyOf returns the Redis key of lock name for Client c (with c's key prefix).
func LockKeyOf(c *Client, name string) string { return c.Lock(name).key }

// ChannelOf returns the wake-up channel of lock name for Client c.
func ChannelOf(c *Client, name string) string { return c.Lock(name).wakeChannel }

// OwnerOf returns the owner id of a hold, as stored in Redis.
func OwnerOf(h *Hold) string { return h.o.id }

// DecodeLockValue decodes a lock string: its owner and level count, ok false if it is none.
func DecodeLockValue(s string) (owner string, levels int, ok bool) {
	v, ok := decodeLockValue(s)
	return v.owner, v.levels, ok
}

// DecodeLockKind returns the kind marker ("", "f", "t") and token of a lock string.
func DecodeLockKind(s string) (kind string, token int64, ok bool) {
	v, ok := decodeLockValue(s)
	return v.kind, v.token, ok
}

// QueueKeys returns the wait queue keys (arrival order, deadlines) of the lock of kind ("Lock",
// "FairLock", "FencedLock") called name, without a key prefix.
func QueueKeys(kind, name string) (q, qt string) {
	_, aux, _ := objectKeys("", name)
	return aux(kindMarkers[kind] + sfxQueue), aux(kindMarkers[kind] + sfxDeadlines)
}

// FenceKey returns the fencing counter key of FencedLock name, without a key prefix.
func FenceKey(name string) string {
	_, aux, _ := objectKeys("", name)
	return aux(sfxFence)
}

// WakePattern returns the pattern matching the wake-up channels of lock name (no key prefix).
func WakePattern(name string) string {
	_, aux, _ := objectKeys("", name)
	return aux(sfxWake) + "*"
}

var kindMarkers = map[string]string{"Lock": kindPlain.marker, "FairLock": kindFair.marker, "FencedLock": kindFenced.marker}

// SemaphoreWaiters returns how many waiters the semaphore name's waiters hash lists.
func SemaphoreWaiters(ctx context.Context, c *Client, name string) (int, error) {
	s := c.Semaphore(name)
	m, err := c.rdb.HGetAll(ctx, s.waiters).Result()
	delete(m, "seq")
	return len(m), err
}

// RenewHoldKinds returns the names of the renewal kinds that stand for something held (see
// renewKinds): each must lose its hold when renewals are not acknowledged by enough replicas.
func RenewHoldKinds() []string {
	var names []string
	for _, k := range renewKinds {
		if k.hold {
			names = append(names, k.name)
		}
	}
	return names
}

// OnBloomLoad makes c's BloomFilters call fn right after they read a configuration from Redis and
// remembered its parameters, before they use them (nil: no hook). Set it before the calls.
func OnBloomLoad(c *Client, fn func()) { c.bloomLoaded = fn }

// FillBloomCache remembers the parameters of maxNotes made-up BloomFilters in c, so that c's cache
// of parameters is reset on the way (as when a Client uses more than maxNotes filters): every real
// filter's parameters are forgotten.
func FillBloomCache(c *Client) {
	for i := range maxNotes {
		c.noteBloom("\x00made-up:"+strconv.Itoa(i), bloomParams{bits: 64, hashes: 1}, c.bloomEpoch())
	}
}

// IsClosed reports whether Close has begun on c.
func IsClosed(c *Client) bool { return c.closed() }

// AuxOf returns the auxiliary name with suffix ("sw", "lr", …, without the "~") of the object whose
// key is key (prefix and name).
func AuxOf(key, suffix string) string {
	base, _ := tagged(key)
	return base + ":" + sfxReserved + suffix
}

// RedissonBloomHash is the element hash of the Redisson-compatible BloomFilter layout (h1, h2: the
// long[2] of Redisson's Hash.hash128).
func RedissonBloomHash(e string) (uint64, uint64) { return redissonHash(e) }

// RedissonBloomIndices are the k bit indices of e in a Redisson-compatible BloomFilter of m bits.
func RedissonBloomIndices(e string, m uint64, k int) []int64 { return highwayIndices(nil, e, m, k) }

// RedissonBloomSize is the sizing of the Redisson-compatible BloomFilter layout.
func RedissonBloomSize(n int64, p float64) (int64, int, error) { return redissonBloomSize(n, p) }

// JavaDouble writes x as Java's Double.toString does.
func JavaDouble(x float64) string { return javaDouble(x) }

// RedissonBloomEstimate is Count's estimate in the Redisson-compatible layout.
func RedissonBloomEstimate(m int64, k int, x int64) int64 { return redissonEstimate(m, k, x) }

// LocalWaiting reports whether a goroutine of c waits in the local queue of its Lock name.
func LocalWaiting(c *Client, name string) bool { return c.gates.Head(c.Lock(name).gateName) != nil }

// TrackerChecks reports how many hold checks c's loss tracker has made (0 without one).
func TrackerChecks(c *Client) uint64 {
	if c.tracker == nil {
		return 0
	}
	return c.tracker.Checked()
}

// TrackerConns reports the open connections of c's loss tracker (0 without one).
func TrackerConns(c *Client) int {
	if c.tracker == nil {
		return 0
	}
	return c.tracker.Conns()
}

// TrackerTracked reports the holds c's loss tracker tracks (0 without one).
func TrackerTracked(c *Client) int {
	if c.tracker == nil {
		return 0
	}
	return c.tracker.Tracked()
}

// TrackerPending reports the goroutines c's loss tracker keeps waiting to do something later (its
// re-reads of holds ending soon, its retries): 0 without one.
func TrackerPending(c *Client) int {
	if c.tracker == nil {
		return 0
	}
	return c.tracker.Pending()
}

// ProcessRecordKey returns the key of c's process record (see WithoutProcessRecord).
func ProcessRecordKey(c *Client) string { return processRecordKey(c.cfg.prefix, c.id) }

// ProcessRecordUp returns a channel closed once c's process record was first written.
func ProcessRecordUp(c *Client) <-chan struct{} { return c.recordUp }

// IsProcessRecordKey reports whether k is the key of a process record (of any Client and prefix).
func IsProcessRecordKey(k string) bool { return strings.Contains(k, processRecordWord) }

// ClientIDOf returns c's client id, the prefix of its owner ids.
func ClientIDOf(c *Client) string { return c.id }

// KeepProcessRecord undoes a WithoutProcessRecord given before it: newClient (helpers_test.go)
// gives that first, and the tests of the record keep it with this.
func KeepProcessRecord() Option {
	return func(c *config) error {
		c.noRecord = false
		return nil
	}
}

// Piped returns how many commands c sent through its automatic pipeliner (WithAutoPipelining).
func Piped(c *Client) uint64 { return c.piped.Load() }

// CleanupTimeout bounds a clean-up (a release, an undo): its context ends at most this long after it
// starts, and at most CleanupShare sooner (the clean-ups starting within CleanupShare of each other
// share one end; see Client.detached).
const CleanupTimeout, CleanupShare = cleanupTimeout, cleanupShare
