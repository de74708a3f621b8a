package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
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
			// A watchdog timeout above the acknowledgement timeout of the replica-acknowledged
			// topologies (1s), so that one slow acknowledgement does not lose the permit.
			holder := newC(redisson.WithWatchdogTimeout(2 * time.Second))
			p := holder.PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			ids, err := p.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			other := newC().PermitExpirableSemaphore(name)
			// Three renewals later, the watchdog has kept it.
			if got, err := other.TryAcquire(ctx, 1, redisson.WithWait(2500*time.Millisecond)); err != nil || got != nil {
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

// 3 holder processes killed with SIGKILL: their permits (watchdog-renewed, timeout 2 s) are
// available again within their lease + 0.5 s, and none is leaked.
func TestPermitExpirableSemaphoreHoldersKilled(t *testing.T) {
	long(t)
	t.Parallel()
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
	long(t)
	t.Parallel()
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
	long(t)
	t.Parallel()
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
	long(t)
	t.Parallel()
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

// permitsAvailable returns the permits available in p, failing the test on an error.
func permitsAvailable(t *testing.T, p *redisson.PermitExpirableSemaphore) int64 {
	t.Helper()
	n, err := p.AvailablePermits(context.Background())
	if err != nil {
		t.Fatalf("AvailablePermits: %v", err)
	}
	return n
}

// permitsLeased returns the number of leased permits of the PermitExpirableSemaphore called name,
// failing the test on an error.
func permitsLeased(t *testing.T, admin *redis.Client, name string) int64 {
	t.Helper()
	n, err := admin.ZCard(context.Background(), "{"+name+"}:~sl").Result()
	if err != nil {
		t.Fatalf("ZCARD leases: %v", err)
	}
	return n
}

// Release with the same permit id twice (an application merging id lists, say) never counts the
// permit back twice, which would create a permit and let a third holder in: it is refused
// (ErrInvalidArgument, 1 available of 2) or releases the permit once (2 available).
func TestPermitReleaseRepeatedIDCreatesNoPermit(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	p := c.PermitExpirableSemaphore("dup")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	ids, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Release(ctx, ids[0], ids[0])
	n := permitsAvailable(t, p)
	t.Logf("Release(p, p) = %v; available %d, leased %d", err, n, permitsLeased(t, admin, "dup"))
	if err == nil && n != 2 || err != nil && n != 1 {
		t.Fatalf("Release of the same id twice: err %v, %d permits available of 2 (want 2 after a release, 1 if refused)", err, n)
	}
}

// A leased acquisition of 5000 permits of 10000 either succeeds (5000 ids; 5000 available, 5000
// leased) or fails with nothing changed. It must not fail inside the script after taking the
// permits (Lua's unpack is limited to a few thousand values, and Redis does not roll a script
// back): no lease, undo or release could ever give them back. At most 1000 leased permits per call
// are accepted, checked before any write.
func TestPermitLargeLeasedAcquisitionLosesNothing(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	p := c.PermitExpirableSemaphore("big")
	if _, err := p.TrySetPermits(ctx, 10000); err != nil {
		t.Fatal(err)
	}
	ids, err := p.TryAcquire(ctx, 5000, redisson.WithLease(time.Minute))
	n, leased := permitsAvailable(t, p), permitsLeased(t, admin, "big")
	t.Logf("TryAcquire(5000) = %d ids, %v; available %d, leased %d", len(ids), err, n, leased)
	switch {
	case err == nil && len(ids) == 5000:
		if n != 5000 || leased != 5000 {
			t.Fatalf("after a leased acquisition of 5000: %d available, %d leased; want 5000, 5000", n, leased)
		}
	case n+leased != 10000:
		t.Fatalf("TryAcquire(5000) failed (%v) and %d permits are gone: %d available + %d leased of 10000", err, 10000-n-leased, n, leased)
	}
}

// An acquisition whose leased permits (none, some or all) expired and were counted back before its
// undo runs is given back once, not twice. Scenario: 3 permits; TryAcquire(2, WithLease(1m)) runs
// in Redis, then its reply is replaced by a network error (the caller undoes); before the undo, 0,
// 1 or 2 of its leases are made to pass. Afterwards 3 are available and nothing is leased.
func TestPermitUndoAfterLeasesExpiredGivesBackOnce(t *testing.T) {
	long(t)
	t.Parallel()
	for _, expired := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("expired=%d", expired), func(t *testing.T) {
			ctx := t.Context()
			_, admin, srv := setup(t)
			hook := &aroundHook{}
			rdb := srv.Client(t)
			rdb.AddHook(hook)
			c := newClient(t, rdb)
			name := fmt.Sprintf("undo%d", expired)
			p := c.PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			injected := errors.New("connection reset (injected)")
			// Every reply of the attempt is lost (the library sends the script again after a lost
			// reply: it is safe to run twice), so its outcome stays unknown and it is undone.
			hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
				if !semAcquireCall("", "f")(a) {
					return next()
				}
				if err := next(); err != nil {
					return err
				}
				for i := 1; i <= expired; i++ {
					admin.ZAdd(ctx, "{"+name+"}:~sl", redis.Z{Score: 1, Member: fmt.Sprintf("%s#%d", a[7], i)})
				}
				cmd.SetErr(injected)
				return injected
			})
			ids, err := p.TryAcquire(ctx, 2, redisson.WithLease(time.Minute))
			hook.setCmd(nil)
			if err == nil || ids != nil {
				t.Fatalf("precondition: TryAcquire with its reply lost = %v, %v; want an error", ids, err)
			}
			if n, l := permitsAvailable(t, p), permitsLeased(t, admin, name); n != 3 || l != 0 {
				t.Fatalf("after the undo of an acquisition with %d of 2 leases passed: %d available, %d leased; want 3, 0", expired, n, l)
			}
		})
	}
}

