package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/redistest"
)

func holdCount(t *testing.T, h *redisson.Hold) int {
	t.Helper()
	n, err := h.HoldCount(t.Context())
	if err != nil {
		t.Fatalf("HoldCount() = %v", err)
	}
	return n
}

// mustUnlock unlocks h, failing the test on an error. It may run in a Cleanup, where t.Context() has
// ended: it unlocks with a context of its own.
func mustUnlock(t *testing.T, h *redisson.Hold) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 10*time.Second)
	defer cancel()
	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("Unlock(%q) = %v", h.Name(), err)
	}
}

func TestLockUnlock(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	l := c.Lock("orders:1")

	h, err := l.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock() = %v", err)
	}
	if locked, err := l.IsLocked(ctx); err != nil || !locked {
		t.Fatalf("IsLocked() = %v, %v; want true, nil", locked, err)
	}
	if n := holdCount(t, h); n != 1 {
		t.Fatalf("HoldCount() = %d; want 1", n)
	}
	if h.Name() != "orders:1" {
		t.Fatalf("Name() = %q", h.Name())
	}
	if got, want := rdb.Exists(ctx, redisson.LockKeyOf(c, "orders:1")).Val(), int64(1); got != want {
		t.Fatalf("lock key exists = %d; want %d", got, want)
	}
	ttl, err := l.RemainingTTL(ctx)
	if err != nil || ttl <= 0 || ttl > redisson.DefaultWatchdogTimeout {
		t.Fatalf("RemainingTTL() = %v, %v; want in (0, %v]", ttl, err, redisson.DefaultWatchdogTimeout)
	}
	if h.Context().Err() != nil {
		t.Fatalf("hold's context done while held: %v", context.Cause(h.Context()))
	}
	mustUnlock(t, h)
	if context.Cause(h.Context()) != context.Canceled {
		t.Fatalf("after Unlock, cause = %v; want context.Canceled", context.Cause(h.Context()))
	}
	if locked, err := l.IsLocked(ctx); err != nil || locked {
		t.Fatalf("IsLocked() after Unlock = %v, %v; want false, nil", locked, err)
	}
	if ttl, err := l.RemainingTTL(ctx); err != nil || ttl != 0 {
		t.Fatalf("RemainingTTL() after unlock = %v, %v; want 0, nil", ttl, err)
	}
	if n := holdCount(t, h); n != 0 {
		t.Fatalf("HoldCount() after unlock = %d; want 0", n)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("second Unlock() = %v; want ErrNotHeld (not lost)", err)
	}
	var rerr *redisson.Error
	if err := h.Unlock(ctx); !errors.As(err, &rerr) || rerr.Op != "unlock" || rerr.Name != "orders:1" {
		t.Fatalf("Unlock() error = %#v; want *Error{Op: unlock, Name: orders:1}", err)
	}
}

func TestReentryDepth3(t *testing.T) {
	c, _, _ := setup(t)
	l := c.Lock("reentrant")
	h := mustLock(t, l, t.Context())
	levels := []*redisson.Hold{h}
	for want := 2; want <= 3; want++ {
		next, err := levels[len(levels)-1].Reenter(t.Context())
		if err != nil {
			t.Fatalf("re-entry %d: %v", want, err)
		}
		if next.Context() != h.Context() {
			t.Fatal("levels of one owner have different contexts")
		}
		levels = append(levels, next)
		if n := holdCount(t, h); n != want {
			t.Fatalf("HoldCount() = %d; want %d", n, want)
		}
	}
	// Levels may be unlocked in any order; the last one releases.
	for i, lv := range []*redisson.Hold{levels[0], levels[2], levels[1]} {
		mustUnlock(t, lv)
		want := 2 - i
		if n := holdCount(t, levels[1]); n != want {
			t.Fatalf("HoldCount() = %d; want %d", n, want)
		}
		if held := h.Context().Err() == nil; held != (want > 0) {
			t.Fatalf("hold's context alive = %v at count %d", held, want)
		}
	}
	if locked, _ := l.IsLocked(t.Context()); locked {
		t.Fatal("still locked after the last unlock")
	}
	if _, err := h.Reenter(t.Context()); !errors.Is(err, redisson.ErrNotObtained) || !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("Reenter() after release = %v; want ErrNotObtained and ErrNotHeld", err)
	}
}

func TestSameHandleExcludes(t *testing.T) {
	c, _, srv := setup(t)
	ctx := t.Context()
	l := c.Lock("shared")
	h := mustLock(t, l, ctx)
	if _, err := l.TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock() through the same handle = %v; want ErrNotObtained", err)
	}
	// Another client (another process, as far as Redis can tell) is refused too, in Redis.
	c2 := newClient(t, srv.Client(t))
	if _, err := c2.Lock("shared").TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock() from another client = %v; want ErrNotObtained", err)
	}
	if _, err := c2.Lock("shared").TryLock(ctx, redisson.WithWait(50*time.Millisecond)); !errors.Is(err, redisson.ErrNotObtained) ||
		errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryLock(WithWait) = %v; want ErrNotObtained not caused by ctx", err)
	}
	mustUnlock(t, h)
}

// Releasing is a method of what the acquisition returned, so a lock cannot be
// "unlocked" through the wrong token and leak; and a Hold is unlocked once.
func TestUnlockOnlyThroughItsHold(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	a := mustLock(t, c.Lock("owned"), ctx)
	key := redisson.LockKeyOf(c, "owned")
	before := rdb.Get(ctx, key).Val()
	b := mustLock(t, c.Lock("other"), ctx)
	mustUnlock(t, b)
	if err := b.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("Unlock() of an unlocked hold = %v; want ErrNotHeld", err)
	}
	var zero *redisson.Hold
	if err := zero.Unlock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("nil Hold Unlock() = %v; want ErrInvalidArgument", err)
	}
	if err := new(redisson.Hold).Unlock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("zero Hold Unlock() = %v; want ErrInvalidArgument", err)
	}
	if after := rdb.Get(ctx, key).Val(); after != before {
		t.Fatalf("lock changed by other holds: %v; want %v", after, before)
	}
	mustUnlock(t, a)
}

