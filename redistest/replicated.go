package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Replicated set-up settings.
const (
	replicatedReadyWait = 30 * time.Second
	// replicatedPoll is how often WaitSynced asks the nodes again.
	replicatedPoll = 10 * time.Millisecond
	// replicatedAckWait bounds each WAIT of WaitSynced.
	replicatedAckWait = 100 * time.Millisecond
	// replicatedChannel is the channel WaitSynced publishes to: a PUBLISH is replicated, so it moves
	// the master's replication offset without writing a key.
	replicatedChannel = "redistest:synced"
)

// Replicated is a master with one replica on 127.0.0.1 whose replication goes through an in-process
// proxy ([Replicated.Link]), so that the link can be cut while both servers keep running and keep
// answering their clients: the set-up in which an asynchronously replicated write is lost by a
// failover. Its methods are safe for concurrent use; Promote and Rejoin are serialised.
type Replicated struct {
	// Master is the server started as the master. It stays a master: Promote does not demote it.
	Master *Server
	// Replica was started with --replicaof pointing at Link, and follows the master again after
	// Rejoin; between Promote and Rejoin it is a master of its own.
	Replica *Server
	// Link is the proxy the replica's replication connection goes through (to Master). Cut
	// blackholes it; use it directly for other faults (Delay, CloseConns).
	Link *Proxy

	mu  sync.Mutex  // serialises Promote and Rejoin
	cut atomic.Bool // Cut was called since the last Rejoin

	closer
}

// StartReplicated starts a replicated set-up for the test (see [StartReplicatedProcess]) and
// registers a tb.Cleanup that closes it (if the test failed, the tails of both server logs are logged
// first). It blocks until the replica is in sync. If redis-server cannot be found it skips the test,
// or fails it if REDISTEST_REQUIRE=1; any other failure fails the test. It must be called from the
// test's goroutine.
func StartReplicated(tb testing.TB) *Replicated {
	tb.Helper()
	r, err := StartReplicatedProcess()
	mustStart(tb, err)
	closeAtEnd(tb, r.Close, r.Master, r.Replica)
	return r
}

// StartReplicatedProcess starts a master, a [Proxy] to it, and a replica started with --replicaof
// the proxy, and blocks until the replica is in sync (see [Replicated.WaitSynced]; bounded: 30 s).
// Both servers run with --repl-diskless-sync-delay 0, so that the full resynchronisation of Rejoin
// starts at once. On error nothing is left running: the error wraps [ErrNoBinary] if redis-server
// cannot be found, or describes the failure. On success the caller must call [Replicated.Close].
func StartReplicatedProcess() (*Replicated, error) {
	r := &Replicated{}
	fail := func(err error) (*Replicated, error) {
		return nil, errors.Join(fmt.Errorf("redistest: starting a replicated set-up: %w", err), r.Close())
	}
	args := WithArgs("--repl-diskless-sync-delay", "0")
	var err error
	if r.Master, err = StartProcess(args); err != nil {
		return fail(err)
	}
	if r.Link, err = StartProxy(r.Master.Addr()); err != nil {
		return fail(err)
	}
	if r.Replica, err = StartProcess(args, WithArgs("--replicaof", loopback, strconv.Itoa(r.linkPort()))); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), replicatedReadyWait)
	defer cancel()
	if err := r.WaitSynced(ctx); err != nil {
		return fail(err)
	}
	return r, nil
}

// linkPort is the port of Link, which the replica replicates from.
func (r *Replicated) linkPort() int {
	_, port, _ := strings.Cut(r.Link.Addr(), ":")
	n, _ := strconv.Atoi(port)
	return n
}

// admin returns a client for one administrative call to s; the caller closes it.
func admin(s *Server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
}

// WaitSynced blocks until the replica follows the master through Link with its link up and has
// acknowledged everything the master had replicated when it was asked (a PUBLISH, then WAIT 1 on the
// master), polling every 10 ms, or until ctx ends: then it returns an error saying what was still
// missing. It does not repair anything: after Cut it waits for ctx (see Rejoin).
func (r *Replicated) WaitSynced(ctx context.Context) error {
	m, rep := admin(r.Master), admin(r.Replica)
	defer m.Close()
	defer rep.Close()
	for {
		why := r.notSynced(ctx, m, rep)
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: replica %s not in sync with %s: %s", r.Replica.Addr(), r.Master.Addr(), why)
		case <-time.After(replicatedPoll): // polling the servers' replication state
		}
	}
}

