package redisson

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/wait"
)

// CountDownLatch is a distributed latch, Redisson's RCountDownLatch: waiters in any process block
// until the count, set once, has been counted down to zero. Get one with Client.CountDownLatch; it
// is a name plus a client, does no I/O, and is safe to share between goroutines.
//
// The count is an integer in Redis, absent when zero: a latch never set, or counted down to zero,
// lets every Wait through, and may be set again (TrySetCount) to be used once more. Reaching zero
// wakes every waiter of every Client at once, by one message on the latch's channel; waiters also
// re-poll (WithRepollInterval), so a lost message, or a pub/sub connection lost while waiting, delays
// them by at most the re-poll interval (Redisson's await() has no such fallback and can hang).
//
// In the Redisson-compatible mode (WithRedissonCompat) the count is shared with Java Redisson's
// RCountDownLatch under the same name: reaching zero publishes "0" and setting the count "1" on
// Redisson's channel "redisson_countdownlatch__channel__{name}", and Wait waits on it. A Java count
// down to zero does not count the rounds this package keeps, so a Go waiter that first reads the
// count after a Java client set it again keeps waiting for the next zero (as Java's await does). On
// a Cluster, a name with a hash tag is refused in that mode (errors.ErrUnsupported): Redisson's
// latch channel always adds braces, which puts it in another slot than the count.
//
// TrySetCount and CountDown are never applied twice: each request has an id, and its answer is kept
// in Redis for the waiter timeout (WithWaiterTimeout), and at least 10 seconds, or twice the go-redis
// ReadTimeout if longer, as a copy re-sent after the ReadTimeout needs; a copy re-sent after a lost
// reply is answered
// from that record, or, finding none, applies nothing, and the call returns an error matching
// ErrOutcomeUnknown (applied once or not at all). In the replica-acknowledged mode
// (WithReplicaAcks) both wait for the replicas and report a change they did not acknowledge with
// ErrNotReplicated (it happened on the master; a failover now could lose it).
type CountDownLatch struct {
	c       *Client
	name    string
	key     string
	aux     func(string) string
	channel string // the latch's wake-up channel, shared by its Clients
	// zero and set are the messages of reaching zero and of a count set ("": none); Java Redisson's
	// "0" and "1" in the Redisson-compatible mode, whose waiters every message wakes (every).
	zero, set string
	every     bool
	err       error
}

// CountDownLatch returns the latch called name (Redisson's RCountDownLatch). It does no I/O; the
// handle is cheap and safe to share. A bad name is reported by the first call on the handle
// (ErrInvalidArgument). The name is a STRING count: using it as another kind of object fails with
// ErrWrongType.
func (c *Client) CountDownLatch(name string) *CountDownLatch {
	l := &CountDownLatch{c: c, name: name}
	if l.err = c.checkValid(); l.err != nil {
		return l
	}
	l.key, l.aux, l.err = objectKeys(c.cfg.prefix, name)
	switch {
	case l.err != nil:
	case !c.cfg.compat:
		l.channel, l.zero = l.aux(sfxLatchWake), pubsub.WakeAll
	case c.cluster && strings.IndexByte(l.key, '{') >= 0:
		// Java Redisson's latch channel always adds braces: "{{tag}x}" hashes "{tag", not the
		// key's slot, and a script may not SPUBLISH outside its keys' slot.
		l.err = unsupportedf("latch %q: on a Cluster, Java Redisson's channel of a name with a hash tag is in another slot", name)
	default:
		l.channel, l.zero, l.set, l.every = "redisson_countdownlatch__channel__{"+l.key+"}", "0", "1", true
	}
	return l
}

// Name returns the name the latch was created with ("" for a nil handle).
func (l *CountDownLatch) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

func (l *CountDownLatch) check(ctx context.Context) error {
	switch {
	case l == nil:
		return invalidf("nil latch handle")
	case l.c == nil && l.err == nil:
		return invalidf("latch handle not created by a Client")
	case l.err != nil:
		return l.err
	}
	return l.c.checkCall(ctx)
}