// Two concurrent final Unlocks of one Hold: exactly one succeeds.
func TestConcurrentUnlocksOfOneHold(t *testing.T) {
	c, _, _ := setup(t)
	for range 20 {
		h := mustLock(t, c.Lock("twice"), t.Context())
		var ok, notHeld atomic.Int32
		var wg sync.WaitGroup
		for range 2 {
			spawn(&wg, func() {
				switch err := h.Unlock(t.Context()); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, redisson.ErrNotHeld):
					notHeld.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 1 || notHeld.Load() != 1 {
			t.Fatalf("two concurrent Unlocks: %d nil, %d ErrNotHeld; want 1 and 1", ok.Load(), notHeld.Load())
		}
	}
}

// A context derived from the hold's context does not carry the ownership: an
// errgroup fan-out given it waits like anyone else.
func TestDerivedContextDoesNotReenter(t *testing.T) {
	c, _, _ := setup(t)
	l := c.Lock("fan-out")
	h := mustLock(t, l, t.Context())
	derived, cancel := context.WithCancel(h.Context())
	defer cancel()
	if _, err := l.TryLock(derived); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock(context derived from the hold's) = %v; want ErrNotObtained", err)
	}
	// Four goroutines of a fan-out given the derived context wait instead of entering: each gives up
	// when the release cancels the context, or is handed the lock by the release as a new owner.
	results := make(chan error, 4)
	for range 4 {
		go func() {
			g, err := l.Lock(derived)
			if err == nil {
				if g.Context() == h.Context() {
					err = errors.New("re-entered the holder's owner")
				} else if h.Context().Err() == nil {
					err = errors.New("acquired while the holder held the lock")
				}
				_ = g.Unlock(t.Context())
			} else if !errors.Is(err, redisson.ErrNotObtained) || !errors.Is(err, context.Canceled) {
				err = fmt.Errorf("wait ended otherwise than by the release: %w", err)
			} else {
				err = nil
			}
			results <- err
		}()
	}
	mustUnlock(t, h)
	for range 4 {
		if err := <-results; err != nil {
			t.Errorf("Lock(context derived from the hold's): %v", err)
		}
	}
	// A context the caller marked does re-enter, with the same owner.
	h = mustLock(t, l, t.Context())
	marked := redisson.ContextWithHold(t.Context(), h)
	inner, err := l.TryLock(marked)
	if err != nil {
		t.Fatalf("TryLock(marked context) = %v", err)
	}
	if inner.Context() != h.Context() || holdCount(t, h) != 2 {
		t.Fatal("the marked context did not re-enter the same owner")
	}
	if _, err := c.Lock("another").TryLock(marked); err != nil {
		t.Fatalf("a mark for one lock affected another: %v", err)
	}
	mustUnlock(t, inner)
	mustUnlock(t, h)
	if _, err := l.TryLock(marked); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("TryLock(marked with a released hold) = %v; want ErrNotHeld", err)
	}
}

// The waiting context does not parent the work context, so hand-over-hand locking
// works: unlocking a does not cancel the work under b, and cancelling a wait cancels no work.
func TestHandOverHand(t *testing.T) {
	c, _, _ := setup(t)
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "trace-id"))
	a := mustLock(t, c.Lock("hoh:a"), parent)
	b := mustLock(t, c.Lock("hoh:b"), a.Context())
	mustUnlock(t, a)
	if b.Context().Err() != nil {
		t.Fatalf("unlocking a cancelled b's context: %v", context.Cause(b.Context()))
	}
	cancel()
	if b.Context().Err() != nil {
		t.Fatalf("cancelling the waiting context cancelled b's work: %v", context.Cause(b.Context()))
	}
	if b.Context().Value(key{}) != "trace-id" {
		t.Fatal("the hold's context lost the values of the acquisition's context")
	}
	mustUnlock(t, b)
}

func TestFixedLeaseExpiresWithoutRenewal(t *testing.T) {
	long(t)
	t.Parallel()
	var lost atomic.Int32
	c, rdb, _ := setup(t, redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			lost.Add(1)
		}
	}))
	ctx := t.Context()
	l := c.Lock("leased")
	key := redisson.LockKeyOf(c, "leased")
	start := time.Now()
	h := mustLock(t, l, ctx, redisson.WithLease(400*time.Millisecond))
	if pttl := rdb.PTTL(ctx, key).Val(); pttl <= 0 || pttl > 400*time.Millisecond {
		t.Fatalf("PTTL = %v; want in (0, 400ms]", pttl)
	}
	// Re-entry does not extend a fixed lease.
	before := rdb.PTTL(ctx, key).Val()
	inner, err := h.Reenter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after := rdb.PTTL(ctx, key).Val(); after > before {
		t.Fatalf("re-entry extended a fixed lease: %v > %v", after, before)
	}
	<-h.Context().Done()
	// Told before the key can expire (the default margin is a tenth of the lease).
	if rdb.Exists(ctx, key).Val() != 1 && time.Since(start) < 400*time.Millisecond {
		t.Fatal("the key expired before the hold's context was cancelled")
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("cause = %v; want ErrLockLost", cause)
	}
	eventually(t, time.Second, "key to expire", func() bool { return rdb.Exists(ctx, key).Val() == 0 })
	for _, lv := range []*redisson.Hold{inner, h} {
		if err := lv.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
			t.Fatalf("Unlock() after lease = %v; want ErrNotHeld and ErrLockLost", err)
		}
	}
	if c.Stats().RenewCalls != 0 {
		t.Fatalf("fixed lease was renewed: %+v", c.Stats())
	}
	eventually(t, 5*time.Second, "the loss to be reported (after its signal)", func() bool { return lost.Load() > 0 })
	if lost.Load() != 1 {
		t.Fatalf("EventLost fired %d times; want 1", lost.Load())
	}
}

func TestWatchdogKeepsLockAlive(t *testing.T) {
	long(t)
	t.Parallel()
	c, rdb, _ := setup(t, redisson.WithWatchdogTimeout(300*time.Millisecond))
	h := mustLock(t, c.Lock("long-job"), t.Context())
	// Six renewals span more than two full leases.
	eventually(t, 5*time.Second, "6 renewals", func() bool { return c.Stats().Renewed >= 6 })
	if h.Context().Err() != nil {
		t.Fatalf("lost while renewed: %v", context.Cause(h.Context()))
	}
	if rdb.Exists(t.Context(), redisson.LockKeyOf(c, "long-job")).Val() != 1 {
		t.Fatal("lock expired despite the watchdog")
	}
	mustUnlock(t, h)
	if n := c.Stats().Held; n != 0 {
		t.Fatalf("Stats().Held = %d after unlock; want 0", n)
	}
}

func TestWaiterWokenByRelease(t *testing.T) {
	c, _, srv := setup(t, redisson.WithRepollInterval(time.Minute)) // only a message can wake the waiter
	ctx := t.Context()
	h := mustLock(t, c.Lock("handoff"), ctx)
	other := newClient(t, srv.Client(t))
	got := make(chan error, 1)
	go func() {
		g, err := other.Lock("handoff").Lock(ctx)
		if err == nil {
			err = g.Unlock(ctx)
		}
		got <- err
	}()
	eventually(t, 5*time.Second, "waiter to subscribe", func() bool { return other.Stats().Subscriptions == 1 })
	mustUnlock(t, h)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("waiter not woken by the release")
	}
}

func TestWaitEndedByContext(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	l := c.Lock("busy")
	h := mustLock(t, l, ctx)
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err := l.Lock(wctx) // queued behind the holder in this process
	if !errors.Is(err, redisson.ErrNotObtained) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, redisson.ErrBusy) {
		t.Fatalf("Lock() with an ending context = %v; want ErrNotObtained, DeadlineExceeded and ErrBusy", err)
	}
	if want := `redisson: lock "busy": not obtained: context deadline exceeded: held or awaited by another owner in this process`; err.Error() != want {
		t.Fatalf("error text = %q; want %q", err.Error(), want)
	}
	if n := holdCount(t, h); n != 1 {
		t.Fatalf("holder's count = %d after a failed wait; want 1", n)
	}
	mustUnlock(t, h)
}