// notSynced returns why the replica is not in sync yet, or "".
func (r *Replicated) notSynced(ctx context.Context, m, rep *redis.Client) string {
	info, err := rep.Info(ctx, "replication").Result()
	if err != nil {
		return "INFO replication on the replica: " + err.Error()
	}
	if !strings.Contains(info, "role:slave\r") {
		return "the replica is not a replica"
	}
	if !strings.Contains(info, fmt.Sprintf("master_port:%d\r", r.linkPort())) {
		return "the replica does not replicate through the link"
	}
	if !strings.Contains(info, "master_link_status:up\r") {
		return "the replica's link is not up"
	}
	wait := replicatedAckWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	if wait < time.Millisecond {
		return "no time left for WAIT"
	}
	// One connection: WAIT counts acknowledgements of what this connection's PUBLISH propagated.
	// (Pipeliner has no Wait method; the timeout is at least 1 ms, since 0 would block for good.)
	var wcmd *redis.Cmd
	_, err = m.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Publish(ctx, replicatedChannel, "")
		wcmd = p.Do(ctx, "WAIT", 1, wait.Milliseconds())
		return nil
	})
	if err != nil {
		return "PUBLISH and WAIT on the master: " + err.Error()
	}
	if acked, err := wcmd.Int64(); err != nil || acked < 1 {
		return "the replica has not acknowledged the master's latest offset"
	}
	return ""
}

// Cut makes Link stop delivering anything, in both directions (Link.Blackhole(true)): the master's
// writes no longer reach the replica and the replica's acknowledgements no longer reach the master.
// Neither server notices at once (only after repl-timeout, 60 s by default), so the replica keeps
// answering with what it had. It does not block.
func (r *Replicated) Cut() {
	r.cut.Store(true)
	r.Link.Blackhole(true)
}

// Promote makes the replica a master of its own (REPLICAOF NO ONE), keeping whatever data it had,
// as a failover would. The master is left as it is: there are two masters until Rejoin. It blocks
// for one round trip to the replica and returns its error.
func (r *Replicated) Promote(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := admin(r.Replica)
	defer rep.Close()
	if err := rep.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("redistest: promote %s: %w", r.Replica.Addr(), err)
	}
	return nil
}

// Rejoin heals the set-up for the next trial: unless the replica is in sync already (and Cut was not
// called since the last Rejoin), it detaches the replica (REPLICAOF NO ONE), drops Link's
// connections, turns Link's black hole off, points the replica at Link again, and then blocks until
// the replica is in sync (see WaitSynced) or ctx ends. The replica's data is then the master's: what
// was written on it while it was promoted is gone (the master does not know its history, so the
// replica resynchronises in full). Link's Delay and DropReplies settings are left as they are. It
// returns the first error met.
func (r *Replicated) Rejoin(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, rep := admin(r.Master), admin(r.Replica)
	defer m.Close()
	defer rep.Close()
	if r.cut.Load() || r.notSynced(ctx, m, rep) != "" {
		// Detached first: the bytes the black hole swallowed leave a gap in the stream, so the old
		// replication connection must not carry anything once the black hole is off, and the
		// replica must not open a new one before.
		if err := rep.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
			return fmt.Errorf("redistest: rejoin: detach %s: %w", r.Replica.Addr(), err)
		}
		r.Link.CloseConns()
		r.cut.Store(false)
		r.Link.Blackhole(false)
		if err := rep.ReplicaOf(ctx, loopback, strconv.Itoa(r.linkPort())).Err(); err != nil {
			return fmt.Errorf("redistest: rejoin: REPLICAOF on %s: %w", r.Replica.Addr(), err)
		}
	}
	if err := r.WaitSynced(ctx); err != nil {
		return fmt.Errorf("redistest: rejoin: %w", err)
	}
	return nil
}

// Close closes both servers (see [Server.Close]) and Link. It is idempotent.
func (r *Replicated) Close() error {
	var servers []*Server
	for _, s := range []*Server{r.Master, r.Replica} {
		if s != nil {
			servers = append(servers, s)
		}
	}
	err := r.closeAll(servers)
	if r.Link != nil {
		err = errors.Join(err, r.Link.Close())
	}
	return err
}
