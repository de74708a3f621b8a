package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// foreignNames makes two names that hold another kind of value than a data object expects: a held
// Lock (a STRING that is no number) and a ReadWriteLock held for reading (a HASH). stillThere
// checks that both are intact, e.g. after a call refused with ErrWrongType.
func foreignNames(t *testing.T, ctx context.Context, c *redisson.Client, name string) (str, hash string, stillThere func()) {
	t.Helper()
	str, hash = name+":string", name+":hash"
	h := mustLock(t, c.Lock(str), ctx)
	r, err := c.ReadWriteLock(hash).RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Unlock(context.Background()); _ = r.Unlock(context.Background()) })
	return str, hash, func() {
		t.Helper()
		if n, err := h.HoldCount(ctx); err != nil || n != 1 {
			t.Errorf("the Lock under %q: hold count %d, %v; want 1 (untouched)", str, n, err)
		}
		if n, err := r.HoldCount(ctx); err != nil || n != 1 {
			t.Errorf("the ReadWriteLock under %q: hold count %d, %v; want 1 (untouched)", hash, n, err)
		}
	}
}

// wantErr fails the test unless err matches target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s = %v; want %v", what, err, target)
	}
}

// atomicConformance is the AtomicLong's suite (TestConformance): every method, shared between
// Clients, the int64 range, and wrong types and bad input changing nothing.
func atomicConformance() []conformanceCase {
	return []conformanceCase{
		{"operations", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			a, b := newC().AtomicLong(name), newC().AtomicLong(name)
			check := func(what string, got, want int64, err error) {
				t.Helper()
				if err != nil || got != want {
					t.Fatalf("%s = %d, %v; want %d", what, got, err, want)
				}
			}
			checkB := func(what string, got, want bool, err error) {
				t.Helper()
				if err != nil || got != want {
					t.Fatalf("%s = %v, %v; want %v", what, got, err, want)
				}
			}
			v, err := a.Load(ctx)
			check("Load of a value never set", v, 0, err)
			v, err = a.Add(ctx, 5)
			check("Add(5)", v, 5, err)
			v, err = b.Load(ctx)
			check("another Client's Load", v, 5, err)
			v, err = b.Increment(ctx)
			check("Increment", v, 6, err)
			v, err = a.Decrement(ctx)
			check("Decrement", v, 5, err)
			v, err = a.Swap(ctx, 10)
			check("Swap(10)", v, 5, err)
			ok, err := b.CompareAndSwap(ctx, 9, 20)
			checkB("CompareAndSwap(9, 20) on 10", ok, false, err)
			ok, err = b.CompareAndSwap(ctx, 10, 20)
			checkB("CompareAndSwap(10, 20)", ok, true, err)
			ok, err = a.SetIfGreater(ctx, 15)
			checkB("SetIfGreater(15) on 20", ok, false, err)
			ok, err = a.SetIfGreater(ctx, 25)
			checkB("SetIfGreater(25) on 20", ok, true, err)
			ok, err = a.SetIfLess(ctx, 30)
			checkB("SetIfLess(30) on 25", ok, false, err)
			ok, err = a.SetIfLess(ctx, -3)
			checkB("SetIfLess(-3) on 25", ok, true, err)
			ok, err = a.SetIfGreater(ctx, -10)
			checkB("SetIfGreater(-10) on -3", ok, false, err)
			ok, err = a.SetIfLess(ctx, -10)
			checkB("SetIfLess(-10) on -3", ok, true, err)
			v, err = b.GetAndDelete(ctx)
			check("GetAndDelete", v, -10, err)
			v, err = a.GetAndDelete(ctx)
			check("GetAndDelete of nothing", v, 0, err)
			ok, err = a.CompareAndSwap(ctx, 0, 7)
			checkB("CompareAndSwap(0, 7) on a value never set", ok, true, err)
			if err := a.Store(ctx, math.MinInt64); err != nil {
				t.Fatal(err)
			}
			v, err = b.Load(ctx)
			check("Load after Store(MinInt64)", v, math.MinInt64, err)
			ok, err = a.SetIfGreater(ctx, math.MinInt64+1)
			checkB("SetIfGreater(MinInt64+1) on MinInt64", ok, true, err)
			ok, err = a.SetIfGreater(ctx, math.MaxInt64)
			checkB("SetIfGreater(MaxInt64)", ok, true, err)
			ok, err = a.SetIfLess(ctx, math.MaxInt64-1)
			checkB("SetIfLess(MaxInt64-1) on MaxInt64", ok, true, err)
			ok, err = a.CompareAndSwap(ctx, math.MaxInt64-1, math.MinInt64)
			checkB("CompareAndSwap(MaxInt64-1, MinInt64)", ok, true, err)
			if _, err := a.Add(ctx, -1); !errors.Is(err, redisson.ErrOutOfRange) {
				t.Fatalf("Add(-1) on MinInt64 = %v; want ErrOutOfRange", err)
			}
			v, err = a.Load(ctx)
			check("Load after the overflow", v, math.MinInt64, err)
		}},
		{"bad input and wrong types", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			var nilA *redisson.AtomicLong
			_, err := nilA.Load(ctx)
			wantErr(t, "Load on a nil handle", err, redisson.ErrInvalidArgument)
			_, err = c.AtomicLong("").Add(ctx, 1)
			wantErr(t, "Add on an empty name", err, redisson.ErrInvalidArgument)
			_, err = c.AtomicLong("}x").Swap(ctx, 1)
			wantErr(t, "Swap on a name starting with '}'", err, redisson.ErrInvalidArgument)
			var nilCtx context.Context // the bad input under test
			_, err = c.AtomicLong(name).Load(nilCtx)
			wantErr(t, "Load with a nil context", err, redisson.ErrInvalidArgument)
			str, hash, stillThere := foreignNames(t, ctx, c, name)
			for _, n := range []string{str, hash} {
				a := c.AtomicLong(n)
				_, err := a.Load(ctx)
				wantErr(t, "Load of "+n, err, redisson.ErrWrongType)
				_, err = a.Add(ctx, 1)
				wantErr(t, "Add to "+n, err, redisson.ErrWrongType)
				wantErr(t, "Store to "+n, a.Store(ctx, 1), redisson.ErrWrongType)
				_, err = a.Swap(ctx, 1)
				wantErr(t, "Swap of "+n, err, redisson.ErrWrongType)
				_, err = a.CompareAndSwap(ctx, 0, 1)
				wantErr(t, "CompareAndSwap of "+n, err, redisson.ErrWrongType)
				_, err = a.SetIfGreater(ctx, 1)
				wantErr(t, "SetIfGreater of "+n, err, redisson.ErrWrongType)
				_, err = a.SetIfLess(ctx, 1)
				wantErr(t, "SetIfLess of "+n, err, redisson.ErrWrongType)
				_, err = a.GetAndDelete(ctx)
				wantErr(t, "GetAndDelete of "+n, err, redisson.ErrWrongType)
			}
			stillThere()
			c.Close()
			_, err = c.AtomicLong(name).Add(ctx, 1)
			wantErr(t, "Add after Close", err, redisson.ErrClosed)
		}},
	}
}