// A cancelled request context does not stop the release (which would leave the lock held for a whole lease).
func TestUnlockWithCancelledContext(t *testing.T) {
	c, _, _ := setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	l := c.Lock("request-scoped")
	h := mustLock(t, l, ctx)
	cancel()
	if h.Context().Err() != nil {
		t.Fatal("cancelling the acquisition's context ended the hold")
	}
	// Unlock waits for the release while its context lasts and a few milliseconds more: with a
	// cancelled context it answers nil if the release answered in that time, else the context's
	// error while the release goes on. Either way the lock is released.
	if err := h.Unlock(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Unlock(cancelled context) = %v; want nil or context.Canceled", err)
	}
	eventually(t, 5*time.Second, "the lock released", func() bool {
		locked, err := l.IsLocked(t.Context())
		return err == nil && !locked
	})
	// HoldCount, a plain query, honours its context.
	if _, err := h.HoldCount(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("HoldCount(cancelled context) = %v; want context.Canceled", err)
	}
}

func TestForceUnlock(t *testing.T) {
	c, _, _ := setup(t, redisson.WithWatchdogTimeout(300*time.Millisecond))
	ctx := t.Context()
	l := c.Lock("stuck")
	h := mustLock(t, l, ctx)
	if ok, err := l.ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock() = %v, %v; want true, nil", ok, err)
	}
	if ok, err := l.ForceUnlock(ctx); err != nil || ok {
		t.Fatalf("second ForceUnlock() = %v, %v; want false, nil", ok, err)
	}
	<-h.Context().Done() // the watchdog finds the lock gone
	if !errors.Is(context.Cause(h.Context()), redisson.ErrLockLost) {
		t.Fatalf("cause = %v; want ErrLockLost", context.Cause(h.Context()))
	}
	// The local turn was given up with the loss, so the lock can be taken again.
	h2, err := l.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock() after loss = %v", err)
	}
	if _, err := h.Reenter(ctx); !errors.Is(err, redisson.ErrNotObtained) || !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("Reenter(lost) = %v; want ErrNotObtained and ErrLockLost", err)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("Unlock(lost) = %v; want ErrNotHeld and ErrLockLost", err)
	}
	mustUnlock(t, h2)
}

// A goroutine that unlocks and at once locks again must not keep beating the goroutines already
// waiting: each of them gets turns.
func TestNoLocalStarvation(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	l := c.Lock("hot")
	const workers, rounds = 4, 25
	var counts [workers]atomic.Int32
	var inside atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		spawn(&wg, func() {
			for range rounds {
				h, err := l.Lock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) != 1 {
					t.Error("two holders at once")
				}
				counts[w].Add(1)
				inside.Add(-1)
				if err := h.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// While all four loop, every worker must progress: the local queue is FIFO, so when half of
	// all turns are done each worker has had about a quarter of them.
	eventually(t, 30*time.Second, "half the rounds", func() bool {
		var total int32
		for i := range counts {
			total += counts[i].Load()
		}
		return total >= workers*rounds/2
	})
	for i := range counts {
		if n := counts[i].Load(); n < rounds/4 {
			t.Errorf("worker %d had %d turns when half of all turns were done; starved", i, n)
		}
	}
	wg.Wait()
}

func TestBadInput(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	if _, err := redisson.New(nil); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("New(nil) = %v; want ErrInvalidArgument", err)
	}
	for name, opt := range map[string]redisson.Option{
		"zero watchdog":   redisson.WithWatchdogTimeout(0),
		"tiny watchdog":   redisson.WithWatchdogTimeout(time.Millisecond),
		"negative repoll": redisson.WithRepollInterval(-time.Second),
		"brace prefix":    redisson.WithKeyPrefix("a{b"),
		"negative margin": redisson.WithLossMargin(-0.1),
		"huge margin":     redisson.WithLossMargin(0.9),
		"nil logger":      redisson.WithLogger(nil),
		"nil hook":        redisson.WithEventHook(nil),
		"nil option":      nil,
	} {
		if _, err := redisson.New(rdb, opt); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("New(%s) = %v; want ErrInvalidArgument", name, err)
		}
	}
	for _, name := range []string{"", "}a"} {
		l := c.Lock(name)
		if _, err := l.Lock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) || !errors.Is(err, redisson.ErrNotObtained) {
			t.Errorf("Lock(%q) = %v; want ErrInvalidArgument", name, err)
		}
		if _, err := l.IsLocked(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("IsLocked(%q) = %v; want ErrInvalidArgument", name, err)
		}
		if _, err := l.ForceUnlock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("ForceUnlock(%q) = %v; want ErrInvalidArgument", name, err)
		}
		if _, err := l.RemainingTTL(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("RemainingTTL(%q) = %v; want ErrInvalidArgument", name, err)
		}
	}
	l := c.Lock("fine")
	for name, opt := range map[string]redisson.AcquireOption{
		"zero lease":     redisson.WithLease(0),
		"negative lease": redisson.WithLease(-time.Second),
		"negative wait":  redisson.WithWait(-time.Second),
		"nil":            nil,
	} {
		if _, err := l.TryLock(ctx, opt); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("TryLock(%s) = %v; want ErrInvalidArgument", name, err)
		}
	}
	//lint:ignore SA1012 checking that a nil context is refused, not a panic
	if _, err := l.Lock(nil); !errors.Is(err, redisson.ErrInvalidArgument) { //nolint:staticcheck
		t.Errorf("Lock(nil) = %v; want ErrInvalidArgument", err)
	}
	var nilLock *redisson.Lock
	if _, err := nilLock.Lock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("nil handle Lock() = %v; want ErrInvalidArgument", err)
	}
	if _, err := new(redisson.Lock).IsLocked(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("zero Lock IsLocked() = %v; want ErrInvalidArgument", err)
	}
	var nilClient *redisson.Client
	if _, err := nilClient.Lock("x").TryLock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("Lock from a nil client = %v; want ErrInvalidArgument", err)
	}
	if err := nilClient.Close(); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("nil Client.Close() = %v; want ErrInvalidArgument", err)
	}
	var nilHold *redisson.Hold
	if _, err := nilHold.Reenter(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("nil Hold Reenter() = %v; want ErrInvalidArgument", err)
	}
	if _, err := nilHold.HoldCount(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("nil Hold HoldCount() = %v; want ErrInvalidArgument", err)
	}
	if nilHold.Context().Err() == nil {
		t.Error("nil Hold Context() is not done")
	}
	if got := redisson.ContextWithHold(ctx, nil); got != ctx {
		t.Error("ContextWithHold(ctx, nil) changed ctx")
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("bad input wrote %d keys", n)
	}
}