// A Release racing its lease's end returns the permit at most once: 25 rounds of TryAcquire(1,
// WithLease(25ms)) and a Release at a random moment around the expiry, while another Client counts
// back expired leases (AvailablePermits, never above 2). Each Release succeeds or fails with
// ErrNotHeld; at the end 2 are available and nothing is leased.
func TestPermitReleaseRacingExpiryReturnsOnce(t *testing.T) {
	long(t)
	t.Parallel()
	ctx := t.Context()
	c, admin, srv := setup(t)
	other := newClient(t, srv.Client(t)).PermitExpirableSemaphore("race")
	p := c.PermitExpirableSemaphore("race")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	spawn(&wg, func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n, err := other.AvailablePermits(ctx); err != nil || n > 2 {
				t.Errorf("AvailablePermits = %d, %v; want ≤ 2", n, err)
				return
			}
		}
	})
	for i := 0; i < 25; i++ {
		ids, err := p.Acquire(ctx, 1, redisson.WithLease(25*time.Millisecond), redisson.WithWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(15+rand.IntN(20)) * time.Millisecond) // jitter around the expiry, not synchronisation
		if err := p.Release(ctx, ids...); err != nil && !errors.Is(err, redisson.ErrNotHeld) {
			t.Fatalf("Release = %v", err)
		}
	}
	close(stop)
	wg.Wait()
	eventually(t, 2*time.Second, "every lease back", func() bool { return permitsAvailable(t, p) == 2 })
	if n, l := permitsAvailable(t, p), permitsLeased(t, admin, "race"); n != 2 || l != 0 {
		t.Fatalf("after releases racing expiries: %d available, %d leased; want 2, 0", n, l)
	}
}

