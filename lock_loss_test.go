package redisson_test

// Loss of a Lock's hold: the owner is told (ErrLockLost) before its lease can lapse, whatever is in
// flight, and nothing sets a new lease on the lock of an owner that has ended.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// TestLockLossSignalledWhileOperationInFlight checks that a holder is told it lost the lock
// (ErrLockLost on its hold's context) before another Client can acquire it, even while one of its
// own operations (a re-entry or a partial unlock) is stuck in flight. A loss held back until that
// operation returns would reach the owner after its lease lapsed and another Client took the lock:
// two owners, one of them unaware. doc.go: "the owner is told (ErrLockLost) before its lease can
// lapse when the watchdog can no longer vouch for it" and "A fixed-lease hold ends the same way
// shortly before its lease runs out".
//
// Forcing: every command of Client A is held back by a hook (renewals fail at their deadline, the
// in-flight operation waits), while Client B, on its own connection, waits for the lock and gets
// it when A's key expires. When B's Lock returns, A's hold context must already be cancelled.
func TestLockLossSignalledWhileOperationInFlight(t *testing.T) {
	long(t)
	t.Parallel()
	for _, tc := range []struct {
		name  string
		lease time.Duration // 0: watchdog
		op    string        // operation in flight: "reenter" or "unlock" (a partial unlock)
	}{
		{"watchdog/reenter-in-flight", 0, "reenter"},
		{"watchdog/partial-unlock-in-flight", 0, "unlock"},
		{"fixed-lease/reenter-in-flight", 400 * time.Millisecond, "reenter"},
		{"fixed-lease/partial-unlock-in-flight", 400 * time.Millisecond, "unlock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const name = "loss-op-in-flight"
			srv := redistest.Start(t)
			rdbA := srv.Client(t)
			hookA := &cmdHook{}
			rdbA.AddHook(hookA)
			a := newClient(t, rdbA, redisson.WithWatchdogTimeout(600*time.Millisecond))
			b := newClient(t, srv.Client(t))
			ctx := t.Context()
			var wg sync.WaitGroup
			t.Cleanup(func() { hookA.release(); wg.Wait() })

			var opts []redisson.AcquireOption
			if tc.lease > 0 {
				opts = append(opts, redisson.WithLease(tc.lease))
			}
			h, err := a.Lock(name).Lock(ctx, opts...)
			if err != nil {
				t.Fatalf("A Lock: %v", err)
			}
			var lvl *redisson.Hold
			if tc.op == "unlock" {
				if lvl, err = h.Reenter(ctx); err != nil {
					t.Fatalf("A Reenter: %v", err)
				}
			}

			// From now on A cannot reach Redis: its renewals fail, and its operation waits.
			hookA.hold(nil)
			opDone := make(chan error, 1)
			spawn(&wg, func() {
				if tc.op == "unlock" {
					opDone <- lvl.Unlock(ctx)
					return
				}
				l, err := h.Reenter(ctx)
				if err == nil {
					_ = l.Unlock(ctx)
				}
				opDone <- err
			})
			eventually(t, 5*time.Second, "A's "+tc.op+" to be held back", func() bool { return hookA.heldBack() >= 1 })

			bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			hb, err := b.Lock(name).Lock(bctx)
			if err != nil {
				t.Fatalf("B Lock (A's lease has lapsed): %v", err)
			}
			defer func() { _ = hb.Unlock(context.Background()) }()

			if err := h.Context().Err(); err == nil {
				t.Errorf("B acquired the lock after A's lease lapsed, but A's hold context is still live: "+
					"A was not told (ErrLockLost) before its lease lapsed, because a %s of the same owner was in flight", tc.op)
			} else if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
				t.Errorf("A's hold context cause = %v, want ErrLockLost", cause)
			}
			hookA.release()
			recvWithin(t, opDone, 10*time.Second, "A's "+tc.op)
			faultWaitDone(t, h.Context(), 5*time.Second, "A's hold context to end")
		})
	}
}

