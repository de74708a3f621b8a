package redisson_test

// Attack 8: the replica-acknowledged mode (WithReplicaAcks), the sharded pub/sub hub on Cluster,
// per-node renewal rounds and waiter heartbeat marking. Each failing test states the scenario, the
// expected behaviour and what happens; tests marked PASSING are kept as regression tests of attacks
// the code withstood.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/scripts"
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
	// Just after a (diskless) sync the master streams writes only once the replica's first ACK has
	// come (up to a second): wait until a write is acknowledged.
	eventually(t, 10*time.Second, "the replica acknowledging writes", func() bool {
		mc.Set(t.Context(), "a8-sync", "1", 0)
		n, err := mc.Do(t.Context(), "WAIT", 1, 100).Int64()
		return err == nil && n == 1
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
	rdbA, dialA := regressProxied(t, p.master, cli, func(o *redis.Options) {
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
	regressOneConn(t, rdbA)
	dials := dialA.dialed()
	cli.DropReplies(1) // the reply of G1's final release is lost; go-redis re-sends the pipeline
	if err := g1.Unlock(ctx); err != nil {
		t.Logf("G1 Unlock: %v", err)
	}
	cli.DropReplies(0)
	if dialA.dialed() == dials {
		t.Fatal("precondition: the release was not re-sent on a new connection")
	}
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

// a8Migration is a slot migration left half done: the destination IMPORTING, the source MIGRATING,
// as during a long `redis-cli --cluster reshard`.
type a8Migration struct {
	cl               *redistest.Cluster
	slot             int
	src, dst         string
	srcID, dstID     string
	srcNode, dstNode *redis.Client
	finished         bool
}

// finishAfter finishes the migration d from now, on another goroutine, unless ctx ends first. Call
// the function it returns to wait for that goroutine.
func (m *a8Migration) finishAfter(t *testing.T, ctx context.Context, d time.Duration) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-time.After(d):
			m.finish(t, ctx)
		case <-ctx.Done():
		}
	}()
	return func() { <-done }
}

// a8StartMigration puts key's slot in migration from its master to another master.
func a8StartMigration(t *testing.T, ctx context.Context, cl *redistest.Cluster, admin *redis.ClusterClient, key string) *a8Migration {
	t.Helper()
	src, slot := a7SlotMaster(t, ctx, admin, key)
	masters, err := cl.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := &a8Migration{cl: cl, slot: int(slot), src: src}
	for _, a := range masters {
		if a != src {
			m.dst = a
			break
		}
	}
	m.srcNode = cl.Node(m.src).Client(t)
	m.dstNode = cl.Node(m.dst).Client(t)
	m.srcID = m.srcNode.Do(ctx, "CLUSTER", "MYID").Val().(string)
	m.dstID = m.dstNode.Do(ctx, "CLUSTER", "MYID").Val().(string)
	if err := m.dstNode.Do(ctx, "CLUSTER", "SETSLOT", m.slot, "IMPORTING", m.srcID).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.srcNode.Do(ctx, "CLUSTER", "SETSLOT", m.slot, "MIGRATING", m.dstID).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.finish(t, context.Background()) })
	return m
}

// moveKeys MIGRATEs every key of the slot still on the source to the destination (TTLs kept).
func (m *a8Migration) moveKeys(t *testing.T, ctx context.Context) int {
	t.Helper()
	host, port, _ := strings.Cut(m.dst, ":")
	keys, err := m.srcNode.Do(ctx, "CLUSTER", "GETKEYSINSLOT", m.slot, 1000).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := m.srcNode.Migrate(ctx, host, port, k, 0, 5*time.Second).Err(); err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("MIGRATE %s: %v", k, err)
		}
	}
	return len(keys)
}

// finish moves what is left and gives the slot to the destination on every master.
func (m *a8Migration) finish(t *testing.T, ctx context.Context) {
	if m.finished {
		return
	}
	m.finished = true
	m.moveKeys(t, ctx)
	masters, err := m.cl.Masters(ctx)
	if err != nil {
		t.Error(err)
		return
	}
	for _, a := range masters {
		rdb := redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1})
		if err := rdb.Do(ctx, "CLUSTER", "SETSLOT", m.slot, "NODE", m.dstID).Err(); err != nil {
			t.Errorf("SETSLOT NODE on %s: %v", a, err)
		}
		rdb.Close()
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_ = m.cl.WaitReady(wctx)
}

