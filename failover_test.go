package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// contendUntil runs workers on Clients over rdbs, each looping: acquire (bounded wait), a short
// critical section, release, until stop is closed. It records when each acquisition succeeded and
// counts overlapping holders seen by this process.
type contention struct {
	mu       sync.Mutex
	acquired []time.Time
	inside   atomic.Int32
	overlaps atomic.Int32
	lost     atomic.Int32 // holds that ended by a loss signal
}

func (c *contention) run(t *testing.T, clients []*redisson.Client, kind, name string, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, cl := range clients {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					h, err := lockOf(cl, kind, name).Lock(ctx)
					cancel()
					if err != nil {
						continue // the fault: try again
					}
					if c.inside.Add(1) > 1 {
						c.overlaps.Add(1)
					}
					c.mu.Lock()
					c.acquired = append(c.acquired, time.Now())
					c.mu.Unlock()
					time.Sleep(2 * time.Millisecond) // the critical section
					c.inside.Add(-1)
					if context.Cause(h.Context()) != nil && errors.Is(context.Cause(h.Context()), redisson.ErrLockLost) {
						c.lost.Add(1)
					}
					uctx, ucancel := context.WithTimeout(context.Background(), 2*time.Second)
					_ = h.Unlock(uctx)
					ucancel()
				}
			}()
		}
	}
	return &wg
}

// firstAfter returns how long after at the first acquisition came, or -1.
func (c *contention) firstAfter(at time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.acquired {
		if a.After(at) {
			return a.Sub(at)
		}
	}
	return -1
}

// throughFault contends for one name per lock kind (prefix + kind) on clients, runs fault once every
// kind has been acquired, waits until every kind is acquired again after it, stops the contention,
// and returns each kind's record and the time of the fault.
func throughFault(t *testing.T, clients []*redisson.Client, prefix string, fault func(ctx context.Context)) (map[string]*contention, time.Time) {
	conts := map[string]*contention{}
	stop := make(chan struct{})
	var wgs []*sync.WaitGroup
	for _, kind := range lockKinds {
		conts[kind] = &contention{}
		wgs = append(wgs, conts[kind].run(t, clients, kind, prefix+kind, stop))
	}
	for kind, c := range conts {
		eventually(t, 10*time.Second, kind+" acquisitions before the fault", func() bool { return c.firstAfter(time.Time{}) >= 0 })
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	fault(ctx)
	at := time.Now()
	for kind, c := range conts {
		eventually(t, 20*time.Second, kind+" acquisitions after the fault", func() bool { return c.firstAfter(at) >= 0 })
	}
	close(stop)
	for _, wg := range wgs {
		wg.Wait()
	}
	return conts, at
}

// Sentinel: the master is SIGKILLed while 3 Clients × 2 goroutines contend for a lock; the sentinels
// promote a replica, the Clients' go-redis failover clients follow it, and waiters acquire again
// within 10 s of the fault. (Exclusion across the failover is not asserted: asynchronous replication
// may lose the lock, which is what the replica-acknowledged mode is for.)
func TestSentinelMasterKilledUnderContention(t *testing.T) {
	long(t)
	t.Parallel()
	s := redistest.StartSentinel(t)
	var clients []*redisson.Client
	for range 3 {
		clients = append(clients, newClient(t, s.Client(t, fastFailover), redisson.WithWatchdogTimeout(3*time.Second)))
	}
	// Every kind at once, on its own name: one fault for all.
	conts, fault := throughFault(t, clients, "failover-", func(ctx context.Context) {
		if err := s.Master(ctx).Kill(); err != nil {
			t.Fatal(err)
		}
	})
	for _, kind := range lockKinds {
		c := conts[kind]
		took := c.firstAfter(fault)
		t.Logf("%s: first acquisition %v after the master was killed; %d holds told of a loss", kind, took.Round(time.Millisecond), c.lost.Load())
		if took > 10*time.Second {
			t.Errorf("%s: first acquisition %v after the fault; want within 10s", kind, took)
		}
	}
}

// fastFailover gives a Sentinel client 500ms dial, read and write timeouts, so that it notices a
// dead master and follows the failover quickly.
func fastFailover(o *redis.FailoverOptions) {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 500*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond
}

// clusterContenders starts a Cluster for the test and returns it, 3 Clients over it (watchdog 3s) and
// an admin client.
func clusterContenders(t *testing.T) (*redistest.Cluster, []*redisson.Client, *redis.ClusterClient) {
	cl := redistest.StartCluster(t)
	var clients []*redisson.Client
	for range 3 {
		clients = append(clients, newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(3*time.Second)))
	}
	return cl, clients, cl.Client(t)
}

