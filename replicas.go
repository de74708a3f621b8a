package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The replica-acknowledged mode (WithReplicaAcks). A mutation that grants or extends ownership (an
// acquisition, a re-entry, a renewal) is sent in one pipeline with WAIT, on one connection to the
// master that holds the key: WAIT counts only the writes made on its own connection. Releases and
// forced unlocks are sent the same way but never fail on the count: they have happened on the
// master, and a failover that loses one can only bring a lock back until its lease ends, never make
// two owners. Undos (compensations) and wait-queue bookkeeping are sent without WAIT.

// acks is the state of the replica-acknowledged mode of one Client.
type acks struct {
	need    int           // required acknowledgements; 0: 1 if the master has replicas
	timeout time.Duration // WAIT timeout; 0: the mode is off

	noWait   atomic.Bool   // a master refused WAIT: the mode is off (logged once)
	failures atomic.Uint64 // mutations that too few replicas acknowledged (Stats.AckFailures)
}

// on reports whether mutations wait for replicas.
func (a *acks) on() bool { return a.timeout > 0 && !a.noWait.Load() }

// node is the connection group that serves key: the Client's go-redis client, or on a Cluster the
// client of the master serving key's slot (a ClusterClient pipeline would send WAIT, which has no
// key, to any node).
func (c *Client) node(ctx context.Context, key string) (redis.Cmdable, string, error) {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return c.rdb, "", nil
	}
	n, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return nil, "", err
	}
	return n, n.Options().Addr, nil
}

// needed returns how many acknowledgements a mutation on the master at addr requires: the number
// set, or 1 if the master has replicas (unknown: 1, the safe side: a master without replicas then
// fails every acquisition until INFO answers again), 0 if it has none.
func (c *Client) needed(ctx context.Context, node redis.Cmdable, addr string) int {
	if c.acks.need > 0 {
		return c.acks.need
	}
	info := c.server(ctx, node, addr)
	if info.failed || info.replicas < 0 {
		return 1
	}
	return min(info.replicas, 1)
}

// connectedReplicas reads connected_slaves from INFO replication.
func connectedReplicas(ctx context.Context, node redis.Cmdable) (int, error) {
	info, err := node.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO replication has no connected_slaves")
}

// isUnknownCommand reports whether err is Redis refusing a command it does not have (renamed away,
// or a proxy that does not pass it on).
func isUnknownCommand(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.Contains(err.Error(), "unknown command")
}

// acked sends the command built by send, followed by WAIT, in one pipeline on one connection to
// the master of key. script, if not nil, is the script send runs with EVALSHA: it is loaded and the
// pipeline sent once more if the node did not have it. On a Cluster, a MOVED or ASK reply (a failover
// or a migration that the slot map does not know yet) sends the pipeline to the node it names
// (after ASKING, for ASK), so that WAIT still follows the write; TRYAGAIN (a multi-key script while
// its slot migrates) is sent again after a pause (see retryPause).
//
// Call it only with the mode on (acks.on). It returns the command, whose error the caller handles as
// for a lone command, and ackErr: nil if the master refused WAIT (see noWait) or enough replicas
// acknowledged; else an error matching ErrNotReplicated (a WAIT failing for another reason counts as
// too few: nothing is known about the replicas).
func (c *Client) acked(ctx context.Context, key string, script *redis.Script, send func(redis.Pipeliner) redis.Cmder) (cmd redis.Cmder, ackErr error) {
	var r route
	loaded := map[string]bool{}
	redirects, tries := 0, 0
	for {
		if r.node == nil {
			node, addr, err := c.node(ctx, key)
			if err != nil {
				p := c.rdb.Pipeline() // fails the same way; gives the caller a command with the error
				cmd = send(p)
				_, _ = p.Exec(ctx)
				return cmd, nil
			}
			r = route{node: node, addr: addr}
		}
		need := c.needed(ctx, r.node, r.addr)
		p := r.node.Pipeline()
		if r.ask {
			p.Do(ctx, "ASKING")
		}
		cmd = send(p)
		var wait *redis.Cmd
		if need > 0 {
			wait = p.Do(ctx, "WAIT", need, c.acks.timeout.Milliseconds())
		}
		_, _ = p.Exec(ctx)
		err := cmd.Err()
		if script != nil && !loaded[r.addr] && redis.HasErrorPrefix(err, "NOSCRIPT") {
			loaded[r.addr] = true
			if lerr := script.Load(ctx, r.node).Err(); lerr == nil {
				continue
			}
		}
		if next, redirect := c.redirected(ctx, err); redirect && redirects < maxRedirects {
			redirects++
			if next.node == nil && !retryPause(ctx, redirects) {
				return cmd, nil
			}
			r = next
			continue
		}
		if c.refused(err) && retryPause(ctx, tries) {
			// A migration or a failover is under way: its end, not the redirections, bounds the re-sends.
			tries++
			redirects = 0
			r = route{}
			continue
		}
		if err != nil || wait == nil {
			return cmd, nil
		}
		return cmd, c.ackResult(wait, need)
	}
}

