package redisson

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/slot"
)

// What the data objects (AtomicLong, BitSet, BloomFilter, HyperLogLog) share: a handle made of a
// Client and a name, the checks every call starts with, and how their commands are sent.
//
// Sent once. A mutation of a data object is a plain Redis command or a short script whose second run
// would apply it twice (an INCRBY), answer wrongly (a compare-and-swap that succeeded reports
// failure when repeated, so its caller's loop applies the update again), or undo another Client's
// change made in between (a Store sent again after someone's Add). So it goes out through mutate
// (send.go), which never re-sends it after a network error: a mutation that fails so may or may not
// have happened, the caller is told, and nothing is applied twice. Errors that prove the command did
// not run (the connection was never made, TRYAGAIN, CLUSTERDOWN, MOVED or ASK left over, NOSCRIPT)
// are re-sent. Reads go through Client.read (go-redis may re-send them: a read twice is harmless).

// object is the part of a data object's handle built from the Client and the name.
type object struct {
	c    *Client
	name string
	key  string
	aux  func(string) string
	err  error // a bad Client or name, reported by every call
}

// newObject lays out name for an object of c (see objectKeys).
func (c *Client) newObject(name string) object {
	o := object{c: c, name: name}
	if o.err = c.checkValid(); o.err != nil {
		return o
	}
	o.key, o.aux, o.err = objectKeys(c.cfg.prefix, name)
	return o
}

// check returns why a call on the handle cannot be made (nil handle, bad name, nil context, closed
// Client), or nil; an ended context is left to the command. what names the kind of handle.
func (o *object) check(ctx context.Context, what string) error {
	switch {
	case o == nil:
		return invalidf("nil %s handle", what)
	case o.c == nil && o.err == nil:
		return invalidf("%s handle not created by a Client", what)
	case o.err != nil:
		return o.err
	}
	return o.c.checkCall(ctx)
}

// nameOf returns the handle's name, "" for a nil handle.
func (o *object) nameOf() string {
	if o == nil {
		return ""
	}
	return o.name
}

// withOthers returns the keys of the object and of the objects called names (the object's key first),
// for commands over several objects (BITOP, PFCOUNT, PFMERGE). Each name must be valid and, on a
// Cluster, in the object's slot (a name sharing a {hash tag} with it), else ErrInvalidArgument.
func (o *object) withOthers(names []string) ([]string, error) {
	keys := make([]string, 0, len(names)+1)
	keys = append(keys, o.key)
	for _, n := range names {
		k, _, err := objectKeys(o.c.cfg.prefix, n)
		if err != nil {
			return nil, err
		}
		if o.c.cluster && slot.Of(k) != slot.Of(o.key) {
			return nil, invalidf("%q and %q are in different Cluster slots: give the names a common {hash tag} prefix", o.name, n)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// del deletes the object's keys (the object key first) and reports whether the first existed.
func (o *object) del(ctx context.Context, what string, keys ...string) (bool, error) {
	if err := o.check(ctx, what); err != nil {
		return false, opErr("delete", o.nameOf(), err)
	}
	keys = append([]string{o.key}, keys...)
	cmd, ackErr := mutate(ctx, o.c, o.key, nil, func() *redis.IntCmd {
		args := []any{"unlink"}
		for _, k := range keys {
			args = append(args, k)
		}
		return redis.NewIntCmd(ctx, args...)
	})
	return cmd.Val() > 0, objectErr("delete", o.name, cmd.Err(), ackErr)
}

// objectErr wraps an error of a data object's command for the caller: WRONGTYPE and a value Redis
// cannot read as its type (INCRBY on a string that is no integer, a corrupt HyperLogLog) match
// ErrWrongType, INCRBY's overflow matches ErrOutOfRange; ackErr (see send) is added. It
// returns nil if both are nil.
func objectErr(op, name string, err, ackErr error) error {
	switch {
	case err == nil && ackErr == nil:
		return nil
	case err == nil:
		return opErr(op, name, ackErr)
	case strings.Contains(err.Error(), "increment or decrement would overflow"): // INCRBY
		err = because(ErrOutOfRange, err)
	case strings.Contains(err.Error(), "value is not an integer"), // INCRBY on a string of another kind
		errPrefix(err, "INVALIDOBJ"): // a corrupt HyperLogLog
		err = because(ErrWrongType, err)
	default:
		err = redisErr(err)
	}
	return opErr(op, name, err, ackErr)
}
