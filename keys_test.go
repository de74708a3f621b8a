package redisson_test

// Key layout: a lock's auxiliary keys, its wake-up channel and the kinds of one name collide
// neither with each other nor with application data.

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

	"bytes"
	"fmt"
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
	long(t)
	t.Parallel()
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
		return admin.ZCount(ctx, q, "-inf", "(+inf").Val() == 1
	})
	eventually(t, 5*time.Second, "the holder's lease to run out", func() bool {
		return admin.Exists(ctx, name).Val() == 0
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
	if v, err := admin.Get(ctx, name).Result(); err != redis.Nil || admin.ZCount(ctx, q, "-inf", "(+inf").Val() != 1 {
		t.Errorf("after the FencedLock's Unlock, the lock string is %q (%v) and %d Lock waiters are queued; want free, P still queued",
			v, err, admin.ZCount(ctx, q, "-inf", "(+inf").Val())
	}
	cancel()
	r := recvWithin(t, got, 10*time.Second, "P's Lock to end")
	if r.err == nil {
		v := admin.Get(ctx, name).Val()
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

// TestReleaseLeavesStringsAtNearbyNames checks that a release leaves alone application strings at
// "{name}:rel" and at the name where older versions kept another Client's release history
// ("{name}:~rel:<client id>"), whether empty or shaped like a history entry: none may be rewritten
// or given a TTL.
func TestReleaseLeavesStringsAtNearbyNames(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"empty", ""},
		{"entry-like", "app=r;payload that the application stored here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, admin, srv := setup(t)
			_ = srv
			ctx := t.Context()
			lname := "hist-strings-" + tc.name
			keys := []string{redisson.LockKeyOf(c, lname) + ":rel", redisson.LockKeyOf(c, lname) + ":~rel:0123456789abcdef01234567"}
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

// TestBracedNameHasItsOwnWakeUpChannel checks that locks "x" and "{x}:b" (in one Cluster slot, their
// auxiliary names "{x}:~…" and "{x}:b:~…" alike up to the tag) have separate wake-up channels: with
// a re-poll interval of 10s, a waiter of "x" must be woken promptly by the release of "x" while a
// waiter of "{x}:b" in the same Client (which started waiting first) waits too. On a shared channel
// the wake-up would go to the waiter of "{x}:b", leaving the waiter of "x" to its re-poll.
func TestBracedNameHasItsOwnWakeUpChannel(t *testing.T) {
	const (
		nameX      = "wakeup-channel"
		nameBraced = "{" + nameX + "}:b"
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

// A name used as a ReadWriteLock and as any other lock kind (Lock, FairLock, FencedLock, SpinLock)
// is refused both ways with ErrWrongType, and nothing changes: the holder keeps its hold, its key,
// value and TTL. Another program's hash at the name is refused too and left untouched.
func TestReadWriteLockKindCollisions(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, kind := range []string{"Lock", "FairLock", "FencedLock", "SpinLock"} {
		t.Run("RWHeld/"+kind, func(t *testing.T) {
			name := "rw-kind-rw-" + kind
			r := mustRLock(t, c.ReadWriteLock(name), ctx)
			defer mustUnlock(t, r)
			before, _ := rdb.HGetAll(ctx, name).Result()
			l := lockOf(c, kind, name)
			if _, err := l.Lock(short); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s.Lock on a ReadWriteLock's name: %v; want ErrWrongType", kind, err)
			}
			if _, err := l.TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s.TryLock: %v; want ErrWrongType", kind, err)
			}
			if _, err := l.ForceUnlock(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s.ForceUnlock: %v; want ErrWrongType", kind, err)
			}
			if _, err := l.IsLocked(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s.IsLocked: %v; want ErrWrongType", kind, err)
			}
			after, _ := rdb.HGetAll(ctx, name).Result()
			if len(after) != len(before) || r.Context().Err() != nil {
				t.Errorf("the ReadWriteLock changed: %v -> %v (reader's context %v)", before, after, r.Context().Err())
			}
			if n, err := r.HoldCount(ctx); err != nil || n != 1 {
				t.Errorf("reader's HoldCount = %d, %v; want 1", n, err)
			}
		})
		t.Run(kind+"Held/RW", func(t *testing.T) {
			name := "rw-kind-" + kind
			h := mustLock(t, lockOf(c, kind, name), ctx)
			defer mustUnlock(t, h)
			before, _ := rdb.Get(ctx, name).Result()
			rw := c.ReadWriteLock(name)
			if _, err := rw.RLock(short); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("RLock on a %s's name: %v; want ErrWrongType", kind, err)
			}
			if _, err := rw.Lock(short); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("Lock on a %s's name: %v; want ErrWrongType", kind, err)
			}
			if _, err := rw.ForceUnlock(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("ForceUnlock on a %s's name: %v; want ErrWrongType", kind, err)
			}
			if _, err := rw.RemainingTTL(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("RemainingTTL on a %s's name: %v; want ErrWrongType", kind, err)
			}
			if after, _ := rdb.Get(ctx, name).Result(); after != before || h.Context().Err() != nil {
				t.Errorf("the %s changed: %q -> %q", kind, before, after)
			}
		})
	}
	t.Run("ForeignHash", func(t *testing.T) {
		rdb.HSet(ctx, "rw-foreign", "name", "x", "w", "nonsense")
		rw := c.ReadWriteLock("rw-foreign")
		if _, err := rw.RLock(short); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("RLock on a foreign hash: %v; want ErrWrongType", err)
		}
		if _, err := rw.ForceUnlock(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("ForceUnlock on a foreign hash: %v; want ErrWrongType", err)
		}
		if n, _ := rdb.HLen(ctx, "rw-foreign").Result(); n != 2 {
			t.Errorf("the foreign hash has %d fields; want 2 (untouched)", n)
		}
	})
}

// A BloomFilter and a Lock refuse each other's name with ErrWrongType, changing nothing. The
// configuration (a hash) is at the object key and the bits beside it, so a Lock on the name of a
// filter initialised before any Add is refused (and the filter's adds still work), and a filter on
// a held Lock's name neither initialises nor adds: the lock string and its hold are untouched.
func TestBloomFilterAndLockRefuseEachOthersName(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	f := c.BloomFilter("shared")
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lock("shared").TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("TryLock on a BloomFilter's name = %v; want ErrWrongType", err)
	}
	if n, err := f.AddMany(ctx, []string{"a", "b"}); err != nil || n != 2 {
		t.Errorf("AddMany after the refused lock = %d, %v", n, err)
	}
	h := mustLock(t, c.Lock("locked"), ctx)
	defer func() { _ = h.Unlock(context.Background()) }()
	before, _ := admin.Get(ctx, "locked").Result()
	g := c.BloomFilter("locked")
	if _, err := g.TryInit(ctx, 1000, 0.01); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("TryInit on a held Lock's name = %v; want ErrWrongType", err)
	}
	if _, err := g.AddMany(ctx, []string{"a", "b", "c", "d"}); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("AddMany on a held Lock's name = %v; want ErrWrongType", err)
	}
	if after, _ := admin.Get(ctx, "locked").Result(); before != after {
		t.Errorf("the lock string was changed: %q -> %q", before, after)
	}
	if n, err := h.HoldCount(ctx); err != nil || n != 1 {
		t.Errorf("the Lock after the refused BloomFilter calls: hold count %d, %v; want 1", n, err)
	}
}

