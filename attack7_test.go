package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a7SlotMaster returns the address of the master serving key's slot, as the cluster sees it.
func a7SlotMaster(t *testing.T, ctx context.Context, admin *redis.ClusterClient, key string) (string, int64) {
	t.Helper()
	slot := admin.ClusterKeySlot(ctx, key).Val()
	for _, sh := range admin.ClusterShards(ctx).Val() {
		for _, r := range sh.Slots {
			if int64(r.Start) > slot || slot > int64(r.End) {
				continue
			}
			for _, n := range sh.Nodes {
				if n.Role == "master" && n.Health == "online" {
					return fmt.Sprintf("%s:%d", n.IP, n.Port), slot
				}
			}
		}
	}
	t.Fatalf("no master for slot %d", slot)
	return "", 0
}

// a7HoldSurvives fails the test if h's context ends within d.
func a7HoldSurvives(t *testing.T, h *redisson.Hold, d time.Duration, what string) {
	t.Helper()
	select {
	case <-h.Context().Done():
		cause := context.Cause(h.Context())
		t.Fatalf("%s: hold %q lost (%v, ErrLockLost=%v); want it kept: the lock was never lost in Redis",
			what, h.Name(), cause, errors.Is(cause, redisson.ErrLockLost))
	case <-time.After(d):
	}
}

// Renewals go straight to the node client of MasterForKey in a pipeline, which does not follow MOVED,
// and renewFailed reloads the slot map only for non-Redis errors; a MOVED reply is a Redis error.
//
// Interleaving: a Client holds a watchdog lock (lease 3s, renewed every 1s) and does nothing else. A
// coordinated failover (CLUSTER FAILOVER, no write lost) promotes the replica of the lock's master.
// The old master, now a replica, answers the next renewal pipeline's EVALSHA with "MOVED slot
// new-master". go-redis' ClusterClient would have followed it and lazily reloaded its slot map, but the
// node client's pipeline just returns the error; renewFailed sees a redis.Error and does not reload.
// Every retry goes to the same old master (the slot map is reloaded only every 60s,
// ClusterStateReloadInterval), so the hold is declared lost (ErrLapsing: MOVED) 2.7s after its last
// renewal, and the key then really expires on the new master although the holder was alive and the
// cluster healthy throughout. Before the change script.Run went through the ClusterClient, which
// follows MOVED. Broken guarantee: a loss is never signalled spuriously; Cluster: MOVED during a
// pipeline (failover mid-renewal).
func TestAttack7ClusterFailoverMovedRenewalsNeverFollowed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	cl := redistest.StartCluster(t)
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	h := mustLock(t, c.Lock("a7f"), ctx)
	admin := cl.Client(t)
	owner, _ := a7SlotMaster(t, ctx, admin, "{a7f}")
	if _, err := cl.Failover(ctx, owner); err != nil {
		t.Fatal(err)
	}
	// Three leases: the hold must live through them, renewed on the new master.
	a7HoldSurvives(t, h, 9*time.Second, "after a coordinated failover of the lock's master")
	mustUnlock(t, h)
}

// The same without a failover: a slot migrated (resharding) while a lock in it is held.
//
// Interleaving: the lock's slot is moved to another master with CLUSTER SETSLOT IMPORTING/MIGRATING,
// MIGRATE of the key (TTL kept) and CLUSTER SETSLOT NODE on every master, as redis-cli --cluster
// reshard does. The old master then answers every renewal with MOVED; the Client's pipeline to the
// node client does not follow it and renewFailed does not reload the slot map for a Redis error, so
// the lock, alive on its new master, is declared lost after its lease, and then expires there for
// want of renewals. Broken guarantee: as above (Cluster: MOVED when a slot migrated).
func TestAttack7ClusterSlotMigratedMovedRenewalsNeverFollowed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	cl := redistest.StartCluster(t)
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const key = "a7m" // its key is "{a7m}"
	h := mustLock(t, c.Lock(key), ctx)
	admin := cl.Client(t)
	src, slot := a7SlotMaster(t, ctx, admin, "{a7m}")
	masters, err := cl.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var dst string
	for _, m := range masters {
		if m != src {
			dst = m
			break
		}
	}
	if err := cl.MigrateSlot(ctx, int(slot), dst); err != nil {
		t.Fatal(err)
	}
	if got, _ := a7SlotMaster(t, ctx, admin, "{a7m}"); got != dst {
		t.Fatalf("slot %d served by %s after the migration; want %s", slot, got, dst)
	}
	t.Logf("slot %d migrated from %s to %s", slot, src, dst)
	a7HoldSurvives(t, h, 9*time.Second, "after its slot migrated to another master")
	mustUnlock(t, h)
}

// A hung master stalls every renewal round, and rounds queued behind the 8 slots (renew.Parallel) make
// the other masters' locks lapse: a slow node does not delay "only its own batches".
//
// Interleaving: a Client holds 8,000 watchdog locks with random names (lease 3s, renewed every 1s) on
// a 3-master Cluster: nearly a slot each, so every step of the scheduler makes a dozen or more rounds
// of 256 slot batches, each round with batches on all three masters. One master is paused (SIGSTOP:
// its connections stay open, it answers nothing). In every round the two healthy masters answer at
// once, but the round keeps its slot until the paused master's pipeline is cut at the round's ctx
// deadline (sent + 1s): 8 rounds a second get through while more are dispatched, so rounds wait for a
// slot past the deadlines (2.7s) of their locks, which are declared lost (ErrLapsing, without a
// renewal even sent) although they live on healthy masters. Broken guarantee: a healthy node's locks
// must not be declared lost because another node is hung.
func TestAttack7ClusterHungMasterLapsesHealthyMastersLocks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	cl := redistest.StartCluster(t)
	// 8,000 locks lost and renewals failing for seconds: each would log a line.
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second), redisson.WithLogger(slog.New(slog.DiscardHandler)))
	admin := cl.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const n, workers = 8000, 32
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
				name := fmt.Sprintf("a7h:%d:%d", i, stamp)
				node, err := admin.MasterForKey(ctx, "{"+name+"}")
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
