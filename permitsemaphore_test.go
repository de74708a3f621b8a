package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
				"Acquire(-1)":          func() error { _, err := p.Acquire(ctx, -1); return err }(),
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

// permitLease reports, in one step in Redis server time, whether permit id of the semaphore name is
// in its leases, and how many ms of its lease are left (≤ 0: passed, not yet counted back).
func permitLease(t *testing.T, admin *redis.Client, name, id string) (leased bool, left int64) {
	t.Helper()
	r, err := admin.Eval(context.Background(), `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s then return {0, 0} end
local t = redis.call('TIME')
return {1, tonumber(s) - (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))}`,
		[]string{"{" + name + "}:~sl"}, id).Int64Slice()
	if err != nil || len(r) != 2 {
		t.Fatalf("reading the lease of %s: %v, %v", id, r, err)
	}
	return r[0] == 1, r[1]
}

// permitLostCause checks that ctx was cancelled with a cause matching ErrLockLost (and each of also).
func permitLostCause(t *testing.T, ctx context.Context, also ...error) {
	t.Helper()
	cause := context.Cause(ctx)
	if !errors.Is(cause, redisson.ErrLockLost) {
		t.Errorf("permit context cause = %v; want ErrLockLost", cause)
	}
	for _, want := range also {
		if !errors.Is(cause, want) {
			t.Errorf("permit context cause = %v; want it to match %v too", cause, want)
		}
	}
}

// A watchdog permit removed from Redis behind its holder's back: its context is cancelled with
// ErrLockLost (found by the next renewal), it is no longer renewed, Stats counts it lost, and its
// release is ErrNotHeld; the acquisition's other permit stays held.
func TestPermitContextLostWhenPermitRemoved(t *testing.T) {
	ctx := t.Context()
	const watchdog = 600 * time.Millisecond
	c, admin, _ := setup(t, redisson.WithWatchdogTimeout(watchdog))
	const name = "permit-removed"
	p := c.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	h, err := p.AcquireHeld(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	ids, pctx := h.IDs(), h.Context()
	if len(ids) != 2 || pctx.Err() != nil {
		t.Fatalf("AcquireHeld(2) = %v ids, context %v; want 2 and live", ids, pctx.Err())
	}
	if err := admin.ZRem(ctx, "{"+name+"}:~sl", ids[0]).Err(); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	at := faultWaitDone(t, pctx, 5*watchdog, "the permit's context to be cancelled after its permit was removed")
	t.Logf("the loss was signalled %v after the permit was removed (renewal period %v)", at.Sub(removed), watchdog/3)
	permitLostCause(t, pctx)
	if s := c.Stats(); s.Lost != 1 || s.Held != 1 {
		t.Errorf("Stats after one permit was lost = %+v; want Lost 1, Held 1 (the other still renewed)", s)
	}
	if err := p.Release(ctx, ids[0]); !errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("Release of the lost permit = %v; want ErrNotHeld", err)
	}
	if left, err := p.RemainingLease(ctx, ids[1]); err != nil || left <= 0 {
		t.Errorf("RemainingLease of the other permit = %v, %v; want it leased", left, err)
	}
	if err := p.Release(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	permitLostCause(t, pctx) // a later release does not turn the loss into a release
	if s := c.Stats(); s.Held != 0 || s.Lost != 1 {
		t.Errorf("Stats at the end = %+v; want Held 0, Lost 1", s)
	}
}

// Renewals failing (the network to Redis cut): the permit's context is cancelled, with ErrLockLost,
// before its lease can pass in Redis; once Redis is reachable again the permit is back in the pool.
func TestPermitContextLostBeforeLeaseLapsesWhenRenewalsFail(t *testing.T) {
	ctx := t.Context()
	const watchdog = 2 * time.Second
	srv := redistest.Start(t)
	admin := srv.Client(t)
	px := redistest.NewProxy(t, srv.Addr())
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = px.Addr() }),
		redisson.WithWatchdogTimeout(watchdog), redisson.WithLossMargin(0.3))
	const name = "permit-cut"
	p := c.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	h, err := p.AcquireHeld(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	px.Blackhole(true)
	t.Cleanup(func() { px.Blackhole(false) }) // before the Client closes: its background release ends
	cut := time.Now()
	at := faultWaitDone(t, h.Context(), 5*watchdog, "the permit's context to be cancelled while Redis is unreachable")
	leased, left := permitLease(t, admin, name, h.IDs()[0])
	t.Logf("the loss was signalled %v after the cut, with %dms of the lease left (watchdog %v, margin 30%%)", at.Sub(cut), left, watchdog)
	if !leased || left <= 0 {
		t.Errorf("when the context was cancelled the permit was leased %v with %dms left; want still leased (the loss signalled before the lease passed)", leased, left)
	}
	permitLostCause(t, h.Context())
	if s := c.Stats(); s.Lost != 1 || s.Held != 0 {
		t.Errorf("Stats after the loss = %+v; want Lost 1, Held 0", s)
	}
	px.Blackhole(false)
	other := newClient(t, srv.Client(t)).PermitExpirableSemaphore(name)
	got, err := other.Acquire(ctx, 1, redisson.WithLease(time.Minute), redisson.WithWait(15*time.Second))
	if err != nil {
		t.Fatalf("Acquire of the lost permit's place = %v", err)
	}
	if err := p.Release(ctx, h.IDs()...); !errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("Release of the lost permit = %v; want ErrNotHeld", err)
	}
	if err := other.Release(ctx, got...); err != nil {
		t.Fatal(err)
	}
}

