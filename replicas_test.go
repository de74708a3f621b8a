package redisson_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// The mode acquires, re-enters, renews and releases with one replica acknowledging every mutation,
// and a Client on the replica sees the lock.
func TestReplicaAcksHoldAndRenew(t *testing.T) {
	long(t)
	t.Parallel()
	r := redistest.StartReplicated(t)
	master, replica := r.Master, r.Replica
	c := newClient(t, master.Client(t), redisson.WithReplicaAcks(1, time.Second),
		redisson.WithWatchdogTimeout(300*time.Millisecond))
	onReplica := newClient(t, replica.Client(t))
	ctx := t.Context()
	if err := c.CheckReplicas(ctx); err != nil {
		t.Fatalf("CheckReplicas: %v", err)
	}
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) {
			l := lockOf(c, kind, "acked-"+kind)
			h := mustLock(t, l, ctx)
			if locked, err := lockOf(onReplica, kind, "acked-"+kind).IsLocked(ctx); err != nil || !locked {
				t.Fatalf("the replica does not have the acknowledged lock: %v %v", locked, err)
			}
			h2, err := h.Reenter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			before := c.Stats().Renewed
			eventually(t, 5*time.Second, "three renewals", func() bool { return c.Stats().Renewed >= before+3 })
			if h.Context().Err() != nil {
				t.Fatalf("hold ended: %v", context.Cause(h.Context()))
			}
			mustUnlock(t, h2)
			mustUnlock(t, h)
		})
	}
	if s := c.Stats(); s.AckFailures != 0 || s.NoWait {
		t.Fatalf("stats %+v: want no acknowledgement failures", s)
	}
}

// Too few replicas: the acquisition fails with ErrNotReplicated and leaves nothing on the master,
// with and without a wait; CheckReplicas says so too.
func TestReplicaAcksTooFewUndoes(t *testing.T) {
	long(t)
	t.Parallel()
	master := redistest.StartReplicated(t).Master
	c := newClient(t, master.Client(t), redisson.WithReplicaAcks(2, 100*time.Millisecond))
	other := newClient(t, master.Client(t))
	ctx := t.Context()
	if err := c.CheckReplicas(ctx); !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("CheckReplicas with 1 of 2 replicas: %v; want ErrNotReplicated", err)
	}
	for _, kind := range lockKinds {
		for _, wait := range []time.Duration{0, time.Second} {
			name := "too-few-" + kind
			_, err := lockOf(c, kind, name).TryLock(ctx, redisson.WithWait(wait))
			if !errors.Is(err, redisson.ErrNotObtained) || !errors.Is(err, redisson.ErrNotReplicated) {
				t.Fatalf("%s wait %v: %v; want ErrNotObtained and ErrNotReplicated", kind, wait, err)
			}
			if locked, err := lockOf(other, kind, name).IsLocked(ctx); err != nil || locked {
				t.Fatalf("%s: an unacknowledged acquisition was left on the master (%v, %v)", kind, locked, err)
			}
		}
	}
	if s := c.Stats(); s.AckFailures < 6 {
		t.Fatalf("AckFailures %d; want at least 6", s.AckFailures)
	}
}

// A replica that stops acknowledging: a re-entry fails and is taken back, and the hold is declared
// lost, with ErrNotReplicated, before its last acknowledged lease may lapse.
func TestReplicaAcksStalledReplicaLosesHold(t *testing.T) {
	long(t)
	t.Parallel()
	r := redistest.StartReplicated(t)
	master, replica := r.Master, r.Replica
	c := newClient(t, master.Client(t), redisson.WithReplicaAcks(1, 100*time.Millisecond),
		redisson.WithWatchdogTimeout(time.Second))
	ctx := t.Context()
	h := mustLock(t, c.Lock("stalled"), ctx)
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = replica.Resume() })
	if _, err := h.Reenter(ctx); !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("re-entry with a stalled replica: %v; want ErrNotReplicated", err)
	}
	if n, err := h.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("hold count after a failed re-entry: %d, %v; want 1", n, err)
	}
	faultWaitDone(t, h.Context(), 5*time.Second, "the hold to be declared lost while no renewal is acknowledged")
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) || !errors.Is(cause, redisson.ErrNotReplicated) {
		t.Fatalf("loss cause %v; want ErrLockLost and ErrNotReplicated", cause)
	}
	// The loss frees the lock on the master (the undo waits for no replica).
	other := newClient(t, master.Client(t))
	eventually(t, 5*time.Second, "the lost lock freed", func() bool {
		locked, err := other.Lock("stalled").IsLocked(ctx)
		return err == nil && !locked
	})
}