// An AtomicLong and a Semaphore (or CountDownLatch) share one stored format, a decimal integer
// string at the object key (Redisson's layouts), so Redis cannot tell them apart: under one name
// they are one value, as doc.go and keys.go document. A Lock's name is still refused with
// ErrWrongType.
func TestAtomicLongAndSemaphoreShareOneValue(t *testing.T) {
	ctx := t.Context()
	c, _, _ := setup(t)
	s := c.Semaphore("permits")
	if ok, err := s.TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if v, err := c.AtomicLong("permits").Add(ctx, 100); err != nil || v != 103 {
		t.Errorf("AtomicLong.Add on a Semaphore's name = %d, %v; want 103 (one value, as documented)", v, err)
	}
	if n, err := s.AvailablePermits(ctx); err != nil || n != 103 {
		t.Errorf("AvailablePermits = %d, %v; want 103", n, err)
	}
	h := mustLock(t, c.Lock("held"), ctx)
	defer func() { _ = h.Unlock(context.Background()) }()
	if _, err := c.AtomicLong("held").Add(ctx, 1); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("AtomicLong.Add on a Lock's name = %v; want ErrWrongType", err)
	}
}

// On a Cluster, HyperLogLog CountWith and MergeWith, and BitSet And, Or and Xor, with a name in
// another slot fail with ErrInvalidArgument before anything is sent; names sharing a {hash tag}
// work; a BloomFilter works across its two keys, including an AddMany of several calls.
func TestClusterCrossSlotNamesRefused(t *testing.T) {
	long(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: Cluster")
	}
	ctx := t.Context()
	cl := sharedCluster(t)
	admin := cl.Client(t)
	c := newClient(t, cl.Client(t))
	h := c.HyperLogLog("xslot-hll")
	if _, err := h.Add(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	other := c.HyperLogLog("xslot-other")
	if _, err := other.Add(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CountWith(ctx, "xslot-other"); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("CountWith(other slot) = %v; want ErrInvalidArgument", err)
	}
	if err := h.MergeWith(ctx, "xslot-other"); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("MergeWith(other slot) = %v; want ErrInvalidArgument", err)
	}
	if n, err := h.Count(ctx); err != nil || n != 1 {
		t.Errorf("Count after the refused merge = %d, %v; want 1", n, err)
	}
	b := c.BitSet("xslot-bits")
	if _, err := b.Set(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"And": b.And(ctx, "xslot-x"), "Or": b.Or(ctx, "xslot-bits", "xslot-x"), "Xor": b.Xor(ctx, "xslot-x"),
	} {
		if !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("%s(other slot) = %v; want ErrInvalidArgument", what, err)
		}
	}
	if got, err := admin.Get(ctx, "xslot-bits").Bytes(); err != nil || !bytes.Equal(got, []byte{0x10}) {
		t.Errorf("BitSet after refused BITOPs = %x, %v", got, err)
	}
	// Same tag: works.
	t1, t2 := c.HyperLogLog("{xslot-tag}:1"), c.HyperLogLog("{xslot-tag}:2")
	if _, err := t2.AddMany(ctx, []string{"p", "q"}); err != nil {
		t.Fatal(err)
	}
	if err := t1.MergeWith(ctx, "{xslot-tag}:2"); err != nil {
		t.Fatal(err)
	}
	if n, err := t1.CountWith(ctx, "{xslot-tag}:2"); err != nil || n != 2 {
		t.Errorf("CountWith(same tag) = %d, %v; want 2", n, err)
	}
	// A BloomFilter across its two keys, with a lost-reply-free AddMany of several calls.
	f := c.BloomFilter("xslot-bloom")
	if _, err := f.TryInit(ctx, 50000, 0.01); err != nil {
		t.Fatal(err)
	}
	el := make([]string, 5000)
	for i := range el {
		el[i] = fmt.Sprint("c", i)
	}
	if _, err := f.AddMany(ctx, el); err != nil {
		t.Fatal(err)
	}
	got, err := f.ContainsMany(ctx, el)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("Cluster BloomFilter element %d not contained", i)
		}
	}
}

