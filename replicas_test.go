package redisson_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// The mode acquires, re-enters, renews and releases with one replica acknowledging every mutation,
// and a Client on the replica sees the lock.
func TestReplicaAcksHoldAndRenew(t *testing.T) {
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
	select {
	case <-h.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the hold was not declared lost while no renewal was acknowledged")
	}
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
			c := newClient(t, r.Master.Client(t), redisson.WithReplicaAcks(1, 100*time.Millisecond),
				redisson.WithWatchdogTimeout(time.Second))
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

// The replica-acknowledged mode with the replication link cut: a Semaphore's TryAcquire fails with
// ErrNotReplicated and gives the permit back on the master; Release reports ErrNotReplicated and
// was applied on the master.
func TestReplicaAcksSemaphoreCutLink(t *testing.T) {
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
