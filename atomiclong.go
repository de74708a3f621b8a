package redisson

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
)

// AtomicLong is a signed 64-bit integer in Redis, shared by every process that uses its name:
// Redisson's RAtomicLong with the vocabulary of sync/atomic.Int64 (Load, Store, Add, Swap,
// CompareAndSwap), plus SetIfGreater, SetIfLess and GetAndDelete. Get one with Client.AtomicLong;
// it is a name plus a client, does no I/O, and is safe to share between goroutines.
//
// The value is a STRING at the object key in Redis's own integer form (what INCRBY writes, so other
// programs can read and change it with INCR, GET and SET), absent meaning 0. Every method is one
// round trip; CompareAndSwap, SetIfGreater, SetIfLess, Swap, Store and GetAndDelete are one script
// each, atomic in Redis; Add is INCRBY and Load is GET.
//
// Exactly once: go-redis re-sends a command after a network error, which would add twice. Every
// mutation is sent once; one that fails with a network error may or may not have happened (the error
// says which call; nothing is ever applied twice). In the replica-acknowledged mode (WithReplicaAcks)
// mutations wait for the replicas and report a change they did not acknowledge with
// ErrNotReplicated.
//
// A name holding another type, or a string that is not an int64 in Redis's form ("+5", "07", "1.5",
// application data), fails every method with ErrWrongType and is left as it is.
type AtomicLong struct {
	object
}

// AtomicLong returns the AtomicLong called name. It does no I/O; the handle is cheap and safe to
// share. A bad name is reported by the first call on the handle (ErrInvalidArgument).
func (c *Client) AtomicLong(name string) *AtomicLong {
	return &AtomicLong{c.newObject(name)}
}

// Name returns the name the AtomicLong was created with ("" for a nil handle).
func (a *AtomicLong) Name() string {
	if a == nil {
		return ""
	}
	return a.name
}

func (a *AtomicLong) check(ctx context.Context) error {
	if a == nil {
		return invalidf("nil AtomicLong handle")
	}
	return a.object.check(ctx, "AtomicLong")
}

// Load returns the value (0 if it was never set). It blocks for one round trip. It fails with
// ErrWrongType if the name holds anything but an int64, or a Redis error.
func (a *AtomicLong) Load(ctx context.Context) (int64, error) {
	if err := a.check(ctx); err != nil {
		return 0, opErr("load", a.Name(), err)
	}
	var get *redis.StringCmd
	_ = a.c.read(ctx, a.key, func(p redis.Pipeliner) { get = p.Get(ctx, a.key) })
	s, err := get.Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, objectErr("load", a.name, err, nil)
	}
	v, err := parseInt64Value(s)
	if err != nil {
		return 0, opErr("load", a.name, err)
	}
	return v, nil
}

// Add adds delta to the value and returns the new value. It blocks for one round trip (INCRBY).
// It fails with ErrOutOfRange if the sum would overflow int64 and ErrWrongType if the name holds
// anything but an int64 (nothing changed, both), ErrNotReplicated (added on the master only), or a
// Redis error: after a network error the add may or may not have happened, never twice.
func (a *AtomicLong) Add(ctx context.Context, delta int64) (int64, error) {
	if err := a.check(ctx); err != nil {
		return 0, opErr("add", a.Name(), err)
	}
	cmd, ackErr := mutate(ctx, a.c, a.key, nil, func() *redis.IntCmd { return redis.NewIntCmd(ctx, "incrby", a.key, delta) })
	if err := objectErr("add", a.name, cmd.Err(), ackErr); err != nil {
		return cmd.Val(), err
	}
	return cmd.Val(), nil
}

// Increment adds 1 and returns the new value, as Add.
func (a *AtomicLong) Increment(ctx context.Context) (int64, error) { return a.Add(ctx, 1) }

// Decrement subtracts 1 and returns the new value, as Add.
func (a *AtomicLong) Decrement(ctx context.Context) (int64, error) { return a.Add(ctx, -1) }