// A server without WAIT: detected on the first mutation, reported by Stats and CheckReplicas, and
// the locks keep working.
func TestReplicaAcksServerWithoutWait(t *testing.T) {
	master := redistest.Start(t, redistest.WithArgs("--rename-command", "WAIT", ""))
	c := newClient(t, master.Client(t), redisson.WithReplicaAcks(1, 100*time.Millisecond))
	ctx := t.Context()
	if err := c.CheckReplicas(ctx); !errors.Is(err, redisson.ErrNoWait) {
		t.Fatalf("CheckReplicas: %v; want ErrNoWait", err)
	}
	for i := 0; i < 3; i++ {
		mustUnlock(t, mustLock(t, c.Lock("no-wait"), ctx))
	}
	if s := c.Stats(); !s.NoWait || s.AckFailures != 0 {
		t.Fatalf("stats %+v: want NoWait and no failures", s)
	}
}

// The default count (0): a master without replicas needs none, so locks work, unacknowledged;
// CheckReplicas reports the missing replica.
func TestReplicaAcksDefaultWithoutReplicas(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t), redisson.WithReplicaAcks(0, 100*time.Millisecond))
	ctx := t.Context()
	mustUnlock(t, mustLock(t, c.Lock("alone"), ctx))
	if s := c.Stats(); s.AckFailures != 0 {
		t.Fatalf("AckFailures %d; want 0", s.AckFailures)
	}
	if err := c.CheckReplicas(ctx); !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("CheckReplicas without replicas: %v; want ErrNotReplicated", err)
	}
}

// Bad arguments of the option.
func TestReplicaAcksBadInput(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for _, o := range []redisson.Option{
		redisson.WithReplicaAcks(-1, time.Second),
		redisson.WithReplicaAcks(65, time.Second),
		redisson.WithReplicaAcks(1, 0),
		redisson.WithReplicaAcks(1, 2*time.Minute),
	} {
		if _, err := redisson.New(rdb, o); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Fatalf("New: %v; want ErrInvalidArgument", err)
		}
	}
}

// BenchmarkReplicaAcks measures what the mode costs: an uncontended lock+unlock on a master with one
// replica (both on this machine), without and with one acknowledgement required.
func BenchmarkReplicaAcks(b *testing.B) {
	master := redistest.StartReplicated(b).Master
	for _, bc := range []struct {
		name string
		opts []redisson.Option
	}{{"off", nil}, {"acks=1", []redisson.Option{redisson.WithReplicaAcks(1, time.Second)}}} {
		b.Run(bc.name, func(b *testing.B) {
			lockUnlockParallel(b, newClient(b, master.Client(b), bc.opts...), "bench:acks:")
		})
	}
}