// otherKindOps are the mutating and reading calls of every other kind, each expected to be refused
// with ErrWrongType on a BloomFilter's name.
var otherKindOps = []objectOp{
	{"Lock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error { return errOnly(c.Lock(n).TryLock(ctx)) }},
	{"FairLock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.FairLock(n).TryLock(ctx))
	}},
	{"FencedLock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.FencedLock(n).TryLock(ctx))
	}},
	{"SpinLock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.SpinLock(n).TryLock(ctx))
	}},
	{"ReadWriteLock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.ReadWriteLock(n).TryLock(ctx))
	}},
	{"ReadWriteLock.TryRLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.ReadWriteLock(n).TryRLock(ctx))
	}},
	{"Lock.ForceUnlock", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.Lock(n).ForceUnlock(ctx))
	}},
	{"FairLock.ForceUnlock", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.FairLock(n).ForceUnlock(ctx))
	}},
	{"ReadWriteLock.ForceUnlock", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.ReadWriteLock(n).ForceUnlock(ctx))
	}},
	{"Semaphore.TrySetPermits", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.Semaphore(n).TrySetPermits(ctx, 3))
	}},
	{"Semaphore.AddPermits", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.Semaphore(n).AddPermits(ctx, 3))
	}},
	{"Semaphore.TryAcquire", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.Semaphore(n).TryAcquire(ctx, 1))
	}},
	{"Semaphore.Release", func(ctx context.Context, c *redisson.Client, n string) error { return c.Semaphore(n).Release(ctx, 1) }},
	{"Semaphore.DrainPermits", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.Semaphore(n).DrainPermits(ctx))
	}},
	{"Semaphore.AvailablePermits", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.Semaphore(n).AvailablePermits(ctx))
	}},
	{"CountDownLatch.TrySetCount", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.CountDownLatch(n).TrySetCount(ctx, 2))
	}},
	{"CountDownLatch.CountDown", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.CountDownLatch(n).CountDown(ctx))
	}},
	{"CountDownLatch.Count", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.CountDownLatch(n).Count(ctx))
	}},
	{"AtomicLong.Add", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.AtomicLong(n).Add(ctx, 1))
	}},
	{"AtomicLong.Store", func(ctx context.Context, c *redisson.Client, n string) error { return c.AtomicLong(n).Store(ctx, 1) }},
	{"AtomicLong.Swap", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.AtomicLong(n).Swap(ctx, 1))
	}},
	{"AtomicLong.CompareAndSwap", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.AtomicLong(n).CompareAndSwap(ctx, 0, 1))
	}},
	{"AtomicLong.SetIfGreater", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.AtomicLong(n).SetIfGreater(ctx, 5))
	}},
	{"AtomicLong.GetAndDelete", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.AtomicLong(n).GetAndDelete(ctx))
	}},
	{"AtomicLong.Load", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.AtomicLong(n).Load(ctx))
	}},
	{"BitSet.Set", func(ctx context.Context, c *redisson.Client, n string) error { return errOnly(c.BitSet(n).Set(ctx, 3)) }},
	{"BitSet.Clear", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BitSet(n).Clear(ctx, 3))
	}},
	{"BitSet.SetRange", func(ctx context.Context, c *redisson.Client, n string) error {
		return c.BitSet(n).SetRange(ctx, 1, 100)
	}},
	{"BitSet.ClearRange", func(ctx context.Context, c *redisson.Client, n string) error {
		return c.BitSet(n).ClearRange(ctx, 0, 100)
	}},
	{"BitSet.SetBytes", func(ctx context.Context, c *redisson.Client, n string) error {
		return c.BitSet(n).SetBytes(ctx, []byte("x"))
	}},
	{"BitSet.SetBytes(nil)", func(ctx context.Context, c *redisson.Client, n string) error { return c.BitSet(n).SetBytes(ctx, nil) }},
	{"BitSet.Not", func(ctx context.Context, c *redisson.Client, n string) error { return c.BitSet(n).Not(ctx) }},
	{"BitSet.Or", func(ctx context.Context, c *redisson.Client, n string) error { return c.BitSet(n).Or(ctx, n+"-other") }},
	{"BitSet.Bytes", func(ctx context.Context, c *redisson.Client, n string) error { return errOnly(c.BitSet(n).Bytes(ctx)) }},
	{"BitSet.Length", func(ctx context.Context, c *redisson.Client, n string) error { return errOnly(c.BitSet(n).Length(ctx)) }},
	{"BitSet.Cardinality", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BitSet(n).Cardinality(ctx))
	}},
	{"HyperLogLog.Add", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.HyperLogLog(n).Add(ctx, "e"))
	}},
	{"HyperLogLog.Count", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.HyperLogLog(n).Count(ctx))
	}},
	{"HyperLogLog.MergeWith", func(ctx context.Context, c *redisson.Client, n string) error {
		return c.HyperLogLog(n).MergeWith(ctx, n+"-other")
	}},
}

