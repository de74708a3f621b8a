package redisson

// Key layout. Every key and channel of an object is built here, from the Client's key prefix and the
// object's name:
//
//	object key        <prefix>{<name>}            the lock string, absent when free
//	auxiliary names   <prefix>{<name>}:~<suffix>  suffixes without '}' (see doc.go, Keys, for each)
//
// Why this shape:
//   - Distinct objects never share a key or channel, whatever their names: an object key ends with
//     '}', an auxiliary name does not, and both are decodable back into (prefix, name, suffix)
//     because the prefix has no '{' and suffixes have no '}'.
//   - One Cluster slot per object: Redis hashes the text between the first '{' and the next '}', and
//     every name of an object starts with the same "<prefix>{<name>}". A name that has its own
//     {hash tag} at its start ("{user:7}:cart") therefore still shares a slot with every other name
//     starting with the same tag. Names starting with '}' are refused: the empty tag "{}" would make
//     Redis hash whole keys and split the object across slots.
//   - An application co-locating its own keys with a lock ("{user:7}:cart" next to the lock
//     "user:7") must not meet the lock's auxiliary keys: they all start with "<prefix>{<name>}:~",
//     a namespace the package documents as its own, and those shared by the Clients of a lock (the
//     wait queues) carry the kind of lock in their suffix.
//   - Two kinds of object with the same name (a Lock and a FairLock) share the object key on purpose,
//     so that using a name as two kinds is detected (ErrWrongType) instead of silently giving two
//     independent locks; everything else of theirs is separate, so that a waiter of one kind is never
//     handed a lock of another. The exception is the kinds that share one stored format, which Redis
//     cannot tell apart: an AtomicLong, a Semaphore's permits and a CountDownLatch's count are all a
//     decimal integer string (Redisson's layouts, readable with INCR and GET), and a BitSet is any
//     string, a lock's included. Those kinds detect every other kind under their name, not each other.

// Suffixes of auxiliary names, which objectKeys puts after ":"+sfxReserved; per-kind ones start with
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

// objectKeys returns the object key of name and a function building its auxiliary names
// ("<key>:~<suffix>"), or an error matching ErrInvalidArgument if the name cannot be laid out in one
// slot.
func objectKeys(prefix, name string) (key string, aux func(suffix string) string, err error) {
	switch {
	case name == "":
		return "", nil, invalidf("empty name")
	case name[0] == '}':
		return "", nil, invalidf("name %q starts with '}'", name)
	}
	key = prefix + "{" + name + "}"
	return key, func(s string) string { return key + ":" + sfxReserved + s }, nil
}