// Late copies of a Release, of a leased TryAcquire that took permits (then released), and of one
// that found too few, replayed after the semaphore moved on, change nothing.
func TestPermitLateCopiesChangeNothing(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := newScriptHook()
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	c := newClient(t, rdb)
	p := c.PermitExpirableSemaphore("late")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	hook.set(semAcquireCall("", "f"), false)
	ids, err := p.TryAcquire(ctx, 2, redisson.WithLease(time.Minute))
	if err != nil || len(ids) != 2 {
		t.Fatalf("TryAcquire(2) = %v, %v", ids, err)
	}
	took := hook.last(t)
	refusedIDs, err := p.TryAcquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil || refusedIDs != nil {
		t.Fatalf("TryAcquire(1) of 0 = %v, %v", refusedIDs, err)
	}
	refused := hook.last(t)
	hook.set(semChangeCall("x"), false)
	if err := p.Release(ctx, ids...); err != nil {
		t.Fatal(err)
	}
	rel := hook.last(t)
	hook.release()
	again, err := p.TryAcquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil || len(again) != 1 {
		t.Fatalf("TryAcquire(1) = %v, %v", again, err)
	}
	for _, copy := range [][]any{took, refused, rel} {
		if err := admin.Do(ctx, copy...).Err(); err != nil {
			t.Fatalf("replay %v: %v", copy[:8], err)
		}
	}
	if n, l := permitsAvailable(t, p), permitsLeased(t, admin, "late"); n != 1 || l != 1 {
		t.Fatalf("after late copies: %d available, %d leased; want 1, 1", n, l)
	}
	if err := p.Release(ctx, again...); err != nil {
		t.Fatal(err)
	}
}

// A watchdog renewal held in flight while the permit is released (by its holder, or by another
// Client) does not bring the permit back, the holder's watchdog drops it, and no renewal extends
// the acquisition that takes the permit next.
func TestPermitRenewalInFlightAcrossReleaseKeepsItReleased(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"holder", "other"} {
		t.Run(by, func(t *testing.T) {
			ctx := t.Context()
			_, admin, srv := setup(t)
			hook := &aroundHook{}
			rdb := srv.Client(t)
			rdb.AddHook(hook)
			c := newClient(t, rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
			name := "renew-" + by
			p := c.PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			ids, err := p.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			reached, open := make(chan struct{}), make(chan struct{})
			renewals := make(chan struct{}, 100)
			var once sync.Once
			hook.setPipe(func(ctx context.Context, cmds []redis.Cmder, next func() error) error {
				renew := false
				for _, cmd := range cmds {
					if a := cmdArgs(cmd); len(a) == 6 && strings.HasSuffix(a[3], ":~sl") && a[5] == ids[0] {
						renew = true
					}
				}
				if !renew {
					return next()
				}
				first := false
				once.Do(func() { first = true })
				if first {
					close(reached)
					<-open
				} else {
					renewals <- struct{}{}
				}
				return next()
			})
			select {
			case <-reached:
			case <-time.After(5 * time.Second):
				t.Fatal("precondition: no renewal of the permit")
			}
			rel := p
			if by == "other" {
				rel = newClient(t, srv.Client(t)).PermitExpirableSemaphore(name)
			}
			if err := rel.Release(ctx, ids...); err != nil {
				t.Fatal(err)
			}
			close(open)
			if by == "other" {
				// The holder's watchdog learns from the renewal that was in flight (it lands after the
				// release and is answered 'gone'), and drops the permit: it sends no more.
				eventually(t, 3*time.Second, "the holder's watchdog to drop the released permit", func() bool { return c.Stats().Held == 0 })
				if err := p.Release(ctx, ids...); !errors.Is(err, redisson.ErrNotHeld) {
					t.Fatalf("holder's Release after another Client released = %v; want ErrNotHeld", err)
				}
			}
			// The released permit is taken by another acquisition; a renewal must never extend that one.
			ids2, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute), redisson.WithWait(2*time.Second))
			if err != nil {
				t.Fatalf("Acquire after release = %v", err)
			}
			if _, err := p.RemainingLease(ctx, ids[0]); !errors.Is(err, redisson.ErrNotHeld) {
				t.Fatalf("RemainingLease of the released permit = %v; want ErrNotHeld", err)
			}
			if n, l := permitsAvailable(t, p), permitsLeased(t, admin, name); n != 0 || l != 1 {
				t.Fatalf("%d available, %d leased; want 0, 1", n, l)
			}
			_ = p.Release(ctx, ids2...)
		})
	}
}

