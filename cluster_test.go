package redisson_test

// Cluster behaviour: renewals and lock calls across failovers, slot migrations (MOVED, ASK,
// TRYAGAIN) and hung masters.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/redistest"

	"math/rand/v2"
)

// clusterWithin starts a Cluster for the test and returns it, an admin client, and a context that
// ends after d (or with the test).
func clusterWithin(t *testing.T, d time.Duration) (*redistest.Cluster, *redis.ClusterClient, context.Context) {
	t.Helper()
	cl := redistest.StartCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return cl, cl.Client(t), ctx
}

// holdSurvives fails the test if h's context ends within d.
func holdSurvives(t *testing.T, h *redisson.Hold, d time.Duration, what string) {
	t.Helper()
	select {
	case <-h.Context().Done():
		cause := context.Cause(h.Context())
		t.Fatalf("%s: hold %q lost (%v, ErrLockLost=%v); want it kept: the lock was never lost in Redis",
			what, h.Name(), cause, errors.Is(cause, redisson.ErrLockLost))
	case <-time.After(d):
	}
}

// TestClusterRenewalsFollowFailover checks that renewals follow a failover of the lock's master: a
// loss must never be signalled spuriously. Renewals go in a pipeline to the node client of the
// lock's master, which does not follow MOVED by itself. After a coordinated failover (CLUSTER
// FAILOVER, no write lost) promotes the replica of the lock's master, the old master, now a
// replica, answers the next renewal with "MOVED slot new-master"; the renewal must then reach the
// new master (the slot map reloaded at once, not at its next periodic reload 60s later), so that
// the hold lives through three leases.
func TestClusterRenewalsFollowFailover(t *testing.T) {
	long(t)
	t.Parallel()
	cl, admin, ctx := clusterWithin(t, 30*time.Second)
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second))
	h := mustLock(t, c.Lock("failover-renew"), ctx)
	owner, _ := slotMaster(t, ctx, admin, "failover-renew")
	if _, err := cl.Failover(ctx, owner); err != nil {
		t.Fatal(err)
	}
	// Three leases: the hold must live through them, renewed on the new master.
	holdSurvives(t, h, 9*time.Second, "after a coordinated failover of the lock's master")
	mustUnlock(t, h)
}

// TestClusterRenewalsFollowMigratedSlot: as TestClusterRenewalsFollowFailover, for a slot migrated
// (resharding) while a lock in it is held. The lock's slot is moved to another master with CLUSTER
// SETSLOT IMPORTING/MIGRATING, MIGRATE of the key (TTL kept) and CLUSTER SETSLOT NODE on every
// master, as redis-cli --cluster reshard does. The old master then answers every renewal with
// MOVED; the hold, alive on its new master, must be kept.
func TestClusterRenewalsFollowMigratedSlot(t *testing.T) {
	long(t)
	t.Parallel()
	cl, admin, ctx := clusterWithin(t, 30*time.Second)
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second))
	const key = "migrated-renew" // its key is "migrated-renew"
	h := mustLock(t, c.Lock(key), ctx)
	src, dst, slot := migrateSlotAway(t, ctx, cl, admin, "migrated-renew")
	if got, _ := slotMaster(t, ctx, admin, "migrated-renew"); got != dst {
		t.Fatalf("slot %d served by %s after the migration; want %s", slot, got, dst)
	}
	t.Logf("slot %d migrated from %s to %s", slot, src, dst)
	holdSurvives(t, h, 9*time.Second, "after its slot migrated to another master")
	mustUnlock(t, h)
}

