package redisson_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// The Client's check of its masters (INFO, servers.go) runs with its first command and once a
// minute, on the caller's goroutine and context.

// Shows that a server refusing INFO (renamed away) breaks nothing: every lock kind is taken and
// released, a re-entry too, with the first command (which asks INFO) and after; CheckEviction
// reports the refusal as an error; nothing is counted as evicting.
func TestServersInfoRefusedLocksStillWork(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--rename-command", "INFO", ""))
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	for i := range 3 {
		for _, kind := range lockKinds {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			h, err := lockOf(c, kind, "info-refused-"+kind).TryLock(cctx)
			if err != nil {
				cancel()
				t.Fatalf("round %d %s: TryLock on a server without INFO = %v", i, kind, err)
			}
			lvl, err := h.Reenter(cctx)
			if err != nil {
				t.Fatalf("round %d %s: Reenter = %v", i, kind, err)
			}
			mustUnlock(t, lvl)
			mustUnlock(t, h)
			cancel()
		}
	}
	if err := c.CheckEviction(ctx); err == nil || errors.Is(err, redisson.ErrEvicting) {
		t.Errorf("CheckEviction without INFO = %v; want the refusal, not ErrEvicting", err)
	}
	if s := c.Stats(); s.Evicting != 0 {
		t.Errorf("Stats.Evicting = %d; want 0", s.Evicting)
	}
}

// Shows that an eviction check that failed is made again: the Client's first INFO fails (its
// connection cannot be made: Redis was unreachable a moment), the Client then works, and the
// master's allkeys-lru policy must be found and reported (Stats.Evicting) within the time a failed
// INFO is trusted (serverCheckEvery, 10s, as serverInfo.failed says), not a whole sweep period
// (a minute) later: the warning is meant to come with the Client's first use.
func TestServersFailedFirstCheckIsMadeAgain(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t, redistest.WithArgs("--maxmemory-policy", "allkeys-lru"))
	p := redistest.NewProxy(t, srv.Addr())
	// One dial per connection and no re-send by go-redis: the refused dial fails INFO.
	rdb, d := proxiedClient(t, srv, p, func(o *redis.Options) { o.DialerRetries, o.MaxRetries = 1, -1 })
	c := newClient(t, rdb)
	ctx := t.Context()
	d.failNext() // the first connection, INFO's, cannot be made
	h, err := c.Lock("first-check").TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock once Redis is reachable again = %v", err)
	}
	mustUnlock(t, h)
	if d.dialed() < 2 {
		t.Fatalf("precondition: %d connections dialled; want INFO's (refused) and the lock's", d.dialed())
	}
	if s := c.Stats(); s.Evicting != 0 {
		t.Fatalf("precondition: Stats.Evicting = %d right after the failed check; want 0 (INFO failed)", s.Evicting)
	}
	deadline := time.Now().Add(12 * time.Second) // a failed INFO is asked again after 10s
	for c.Stats().Evicting == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Stats.Evicting still 0 12s after the failed first check, with calls made every 100ms; " +
				"want the allkeys-lru master reported (the failed check made again)")
		}
		h, err := c.Lock("first-check").TryLock(ctx)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		mustUnlock(t, h)
		time.Sleep(100 * time.Millisecond) // the pace of the application's calls
	}
}

// Shows that the first command of a Client on a Cluster is not held up by a master it does not use:
// one master is frozen (SIGSTOP: its connections open, no answer) or dead (killed: connections
// refused), and a lock on another master must be taken within the caller's deadline. The check of
// the masters (INFO on each, with the first command, on the caller's context) must not spend that
// deadline on the master that cannot answer.
func TestServersUnansweringMasterDoesNotFailFirstCommand(t *testing.T) {
	long(t)
	t.Parallel()
	for _, how := range []string{"frozen", "killed"} {
		t.Run(how, func(t *testing.T) {
			cl := redistest.StartCluster(t)
			ctx := t.Context()
			rdb := cl.Client(t)
			c := newClient(t, rdb)
			name := "unanswering-other"
			key := redisson.LockKeyOf(c, name)
			// The go-redis client knows the slot map before the master stops (as one that has run).
			node, err := rdb.MasterForKey(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			mustDo(t, "PING", rdb.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() }))
			// A ClusterClient's first routed command fetches COMMAND info from a random node, without
			// the caller's deadline (go-redis): one that has run has it cached.
			mustDo(t, "EXISTS", rdb.Exists(ctx, key).Err())
			other := cl.Node(otherMaster(t, ctx, cl, node.Options().Addr))
			if how == "frozen" {
				err = other.Pause()
				t.Cleanup(func() { _ = other.Resume() })
			} else {
				err = other.Kill()
			}
			if err != nil {
				t.Fatal(err)
			}
			// Well within the Cluster's node timeout (2s): no failover starts meanwhile.
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			start := time.Now()
			h, err := c.Lock(name).TryLock(cctx)
			if err != nil {
				t.Fatalf("first TryLock on a healthy master (%s), another (%s) %s = %v after %v; want the lock",
					node.Options().Addr, other.Addr(), how, err, time.Since(start).Round(time.Millisecond))
			}
			_ = h.Unlock(ctx) // see TestClusterScriptLoadedWithANodeDown for its fate with a node dead
		})
	}
}