// noOverlapNorLoss fails the test if any kind saw overlapping holders or a hold told of a loss
// across the fault (what).
func noOverlapNorLoss(t *testing.T, conts map[string]*contention, what string) {
	for _, kind := range lockKinds {
		if c := conts[kind]; c.overlaps.Load() != 0 || c.lost.Load() != 0 {
			t.Errorf("%s: %d overlapping holders, %d holds lost across %s; want 0 and 0", kind, c.overlaps.Load(), c.lost.Load(), what)
		}
	}
}

// Cluster: a coordinated failover (CLUSTER FAILOVER) of the shard holding the locks while 3 Clients ×
// 2 goroutines contend for each kind: no overlap of holders, no hold told of a loss (a coordinated
// failover loses no write), and every kind keeps being acquired after it.
func TestClusterFailoverUnderContention(t *testing.T) {
	long(t)
	t.Parallel()
	cl, clients, admin := clusterContenders(t)
	// Names "{cf}<kind>": every key hashes "cf", one slot for all kinds.
	conts, fault := throughFault(t, clients, "{cf}", func(ctx context.Context) {
		node, err := admin.MasterForKey(ctx, "cf")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Failover(ctx, node.Options().Addr); err != nil {
			t.Fatal(err)
		}
	})
	for _, kind := range lockKinds {
		t.Logf("%s: first acquisition %v after the failover", kind, conts[kind].firstAfter(fault).Round(time.Millisecond))
	}
	noOverlapNorLoss(t, conts, "a coordinated failover")
}

// Renewals on a Cluster: 3,000 watchdog locks with random names (nearly one slot each) are renewed in
// one pipelined round trip per node per round of up to 256 slot batches, not one call per slot.
func TestClusterRenewalsPipelinedPerNode(t *testing.T) {
	long(t)
	t.Parallel()
	cl := sharedCluster(t)
	const n = 3000
	watchdog := 1500 * time.Millisecond // renewals every 500ms
	c := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(watchdog))
	ctx := t.Context()
	var holds []*redisson.Hold
	for i := range n {
		holds = append(holds, mustLock(t, c.Lock(fmt.Sprintf("pipe:%d:%d", i, time.Now().UnixNano())), ctx))
	}
	before := c.Stats()
	time.Sleep(3 * watchdog) // nine renewal intervals: renewals are what is measured
	after := c.Stats()
	intervals := float64(3*watchdog) / float64(watchdog/3)
	trips := float64(after.RenewCalls-before.RenewCalls) / intervals
	renewed := float64(after.Renewed-before.Renewed) / intervals
	t.Logf("%d locks: %.1f round trips and %.0f renewals per renewal interval", n, trips, renewed)
	for _, h := range holds {
		mustUnlock(t, h)
	}
	if after.Lost != before.Lost {
		t.Errorf("%d holds lost", after.Lost-before.Lost)
	}
	// Nearly every lock has a slot of its own: one script call per slot would renew about one lock
	// per round trip; pipelined per node, a round trip renews a round's worth.
	if perTrip := renewed / trips; perTrip < 20 {
		t.Errorf("%.1f renewals per round trip (%.1f round trips per interval for %d locks on 3 masters); want at least 20", perTrip, trips, n)
	}
}

// Sentinel: a lock that did not reach the replicas before the master died is gone after the
// failover. Its holder is told within a second of the new master's naming, with the default watchdog
// (the loss tracker's check on the new master finds it gone: ErrLockLost), and another Client can
// take it: the double grant that asynchronous replication allows, reproduced (replication cut with
// in-process proxies, so the harness is known to be sensitive to it).
func TestSentinelLockLostInFailoverIsSignalled(t *testing.T) {
	long(t)
	t.Parallel()
	s := redistest.StartSentinel(t)
	a := newClient(t, s.Client(t, fastFailover)) // the default watchdog: renewals would tell 10s later
	b := newClient(t, s.Client(t, fastFailover))
	ctx := t.Context()
	for _, l := range s.Links {
		l.Blackhole(true) // the replicas receive nothing from now on
	}
	// Killed at once, most likely before the tracker's first check of the hold (20ms): the first
	// check, on the new master, tells, as a reconnection (TestLossSignalledAfterClusterFailover
	// covers holds tracked before the failover).
	h := mustLock(t, a.Lock("lost-in-failover"), ctx)
	if err := s.Master(ctx).Kill(); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := s.WaitMaster(wctx, ""); err != nil {
		t.Fatal(err)
	}
	// The loss signal: within a second of the sentinels naming the new master.
	took := toldWithin(t, h.Context(), time.Now(), time.Second, "was open again")
	t.Logf("holder told after %v: %v", took, context.Cause(h.Context()))
	bh, err := b.Lock("lost-in-failover").TryLock(ctx, redisson.WithWait(10*time.Second))
	if err != nil {
		t.Fatalf("another Client could not take the lock the failover lost: %v", err)
	}
	mustUnlock(t, bh)
}