// 8 goroutines × 2 processes × 10,000 increments end at exactly 160,000.
func TestAtomicLongTwoProcesses(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	const name = "atomic-procs"
	mine, theirs := twoProcesses(t, srv, "atomicload", name, "FAULT-ATOMIC", 0, func(time.Time) int64 {
		return atomicLoad(t, ctx, newClient(t, rdb), name)
	})
	v, err := newClient(t, rdb).AtomicLong(name).Load(ctx)
	t.Logf("increments: this process %d, the other %d; value %d", mine, theirs, v)
	if err != nil || v != 160000 || mine != 80000 || theirs != 80000 {
		t.Fatalf("value %d, %v after %d + %d increments; want 160000", v, err, mine, theirs)
	}
}

// atomicLoad runs 8 goroutines of 10,000 increments each on the AtomicLong name and returns how many
// succeeded.
func atomicLoad(t *testing.T, ctx context.Context, c *redisson.Client, name string) int64 {
	var done atomic.Int64
	var wg sync.WaitGroup
	a := c.AtomicLong(name)
	for range 8 {
		spawn(&wg, func() {
			for range 10000 {
				if _, err := a.Increment(ctx); err != nil {
					t.Error(err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return done.Load()
}

// faultHelperAtomicLoad is the child's share of TestAtomicLongTwoProcesses.
func faultHelperAtomicLoad(t *testing.T, ctx context.Context, addr, name string, stdin *bufio.Reader) {
	c := newClient(t, faultHelperRedis(t, addr))
	childLoad(t, stdin, "FAULT-ATOMIC", func(time.Time) int64 { return atomicLoad(t, ctx, c, name) })
}

// Compare-and-swap loops of 3 Clients × 4 goroutines add 1 each time: no update is lost
// (the value is the number of successful swaps) and some swaps failed (there was contention).
func TestAtomicLongCompareAndSwapContention(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	const name, per = "atomic-cas", 300
	var swapped, failed atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		a := newClient(t, rdb).AtomicLong(name)
		for range 4 {
			spawn(&wg, func() {
				for range per {
					for {
						v, err := a.Load(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						ok, err := a.CompareAndSwap(ctx, v, v+1)
						if err != nil {
							t.Error(err)
							return
						}
						if ok {
							swapped.Add(1)
							break
						}
						failed.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	v, err := newClient(t, rdb).AtomicLong(name).Load(ctx)
	t.Logf("%d swaps, %d failed under contention; value %d", swapped.Load(), failed.Load(), v)
	if err != nil || v != 12*per || swapped.Load() != 12*per {
		t.Fatalf("value %d, %v after %d swaps; want %d", v, err, swapped.Load(), 12*per)
	}
	if failed.Load() == 0 {
		t.Fatal("no swap failed: the test did not contend")
	}
}

// A mutation whose reply is lost (the server ran it, the connection closed before the reply came
// back) is not re-sent by go-redis: the caller gets an error and the change happened exactly once.
// Reads are re-sent as usual.
func TestObjectsDroppedReplyAppliedOnce(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }) // default MaxRetries: re-sends
	c := newClient(t, rdb)
	a, b, f := c.AtomicLong("once"), c.BitSet("once-bits"), c.BloomFilter("once-bloom")
	if _, err := a.Add(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompareAndSwap(ctx, 1, 2); err != nil { // loads the script
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "warm-up"); err != nil {
		t.Fatal(err)
	}
	lost := func(what string, op func() error) {
		t.Helper()
		if _, err := a.Load(ctx); err != nil { // a connection in the pool: the dropped reply is op's
			t.Fatal(err)
		}
		p.DropReplies(1)
		if err := op(); err == nil {
			t.Fatalf("%s with its reply dropped = nil error; want the network error (re-sent?)", what)
		}
	}
	lost("Add(5)", func() error { _, err := a.Add(ctx, 5); return err })
	if v, err := admin.Get(ctx, "once").Int64(); err != nil || v != 15 {
		t.Fatalf("after Add(5) lost its reply: %d, %v; want 15 (added once)", v, err)
	}
	lost("CompareAndSwap(15, 16)", func() error { _, err := a.CompareAndSwap(ctx, 15, 16); return err })
	if v, err := a.Load(ctx); err != nil || v != 16 {
		t.Fatalf("after CompareAndSwap lost its reply: %d, %v; want 16", v, err)
	}
	lost("Set(7)", func() error { _, err := b.Set(ctx, 7); return err })
	if was, err := b.Set(ctx, 7); err != nil || !was {
		t.Fatalf("Set(7) after the lost one = %v, %v; want it set once already", was, err)
	}
	lost("BloomFilter.AddMany", func() error { _, err := f.AddMany(ctx, []string{"x", "y"}); return err })
	if got, err := f.ContainsMany(ctx, []string{"x", "y"}); err != nil || !got[0] || !got[1] {
		t.Fatalf("ContainsMany after the lost AddMany = %v, %v; want both added", got, err)
	}
	p.DropReplies(1)
	if v, err := a.Load(ctx); err != nil || v != 16 {
		t.Fatalf("Load with its reply dropped = %d, %v; want 16 (a read is re-sent)", v, err)
	}
}

// Every non-canonical int64 string under an AtomicLong's name ("-0", "+1", "007", " 1", "1.0",
// "1e3", out-of-range or non-ASCII digits, ...) fails every method with ErrWrongType and is left
// exactly as it was: the Lua decoder, the Go decoder and INCRBY agree.
func TestAtomicLongNonCanonicalStringsAreWrongType(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	a := c.AtomicLong("nc")
	for _, raw := range []string{"-0", "+1", "007", "00", " 1", "1 ", "1\x00", "", "-", "1.0", "0x10", "1e3",
		"12345678901234567890", "9223372036854775808", "-9223372036854775809", "99999999999999999999",
		"-00", "٣", "１"} {
		mustDo(t, "SET", admin.Set(ctx, "nc", raw, 0).Err())
		errs := map[string]error{}
		_, errs["Load"] = a.Load(ctx)
		_, errs["Add"] = a.Add(ctx, 1)
		_, errs["Add(0)"] = a.Add(ctx, 0)
		errs["Store"] = a.Store(ctx, 5)
		_, errs["Swap"] = a.Swap(ctx, 5)
		_, errs["CompareAndSwap(0,5)"] = a.CompareAndSwap(ctx, 0, 5)
		_, errs["SetIfGreater(MaxInt64)"] = a.SetIfGreater(ctx, math.MaxInt64)
		_, errs["SetIfLess(MinInt64)"] = a.SetIfLess(ctx, math.MinInt64)
		_, errs["GetAndDelete"] = a.GetAndDelete(ctx)
		for what, err := range errs {
			if !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s on %q = %v; want ErrWrongType", what, raw, err)
			}
		}
		if got, err := admin.Get(ctx, "nc").Result(); err != nil || got != raw {
			t.Errorf("after the calls on %q the value is %q, %v; want it unchanged", raw, got, err)
		}
	}
}

// SetIfGreater, SetIfLess and CompareAndSwap agree with Go's int64 order on edge values (the
// scripts compare strings: signs, lengths, equal lengths), and an Add overflowing at either end
// fails with ErrOutOfRange and changes nothing.
func TestAtomicLongOrderEdges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c, _, _ := setup(t)
	a := c.AtomicLong("order")
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1000000000000000000, -999999999999999999, -10, -9, -1, 0, 1, 9, 10,
		99, 100, 999999999999999999, 1000000000000000000, math.MaxInt64 - 1, math.MaxInt64}
	for _, cur := range vals {
		for _, v := range vals {
			mustDo(t, "Store", a.Store(ctx, cur))
			set, err := a.SetIfGreater(ctx, v)
			got, lerr := a.Load(ctx)
			if err != nil || lerr != nil || set != (v > cur) || got != max(v, cur) {
				t.Fatalf("SetIfGreater(%d) on %d = %v, %v; value %d, %v", v, cur, set, err, got, lerr)
			}
			mustDo(t, "Store", a.Store(ctx, cur))
			set, err = a.SetIfLess(ctx, v)
			got, lerr = a.Load(ctx)
			if err != nil || lerr != nil || set != (v < cur) || got != min(v, cur) {
				t.Fatalf("SetIfLess(%d) on %d = %v, %v; value %d, %v", v, cur, set, err, got, lerr)
			}
			mustDo(t, "Store", a.Store(ctx, cur))
			set, err = a.CompareAndSwap(ctx, v, 42)
			if err != nil || set != (v == cur) {
				t.Fatalf("CompareAndSwap(%d, 42) on %d = %v, %v", v, cur, set, err)
			}
		}
	}
	// Add overflow at both ends changes nothing.
	mustDo(t, "Store", a.Store(ctx, math.MaxInt64))
	if _, err := a.Add(ctx, 1); !errors.Is(err, redisson.ErrOutOfRange) {
		t.Fatalf("Add(1) on MaxInt64 = %v; want ErrOutOfRange", err)
	}
	mustDo(t, "Store", a.Store(ctx, math.MinInt64))
	if _, err := a.Add(ctx, math.MinInt64); !errors.Is(err, redisson.ErrOutOfRange) {
		t.Fatalf("Add(MinInt64) on MinInt64 = %v; want ErrOutOfRange", err)
	}
	if v, err := a.Load(ctx); err != nil || v != math.MinInt64 {
		t.Fatalf("Load after the overflows = %d, %v", v, err)
	}
}
