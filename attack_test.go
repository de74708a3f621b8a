package redisson_test

// Adversarial tests: each one forces an interleaving (held commands, held or refused dials, a
// delaying proxy) and asserts a guarantee stated in doc.go / the API docs. Each fails on the code it
// was written against, for the reason given in its comment.

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// attackWarmUp loads the scripts into srv so that later calls are single EVALSHA commands.
func attackWarmUp(t *testing.T, c *redisson.Client) {
	t.Helper()
	ctx := context.WithValue(t.Context(), regressMark{}, true)
	h, err := c.Lock("attack-warmup").Lock(ctx)
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	lvl, err := h.Reenter(ctx)
	if err != nil {
		t.Fatalf("warm-up Reenter: %v", err)
	}
	if err := lvl.Unlock(ctx); err != nil {
		t.Fatalf("warm-up Unlock: %v", err)
	}
	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("warm-up Unlock: %v", err)
	}
}

// TestAttackLossDeferredPastLease: a loss is deferred while one of the owner's operations is in
// flight (owner.lost stores it in o.pending when o.inflight > 0) and is only delivered when that
// operation returns. If the operation is slow (the network to Redis is down or slow, which is when
// losses happen), the owner is told after its lease has lapsed and after another Client has
// acquired the lock: two owners, one of them unaware. doc.go: "the owner is told (ErrLockLost)
// before its lease can lapse when the watchdog can no longer vouch for it" and "A fixed-lease hold
// ends the same way shortly before its lease runs out".
//
// Forcing: every command of Client A is held back by a hook (renewals fail at their deadline, the
// in-flight operation waits), while Client B, on its own connection, waits for the lock and gets
// it when A's key expires. When B's Lock returns, A's hold context must already be cancelled.
func TestAttackLossDeferredPastLease(t *testing.T) {
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
			const name = "attack-deferred"
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
			regressGo(&wg, func() {
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
			regressWait(t, opDone, 10*time.Second, "A's "+tc.op)
			faultWaitDone(t, h.Context(), 5*time.Second, "A's hold context to end")
		})
	}
}

// TestAttackFixedLeaseEndSignalledLateWhileRenewalHangs: the renewal scheduler is one goroutine
// that both renews watchdog locks and ends fixed-lease holds. A renewal round trip blocks it for up
// to a renewal period (a third of the watchdog timeout: 10s by default) when Redis does not answer,
// and a fixed-lease hold that ends meanwhile is told only when that round trip gives up, long after
// its key expired and another Client took the lock. doc.go: "A fixed-lease hold ends the same way
// shortly before its lease runs out."
//
// Forcing: Client A holds a watchdog lock W; its renewal is held back by a hook (A's network is
// down for renewals) until the call's own deadline (one period, 1s here). While it hangs, A takes
// a fixed-lease lock F (300ms) with a command the hook lets through. Client B gets F when it
// expires; A's hold of F must be cancelled by then.
func TestAttackFixedLeaseEndSignalledLateWhileRenewalHangs(t *testing.T) {
	srv := redistest.Start(t)
	rdbA := srv.Client(t)
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(3*time.Second))
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	mctx := context.WithValue(ctx, regressMark{}, true) // the test's own calls pass the hook
	t.Cleanup(hookA.release)

	hw, err := a.Lock("attack-sched-w").Lock(mctx)
	if err != nil {
		t.Fatalf("Lock W: %v", err)
	}
	hookA.hold(regressMarked)
	eventually(t, 5*time.Second, "W's renewal to be sent (and held back)", func() bool { return hookA.heldBack() >= 1 })

	hf, err := a.Lock("attack-sched-f").Lock(mctx, redisson.WithLease(300*time.Millisecond))
	if err != nil {
		t.Fatalf("Lock F: %v", err)
	}
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hb, err := b.Lock("attack-sched-f").Lock(bctx)
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