// Close racing watchdog acquisitions: every permit in the leases set belongs to an acquisition
// reported successful (none registered after Close, none leaked by a failed one), and the available
// and leased permits add up to the total.
func TestPermitCloseRacingAcquireLeaksNothing(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	c := newClient(t, srv.Client(t))
	const name, total = "closerace", 3
	p := c.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, total); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	held := map[string]bool{}
	var wg sync.WaitGroup
	started := make(chan struct{}, 6)
	for g := 0; g < 6; g++ {
		spawn(&wg, func() {
			sent := false
			defer func() {
				if !sent {
					started <- struct{}{}
				}
			}()
			for i := 0; ; i++ {
				ids, err := p.Acquire(ctx, 1, redisson.WithWait(5*time.Second))
				if i == 3 {
					started <- struct{}{}
					sent = true
				}
				if err != nil {
					if !errors.Is(err, redisson.ErrClosed) && !errors.Is(err, redisson.ErrNotObtained) {
						t.Errorf("Acquire = %v", err)
					}
					return
				}
				if err := p.Release(ctx, ids...); err != nil {
					if !errors.Is(err, redisson.ErrClosed) {
						t.Errorf("Release = %v", err)
					}
					mu.Lock()
					held[ids[0]] = true
					mu.Unlock()
					return
				}
			}
		})
	}
	for g := 0; g < 6; g++ {
		<-started
	}
	_ = c.Close()
	wg.Wait()
	members, err := admin.ZRange(ctx, "{"+name+"}:~sl", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if !held[m] {
			t.Errorf("permit %s leased in Redis but no caller holds it (leaked by Close racing Acquire)", m)
		}
	}
	n, err := newClient(t, srv.Client(t)).PermitExpirableSemaphore(name).AvailablePermits(ctx)
	if err != nil || n+int64(len(members)) != total {
		t.Fatalf("%d available + %d leased (%v); want %d", n, len(members), err, total)
	}
}

// A leases key of another type fails the semaphores' calls (PermitExpirableSemaphore.TryAcquire and
// Release, Semaphore.Release) with ErrWrongType and changes nothing.
func TestPermitLeasesKeyOfWrongTypeRefused(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	p := c.PermitExpirableSemaphore("wt")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	admin.Set(ctx, "{wt}:~sl", "junk", 0)
	if _, err := p.TryAcquire(ctx, 1, redisson.WithLease(time.Minute)); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("TryAcquire with a string leases key = %v; want ErrWrongType", err)
	}
	if err := c.Semaphore("wt").Release(ctx, 1); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Semaphore.Release with a string leases key = %v; want ErrWrongType", err)
	}
	if err := p.Release(ctx, "x#1"); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Release with a string leases key = %v; want ErrWrongType", err)
	}
	if v := admin.Get(ctx, "wt").Val(); v != "2" {
		t.Errorf("permits = %q after refused calls; want 2", v)
	}
}

// permitRenewalCall matches a sem_renew.lua call (or a pipeline seen as its first command) renewing pid.
func permitRenewalCall(pid string) func(a []string) bool {
	return func(a []string) bool {
		return len(a) >= 6 && (a[0] == "evalsha" || a[0] == "eval") && a[2] == "1" &&
			strings.HasSuffix(a[3], ":~sl") && a[5] == pid
	}
}