// TestClusterHungMasterSparesOtherMastersLocks checks that a hung master delays only the renewals
// of its own locks: a healthy node's locks must not be declared lost because another node is hung.
// Renewal rounds that mixed masters would each keep their parallel slot until the hung master's
// pipeline was cut at the round's deadline, and the rounds queued behind them would wait past the
// deadlines of locks on healthy masters.
//
// Interleaving: a Client holds 4,000 watchdog locks with random names (lease 3s, renewed every 1s)
// on a 3-master Cluster, on about a quarter of the slots, so that every step of the scheduler makes
// many rounds of slot batches. One master is paused (SIGSTOP: its connections stay open, it answers nothing).
// Within 4s none of the locks on the two healthy masters may be declared lost.
func TestClusterHungMasterSparesOtherMastersLocks(t *testing.T) {
	long(t)
	cl, admin, ctx := clusterWithin(t, 60*time.Second)
	// With cluster-require-full-coverage yes (the default), once the paused master is marked FAIL
	// (cluster-node-timeout, 2s) every node is in cluster state "fail" until its replica is
	// promoted, and the healthy masters too answer CLUSTERDOWN to every command, renewals included,
	// for about a second: under load that outage alone can outlast what is left of a lease, which
	// is Redis refusing the renewals, not the paused master holding them up. Keep the healthy
	// masters serving their own slots, so that the test measures only the library.
	if err := admin.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
		return n.ConfigSet(ctx, "cluster-require-full-coverage", "no").Err()
	}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second), redisson.WithLogger(slog.New(slog.DiscardHandler)))
	const n, workers = 4000, 32 // more starves the renewals of a loaded 2-core machine under -race
	type held struct {
		h    *redisson.Hold
		node string
	}
	holds := make([]held, n)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	stamp := time.Now().UnixNano()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				name := fmt.Sprintf("hung:%d:%d", i, stamp)
				node, err := admin.MasterForKey(ctx, name)
				if err != nil {
					errs <- err
					return
				}
				h, err := c.Lock(name).Lock(ctx)
				if err != nil {
					errs <- err
					return
				}
				holds[i] = held{h, node.Options().Addr}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Let the renewals settle into their rhythm, all healthy.
	time.Sleep(2 * time.Second)
	if lost := c.Stats().Lost; lost != 0 {
		t.Fatalf("%d holds lost before the fault", lost)
	}
	hung := holds[0].node
	if err := cl.Node(hung).Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Node(hung).Resume() })
	time.Sleep(4 * time.Second) // past the deadline of every lock renewed before the pause
	var healthy, healthyLost, hungLost int
	for _, h := range holds {
		lost := h.h.Context().Err() != nil
		if h.node == hung {
			if lost {
				hungLost++
			}
			continue
		}
		healthy++
		if lost {
			healthyLost++
		}
	}
	t.Logf("paused %s: %d of %d locks on healthy masters lost, %d on the paused one; stats %+v",
		hung, healthyLost, healthy, hungLost, c.Stats())
	if healthyLost != 0 {
		t.Fatalf("%d of the %d locks on the two healthy masters declared lost within 4s of pausing a third master; want 0",
			healthyLost, healthy)
	}
}

// halfMigration is a slot migration left half done: the destination IMPORTING, the source MIGRATING,
// as during a long `redis-cli --cluster reshard`.
type halfMigration struct {
	cl               *redistest.Cluster
	slot             int
	src, dst         string
	srcID, dstID     string
	srcNode, dstNode *redis.Client
	finished         bool
}