// TestAttackDelayedAcquireAfterUndo: a fresh acquisition whose outcome is unknown is "undone on a
// detached context before the error is returned" (doc.go), but the undo only releases what is
// already there. If the acquiring command reaches Redis after the undo (a slow network: go-redis
// gave up at the deadline while the command was still on its way; the undo went out on a new
// connection), the SET NX PX takes the lock for an owner that no longer exists: nobody renews or
// releases it, and every other acquirer is locked out for a whole lease, although Lock returned
// "not obtained, nothing held".
//
// Forcing: a proxy delays the chunk carrying SET NX by 500ms; the caller's deadline is 100ms; a
// hook sets the delay back to 0 when the undo (EVALSHA) is sent, so the undo runs first.
func TestAttackDelayedAcquireAfterUndo(t *testing.T) {
	const name = "attack-delayed-setnx"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(10*time.Second))
	b := newClient(t, srv.Client(t))
	attackWarmUp(t, a)

	var mu sync.Mutex
	undoSent := false
	hookA.setBefore(func(_ context.Context, cmd string) {
		if strings.EqualFold(cmd, "evalsha") || strings.EqualFold(cmd, "eval") {
			p.Delay(0)
			mu.Lock()
			undoSent = true
			mu.Unlock()
		}
	})
	p.Delay(500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	_, err := a.Lock(name).TryLock(ctx)
	cancel()
	p.Delay(0)
	hookA.setBefore(nil)
	if err == nil {
		t.Fatalf("precondition: TryLock succeeded through a 500ms delay with a 100ms deadline")
	}
	if !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock = %v, want ErrNotObtained", err)
	}
	mu.Lock()
	sent := undoSent
	mu.Unlock()
	if !sent {
		t.Fatalf("precondition: no undo was sent after the acquisition with an unknown outcome (TryLock = %v)", err)
	}
	t.Logf("TryLock = %v", err)

	// The delayed SET NX arrives after the undo; the undo is repeated in the background (after 250ms,
	// 1s and 4s) and frees what it finds, rather than leaving the lock held for its 10s lease.
	eventually(t, 6*time.Second, "the late acquisition to be undone", func() bool {
		err := admin.Get(t.Context(), redisson.LockKeyOf(a, name)).Err()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("GET: %v", err)
		}
		return errors.Is(err, redis.Nil)
	})
	if h, err := b.Lock(name).TryLock(t.Context()); err != nil {
		t.Errorf("another Client cannot take the lock nobody holds: %v", err)
	} else {
		_ = h.Unlock(t.Context())
	}
}

// TestAttackResentFinalUnlockAfterHistoryTrimmed: a final release is applied, its reply lost, and
// while its re-send is held back another Client locks and unlocks the lock 200 times. The re-send
// must still answer what the first run did (it once found its entry trimmed from a shared history
// of 16 and answered "not held", so Unlock returned ErrNotHeld and ErrLockLost and EventLost was
// emitted for a lock that was released). doc.go: "A repeat answers what the first run did, even
// after the lock changed hands any number of times."
func TestAttackResentFinalUnlockAfterHistoryTrimmed(t *testing.T) {
	const name = "attack-history"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p)
	var evMu sync.Mutex
	var lost []error
	a := newClient(t, rdbA, redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			evMu.Lock()
			lost = append(lost, e.Err)
			evMu.Unlock()
		}
	}))
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	regressWarmUp(t, ctx, d, a)

	g1, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	regressGo(&wg, func() { res <- g1.Unlock(ctx) })
	regressWait(t, reached, 5*time.Second, "the re-send of G1's final unlock to open a new connection")
	p.DropReplies(0)

	// The lock was released by the first run; others use it meanwhile.
	const cycles = 200
	for i := 0; i < cycles; i++ {
		h, err := b.Lock(name).TryLock(ctx)
		if err != nil {
			t.Fatalf("B TryLock %d: %v", i, err)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("B Unlock %d: %v", i, err)
		}
	}
	dialA.resumeDials()
	if err := regressWait(t, res, 10*time.Second, "G1's Unlock"); err != nil {
		t.Errorf("G1's final Unlock (applied, reply lost, re-sent after %d other releases) = %v "+
			"(ErrNotHeld %v, ErrLockLost %v), want nil", cycles, err,
			errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost))
	}
	evMu.Lock()
	defer evMu.Unlock()
	for _, e := range lost {
		t.Errorf("EventLost emitted for G1's lock, which its Unlock released: %v", e)
	}
}

