package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// permitConformance is the PermitExpirableSemaphore's suite (TestConformance): permit ids and release
// by id, an expired lease back in the pool and its waiter served without any message, the watchdog
// keeping a permit past its lease and Close letting it go, lease queries and changes, bad input.
func permitConformance() []conformanceCase {
	return []conformanceCase{
		{"ids and release", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			p := newC().PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			ids, err := p.Acquire(ctx, 2, redisson.WithLease(time.Minute))
			if err != nil || len(ids) != 2 || ids[0] == ids[1] {
				t.Fatalf("Acquire(2) = %v, %v; want two ids", ids, err)
			}
			if got, err := p.TryAcquire(ctx, 2); err != nil || got != nil {
				t.Fatalf("TryAcquire(2) of 1 = %v, %v; want nil, nil", got, err)
			}
			if err := p.Release(ctx, ids[0], "no-such-permit"); !errors.Is(err, redisson.ErrNotHeld) {
				t.Fatalf("Release with an unknown id = %v; want ErrNotHeld", err)
			}
			if n, err := p.AvailablePermits(ctx); err != nil || n != 1 {
				t.Fatalf("AvailablePermits after a refused release = %d, %v; want 1 (nothing released)", n, err)
			}
			if err := p.Release(ctx, ids...); err != nil {
				t.Fatal(err)
			}
			if err := p.Release(ctx, ids[0]); !errors.Is(err, redisson.ErrNotHeld) {
				t.Fatalf("second Release = %v; want ErrNotHeld", err)
			}
			if n, err := p.AvailablePermits(ctx); err != nil || n != 3 {
				t.Fatalf("AvailablePermits = %d, %v; want 3", n, err)
			}
			// Watchdog permits are holds of the Client until released.
			c := newC()
			w := c.PermitExpirableSemaphore(name)
			wids, err := w.Acquire(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			if held := c.Stats().Held; held != 2 {
				t.Fatalf("Stats().Held with 2 watchdog permits = %d", held)
			}
			if err := w.Release(ctx, wids...); err != nil {
				t.Fatal(err)
			}
			if held := c.Stats().Held; held != 0 {
				t.Fatalf("Stats().Held after Release = %d", held)
			}
		}},
		{"lease ends", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			p := newC().PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			ids, err := p.Acquire(ctx, 1, redisson.WithLease(300*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			left, err := p.RemainingLease(ctx, ids[0])
			if err != nil || left <= 0 || left > 300*time.Millisecond {
				t.Fatalf("RemainingLease = %v, %v; want (0, 300ms]", left, err)
			}
			// No re-poll, no heartbeat, no release: only the lease's end can let the waiter in.
			w := newC(redisson.WithRepollInterval(time.Hour), redisson.WithWaiterTimeout(time.Hour)).PermitExpirableSemaphore(name)
			start := time.Now()
			got, err := w.Acquire(ctx, 1, redisson.WithLease(time.Minute), redisson.WithWait(5*time.Second))
			if err != nil {
				t.Fatalf("Acquire behind an expiring permit = %v after %v", err, time.Since(start))
			}
			t.Logf("the waiter got the expired permit %v after it started waiting", time.Since(start))
			if _, err := p.RemainingLease(ctx, ids[0]); !errors.Is(err, redisson.ErrNotHeld) {
				t.Fatalf("RemainingLease of an expired permit = %v; want ErrNotHeld", err)
			}
			if err := p.Release(ctx, ids[0]); !errors.Is(err, redisson.ErrNotHeld) {
				t.Fatalf("Release of an expired permit = %v; want ErrNotHeld", err)
			}
			if err := w.SetLease(ctx, 10*time.Second, got...); err != nil {
				t.Fatal(err)
			}
			if left, err := w.RemainingLease(ctx, got[0]); err != nil || left < 9*time.Second || left > 10*time.Second {
				t.Fatalf("RemainingLease after SetLease(10s) = %v, %v", left, err)
			}
			if err := w.SetLease(ctx, time.Second, "no-such-permit"); !errors.Is(err, redisson.ErrNotHeld) {
				t.Fatalf("SetLease of an unknown permit = %v; want ErrNotHeld", err)
			}
			if err := w.Release(ctx, got...); err != nil {
				t.Fatal(err)
			}
		}},
		{"watchdog", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			holder := newC(redisson.WithWatchdogTimeout(300 * time.Millisecond))
			p := holder.PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			ids, err := p.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			other := newC().PermitExpirableSemaphore(name)
			// Three leases later, the watchdog has kept it.
			if got, err := other.TryAcquire(ctx, 1, redisson.WithWait(time.Second)); err != nil || got != nil {
				t.Fatalf("TryAcquire while the watchdog renews the permit = %v, %v; want nil, nil", got, err)
			}
			if left, err := p.RemainingLease(ctx, ids[0]); err != nil || left <= 0 {
				t.Fatalf("RemainingLease of a renewed permit = %v, %v", left, err)
			}
			if err := holder.Close(); err != nil {
				t.Fatal(err)
			}
			// Closed: nothing renews it, and it returns within the watchdog timeout.
			got, err := other.Acquire(ctx, 1, redisson.WithWait(5*time.Second))
			if err != nil {
				t.Fatalf("Acquire after the holder's Client closed = %v", err)
			}
			if err := other.Release(ctx, got...); err != nil {
				t.Fatal(err)
			}
		}},
		{"bad input", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			p := newC().PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			for what, err := range map[string]error{
				"Acquire(0)":           func() error { _, err := p.Acquire(ctx, 0); return err }(),
				"TryAcquire(-1)":       func() error { _, err := p.TryAcquire(ctx, -1); return err }(),
				"Acquire(WithLease 0)": func() error { _, err := p.Acquire(ctx, 1, redisson.WithLease(0)); return err }(),
				"Release()":            p.Release(ctx),
				"SetLease(0)":          p.SetLease(ctx, 0, "x"),
				"SetLease() no ids":    p.SetLease(ctx, time.Second),
				"nil handle":           (*redisson.PermitExpirableSemaphore)(nil).Release(ctx, "x"),
			} {
				if !errors.Is(err, redisson.ErrInvalidArgument) {
					t.Errorf("%s = %v; want ErrInvalidArgument", what, err)
				}
			}
			if n, err := p.AvailablePermits(ctx); err != nil || n != 1 {
				t.Fatalf("AvailablePermits after bad input = %d, %v; want 1 (unchanged)", n, err)
			}
		}},
	}
}

