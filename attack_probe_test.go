package redisson_test

// Probes: forced interleavings that the library handles correctly (they pass). Kept as evidence of
// what was tried; they are not regression tests for a defect.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// probeHeir sets up Client A (hooked) with G1 holding name and G2 queued behind it in A. It returns
// G1's hold, G2's cancel and result channel.
func probeHeir(t *testing.T, a *redisson.Client, name string, wg *sync.WaitGroup) (*redisson.Hold, context.CancelFunc, chan regressAcq) {
	t.Helper()
	ctx := t.Context()
	g1, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	g2ctx, cancel := context.WithCancel(ctx)
	res := make(chan regressAcq, 1)
	regressGo(wg, func() {
		var r regressAcq
		var h *redisson.Hold
		regressInLock(func() { h, r.err = a.Lock(name).Lock(g2ctx) })
		if r.err == nil {
			r.h = heldHold{h}
			_ = h.Unlock(context.Background())
		}
		res <- r
	})
	eventually(t, 5*time.Second, "G2 to queue in A", func() bool { return regressParked() >= 1 })
	return g1, cancel, res
}

// TestProbeHeirCancelledDuringTransfer: G1's final release transfers the lock to G2 (the local
// heir) while G2's wait is cancelled; the release is held back until G2's Lock has returned. The
// transfer must be undone: the lock free, G1's Unlock nil, G2 not obtained.
func TestProbeHeirCancelledDuringTransfer(t *testing.T) {
	const name = "probe-heir-cancel"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdbA := srv.Client(t)
	hook := &cmdHook{}
	rdbA.AddHook(hook)
	a := newClient(t, rdbA)
	var wg sync.WaitGroup
	t.Cleanup(func() { hook.release(); wg.Wait() })
	attackWarmUp(t, a)
	g1, cancelG2, g2 := probeHeir(t, a, name, &wg)

	hook.hold(nil)
	unlock := make(chan error, 1)
	regressGo(&wg, func() { unlock <- g1.Unlock(context.Background()) })
	eventually(t, 5*time.Second, "G1's release to be held", func() bool { return hook.heldBack() >= 1 })
	cancelG2()
	r := regressWait(t, g2, 5*time.Second, "G2's Lock")
	hook.release()
	if err := regressWait(t, unlock, 5*time.Second, "G1's Unlock"); err != nil {
		t.Errorf("G1 Unlock = %v", err)
	}
	if r.err == nil {
		t.Logf("G2 got the lock although cancelled (allowed: handed at the moment ctx ended)")
	}
	eventually(t, 5*time.Second, "the lock to be free", func() bool {
		return admin.Exists(context.Background(), redisson.LockKeyOf(a, name)).Val() == 0
	})
	// The gate must be free: another local acquisition succeeds at once.
	h, err := a.Lock(name).TryLock(t.Context())
	if err != nil {
		t.Fatalf("TryLock after the undone transfer: %v", err)
	}
	_ = h.Unlock(t.Context())
}

// TestProbeCloseDuringTransfer: Close runs while G1's final release (transferring to G2) is held.
func TestProbeCloseDuringTransfer(t *testing.T) {
	const name = "probe-heir-close"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdbA := srv.Client(t)
	hook := &cmdHook{}
	rdbA.AddHook(hook)
	a := newClient(t, rdbA)
	var wg sync.WaitGroup
	t.Cleanup(func() { hook.release(); wg.Wait() })
	attackWarmUp(t, a)
	g1, cancelG2, g2 := probeHeir(t, a, name, &wg)
	defer cancelG2()

	hook.hold(nil)
	unlock := make(chan error, 1)
	regressGo(&wg, func() { unlock <- g1.Unlock(context.Background()) })
	eventually(t, 5*time.Second, "G1's release to be held", func() bool { return hook.heldBack() >= 1 })
	closed := make(chan struct{})
	regressGo(&wg, func() { _ = a.Close(); close(closed) })
	regressWait(t, closed, 5*time.Second, "Close")
	hook.release()
	if err := regressWait(t, unlock, 5*time.Second, "G1's Unlock"); err != nil {
		t.Logf("G1 Unlock after Close = %v", err)
	}
	r := regressWait(t, g2, 5*time.Second, "G2's Lock")
	if r.err == nil || !errors.Is(r.err, redisson.ErrClosed) {
		t.Errorf("G2 Lock = %v, want ErrClosed", r.err)
	}
	eventually(t, 5*time.Second, "the lock to be free", func() bool {
		return admin.Exists(context.Background(), redisson.LockKeyOf(a, name)).Val() == 0
	})
}

