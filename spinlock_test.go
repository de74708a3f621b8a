package redisson_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// A SpinLock against the other lock kinds, and its waits: a SpinLock on the name of a held Lock,
// FairLock or FencedLock (and each of those on a held SpinLock's name), waiting or not, fails at
// once with ErrWrongType; TryLock with WithWait(300ms) gives up at the bound; a spinning Lock
// returns context.Canceled promptly when its context is cancelled, and no longer counts as waiting;
// ContextWithHold re-enters a held SpinLock.
func TestSpinLockKindsWaitBoundsAndReentry(t *testing.T) {
	t.Parallel()
	c, _, srv := setup(t, redisson.WithSpinBackoff(time.Millisecond, 20*time.Millisecond))
	ctx := t.Context()
	for _, kind := range lockKinds {
		name := "spin-kind-" + kind
		h := mustLock(t, lockOf(c, kind, name), ctx)
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if _, err := c.SpinLock(name).Lock(wctx); !errors.Is(err, redisson.ErrWrongType) || wctx.Err() != nil {
			t.Errorf("SpinLock over a held %s: %v; want ErrWrongType at once", kind, err)
		}
		cancel()
		mustUnlock(t, h)
		sh := mustLock(t, c.SpinLock(name), ctx)
		wctx, cancel = context.WithTimeout(ctx, 2*time.Second)
		if _, err := lockOf(c, kind, name).Lock(wctx); !errors.Is(err, redisson.ErrWrongType) || wctx.Err() != nil {
			t.Errorf("%s over a held SpinLock: %v; want ErrWrongType at once", kind, err)
		}
		cancel()
		mustUnlock(t, sh)
	}

	other := newClient(t, srv.Client(t))
	held := mustLock(t, c.SpinLock("spin-bound"), ctx)
	start := time.Now()
	_, err := other.SpinLock("spin-bound").TryLock(ctx, redisson.WithWait(300*time.Millisecond))
	if took := time.Since(start); !errors.Is(err, redisson.ErrNotObtained) || took < 280*time.Millisecond || took > time.Second {
		t.Errorf("TryLock(WithWait(300ms)) = %v after %v", err, took)
	}
	cctx, ccancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() {
		_, err := other.SpinLock("spin-bound").Lock(cctx)
		got <- err
	}()
	eventually(t, 2*time.Second, "the spinner to count as waiting", func() bool { return other.Stats().Waiting == 1 })
	ccancel()
	cancelled := time.Now()
	if err := recvWithin(t, got, 2*time.Second, "the cancelled spin"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled spin = %v; want context.Canceled", err)
	}
	if d := time.Since(cancelled); d > 200*time.Millisecond {
		t.Errorf("cancelled spin returned %v after the cancel", d)
	}
	lvl, err := c.SpinLock("spin-bound").Lock(redisson.ContextWithHold(ctx, held))
	if err != nil {
		t.Fatalf("re-entry through ContextWithHold: %v", err)
	}
	if n, err := held.HoldCount(ctx); err != nil || n != 2 {
		t.Errorf("HoldCount = %d, %v; want 2", n, err)
	}
	mustUnlock(t, lvl)
	mustUnlock(t, held)
	if other.Stats().Waiting != 0 {
		t.Errorf("Stats.Waiting = %d after the waits ended", other.Stats().Waiting)
	}
}