// New refuses a Ring: it would remap the lock's key to another shard when shards come and go.
func TestRingRefused(t *testing.T) {
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	if _, err := redisson.New(ring); !errors.Is(err, redisson.ErrInvalidArgument) || !strings.Contains(err.Error(), "Ring") {
		t.Fatalf("New(*redis.Ring) = %v; want ErrInvalidArgument naming the Ring", err)
	}
}

func TestWrongType(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	key := redisson.LockKeyOf(c, "taken")
	for name, write := range map[string]func() error{
		"string": func() error { return rdb.Set(ctx, key, "a string", 0).Err() },
		"hash":   func() error { return rdb.HSet(ctx, key, "f", "v").Err() },
		// Looks like a lock string but is not one: an empty level id.
		"near miss": func() error { return rdb.Set(ctx, key, "owner|1,,2|", 0).Err() },
	} {
		rdb.Del(ctx, key)
		if err := write(); err != nil {
			t.Fatal(err)
		}
		dump := rdb.Dump(ctx, key).Val()
		l := c.Lock("taken")
		if _, err := l.Lock(ctx); !errors.Is(err, redisson.ErrWrongType) || !errors.Is(err, redisson.ErrNotObtained) {
			t.Errorf("%s: Lock() = %v; want ErrWrongType and ErrNotObtained", name, err)
		}
		if _, err := l.IsLocked(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: IsLocked() = %v; want ErrWrongType", name, err)
		}
		if _, err := l.RemainingTTL(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: RemainingTTL() = %v; want ErrWrongType", name, err)
		}
		if _, err := l.ForceUnlock(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: ForceUnlock() = %v; want ErrWrongType", name, err)
		}
		if got, ttl := rdb.Dump(ctx, key).Val(), rdb.PTTL(ctx, key).Val(); got != dump || ttl != -1 {
			t.Fatalf("%s: value changed (ttl %v)", name, ttl)
		}
	}
	// The failed acquisitions gave up this process's turn.
	rdb.Del(ctx, key)
	h, err := c.Lock("taken").TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock() after the key was freed = %v", err)
	}
	mustUnlock(t, h)
}

func TestKeyPrefix(t *testing.T) {
	c, rdb, _ := setup(t, redisson.WithKeyPrefix("app:"))
	ctx := t.Context()
	h := mustLock(t, c.Lock("job"), ctx)
	if rdb.Exists(ctx, "app:job").Val() != 1 {
		t.Fatalf("keys = %v; want app:job", rdb.Keys(ctx, "*").Val())
	}
	mustUnlock(t, h)
}

func TestClose(t *testing.T) {
	base := runtime.NumGoroutine()
	c, rdb, srv := setup(t)
	ctx := t.Context()
	l := c.Lock("closing")
	h := mustLock(t, l, ctx)
	other, err := redisson.New(srv.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() {
		_, err := other.Lock("closing").Lock(ctx)
		waitErr <- err
	}()
	eventually(t, 5*time.Second, "waiter to subscribe", func() bool { return other.Stats().Subscriptions == 1 })
	other.Close()
	if err := <-waitErr; !errors.Is(err, redisson.ErrClosed) || !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("waiter after Close = %v; want ErrClosed", err)
	}
	if _, err := other.Lock("x").TryLock(ctx); !errors.Is(err, redisson.ErrClosed) {
		t.Fatalf("TryLock() on a closed client = %v; want ErrClosed", err)
	}

	c.Close()
	c.Close() // idempotent
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) || !errors.Is(cause, redisson.ErrClosed) {
		t.Fatalf("holder's cause after Close = %v; want ErrLockLost and ErrClosed", cause)
	}
	if rdb.Exists(ctx, redisson.LockKeyOf(c, "closing")).Val() != 1 {
		t.Fatal("Close released a held lock; it should be left to expire")
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrClosed) {
		t.Fatalf("Unlock() after Close = %v; want ErrNotHeld and ErrClosed", err)
	}
	// Every goroutine the clients started is gone (go-redis' own pool goroutines belong to rdb).
	eventually(t, 5*time.Second, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= base+2 })
}

// cancelBeforeRelease cancels a context just before the release script is sent (recognised by its
// hash).
type cancelBeforeRelease struct {
	cancel context.CancelFunc
}

func (h cancelBeforeRelease) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h cancelBeforeRelease) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h cancelBeforeRelease) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); len(a) > 5 && a[0] == "evalsha" && a[1] == scripts.LockRelease.Hash() {
			h.cancel()
		}
		return next(ctx, cmd)
	}
}

// A deferred Unlock in a request whose context is cancelled during the call still releases.
func TestUnlockNotCutShortByCancellation(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	parent, cancel := context.WithCancel(t.Context())
	c := newClient(t, rdb)
	rdb.AddHook(cancelBeforeRelease{cancel})
	l := c.Lock("racy")
	h := mustLock(t, l, parent)
	if err := h.Unlock(parent); err != nil {
		t.Fatalf("Unlock() = %v; want nil", err)
	}
	if parent.Err() == nil {
		t.Fatal("the hook did not cancel the parent: test is vacuous")
	}
	if locked, _ := l.IsLocked(t.Context()); locked || c.Stats().Held != 0 {
		t.Fatal("lock still held after Unlock")
	}
}

// unlockStart, in the context of an Unlock, is when the Unlock was called (see releaseContextHook).
type unlockStart struct{}

// isLockRelease reports whether a are the arguments of the plain lock's release script.
func isLockRelease(a []string) bool {
	return len(a) > 5 && a[0] == "evalsha" && a[1] == scripts.LockRelease.Hash()
}