// A permit whose lease passed in Redis (not yet counted back by any script) is not re-armed by a
// renewal: the renewal reports it gone, its context is cancelled with ErrLockLost, its score stays
// in the past, and it is back in the pool.
func TestPermitRenewalDoesNotRearmLapsedPermit(t *testing.T) {
	ctx := t.Context()
	const watchdog = 600 * time.Millisecond
	c, admin, _ := setup(t, redisson.WithWatchdogTimeout(watchdog))
	const name = "permit-lapsed"
	p := c.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	h, err := p.AcquireHeld(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	id := h.IDs()[0]
	// Its lease ends now, as if the holder had been paused: only the next script counts it back.
	if err := admin.Eval(ctx, `local t = redis.call('TIME')
return redis.call('ZADD', KEYS[1], 'XX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - 1, ARGV[1])`,
		[]string{"{" + name + "}:~sl"}, id).Err(); err != nil {
		t.Fatal(err)
	}
	faultWaitDone(t, h.Context(), 5*watchdog, "the lapsed permit's context to be cancelled")
	permitLostCause(t, h.Context())
	if leased, left := permitLease(t, admin, name, id); leased && left > 0 {
		t.Fatalf("the lapsed permit was renewed: %dms left", left)
	}
	if s := c.Stats(); s.Held != 0 || s.Lost != 1 {
		t.Errorf("Stats = %+v; want Held 0 (no longer renewed), Lost 1", s)
	}
	if n, err := p.AvailablePermits(ctx); err != nil || n != 1 {
		t.Errorf("AvailablePermits = %d, %v; want 1 (the lapsed permit back in the pool)", n, err)
	}
	if err := p.Release(ctx, id); !errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("Release of the lapsed permit = %v; want ErrNotHeld", err)
	}
}

// A renewal still travelling when the permit is declared lost (its replies too slow to vouch for the
// lease) lands and extends the lease: the Client gives the permit back, so that it is not kept for
// nobody until that new lease passes.
func TestPermitRenewalInFlightAtLossDoesNotKeepPermit(t *testing.T) {
	ctx := t.Context()
	const watchdog = 1500 * time.Millisecond
	srv := redistest.Start(t)
	admin := srv.Client(t)
	px := redistest.NewProxy(t, srv.Addr())
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = px.Addr() }), redisson.WithWatchdogTimeout(watchdog))
	const name = "permit-inflight"
	p := c.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	h, err := p.AcquireHeld(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	id := h.IDs()[0]
	// Once the renewal script is loaded (a first renewal), the next renewal lands 500ms after it is
	// sent, before the lease ends, and extends it; its reply would take another 500ms, past the
	// renewal's own time limit, and its retries cannot do better before the lease may lapse.
	eventually(t, 5*watchdog, "a first renewal", func() bool { return c.Stats().Renewed >= 1 })
	px.Delay(watchdog / 3)
	lostAt := faultWaitDone(t, h.Context(), 5*watchdog, "the permit's context to be cancelled")
	px.Delay(0)
	permitLostCause(t, h.Context())
	if leased, left := permitLease(t, admin, name, id); leased {
		t.Logf("at the loss the permit was leased with %dms left", left)
	}
	deadline := time.Now().Add(5 * watchdog)
	for {
		leased, left := permitLease(t, admin, name, id)
		if !leased {
			t.Logf("the lost permit was given back %v after the loss was signalled", time.Since(lostAt))
			break // given back while its lease had time left
		}
		if left <= 0 {
			t.Fatalf("the lost permit stayed leased, for nobody, until its lease passed")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lost permit is still leased (%dms left)", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := p.AvailablePermits(ctx); err != nil || n != 1 {
		t.Errorf("AvailablePermits = %d, %v; want 1", n, err)
	}
	if err := p.Release(ctx, id); !errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("Release of the lost permit = %v; want ErrNotHeld", err)
	}
}