// Every other kind's call on a BloomFilter's name is refused with ErrWrongType, nothing changed;
// and every BloomFilter call on any other kind's name, likewise. Two Clients: one with the filter's
// parameters cached, one fresh.
func TestBloomFilterKindCollisionsBothWays(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c, admin, srv := setup(t)
	c2 := newClient(t, srv.Client(t))
	f := c.BloomFilter("bf")
	if ok, err := f.TryInit(ctx, 100, 0.01); err != nil || !ok {
		t.Fatalf("TryInit = %v, %v", ok, err)
	}
	if _, err := f.AddMany(ctx, []string{"x", "y"}); err != nil {
		t.Fatal(err)
	}
	before := serverSnapshot(t, admin)
	for _, op := range otherKindOps {
		err := op.run(ctx, c2, "bf")
		if !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s on a BloomFilter's name = %v; want ErrWrongType", op.name, err)
		}
		if d := snapshotDiff(before, serverSnapshot(t, admin)); d != "" {
			t.Fatalf("%s on a BloomFilter's name changed Redis: %s", op.name, d)
		}
	}
	for _, cl := range []*redisson.Client{c, c2} {
		if v, err := cl.BloomFilter("bf").ContainsMany(ctx, []string{"x", "y"}); err != nil || !v[0] || !v[1] {
			t.Errorf("ContainsMany after the refused calls = %v, %v", v, err)
		}
	}

	// The other way round: each kind made under its own name, then every BloomFilter call.
	makers := map[string]func(n string) error{
		"Lock":          func(n string) error { return errOnly(c.Lock(n).TryLock(ctx)) },
		"FairLock":      func(n string) error { return errOnly(c.FairLock(n).TryLock(ctx)) },
		"FencedLock":    func(n string) error { return errOnly(c.FencedLock(n).TryLock(ctx)) },
		"ReadWriteLock": func(n string) error { return errOnly(c.ReadWriteLock(n).TryLock(ctx)) },
		"RWLock-read":   func(n string) error { return errOnly(c.ReadWriteLock(n).TryRLock(ctx)) },
		"Semaphore":     func(n string) error { return errOnly(c.Semaphore(n).TrySetPermits(ctx, 3)) },
		"CountDownLatch": func(n string) error {
			return errOnly(c.CountDownLatch(n).TrySetCount(ctx, 3))
		},
		"AtomicLong":  func(n string) error { return c.AtomicLong(n).Store(ctx, 42) },
		"BitSet":      func(n string) error { return c.BitSet(n).SetRange(ctx, 0, 77) },
		"HyperLogLog": func(n string) error { return errOnly(c.HyperLogLog(n).AddMany(ctx, []string{"a", "b"})) },
	}
	for kind, mk := range makers {
		name := "k-" + kind
		mustDo(t, "make "+kind, mk(name))
		snap := serverSnapshot(t, admin)
		for _, cl := range []*redisson.Client{c, c2} {
			for _, op := range bloomOps {
				if err := op.run(ctx, cl, name); !errors.Is(err, redisson.ErrWrongType) {
					t.Errorf("BloomFilter.%s on a %s's name = %v; want ErrWrongType", op.name, kind, err)
				}
				if d := snapshotDiff(snap, serverSnapshot(t, admin)); d != "" {
					t.Fatalf("BloomFilter.%s on a %s's name changed Redis: %s", op.name, kind, d)
				}
			}
		}
	}
}