// A SpinLock whose grant is answered too late gives the lock back and polls on as a new owner: the
// undos scheduled for the given-back owner (a copy of its acquisition may still land) must never
// free a lock that a later attempt of the same wait took. Forcing: the reply of A's first SET NX is
// dropped (it ran: A's owner has the lock), and its re-send is held back 1.1s, past the point where
// a 2s lease with a 0.5 loss margin may lapse: A gives the lock back, and its next attempt takes
// it. While A's hold is live, B must not get the lock, during and after the given-back owner's
// repeated undos (250ms, 1s and 4s after the give-back).
func TestSpinLockGiveBackNeverFreesLaterHold(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "spin-give-back"
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	hook := newScriptHook()
	rdbA.AddHook(hook)
	// No loss tracking on A: its connection would go through the proxy, whose faults (a dropped
	// reply, held requests) are aimed at the SpinLock's SET NX.
	a := newClient(t, rdbA, redisson.WithLossMargin(0.5), redisson.WithSpinBackoff(time.Millisecond, 10*time.Millisecond),
		redisson.WithLossTracking(false))
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	mustUnlock(t, mustLock(t, a.SpinLock(name), ctx)) // first use: the server check, connections
	key := redisson.LockKeyOf(a, name)

	var sets atomic.Int32
	hook.setAround(func(args []string, next func()) {
		if len(args) > 1 && strings.EqualFold(args[0], "set") && args[1] == key {
			switch sets.Add(1) {
			case 1:
				p.DropReplies(1) // the first copy runs; its reply is lost
			case 2:
				time.Sleep(1100 * time.Millisecond) // the re-send answers after the lease may lapse
			}
		}
		next()
	})
	h, err := a.SpinLock(name).Lock(ctx, redisson.WithLease(2*time.Second))
	hook.setAround(nil)
	if err != nil {
		t.Fatalf("A's Lock: %v", err)
	}
	if sets.Load() < 2 {
		t.Fatalf("precondition: %d SET NX sent; want the first and its re-send", sets.Load())
	}
	defer func() { _ = h.Unlock(context.WithoutCancel(ctx)) }()
	// Past the given-back owner's first two undos, within A's lease (and its margin).
	deadline := time.Now().Add(700 * time.Millisecond)
	for time.Now().Before(deadline) && h.Context().Err() == nil {
		if hb, err := b.SpinLock(name).TryLock(ctx); err == nil {
			mustUnlock(t, hb)
			t.Fatalf("B took the lock while A's hold is live (the given-back owner's undo freed it)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := h.Context().Err(); err != nil {
		t.Fatalf("A's hold ended within its lease: %v", context.Cause(h.Context()))
	}
}

// A SpinLock wait that ends while nobody else ever held the lock is not contention: the lock is
// free, A's only attempt is granted but answered too late (Redis slow: the SET NX's reply is held
// 600ms, past where a 1s lease with a 0.5 loss margin may lapse), so A gives the lock back and
// pauses (a 2s spin pause) before trying again, and its 800ms WithWait bound passes during the
// pause. The error must not match ErrBusy ("held by another owner"): no other owner held the lock;
// the wait ended because Redis answered too slowly.
func TestSpinLockWaitEndedAfterLateGrantIsNotBusy(t *testing.T) {
	t.Parallel()
	const name = "spin-late-not-busy"
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	hook := newScriptHook()
	rdb.AddHook(hook)
	a := newClient(t, rdb, redisson.WithLossMargin(0.5), redisson.WithSpinBackoff(2*time.Second, 2*time.Second))
	ctx := t.Context()
	mustUnlock(t, mustLock(t, a.SpinLock(name), ctx)) // first use: the server check, connections
	key := redisson.LockKeyOf(a, name)
	var sets atomic.Int32
	hook.setAround(func(args []string, next func()) {
		next()
		if len(args) > 1 && strings.EqualFold(args[0], "set") && args[1] == key && sets.Add(1) == 1 {
			time.Sleep(600 * time.Millisecond) // the grant is answered after the lease may lapse
		}
	})
	h, err := a.SpinLock(name).TryLock(context.Background(), redisson.WithLease(time.Second), redisson.WithWait(800*time.Millisecond))
	if err == nil {
		mustUnlock(t, h)
		t.Fatal("A's wait took the lock: the interleaving did not happen")
	}
	if sets.Load() != 1 {
		t.Fatalf("precondition: %d SET NX sent; want only the first", sets.Load())
	}
	if errors.Is(err, redisson.ErrBusy) {
		t.Errorf("a wait that no other owner ever held the lock through = %v; want it not to match ErrBusy", err)
	}
}