// Release by permit ids: another Client's Release (failing with ErrNotHeld, or refused as bad
// input) does not stop the holder's renewal; bad input (repeated ids, 1001 ids, none, 1001 leased
// permits) is ErrInvalidArgument with nothing changed; 1000 ids work; the holder's own Release
// whose outcome is unknown (the command never reached Redis) stops the renewal, and the permit
// lapses within the watchdog timeout.
func TestPermitReleaseIDsRenewalAndLimits(t *testing.T) {
	long(t)
	t.Parallel()
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := &aroundHook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	a := newClient(t, rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
	b := newClient(t, srv.Client(t))
	const name = "rel16"
	pa, pb := a.PermitExpirableSemaphore(name), b.PermitExpirableSemaphore(name)
	if _, err := pa.TrySetPermits(ctx, 1001); err != nil {
		t.Fatal(err)
	}
	ids, err := pa.Acquire(ctx, 1) // watchdog-renewed
	if err != nil {
		t.Fatal(err)
	}
	renewals := make(chan struct{}, 256)
	hook.setCmd(func(ctx context.Context, args []string, cmd redis.Cmder, next func() error) error {
		err := next()
		if permitRenewalCall(ids[0])(args) && err == nil {
			select {
			case renewals <- struct{}{}:
			default:
			}
		}
		return err
	})
	if err := pb.Release(ctx, ids[0], "nobody#1"); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("B's Release(A's id, unknown) = %v; want ErrNotHeld", err)
	}
	for _, bad := range [][]string{{ids[0], ids[0]}, make([]string, 1001), {}} {
		for i := range bad {
			if bad[i] == "" {
				bad[i] = fmt.Sprintf("x#%d", i)
			}
		}
		if err := pb.Release(ctx, bad...); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("Release of %d ids (repeated/too many/none) = %v; want ErrInvalidArgument", len(bad), err)
		}
	}
	if got, err := pb.TryAcquire(ctx, 1001, redisson.WithLease(time.Minute)); got != nil || !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("TryAcquire(1001 leased) = %d ids, %v; want ErrInvalidArgument", len(got), err)
	}
	if n, l := permitsAvailable(t, pa), permitsLeased(t, admin, name); n != 1000 || l != 1 {
		t.Fatalf("after refused calls: %d available, %d leased; want 1000, 1", n, l)
	}
	// Several watchdog timeouts of renewals after B's calls: A's permit is still renewed.
	for len(renewals) > 0 {
		<-renewals
	}
	for i := 0; i < 6; i++ {
		select {
		case <-renewals:
		case <-time.After(3 * time.Second):
			t.Fatalf("A's renewal stopped after B's failed Release (%d renewals seen)", i)
		}
	}
	if _, err := pa.RemainingLease(ctx, ids[0]); err != nil {
		t.Fatalf("A's permit lapsed: %v", err)
	}
	// 1000 ids at once.
	big, err := pb.TryAcquire(ctx, 1000, redisson.WithLease(time.Minute))
	if err != nil || len(big) != 1000 {
		t.Fatalf("TryAcquire(1000) = %d ids, %v", len(big), err)
	}
	if err := pb.Release(ctx, big...); err != nil {
		t.Fatalf("Release(1000 ids) = %v", err)
	}
	// A's own Release whose command never reached Redis: the renewal stops, the permit lapses.
	injected := errors.New("connection reset (injected)")
	hook.setCmd(func(ctx context.Context, args []string, cmd redis.Cmder, next func() error) error {
		if semChangeCall("x")(args) {
			cmd.SetErr(injected)
			return injected
		}
		return next()
	})
	if err := pa.Release(ctx, ids...); err == nil {
		t.Fatal("precondition: Release with the command lost succeeded")
	}
	hook.setCmd(nil)
	eventually(t, 3*time.Second, "A's unreleased permit lapses once no longer renewed", func() bool {
		_, err := pa.RemainingLease(ctx, ids[0])
		return errors.Is(err, redisson.ErrNotHeld)
	})
	if n := permitsAvailable(t, pa); n != 1001 {
		t.Fatalf("after the lapse: %d available; want 1001", n)
	}
}