// TestProbeClaimerCancelledWhileHandedOver: W (Client B) claims; A's release hands it to W while W's
// commands are held and W's wait is cancelled: W must release what it was handed.
func TestProbeClaimerCancelledWhileHandedOver(t *testing.T) {
	const name = "probe-claim-cancel"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	a := newClient(t, srv.Client(t))
	rdbB := srv.Client(t)
	hookB := &cmdHook{}
	rdbB.AddHook(hookB)
	b := newClient(t, rdbB, redisson.WithRepollInterval(20*time.Millisecond))
	var wg sync.WaitGroup
	t.Cleanup(func() { hookB.release(); wg.Wait() })
	ctx := t.Context()
	h, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	wres := make(chan error, 1)
	regressGo(&wg, func() {
		hw, err := b.Lock(name).Lock(wctx)
		if err == nil {
			_ = hw.Unlock(context.Background())
		}
		wres <- err
	})
	eventually(t, 5*time.Second, "W to claim", hookB.claimed)
	hookB.hold(nil)
	eventually(t, 5*time.Second, "W idle", func() bool { return hookB.inFlight() == 0 })
	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("A Unlock: %v", err)
	}
	v := admin.Get(ctx, redisson.LockKeyOf(a, name)).Val()
	t.Logf("after hand-over: %q", v)
	cancel()
	hookB.release()
	if err := regressWait(t, wres, 5*time.Second, "W"); err == nil {
		t.Logf("W obtained (handed at the moment its ctx ended)")
	}
	eventually(t, 5*time.Second, "the lock to be free", func() bool {
		return admin.Exists(context.Background(), redisson.LockKeyOf(a, name)).Val() == 0
	})
}

// TestProbeReenterRacesFinalUnlock: many rounds of Reenter racing the only level's Unlock on one
// Hold from two goroutines; at the end, the lock is held iff the Reenter succeeded, and its
// Unlock frees it.
func TestProbeReenterRacesFinalUnlock(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	for i := 0; i < 200; i++ {
		h, err := c.Lock("probe-race").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var lvl *redisson.Hold
		var rerr, uerr error
		var wg sync.WaitGroup
		spawn(&wg, func() { lvl, rerr = h.Reenter(ctx) })
		spawn(&wg, func() { uerr = h.Unlock(ctx) })
		wg.Wait()
		if uerr != nil {
			t.Fatalf("Unlock = %v", uerr)
		}
		held := admin.Exists(ctx, redisson.LockKeyOf(c, "probe-race")).Val() == 1
		if (rerr == nil) != held {
			t.Fatalf("round %d: Reenter err %v, lock held %v", i, rerr, held)
		}
		if rerr == nil {
			if n, _ := lvl.HoldCount(ctx); n != 1 {
				t.Fatalf("HoldCount = %d", n)
			}
			if err := lvl.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if admin.Exists(ctx, redisson.LockKeyOf(c, "probe-race")).Val() != 0 {
				t.Fatal("still held")
			}
		} else if !errors.Is(rerr, redisson.ErrNotHeld) {
			t.Fatalf("Reenter = %v", rerr)
		}
	}
}

// TestProbeBadInput: bad input gives typed errors, touches nothing, never panics.
func TestProbeBadInput(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	var nilCtx context.Context
	if _, err := c.Lock("").Lock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("empty name: %v", err)
	}
	if _, err := c.Lock("}x").TryLock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("}x: %v", err)
	}
	if _, err := c.Lock("x").Lock(nilCtx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("nil ctx: %v", err)
	}
	var h redisson.Hold
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("zero Hold: %v", err)
	}
	if _, err := (*redisson.Hold)(nil).Reenter(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("nil Hold: %v", err)
	}
	var l redisson.Lock
	if _, err := l.Lock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("zero Lock: %v", err)
	}
	if _, err := c.Lock("x").Lock(ctx, redisson.WithLease(0)); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("lease 0: %v", err)
	}
	if err := admin.HSet(ctx, redisson.LockKeyOf(c, "hash"), "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := c.Lock("hash").Lock(wctx); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("hash: %v", err)
	}
	if _, err := c.Lock("hash").ForceUnlock(ctx); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("hash force: %v", err)
	}
	if admin.HGet(ctx, redisson.LockKeyOf(c, "hash"), "f").Val() != "v" {
		t.Errorf("hash modified")
	}
	_ = redis.Nil
}