// change runs latch.lua (see its header) as a new request.
func (l *CountDownLatch) change(ctx context.Context, op, what string, n int64) (int64, error) {
	if err := l.check(ctx); err != nil {
		return 0, opErr(op, l.Name(), err)
	}
	c := l.c
	cmd, ackErr := c.evalRecorded(ctx, scripts.Latch, []string{l.key, l.aux(sfxRequest + c.newID()), l.aux(sfxLatchRound)},
		what, n, c.publish, l.channel, c.takenArg, resentArg{}, l.zero, l.set)
	v, err := cmd.Int64()
	if err != nil {
		return 0, opErr(op, l.name, redisErr(err))
	}
	if ackErr != nil {
		return v, opErr(op, l.name, ackErr)
	}
	return v, nil
}

// TrySetCount sets the count to n (n ≥ 1) if it is zero (never set, or counted down to zero), and
// reports whether it did. It blocks for one round trip. On failure the error is ErrInvalidArgument
// (n < 1; nothing changed), ErrWrongType, ErrNotReplicated (set on the master only), or a Redis error
// (the outcome is unknown; a re-sent request is applied once).
func (l *CountDownLatch) TrySetCount(ctx context.Context, n int64) (bool, error) {
	if (n < 1 || n > maxPermits) && l.check(ctx) == nil {
		return false, opErr("try set count", l.name, invalidf("count %d: must be in [1, 2^53-1]", n))
	}
	v, err := l.change(ctx, "try set count", "s", n)
	return v == 1, err
}

// CountDown decrements the count, if it is not zero, and returns the count after it; reaching zero
// releases every waiter. It blocks for one round trip. Errors are those of TrySetCount.
func (l *CountDownLatch) CountDown(ctx context.Context) (int64, error) {
	return l.change(ctx, "count down", "d", 0)
}

// Count returns the current count (0 if never set or counted down). It blocks for one round trip; it
// fails with ErrWrongType if the name holds another kind of object.
func (l *CountDownLatch) Count(ctx context.Context) (int64, error) {
	if err := l.check(ctx); err != nil {
		return 0, opErr("count", l.Name(), err)
	}
	n, err := l.count(ctx)
	if err != nil {
		return 0, opErr("count", l.name, err)
	}
	return n, nil
}

func (l *CountDownLatch) count(ctx context.Context) (int64, error) {
	n, _, err := l.state(ctx, false)
	return n, err
}

// state reads the count and, with round, the number of times it reached zero, in one round trip.
func (l *CountDownLatch) state(ctx context.Context, round bool) (n, rounds int64, err error) {
	var count, rnd *redis.StringCmd
	err = l.c.read(ctx, l.key, func(p redis.Pipeliner) {
		// The round first: a count read after it can only be older news than the round, so a zero
		// between the two reads is never mistaken for the start of the wait's own round.
		if round {
			rnd = p.Get(ctx, l.aux(sfxLatchRound))
		}
		count = p.Get(ctx, l.key)
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, redisErr(err)
	}
	if rnd != nil {
		if v, err := rnd.Result(); err == nil {
			rounds, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	v, err := count.Result()
	if errors.Is(err, redis.Nil) {
		return 0, rounds, nil
	}
	// "0" is an open latch, as absent is (Java Redisson's trySetCount(0) may store it).
	if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
		return 0, 0, because(ErrWrongType, errors.New("not a latch count"))
	}
	return n, rounds, nil
}

// Wait blocks until the count is zero, ctx ends, or the Client is closed. It returns nil once the
// count is zero (at once if it is zero already), or has reached zero since Wait began even if the
// latch was set again since; ctx's error, ErrClosed, ErrWrongType, or a Redis error. Waiting changes
// nothing in Redis.
func (l *CountDownLatch) Wait(ctx context.Context) error {
	if err := l.check(ctx); err != nil {
		return opErr("wait", l.Name(), err)
	}
	first := int64(-1) // the round the wait began in
	err := l.c.engine.Wait(ctx, &wait.Waiter{Channel: l.channel, Every: l.every}, func(ctx context.Context, _ wait.Woken) (wait.Outcome, error) {
		n, round, err := l.state(ctx, true)
		if err != nil {
			return wait.Outcome{}, err
		}
		if first < 0 {
			first = round
		}
		// Zero, or zero since the wait began (the latch may have been set again meanwhile).
		return wait.Outcome{Acquired: n == 0 || round != first, Retry: -1}, nil
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wait.ErrClosed):
		return opErr("wait", l.name, ErrClosed)
	case ctx.Err() != nil:
		return opErr("wait", l.name, ctx.Err())
	}
	return opErr("wait", l.name, err)
}
