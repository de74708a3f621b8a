package redisson

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goredisson/redisson/internal/scripts"
)

// Kind is what a name holds, as Inspect tells it from the stored format. Kinds that share one
// stored format cannot be told apart (see "Keys" in the package documentation): a decimal integer
// is KindInteger unless something beside it says more (a Semaphore's waiters or leases, a
// CountDownLatch's rounds), and Java Redisson's RLock hash is the same for its Lock and FairLock
// unless waiters are queued in Redisson's fair queue.
type Kind string

// The kinds Inspect reports.
const (
	KindNone          Kind = "none"            // nothing is stored under the name
	KindLock          Kind = "lock"            // a Lock (lock string)
	KindFairLock      Kind = "fair lock"       // a FairLock (lock string "|f")
	KindFencedLock    Kind = "fenced lock"     // a FencedLock (lock string "|t<token>", or only its counter)
	KindSpinLock      Kind = "spin lock"       // a SpinLock (lock string "|s")
	KindReadWriteLock Kind = "read-write lock" // a ReadWriteLock (this package's hash)
	// KindRedissonLock is Java Redisson's RLock hash (a Lock or FairLock of a Client made
	// WithRedissonCompat, or a Java RLock, RFairLock or RFencedLock) with nobody in Redisson's fair queue.
	KindRedissonLock Kind = "redisson lock"
	// KindRedissonFairLock is Java Redisson's RLock hash, or nothing, with waiters in Redisson's fair
	// queue (a FairLock of a Client made WithRedissonCompat, or Java's RFairLock).
	KindRedissonFairLock      Kind = "redisson fair lock"
	KindRedissonReadWriteLock Kind = "redisson read-write lock" // Java Redisson's RReadWriteLock hash
	KindSemaphore             Kind = "semaphore"                // permits with waiters registered
	KindPermitSemaphore       Kind = "permit semaphore"         // permits with leased permits (PermitExpirableSemaphore)
	KindCountDownLatch        Kind = "count-down latch"         // a count beside the latch's rounds
	// KindInteger is a decimal integer with nothing beside it that tells its kind: a Semaphore's
	// permits, a CountDownLatch's count or an AtomicLong's value.
	KindInteger     Kind = "integer"
	KindHyperLogLog Kind = "hyperloglog"  // a HyperLogLog (Redis's "HYLL" string)
	KindBloomFilter Kind = "bloom filter" // a BloomFilter (its configuration, either layout)
	// KindString is any other string: a BitSet's bits, or data this package did not write.
	KindString Kind = "string"
	// KindOther is any other Redis type (a list, set, sorted set, stream, or a hash this package
	// did not write); Inspection.RedisType says which.
	KindOther Kind = "other"
)

// Inspection is what Inspect read under a name, in one consistent snapshot. Durations are counted
// on the Redis server's clock at the snapshot, except those of Java Redisson's fair queue, whose
// deadlines are written with the Java client's clock.
type Inspection struct {
	Name      string // the name inspected
	Key       string // its object key in Redis (the Client's key prefix + the name)
	Kind      Kind
	RedisType string        // Redis's TYPE of the object key: "none", "string", "hash", ...
	TTL       time.Duration // the object key's remaining TTL: 0 absent, -1 no expiry
	// Holders: a lock's holder, a ReadWriteLock's writer and readers; nil when free.
	Holders []Holder
	// Waiters: the owners queued in the lock's wait queue (Lock, FairLock, FencedLock), registered in
	// a ReadWriteLock's hash or a Semaphore's waiters, or queued in Java Redisson's fair queue, in
	// the order they will be served where the format has one. A queued waiter whose process died is
	// listed until a script evicts it (its Client's liveness deadline passed). A SpinLock's waiters,
	// and the waiters of the Redisson-compatible Lock, ReadWriteLock and Semaphore, register
	// nowhere and are not listed.
	Waiters []Waiter
	// FencingToken: a FencedLock's counter, the last token issued (0 if none was): this package's, or
	// in Java Redisson's layout its RFencedLock's (redisson_lock_token:{name}), whichever is greater.
	FencingToken int64
	// Value: the integer at the key (KindInteger, the Semaphore kinds, KindCountDownLatch; 0 when
	// absent). For the Semaphore kinds it is the permits available: the stored ones plus the leased
	// permits whose lease has passed (counted back, as AvailablePermits does).
	Value int64
	// Leases: a PermitExpirableSemaphore's leased permits whose lease has not passed.
	Leases []Lease
	// Rounds: how many times a CountDownLatch's count reached zero.
	Rounds int64
}

