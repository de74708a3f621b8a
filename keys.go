package redisson

import (
	"errors"
	"strings"
)

// Key layout (Redisson's naming). Every key and channel of an object is built here, from the Client's
// key prefix and the object's name. With full = prefix + name:
//
//	object key        full                      the lock string, the counter, the bitmap, ...
//	auxiliary names   {full}:~<suffix>          when full has no hash tag
//	                  full:~<suffix>            when full has one ("{user:7}:lock")
//
// Why this shape:
//   - The object lives at the name the user gave, so other programs (redis-cli, a Java Redisson
//     service) find it by that name, and a user's own hash tag keeps its meaning: "{user:7}:lock" is
//     in the slot of the user's "{user:7}:cart".
//   - One Cluster slot per object: Redis hashes the text between the first '{' and the next '}' when
//     there is something between them, else the whole key. "{full}:~x" therefore hashes full, which is
//     the slot of the key full itself; "full:~x" keeps full's tag. So that this holds, a name with a
//     brace must have a hash tag ("a{b", "a}b", "{}x" are refused: Redis would hash them whole, and
//     their auxiliary names elsewhere), which also makes Redis's rule and Redisson's (a name "has a
//     tag" when it contains '{') agree.
//   - Distinct objects never share a key or channel: names may not contain ":~" (the package's
//     namespace), so an object key never contains it and an auxiliary name always does; an auxiliary
//     name decodes back into (full, suffix) by its first ":~". The only two names whose auxiliary
//     names would meet are x and "{x}" ("{x}:~q" for both): a name that is a bare hash tag is
//     refused (use "{x}:lock").
//   - An application co-locating its own keys with a lock ("{user:7}:cart" next to the lock
//     "{user:7}:lock") must not meet the lock's auxiliary keys: they all contain ":~", a namespace
//     the package documents as its own, and those shared by the Clients of a lock (the wait queues)
//     carry the kind of lock in their suffix.
//   - Two kinds of object with the same name (a Lock and a FairLock) share the object key on purpose,
//     so that using a name as two kinds is detected (ErrWrongType) instead of silently giving two
//     independent locks; everything else of theirs is separate, so that a waiter of one kind is never
//     handed a lock of another. The exception is the kinds that share one stored format, which Redis
//     cannot tell apart: an AtomicLong, a Semaphore's permits and a CountDownLatch's count are all a
//     decimal integer string (Redisson's layouts, readable with INCR and GET), and a BitSet is any
//     string, a lock's included. Those kinds detect every other kind under their name, not each other.

// Suffixes of auxiliary names, which objectKeys puts after ":"+sfxReserved (":~"); per-kind ones start with
// the kind marker.
const (
	sfxReserved   = "~"
	sfxQueue      = "q"  // wait queue, arrival order (per kind)
	sfxDeadlines  = "qt" // wait queue, liveness deadlines (per kind)
	sfxWake       = "w:" // + client id: wake-up channel
	sfxFence      = "fence"
	sfxWaiters    = "sw"  // a Semaphore's waiters
	sfxLeases     = "sl"  // a Semaphore's leased permits (PermitExpirableSemaphore)
	sfxRequest    = "sr:" // + request id: the outcome of a Semaphore or CountDownLatch request (waiter timeout)
	sfxLatchWake  = "lw"  // a CountDownLatch's wake-up channel, shared by its Clients
	sfxLatchRound = "lr"  // a CountDownLatch's rounds: how many times its count reached zero
	sfxBloomBits  = "bf:" // + "<bits>:<hashes>": a BloomFilter's bits (its configuration is at the object key)
)

// objectKeys returns the object key of name (prefix + name) and a function building its auxiliary
// names, or an error matching ErrInvalidArgument if the name cannot be laid out (see above).
func objectKeys(prefix, name string) (key string, aux func(suffix string) string, err error) {
	if name == "" {
		return "", nil, invalidf("empty name")
	}
	key = prefix + name
	base, err := tagged(key)
	if err != nil {
		return "", nil, invalidf("name %q: %v", name, err)
	}
	return key, func(s string) string { return base + ":" + sfxReserved + s }, nil
}

// tagged returns the base of full's auxiliary names: full itself if it has a hash tag, else
// "{full}"; or why full cannot be laid out.
func tagged(full string) (string, error) {
	if strings.Contains(full, ":"+sfxReserved) {
		return "", errors.New(`contains ":~", which is reserved for the package's own keys`)
	}
	open := strings.IndexByte(full, '{')
	if open < 0 {
		if strings.IndexByte(full, '}') >= 0 {
			return "", errors.New("has a '}' but no {hash tag}: Redis would hash it whole and its other keys elsewhere")
		}
		return "{" + full + "}", nil
	}
	end := strings.IndexByte(full[open+1:], '}')
	if end <= 0 {
		return "", errors.New("has a '{' but no {hash tag} with something inside: Redis would hash it whole and its other keys elsewhere")
	}
	if open == 0 && end == len(full)-2 && !strings.ContainsAny(full[1:len(full)-1], "{}") {
		return "", errors.New("is a bare {hash tag}: its other keys would be those of the name inside; add to it, e.g. " + full + ":lock")
	}
	return full, nil
}

// Redisson's names (WithRedissonCompat): the keys and channels Java Redisson builds beside an
// object's key full (prefix + name). Names laid out by objectKeys have a hash tag exactly when they
// contain '{', which is Redisson's test, so both sides compute the same names, all in full's slot.

// redissonPrefixed is Redisson's prefixName: "<word>:{full}", or "<word>:full" when full has a hash
// tag (the lock channel "redisson_lock__channel:{goods:1000}").
func redissonPrefixed(word, full string) string {
	if strings.IndexByte(full, '{') >= 0 {
		return word + ":" + full
	}
	return word + ":{" + full + "}"
}

// redissonSuffixed is Redisson's suffixName: "{full}:<suffix>", or "full:<suffix>" when full has a
// hash tag.
func redissonSuffixed(full, suffix string) string {
	if strings.IndexByte(full, '{') >= 0 {
		return full + ":" + suffix
	}
	return "{" + full + "}:" + suffix
}

// processRecordWord is the start of a process record's key (see processRecordKey): it contains
// ":~", so no object's key is one, and no brace, so no auxiliary name is one either.
const processRecordWord = "redisson:~client:"

// processRecordKey is the key of the process record of the Client whose id is id (see
// WithoutProcessRecord): "<prefix>redisson:~client:<id>". It has no hash tag: each record is on a
// slot of its own, read and written with commands of its own.
func processRecordKey(prefix, id string) string { return prefix + processRecordWord + id }