// TestLockFixedLeaseEndSignalledWhileRenewalHangs checks that a fixed-lease hold is ended before its
// lease runs out even while a renewal round trip of another lock of the same Client hangs (Redis
// does not answer it, for up to a renewal period): the end of a fixed lease must not wait for the
// renewals, or its holder learns of it only after another Client took the lock. doc.go: "A
// fixed-lease hold ends the same way shortly before its lease runs out."
//
// Forcing: Client A holds a watchdog lock W; its renewal is held back by a hook (A's network is
// down for renewals) until the call's own deadline (one period, 1s here). While it hangs, A takes
// a fixed-lease lock F (300ms) with a command the hook lets through. Client B gets F when it
// expires; A's hold of F must be cancelled by then.
func TestLockFixedLeaseEndSignalledWhileRenewalHangs(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	rdbA := srv.Client(t)
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(3*time.Second))
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	mctx := context.WithValue(ctx, testMark{}, true) // the test's own calls pass the hook
	t.Cleanup(hookA.release)

	hw, err := a.Lock("sched-watchdog").Lock(mctx)
	if err != nil {
		t.Fatalf("Lock W: %v", err)
	}
	hookA.hold(testMarked)
	eventually(t, 5*time.Second, "W's renewal to be sent (and held back)", func() bool { return hookA.heldBack() >= 1 })

	hf, err := a.Lock("sched-fixed").Lock(mctx, redisson.WithLease(300*time.Millisecond))
	if err != nil {
		t.Fatalf("Lock F: %v", err)
	}
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hb, err := b.Lock("sched-fixed").Lock(bctx)
	if err != nil {
		t.Fatalf("B Lock F (A's fixed lease has run out): %v", err)
	}
	defer func() { _ = hb.Unlock(context.Background()) }()
	if hf.Context().Err() == nil {
		t.Errorf("B holds F after A's fixed lease ran out, but A's hold of F is still live: the end of " +
			"its lease waits for the scheduler goroutine, blocked in a renewal round trip of another lock")
	}
	hookA.release()
	faultWaitDone(t, hf.Context(), 5*time.Second, "A's hold of F to end")
	_ = hw.Unlock(mctx)
}

// TestLockRenewalLandingAfterLossDoesNotKeepLock checks that a renewal sent before the owner was
// declared lost, which reaches Redis after the loss (a slow network: the very condition in which
// renewals fail), does not leave the lost owner's lock held: the lease it sets is undone, as for an
// acquisition with an unknown outcome. Otherwise the lock stays held by nobody for up to a whole
// lease after its loss and after its owner's last Unlock (which sends nothing once the owner has
// ended): a renewal must never outlive its hold.
//
// Forcing: Client A's connection goes through a proxy that, once A holds the lock, delays every
// chunk by 450ms. Watchdog 1200ms, margin 0.5: the renewal goes out at +400ms (deadline +600ms),
// the loss is declared at +600ms, the renewal reaches Redis at ~+850ms, while the key (lease until
// +1200ms) still exists; a lease it re-armed would last until ~+2050ms.
func TestLockRenewalLandingAfterLossDoesNotKeepLock(t *testing.T) {
	long(t)
	t.Parallel()
	const (
		name     = "renewal-after-loss"
		watchdog = 1200 * time.Millisecond
		delay    = 450 * time.Millisecond
	)
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(watchdog), redisson.WithLossMargin(0.5))
	ctx := t.Context()
	key := redisson.LockKeyOf(a, name)

	// Warm up: load the acquire, release and renew scripts.
	warmUpScripts(t, a)
	w, err := a.Lock("warmup-renew").Lock(ctx)
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	eventually(t, 5*time.Second, "a renewal", func() bool { return a.Stats().Renewed >= 1 })
	if err := w.Unlock(ctx); err != nil {
		t.Fatalf("warm-up Unlock: %v", err)
	}

	h, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	owner := redisson.OwnerOf(h)
	p.Delay(delay) // the network gets slow
	lost := faultWaitDone(t, h.Context(), 5*time.Second, "the loss (the renewal did not answer in time)")
	p.Delay(0)
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("precondition: hold ended with %v, want ErrLockLost", cause)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("Unlock after the loss = %v, want ErrNotHeld", err)
	}

	// The renewal sent before the loss lands about 250ms after it. A re-armed lease would last until
	// about 1.45s after the loss; the lease in force at the loss ends by 0.6s + the delay after it.
	time.Sleep(time.Until(lost.Add(watchdog/2 + delay + 100*time.Millisecond)))
	if o, expiry := lockHolder(t, admin, key); o == owner {
		t.Errorf("the lock of the owner lost at %v is still held by it, until %v from now: a renewal in flight "+
			"at the loss landed and re-armed it, and nothing undid it (the owner's Unlock sent nothing)",
			lost.Format("15:04:05.000"), time.Until(expiry).Round(time.Millisecond))
	}
}