// Holder is one holder of a lock, and what Inspect could tell of who it is: from its owner id
// (Client, Origin, Since, Age, ThreadID) and from its Client's process record (Process; see
// WithoutProcessRecord).
type Holder struct {
	Owner  string // the owner id: "<client id>:<sequence>"; in Redisson's layouts "<uuid>:<thread id>" (Java's, and Go's of that form)
	Levels int    // the hold count (re-entry levels)
	Side   string // a ReadWriteLock's "read" or "write"; "" for a mutex
	// Remaining is how long the hold lasts unless renewed: its own lease where the format keeps one
	// per holder (this package's ReadWriteLock), else the key's TTL (-1: no expiry).
	Remaining time.Duration
	Token     int64 // a FencedLock holder's fencing token

	// Client is the owner id's client part, before its last colon: the id of the holder's Client
	// (this package's, random at New), or of a Java holder's Redisson instance (its UUID, random at
	// its start); "" when Origin is OriginUnknown.
	Client string
	// Origin tells which library the owner id is of: OriginGo, OriginJava, or OriginUnknown. A
	// "<UUID>:<decimal>" owner is Go's when its number is a time this package writes (see Since),
	// else Java's (a Go Client of a version before this field was added wrote small numbers: it
	// reads as Java).
	Origin Origin
	// Since is when the hold's acquisition began, by the holder's clock, to the millisecond, as its
	// owner id tells (a Go holder's id is made as its acquisition begins: the first attempt, or the
	// retry that queued it anew): the lock was taken then, or later if the acquisition waited. Zero
	// for a Java holder, whose owner id carries no time.
	Since time.Time
	// Age is how long before the snapshot Since was, on the Redis server's clock (so off by the
	// clocks' difference): the lock has been held at most that long. 0 when Since is zero.
	Age time.Duration
	// ThreadID is a Java holder's thread id (Thread.getId() of the thread that holds, in the Redisson
	// instance Client names); 0 for the others.
	ThreadID int64
	// Process is the holding process, from its Client's process record: host name, pid, program,
	// start. nil for a Java holder, and for a Go holder whose Client keeps no record
	// (WithoutProcessRecord), has not written it yet (it is written just after the Client's first
	// acquisition, wait or request), closed or died (gone within 30s), or whose record could not
	// be read.
	Process *Process
}

// Waiter is one waiter of a lock or semaphore.
type Waiter struct {
	Owner   string // the waiting owner (or a Semaphore's waiting request)
	Side    string // a ReadWriteLock's "read" or "write"; "" otherwise
	Permits int64  // a Semaphore's waiter: how many permits it wants
	// Age is how long ago it queued, where the format records its arrival (the wait queue of a Lock,
	// FairLock or FencedLock); 0 otherwise.
	Age time.Duration
	// Expires is how long its registration lasts unless its Client's heartbeats move it (a
	// ReadWriteLock's or Semaphore's waiter, a Java Redisson fair queue's deadline); 0 unknown.
	Expires time.Duration
}

// Lease is one leased permit of a PermitExpirableSemaphore.
type Lease struct {
	ID        string        // the permit id, as Acquire returns it
	Remaining time.Duration // until the lease passes; -1: never (a Java permit taken without a lease)
}

// Inspect reads what the name holds: its kind, holders with their hold counts and remaining
// leases, waiters, fencing counter, permits and leases, latch count; see Inspection. It reads both
// this package's layouts and Java Redisson's whatever the Client's mode, in one script run on the
// master of the name (one round trip, one consistent snapshot). It names each holder's process
// where it can (see Holder): when Go holders are found, it reads their Clients' process records
// (see WithoutProcessRecord) with one more round trip (one per record, in parallel, when the
// go-redis client may read from replicas), at most 32 records. It blocks for those round trips and
// changes nothing, except that holds and waiters of a ReadWriteLock whose time has passed are
// deleted, as every ReadWriteLock script does. It fails with ErrInvalidArgument for a bad name,
// ErrClosed after Close, or the Redis error of the snapshot; a value it cannot decode is reported as
// KindString, KindOther or KindInteger, not as an error, and a record it cannot read leaves that
// Holder.Process nil.
func (c *Client) Inspect(ctx context.Context, name string) (Inspection, error) {
	if err := c.checkCall(ctx); err != nil {
		return Inspection{}, opErr("inspect", name, err)
	}
	key, aux, err := objectKeys(c.cfg.prefix, name)
	if err != nil {
		return Inspection{}, opErr("inspect", name, err)
	}
	keys := []string{key, aux(kindPlain.marker + sfxQueue), aux(kindFair.marker + sfxQueue), aux(kindFenced.marker + sfxQueue),
		aux(sfxFence), aux(sfxWaiters), aux(sfxLeases), aux(sfxLatchRound),
		redissonPrefixed(redissonFairQueue, key), redissonPrefixed(redissonFairTimeouts, key),
		redissonSuffixed(key, "timeout"), redissonSuffixed(key, "config"), redissonPrefixed(redissonLockToken, key)}
	r, err := c.run(ctx, scripts.Inspect, keys, "").Slice()
	if err == nil && len(r) != 18 {
		err = errors.New("redisson: unexpected reply to inspect")
	}
	if err != nil {
		return Inspection{}, opErr("inspect", name, redisErr(err))
	}
	in, err := decodeInspection(name, key, r)
	if err != nil {
		return Inspection{}, err
	}
	nowUs, _ := strconv.ParseInt(replyStr(r[0]), 10, 64)
	c.describeHolders(ctx, &in, nowUs/1000)
	return in, nil
}

