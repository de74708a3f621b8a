package redisson_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson"
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
