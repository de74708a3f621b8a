package redisson_test

// Key layout: a lock's auxiliary keys, its wake-up channel and the kinds of one name collide
// neither with each other nor with application data.

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

// TestReleaseOfOtherKindHandsNothingToQueuedWaiter checks that each kind of lock of one name has
// its own wait queue. A name is one kind of lock ("using it as another kind fails with
// ErrWrongType": lock_value.lua, "a name used as two kinds is an error, not two locks"), but the
// kind is checked on the lock string only, so a FencedLock may take the name while the string is
// free and a Lock waiter is queued. Its release must then hand nothing to the Lock waiter, which
// could neither use nor release a FencedLock string (and a fencing token would be issued to a
// Lock): the lock is free afterwards and the Lock waiter still queued.
//
// Interleaving: a Lock waiter P is queued behind a fixed-lease Lock holder; the lease runs out, so
// the key is free while P still sleeps (waiting for its hand-over message). A FencedLock F of the
// same name then acquires (being refused is fine too) and unlocks.
func TestReleaseOfOtherKindHandsNothingToQueuedWaiter(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "kinds-queue"
	a := newClient(t, srv.Client(t))
	// P's Client re-polls rarely, so only the hand-over message wakes it.
	b := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Minute))
	c := newClient(t, srv.Client(t))

	if _, err := a.Lock(name).Lock(ctx, redisson.WithLease(500*time.Millisecond)); err != nil {
		t.Fatalf("holder Lock: %v", err)
	}
	got, cancel := lockAsync(ctx, b.Lock(name))
	defer cancel()
	eventually(t, 5*time.Second, "P queued", func() bool {
		q, _ := redisson.QueueKeys("Lock", name)
		return admin.ZCard(ctx, q).Val() == 1
	})
	eventually(t, 5*time.Second, "the holder's lease to run out", func() bool {
		return admin.Exists(ctx, "{"+name+"}").Val() == 0
	})

	f, err := c.FencedLock(name).Lock(ctx)
	if err != nil {
		// The library detected the mix: fine.
		t.Logf("FencedLock on a queued Lock's name: %v", err)
		return
	}
	if err := f.Unlock(ctx); err != nil {
		t.Fatalf("FencedLock Unlock: %v", err)
	}
	// The FencedLock's release must not have handed anything to P, a Lock waiter: the lock is free
	// and P still queued for a Lock (each kind has its own queue).
	q, _ := redisson.QueueKeys("Lock", name)
	if v, err := admin.Get(ctx, "{"+name+"}").Result(); err != redis.Nil || admin.ZCard(ctx, q).Val() != 1 {
		t.Errorf("after the FencedLock's Unlock, the lock string is %q (%v) and %d Lock waiters are queued; want free, P still queued",
			v, err, admin.ZCard(ctx, q).Val())
	}
	cancel()
	r := recvWithin(t, got, 10*time.Second, "P's Lock to end")
	if r.err == nil {
		v := admin.Get(ctx, "{"+name+"}").Val()
		if err := r.h.Unlock(ctx); err != nil {
			t.Errorf("the Lock waiter got a Hold of the lock string %q, and its Unlock fails: %v", v, err)
		}
	} else if !errors.Is(r.err, context.Canceled) {
		t.Errorf("P's Lock = %v; want a Hold or context.Canceled", r.err)
	}
}

// TestFairLockLeavesApplicationDataAtQueueKeyNames checks that a FairLock acquisition leaves alone
// an application's sorted set at "{name}:q", co-located with the lock. doc.go, Keys: "The
// auxiliary keys carry the Client's random id or a request id in their names, so no other data can
// be there by accident", and a name such as "{user:7}:cart" is the documented way to co-locate data
// with a lock. Were the wait queue at that fixed name, the set's members would be evicted as dead
// waiters (and a heartbeat would set its expiry).
func TestFairLockLeavesApplicationDataAtQueueKeyNames(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	const name = "app-data"
	appKey := "{" + name + "}:q" // the application's own sorted set, co-located with the lock's key
	jobs := []redis.Z{{Score: 1, Member: "job-1"}, {Score: 2, Member: "job-2"}, {Score: 3, Member: "job-3"}}
	if err := admin.ZAdd(ctx, appKey, jobs...).Err(); err != nil {
		t.Fatal(err)
	}
	h, err := c.FairLock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("FairLock.Lock: %v", err)
	}
	mustUnlock(t, h)
	got := admin.ZRangeWithScores(ctx, appKey, 0, -1).Val()
	ttl := admin.PTTL(ctx, appKey).Val()
	if len(got) != len(jobs) || ttl != -1 {
		t.Errorf("application sorted set %s after a FairLock acquisition of %q: %v (pttl %v); want %v, no expiry",
			appKey, name, got, ttl, jobs)
	}
}