// Every kind of hold the watchdog renews (the renewal kinds table: a kind added later fails here until
// the test knows how to make one) is lost, with ErrLockLost and ErrNotReplicated, when its renewals
// are no longer acknowledged by a replica; the replica is paused, so the renewals still reach the
// master.
func TestReplicaAcksEveryHeldKindLostWhenUnacknowledged(t *testing.T) {
	long(t)
	t.Parallel()
	// hold makes a hold of the kind on c and returns its context.
	holds := map[string]func(t *testing.T, c *redisson.Client) context.Context{
		"lock": func(t *testing.T, c *redisson.Client) context.Context {
			return mustLock(t, c.Lock("acked-lock"), t.Context()).Context()
		},
		"read hold": func(t *testing.T, c *redisson.Client) context.Context {
			h, err := c.ReadWriteLock("acked-rw-read").RLock(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return h.Context()
		},
		"write hold": func(t *testing.T, c *redisson.Client) context.Context {
			return mustLock(t, c.ReadWriteLock("acked-rw-write"), t.Context()).Context()
		},
		// The Redisson formats: on a Client made WithRedissonCompat (see below).
		"lock (Redisson format)": func(t *testing.T, c *redisson.Client) context.Context {
			return mustLock(t, c.Lock("acked-compat-lock"), t.Context()).Context()
		},
		"read hold (Redisson format)": func(t *testing.T, c *redisson.Client) context.Context {
			h, err := c.ReadWriteLock("acked-compat-rw-read").RLock(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return h.Context()
		},
		"write hold (Redisson format)": func(t *testing.T, c *redisson.Client) context.Context {
			return mustLock(t, c.ReadWriteLock("acked-compat-rw-write"), t.Context()).Context()
		},
		"leased permit": func(t *testing.T, c *redisson.Client) context.Context {
			s := c.PermitExpirableSemaphore("acked-permits")
			if _, err := s.TrySetPermits(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			p, err := s.AcquireHeld(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			return p.Context()
		},
	}
	for _, kind := range redisson.RenewHoldKinds() {
		t.Run(kind, func(t *testing.T) {
			hold := holds[kind]
			if hold == nil {
				t.Fatalf("no case for the renewed kind %q: add one", kind)
			}
			r := redistest.StartReplicated(t)
			opts := []redisson.Option{redisson.WithReplicaAcks(1, 100*time.Millisecond), redisson.WithWatchdogTimeout(time.Second)}
			if strings.HasSuffix(kind, "(Redisson format)") {
				opts = append(opts, redisson.WithRedissonCompat())
			}
			c := newClient(t, r.Master.Client(t), opts...)
			hctx := hold(t, c)
			if err := r.Replica.Pause(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Replica.Resume() })
			select {
			case <-hctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: not declared lost while no renewal was acknowledged (Stats %+v)", kind, c.Stats())
			}
			if cause := context.Cause(hctx); !errors.Is(cause, redisson.ErrLockLost) || !errors.Is(cause, redisson.ErrNotReplicated) {
				t.Fatalf("%s: loss cause %v; want ErrLockLost and ErrNotReplicated", kind, cause)
			}
			if s := c.Stats(); s.Held != 0 || s.AckFailures == 0 {
				t.Fatalf("%s: Stats %+v after the loss; want Held 0 and AckFailures > 0", kind, s)
			}
		})
	}
}

// proxiedReplication is a master and a replica whose replication link goes through a proxy (cut
// with repl.Blackhole(true)).
type proxiedReplication struct {
	master, replica *redistest.Server
	repl            *redistest.Proxy
}

// startProxiedReplication starts a master and a replica that follows it through a proxy, synced.
func startProxiedReplication(t *testing.T) proxiedReplication {
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
		mc.Set(t.Context(), "repl-sync", "1", 0)
		n, err := mc.Do(t.Context(), "WAIT", 1, 100).Int64()
		return err == nil && n == 1
	})
	return proxiedReplication{master: master, replica: replica, repl: repl}
}

// promoteReplica makes the replica a master (REPLICAOF NO ONE), as a failover would.
func promoteReplica(t *testing.T, p proxiedReplication) {
	t.Helper()
	if err := p.replica.Client(t).Do(t.Context(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatalf("REPLICAOF NO ONE: %v", err)
	}
}

// TestReplicaAcksResentHandOverWaitsForReplica checks, in the replica-acknowledged mode, a local
// transfer on release whose reply is lost and which go-redis re-sends: the heir must not be told it
// holds the lock unless a replica has it.
//
// Scenario: Client A (WithReplicaAcks(1, 300ms)) reaches the master through a proxy; the master's
// only replica follows it through another proxy. G1 holds lock L; G2, in the same Client, waits for
// L (WithLease 10s) in the local queue, so G1's final unlock transfers L to G2 in the release script
// (lock_release.lua: SET L=G2, history "t"), pipelined with WAIT 1. Replication is then cut
// (Blackhole), and the release's reply is lost (DropReplies(1)): go-redis re-sends the whole
// pipeline on another connection. The re-sent script finds the heir holding L and answers -2
// without writing anything; the re-sent WAIT runs on a connection that has written nothing, and
// must still cover the first run's transfer. If G2 is nevertheless handed L, the test promotes the
// replica and checks that G2's hold has ended by the time another Client takes L there.
//
// Redis 7.0 stamps a client's WAIT offset (c->woff) with the master's offset after every command,
// written or not, so the re-sent WAIT covers the first run's transfer. On a server that stamps it
// only after commands that propagated (as later Redis versions do), the re-sent WAIT would answer
// at once and G2 would be handed a lock no replica has: this test then fails.
func TestReplicaAcksResentHandOverWaitsForReplica(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "acked-transfer"
	p := startProxiedReplication(t)
	cli := redistest.NewProxy(t, p.master.Addr())
	rdbA, dialA := proxiedClient(t, p.master, cli, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	})
	a := newClient(t, rdbA, redisson.WithReplicaAcks(1, 300*time.Millisecond),
		redisson.WithWatchdogTimeout(3*time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	warmUpScripts(t, a)

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
		inLock(func() { r.h, r.err = a.Lock(name).Lock(ctx, redisson.WithLease(10*time.Second)) })
		got <- r
	})
	eventually(t, 5*time.Second, "G2 to queue behind G1 in Client A", func() bool { return parkedInLock() >= 1 })

	p.repl.Blackhole(true) // the replica gets nothing more
	oneIdleConn(t, rdbA)
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
	onMaster := lockOwner(t, p.master.Client(t), key)
	onReplica := lockOwner(t, p.replica.Client(t), key)
	g2 := redisson.OwnerOf(r.h)
	if onReplica == g2 {
		t.Logf("the replica has G2's hold: acknowledged")
		return
	}
	t.Errorf("G2's Lock succeeded in the replica-acknowledged mode, but the replica never acknowledged it: "+
		"master holder %q (G2 %q), replica holder %q (G1 %q)", onMaster, g2, onReplica, redisson.OwnerOf(g1))

	// Failover: the replica becomes the master; another Client acquires there once G1's lease ends.
	promoteReplica(t, p)
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

// TestReplicaAcksLostReplyWithReplicationCutNotObtained checks, for every kind, an acquisition in
// the replica-acknowledged mode whose reply is lost while replication is cut. Client A
// (WithReplicaAcks(1, 300ms)) reaches the master through a proxy; the replica follows through
// another. Replication is cut (Blackhole) and the reply of A's acquisition pipeline (SET NX or
// lock_acquire.lua, then WAIT) is lost (DropReplies(1)): go-redis re-sends the pipeline on another
// connection, where the SET NX fails (the key is there) and the script finds the owner holding the
// lock it has just been granted. The acquisition must fail (ErrNotObtained), nothing be left on the
// master once the undo has run, and after promoting the replica another Client must take the lock.
func TestReplicaAcksLostReplyWithReplicationCutNotObtained(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) {
			name := "acked-lost-" + kind
			p := startProxiedReplication(t)
			cli := redistest.NewProxy(t, p.master.Addr())
			rdbA, dialA := proxiedClient(t, p.master, cli, func(o *redis.Options) {
				o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
			})
			a := newClient(t, rdbA, redisson.WithReplicaAcks(1, 300*time.Millisecond))
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			warmUpScripts(t, a)
			mustUnlock(t, mustLock(t, lockOf(a, kind, "acked-warm-"+kind), ctx))

			p.repl.Blackhole(true)
			oneIdleConn(t, rdbA)
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
				return lockOwner(t, mc, key) == ""
			})
			promoteReplica(t, p)
			b := newClient(t, p.replica.Client(t))
			hb := mustLock(t, lockOf(b, kind, name), ctx)
			mustUnlock(t, hb)
		})
	}
}

