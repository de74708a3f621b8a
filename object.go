package redisson

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/slot"
)

// What the data objects (AtomicLong, BitSet, BloomFilter, HyperLogLog) share: a handle made of a
// Client and a name, the checks every call starts with, and how their commands are sent.
//
// Sent once (see send.go). A mutation of a data object is a plain Redis command or a short script whose second
// run would apply it twice (an INCRBY), answer wrongly (a compare-and-swap that succeeded reports
// failure when repeated, so its caller's loop applies the update again), or undo another Client's
// change made in between (a Store sent again after someone's Add). go-redis re-sends a command after
// a network error (MaxRetries); these are marked so that it does not (go-redis's Cmder.NoRetry). A
// mutation that fails with a network error may or may not have happened: the caller is told, and
// nothing is applied twice. Errors that prove the command did not run (the connection was never
// made, TRYAGAIN, CLUSTERDOWN, MOVED or ASK left over, NOSCRIPT) are re-sent by this package.
// Reads are sent as usual (go-redis may re-send them: a read twice is harmless).

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
	if !c.valid() {
		o.err = invalidf("nil client or Client not created by New")
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

// onceCmd marks a command that go-redis must not send again after a network error (see "Sent once").
type onceCmd struct{ redis.Cmder }

// NoRetry tells go-redis not to re-send the command.
func (onceCmd) NoRetry() bool { return true }

// scriptCmd is an EVALSHA of script, to be sent as it is (Script.Run would send it through the
// client's re-sending Process).
func scriptCmd(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, "evalsha", script.Hash(), len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	return redis.NewCmd(ctx, append(a, args...)...)
}

// objectErr wraps an error of a data object's command for the caller: WRONGTYPE and a value Redis
// cannot read as its type (INCRBY on a string that is no integer, a corrupt HyperLogLog) match
// ErrWrongType, INCRBY's overflow matches ErrOutOfRange; ackErr (see Client.acked) is added. It
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
		redis.HasErrorPrefix(err, "INVALIDOBJ"): // a corrupt HyperLogLog
		err = because(ErrWrongType, err)
	default:
		err = redisErr(err)
	}
	return opErr(op, name, err, ackErr)
}

// execOnce sends cmds (each a command's arguments, all on key's slot) as one MULTI/EXEC transaction
// in one round trip, once (see "Sent once"), and returns EXEC's replies in order; a reply that is an
// error is an error value (the other commands ran). err is the transaction's own failure: refused
// (sent again after a pause, see Client.refused), discarded (EXECABORT: nothing ran) or a network
// error (it may or may not have run). In the replica-acknowledged mode MULTI and EXEC are sent by hand
// before WAIT (Client.acked), and ackErr reports too few acknowledgements.
func (c *Client) execOnce(ctx context.Context, key string, cmds [][]any) (replies []any, ackErr, err error) {
	for attempt := 0; c.acks.on(); attempt++ {
		var exec *redis.Cmd
		queued := make([]*redis.Cmd, len(cmds))
		_, ackErr = c.acked(ctx, key, nil, func(p redis.Pipeliner) redis.Cmder {
			_ = p.Process(ctx, onceCmd{redis.NewCmd(ctx, "multi")})
			for i, args := range cmds {
				queued[i] = redis.NewCmd(ctx, args...)
				_ = p.Process(ctx, onceCmd{queued[i]})
			}
			exec = redis.NewCmd(ctx, "exec")
			_ = p.Process(ctx, onceCmd{exec})
			return exec
		})
		if err := exec.Err(); err != nil {
			// EXECABORT: a command was refused when queued (MOVED, ASK, TRYAGAIN after a migration
			// or failover) and nothing ran; Client.acked sees only EXEC's error, so the refusal is
			// looked at here (the slot map is reloaded) and the transaction sent again.
			if redis.HasErrorPrefix(err, "EXECABORT") {
				for _, q := range queued {
					if c.refused(q.Err()) && retryPause(ctx, attempt) {
						err = nil
						break
					}
				}
				if err == nil {
					continue
				}
			}
			return nil, nil, err
		}
		replies, _ = exec.Val().([]any)
		if len(replies) != len(cmds) {
			return nil, nil, fmt.Errorf("EXEC answered %d replies for %d commands", len(replies), len(cmds))
		}
		return replies, ackErr, nil
	}
	for attempt := 0; ; attempt++ {
		sent := make([]*redis.Cmd, len(cmds))
		_, err := c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i, args := range cmds {
				sent[i] = redis.NewCmd(ctx, args...)
				_ = p.Process(ctx, onceCmd{sent[i]})
			}
			return nil
		})
		if err != nil && (c.refused(err) || neverWritten(err) && attempt < unsentRetries) && retryPause(ctx, attempt) {
			continue
		}
		// A command's own error (WRONGTYPE) is its reply; anything else failed the transaction.
		replies = make([]any, len(sent))
		for i, cmd := range sent {
			v, cerr := cmd.Result()
			var rerr redis.Error
			switch {
			case cerr == nil:
				replies[i] = v
			case errors.As(cerr, &rerr) && !redis.HasErrorPrefix(cerr, "EXECABORT"):
				replies[i] = cerr
			default:
				return nil, nil, cerr
			}
		}
		return replies, nil, nil
	}
}