// FIXED (replica-acknowledged mode on Cluster: acquisitions failed while a slot migrates). ASK and
// MOVED are now followed to the node they name (ASKING first), WAIT with them. A lock taken on the
// destination mid-migration cannot be released before the migration ends (its release script names
// keys still on the source, or absent: TRYAGAIN), so the test ends the migration 2s in; the release
// waits for it (TRYAGAIN re-sent for up to about 10s).
//
// Scenario: a Cluster (each master with a replica); Client A in the replica-acknowledged mode
// (WithReplicaAcks(1, 1s)). The slot of free lock L is being migrated (CLUSTER SETSLOT IMPORTING /
// MIGRATING, as `redis-cli --cluster reshard` leaves it while it moves the slot's keys). The source
// answers a command on a key it does not have with -ASK: the key is to be created on the
// destination. A plain Client (no mode) follows ASK and takes L. Client A's acked pipeline goes to
// the node client of MasterForKey, which does not follow ASK: acked() reloads the slot map (which
// still says "source") and re-sends to the source four times, then returns the ASK error.
//
// Expected: the migration is transparent (doc.go: "a slot migration loses nothing"; acked(): "a
// MOVED or ASK reply ... sends the pipeline again"): TryLock and Lock take the free lock, as
// without the mode.
//
// Actual: TryLock and even Lock (no wait bound) fail within a second with "ASK <slot> <dest>",
// for as long as the migration lasts. Fails every run.
func TestAttack8AckedClusterAcquireDuringMigrationFails(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	const name = "a8ask"
	cl := redistest.StartCluster(t)
	admin := cl.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	plain := newClient(t, cl.Client(t))
	a := newClient(t, cl.Client(t), redisson.WithReplicaAcks(1, time.Second))
	if err := a.CheckReplicas(ctx); err != nil {
		t.Fatalf("CheckReplicas: %v", err)
	}
	// Warm up both Clients (slot map, scripts) on another slot.
	mustUnlock(t, mustLock(t, plain.Lock("a8ask-warm"), ctx))
	mustUnlock(t, mustLock(t, a.Lock("a8ask-warm"), ctx))

	m := a8StartMigration(t, ctx, cl, admin, "{"+name+"}")
	t.Logf("slot %d migrating from %s to %s", m.slot, m.src, m.dst)

	// Without the mode: ASK is followed, a free lock of the slot is taken on the destination (another
	// name of the same slot: see TestAttack8ClusterUnlockDuringMigrationTryAgain for its unlock).
	other := a8SameSlotName(name)
	if _, err := plain.Lock(other).TryLock(ctx); err != nil {
		t.Fatalf("precondition: a plain Client's TryLock of %q during the migration: %v", other, err)
	}

	defer m.finishAfter(t, ctx, 2*time.Second)() // a migration that takes 2s
	var failures []string
	h, err := a.Lock(name).TryLock(ctx)
	if err != nil {
		failures = append(failures, fmt.Sprintf("TryLock: %v", err))
	} else {
		mustUnlock(t, h)
	}
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	defer lcancel()
	start := time.Now()
	h, err = a.Lock(name).Lock(lctx)
	if err != nil {
		failures = append(failures, fmt.Sprintf("Lock (no wait bound) after %v: %v", time.Since(start).Round(time.Millisecond), err))
	} else {
		mustUnlock(t, h)
	}
	if len(failures) > 0 {
		t.Errorf("the replica-acknowledged Client cannot take a free lock while its slot migrates (a plain Client can):\n  %s",
			strings.Join(failures, "\n  "))
	}
}

// a8Slot is the Cluster hash slot of key (CRC16/XMODEM of the key, or of its {tag}, mod 16384).
func a8Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// a8SameSlotName returns another lock name whose key ("{name}") is in the slot of name's.
func a8SameSlotName(name string) string {
	want := a8Slot(name)
	for i := 0; ; i++ {
		if n := name + "-" + strconv.Itoa(i); a8Slot(n) == want {
			return n
		}
	}
}