// TestNothingLeftOnceAllAreGone checks, for every kind of lock and synchronizer, that once every
// holder and waiter is gone (each ran to its end: waits, re-entries, a wait that timed out, a force
// unlock) and the Clients are closed, Redis keeps nothing of the object but its documented lasting
// keys (a Semaphore's permits, a FencedLock's token counter, a CountDownLatch's rounds) and keys
// whose TTL is at most the waiter timeout: no record per operation outlives it (doc.go, "Keys"),
// but a Semaphore acquisition's record of plain permits taken, which lasts at least 10s.
func TestNothingLeftOnceAllAreGone(t *testing.T) {
	const wt = 2 * time.Second // the waiter timeout: no key may be left for longer
	const taken = 10 * time.Second
	opts := []redisson.Option{redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(100 * time.Millisecond)}
	for _, tc := range []struct {
		kind    string
		lasting []string      // keys that may stay with no TTL: "" the object key, ":~<suffix>" an auxiliary name
		records time.Duration // the longest TTL a request record may be left with (0: wt)
		run     func(t *testing.T, ctx context.Context, c1, c2 *redisson.Client, name string)
	}{
		{kind: "Lock"},
		{kind: "FairLock"},
		{kind: "FencedLock", lasting: []string{":~fence"}},
		{kind: "SpinLock"},
		{kind: "ReadWriteLock", run: rwLeavesNothing},
		{kind: "MultiLock"},
		{kind: "RedLock"},
		{kind: "Semaphore", lasting: []string{""}, records: taken, run: semaphoreLeavesNothing},
		{kind: "PermitExpirableSemaphore", lasting: []string{""}, records: taken, run: permitsLeaveNothing},
		{kind: "CountDownLatch", lasting: []string{":~lr"}, records: taken, run: latchLeavesNothing},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			srv := redistest.Start(t)
			c1 := newClient(t, srv.Client(t), opts...)
			c2 := newClient(t, srv.Client(t), opts...)
			servers := []*redistest.Server{srv}
			if tc.kind == "RedLock" {
				withRedLockPeers(t, c1, opts...)
				withRedLockPeers(t, c2, opts...)
				s, _ := redLockServers.Load(t)
				for _, p := range s.([2]*redistest.Server) {
					servers = append(servers, p)
				}
			}
			ctx := t.Context()
			name := "gone-" + tc.kind
			run := tc.run
			if run == nil {
				run = func(t *testing.T, ctx context.Context, c1, c2 *redisson.Client, name string) {
					lockerLeavesNothing(t, ctx, lockOf(c1, tc.kind, name), lockOf(c2, tc.kind, name), c2)
				}
			}
			run(t, ctx, c1, c2, name)
			for _, c := range []*redisson.Client{c1, c2} {
				if err := c.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if peers, ok := redLockPeers.Load(c); ok {
					for _, p := range peers.([2]*redisson.Client) {
						_ = p.Close()
					}
				}
			}
			for _, s := range servers {
				admin := s.Client(t)
				keys, err := admin.Keys(ctx, "*").Result() // a test server: KEYS is the keyspace scan (process records included: Close deleted them)
				if err != nil {
					t.Fatalf("KEYS: %v", err)
				}
			next:
				for _, k := range keys {
					for _, sfx := range tc.lasting {
						if (sfx == "" && k == name) || (sfx != "" && k == redisson.AuxOf(name, sfx[2:])) {
							continue next
						}
					}
					ttl, most := admin.PTTL(ctx, k).Val(), wt
					if tc.records > 0 && strings.HasPrefix(k, redisson.AuxOf(name, "sr:")) {
						most = tc.records
					}
					if ttl <= 0 || ttl > most {
						t.Errorf("key %s left in Redis (%s) with TTL %v once every holder and waiter is gone; want none, or a TTL of at most %v (the waiter timeout: %v)",
							k, admin.Type(ctx, k).Val(), ttl, most, wt)
					}
				}
			}
		})
	}
}

