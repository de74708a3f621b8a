package redisson_test

// Attack 10: the ReadWriteLock (rwlock.go, the kindRead/kindWrite branches of lock.go and hold.go,
// internal/scripts/rw_*.lua). Each failing test states the scenario, the expected behaviour and what
// happens; tests marked PASSING are kept as regression tests of attacks the code withstood.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a10Holders returns the writer field and the number of reader fields of the ReadWriteLock hash key.
func a10Holders(t *testing.T, admin *redis.Client, key string) (writer string, readers int) {
	t.Helper()
	m, err := admin.HGetAll(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", key, err)
	}
	for f, v := range m {
		switch {
		case f == "w":
			writer = v
		case strings.HasPrefix(f, "r:"):
			readers++
		}
	}
	return writer, readers
}

// a10Warm runs every ReadWriteLock script once through c, so that a reply dropped later is a script's
// reply and not a NOSCRIPT error.
func a10Warm(t *testing.T, ctx context.Context, c *redisson.Client) {
	t.Helper()
	rw := c.ReadWriteLock("a10-warmup")
	for _, read := range []bool{true, false} {
		var h *redisson.Hold
		var err error
		if read {
			h, err = rw.RLock(ctx)
		} else {
			h, err = rw.Lock(ctx)
		}
		if err != nil {
			t.Fatalf("warm-up: %v", err)
		}
		in, err := h.Reenter(ctx)
		if err != nil {
			t.Fatalf("warm-up Reenter: %v", err)
		}
		if err := in.Unlock(ctx); err != nil {
			t.Fatalf("warm-up partial Unlock: %v", err)
		}
		if _, err := h.HoldCount(ctx); err != nil {
			t.Fatalf("warm-up HoldCount: %v", err)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("warm-up Unlock: %v", err)
		}
	}
	if _, err := rw.ForceUnlock(ctx); err != nil {
		t.Fatalf("warm-up ForceUnlock: %v", err)
	}
}

// DEFECT: re-entering a ReadWriteLock hold taken with a fixed lease (WithLease) deletes the hold.
//
// Scenario: a writer (or a reader) acquires with WithLease(20s), re-enters (Hold.Reenter, or an
// acquisition with a context marked by ContextWithHold), and another Client then tries the write lock.
//
// Expected: the re-entry adds a level and keeps the fixed lease (as Lock's re-entry does: "a fixed
// lease is not extended"); the lock stays held for the 20s, so the other writer is refused.
//
// Actual: the owner's leaseMs is 0 for a fixed lease ("keep the TTL" in lock_acquire.lua), but
// rw_acquire.lua sets the holder's expiry to now + ARGV[2] = now + 0: the field is already lapsed,
// and rw_store, finding nothing alive, DELetes the whole key. The re-entry reports success, the
// holder's context stays live (its fixed lease has 15s to go), and the other Client takes the write
// lock at once: two writers (or a writer beside a reader). Observed: every run.
func TestAttack10FixedLeaseReenterDropsHold(t *testing.T) {
	for _, side := range []string{"writer", "reader"} {
		t.Run(side, func(t *testing.T) {
			c, rdb, _ := setup(t)
			other := newClient(t, rdb)
			ctx := t.Context()
			name := "a10-fixed-" + side
			rw := c.ReadWriteLock(name)
			var h *redisson.Hold
			var err error
			if side == "writer" {
				h, err = rw.Lock(ctx, redisson.WithLease(20*time.Second))
			} else {
				h, err = rw.RLock(ctx, redisson.WithLease(20*time.Second))
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = h.Unlock(ctx) }()
			in, err := h.Reenter(ctx)
			if err != nil {
				t.Fatalf("Reenter: %v", err)
			}
			defer func() { _ = in.Unlock(ctx) }()
			if n, err := h.HoldCount(ctx); err != nil || n != 2 {
				t.Errorf("after one re-entry HoldCount = %d, %v; want 2", n, err)
			}
			if ttl, err := rdb.PTTL(ctx, "{"+name+"}").Result(); err != nil || ttl < 10*time.Second {
				t.Errorf("after the re-entry the lock key's TTL is %v (%v); want about 20s (fixed lease kept)", ttl, err)
			}
			w, err := other.ReadWriteLock(name).TryLock(ctx)
			if err == nil {
				defer func() { _ = w.Unlock(ctx) }()
				t.Fatalf("another Client took the write lock while the %s holds it (fixed lease, re-entered once; "+
					"the holder's context is live: %v)", side, h.Context().Err())
			}
		})
	}
}