// TestReleaseLeavesStringsAtHistoryKeyNames checks that a release leaves alone application strings
// at "{name}:rel" and at another Client's history key of the lock, whether empty or shaped like a
// history entry: the history key carries the releasing Client's random id
// ("{name}:rel:<client id>"), so no application data is there by accident, and none may be
// rewritten or given a TTL.
func TestReleaseLeavesStringsAtHistoryKeyNames(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"empty", ""},
		{"entry-like", "app=r;payload that the application stored here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, admin, srv := setup(t)
			other := newClient(t, srv.Client(t))
			ctx := t.Context()
			lname := "hist-strings-" + tc.name
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

// TestReleaseRecordLeavesOtherKeysAlone checks that the record of the final release of lock "x"
// (its release history) neither takes lock "{x}:rel" from its holder nor touches application data
// at key "{x}:rel".
func TestReleaseRecordLeavesOtherKeysAlone(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	c1 := newClient(t, srv.Client(t))
	c2 := newClient(t, srv.Client(t))
	ctx := t.Context()

	// release takes and releases lock name through c2.
	release := func(t *testing.T, name string) {
		t.Helper()
		h, err := d.Lock(ctx, c2, name, 0, 0)
		if err != nil {
			t.Fatalf("Lock(%q): %v", name, err)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("Unlock(%q): %v", name, err)
		}
	}

	t.Run("lock", func(t *testing.T) {
		const name = "release-record-lock"
		const victim = "{" + name + "}:rel" // the name of another lock
		h1, err := d.Lock(ctx, c1, victim, 0, 0)
		if err != nil {
			t.Fatalf("Lock(%q): %v", victim, err)
		}
		release(t, name)
		if o, n := driverHolder(t, admin, d, victim); o != h1.Owner() || n != 1 {
			t.Errorf("after lock %q was released, lock %q is held by %q with count %d; want its holder %q with count 1",
				name, victim, o, n, h1.Owner())
		}
		if n, err := h1.HoldCount(ctx); err != nil || n != 1 {
			t.Errorf("HoldCount of lock %q = %d (err %v), want 1", victim, n, err)
		}
		if err := h1.Unlock(ctx); err != nil {
			t.Errorf("Unlock(%q) = %v, want nil", victim, err)
		}
	})

	t.Run("data", func(t *testing.T) {
		const name = "release-record-data"
		const victim = "{" + name + "}:rel" // an application key: a hash
		want := map[string]string{"f1": "v1", "f2": "v2"}
		if err := admin.HSet(ctx, victim, want).Err(); err != nil {
			t.Fatalf("HSET %s: %v", victim, err)
		}
		release(t, name)
		typ, err := admin.Type(ctx, victim).Result()
		if err != nil {
			t.Fatalf("TYPE %s: %v", victim, err)
		}
		got, err := admin.HGetAll(ctx, victim).Result()
		if typ != "hash" || err != nil || len(got) != len(want) || got["f1"] != "v1" || got["f2"] != "v2" {
			t.Errorf("after lock %q was released, application key %s is a %s holding %v (err %v); want the hash %v untouched",
				name, victim, typ, got, err, want)
		}
	})
}

// TestBracedNameHasItsOwnWakeUpChannel checks that locks "x" and "{x}" have separate wake-up
// channels: with a re-poll interval of 10s, a waiter of "x" must be woken promptly by the release
// of "x" while a waiter of "{x}" in the same Client (which started waiting first) waits too. On a
// shared channel the wake-up would go to the waiter of "{x}", leaving the waiter of "x" to its
// re-poll.
func TestBracedNameHasItsOwnWakeUpChannel(t *testing.T) {
	const (
		nameX      = "wakeup-channel"
		nameBraced = "{" + nameX + "}"
		repoll     = 10 * time.Second
		bound      = 3 * time.Second // far below the re-poll interval, far above a wake-up
	)
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	holders := newClient(t, srv.Client(t))
	waiters := newClient(t, srv.Client(t), redisson.WithRepollInterval(repoll))

	ctx := t.Context()
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	hx, err := d.Lock(ctx, holders, nameX, 0, 0)
	if err != nil {
		t.Fatalf("Lock(%q): %v", nameX, err)
	}
	hb, err := d.Lock(ctx, holders, nameBraced, 0, 0)
	if err != nil {
		t.Fatalf("Lock(%q): %v", nameBraced, err)
	}
	t.Cleanup(func() { _ = hb.Unlock(context.Background()) })

	wait := func(name string, res chan<- driverAcq) {
		spawn(&wg, func() {
			var r driverAcq
			inLock(func() { r.h, r.err = d.Lock(wctx, waiters, name, 30*time.Second, 0) })
			if r.err == nil {
				_ = r.h.Unlock(context.Background())
			}
			res <- r
		})
	}
	bracedRes, xRes := make(chan driverAcq, 1), make(chan driverAcq, 1)
	wait(nameBraced, bracedRes)
	eventually(t, 5*time.Second, "the waiter of "+nameBraced+" to wait", func() bool { return parkedInLock() >= 1 })
	wait(nameX, xRes)
	eventually(t, 5*time.Second, "the waiter of "+nameX+" to wait", func() bool { return parkedInLock() >= 2 })

	if err := hx.Unlock(ctx); err != nil {
		t.Fatalf("Unlock(%q): %v", nameX, err)
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case r := <-xRes:
		if r.err != nil {
			t.Errorf("the waiter of %q: Lock = %v, want the lock", nameX, r.err)
		}
	case <-timer.C:
		t.Errorf("the waiter of %q was not woken within %v of the release of %q (re-poll interval %v): "+
			"the wake-up went to the waiter of %q", nameX, bound, nameX, repoll, nameBraced)
	}
}