// decodeInspection builds an Inspection from inspect.lua's reply (see its header), with the Go
// decoders of each format.
func decodeInspection(name, key string, r []any) (Inspection, error) {
	in := Inspection{Name: name, Key: key}
	nowUs, _ := strconv.ParseInt(replyStr(r[0]), 10, 64)
	nowMs := nowUs / 1000
	in.RedisType = replyStr(r[1])
	if ttl := replyNum(r[2]); ttl >= 0 {
		in.TTL = msDur(ttl)
	} else if ttl == -1 {
		in.TTL = -1
	}
	value, isStr := r[3].(string)
	flat := replyPairs(r[4])
	rw, _ := r[5].([]any)
	queues := [3][]any{replyList(r[6]), replyList(r[7]), replyList(r[8])}
	fence, hasFence := r[9].(string)
	semWaiters := replyPairs(r[10])
	leases := replyList(r[11])
	rounds, hasRounds := r[12].(string)
	javaQueue := replyList(r[13])
	javaDeadlines := replyList(r[14])
	javaLeases := replyList(r[15])
	javaBloom := replyNum(r[16]) == 1

	if hasFence {
		in.FencingToken, _ = strconv.ParseInt(fence, 10, 64)
	}
	if javaFence, ok := r[17].(string); ok { // Redisson's RFencedLock counter (the compat layout)
		if n, err := strconv.ParseInt(javaFence, 10, 64); err == nil && n > in.FencingToken {
			in.FencingToken = n
		}
	}
	if hasRounds {
		in.Rounds, _ = strconv.ParseInt(rounds, 10, 64)
	}
	semWait := semaphoreWaiters(nowMs, semWaiters)
	lapsed := int64(0)
	in.Leases, lapsed = leasesOf(nowMs, leases, false)
	jl, jLapsed := leasesOf(nowMs, javaLeases, true)
	in.Leases, lapsed = append(in.Leases, jl...), lapsed+jLapsed
	javaWait := javaFairWaiters(nowMs, javaQueue, javaDeadlines)

	// The integer family, and what beside it tells its kind.
	integer := func(v int64) {
		in.Value = v
		switch {
		case len(in.Leases) > 0 || lapsed > 0:
			in.Kind, in.Value = KindPermitSemaphore, v+lapsed
		case len(semWait) > 0:
			in.Kind = KindSemaphore
		case hasRounds:
			in.Kind = KindCountDownLatch
		default:
			in.Kind = KindInteger
		}
		in.Waiters = semWait
	}

	switch in.RedisType {
	case "none":
		switch {
		case len(queues[0]) > 0:
			in.Kind = KindLock
			in.Waiters = pick(in.Kind, queues, nowUs)
		case len(queues[1]) > 0:
			in.Kind = KindFairLock
			in.Waiters = pick(in.Kind, queues, nowUs)
		case len(queues[2]) > 0 || hasFence:
			in.Kind = KindFencedLock
			in.Waiters = pick(in.Kind, queues, nowUs)
		case len(javaWait) > 0:
			in.Kind, in.Waiters = KindRedissonFairLock, javaWait
		case len(semWait) > 0 || len(in.Leases) > 0 || lapsed > 0 || hasRounds:
			integer(0)
		case javaBloom:
			in.Kind, in.Waiters = KindBloomFilter, nil
		default:
			in.Kind, in.Waiters = KindNone, nil
		}
	case "string":
		if !isStr {
			break
		}
		if v, ok := decodeLockValue(value); ok {
			in.Kind = map[string]Kind{kindPlain.marker: KindLock, kindFair.marker: KindFairLock, kindFenced.marker: KindFencedLock, kindSpin.marker: KindSpinLock}[v.kind]
			in.Holders = []Holder{{Owner: v.owner, Levels: v.levels, Remaining: in.TTL, Token: v.token}}
			in.Waiters = pick(in.Kind, queues, nowUs)
			break
		}
		if decimal.MatchString(value) {
			if v, err := strconv.ParseInt(value, 10, 64); err == nil {
				integer(v)
				break
			}
		}
		in.Waiters = nil
		switch {
		case strings.HasPrefix(value, "HYLL"):
			in.Kind = KindHyperLogLog
		case javaBloom:
			in.Kind = KindBloomFilter
		default:
			in.Kind = KindString
		}
	case "hash":
		in.Waiters = nil
		if len(rw) == 4 {
			in.Kind = KindReadWriteLock
			if w := replyList(rw[0]); len(w) == 3 {
				in.Holders = append(in.Holders, Holder{Owner: replyStr(w[0]), Levels: int(replyNum(w[1])), Side: "write", Remaining: msDur(replyNum(w[2]))})
			}
			rd := replyList(rw[1])
			var readers []Holder
			for i := 0; i+2 < len(rd); i += 3 {
				readers = append(readers, Holder{Owner: replyStr(rd[i]), Levels: int(replyNum(rd[i+1])), Side: "read", Remaining: msDur(replyNum(rd[i+2]))})
			}
			sort.Slice(readers, func(i, j int) bool { return readers[i].Owner < readers[j].Owner })
			in.Holders = append(in.Holders, readers...)
			in.Waiters = rwWaiters(replyList(rw[2]), replyList(rw[3]))
			break
		}
		fields := map[string]string{}
		for i := 0; i+1 < len(flat); i += 2 {
			fields[flat[i]] = flat[i+1]
		}
		if v, ok := decodeRedissonLock(fields); ok && v.owner != "" {
			in.Kind = KindRedissonLock
			if len(javaWait) > 0 {
				in.Kind, in.Waiters = KindRedissonFairLock, javaWait
			}
			in.Holders = []Holder{{Owner: v.owner, Levels: v.count, Remaining: in.TTL}}
			break
		}
		if v, ok := decodeRedissonRW(fields); ok && v.mode != "" {
			in.Kind = KindRedissonReadWriteLock
			if v.writer != "" {
				in.Holders = append(in.Holders, Holder{Owner: v.writer, Levels: v.writes, Side: "write", Remaining: in.TTL})
			}
			var readers []Holder
			for o, n := range v.readers {
				readers = append(readers, Holder{Owner: o, Levels: n, Side: "read", Remaining: in.TTL})
			}
			sort.Slice(readers, func(i, j int) bool { return readers[i].Owner < readers[j].Owner })
			in.Holders = append(in.Holders, readers...)
			break
		}
		if _, bits := fields["bits"]; bits {
			if _, hashes := fields["hashes"]; hashes {
				in.Kind = KindBloomFilter
				break
			}
		}
		in.Kind = KindOther
	default:
		in.Kind, in.Waiters = KindOther, nil
	}
	if in.Kind == "" {
		return Inspection{}, opErr("inspect", name, fmt.Errorf("redisson: unexpected reply to inspect (type %q)", in.RedisType))
	}
	return in, nil
}