// Cluster: the slot of the locks migrates to another master (keys moved with MIGRATE, clients see ASK
// then MOVED) while 3 Clients x 2 goroutines contend for each kind: no overlap, no hold lost, and
// every kind keeps being acquired.
func TestClusterSlotMigrationUnderContention(t *testing.T) {
	long(t)
	t.Parallel()
	cl, clients, admin := clusterContenders(t)
	// Names "{mg}<kind>": every key hashes "mg", one slot for all kinds.
	conts, _ := throughFault(t, clients, "{mg}", func(ctx context.Context) {
		migrateSlotAway(t, ctx, cl, admin, "mg")
	})
	noOverlapNorLoss(t, conts, "a slot migration")
}

// Cluster: waiters are woken by sharded pub/sub. With re-polls and heartbeats an hour apart, a waiter
// of another Client acquires soon after the release only if a message woke it; meanwhile its
// subscription is a shard channel (SSUBSCRIBE), and no node has a classic channel (PUBLISH, which a
// Cluster broadcasts to every node).
func TestClusterWaitersWokenByShardedPubSub(t *testing.T) {
	long(t)
	cl := sharedCluster(t)
	slow := []redisson.Option{redisson.WithRepollInterval(time.Hour), redisson.WithWatchdogTimeout(time.Hour),
		redisson.WithWaiterTimeout(time.Hour)}
	a := newClient(t, cl.Client(t), slow...)
	b := newClient(t, cl.Client(t), slow...)
	ctx := t.Context()
	masters, err := cl.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	channels := func(kind string) (n int) {
		for _, m := range masters {
			v, err := cl.Node(m).Client(t).Do(ctx, "PUBSUB", kind).StringSlice()
			if err != nil {
				t.Fatal(err)
			}
			n += len(v)
		}
		return n
	}
	for _, kind := range lockKinds {
		name := fmt.Sprintf("spub-%s-%d", kind, time.Now().UnixNano())
		h := mustLock(t, lockOf(a, kind, name), ctx)
		res, cancel := lockAsync(ctx, lockOf(b, kind, name))
		eventually(t, 10*time.Second, "the waiter subscribed", func() bool { return channels("SHARDCHANNELS") > 0 })
		eventually(t, 10*time.Second, "the waiter queued", func() bool { return b.Stats().Waiting > 0 })
		if n := channels("CHANNELS"); n != 0 {
			t.Errorf("%s: %d classic pub/sub channels on the masters; want 0 (sharded only)", kind, n)
		}
		mustUnlock(t, h)
		select {
		case r := <-res:
			if r.err != nil {
				t.Fatalf("%s: the waiter failed: %v", kind, r.err)
			}
			mustUnlock(t, r.h)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the waiter was not woken within 10s of the release (re-polls are an hour apart)", kind)
		}
		cancel()
	}
}

// Cluster: the master serving a held lock is killed (SIGKILL) and the cluster promotes its replica.
// A waiter of another Client keeps waiting through the failover (refused connections to the dead
// master are retried once the slot map is reloaded, not returned) and gets the lock; the holder's
// Unlock after the failover reaches the new master (or reports the lock lost, if the write did not
// reach the replica in time).
func TestClusterMasterKilledWaiterKeepsWaiting(t *testing.T) {
	long(t)
	t.Parallel()
	cl := redistest.StartCluster(t)
	admin := cl.Client(t)
	a := newClient(t, cl.Client(t), redisson.WithWatchdogTimeout(6*time.Second))
	b := newClient(t, cl.Client(t))
	ctx := t.Context()
	h := mustLock(t, a.Lock("killed"), ctx)
	aEnded := make(chan time.Time, 1)
	go func() {
		<-h.Context().Done()
		aEnded <- time.Now()
	}()
	wctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	res, stop := lockAsync(wctx, b.Lock("killed"))
	defer stop()
	eventually(t, 10*time.Second, "the waiter queued", func() bool { return b.Stats().Waiting > 0 })
	master, err := admin.MasterForKey(ctx, "killed")
	if err != nil {
		t.Fatal(err)
	}
	killed := master.Options().Addr
	if err := cl.Node(killed).Kill(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "a replica promoted", func() bool {
		m, err := cl.Masters(ctx)
		return err == nil && len(m) == 3 && !slices.Contains(m, killed)
	})
	err = h.Unlock(ctx)
	if err != nil && !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("the holder's Unlock after the failover: %v; want nil, or ErrLockLost if the failover lost the lock", err)
	}
	t.Logf("holder's Unlock after the failover: %v", err)
	select {
	case r := <-res:
		if r.err != nil {
			t.Fatalf("the waiter's Lock failed through the failover: %v", r.err)
		}
		got := time.Now()
		ended := <-aEnded // the holder's context ends before or with its Unlock, which came first
		t.Logf("holder's hold ended (%v) %v before the waiter got the lock", context.Cause(h.Context()), got.Sub(ended).Round(time.Millisecond))
		mustUnlock(t, r.h)
	case <-wctx.Done():
		t.Fatal("the waiter did not get the lock within 40s")
	}
}
