package redisson_test

// Client-level behaviour: New, Close and Stats.

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// TestHoldCountAfterCloseReturnsErrClosed checks Client.Close's "Every later call returns
// ErrClosed." for Hold.HoldCount: Close leaves the lock in Redis (to expire) and tells the hold it
// is lost, so HoldCount must not report the owner's levels from Redis as if it still held the lock.
func TestHoldCountAfterCloseReturnsErrClosed(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	h, err := c.Lock("close-holdcount").Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	_ = c.Close()
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrClosed) {
		t.Fatalf("precondition: hold cause after Close = %v", cause)
	}
	if n, err := h.HoldCount(ctx); !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("HoldCount after Close = %d, %v; want ErrClosed", n, err)
	}
}

// TestCloseEndsHoldWithOperationInFlight checks Close while one of the owner's operations (a
// partial Unlock whose command is slow) is in flight: when Close returns, the hold's context is
// already cancelled, and a Reenter made after Close returns ErrClosed rather than re-arming the
// lease in Redis for a lock nobody will renew or release. Client.Close: "The ownership context of
// every hold is cancelled with a cause matching ErrLockLost and ErrClosed ... Every later call
// returns ErrClosed."
func TestCloseEndsHoldWithOperationInFlight(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "close-inflight"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdbA := srv.Client(t)
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA)
	ctx := t.Context()
	mctx := context.WithValue(ctx, testMark{}, true)
	var wg sync.WaitGroup
	t.Cleanup(func() { hookA.release(); wg.Wait() })

	h, err := a.Lock(name).Lock(mctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	lvl, err := h.Reenter(mctx)
	if err != nil {
		t.Fatalf("Reenter: %v", err)
	}
	hookA.hold(testMarked) // unmarked commands (the partial unlock below) wait
	unlockRes := make(chan error, 1)
	spawn(&wg, func() { unlockRes <- lvl.Unlock(ctx) })
	eventually(t, 5*time.Second, "the partial unlock to be in flight", func() bool { return hookA.heldBack() >= 1 })

	_ = a.Close()
	if h.Context().Err() == nil {
		t.Errorf("Close returned, but the hold's context is not cancelled (a partial Unlock of the owner is in flight)")
	}
	if l2, err := h.Reenter(mctx); err == nil {
		t.Errorf("Reenter after Close succeeded (want ErrClosed); the lock's lease was re-armed: PTTL %v",
			admin.PTTL(ctx, redisson.LockKeyOf(a, name)).Val())
		_ = l2
	} else if !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("Reenter after Close = %v, want ErrClosed", err)
	}
	hookA.release()
	recvWithin(t, unlockRes, 5*time.Second, "the partial unlock")
}

// TestNewRefusesTypedNilClient checks that New returns ErrInvalidArgument, and does not panic, for
// a nil *redis.Client or *redis.ClusterClient in the redis.UniversalClient interface (which is then
// not == nil). New: "Invalid options or a nil rdb return an error matching ErrInvalidArgument".
func TestNewRefusesTypedNilClient(t *testing.T) {
	for _, tc := range []struct {
		name string
		rdb  redis.UniversalClient
	}{
		{"*redis.Client", (*redis.Client)(nil)},
		{"*redis.ClusterClient", (*redis.ClusterClient)(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("New(nil %s) panicked: %v; want ErrInvalidArgument", tc.name, r)
				}
			}()
			c, err := redisson.New(tc.rdb)
			if err == nil {
				_ = c.Close()
			}
			if !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Errorf("New(nil %s) = %v, want ErrInvalidArgument", tc.name, err)
			}
		})
	}
}

// TestStatsHeldCountsNoWaiters checks that Stats.Held ("holds registered with the renewal
// scheduler (watchdog and fixed lease)") counts holds only: a Client that holds nothing while one
// of its goroutines is queued (the scheduler also carries queued waiters' heartbeats) reports
// Held = 0.
func TestStatsHeldCountsNoWaiters(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	const name = "stats-waiter"
	a := newClient(t, srv.Client(t))
	b := newClient(t, srv.Client(t))
	h := mustLock(t, a.Lock(name), ctx)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.Lock(name).Lock(wctx)
	}()
	admin := srv.Client(t)
	q, _ := redisson.QueueKeys("Lock", name)
	eventually(t, 5*time.Second, "B queued", func() bool { return admin.ZCount(ctx, q, "-inf", "(+inf").Val() == 1 })
	s := b.Stats()
	cancel()
	<-done
	mustUnlock(t, h)
	if s.Held != 0 {
		t.Errorf("Stats().Held of a Client that holds nothing (one goroutine waiting) = %d; want 0", s.Held)
	}
}