// decimal is the shape of the integers this package stores (sem_value.lua, latch.lua, int64_value.lua).
var decimal = regexp.MustCompile(`^-?[0-9]+$`)

// pick returns the waiters of the queue of kind k (Lock, FairLock, FencedLock), nil for the others.
func pick(k Kind, queues [3][]any, nowUs int64) []Waiter {
	switch k {
	case KindLock:
		return queueWaiters(nowUs, [3][]any{queues[0]})
	case KindFairLock:
		return queueWaiters(nowUs, [3][]any{queues[1]})
	case KindFencedLock:
		return queueWaiters(nowUs, [3][]any{queues[2]})
	}
	return nil
}

// queueWaiters decodes wait queues (wait_queue.lua: member "<waiter id>/<timeout ms>", score its
// arrival in server µs; the end marker "~end" is no waiter), in the order they are served.
func queueWaiters(nowUs int64, queues [3][]any) []Waiter {
	var out []Waiter
	for _, q := range queues {
		for i := 0; i+1 < len(q); i += 2 {
			member := replyStr(q[i])
			if member == "~end" {
				continue
			}
			id := member
			if i := strings.LastIndexByte(member, '/'); i >= 0 {
				id = member[:i]
			}
			arrival, _ := strconv.ParseFloat(replyStr(q[i+1]), 64)
			out = append(out, Waiter{Owner: id, Age: time.Duration(nowUs-int64(arrival)) * time.Microsecond})
		}
	}
	return out
}