// A Release by permit ids whose request is lost on the network before Redis runs it (the connection
// then times out) is re-sent. The permits are still leased, and permit ids are never reused, so the
// re-sent copy can release them safely (a late first copy would find its record, or the ids gone):
// Release must release them, not report an unknown outcome and leave them taken for their whole
// lease (an hour here) while ending the caller's permits.
func TestPermitReleaseResentAfterLostRequestReleases(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, _ := proxiedClient(t, srv, p, func(o *redis.Options) { o.ReadTimeout = 500 * time.Millisecond })
	hook := &aroundHook{}
	rdb.AddHook(hook)
	c := newClient(t, rdb)
	direct := newClient(t, srv.Client(t))
	ps := c.PermitExpirableSemaphore("lostrequest")
	if ok, err := ps.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	ids, err := ps.TryAcquire(ctx, 1, redisson.WithLease(time.Hour))
	if err != nil || len(ids) != 1 {
		t.Fatalf("TryAcquire(1) = %v, %v", ids, err)
	}
	var once sync.Once
	hook.setCmd(func(_ context.Context, a []string, _ redis.Cmder, next func() error) error {
		first := false
		if semChangeCall("x")(a) {
			once.Do(func() { first = true })
		}
		if !first {
			return next()
		}
		p.Blackhole(true) // the request is lost; its read times out
		err := next()
		p.Blackhole(false)
		return err
	})
	err = ps.Release(ctx, ids...)
	n, aerr := direct.PermitExpirableSemaphore("lostrequest").AvailablePermits(ctx)
	if err != nil || aerr != nil || n != 1 {
		t.Fatalf("Release of a leased permit, its first request lost before Redis ran it = %v; "+
			"%d permits available (%v), want nil and 1 (the permit stays leased for its hour)", err, n, aerr)
	}
}

// A waiting acquisition's attempt whose first copy is still travelling when its re-send (which
// finds the acquisition's registration, left by an earlier attempt) takes the permits must take
// nothing when it lands, even after the holder released one of the permits: the permits are counted
// once. (A late copy that took the permits again would re-lease ids the holder still holds or has
// released, and the permits it took would never all come back.)
func TestPermitLateCopyOfWaitingAttemptTakesNothing(t *testing.T) {
	t.Parallel()
	lateCopyOfWaitingAttemptTakesNothing(t, "w", nil, func(admin *redis.Client, name string) int64 {
		return permitsLeased(t, admin, name)
	})
}