// TestLockOperationAfterLossDoesNotReArm checks that a re-entry or partial unlock in flight when
// the owner is declared lost (renewals failed until lease − margin), which reaches Redis while the
// key still exists and sets a whole new lease (SET ... PX), does not leave the lock held after the
// owner's last Unlock: the ended owner's Unlock sends nothing, so nobody would renew or release
// that lease, and every other acquirer would be locked out for it. The key's TTL afterwards must
// not exceed what was left of the lease in force at the loss.
func TestLockOperationAfterLossDoesNotReArm(t *testing.T) {
	long(t)
	t.Parallel()
	for _, op := range []string{"reenter", "partial-unlock"} {
		t.Run(op, func(t *testing.T) {
			const watchdog = 1200 * time.Millisecond
			name := "op-after-loss-" + op
			srv := redistest.Start(t)
			admin := srv.Client(t)
			rdbA := srv.Client(t)
			hookA := &cmdHook{}
			rdbA.AddHook(hookA)
			a := newClient(t, rdbA, redisson.WithWatchdogTimeout(watchdog), redisson.WithLossMargin(0.5))
			ctx := t.Context()
			var wg sync.WaitGroup
			t.Cleanup(func() { hookA.release(); wg.Wait() })

			h, err := a.Lock(name).Lock(ctx)
			if err != nil {
				t.Fatalf("Lock: %v", err)
			}
			var lvl *redisson.Hold
			if op == "partial-unlock" {
				if lvl, err = h.Reenter(ctx); err != nil {
					t.Fatalf("Reenter: %v", err)
				}
			}
			armed := time.Now() // the last time the lease was set before the outage
			hookA.hold(nil)
			res := make(chan error, 1)
			spawn(&wg, func() {
				if op == "partial-unlock" {
					res <- lvl.Unlock(ctx)
					return
				}
				l, err := h.Reenter(ctx)
				if err == nil {
					t.Logf("Reenter succeeded after the loss was declared")
					_ = l.Unlock(ctx)
				}
				res <- err
			})
			// The scheduler declares the owner lost (renewals fail) at lease/2; the key lives until lease.
			eventually(t, 5*time.Second, "the loss to be declared", func() bool { return a.Stats().Lost >= 1 })
			hookA.release()
			opErr := recvWithin(t, res, 5*time.Second, op)
			faultWaitDone(t, h.Context(), 5*time.Second, "the hold's context to end")
			if op == "partial-unlock" {
				_ = h.Unlock(ctx) // the owner's last level
			}
			t.Logf("%s = %v", op, opErr)
			v, gerr := admin.Get(ctx, redisson.LockKeyOf(a, name)).Result()
			if gerr != nil {
				return
			}
			owner, n, _ := redisson.DecodeLockValue(v)
			ttl := admin.PTTL(ctx, redisson.LockKeyOf(a, name)).Val()
			left := watchdog - time.Since(armed)
			if owner == redisson.OwnerOf(h) && ttl > left+100*time.Millisecond {
				t.Errorf("after the loss, the %s re-armed the lock of the ended owner (%d levels): TTL %v, "+
					"while the lease in force at the loss had %v left; nobody renews or releases it", op, n, ttl, left)
			}
		})
	}
}

// A hold whose fixed lease passed its loss margin has ended (its context cancelled with ErrLockLost),
// but Redis still holds the lock for the rest of the lease: an Unlock then still releases it (the
// release is owner-checked) and wakes or hands the lock to the waiters, and still reports the loss.
// With a 3s lease and a 0.5 margin the hold ends 1.5s in; a waiter on another Client must get the
// lock soon after the Unlock, long before the lease would run out.
func TestLockUnlockAfterFixedLeaseMarginReleases(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range append(slices.Clip(lockKinds), "SpinLock", "ReadWriteLock", "CompatLock", "CompatFairLock", "CompatReadWriteLock") {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			unlockPastMarginServes(t, kind, false)
		})
	}
}

// unlockPastMarginServes takes a 3s fixed lease of lock kind through a Client with a 0.5 loss
// margin, lets a waiter wait for it (through another Client, or the same if sameClient), and checks
// that an Unlock after the hold ended at its margin reports the loss and lets the waiter in within
// the lease (see servedWithinLease).
func unlockPastMarginServes(t *testing.T, kind string, sameClient bool) {
	t.Helper()
	opts := []redisson.Option{redisson.WithLossMargin(0.5), redisson.WithSpinBackoff(time.Millisecond, 10*time.Millisecond)}
	if strings.HasPrefix(kind, "Compat") {
		opts = append(opts, redisson.WithRedissonCompat())
	}
	srv := redistest.Start(t)
	a := newClient(t, srv.Client(t), opts...)
	b, who := a, "local waiter"
	if !sameClient {
		b, who = newClient(t, srv.Client(t), opts...), "waiter"
	}
	ctx := t.Context()
	const name, lease = "unlock-past-margin", 3 * time.Second
	h, err := lockOf(a, kind, name).Lock(ctx, redisson.WithLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	acquired := time.Now()
	got := make(chan error, 1)
	go func() {
		hb, err := lockOf(b, kind, name).TryLock(ctx, redisson.WithWait(10*time.Second))
		if err == nil {
			err = hb.Unlock(ctx)
		}
		got <- err
	}()
	<-h.Context().Done()
	if err := context.Cause(h.Context()); !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("the hold ended with %v; want ErrLockLost (its lease's margin)", err)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
		t.Errorf("Unlock past the margin = %v; want ErrNotHeld and ErrLockLost", err)
	}
	servedWithinLease(t, got, acquired, lease, who)
}