// The replica-acknowledged mode with the replication link cut: a Semaphore's TryAcquire fails with
// ErrNotReplicated and gives the permit back on the master; Release reports ErrNotReplicated and
// was applied on the master.
func TestReplicaAcksSemaphoreCutLink(t *testing.T) {
	long(t)
	t.Parallel()
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c := newClient(t, r.Master.Client(t), redisson.WithReplicaAcks(1, 150*time.Millisecond))
	s := c.Semaphore("acked")
	if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits with the link up = %v, %v", ok, err)
	}
	r.Cut()
	ok, err := s.TryAcquire(ctx, 1)
	if ok || !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("TryAcquire across a cut link = %v, %v; want false, ErrNotReplicated", ok, err)
	}
	if n := semPermits(t, s); n != 2 {
		t.Fatalf("after the unacknowledged acquisition: %d permits on the master; want 2 (given back)", n)
	}
	if err := s.Release(ctx, 1); !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("Release across a cut link = %v; want ErrNotReplicated", err)
	}
	if n := semPermits(t, s); n != 3 {
		t.Fatalf("after the unacknowledged release: %d permits on the master; want 3", n)
	}
}

// In the replica-acknowledged mode with too few replicas (a standalone master, 1 required) every
// data-object mutation is applied once and reports ErrNotReplicated along with its real result.
func TestReplicaAcksObjectsReportRealResults(t *testing.T) {
	long(t)
	t.Parallel()
	ctx := t.Context()
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t), redisson.WithReplicaAcks(1, 20e6))
	a, b, f, h := c.AtomicLong("nr"), c.BitSet("nr-bits"), c.BloomFilter("nr-bloom"), c.HyperLogLog("nr-hll")
	nr := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, redisson.ErrNotReplicated) {
			t.Errorf("%s = %v; want ErrNotReplicated", what, err)
		}
	}
	v, err := a.Add(ctx, 7)
	nr("Add", err)
	if v != 7 {
		t.Errorf("Add(7) = %d; want 7", v)
	}
	old, err := a.Swap(ctx, 9)
	nr("Swap", err)
	if old != 7 {
		t.Errorf("Swap = %d; want 7", old)
	}
	ok, err := a.CompareAndSwap(ctx, 9, 10)
	nr("CompareAndSwap", err)
	if !ok {
		t.Error("CompareAndSwap(9, 10) = false; want true")
	}
	if v, err := a.Load(ctx); err != nil || v != 10 {
		t.Errorf("Load = %d, %v; want 10", v, err)
	}
	was, err := b.Set(ctx, 1)
	nr("Set", err)
	if was {
		t.Error("Set(1) reported set before")
	}
	fv, err := b.AddField(ctx, redisson.Uint8, 8, 5)
	nr("AddField", err)
	if fv != 5 {
		t.Errorf("AddField = %d; want 5", fv)
	}
	created, err := f.TryInit(ctx, 100, 0.01)
	nr("TryInit", err)
	if !created {
		t.Error("TryInit = false; want true")
	}
	n, err := f.AddMany(ctx, []string{"a", "b", "c"})
	nr("AddMany", err)
	if n != 3 {
		t.Errorf("AddMany = %d; want 3", n)
	}
	changed, err := h.Add(ctx, "x")
	nr("HyperLogLog.Add", err)
	if !changed {
		t.Error("HyperLogLog.Add = false; want true")
	}
	existed, err := f.Delete(ctx)
	nr("BloomFilter.Delete", err)
	if !existed {
		t.Error("Delete = false; want true")
	}
}