// The release an Unlock sends runs with a context of its own: the caller's values, not its
// cancellation (nor its deadline), ending at most CleanupTimeout after the release began and at most
// CleanupShare sooner (the releases that start within CleanupShare of each other share one end); a
// context derived from it has the same end. Unlocks run concurrently for several CleanupShare
// windows, with contexts that can never end (the release runs on the caller's goroutine), that have
// ended (it runs in the background) and that last (the caller waits for it).
func TestUnlockReleaseContext(t *testing.T) {
	srv := redistest.Start(t)
	hook := &aroundHook{}
	c := hookedClient(t, srv, hook)
	var mu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	var released atomic.Int64
	hook.setCmd(func(ctx context.Context, a []string, _ redis.Cmder, next func() error) error {
		if !isLockRelease(a) {
			return next()
		}
		defer released.Add(1)
		now := time.Now()
		start, ok := ctx.Value(unlockStart{}).(time.Time)
		if !ok {
			problem("the release's context lacks the caller's value")
			return next()
		}
		dl, ok := ctx.Deadline()
		switch {
		case !ok:
			problem("the release's context has no deadline")
		case dl.Sub(now) > redisson.CleanupTimeout:
			problem("the release's context ends %v after the release was sent; want at most %v", dl.Sub(now), redisson.CleanupTimeout)
		case dl.Sub(start) < redisson.CleanupTimeout-redisson.CleanupShare:
			problem("the release's context ends %v after Unlock was called; want at least %v", dl.Sub(start), redisson.CleanupTimeout-redisson.CleanupShare)
		}
		if err := ctx.Err(); err != nil {
			problem("the release's context has ended (%v): the caller's cancellation reached it", err)
		}
		if cause := context.Cause(ctx); cause != nil {
			problem("context.Cause of the release's context = %v; want nil while it lasts", cause)
		}
		child, cancel := context.WithTimeout(ctx, time.Hour)
		if cdl, _ := child.Deadline(); !cdl.Equal(dl) || child.Err() != nil || child.Value(unlockStart{}) != start {
			problem("a context derived from the release's: deadline %v (want %v), err %v, value %v", cdl, dl, child.Err(), child.Value(unlockStart{}))
		}
		cancel()
		return next()
	})
	const workers = 4
	var wg sync.WaitGroup
	var unlocks atomic.Int64
	until := time.Now().Add(4 * redisson.CleanupShare)
	for w := range workers {
		spawn(&wg, func() {
			l := c.Lock(fmt.Sprintf("release-context-%d", w))
			for i := 0; time.Now().Before(until); i++ {
				h, err := l.Lock(t.Context())
				if err != nil {
					t.Errorf("Lock() = %v", err)
					return
				}
				start := time.Now()
				parent, cancel := context.Background(), context.CancelFunc(func() {})
				switch i % 3 {
				case 0: // never ends
				case 1: // ended, with a cause of its own that the release must not see
					var cancelCause context.CancelCauseFunc
					parent, cancelCause = context.WithCancelCause(t.Context())
					cancelCause(errors.New("the caller's cause"))
				default: // lasts, with a deadline of its own that the release must not take
					parent, cancel = context.WithTimeout(t.Context(), time.Minute)
				}
				err = h.Unlock(context.WithValue(parent, unlockStart{}, start))
				cancel()
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("Unlock() = %v; want nil or context.Canceled", err)
					return
				}
				unlocks.Add(1)
				// Paced, so that the releases spread over several CleanupShare windows.
				time.Sleep(3 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	// The releases of ended contexts may still be going on in the background.
	eventually(t, 5*time.Second, "every release sent", func() bool { return released.Load() >= unlocks.Load() })
	if unlocks.Load() < 3*workers {
		t.Fatalf("only %d unlocks: the test is vacuous", unlocks.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
}

// A release that Redis does not answer goes on until its own context ends, CleanupTimeout (less
// CleanupShare at most) after it began, whatever the caller's context does: cancelling the caller's
// ends the Unlock, not the release, which keeps the caller's values. At its end the release's
// context, and the contexts derived from it, end with context.DeadlineExceeded (their cause too),
// and the hold ends: the release's outcome is unknown.
func TestUnlockReleaseContextEndsAtItsBound(t *testing.T) {
	long(t)
	t.Parallel() // it waits CleanupTimeout for one release
	srv := redistest.Start(t)
	hook := &aroundHook{}
	c := hookedClient(t, srv, hook)
	h := mustLock(t, c.Lock("release-context-bound"), t.Context())
	type valueKey struct{}
	type stuck struct {
		ended                         time.Time
		value                         any
		errAtCancel, err, cause       error
		childErr, childCause, timeErr error
	}
	reached := make(chan struct{})
	callerCancelled := make(chan struct{})
	result := make(chan stuck, 1)
	var once sync.Once
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		if !isLockRelease(a) {
			return next()
		}
		first := false
		once.Do(func() { first = true })
		if !first {
			return next()
		}
		child, cancelChild := context.WithCancel(ctx)
		defer cancelChild()
		timed, cancelTimed := context.WithTimeout(ctx, time.Hour)
		defer cancelTimed()
		close(reached)
		var r stuck
		r.value = ctx.Value(valueKey{})
		waitClosed(callerCancelled)
		r.errAtCancel = ctx.Err()
		waitClosed(ctx.Done()) // Redis does not answer
		r.ended = time.Now()
		r.err, r.cause = ctx.Err(), context.Cause(ctx)
		waitClosed(child.Done())
		waitClosed(timed.Done())
		r.childErr, r.childCause, r.timeErr = child.Err(), context.Cause(child), timed.Err()
		result <- r
		cmd.SetErr(r.err)
		return r.err
	})
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), valueKey{}, "caller's"))
	defer cancel()
	start := time.Now()
	unlocked := make(chan error, 1)
	go func() { unlocked <- h.Unlock(ctx) }()
	recvWithin(t, reached, 5*time.Second, "the release")
	cancel()
	close(callerCancelled)
	if err := recvWithin(t, unlocked, time.Second, "Unlock to return after its context was cancelled"); !errors.Is(err, context.Canceled) {
		t.Errorf("Unlock(cancelled while the release is stuck) = %v; want context.Canceled", err)
	}
	r := recvWithin(t, result, 2*redisson.CleanupTimeout, "the release's context to end")
	if r.value != "caller's" {
		t.Errorf("the release's context has value %v; want the caller's", r.value)
	}
	if r.errAtCancel != nil {
		t.Errorf("the release's context ended (%v) when the caller's was cancelled", r.errAtCancel)
	}
	if took := r.ended.Sub(start); took < redisson.CleanupTimeout-redisson.CleanupShare || took > redisson.CleanupTimeout+deadlineSlack {
		t.Errorf("the release's context ended %v after Unlock was called; want %v to %v", took, redisson.CleanupTimeout-redisson.CleanupShare, redisson.CleanupTimeout)
	}
	for what, err := range map[string]error{"Err": r.err, "Cause": r.cause, "a derived context's Err": r.childErr,
		"a derived context's Cause": r.childCause, "a derived context with a later deadline's Err": r.timeErr} {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("at the release's end, %s = %v; want context.DeadlineExceeded", what, err)
		}
	}
	awaitClosed(t.Context(), h.Context().Done(), 5*time.Second)
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Errorf("the hold's cause after a release that timed out = %v; want ErrLockLost", cause)
	}
}

