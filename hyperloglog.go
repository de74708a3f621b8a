package redisson

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// HyperLogLog estimates how many distinct elements were added to it, in at most 12 KiB whatever
// their number, with a standard error of 0.81%: Redisson's RHyperLogLog, on Redis's PFADD, PFCOUNT
// and PFMERGE. Get one with Client.HyperLogLog; it is a name plus a client, does no I/O, and is safe
// to share between goroutines.
//
// The estimator is a STRING at the object key in Redis's HyperLogLog format. Each method is one
// Redis command, one round trip. Mutations are sent once, as AtomicLong's are: after a network error
// one may or may not have happened, never twice. CountWith and MergeWith take names; on a Cluster
// they must share the HyperLogLog's slot (a common {hash tag} prefix), else ErrInvalidArgument. A
// name holding anything but a HyperLogLog (another type, or a string not in its format) fails with
// ErrWrongType, nothing changed.
type HyperLogLog struct {
	object
}

// HyperLogLog returns the HyperLogLog called name. It does no I/O; the handle is cheap and safe to
// share. A bad name is reported by the first call on the handle (ErrInvalidArgument).
func (c *Client) HyperLogLog(name string) *HyperLogLog {
	return &HyperLogLog{c.newObject(name)}
}

// Name returns the name the HyperLogLog was created with ("" for a nil handle).
func (h *HyperLogLog) Name() string {
	if h == nil {
		return ""
	}
	return h.name
}

func (h *HyperLogLog) check(ctx context.Context) error {
	if h == nil {
		return invalidf("nil HyperLogLog handle")
	}
	return h.object.check(ctx, "HyperLogLog")
}

// Add adds element and reports whether the estimate changed. It blocks for one round trip. It
// fails with ErrWrongType (nothing changed), ErrNotReplicated, or a Redis error (the element may or
// may not have been added).
func (h *HyperLogLog) Add(ctx context.Context, element string) (bool, error) {
	return h.add(ctx, "add", []string{element})
}

// AddMany adds elements, in one command, and reports whether the estimate changed; no elements is
// a no-op (false) that sends nothing. Blocking and errors are those of Add.
func (h *HyperLogLog) AddMany(ctx context.Context, elements []string) (bool, error) {
	return h.add(ctx, "add many", elements)
}

func (h *HyperLogLog) add(ctx context.Context, op string, elements []string) (bool, error) {
	if err := h.check(ctx); err != nil {
		return false, opErr(op, h.Name(), err)
	}
	if len(elements) == 0 {
		return false, nil
	}
	cmd, ackErr := mutate(ctx, h.c, h.key, nil, func() *redis.IntCmd {
		args := make([]any, 0, 2+len(elements))
		args = append(args, "pfadd", h.key)
		for _, e := range elements {
			args = append(args, e)
		}
		return redis.NewIntCmd(ctx, args...)
	})
	return cmd.Val() == 1, objectErr(op, h.name, cmd.Err(), ackErr)
}

// Count returns the estimated number of distinct elements added (0 if none). It blocks for one
// round trip. It fails with ErrWrongType or a Redis error.
func (h *HyperLogLog) Count(ctx context.Context) (int64, error) {
	return h.CountWith(ctx)
}

// CountWith returns the estimated number of distinct elements added to this HyperLogLog or to any
// of those called names, without changing them. It blocks for one round trip. It fails with
// ErrInvalidArgument (a bad name, or on a Cluster a name in another slot), ErrWrongType, or a Redis
// error.
func (h *HyperLogLog) CountWith(ctx context.Context, names ...string) (int64, error) {
	op := "count"
	if len(names) > 0 {
		op = "count with"
	}
	if err := h.check(ctx); err != nil {
		return 0, opErr(op, h.Name(), err)
	}
	keys, err := h.withOthers(names)
	if err != nil {
		return 0, opErr(op, h.name, err)
	}
	var count *redis.IntCmd
	_ = h.c.read(ctx, h.key, func(p redis.Pipeliner) { count = p.PFCount(ctx, keys...) })
	n, err := count.Result()
	return n, objectErr(op, h.name, err, nil)
}

// MergeWith adds to this HyperLogLog every element added to those called names (a union); they are
// left as they are. It blocks for one round trip (PFMERGE). It fails with ErrInvalidArgument (a bad
// name, or on a Cluster a name in another slot) or ErrWrongType (nothing changed, both),
// ErrNotReplicated, or a Redis error (the merge may or may not have happened).
func (h *HyperLogLog) MergeWith(ctx context.Context, names ...string) error {
	if err := h.check(ctx); err != nil {
		return opErr("merge with", h.Name(), err)
	}
	keys, err := h.withOthers(names)
	if err != nil {
		return opErr("merge with", h.name, err)
	}
	cmd, ackErr := mutate(ctx, h.c, h.key, nil, func() *redis.StatusCmd {
		args := []any{"pfmerge"}
		for _, k := range keys {
			args = append(args, k)
		}
		return redis.NewStatusCmd(ctx, args...)
	})
	return objectErr("merge with", h.name, cmd.Err(), ackErr)
}

// Delete removes the HyperLogLog and reports whether it existed. It blocks for one round trip. It
// fails with ErrNotReplicated or a Redis error; any type under the name is deleted.
func (h *HyperLogLog) Delete(ctx context.Context) (bool, error) {
	if h == nil {
		return false, opErr("delete", "", invalidf("nil HyperLogLog handle"))
	}
	return h.del(ctx, "HyperLogLog")
}