// TestAttackHistoryKeyForeignStringModified: the release history once lived at "{name}:rel", where an
// application string (empty, or starting like an entry) was rewritten and given a TTL. The history key
// now carries the Client's random id ("{name}:rel:<client id>"), so no application data is there by
// accident: data at "{name}:rel", or at another Client's history key, is untouched by a release.
func TestAttackHistoryKeyForeignStringModified(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"empty", ""},
		{"entry-like", "app=r;payload that the application stored here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, admin, srv := setup(t)
			other := newClient(t, srv.Client(t))
			ctx := t.Context()
			lname := "attack-hist-" + tc.name
			keys := []string{redisson.LockKeyOf(c, lname) + ":rel", redisson.HistoryKeyOf(other, lname)}
			for _, k := range keys {
				if err := admin.Set(ctx, k, tc.value, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			h, err := c.Lock(lname).Lock(ctx)
			if err != nil {
				t.Fatalf("Lock: %v", err)
			}
			if err := h.Unlock(ctx); err != nil {
				t.Fatalf("Unlock: %v", err)
			}
			for _, k := range keys {
				got, err := admin.Get(ctx, k).Result()
				ttl := admin.PTTL(ctx, k).Val()
				if err != nil || got != tc.value || ttl != -1 {
					t.Errorf("string at %s = %q (err %v, TTL %v) after a release of lock %q; want %q untouched, no TTL",
						k, got, err, ttl, lname, tc.value)
				}
			}
		})
	}
}

// TestAttackHoldCountAfterClose: Client.Close: "Every later call returns ErrClosed." and the hold
// has been told it is lost; Hold.HoldCount does not check the Client and reports the owner's
// levels from Redis (the lock is left there by Close), as if it still held the lock.
func TestAttackHoldCountAfterClose(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	h, err := c.Lock("attack-close-count").Lock(ctx)
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

// TestAttackHugeRepollIntervalBreaksHandOver: WithRepollInterval accepts any positive duration, but
// the hand-over reservation is computed as 2×repoll+1s in time.Duration and overflows: with
// repoll 2^62ns it is negative, the release script's SET ... PX fails, and every final unlock of a
// claimed lock fails ("invalid expire time"), leaving the lock to expire (a valid option; it must
// either be refused with ErrInvalidArgument or work).
func TestAttackHugeRepollIntervalBreaksHandOver(t *testing.T) {
	const name = "attack-repoll"
	srv := redistest.Start(t)
	a, err := redisson.New(srv.Client(t), redisson.WithRepollInterval(1<<62))
	if err != nil {
		if !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Fatalf("New = %v, want nil or ErrInvalidArgument", err)
		}
		return
	}
	t.Cleanup(func() { _ = a.Close() })
	rdbB := srv.Client(t)
	hookB := &cmdHook{}
	rdbB.AddHook(hookB)
	b := newClient(t, rdbB, redisson.WithRepollInterval(20*time.Millisecond))
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)

	h, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("A Lock: %v", err)
	}
	wRes := make(chan error, 1)
	regressGo(&wg, func() {
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		hw, err := b.Lock(name).Lock(wctx)
		if err == nil {
			_ = hw.Unlock(context.Background())
		}
		wRes <- err
	})
	eventually(t, 5*time.Second, "B's waiter to claim the lock", hookB.claimed)
	if err := h.Unlock(ctx); err != nil {
		t.Errorf("A's Unlock of a claimed lock (repoll 2^62ns) = %v, want nil", err)
	}
	if err := regressWait(t, wRes, 10*time.Second, "B's waiter"); err != nil {
		t.Errorf("B's waiter (3s): %v", err)
	}
}

// attackFailDialer wraps regressDialer: it refuses the next n command connections (as a network
// that is down would), then dials normally.
type attackFailDialer struct {
	*regressDialer
	mu   sync.Mutex
	fail int
	seen int // refused so far
}

func (d *attackFailDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if !regressPubSubDial() {
		d.mu.Lock()
		if d.fail > 0 {
			d.fail--
			d.seen++
			d.mu.Unlock()
			return nil, errors.New("attack: connection refused (simulated)")
		}
		d.mu.Unlock()
	}
	return d.regressDialer.dial(ctx, network, addr)
}