// lockerLeavesNothing runs holders and waiters of one lock through two Clients to their end: a
// re-entry, a waiter of the other Client served by the release, a wait that times out, a force
// unlock of a held lock.
func lockerLeavesNothing(t *testing.T, ctx context.Context, l1, l2 redisson.Locker, c2 *redisson.Client) {
	h1 := mustLock(t, l1, ctx)
	h1r, err := h1.Reenter(ctx)
	if err != nil {
		t.Fatalf("Reenter: %v", err)
	}
	got, cancel := lockAsync(ctx, l2)
	defer cancel()
	eventually(t, 10*time.Second, "the other Client's waiter", func() bool { return c2.Stats().Waiting > 0 })
	if h, err := l1.TryLock(ctx, redisson.WithWait(50*time.Millisecond)); err == nil {
		t.Fatalf("TryLock with a wait while held = %v, nil; want not obtained", h)
	}
	for _, h := range []*redisson.Hold{h1r, h1} {
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("Unlock: %v", err)
		}
	}
	r := recvWithin(t, got, 10*time.Second, "the waiter served by the release")
	if r.err != nil {
		t.Fatalf("waiter's Lock: %v", r.err)
	}
	if err := r.h.Unlock(ctx); err != nil {
		t.Fatalf("waiter's Unlock: %v", err)
	}
	h3 := mustLock(t, l2, ctx)
	if ok, err := l1.ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v; want true, nil", ok, err)
	}
	if err := h3.Unlock(ctx); !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("Unlock after a force unlock = %v; want ErrLockLost", err)
	}
}