// Between processes (here: separate Clients), a client that unlocks and at once locks again must not
// keep the others out: every client finishes its share. (How evenly the lock is shared is measured by
// the benchmark, not asserted here.)
func TestNoStarvationAcrossClients(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	const clients, each = 8, 25
	var inside atomic.Int32
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for range clients {
		l := newClient(t, srv.Client(t)).Lock("contended-across")
		spawn(&wg, func() {
			for range each {
				h, err := l.Lock(ctx)
				if err != nil {
					t.Errorf("a client was kept out: %v", err)
					return
				}
				if inside.Add(1) != 1 {
					t.Error("two holders at once")
				}
				time.Sleep(time.Millisecond) // the critical section
				inside.Add(-1)
				if err := h.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A Lock or FencedLock waiter of another Client that is granted the lock but gives it back because
// the answer came too late (a paused server) keeps its place at the head of the queue (see
// lateGrantOrder in fairlock_test.go): the same mechanism as a FairLock's.
func TestLockLateGrantKeepsItsPlace(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range []string{"Lock", "FencedLock"} {
		t.Run(kind, func(t *testing.T) { lateGrantOrder(t, kind, false) })
	}
}

// tinyWaitKinds are the acquisitions that take WithWait, by name; each acquires name from c.
var tinyWaitKinds = map[string]func(ctx context.Context, c *redisson.Client, name string, opts ...redisson.AcquireOption) (*redisson.Hold, error){
	"Lock": func(ctx context.Context, c *redisson.Client, n string, o ...redisson.AcquireOption) (*redisson.Hold, error) {
		return c.Lock(n).TryLock(ctx, o...)
	},
	"FairLock": func(ctx context.Context, c *redisson.Client, n string, o ...redisson.AcquireOption) (*redisson.Hold, error) {
		return c.FairLock(n).TryLock(ctx, o...)
	},
	"FencedLock": func(ctx context.Context, c *redisson.Client, n string, o ...redisson.AcquireOption) (*redisson.Hold, error) {
		return c.FencedLock(n).TryLock(ctx, o...)
	},
	"SpinLock": func(ctx context.Context, c *redisson.Client, n string, o ...redisson.AcquireOption) (*redisson.Hold, error) {
		return c.SpinLock(n).TryLock(ctx, o...)
	},
	"ReadWriteLock.Lock": func(ctx context.Context, c *redisson.Client, n string, o ...redisson.AcquireOption) (*redisson.Hold, error) {
		return c.ReadWriteLock(n).TryLock(ctx, o...)
	},
	"ReadWriteLock.RLock": func(ctx context.Context, c *redisson.Client, n string, o ...redisson.AcquireOption) (*redisson.Hold, error) {
		return c.ReadWriteLock(n).TryRLock(ctx, o...)
	},
}

// A WithWait bound shorter than a round trip still makes one attempt: a free lock of every
// kind is acquired with WithWait(1ns) and WithWait(1µs); on a held one the attempt fails, leaving
// nobody queued and the Client's pub/sub connection as it was.
func TestLockTinyWaitMakesOneAttempt(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	other := newClient(t, rdb)
	for kind, try := range tinyWaitKinds {
		for _, d := range []time.Duration{time.Nanosecond, time.Microsecond} {
			name := fmt.Sprintf("tiny-wait-%s-%v", kind, d)
			h, err := try(ctx, c, name, redisson.WithWait(d))
			if err != nil {
				t.Errorf("%s: TryLock(WithWait(%v)) on a free lock = %v; want it acquired", kind, d, err)
				continue
			}
			if kind == "ReadWriteLock.RLock" {
				mustUnlock(t, h)
				continue // readers share: nothing to hold it against
			}
			reconnects := other.Stats().Reconnects
			if h2, err := try(ctx, other, name, redisson.WithWait(d)); !errors.Is(err, redisson.ErrNotObtained) {
				t.Errorf("%s: TryLock(WithWait(%v)) on a held lock = %v, %v; want not obtained", kind, d, h2, err)
			}
			if n := other.Stats().Waiting; n != 0 {
				t.Errorf("%s: %d waiters left after the attempt", kind, n)
			}
			mustUnlock(t, h)
			if h, err := try(ctx, c, name); err != nil {
				t.Errorf("%s: the lock is not free after its holder unlocked: %v", kind, err)
			} else {
				mustUnlock(t, h)
			}
			if r := other.Stats().Reconnects; r != reconnects {
				t.Errorf("%s: the pub/sub connection reconnected (%d times)", kind, r-reconnects)
			}
		}
	}
}

// commandCalls is how many lock commands (scripts and SET) the server has run.
func commandCalls(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	var n int64
	for _, line := range strings.Split(rdb.Info(t.Context(), "commandstats").Val(), "\n") {
		for _, cmd := range []string{"evalsha", "eval", "set"} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
				var calls int64
				fmt.Sscan(strings.SplitN(rest, ",", 2)[0], &calls)
				n += calls
			}
		}
	}
	return n
}

// A lease shorter than a round trip (WithLease(1ms), the server 2ms away and back) is never vouched
// for: every grant is given back. The waiting acquisition pauses between give-backs, a
// randomized pause doubling from 1ms to 128ms, instead of spinning, and returns when its context
// ends. Over 2s it makes at most about 2s / 64ms (the shortest pause at the cap) rounds of an
// attempt and a give-back, each of which may be followed by an immediate one (a give-back that keeps
// the waiter's place hands the lock back to it): the bound is 200 commands; a spin makes more than
// one round every 2 round trips.
func TestLockTinyLeaseDoesNotSpin(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	p.Delay(time.Millisecond)
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	for _, kind := range []string{"Lock", "FairLock", "FencedLock", "SpinLock", "ReadWriteLock.Lock"} {
		t.Run(kind, func(t *testing.T) {
			try := tinyWaitKinds[kind]
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			before := commandCalls(t, admin)
			h, err := try(ctx, c, "tiny-lease-"+kind, redisson.WithLease(time.Millisecond), redisson.WithWait(time.Hour))
			returned := time.Now()
			calls := commandCalls(t, admin) - before
			t.Logf("%d commands in 2s", calls)
			if err == nil {
				mustUnlock(t, h)
				t.Fatalf("a 1ms lease 2ms away was reported held")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v; want the context's", err)
			}
			if deadline, _ := ctx.Deadline(); returned.After(deadline.Add(time.Second)) {
				t.Errorf("returned %v after the context ended", returned.Sub(deadline))
			}
			if calls > 200 {
				t.Errorf("%d commands in 2s: the acquisition spins between give-backs", calls)
			}
		})
	}
}

// A waiting acquisition keeps its context's deadline even when the network goes silent while it is
// giving back a grant answered too late (a give-back that keeps the waiter's place): that give-back,
// like every other clean-up, must not make the caller overstay its context (it may go on in the
// background). The lease (1ms) is shorter than the round trip (the server 50ms away and back), so
// the waiter cycles through attempts and give-backs; the network then goes silent (a black hole) at
// a random point of the cycle. The test tries several times: a black hole during a give-back that
// runs on the caller's goroutine holds Lock for the clean-up's whole bound (seconds).
func TestLockGiveBackKeepsTheCallersDeadline(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	const d = time.Second
	for try := 0; try < 6 && !t.Failed(); try++ {
		p := redistest.NewProxy(t, srv.Addr())
		p.Delay(50 * time.Millisecond)
		c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
		ctx, cancel := context.WithTimeout(t.Context(), d)
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := c.Lock(fmt.Sprintf("give-back-deadline-%d", try)).Lock(ctx, redisson.WithLease(time.Millisecond))
			done <- err
		}()
		silent := time.NewTimer(300*time.Millisecond + time.Duration(try)*40*time.Millisecond)
		var err error
		select {
		case err = <-done:
		case <-silent.C:
			p.Blackhole(true)
			err = <-done
		}
		took := time.Since(start)
		cancel()
		if err == nil {
			t.Fatalf("try %d: a 1ms lease 100ms away was reported held", try)
		}
		if took > d+deadlineSlack {
			t.Errorf("try %d: Lock with a %v context returned after %v once the network went silent: %v", try, d, took, err)
		}
	}
}

// An Unlock whose context has already ended returns that context's error when the release cannot
// answer at once (the server 30ms away), and the release goes on in the background: the same
// process can lock again at once (its local turn is handed on when the release answers), a second
// Unlock of the same Hold is refused with ErrNotHeld without releasing anything, and the first
// hold's context ends as released (context.Canceled), not lost.
func TestUnlockEndedContextThenLockAgain(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	l := c.Lock("unlock-ended-relock")
	h := mustLock(t, l, t.Context())
	p.Delay(30 * time.Millisecond)
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if err := h.Unlock(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("Unlock(ended context) with the server 60ms away = %v; want context.Canceled", err)
	}
	if err := h.Unlock(t.Context()); !errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("second Unlock of the hold = %v; want ErrNotHeld", err)
	}
	ctx, cancel2 := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel2()
	h2, err := l.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock after an Unlock left in the background = %v", err)
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, context.Canceled) || errors.Is(cause, redisson.ErrLockLost) {
		t.Errorf("first hold's context ended with %v; want context.Canceled (released)", cause)
	}
	if h2.Context().Err() != nil {
		t.Fatalf("second hold ended at once: %v", context.Cause(h2.Context()))
	}
	if n := holdCount(t, h2); n != 1 {
		t.Errorf("second hold's count = %d; want 1", n)
	}
	p.Delay(0)
	mustUnlock(t, h2)
	if locked, err := l.IsLocked(t.Context()); err != nil || locked {
		t.Errorf("IsLocked after both unlocks = %v, %v; want false", locked, err)
	}
}