// TestAttackHistoryWindowShorterThanResend: the release history is kept for resendWindow(), computed
// as (MaxRetries+1)×(DialTimeout+ReadTimeout+WriteTimeout+MaxRetryBackoff)+1s. But go-redis dials
// each connection up to DialerRetries times (default 5), each with its own DialTimeout and a
// DialerRetryTimeout pause between them, and may also wait PoolTimeout for a connection: one
// attempt can take many times longer than counted (with defaults ~25s of dialing instead of 5s). A
// re-sent final release that arrives after the history expired answers "not held": Unlock returns
// ErrNotHeld/ErrLockLost and EventLost is reported for a lock it released. doc.go: the history
// "keeps the last releases for as long as go-redis may re-send one (computed from the client's
// retry and timeout settings)".
//
// Forcing: MaxRetries 1 and 200ms timeouts give a 2.2s history; DialerRetryTimeout is 1s. The final
// release's reply is dropped, and the first 3 dials of the re-send are refused, so the re-send (the
// 4th dial of go-redis' second attempt) runs ~3s after the first run.
func TestAttackHistoryWindowShorterThanResend(t *testing.T) {
	const name = "attack-window"
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rd := &regressDialer{proxy: p.Addr(), direct: srv.Addr(), resume: make(chan struct{})}
	fd := &attackFailDialer{regressDialer: rd}
	rdbA := srv.Client(t, func(o *redis.Options) {
		o.Addr = p.Addr()
		o.Dialer = fd.dial
		o.MaxRetries = 1
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 8*time.Millisecond
		o.DialerRetryTimeout = time.Second
	})
	var evMu sync.Mutex
	var lost []error
	a := newClient(t, rdbA, redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			evMu.Lock()
			lost = append(lost, e.Err)
			evMu.Unlock()
		}
	}))
	ctx := t.Context()
	attackWarmUp(t, a)
	// The window counts every dial attempt go-redis may make (DialerRetries, each with its pause).
	if ttl := srv.Client(t).PTTL(ctx, redisson.HistoryKeyOf(a, "attack-warmup")).Val(); ttl <= 3*time.Second {
		t.Fatalf("history TTL %v, want more than the 3s a re-send can take here", ttl)
	}

	h, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	regressOneConn(t, rdbA)
	fd.mu.Lock()
	fd.fail = 3
	fd.mu.Unlock()
	p.DropReplies(1)
	start := time.Now()
	err = h.Unlock(ctx)
	took := time.Since(start)
	p.DropReplies(0)
	fd.mu.Lock()
	refused := fd.seen
	fd.mu.Unlock()
	if refused != 3 {
		t.Fatalf("precondition: %d dials refused, want 3 (Unlock = %v after %v)", refused, err, took)
	}
	t.Logf("final Unlock (reply dropped, re-sent after %v) = %v", took, err)
	if err != nil {
		t.Errorf("final Unlock whose first run released the lock = %v (ErrNotHeld %v, ErrLockLost %v), want nil: "+
			"the re-send arrived %v after the first run, after the history (kept for the computed re-send window) expired",
			err, errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost), took)
	}
	evMu.Lock()
	defer evMu.Unlock()
	for _, e := range lost {
		t.Errorf("EventLost emitted for a lock its Unlock released: %v", e)
	}
}

// TestAttackCloseWithOperationInFlight: Client.Close: "The ownership context of every hold is
// cancelled with a cause matching ErrLockLost and ErrClosed ... Every later call returns
// ErrClosed." When one of the owner's operations is in flight (here a partial Unlock whose command
// is slow), Close's loss is deferred (owner.lost stores it as pending): after Close has returned
// the hold's context is still live, and a Reenter made after Close succeeds, re-arming the lease
// in Redis for a lock nobody will renew or release.
func TestAttackCloseWithOperationInFlight(t *testing.T) {
	const name = "attack-close-inflight"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdbA := srv.Client(t)
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA)
	ctx := t.Context()
	mctx := context.WithValue(ctx, regressMark{}, true)
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
	hookA.hold(regressMarked) // unmarked commands (the partial unlock below) wait
	unlockRes := make(chan error, 1)
	regressGo(&wg, func() { unlockRes <- lvl.Unlock(ctx) })
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
	regressWait(t, unlockRes, 5*time.Second, "the partial unlock")
}