// rwLeavesNothing does for a ReadWriteLock what lockerLeavesNothing does, with readers too.
func rwLeavesNothing(t *testing.T, ctx context.Context, c1, c2 *redisson.Client, name string) {
	l1, l2 := c1.ReadWriteLock(name), c2.ReadWriteLock(name)
	r1 := func() *redisson.Hold {
		h, err := l1.RLock(ctx)
		if err != nil {
			t.Fatalf("RLock: %v", err)
		}
		return h
	}
	ra, rb := r1(), r1()
	rar, err := ra.Reenter(ctx)
	if err != nil {
		t.Fatalf("Reenter: %v", err)
	}
	got, cancel := lockAsync(ctx, l2) // a writer waits for the readers
	defer cancel()
	eventually(t, 10*time.Second, "the writer waiting", func() bool { return c2.Stats().Waiting > 0 })
	if h, err := l1.TryRLock(ctx, redisson.WithWait(50*time.Millisecond)); err == nil {
		t.Fatalf("TryRLock behind a waiting writer = %v, nil; want not obtained", h)
	}
	for _, h := range []*redisson.Hold{rar, ra, rb} {
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("reader's Unlock: %v", err)
		}
	}
	r := recvWithin(t, got, 10*time.Second, "the writer served by the readers' release")
	if r.err != nil {
		t.Fatalf("writer's Lock: %v", r.err)
	}
	if err := r.h.Unlock(ctx); err != nil {
		t.Fatalf("writer's Unlock: %v", err)
	}
	hr, err := l2.RLock(ctx)
	if err != nil {
		t.Fatalf("RLock: %v", err)
	}
	if ok, err := l1.ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v; want true, nil", ok, err)
	}
	if err := hr.Unlock(ctx); !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("Unlock after a force unlock = %v; want ErrLockLost", err)
	}
}