// Issue 9: 3 holder processes killed with SIGKILL: their permits (watchdog-renewed, timeout 2 s) are
// available again within their lease + 0.5 s, and none is leaked.
func TestPermitExpirableSemaphoreHoldersKilled(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	const name = "pes-kill"
	const lease = 2 * time.Second
	p := newClient(t, rdb).PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 4); err != nil {
		t.Fatal(err)
	}
	var children []*faultChild
	for range 3 {
		child := faultStartChild(t, "permitholder", "GOREDISSON_FAULT_ADDR="+srv.Addr(), "GOREDISSON_FAULT_LOCK="+name,
			fmt.Sprintf("GOREDISSON_FAULT_WATCHDOG_MS=%d", lease.Milliseconds()))
		child.expect(t, "FAULT-READY", 30*time.Second)
		children = append(children, child)
	}
	// Held past their first lease: the children's watchdogs renew them.
	w := newClient(t, rdb, redisson.WithRepollInterval(time.Hour)).PermitExpirableSemaphore(name)
	if got, err := w.TryAcquire(ctx, 2, redisson.WithWait(lease+lease/2)); err != nil || got != nil {
		t.Fatalf("TryAcquire(2) of 1 free while 3 live holders renew = %v, %v; want nil, nil", got, err)
	}
	for _, child := range children {
		if err := child.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	killed := time.Now()
	got, err := w.Acquire(ctx, 4, redisson.WithLease(time.Minute), redisson.WithWait(10*time.Second))
	if err != nil {
		t.Fatalf("Acquire(4) after the holders were killed = %v", err)
	}
	took := time.Since(killed)
	t.Logf("the 3 killed holders' permits were back %v after SIGKILL (lease %v)", took, lease)
	if took > lease+500*time.Millisecond {
		t.Fatalf("the permits came back %v after the kill; want within the lease + 0.5s (%v)", took, lease+500*time.Millisecond)
	}
	if err := w.Release(ctx, got...); err != nil {
		t.Fatal(err)
	}
	if n, err := p.AvailablePermits(ctx); err != nil || n != 4 {
		t.Fatalf("AvailablePermits at the end = %d, %v; want 4 (none leaked)", n, err)
	}
}

// faultHelperPermitHolder is a holder of TestPermitExpirableSemaphoreHoldersKilled: it takes one
// watchdog-renewed permit and holds it until killed.
func faultHelperPermitHolder(t *testing.T, ctx context.Context, addr, name string, stdin *bufio.Reader) {
	wd := time.Duration(faultHelperInt(t, "GOREDISSON_FAULT_WATCHDOG_MS")) * time.Millisecond
	p := newClient(t, faultHelperRedis(t, addr), redisson.WithWatchdogTimeout(wd)).PermitExpirableSemaphore(name)
	ids, err := p.Acquire(ctx, 1)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	fmt.Println("FAULT-READY")
	_, _ = io.Copy(io.Discard, stdin) // until killed, or the parent goes away
	_ = p.Release(ctx, ids...)
}
