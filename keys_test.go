package redisson_test

// Key layout and kind collisions: a name used by two kinds of object, and names across Cluster slots.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/goredisson/redisson"
)

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
			before, _ := rdb.HGetAll(ctx, "{"+name+"}").Result()
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
			after, _ := rdb.HGetAll(ctx, "{"+name+"}").Result()
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
			before, _ := rdb.Get(ctx, "{"+name+"}").Result()
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
			if after, _ := rdb.Get(ctx, "{"+name+"}").Result(); after != before || h.Context().Err() != nil {
				t.Errorf("the %s changed: %q -> %q", kind, before, after)
			}
		})
	}
	t.Run("ForeignHash", func(t *testing.T) {
		rdb.HSet(ctx, "{rw-foreign}", "name", "x", "w", "nonsense")
		rw := c.ReadWriteLock("rw-foreign")
		if _, err := rw.RLock(short); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("RLock on a foreign hash: %v; want ErrWrongType", err)
		}
		if _, err := rw.ForceUnlock(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("ForceUnlock on a foreign hash: %v; want ErrWrongType", err)
		}
		if n, _ := rdb.HLen(ctx, "{rw-foreign}").Result(); n != 2 {
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
	before, _ := admin.Get(ctx, "{locked}").Result()
	g := c.BloomFilter("locked")
	if _, err := g.TryInit(ctx, 1000, 0.01); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("TryInit on a held Lock's name = %v; want ErrWrongType", err)
	}
	if _, err := g.AddMany(ctx, []string{"a", "b", "c", "d"}); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("AddMany on a held Lock's name = %v; want ErrWrongType", err)
	}
	if after, _ := admin.Get(ctx, "{locked}").Result(); before != after {
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
	if got, err := admin.Get(ctx, "{xslot-bits}").Bytes(); err != nil || !bytes.Equal(got, []byte{0x10}) {
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