// ackResult interprets the reply to WAIT for need acknowledgements (see acked): nil if enough
// replicas acknowledged or the server has no WAIT (the mode then turns off, logged once), else an
// error matching ErrNotReplicated, counted in Stats.AckFailures.
func (c *Client) ackResult(wait *redis.Cmd, need int) error {
	a := &c.acks
	got, err := wait.Int64()
	switch {
	case err != nil && isUnknownCommand(err):
		if !a.noWait.Swap(true) {
			c.cfg.logger.Error("redisson: replica-acknowledged mode is on but the server has no WAIT command; "+
				"carrying on without acknowledgements", "err", err)
		}
		return nil
	case err != nil:
		err = fmt.Errorf("%w: WAIT failed: %w", ErrNotReplicated, err)
	case got < int64(need):
		err = fmt.Errorf("%w: %d of %d replicas acknowledged within %v", ErrNotReplicated, got, need, a.timeout)
	default:
		return nil
	}
	a.failures.Add(1)
	return err
}

// CheckReplicas checks, on every master (one, or each master of a Cluster), that the
// replica-acknowledged mode (WithReplicaAcks) can be served: that the master has the WAIT command
// and at least as many connected replicas as the mode requires. It blocks for one round trip per
// master. It returns nil when the mode is off or every master can serve it; an error matching
// ErrNoWait when a master has no WAIT; one matching ErrNotReplicated when a master has too few
// replicas; a wrapped Redis error when a master cannot be asked.
func (c *Client) CheckReplicas(ctx context.Context) error {
	if err := c.checkCall(ctx); err != nil {
		return opErr("check replicas", "", err)
	}
	if c.acks.timeout == 0 {
		return nil
	}
	check := func(ctx context.Context, node redis.UniversalClient) error {
		if err := node.Do(ctx, "WAIT", 0, 0).Err(); err != nil {
			if isUnknownCommand(err) {
				return ErrNoWait
			}
			return redisErr(err)
		}
		n, err := connectedReplicas(ctx, node)
		if err != nil {
			return redisErr(err)
		}
		if need := max(c.acks.need, 1); n < need {
			return fmt.Errorf("%w: the master has %d connected replicas, %d required", ErrNotReplicated, n, need)
		}
		return nil
	}
	var err error
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		ferr := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			if e := check(ctx, n); e != nil {
				mu.Lock()
				err = errors.Join(err, fmt.Errorf("master %s: %w", n.Options().Addr, e))
				mu.Unlock()
			}
			return nil
		})
		err = errors.Join(err, ferr)
	} else {
		err = check(ctx, c.rdb)
	}
	if err != nil {
		return opErr("check replicas", "", err)
	}
	return nil
}