// Store sets the value to v. It blocks for one round trip. Errors are those of Swap.
func (a *AtomicLong) Store(ctx context.Context, v int64) error {
	_, err := a.swap(ctx, "store", "store", v)
	return err
}

// Swap sets the value to v and returns the old value (0 if it was never set). It blocks for one
// round trip. It fails with ErrWrongType if the name holds anything but an int64 (nothing changed),
// ErrNotReplicated (set on the master only; the old value is returned), or a Redis error: after a
// network error the change may or may not have happened.
func (a *AtomicLong) Swap(ctx context.Context, v int64) (int64, error) {
	return a.swap(ctx, "swap", "store", v)
}

// GetAndDelete deletes the value and returns what it was (0 if it was never set). It blocks for
// one round trip. Errors are those of Swap.
func (a *AtomicLong) GetAndDelete(ctx context.Context) (int64, error) {
	return a.swap(ctx, "get and delete", "getdel", 0)
}

// swap runs an atomic.lua operation that returns the old value.
func (a *AtomicLong) swap(ctx context.Context, op, what string, v int64) (int64, error) {
	if err := a.check(ctx); err != nil {
		return 0, opErr(op, a.Name(), err)
	}
	cmd, ackErr := a.run(ctx, what, v, 0)
	s, err := cmd.Text()
	if err != nil {
		return 0, objectErr(op, a.name, err, nil)
	}
	old, err := parseInt64Value(s)
	if err != nil {
		return 0, opErr(op, a.name, err)
	}
	return old, objectErr(op, a.name, nil, ackErr)
}

// CompareAndSwap sets the value to new if it is old (a value never set is 0), and reports whether
// it did; the comparison and the change are one atomic step in Redis. It blocks for one round trip.
// It fails with ErrWrongType if the name holds anything but an int64 (nothing changed),
// ErrNotReplicated (swapped on the master only; true is returned), or a Redis error: after a network
// error the swap may or may not have happened.
func (a *AtomicLong) CompareAndSwap(ctx context.Context, old, new int64) (bool, error) {
	return a.cond(ctx, "compare and swap", "cas", old, new)
}

// SetIfGreater sets the value to v if v is greater than it (a value never set is 0), and reports
// whether it did: a high-water mark. It blocks for one round trip. Errors are those of
// CompareAndSwap.
func (a *AtomicLong) SetIfGreater(ctx context.Context, v int64) (bool, error) {
	return a.cond(ctx, "set if greater", "max", v, 0)
}

// SetIfLess sets the value to v if v is less than it (a value never set is 0), and reports whether
// it did. It blocks for one round trip. Errors are those of CompareAndSwap.
func (a *AtomicLong) SetIfLess(ctx context.Context, v int64) (bool, error) {
	return a.cond(ctx, "set if less", "min", v, 0)
}

// cond runs an atomic.lua operation that answers 1 (set) or 0.
func (a *AtomicLong) cond(ctx context.Context, op, what string, x, y int64) (bool, error) {
	if err := a.check(ctx); err != nil {
		return false, opErr(op, a.Name(), err)
	}
	cmd, ackErr := a.run(ctx, what, x, y)
	n, err := cmd.Int64()
	if err != nil {
		return false, objectErr(op, a.name, err, nil)
	}
	return n == 1, objectErr(op, a.name, nil, ackErr)
}

// run sends atomic.lua once.
func (a *AtomicLong) run(ctx context.Context, what string, x, y int64) (*redis.Cmd, error) {
	return mutate(ctx, a.c, a.key, scripts.Atomic, func() *redis.Cmd {
		return scriptCmd(ctx, scripts.Atomic, []string{a.key}, what, x, y)
	})
}

// parseInt64Value decodes an AtomicLong's value: Redis's canonical decimal form only (the Go side of
// int64_value.lua), else ErrWrongType.
func parseInt64Value(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != s {
		return 0, because(ErrWrongType, errors.New("not an AtomicLong value"))
	}
	return v, nil
}