// finishAfter finishes the migration d from now, on another goroutine, unless ctx ends first. Call
// the function it returns to wait for that goroutine.
func (m *halfMigration) finishAfter(t *testing.T, ctx context.Context, d time.Duration) (wait func()) {
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

// moveKeys MIGRATEs every key of the slot still on the source to the destination (TTLs kept).
func (m *halfMigration) moveKeys(t *testing.T, ctx context.Context) int {
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
func (m *halfMigration) finish(t *testing.T, ctx context.Context) {
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

// startSlotMigration puts key's slot in migration from its master to another master.
func startSlotMigration(t *testing.T, ctx context.Context, cl *redistest.Cluster, admin *redis.ClusterClient, key string) *halfMigration {
	t.Helper()
	src, slot := slotMaster(t, ctx, admin, key)
	m := &halfMigration{cl: cl, slot: int(slot), src: src, dst: otherMaster(t, ctx, cl, src)}
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

// keySlot is the Cluster hash slot of key (CRC16/XMODEM of the key, or of its {tag}, mod 16384).
func keySlot(key string) int {
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

// sameSlotName returns another lock name whose key is in the slot of name's.
func sameSlotName(name string) string {
	want := keySlot(name)
	for i := 0; ; i++ {
		if n := name + "-" + strconv.Itoa(i); keySlot(n) == want {
			return n
		}
	}
}

// TestClusterReplicaAcksAcquireDuringSlotMigration checks that in the replica-acknowledged mode
// (WithReplicaAcks) a free lock is taken while its slot migrates, as without the mode. doc.go: "a
// slot migration loses nothing". The source answers a command on a key it does not have with -ASK
// (the key is to be created on the destination); the acknowledged pipeline must follow ASK (ASKING
// first) and MOVED to the node they name, with its WAIT.
//
// Scenario: a Cluster (each master with a replica); Client A with WithReplicaAcks(1, 1s). The slot
// of free lock L is being migrated (CLUSTER SETSLOT IMPORTING / MIGRATING, as `redis-cli --cluster
// reshard` leaves it while it moves the slot's keys). A plain Client takes another free lock of the
// slot (ASK followed); then Client A's TryLock and Lock of L must succeed. A lock taken on the
// destination mid-migration cannot be released before the migration ends (its release script
// names keys still on the source, or absent: TRYAGAIN), so the test ends the migration 2s in; the
// release waits for it (TRYAGAIN re-sent for up to about 10s).
func TestClusterReplicaAcksAcquireDuringSlotMigration(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "acked-ask"
	cl, admin, ctx := clusterWithin(t, 40*time.Second)
	plain := newClient(t, cl.Client(t))
	a := newClient(t, cl.Client(t), redisson.WithReplicaAcks(1, time.Second))
	if err := a.CheckReplicas(ctx); err != nil {
		t.Fatalf("CheckReplicas: %v", err)
	}
	// Warm up both Clients (slot map, scripts) on another slot.
	mustUnlock(t, mustLock(t, plain.Lock("acked-ask-warm"), ctx))
	mustUnlock(t, mustLock(t, a.Lock("acked-ask-warm"), ctx))

	m := startSlotMigration(t, ctx, cl, admin, name)
	t.Logf("slot %d migrating from %s to %s", m.slot, m.src, m.dst)

	// Without the mode: ASK is followed, a free lock of the slot is taken on the destination (another
	// name of the same slot: see TestClusterUnlockAndWaitDuringSlotMigration for its unlock).
	other := sameSlotName(name)
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

// TestClusterUnlockAndWaitDuringSlotMigration checks that a slot migration is transparent to a
// release and to a waiting acquisition (doc.go: "a slot migration loses nothing"). Every script of
// a lock names all the lock's keys (lock, queue, deadlines, fencing counter),
// most of which do not exist, and a node refuses a multi-key command on a migrating (or importing)
// slot when only some of its keys are there: -TRYAGAIN. go-redis retries TRYAGAIN a few times
// within milliseconds only; a script refused with TRYAGAIN never ran, so it must be sent again
// after a pause, for up to about 10s.
//
// Scenario: a plain Client holds lock L on a Cluster. L's slot starts migrating to another master
// (CLUSTER SETSLOT IMPORTING / MIGRATING); L's key has not been moved yet; the migration ends 2s in
// (a migration stuck for longer leaves the scripts of its slot refused, whatever the client does).
// The holder's Unlock must free L, another Client's Lock (no wait bound) must wait for L and get
// it, and L must not stay held by nobody.
func TestClusterUnlockAndWaitDuringSlotMigration(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "tryagain"
	cl, admin, ctx := clusterWithin(t, 40*time.Second)
	a := newClient(t, cl.Client(t))
	b := newClient(t, cl.Client(t))
	h := mustLock(t, a.Lock(name), ctx)
	m := startSlotMigration(t, ctx, cl, admin, name)
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

// loadScriptsOnMasters loads every script of the library on every master, as a Cluster whose
// masters have all served locks has them.
func loadScriptsOnMasters(t *testing.T, ctx context.Context, admin *redis.ClusterClient) {
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

// holdThroughMigration holds lock name with c, starts the migration of its slot, moves its keys to
// the destination and leaves the slot MIGRATING for 5s (as while a reshard moves a large slot's
// other keys), then finishes the migration. It returns the hold's loss cause, nil if it was kept.
func holdThroughMigration(t *testing.T, ctx context.Context, cl *redistest.Cluster, admin *redis.ClusterClient,
	c *redisson.Client, name string) error {
	t.Helper()
	h := mustLock(t, c.Lock(name), ctx)
	m := startSlotMigration(t, ctx, cl, admin, name)
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

// TestClusterRenewalAskedToNodeWithoutScripts checks that a hold is kept while its slot migrates to
// a master that has not run the library's scripts (a master added to scale out, or promoted by a
// failover: its script cache is empty). Each renewal sent to the source gets -ASK; the batch must
// go to the node the reply names (ASKING first), and the NOSCRIPT it gets there must load the
// script on that node and re-send, so that the renewal reaches the lock on the destination
// (doc.go: "a slot migration loses nothing").
//
// Scenario: a plain Client (watchdog 3s) holds lock L on a Cluster. L's slot is migrated to another
// master, L's key moved (MIGRATE), and the slot stays MIGRATING for 5s while the rest of the slot
// would move. The hold must not be declared lost.
func TestClusterRenewalAskedToNodeWithoutScripts(t *testing.T) {
	long(t)
	t.Parallel()
	cl, admin, ctx := clusterWithin(t, 40*time.Second)
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second))
	if lost := holdThroughMigration(t, ctx, cl, admin, c, "noscript"); lost != nil {
		t.Errorf("the hold was declared lost while its slot migrated (its lock was alive on the destination throughout): %v; stats %+v",
			lost, c.Stats())
	}
}

// TestClusterReplicaAcksHoldKeptThroughSlotMigration: as TestClusterRenewalAskedToNodeWithoutScripts,
// with every script loaded on every master (so NOSCRIPT plays no part) and Client A in the
// replica-acknowledged mode (WithReplicaAcks(1, 1s), watchdog 3s). A renewal redirected by ASK must
// be sent, with its WAIT, to the node the reply names (ASKING + EVALSHA + WAIT pipelined on the
// destination's node client), so that it is acknowledged there and the hold is kept. A plain
// Client's hold must pass the same window too.
func TestClusterReplicaAcksHoldKeptThroughSlotMigration(t *testing.T) {
	long(t)
	t.Parallel()
	cl, admin, ctx := clusterWithin(t, 50*time.Second)
	loadScriptsOnMasters(t, ctx, admin)
	a := newClient(t, cl.Client(t), redisson.WithReplicaAcks(1, time.Second), redisson.WithWatchdogTimeout(3*time.Second))
	lost := holdThroughMigration(t, ctx, cl, admin, a, "acked-mig")
	if lost != nil {
		t.Errorf("the acked hold was declared lost while its slot migrated (it was renewed on the destination): %v; stats %+v",
			lost, a.Stats())
	}
	plain := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second))
	if lost := holdThroughMigration(t, ctx, cl, admin, plain, "plain-mig"); lost != nil {
		t.Errorf("a plain Client's hold was lost in the same window (scripts loaded everywhere): %v", lost)
	}
}

// On a Cluster, adds and lookups in plain and replica-acknowledged mode; then the filter's slot
// migrates to another master, and Clients with the old slot map add: the refusal (MOVED, or the
// refusal of a queued command in a transaction) is followed, the slot map reloaded and the
// transaction sent again, and the element is found.
func TestBloomFilterAddFollowsSlotMigration(t *testing.T) {
	long(t)
	t.Parallel()
	cl := sharedCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	admin := cl.Client(t)
	plain := newClient(t, cl.Client(t))
	acked := newClient(t, cl.Client(t), redisson.WithReplicaAcks(1, 2*time.Second))
	name := fmt.Sprintf("moved%d", rand.N(1<<30))
	for i, c := range []*redisson.Client{plain, acked} {
		f := c.BloomFilter(name)
		if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
			t.Fatal(err)
		}
		if _, err := f.AddMany(ctx, []string{"p" + strconv.Itoa(i), "q" + strconv.Itoa(i)}); err != nil {
			t.Fatalf("client %d AddMany = %v", i, err)
		}
		if ok, err := f.Contains(ctx, "p"+strconv.Itoa(i)); err != nil || !ok {
			t.Fatalf("client %d Contains = %v, %v", i, ok, err)
		}
	}
	src, _, slot := migrateSlotAway(t, ctx, cl, admin, name)
	t.Cleanup(func() { _ = cl.MigrateSlot(context.Background(), int(slot), src) })
	for i, c := range []*redisson.Client{plain, acked} {
		f := c.BloomFilter(name)
		el := "after" + strconv.Itoa(i)
		if _, err := f.Add(ctx, el); err != nil {
			t.Errorf("client %d (acked=%v) Add after its slot moved = %v", i, i == 1, err)
			continue
		}
		if ok, err := f.Contains(ctx, el); err != nil || !ok {
			t.Errorf("client %d Contains after move = %v, %v", i, ok, err)
		}
	}
}

// Shows that a script is loaded on the master that needs it even when another master of the Cluster
// is down: a NOSCRIPT answer is followed by SCRIPT LOAD, which a go-redis ClusterClient sends to every
// master and fails if any one fails; the library must not give up with the NOSCRIPT error then (nor
// wait for the dead master). A master not serving the lock's slot is killed before a fresh Client's
// first scripts run (within the node timeout: no failover, the lock's master is healthy): the
// FairLock's acquisition and the releases must work.
func TestClusterScriptLoadedWithAMasterDown(t *testing.T) {
	long(t)
	t.Parallel()
	cl := redistest.StartCluster(t)
	ctx := t.Context()
	rdb := cl.Client(t)
	c := newClient(t, rdb)
	const name = "script-master-down"
	node, err := rdb.MasterForKey(ctx, redisson.LockKeyOf(c, name))
	if err != nil {
		t.Fatal(err)
	}
	dead := cl.Node(otherMaster(t, ctx, cl, node.Options().Addr))
	if err := dead.Kill(); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	h, err := c.FairLock(name).TryLock(cctx)
	if err != nil {
		t.Fatalf("FairLock.TryLock on %s, master %s dead = %v; want the lock", node.Options().Addr, dead.Addr(), err)
	}
	if err := h.Unlock(cctx); err != nil {
		t.Errorf("FairLock Unlock on %s, master %s dead = %v; want nil", node.Options().Addr, dead.Addr(), err)
	}
	h, err = c.Lock(sameSlotName(name)).TryLock(cctx) // SET NX: no script; its release is one
	if err != nil {
		t.Fatalf("Lock.TryLock, master %s dead = %v; want the lock", dead.Addr(), err)
	}
	if err := h.Unlock(cctx); err != nil {
		t.Errorf("Lock Unlock (a script), master %s dead = %v; want nil", dead.Addr(), err)
	}
}