// clientCountingLosses returns a Client over srv and the count of the EventLost events it emitted.
func clientCountingLosses(t *testing.T, srv *redistest.Server) (*redisson.Client, *atomic.Int32) {
	t.Helper()
	lostEvents := new(atomic.Int32)
	c := newClient(t, srv.Client(t), redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			lostEvents.Add(1)
		}
	}))
	return c, lostEvents
}

// TestStatsLostCountsHoldsEndedByClose checks that Stats.Lost ("holds that ended without an unlock
// (lost, fixed lease over, or Close)") counts a hold ended by Close, as EventLost reports it.
func TestStatsLostCountsHoldsEndedByClose(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	c, lostEvents := clientCountingLosses(t, srv)
	h := mustLock(t, c.Lock("stats-close"), ctx)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if h.Context().Err() == nil {
		t.Fatal("precondition: the hold's context was not cancelled by Close")
	}
	if s := c.Stats(); s.Lost != 1 {
		t.Errorf("after Close ended one hold (EventLost emitted %d times): Stats().Lost = %d, want 1", lostEvents.Load(), s.Lost)
	}
}

// TestStatsLostCountsLossFoundByUnlock checks that Stats.Lost counts a hold whose loss was found by
// its Unlock rather than by a renewal: after another Client's ForceUnlock, the owner's Unlock
// returns ErrNotHeld and ErrLockLost, its context ends with ErrLockLost and EventLost is emitted,
// and Stats().Lost must be 1.
func TestStatsLostCountsLossFoundByUnlock(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	c, lostEvents := clientCountingLosses(t, srv)
	other := newClient(t, srv.Client(t))
	const name = "stats-unlock"
	h := mustLock(t, c.Lock(name), ctx)
	if ok, err := other.Lock(name).ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	err := h.Unlock(ctx)
	if !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("precondition: Unlock after ForceUnlock = %v; want ErrLockLost", err)
	}
	if s := c.Stats(); s.Lost != 1 {
		t.Errorf("a hold ended lost (Unlock: %v; EventLost emitted %d times): Stats().Lost = %d, want 1", err, lostEvents.Load(), s.Lost)
	}
}

// Client.Stats counts ReadWriteLock holds: with a read hold of one ReadWriteLock and the write hold
// of another under a 300ms watchdog, Held is 2 and Renewed grows within a few renewal rounds
// (Stats: "Held: holds registered with the renewal scheduler", "Renewed: lock renewals made so
// far").
func TestStatsCountReadWriteLockHolds(t *testing.T) {
	c, _, _ := setup(t, redisson.WithWatchdogTimeout(300*time.Millisecond))
	ctx := t.Context()
	r := mustRLock(t, c.ReadWriteLock("rw-stats-r"), ctx)
	defer func() { _ = r.Unlock(ctx) }()
	w := mustLockRW(t, c.ReadWriteLock("rw-stats-w"), ctx)
	defer func() { _ = w.Unlock(ctx) }()
	if held := c.Stats().Held; held != 2 {
		t.Errorf("Stats().Held = %d with a read hold and a write hold held; want 2", held)
	}
	deadline := time.Now().Add(3 * time.Second)
	for c.Stats().Renewed == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := c.Stats().Renewed; got == 0 {
		t.Errorf("Stats().Renewed = 0 after 3s of two holds renewed every 100ms (they are renewed: contexts live %v %v)",
			r.Context().Err() == nil, w.Context().Err() == nil)
	}
}

// Shows that Close waits for releases under way but not longer than their bound when Redis does not
// answer: 40 holds (more than the go-redis pool's connections) of every lock kind are unlocked with
// a short context while Redis is frozen; each Unlock returns when its context ends, the releases go
// on in the background, and Close returns within the clean-up bound (5s after they started, plus a
// second of slack), not hanging. Once Redis answers again, every lock is still either released or
// left to its lease, and the Client leaves no goroutine behind (goleak in TestMain).
func TestCloseWithReleasesStuckOnFrozenRedis(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	var holds []*redisson.Hold
	for i := range 40 {
		kind := lockKinds[i%len(lockKinds)]
		holds = append(holds, mustLock(t, lockOf(c, kind, "close-frozen-"+kind+strconv.Itoa(i)), ctx))
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Resume() })
	start := time.Now()
	var wg sync.WaitGroup
	for _, h := range holds {
		spawn(&wg, func() {
			uctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			if err := h.Unlock(uctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Unlock with Redis frozen = %v; want the context's error", err)
			}
		})
	}
	wg.Wait()
	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Until(start.Add(6 * time.Second))):
		_ = srv.Resume()
		<-closed
		t.Fatalf("Close returned %v after the Unlocks began with Redis frozen; want at most the clean-up bound (5s)",
			time.Since(start).Round(time.Millisecond))
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
}