// waitCalls is how many WAIT commands the server has run (INFO commandstats).
func waitCalls(t *testing.T, admin *redis.Client) int64 {
	t.Helper()
	s := admin.InfoMap(t.Context(), "commandstats").Item("Commandstats", "cmdstat_wait")
	i := strings.Index(s, "calls=")
	if i < 0 {
		return 0
	}
	var n int64
	for _, ch := range s[i+len("calls="):] {
		if ch < '0' || ch > '9' {
			break
		}
		n = 10*n + int64(ch-'0')
	}
	return n
}

// Shows that the undo of a re-entry that too few replicas acknowledged waits for no replica: the
// level is taken back with one release that is not followed by WAIT (an undo, as releaseReq.undo
// says), so the failed Reenter costs one acknowledgement timeout, not two. With the replica paused,
// the re-entry's own WAIT is the only one the master runs.
func TestReplicaAcksReenterUndoSendsNoWait(t *testing.T) {
	long(t)
	t.Parallel()
	r := redistest.StartReplicated(t)
	admin := r.Master.Client(t)
	c := newClient(t, r.Master.Client(t), redisson.WithReplicaAcks(1, 300*time.Millisecond))
	ctx := t.Context()
	h := mustLock(t, c.Lock("reenter-undo"), ctx)
	if err := r.Replica.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Replica.Resume() })
	before := waitCalls(t, admin)
	if _, err := h.Reenter(ctx); !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("Reenter with the replica paused = %v; want ErrNotReplicated", err)
	}
	// Reenter waited for its clean-up (ctx has no deadline): the undo has run.
	if got := waitCalls(t, admin) - before; got != 1 {
		t.Errorf("WAIT commands run by a failed re-entry and its undo: %d; want 1 (the undo must not wait for replicas)", got)
	}
	if n, err := h.HoldCount(ctx); err != nil || n != 1 {
		t.Errorf("hold count after the undone re-entry = %d, %v; want 1", n, err)
	}
}

// Shows that the undo of an acquisition too few replicas acknowledged sends no WAIT
// (releaseReq.undo), for every lock kind: one WAIT per attempt.
func TestReplicaAcksAcquisitionUndoNoWait(t *testing.T) {
	long(t)
	t.Parallel()
	r := redistest.StartReplicated(t)
	admin := r.Master.Client(t)
	c := newClient(t, r.Master.Client(t), redisson.WithReplicaAcks(1, 200*time.Millisecond))
	ctx := t.Context()
	for _, kind := range lockKinds { // warm-up: scripts loaded, replica count known
		h := mustLock(t, lockOf(c, kind, "undo-warm-"+kind), ctx)
		mustUnlock(t, h)
	}
	if err := r.Replica.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Replica.Resume() })
	for _, kind := range lockKinds {
		before := waitCalls(t, admin)
		_, err := lockOf(c, kind, "undo-"+kind).TryLock(ctx)
		if !errors.Is(err, redisson.ErrNotReplicated) {
			t.Fatalf("%s: TryLock with the replica paused = %v; want ErrNotReplicated", kind, err)
		}
		if got := waitCalls(t, admin) - before; got != 1 {
			t.Errorf("%s: WAIT commands of an unacknowledged acquisition and its undo: %d; want 1", kind, got)
		}
		if locked, err := lockOf(c, kind, "undo-"+kind).IsLocked(ctx); err != nil || locked {
			t.Errorf("%s: the unacknowledged acquisition was not undone (%v, %v)", kind, locked, err)
		}
	}
}