// semaphoreWaiters decodes a Semaphore's waiters hash (sem_value.lua: field the waiter id, value
// "<ticket>|<n>|<deadline ms>", and "seq"), in ticket order, skipping those whose deadline passed.
func semaphoreWaiters(nowMs int64, flat []string) []Waiter {
	type w struct {
		Waiter
		ticket int64
	}
	var ws []w
	for i := 0; i+1 < len(flat); i += 2 {
		if flat[i] == "seq" {
			continue
		}
		parts := strings.Split(flat[i+1], "|")
		if len(parts) != 3 {
			continue
		}
		ticket, _ := strconv.ParseInt(parts[0], 10, 64)
		n, _ := strconv.ParseInt(parts[1], 10, 64)
		deadline, _ := strconv.ParseInt(parts[2], 10, 64)
		if deadline <= nowMs {
			continue
		}
		ws = append(ws, w{Waiter{Owner: flat[i], Permits: n, Expires: msDur(deadline - nowMs)}, ticket})
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].ticket < ws[j].ticket })
	out := make([]Waiter, len(ws))
	for i := range ws {
		out[i] = ws[i].Waiter
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// redissonNever is the score of a Java permit taken without a lease (sem_value.lua's sem_never).
const redissonNever = 922337203685477

// leasesOf decodes a sorted set of leased permits (sem_value.lua: member the permit id, raw 16
// bytes shown as hex in Java Redisson's layout; score its expiry in ms), and counts those whose
// lease has passed.
func leasesOf(nowMs int64, z []any, java bool) (out []Lease, lapsed int64) {
	for i := 0; i+1 < len(z); i += 2 {
		id := replyStr(z[i])
		if java {
			id = hex.EncodeToString([]byte(id))
		}
		expiry, _ := strconv.ParseFloat(replyStr(z[i+1]), 64)
		switch {
		case int64(expiry) >= redissonNever:
			out = append(out, Lease{ID: id, Remaining: -1})
		case int64(expiry) <= nowMs:
			lapsed++
		default:
			out = append(out, Lease{ID: id, Remaining: msDur(int64(expiry) - nowMs)})
		}
	}
	return out, lapsed
}

// javaFairWaiters decodes Java Redisson's fair queue (a LIST of owners) and their deadlines (a ZSET,
// client-clock ms).
func javaFairWaiters(nowMs int64, queue, deadlines []any) []Waiter {
	d := map[string]int64{}
	for i := 0; i+1 < len(deadlines); i += 2 {
		v, _ := strconv.ParseFloat(replyStr(deadlines[i+1]), 64)
		d[replyStr(deadlines[i])] = int64(v)
	}
	var out []Waiter
	for _, o := range queue {
		w := Waiter{Owner: replyStr(o)}
		if v, ok := d[w.Owner]; ok && v > nowMs {
			w.Expires = msDur(v - nowMs)
		}
		out = append(out, w)
	}
	return out
}

// rwWaiters decodes inspect.lua's waiting writers and readers ({owner, ticket, ms left, ...}), in
// ticket order.
func rwWaiters(writers, readers []any) []Waiter {
	type w struct {
		Waiter
		ticket int64
	}
	var ws []w
	for side, l := range map[string][]any{"write": writers, "read": readers} {
		for i := 0; i+2 < len(l); i += 3 {
			t, _ := strconv.ParseInt(replyStr(l[i+1]), 10, 64)
			ws = append(ws, w{Waiter{Owner: replyStr(l[i]), Side: side, Expires: msDur(replyNum(l[i+2]))}, t})
		}
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].ticket < ws[j].ticket })
	var out []Waiter
	for _, x := range ws {
		out = append(out, x.Waiter)
	}
	return out
}

func msDur(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// str, num, list and pairs read the parts of a script's reply; a missing part reads as empty.
func replyStr(v any) string {
	s, _ := v.(string)
	return s
}

func replyNum(v any) int64 {
	n, _ := v.(int64)
	return n
}

func replyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func replyPairs(v any) []string {
	l := replyList(v)
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = replyStr(x)
	}
	return out
}