// DEFECT: an Unlock whose reply is lost reports the lock lost although it released it.
//
// Scenario: Client A (through a proxy) holds a read hold (or the write hold) of a ReadWriteLock and
// calls the final Unlock; the reply of rw_release.lua is lost (DropReplies(1)): go-redis re-sends the
// script on a new connection.
//
// Expected: Unlock returns nil (the release ran once, and nothing else happened to the lock), as a
// Lock's does: Lock keeps a release history so that a re-sent release answers as the first run did.
//
// Actual: the re-send finds the owner gone and answers -1, which releaseFinal takes for "not held":
// Unlock fails with ErrNotHeld and ErrLockLost, the hold's context is cancelled with ErrLockLost and
// an EventLost is emitted: the application is told its protected work was unprotected when it was
// not. (rw_release.lua's header claims "Safe to run twice".) Observed: every run.
func TestAttack10ReleaseLostReplyReportsLoss(t *testing.T) {
	for _, side := range []string{"reader", "writer"} {
		t.Run(side, func(t *testing.T) {
			srv := redistest.Start(t)
			p := redistest.NewProxy(t, srv.Addr())
			rdbA, _ := regressProxied(t, srv, p)
			var mu sync.Mutex
			var lost []error
			a := newClient(t, rdbA, redisson.WithEventHook(func(e redisson.Event) {
				if e.Kind == redisson.EventLost {
					mu.Lock()
					lost = append(lost, e.Err)
					mu.Unlock()
				}
			}))
			ctx := t.Context()
			a10Warm(t, ctx, a)
			rw := a.ReadWriteLock("a10-lost-reply-" + side)
			var h *redisson.Hold
			var err error
			if side == "reader" {
				h, err = rw.RLock(ctx)
			} else {
				h, err = rw.Lock(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			regressOneConn(t, rdbA)
			p.DropReplies(1)
			err = h.Unlock(ctx)
			p.DropReplies(0)
			if err != nil {
				t.Errorf("final Unlock whose reply was lost (and re-sent by go-redis) = %v (ErrNotHeld %v, ErrLockLost %v); want nil",
					err, errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost))
			}
			if cause := context.Cause(h.Context()); !errors.Is(cause, context.Canceled) {
				t.Errorf("the hold's context ended with %v; want context.Canceled (released)", cause)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, e := range lost {
				t.Errorf("EventLost emitted for a hold that was released normally: %v", e)
			}
			if locked, err := rw.IsLocked(ctx); err != nil || locked {
				t.Errorf("after the Unlock: IsLocked = %v, %v; want false", locked, err)
			}
		})
	}
}

// DEFECT: a re-sent ReadWriteLock.ForceUnlock deletes the hold of a writer that acquired the lock
// after the first run: two writers.
//
// Scenario: X (Client B) holds the write lock. Client A (through a proxy) calls ForceUnlock; the first
// run deletes X's hold, its reply is lost, and go-redis's re-send is delayed (its new connection's
// dial is held). Meanwhile Y (Client C) takes the now free write lock. Then the re-send runs.
//
// Expected: the re-send does not delete Y's hold (Lock.ForceUnlock records its outcome under the
// request for the re-send window precisely for this: "without deleting a lock acquired since"; the
// Locker interface documents ForceUnlock by reference to it). Y keeps the write lock and Z is refused.
//
// Actual: rw_force_unlock.lua keeps no outcome: the re-send deletes Y's hold and answers 1. Y's
// context stays live (its watchdog renewal is a third of 30s away) while Z takes the write lock:
// two writers at once. Observed: every run.
func TestAttack10ForceUnlockResendDeletesNewHolder(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p)
	a := newClient(t, rdbA)
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	a10Warm(t, ctx, a)
	const name = "a10-force-resend"
	x := mustLockRW(t, b.ReadWriteLock(name), ctx)

	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	t.Cleanup(dialA.resumeDials)
	regressGo(&wg, func() {
		_, err := a.ReadWriteLock(name).ForceUnlock(ctx)
		res <- err
	})
	regressWait(t, reached, 10*time.Second, "the re-send of ForceUnlock to open a new connection")
	p.DropReplies(0)
	if w, _ := a10Holders(t, admin, "{"+name+"}"); w != "" {
		t.Fatalf("precondition: the first run of ForceUnlock left the writer %q", w)
	}
	_ = x // X learns of the force unlock at its next renewal
	y, err := newClient(t, srv.Client(t)).ReadWriteLock(name).TryLock(ctx) // B's turn is X's until X learns
	if err != nil {
		t.Fatalf("Y TryLock after the force unlock: %v", err)
	}
	defer func() { _ = y.Unlock(ctx) }()
	dialA.resumeDials()
	if err := regressWait(t, res, 15*time.Second, "ForceUnlock"); err != nil {
		t.Logf("ForceUnlock: %v", err)
	}
	if w, _ := a10Holders(t, admin, "{"+name+"}"); w == "" {
		t.Errorf("the re-sent ForceUnlock deleted the write hold Y acquired after its first run (Y's context: %v)",
			y.Context().Err())
	}
	z, err := newClient(t, srv.Client(t)).ReadWriteLock(name).TryLock(ctx)
	if err == nil {
		defer func() { _ = z.Unlock(ctx) }()
		t.Errorf("Z took the write lock while Y holds it (Y's context live: %v): two writers", y.Context().Err() == nil)
	}
}