// TestAttackResentForceUnlockDeletesNextHolder: ForceUnlock "deletes the lock whoever holds it"
// once; but its script is not idempotent (lock_force_unlock.lua: "a repeat that finds a new holder
// deletes it too"). When its reply is lost and go-redis re-sends it after another owner acquired
// the freed lock, that owner's lock is deleted too: a third acquirer then holds the lock while
// the second still does (it learns of the loss only at its next renewal, up to a third of the
// watchdog timeout later). The caller asked to break the lock of the holder it saw, once.
func TestAttackResentForceUnlockDeletesNextHolder(t *testing.T) {
	const name = "attack-force"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbF, dialF := regressProxied(t, srv, p)
	f := newClient(t, rdbF)
	x := newClient(t, srv.Client(t))
	y := newClient(t, srv.Client(t))
	z := newClient(t, srv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialF.resumeDials(); wg.Wait() })
	// Load the script through f.
	if _, err := f.Lock(name).ForceUnlock(ctx); err != nil {
		t.Fatalf("warm-up ForceUnlock: %v", err)
	}

	hx, err := x.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("X Lock: %v", err)
	}
	regressOneConn(t, rdbF)
	reached := dialF.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	regressGo(&wg, func() {
		_, err := f.Lock(name).ForceUnlock(ctx)
		res <- err
	})
	regressWait(t, reached, 5*time.Second, "the re-send of ForceUnlock to open a new connection")
	p.DropReplies(0)
	if admin.Exists(ctx, redisson.LockKeyOf(f, name)).Val() != 0 {
		t.Fatalf("precondition: the first run of ForceUnlock did not delete X's lock")
	}
	_ = hx // X learns of the force unlock at its next renewal
	hy, err := y.Lock(name).TryLock(ctx)
	if err != nil {
		t.Fatalf("Y TryLock after the force unlock: %v", err)
	}
	dialF.resumeDials()
	if err := regressWait(t, res, 5*time.Second, "ForceUnlock"); err != nil {
		t.Fatalf("ForceUnlock: %v", err)
	}
	if hz, err := z.Lock(name).TryLock(ctx); err == nil {
		t.Errorf("Z acquired the lock while Y (which acquired after the force unlock) still holds it "+
			"(Y's hold context live: %v): the re-sent ForceUnlock deleted Y's lock", hy.Context().Err() == nil)
		_ = hz.Unlock(ctx)
	}
	_ = hy.Unlock(ctx)
}

// TestAttackOperationAfterLossReArmsLock: a Reenter or partial Unlock in flight when the owner is
// declared lost (renewals failed until lease − margin) reaches Redis while the key still exists: it
// re-arms the full lease (SET ... PX) for an owner that has ended. The Reenter returns
// ErrNotObtained/ErrNotHeld/ErrLockLost ("On failure nothing more is held") without undoing its
// level; the owner's remaining Unlock, being ended, sends nothing. Either way the lock stays held
// for a whole new lease after the owner's last Unlock, renewed by nobody, blocking every other
// acquirer.
func TestAttackOperationAfterLossReArmsLock(t *testing.T) {
	for _, op := range []string{"reenter", "partial-unlock"} {
		t.Run(op, func(t *testing.T) {
			const watchdog = 1200 * time.Millisecond
			name := "attack-after-loss-" + op
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
			regressGo(&wg, func() {
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
			opErr := regressWait(t, res, 5*time.Second, op)
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

// TestAttackNewTypedNilClient: New: "Invalid options or a nil rdb return an error matching
// ErrInvalidArgument". A nil *redis.Client (or *redis.ClusterClient) in the interface is not == nil,
// and New then calls its Options method (resendWindow, timeoutsOff), which dereferences it: panic.
func TestAttackNewTypedNilClient(t *testing.T) {
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