// FIXED (Cluster, any mode: a slot migration made releases and contended acquisitions fail). A
// script refused with TRYAGAIN never ran: it is sent again after a pause, for up to about 10s, so
// that a migration that ends within that time is transparent. The test finishes the migration 2s in
// (a migration stuck for longer leaves the scripts of its slot refused, whatever the client does).
//
// Scenario: a plain Client (no replica mode) holds lock L on a Cluster. L's slot starts migrating to
// another master (CLUSTER SETSLOT IMPORTING / MIGRATING); L's key has not been moved yet. Every
// script of a lock names all the lock's keys (lock, release history, queue, deadlines, fencing
// counter), most of which do not exist. A node refuses a multi-key command on a migrating
// (or importing) slot when only some of its keys are there: -TRYAGAIN. go-redis retries TRYAGAIN a
// few times within milliseconds, then returns it.
//
// Expected: a slot migration is transparent (doc.go: "a slot migration loses nothing"): the holder's
// Unlock frees L, and a Lock by another Client waits for L and gets it.
//
// Actual: Unlock fails with "TRYAGAIN Multiple keys request during rehashing of slot"; the hold is
// ended as lost ("unlock failed, left to expire") and L stays held by nobody for the rest of its lease
// (30s by default); another Client's Lock (no wait bound) fails at once with the same error instead
// of waiting. Fails every run.
func TestAttack8ClusterUnlockDuringMigrationTryAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	const name = "a8try"
	cl := redistest.StartCluster(t)
	admin := cl.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	a := newClient(t, cl.Client(t))
	b := newClient(t, cl.Client(t))
	h := mustLock(t, a.Lock(name), ctx)
	m := a8StartMigration(t, ctx, cl, admin, "{"+name+"}")
	t.Logf("slot %d migrating from %s to %s; lock key still on the source", m.slot, m.src, m.dst)

	defer m.finishAfter(t, ctx, 2*time.Second)() // a migration that takes 2s
	var failures []string
	lctx, lcancel := context.WithTimeout(ctx, 8*time.Second)
	defer lcancel()
	waited := make(chan error, 1)
	go func() {
		hb, err := b.Lock(name).Lock(lctx)
		if err == nil {
			_ = hb.Unlock(context.Background())
		}
		waited <- err
	}()
	if err := h.Unlock(ctx); err != nil {
		failures = append(failures, fmt.Sprintf("holder's Unlock: %v (hold context cause: %v)", err, context.Cause(h.Context())))
	}
	if err := <-waited; err != nil {
		failures = append(failures, fmt.Sprintf("another Client's Lock (no wait bound): %v", err))
	}
	if locked, err := a.Lock(name).IsLocked(ctx); err == nil && locked {
		ttl, _ := a.Lock(name).RemainingTTL(ctx)
		failures = append(failures, fmt.Sprintf("the lock is still held, by nobody, for %v more", ttl.Round(time.Millisecond)))
	}
	if len(failures) > 0 {
		t.Errorf("while the lock's slot migrates:\n  %s", strings.Join(failures, "\n  "))
	}
}

// a8LoadScripts loads every script of the library on every master, as a Cluster whose masters have
// all served locks has them.
func a8LoadScripts(t *testing.T, ctx context.Context, admin *redis.ClusterClient) {
	t.Helper()
	err := admin.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		for _, s := range scripts.All {
			if err := s.Load(ctx, n).Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("loading the scripts: %v", err)
	}
}

// a8MigrationWindow holds lock name with c, starts the migration of its slot, moves its keys to the
// destination and leaves the slot MIGRATING for 5s (as while a reshard moves a large slot's other
// keys), then finishes the migration. It returns the hold's loss cause, nil if it was kept.
func a8MigrationWindow(t *testing.T, ctx context.Context, cl *redistest.Cluster, admin *redis.ClusterClient,
	c *redisson.Client, name string) error {
	t.Helper()
	h := mustLock(t, c.Lock(name), ctx)
	m := a8StartMigration(t, ctx, cl, admin, "{"+name+"}")
	n := m.moveKeys(t, ctx)
	t.Logf("slot %d migrating from %s to %s; %d keys moved", m.slot, m.src, m.dst, n)
	var lost error
	select {
	case <-h.Context().Done():
		lost = context.Cause(h.Context())
	case <-time.After(5 * time.Second):
	}
	m.finish(t, ctx)
	if lost == nil {
		mustUnlock(t, h)
	}
	return lost
}

// FIXED (per-node renewal rounds: a renewal redirected by ASK to a node without the script). Now a
// redirected batch goes to the node the reply names (ASKING first), and NOSCRIPT loads the script on
// whichever node answers it, once per renewal round.
//
// Scenario: a plain Client (no replica mode; watchdog 3s) holds lock L on a Cluster. L's slot is
// being migrated to another master that has not run the library's scripts (a master added to
// scale out, or promoted by a failover: its script cache is empty); L's key has been moved
// (MIGRATE), and the slot stays MIGRATING for 5s while the rest of the slot moves. Each renewal
// round sends EVALSHA lock_renew to the source, which answers -ASK; renewOnNode re-sends the batch
// through the ClusterClient, which follows ASK to the destination, which answers NOSCRIPT. The
// NOSCRIPT handling (SCRIPT LOAD and re-send) runs only on the first attempt, so the renewal is
// reported failed, in every round.
//
// Expected: the renewal reaches L on the destination (load the script there and re-send, as for a
// NOSCRIPT on the first attempt); the hold is kept through the migration (doc.go: "a slot
// migration loses nothing").
//
// Actual: every renewal fails with NOSCRIPT while the slot migrates, and the hold is declared lost
// ("could not renew before the lease may lapse: NOSCRIPT") 2.7s after its last renewal, then freed.
// Fails every run.
func TestAttack8ClusterAskRenewalNoScript(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	cl := redistest.StartCluster(t)
	admin := cl.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second))
	if lost := a8MigrationWindow(t, ctx, cl, admin, c, "a8nos"); lost != nil {
		t.Errorf("the hold was declared lost while its slot migrated (its lock was alive on the destination throughout): %v; stats %+v",
			lost, c.Stats())
	}
}

