package redisson_test

// Attack 8: the replica-acknowledged mode (WithReplicaAcks), the sharded pub/sub hub on Cluster,
// per-node renewal rounds and waiter heartbeat marking. Each failing test states the scenario, the
// expected behaviour and what happens; tests marked PASSING are kept as regression tests of attacks
// the code withstood.

import (
	"context"
	"errors"
	_ "fmt"
	_ "strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a8Pair is a master and a replica whose replication link goes through a proxy (cut with
// repl.Blackhole(true)).
type a8Pair struct {
	master, replica *redistest.Server
	repl            *redistest.Proxy
}

// a8ReplicatedViaProxy starts a master and a replica that follows it through a proxy, synced.
func a8ReplicatedViaProxy(t *testing.T) a8Pair {
	t.Helper()
	master := redistest.Start(t, redistest.WithArgs("--repl-diskless-sync-delay", "0"))
	repl := redistest.NewProxy(t, master.Addr())
	_, port, _ := strings.Cut(repl.Addr(), ":")
	replica := redistest.Start(t, redistest.WithArgs("--replicaof", "127.0.0.1", port))
	rc := replica.Client(t)
	mc := master.Client(t)
	eventually(t, 10*time.Second, "the replica synced", func() bool {
		info, err := rc.Info(t.Context(), "replication").Result()
		minfo, err2 := mc.Info(t.Context(), "replication").Result()
		return err == nil && err2 == nil && strings.Contains(info, "master_link_status:up") &&
			strings.Contains(minfo, "connected_slaves:1")
	})
	return a8Pair{master: master, replica: replica, repl: repl}
}

// a8Promote makes the replica a master (REPLICAOF NO ONE), as a failover would.
func a8Promote(t *testing.T, p a8Pair) {
	t.Helper()
	if err := p.replica.Client(t).Do(t.Context(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatalf("REPLICAOF NO ONE: %v", err)
	}
}

// a8Owner returns the owner stored in lock key on rdb ("" if free).
func a8Owner(t *testing.T, rdb *redis.Client, key string) string {
	t.Helper()
	v, err := rdb.Get(context.Background(), key).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	o, _, ok := redisson.DecodeLockValue(v)
	if !ok {
		t.Fatalf("GET %s = %q: not a lock", key, v)
	}
	return o
}

// PASSING (kept as a regression test): a local transfer on release, whose reply is lost, re-sent by
// go-redis, in the replica-acknowledged mode.
//
// Scenario: Client A (WithReplicaAcks(1, 300ms)) reaches the master through a proxy; the master's
// only replica follows it through another proxy. G1 holds lock L; G2, in the same Client, waits for
// L (WithLease 10s) in the local queue, so G1's final unlock transfers L to G2 in the release script
// (lock_release.lua: SET L=G2, history "t"), pipelined with WAIT 1. Replication is then cut
// (Blackhole), and the release's reply is lost (DropReplies(1)): go-redis re-sends the whole
// pipeline on another connection. The re-sent script finds the heir holding L and answers -2
// without writing anything; the re-sent WAIT runs on a connection that has written nothing.
//
// Expected: the transfer, which no replica has, is taken back; G2 is not told it holds L.
//
// Observed on redis 7.0.15: held up. Redis 7.0 stamps a client's WAIT offset (c->woff) with the
// master's offset after every command, written or not, so the re-sent script's WAIT covers the
// first run's transfer. On a server that stamps it only after commands that propagated (as later
// Redis versions do), the re-sent WAIT would answer at once and G2 would be handed a lock no replica
// has (two owners after promoting the replica): this test then fails.
func TestAttack8AckedTransferResentStaleWait(t *testing.T) {
	const name = "a8-transfer"
	p := a8ReplicatedViaProxy(t)
	cli := redistest.NewProxy(t, p.master.Addr())
	rdbA, _ := regressProxied(t, p.master, cli, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	})
	a := newClient(t, rdbA, redisson.WithReplicaAcks(1, 300*time.Millisecond),
		redisson.WithWatchdogTimeout(3*time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	attackWarmUp(t, a)

	g1 := mustLock(t, a.Lock(name), ctx)
	type res struct {
		h   *redisson.Hold
		err error
	}
	got := make(chan res, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	spawn(&wg, func() {
		var r res
		regressInLock(func() { r.h, r.err = a.Lock(name).Lock(ctx, redisson.WithLease(10*time.Second)) })
		got <- r
	})
	eventually(t, 5*time.Second, "G2 to queue behind G1 in Client A", func() bool { return regressParked() >= 1 })

	p.repl.Blackhole(true) // the replica gets nothing more
	cli.DropReplies(1)     // the reply of G1's final release is lost; go-redis re-sends the pipeline
	if err := g1.Unlock(ctx); err != nil {
		t.Logf("G1 Unlock: %v", err)
	}
	cli.DropReplies(0)
	var r res
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("G2's Lock did not return")
	}
	if r.err != nil {
		t.Logf("G2 Lock: %v (the unacknowledged transfer was not relied on)", r.err)
		return
	}
	defer func() { _ = r.h.Unlock(context.Background()) }()
	key := redisson.LockKeyOf(a, name)
	onMaster := a8Owner(t, p.master.Client(t), key)
	onReplica := a8Owner(t, p.replica.Client(t), key)
	g2 := redisson.OwnerOf(r.h)
	if onReplica == g2 {
		t.Logf("the replica has G2's hold: no defect this run")
		return
	}
	t.Errorf("G2's Lock succeeded in the replica-acknowledged mode, but the replica never acknowledged it: "+
		"master holder %q (G2 %q), replica holder %q (G1 %q)", onMaster, g2, onReplica, redisson.OwnerOf(g1))

	// Failover: the replica becomes the master; another Client acquires there once G1's lease ends.
	a8Promote(t, p)
	b := newClient(t, p.replica.Client(t))
	bctx, bcancel := context.WithTimeout(ctx, 8*time.Second)
	defer bcancel()
	hb, err := b.Lock(name).Lock(bctx)
	if err != nil {
		t.Fatalf("B on the promoted replica: %v", err)
	}
	defer func() { _ = hb.Unlock(context.Background()) }()
	if r.h.Context().Err() == nil {
		t.Errorf("two owners: B holds %q on the promoted replica while G2's hold is live", name)
	}
}
