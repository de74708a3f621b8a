package redisson

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// How a command of the library is sent (send), and what its failure means.
//
// go-redis would re-send a command after a network error (MaxRetries): the library never lets it
// (go-redis's Cmder.NoRetry), so that it alone decides, and knows, whether a command may have run.
// A command is sent again, by send, only:
//   - after a reply proving that it did not run: NOSCRIPT (the script is loaded first), TRYAGAIN,
//     CLUSTERDOWN, a MOVED or ASK (followed; on a Cluster a connection refused by a dead master);
//   - after an error proving that it was never written: no connection could be made, or none was
//     free in time (a few times: a server that cannot be reached is reported soon);
//   - after a network error that leaves its outcome unknown, only if it is safe to run twice (the
//     lock, semaphore and latch scripts answer a repeat from their records), a few times.
// If no attempt can have reached Redis, the error is marked as such (notSent): noEffect reports it,
// and the caller has nothing to undo. A context that has ended before an attempt stops it unsent.

// notSent is the error of a command that never reached Redis (see send).
type notSent struct{ err error }

func (e notSent) Error() string { return e.err.Error() }
func (e notSent) Unwrap() error { return e.err }

// Bounds of send's re-sends.
const (
	unsentRetries = 3 // re-sends of a command that was never written
	unknownResend = 3 // re-sends of a safe command after an unknown outcome
)

// sendOpts says how a command may be sent (see send).
type sendOpts struct {
	// resend: the command is safe to run twice, so it is sent again after a network error.
	resend bool
	// acked: in the replica-acknowledged mode, the command is followed by WAIT on the same
	// connection to the master of its key, and too few acknowledgements are reported.
	acked bool
}

// send sends the command that build makes (on key's slot; build is called for every attempt),
// running script with EVALSHA if script is set, as the rules above say, and returns it: its error
// is the caller's to read (matching notSent if it never reached Redis). With opts.acked and the
// replica-acknowledged mode on, the command and a WAIT go in one pipeline on one connection to the
// master of key (following MOVED and ASK there, so that WAIT follows the write), and ackErr reports
// too few acknowledgements (see ackResult); otherwise ackErr is nil.
func send[C redis.Cmder](ctx context.Context, c *Client, key string, script *redis.Script, build func() C, opts sendOpts) (cmd C, ackErr error) {
	acked := opts.acked && c.acks.on()
	var r route // acked: where the command goes
	loaded := false
	maybeRan := false // an earlier attempt may have reached Redis
	redirects, refusals, unsents, resends := 0, 0, 0, 0
	for {
		cmd = build()
		if err := ctx.Err(); err != nil {
			cmd.SetErr(c.unsent(err, maybeRan))
			return cmd, nil
		}
		var wait *redis.Cmd
		need := 0
		if acked {
			if r.node == nil {
				node, addr, err := c.node(ctx, key)
				if err != nil {
					cmd.SetErr(c.unsent(err, maybeRan))
					return cmd, nil
				}
				r = route{node: node, addr: addr}
			}
			if script != nil {
				c.preload(ctx, r, script)
			}
			need = c.needed(ctx, r.node, r.addr)
			p := r.node.Pipeline()
			if r.ask {
				p.Do(ctx, "ASKING")
			}
			_ = p.Process(ctx, onceCmd{cmd})
			if need > 0 {
				wait = p.Do(ctx, "WAIT", need, c.acks.timeout.Milliseconds())
			}
			_, _ = p.Exec(ctx) // errors are per command
		} else {
			_ = c.rdb.Process(ctx, onceCmd{cmd})
		}
		err := cmd.Err()
		switch {
		case err == nil:
			c.reachable()
			if wait != nil {
				return cmd, c.ackResult(wait, need)
			}
			return cmd, nil
		case script != nil && !loaded && redis.HasErrorPrefix(err, "NOSCRIPT"):
			loaded = true
			if acked {
				c.forgetLoaded(r.addr, script)
				continue // preload loads it
			}
			if script.Load(ctx, c.rdb).Err() != nil {
				return cmd, nil
			}
			continue
		}
		if acked {
			if next, redirect := c.redirected(ctx, err); redirect && redirects < maxRedirects {
				redirects++
				if next.node == nil && !retryPause(ctx, redirects) {
					return cmd, nil
				}
				r = next
				continue
			}
		}
		switch {
		case c.refused(err):
			// A migration or a failover is under way: its end, not the redirections, bounds the re-sends.
			if !retryPause(ctx, refusals) {
				return cmd, nil
			}
			refusals++
			redirects, r = 0, route{}
		case neverWritten(err):
			c.unreachableNow(err)
			if unsents >= unsentRetries || !retryPause(ctx, unsents) {
				cmd.SetErr(c.unsent(err, maybeRan))
				return cmd, nil
			}
			unsents++
		case isReply(err):
			return cmd, nil // Redis answered: the caller reads the reply
		default: // a network or context error: the command may have run
			maybeRan = true
			if !opts.resend || resends >= unknownResend || !retryPause(ctx, resends) {
				return cmd, nil
			}
			resends++
			r = route{}
		}
	}
}

// unsent is err, a failure before the command was written, marked notSent unless an earlier attempt
// of the same command may have run.
func (c *Client) unsent(err error, maybeRan bool) error {
	if maybeRan {
		return err
	}
	return notSent{err}
}

// isReply reports whether err is an error reply from Redis (not a network or context error).
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// neverWritten reports whether err proves that a command was never written to Redis: the connection
// could not be made, none was free in time, or the go-redis client is closed.
func neverWritten(err error) bool {
	var op *net.OpError
	switch {
	case err == nil:
		return false
	case errors.As(err, &op) && op.Op == "dial", errors.Is(err, redis.ErrClosed):
		return true
	}
	return strings.Contains(err.Error(), "connection pool timeout")
}

// run runs script, safe to run twice, on the master of its keys (see send), without WAIT.
func (c *Client) run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	cmd, _ := send(ctx, c, keys[0], script, func() *redis.Cmd { return scriptCmd(ctx, script, keys, args...) }, sendOpts{resend: true})
	return cmd
}

// eval runs script, safe to run twice, as run does, and in the replica-acknowledged mode follows it
// with WAIT: ackErr reports too few acknowledgements (see send).
func (c *Client) eval(ctx context.Context, script *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	return send(ctx, c, keys[0], script, func() *redis.Cmd { return scriptCmd(ctx, script, keys, args...) }, sendOpts{resend: true, acked: true})
}

// mutate sends a data object's mutation, which must not run twice (see object.go), once: see send.
func mutate[C redis.Cmder](ctx context.Context, c *Client, key string, script *redis.Script, build func() C) (cmd C, ackErr error) {
	return send(ctx, c, key, script, build, sendOpts{acked: true})
}