// A Reenter whose context ends while its request is on the way (the server 50ms away, a 60ms
// context) fails and takes its level back in the background; the owner's final Unlock, made at
// once, still frees the lock, whichever of the two lands first, and the lock stays free.
func TestReenterEndedInFlightThenFinalUnlock(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	l := c.Lock("reenter-ended-unlock")
	h := mustLock(t, l, t.Context())
	p.Delay(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Millisecond)
	h2, err := h.Reenter(ctx)
	cancel()
	if err == nil {
		_ = h2.Unlock(t.Context())
		t.Skip("the re-entry answered within its context: nothing to check")
	}
	if err := h.Unlock(t.Context()); err != nil {
		t.Fatalf("final Unlock after a re-entry that ended in flight = %v", err)
	}
	key := redisson.LockKeyOf(c, "reenter-ended-unlock")
	// The re-entry's clean-up may land after the final release: the lock must stay free.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if n, _ := admin.Exists(t.Context(), key).Result(); n != 0 {
			v, _ := admin.Get(t.Context(), key).Result()
			t.Fatalf("the lock is held again after its owner's final Unlock: %q", v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLockHandOverWithHugeRepollInterval checks that WithRepollInterval's largest values are either
// refused by New (ErrInvalidArgument) or work: with a re-poll of 2^62ns, the final unlock of a lock
// claimed by a waiter succeeds and hands it over. The hand-over reservation is derived from the
// re-poll interval (2×repoll+1s); it must not overflow into an invalid expiry that makes every
// such release fail ("invalid expire time") and leaves the lock to expire.
func TestLockHandOverWithHugeRepollInterval(t *testing.T) {
	const name = "huge-repoll"
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
	spawn(&wg, func() {
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
	if err := recvWithin(t, wRes, 10*time.Second, "B's waiter"); err != nil {
		t.Errorf("B's waiter (3s): %v", err)
	}
}

// TestLockForceUnlockOfClaimedLock checks that ForceUnlock deletes a lock whose value carries a
// waiter's claim mark (a waiter of another Client has waited long enough to claim it): it reports
// the lock deleted rather than refusing it as a wrong type (WRONGTYPE), and the lock is then free
// or handed to the waiter, no longer held by its holder.
//
// W claims the lock held by G1 and is then held back (cmdHook) so that it cannot take the lock
// after the force unlock.
func TestLockForceUnlockOfClaimedLock(t *testing.T) {
	const name = "force-claimed"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	a := newClient(t, srv.Client(t))
	rdbB := srv.Client(t)
	hookB := &cmdHook{}
	rdbB.AddHook(hookB)
	b := newClient(t, rdbB, redisson.WithRepollInterval(20*time.Millisecond))
	c := newClient(t, srv.Client(t))

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); hookB.release(); wg.Wait() })

	g1, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	t.Cleanup(func() { _ = g1.Unlock(context.Background()) })
	wRes := make(chan error, 1)
	spawn(&wg, func() { // W, through Client B
		h, err := d.Lock(ctx, b, name, 20*time.Second, 0)
		wRes <- err
		if err == nil {
			_ = h.Unlock(context.WithoutCancel(ctx))
		}
	})
	eventually(t, 5*time.Second, "W to claim the lock (two attempts after waiting 10ms)", hookB.claimed)
	hookB.hold(nil)
	eventually(t, 5*time.Second, "W's commands in flight to be answered", func() bool { return hookB.inFlight() == 0 })

	ok, err := d.ForceUnlock(ctx, c, name)
	if err != nil || !ok {
		t.Errorf("ForceUnlock of a lock claimed by a waiter = %v, %v; want true, nil", ok, err)
	}
	// The lock is free, or handed to the waiter queued for it: not held by G1 any more.
	if o, n := driverHolder(t, admin, d, name); o == g1.Owner() {
		t.Errorf("after ForceUnlock the lock is still held by %s (count %d)", o, n)
	}
	hookB.release()
	if err == nil && ok {
		// The waiter gets the freed lock.
		if err := recvWithin(t, wRes, 10*time.Second, "W's Lock after the force unlock"); err != nil {
			t.Errorf("W's Lock after the force unlock = %v", err)
		}
	}
}

// queueHeir sets up Client a (hooked) with G1 holding name and G2 queued behind it in a (the heir
// of G1's release). It returns G1's hold, G2's cancel and result channel.
func queueHeir(t *testing.T, a *redisson.Client, name string, wg *sync.WaitGroup) (*redisson.Hold, context.CancelFunc, chan driverAcq) {
	t.Helper()
	ctx := t.Context()
	g1, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	g2ctx, cancel := context.WithCancel(ctx)
	res := make(chan driverAcq, 1)
	spawn(wg, func() {
		var r driverAcq
		var h *redisson.Hold
		inLock(func() { h, r.err = a.Lock(name).Lock(g2ctx) })
		if r.err == nil {
			r.h = heldHold{h}
			_ = h.Unlock(context.Background())
		}
		res <- r
	})
	eventually(t, 5*time.Second, "G2 to queue in A", func() bool { return parkedInLock() >= 1 })
	return g1, cancel, res
}

// TestLockHeirCancelledDuringTransferFreesLock: G1's final release transfers the lock to G2 (the
// local heir) while G2's wait is cancelled; the release is held back until G2's Lock has returned.
// G1's Unlock must return nil, the lock must end up free (the transfer undone, or released by G2 if
// it was handed the lock at the moment its context ended), and the Client's local turn must be free
// for the next acquisition.
func TestLockHeirCancelledDuringTransferFreesLock(t *testing.T) {
	const name = "heir-cancel"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdbA := srv.Client(t)
	hook := &cmdHook{}
	rdbA.AddHook(hook)
	a := newClient(t, rdbA)
	var wg sync.WaitGroup
	t.Cleanup(func() { hook.release(); wg.Wait() })
	warmUpScripts(t, a)
	g1, cancelG2, g2 := queueHeir(t, a, name, &wg)

	hook.hold(nil)
	unlock := make(chan error, 1)
	spawn(&wg, func() { unlock <- g1.Unlock(context.Background()) })
	eventually(t, 5*time.Second, "G1's release to be held", func() bool { return hook.heldBack() >= 1 })
	cancelG2()
	r := recvWithin(t, g2, 5*time.Second, "G2's Lock")
	hook.release()
	if err := recvWithin(t, unlock, 5*time.Second, "G1's Unlock"); err != nil {
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

// TestLockCloseDuringTransferFreesLock checks Close while G1's final release, transferring the lock
// to G2 (queued behind it in the same Client), is held back: G2's Lock returns ErrClosed and the
// lock ends up free, not left transferred to a waiter that will never use it.
func TestLockCloseDuringTransferFreesLock(t *testing.T) {
	const name = "heir-close"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdbA := srv.Client(t)
	hook := &cmdHook{}
	rdbA.AddHook(hook)
	a := newClient(t, rdbA)
	var wg sync.WaitGroup
	t.Cleanup(func() { hook.release(); wg.Wait() })
	warmUpScripts(t, a)
	g1, cancelG2, g2 := queueHeir(t, a, name, &wg)
	defer cancelG2()

	hook.hold(nil)
	unlock := make(chan error, 1)
	spawn(&wg, func() { unlock <- g1.Unlock(context.Background()) })
	eventually(t, 5*time.Second, "G1's release to be held", func() bool { return hook.heldBack() >= 1 })
	closed := make(chan struct{})
	spawn(&wg, func() { _ = a.Close(); close(closed) })
	// Close waits for the release under way (the Unlock was asked for): let it through.
	eventually(t, 5*time.Second, "Close to begin", func() bool { return redisson.IsClosed(a) })
	hook.release()
	recvWithin(t, closed, 5*time.Second, "Close")
	if err := recvWithin(t, unlock, 5*time.Second, "G1's Unlock"); err != nil {
		t.Logf("G1 Unlock after Close = %v", err)
	}
	r := recvWithin(t, g2, 5*time.Second, "G2's Lock")
	if r.err == nil || !errors.Is(r.err, redisson.ErrClosed) {
		t.Errorf("G2 Lock = %v, want ErrClosed", r.err)
	}
	eventually(t, 5*time.Second, "the lock to be free", func() bool {
		return admin.Exists(context.Background(), redisson.LockKeyOf(a, name)).Val() == 0
	})
}

// TestLockClaimerCancelledWhileHandedOverFreesLock: W (Client B) has claimed the lock; A's release
// hands it to W while W's commands are held back and W's wait is cancelled. Whether W's Lock
// returns the lock (handed at the moment its context ended) or an error, the lock must end up free:
// W releases what it was handed.
func TestLockClaimerCancelledWhileHandedOverFreesLock(t *testing.T) {
	const name = "claimer-cancel"
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
	spawn(&wg, func() {
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
	if err := recvWithin(t, wres, 5*time.Second, "W"); err == nil {
		t.Logf("W obtained (handed at the moment its ctx ended)")
	}
	eventually(t, 5*time.Second, "the lock to be free", func() bool {
		return admin.Exists(context.Background(), redisson.LockKeyOf(a, name)).Val() == 0
	})
}

// TestLockReenterRacingFinalUnlock races Reenter against the Unlock of the only level of one Hold,
// from two goroutines, for many rounds: afterwards the lock is held if and only if the Reenter
// succeeded (otherwise it failed with ErrNotHeld), with a hold count of 1, and its Unlock frees it.
func TestLockReenterRacingFinalUnlock(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	for i := 0; i < 200; i++ {
		h, err := c.Lock("reenter-race").Lock(ctx)
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
		held := admin.Exists(ctx, redisson.LockKeyOf(c, "reenter-race")).Val() == 1
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
			if admin.Exists(ctx, redisson.LockKeyOf(c, "reenter-race")).Val() != 0 {
				t.Fatal("still held")
			}
		} else if !errors.Is(rerr, redisson.ErrNotHeld) {
			t.Fatalf("Reenter = %v", rerr)
		}
	}
}

// TestLockBadInputTypedErrors checks that bad input (an empty or malformed name, a nil context,
// zero or nil Holds and Locks, a zero lease, a name whose key holds a hash) gives typed errors
// (ErrInvalidArgument, ErrWrongType), never a panic, and leaves the data found at the key untouched.
func TestLockBadInputTypedErrors(t *testing.T) {
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

// A wait that ends while nobody else held the lock is not contention, for the queueing kinds too:
// the lock is free, the wait's first attempt is granted but answered too late (its reply held
// 600ms, past where a 1s lease with a 0.5 loss margin may lapse), and its give-back is slow (held
// 1.5s), so the 800ms WithWait bound passes while the give-back is under way. The attempt that
// gave back returns no error, the waiting engine finds the bound passed, and the wait is reported
// as if another owner had held the lock (ErrBusy, "held by another owner"): no other owner ever
// held it; Redis was slow.
func TestWaitEndedDuringGiveBackIsNotBusy(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Lock", "FairLock", "ReadWriteLock"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			name := "late-give-back-not-busy-" + kind
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			hook := newScriptHook()
			rdb.AddHook(hook)
			a := newClient(t, rdb, redisson.WithLossMargin(0.5))
			ctx := t.Context()
			mustUnlock(t, mustLock(t, lockOf(a, kind, name), ctx)) // first use: scripts, connections
			key := redisson.LockKeyOf(a, name)
			var seen atomic.Int32
			hook.setAround(func(args []string, next func()) {
				if !slices.Contains(args, key) || !slices.ContainsFunc([]string{"set", "evalsha", "eval"}, func(c string) bool { return strings.EqualFold(c, args[0]) }) {
					next()
					return
				}
				switch seen.Add(1) {
				case 1: // the grant, answered too late
					next()
					time.Sleep(600 * time.Millisecond)
				case 2: // the give-back, slow
					time.Sleep(1500 * time.Millisecond)
					next()
				default:
					next()
				}
			})
			h, err := lockOf(a, kind, name).TryLock(context.Background(), redisson.WithLease(time.Second), redisson.WithWait(800*time.Millisecond))
			if err == nil {
				mustUnlock(t, h)
				t.Fatal("the wait took the lock: the interleaving did not happen")
			}
			if n := seen.Load(); n < 2 {
				t.Fatalf("precondition: %d commands on the lock; want the grant and the give-back", n)
			}
			if errors.Is(err, redisson.ErrBusy) {
				t.Errorf("a wait through which no other owner held the lock = %v; want it not to match ErrBusy", err)
			}
		})
	}
}
