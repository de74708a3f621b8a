package redisson

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// isUnknownCommand reports whether err is Redis refusing a command it does not have (renamed away,
// or a proxy that does not pass it on).
func isUnknownCommand(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.Contains(err.Error(), "unknown command")
}

// CheckReplicas checks, on every master (one, or each master of a Cluster), that the
// replica-acknowledged mode (WithReplicaAcks) can be served: that the master has the WAIT command
// and at least as many connected replicas as the mode requires. It blocks for one round trip per
// master. It returns nil when the mode is off or every master can serve it; an error matching
// ErrNoWait when a master has no WAIT; one matching ErrNotReplicated when a master has too few
// replicas; a wrapped Redis error when a master cannot be asked; ErrInvalidArgument for a nil or
// zero Client, ErrClosed after Close.
func (c *Client) CheckReplicas(ctx context.Context) error {
	if err := c.checkCall(ctx); err != nil {
		return opErr("check replicas", "", err)
	}
	if c.acks.timeout == 0 {
		return nil
	}
	err := c.eachMaster(ctx, func(ctx context.Context, node redis.UniversalClient, _ string) error {
		if err := node.Do(ctx, "WAIT", 0, 0).Err(); err != nil {
			if isUnknownCommand(err) {
				return ErrNoWait
			}
			return redisErr(err)
		}
		text, err := node.Info(ctx, "replication").Result()
		if err != nil {
			return redisErr(err)
		}
		n := parseServerInfo(text).replicas
		if n < 0 {
			return errors.New("INFO replication has no connected_slaves")
		}
		if need := max(c.acks.need, 1); n < need {
			return fmt.Errorf("%w: the master has %d connected replicas, %d required", ErrNotReplicated, n, need)
		}
		return nil
	})
	if err != nil {
		return opErr("check replicas", "", err)
	}
	return nil
}