// Release cancels the permits' context with context.Canceled once all of them are released (a
// partial release leaves it alive), for watchdog and fixed-lease permits; nothing counts as lost.
func TestPermitContextCanceledByRelease(t *testing.T) {
	ctx := t.Context()
	c, _, _ := setup(t)
	p := c.PermitExpirableSemaphore("permit-release")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]redisson.AcquireOption{nil, {redisson.WithLease(time.Minute)}} {
		h, err := p.AcquireHeld(ctx, 2, opts...)
		if err != nil {
			t.Fatal(err)
		}
		ids := h.IDs()
		if err := p.Release(ctx, ids[0]); err != nil {
			t.Fatal(err)
		}
		if err := h.Context().Err(); err != nil {
			t.Fatalf("context after releasing one of two permits = %v; want live", err)
		}
		if err := p.Release(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		if cause := context.Cause(h.Context()); cause != context.Canceled {
			t.Fatalf("context cause after releasing both permits = %v; want context.Canceled", cause)
		}
	}
	if s := c.Stats(); s.Held != 0 || s.Lost != 0 {
		t.Errorf("Stats = %+v; want Held 0, Lost 0", s)
	}
}

// Close cancels the permits' contexts with ErrClosed and ErrLockLost, watchdog and fixed-lease alike.
func TestPermitContextLostOnClose(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t))
	p := c.PermitExpirableSemaphore("permit-close")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	watched, err := p.AcquireHeld(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := p.AcquireHeld(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for what, h := range map[string]*redisson.HeldPermits{"watchdog": watched, "fixed lease": fixed} {
		select {
		case <-h.Context().Done():
		default:
			t.Fatalf("%s permit's context not cancelled when Close returned", what)
		}
		permitLostCause(t, h.Context(), redisson.ErrClosed)
	}
	if s := c.Stats(); s.Lost != 2 {
		t.Errorf("Stats().Lost after Close = %d; want 2", s.Lost)
	}
}

// A fixed-lease permit's context ends, with ErrLockLost, before its lease passes; a lease set with
// SetLease is followed: a fixed lease changed, and a watchdog permit's lease shortened (its context
// ends before the shorter lease passes when renewals fail).
func TestPermitContextEndsBeforeFixedLease(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	px := redistest.NewProxy(t, srv.Addr())
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = px.Addr() }),
		redisson.WithWatchdogTimeout(30*time.Second), redisson.WithLossMargin(0.3))
	const name = "permit-fixed"
	p := c.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	ended := func(what string, h *redisson.HeldPermits) {
		t.Helper()
		faultWaitDone(t, h.Context(), 10*time.Second, what+": the permit's context to end")
		leased, left := permitLease(t, admin, name, h.IDs()[0])
		if !leased || left <= 0 {
			t.Errorf("%s: when the context ended the permit was leased %v with %dms left; want still leased", what, leased, left)
		}
		t.Logf("%s: the context ended with %dms of the lease left", what, left)
		permitLostCause(t, h.Context())
	}

	fixed, err := p.AcquireHeld(ctx, 1, redisson.WithLease(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ended("WithLease(1s)", fixed)

	// A fixed lease shortened by SetLease: the context follows the new lease.
	set, err := p.AcquireHeld(ctx, 1, redisson.WithLease(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetLease(ctx, time.Second, set.IDs()...); err != nil {
		t.Fatal(err)
	}
	ended("WithLease(1h) then SetLease(1s)", set)

	// A watchdog permit (timeout 30s) given a 1s lease, its renewals then failing.
	watched, err := p.AcquireHeld(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetLease(ctx, time.Second, watched.IDs()...); err != nil {
		t.Fatal(err)
	}
	px.Blackhole(true)
	t.Cleanup(func() { px.Blackhole(false) })
	ended("watchdog then SetLease(1s), renewals failing", watched)
	px.Blackhole(false)
	if s := c.Stats(); s.Lost != 3 || s.Held != 0 {
		t.Errorf("Stats = %+v; want Lost 3, Held 0", s)
	}
}