// lateCopyOfWaitingAttemptTakesNothing runs the check of TestPermitLateCopyOfWaitingAttemptTakesNothing
// for a Client made with opts, whose waiting attempts are sent in mode (sem_acquire.lua's ARGV[3]);
// leased counts the leased permits in Redis.
func lateCopyOfWaitingAttemptTakesNothing(t *testing.T, mode string, opts []redisson.Option, leased func(admin *redis.Client, name string) int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const name = "late-waiting-copy"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	hook := &aroundHook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	c := newClient(t, rdb, append(quietWaiters(), opts...)...)
	direct := newClient(t, srv.Client(t), opts...)
	p := c.PermitExpirableSemaphore(name)
	var (
		armed    atomic.Bool
		mu       sync.Mutex
		captured []any
	)
	hook.setCmd(func(_ context.Context, a []string, cmd redis.Cmder, next func() error) error {
		// The attempt's first copy (ARGV[9] "0") is delayed in the network: the client sees its
		// connection fail and re-sends it; the test delivers it later.
		if semAcquireCall("", mode)(a) && a[15] == "0" && armed.CompareAndSwap(true, false) {
			mu.Lock()
			for _, s := range a {
				captured = append(captured, s)
			}
			mu.Unlock()
			cmd.SetErr(io.EOF)
			return io.EOF
		}
		return next()
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	type result struct {
		ids []string
		err error
	}
	res := make(chan result, 1)
	spawn(&wg, func() {
		ids, err := p.Acquire(ctx, 2)
		res <- result{ids, err}
	})
	if mode == "w" {
		eventually(t, 5*time.Second, "the acquisition registered as a waiter", func() bool { return semWaiters(t, c, name) == 1 })
	} else {
		eventually(t, 5*time.Second, "the acquisition's first attempt recorded", func() bool {
			return len(admin.Keys(ctx, "*"+name+"*").Val()) > 0
		})
	}
	armed.Store(true)
	if _, err := direct.PermitExpirableSemaphore(name).AddPermits(ctx, 4); err != nil {
		t.Fatal(err)
	}
	r := recvWithin(t, res, 10*time.Second, "the waiting Acquire")
	if r.err != nil || len(r.ids) != 2 {
		t.Fatalf("Acquire(2) = %v, %v", r.ids, r.err)
	}
	mu.Lock()
	late := captured
	mu.Unlock()
	if late == nil {
		t.Fatal("precondition: no attempt's first copy was delayed")
	}
	if err := p.Release(ctx, r.ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, late...).Err(); err != nil {
		t.Fatalf("the late copy: %v", err)
	}
	if err := p.Release(ctx, r.ids[1]); err != nil {
		t.Fatal(err)
	}
	if n, l := permitsAvailable(t, p), leased(admin, name); n != 4 || l != 0 {
		t.Errorf("after the late copy and the release of both permits: %d available, %d leased; want 4, 0", n, l)
	}
}

// A waiting acquisition's permit taken by a late copy of an earlier attempt (its re-send found too
// few permits; the copy lands once there are enough) and reported by a later attempt is leased from
// when that copy ran: the holder's context ends before the lease ends in Redis, not a lease after
// the later attempt was sent, when another acquirer may already hold the permit.
func TestPermitTakenByLateCopyEndsWithItsLease(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const name = "late-copy-lease"
	const lease = 2 * time.Second
	srv := redistest.Start(t)
	admin := srv.Client(t)
	hook := &aroundHook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	c := newClient(t, rdb, redisson.WithRepollInterval(lease/2))
	direct := newClient(t, srv.Client(t)).PermitExpirableSemaphore(name)
	p := c.PermitExpirableSemaphore(name)
	var (
		armed atomic.Bool
		mu    sync.Mutex
		late  []string
	)
	resent := make(chan struct{})
	hook.setCmd(func(_ context.Context, a []string, cmd redis.Cmder, next func() error) error {
		if !semAcquireCall("", "w")(a) {
			return next()
		}
		if a[15] == "0" && armed.CompareAndSwap(true, false) {
			// This attempt's first copy is delayed in the network; the client re-sends it.
			mu.Lock()
			late = a
			mu.Unlock()
			cmd.SetErr(io.EOF)
			return io.EOF
		}
		err := next()
		mu.Lock()
		if a[15] == "1" && late != nil {
			close(resent)
		}
		mu.Unlock()
		return err
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	type result struct {
		h   *redisson.HeldPermits
		err error
	}
	res := make(chan result, 1)
	spawn(&wg, func() {
		h, err := p.AcquireHeld(ctx, 1, redisson.WithLease(lease))
		res <- result{h, err}
	})
	eventually(t, 5*time.Second, "the acquisition registered as a waiter", func() bool { return semWaiters(t, c, name) == 1 })
	armed.Store(true)
	recvWithin(t, resent, 5*time.Second, "a waiting attempt re-sent") // it found too few permits
	mu.Lock()
	a := late
	mu.Unlock()
	// A permit comes back without a message (a lease ends, say), and the late copy lands.
	if err := admin.IncrBy(ctx, a[3], 1).Err(); err != nil {
		t.Fatal(err)
	}
	copyArgs := make([]any, len(a))
	for i, s := range a {
		copyArgs[i] = s
	}
	if err := admin.Do(ctx, copyArgs...).Err(); err != nil {
		t.Fatalf("the late copy: %v", err)
	}
	pid := a[7] + "#1"
	if _, err := direct.RemainingLease(ctx, pid); err != nil {
		t.Fatalf("precondition: the late copy took no permit (%v)", err)
	}
	r := recvWithin(t, res, 5*time.Second, "the waiting AcquireHeld")
	if r.err != nil {
		t.Fatalf("AcquireHeld = %v", r.err)
	}
	if ids := r.h.IDs(); len(ids) != 1 || ids[0] != pid {
		t.Fatalf("AcquireHeld's ids = %v, want [%s]", ids, pid)
	}
	eventually(t, 5*time.Second, "the permit's lease ended in Redis", func() bool {
		_, err := direct.RemainingLease(ctx, pid)
		return errors.Is(err, redisson.ErrNotHeld)
	})
	if err := r.h.Context().Err(); err == nil {
		t.Error("the holder's context is live after its permit's lease ended in Redis (another acquirer may take the permit)")
	}
}