// semaphoreLeavesNothing runs acquisitions, a waiter, a wait that times out, releases and the other
// changes of a Semaphore.
func semaphoreLeavesNothing(t *testing.T, ctx context.Context, c1, c2 *redisson.Client, name string) {
	s1, s2 := c1.Semaphore(name), c2.Semaphore(name)
	if ok, err := s1.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := s1.Acquire(ctx, 1); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s2.Acquire(ctx, 1) }()
	eventually(t, 10*time.Second, "the other Client's waiter", func() bool { return c2.Stats().Waiting > 0 })
	if ok, err := s1.TryAcquire(ctx, 1, redisson.WithWait(50*time.Millisecond)); ok || err != nil {
		t.Fatalf("TryAcquire with a wait = %v, %v; want false, nil", ok, err)
	}
	if err := s1.Release(ctx, 1); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := recvWithin(t, done, 10*time.Second, "the waiter"); err != nil {
		t.Fatalf("waiter's Acquire: %v", err)
	}
	if err := s2.Release(ctx, 1); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if _, err := s1.AddPermits(ctx, 2); err != nil {
		t.Fatalf("AddPermits: %v", err)
	}
	if _, err := s2.DrainPermits(ctx); err != nil {
		t.Fatalf("DrainPermits: %v", err)
	}
}

// permitsLeaveNothing does the same with leased permits.
func permitsLeaveNothing(t *testing.T, ctx context.Context, c1, c2 *redisson.Client, name string) {
	p1, p2 := c1.PermitExpirableSemaphore(name), c2.PermitExpirableSemaphore(name)
	if ok, err := p1.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	h, err := p1.AcquireHeld(ctx, 1)
	if err != nil {
		t.Fatalf("AcquireHeld: %v", err)
	}
	type res struct {
		ids []string
		err error
	}
	done := make(chan res, 1)
	go func() {
		ids, err := p2.Acquire(ctx, 1, redisson.WithLease(time.Minute))
		done <- res{ids, err}
	}()
	eventually(t, 10*time.Second, "the other Client's waiter", func() bool { return c2.Stats().Waiting > 0 })
	if ids, err := p1.TryAcquire(ctx, 1, redisson.WithWait(50*time.Millisecond)); ids != nil || err != nil {
		t.Fatalf("TryAcquire with a wait = %v, %v; want nil, nil", ids, err)
	}
	if err := p1.Release(ctx, h.IDs()...); err != nil {
		t.Fatalf("Release: %v", err)
	}
	r := recvWithin(t, done, 10*time.Second, "the waiter")
	if r.err != nil {
		t.Fatalf("waiter's Acquire: %v", r.err)
	}
	if err := p2.Release(ctx, r.ids...); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if _, err := p1.AddPermits(ctx, 2); err != nil {
		t.Fatalf("AddPermits: %v", err)
	}
	if _, err := p2.DrainPermits(ctx); err != nil {
		t.Fatalf("DrainPermits: %v", err)
	}
}

// latchLeavesNothing sets a CountDownLatch, waits on it from both Clients, and counts it down.
func latchLeavesNothing(t *testing.T, ctx context.Context, c1, c2 *redisson.Client, name string) {
	l1, l2 := c1.CountDownLatch(name), c2.CountDownLatch(name)
	if ok, err := l1.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	done := make(chan error, 1)
	go func() { done <- l2.Wait(ctx) }()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := l1.Wait(short); err == nil {
		t.Fatal("Wait on a set latch returned nil before the count down; want the context's error")
	}
	for range 2 {
		if _, err := l2.CountDown(ctx); err != nil {
			t.Fatalf("CountDown: %v", err)
		}
	}
	if err := recvWithin(t, done, 10*time.Second, "the waiter"); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}