// FIXED (replica-acknowledged mode on Cluster: a migrating slot's holds were declared lost). Now a
// redirected renewal is sent, with its WAIT, to the node the reply names, so it is acknowledged there.
//
// Scenario: as TestAttack8ClusterAskRenewalNoScript, but with every script loaded on every master
// (so NOSCRIPT plays no part) and Client A in the replica-acknowledged mode (WithReplicaAcks(1, 1s),
// watchdog 3s). Renewals sent to the source get -ASK; renewOnNode re-sends them through the
// ClusterClient, which follows ASK and renews L on the destination; but in the mode a renewal that
// went through a redirection counts as failed ("renewed through a redirection").
//
// Expected: the migration is transparent (doc.go: "a slot migration loses nothing"): L, renewed on
// the destination every round, is kept. (The destination's own WAIT can vouch for it: ASKING +
// EVALSHA + WAIT pipelined on the destination's node client.)
//
// Actual: every renewal of L fails while the slot migrates, and the hold is declared lost
// (ErrLockLost, ErrNotReplicated: "renewed through a redirection") after 2.7s although the lock was
// renewed, then freed by the loss's undo. A plain Client's hold passes the same window (see the
// PASSING check at the end). Fails every run.
func TestAttack8AckedClusterMigrationLosesHold(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	cl := redistest.StartCluster(t)
	admin := cl.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Second)
	defer cancel()
	a8LoadScripts(t, ctx, admin)
	a := newClient(t, cl.Client(t), redisson.WithReplicaAcks(1, time.Second), redisson.WithWatchdogTimeout(3*time.Second))
	lost := a8MigrationWindow(t, ctx, cl, admin, a, "a8mig")
	if lost != nil {
		t.Errorf("the acked hold was declared lost while its slot migrated (it was renewed on the destination): %v; stats %+v",
			lost, a.Stats())
	}
	plain := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second))
	if lost := a8MigrationWindow(t, ctx, cl, admin, plain, "a8mig2"); lost != nil {
		t.Errorf("a plain Client's hold was lost in the same window (scripts loaded everywhere): %v", lost)
	}
}

// PASSING (kept as a regression test): an acquisition in the replica-acknowledged mode whose reply
// is lost while replication is cut, for every kind.
//
// Scenario: Client A (WithReplicaAcks(1, 300ms)) reaches the master through a proxy; the replica
// follows through another. Replication is cut (Blackhole) and the reply of A's acquisition pipeline
// (SET NX or lock_acquire.lua, then WAIT) is lost (DropReplies(1)): go-redis re-sends the pipeline
// on another connection, where the SET NX fails (the key is there) and the script finds the owner
// holding the lock it has just been granted.
//
// Expected: the acquisition fails (ErrNotObtained), nothing is left on the master once the undo has
// run, and after promoting the replica another Client takes the lock while A holds nothing.
//
// Observed: held up, for all three kinds (5 runs).
func TestAttack8AckedAcquireLostReplyCutReplication(t *testing.T) {
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) {
			name := "a8-lost-" + kind
			p := a8ReplicatedViaProxy(t)
			cli := redistest.NewProxy(t, p.master.Addr())
			rdbA, dialA := regressProxied(t, p.master, cli, func(o *redis.Options) {
				o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
			})
			a := newClient(t, rdbA, redisson.WithReplicaAcks(1, 300*time.Millisecond))
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			attackWarmUp(t, a)
			mustUnlock(t, mustLock(t, lockOf(a, kind, "a8-warm-"+kind), ctx))

			p.repl.Blackhole(true)
			regressOneConn(t, rdbA)
			dials := dialA.dialed()
			cli.DropReplies(1)
			h, err := lockOf(a, kind, name).TryLock(ctx)
			cli.DropReplies(0)
			if dialA.dialed() == dials {
				t.Fatal("precondition: the acquisition was not re-sent on a new connection")
			}
			if err == nil {
				defer func() { _ = h.Unlock(context.Background()) }()
				t.Fatalf("TryLock succeeded with replication cut: a lock no replica has")
			}
			if !errors.Is(err, redisson.ErrNotObtained) {
				t.Fatalf("TryLock: %v; want ErrNotObtained", err)
			}
			t.Logf("TryLock: %v", err)
			key := redisson.LockKeyOf(a, name)
			mc := p.master.Client(t)
			eventually(t, 6*time.Second, "the unacknowledged acquisition undone on the master", func() bool {
				return a8Owner(t, mc, key) == ""
			})
			a8Promote(t, p)
			b := newClient(t, p.replica.Client(t))
			hb := mustLock(t, lockOf(b, kind, name), ctx)
			mustUnlock(t, hb)
		})
	}
}