// A hold lost because its renewals got no answer says so in the library's words: its cause matches
// ErrLockLost and not context.DeadlineExceeded (the renewals' deadline is the scheduler's, not the
// holder's, who would take it for its own), and the message says that Redis did not answer in time,
// and what the network said, rather than "context deadline exceeded".
func TestLockLossCauseSaysRedisDidNotAnswer(t *testing.T) {
	for _, fault := range []string{"stopped", "paused"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			c := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(time.Second))
			h := mustLock(t, c.Lock("loss-cause"), t.Context())
			switch fault {
			case "stopped":
				mustDo(t, "stop", srv.Stop())
			case "paused":
				mustDo(t, "pause", srv.Pause())
				t.Cleanup(func() { _ = srv.Resume() })
			}
			select {
			case <-h.Context().Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the hold did not end within 5s of Redis going away (watchdog 1s)")
			}
			cause := context.Cause(h.Context())
			if !errors.Is(cause, redisson.ErrLockLost) || errors.Is(cause, context.DeadlineExceeded) {
				t.Errorf("cause = %v; want ErrLockLost and not context.DeadlineExceeded", cause)
			}
			if msg := cause.Error(); strings.Contains(msg, "context deadline exceeded") || !strings.Contains(msg, "no answer from Redis in time") {
				t.Errorf("cause = %q; want it to say that Redis did not answer in time, not that a context's deadline passed", msg)
			}
		})
	}
}

// The read side of a ReadWriteLock past its fixed lease's loss margin: the reader's Unlock still
// releases its read hold (owner-checked), so that a writer waiting on another Client gets the lock
// soon after, long before the reader's lease would have run out; in both layouts. Also: several
// levels (Reenter) unlocked after the margin, each reporting the loss, the first freeing the lock.
func TestReadLockUnlockAfterFixedLeaseMarginReleases(t *testing.T) {
	long(t)
	t.Parallel()
	for _, compat := range []bool{false, true} {
		t.Run(map[bool]string{false: "ours", true: "compat"}[compat], func(t *testing.T) {
			t.Parallel()
			var opts []redisson.Option
			if compat {
				opts = append(opts, redisson.WithRedissonCompat())
			}
			srv := redistest.Start(t)
			a := newClient(t, srv.Client(t), append(opts, redisson.WithLossMargin(0.5))...)
			b := newClient(t, srv.Client(t), opts...)
			ctx := t.Context()
			const name, lease = "read-past-margin", 3 * time.Second
			h, err := a.ReadWriteLock(name).RLock(ctx, redisson.WithLease(lease))
			if err != nil {
				t.Fatal(err)
			}
			acquired := time.Now()
			h2, err := h.Reenter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() {
				hb, err := b.ReadWriteLock(name).TryLock(ctx, redisson.WithWait(10*time.Second))
				if err == nil {
					err = hb.Unlock(ctx)
				}
				got <- err
			}()
			<-h.Context().Done()
			for i, l := range []*redisson.Hold{h2, h} {
				if err := l.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
					t.Errorf("Unlock %d past the margin = %v; want ErrNotHeld and ErrLockLost", i, err)
				}
			}
			servedWithinLease(t, got, acquired, lease, "writer")
		})
	}
}

// As TestLockUnlockAfterFixedLeaseMarginReleases, with the waiter a goroutine of the same Client
// (queued in its local queue when the hold ends: the end gives it the turn, and it contends in
// Redis while the ended owner's lock is still there): the Unlock past the margin frees the lock for
// it, soon, not at the lease's end.
func TestLockUnlockAfterFixedLeaseMarginReleasesToLocalWaiter(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range []string{"Lock", "FencedLock", "SpinLock", "ReadWriteLock", "CompatLock", "CompatReadWriteLock"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			unlockPastMarginServes(t, kind, true)
		})
	}
}

// servedWithinLease checks that the waiter whose result comes on got (called who) got the lock soon
// after an Unlock past a fixed lease's margin: more than 500ms before that lease, taken at acquired,
// would have run out (else the Unlock left the lock to its TTL).
func servedWithinLease(t *testing.T, got <-chan error, acquired time.Time, lease time.Duration, who string) {
	t.Helper()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the %s: %v", who, err)
		}
		if left := lease - time.Since(acquired); left < 500*time.Millisecond {
			t.Errorf("the %s got the lock only %v before the lease's end: the Unlock did not release it", who, left)
		}
	case <-time.After(time.Until(acquired.Add(lease - 500*time.Millisecond))):
		t.Fatalf("the %s did not get the lock after the Unlock, within the lease: the lock stayed until its TTL", who)
	}
}
