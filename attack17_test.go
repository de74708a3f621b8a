package redisson_test

// Attack 17: the data objects of issue 10 (AtomicLong, BitSet, BloomFilter, HyperLogLog): sent-once
// mutations under lost replies (plain and replica-acknowledged mode), int64 edge values and
// non-canonical strings, BitSet boundaries, BitField bounds, BloomFilter configuration tampering,
// re-initialisation under another Client's cache, huge batches, HyperLogLog corruption, key
// collisions between kinds, nil/zero handles.
//
// Tests marked "passing" are attacks the code withstands (kept as regression tests); the others
// document a defect and fail.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a17Must fails the test on err.
func a17Must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// ---------------------------------------------------------------------------------------------
// AtomicLong
// ---------------------------------------------------------------------------------------------

// passing: every non-canonical int64 string under the name fails every method with ErrWrongType and
// is left exactly as it was (the Lua decoder, the Go decoder and INCRBY agree).
func TestAttack17AtomicLongNonCanonicalStrings(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	a := c.AtomicLong("nc")
	for _, raw := range []string{"-0", "+1", "007", "00", " 1", "1 ", "1\x00", "", "-", "1.0", "0x10", "1e3",
		"12345678901234567890", "9223372036854775808", "-9223372036854775809", "99999999999999999999",
		"-00", "٣", "１"} {
		a17Must(t, "SET", admin.Set(ctx, "{nc}", raw, 0).Err())
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
		if got, err := admin.Get(ctx, "{nc}").Result(); err != nil || got != raw {
			t.Errorf("after the calls on %q the value is %q, %v; want it unchanged", raw, got, err)
		}
	}
}

// passing: SetIfGreater, SetIfLess and CompareAndSwap agree with Go's int64 order on edge values
// (string comparison in Lua: signs, lengths, equal lengths).
func TestAttack17AtomicLongOrderEdges(t *testing.T) {
	ctx := t.Context()
	c, _, _ := setup(t)
	a := c.AtomicLong("order")
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1000000000000000000, -999999999999999999, -10, -9, -1, 0, 1, 9, 10,
		99, 100, 999999999999999999, 1000000000000000000, math.MaxInt64 - 1, math.MaxInt64}
	for _, cur := range vals {
		for _, v := range vals {
			a17Must(t, "Store", a.Store(ctx, cur))
			set, err := a.SetIfGreater(ctx, v)
			got, lerr := a.Load(ctx)
			if err != nil || lerr != nil || set != (v > cur) || got != max(v, cur) {
				t.Fatalf("SetIfGreater(%d) on %d = %v, %v; value %d, %v", v, cur, set, err, got, lerr)
			}
			a17Must(t, "Store", a.Store(ctx, cur))
			set, err = a.SetIfLess(ctx, v)
			got, lerr = a.Load(ctx)
			if err != nil || lerr != nil || set != (v < cur) || got != min(v, cur) {
				t.Fatalf("SetIfLess(%d) on %d = %v, %v; value %d, %v", v, cur, set, err, got, lerr)
			}
			a17Must(t, "Store", a.Store(ctx, cur))
			set, err = a.CompareAndSwap(ctx, v, 42)
			if err != nil || set != (v == cur) {
				t.Fatalf("CompareAndSwap(%d, 42) on %d = %v, %v", v, cur, set, err)
			}
		}
	}
	// Add overflow at both ends changes nothing.
	a17Must(t, "Store", a.Store(ctx, math.MaxInt64))
	if _, err := a.Add(ctx, 1); !errors.Is(err, redisson.ErrOutOfRange) {
		t.Fatalf("Add(1) on MaxInt64 = %v; want ErrOutOfRange", err)
	}
	a17Must(t, "Store", a.Store(ctx, math.MinInt64))
	if _, err := a.Add(ctx, math.MinInt64); !errors.Is(err, redisson.ErrOutOfRange) {
		t.Fatalf("Add(MinInt64) on MinInt64 = %v; want ErrOutOfRange", err)
	}
	if v, err := a.Load(ctx); err != nil || v != math.MinInt64 {
		t.Fatalf("Load after the overflows = %d, %v", v, err)
	}
}

// ---------------------------------------------------------------------------------------------
// Lost replies
// ---------------------------------------------------------------------------------------------

// lostReplies runs the non-idempotent mutations of every data object with their reply dropped and
// checks each was applied exactly once. newC makes a Client over rdb (a proxy to the master).
func lostReplies(t *testing.T, admin *redis.Client, p *redistest.Proxy, c *redisson.Client) {
	t.Helper()
	ctx := t.Context()
	a, b, f, h := c.AtomicLong("lr"), c.BitSet("lr-bits"), c.BloomFilter("lr-bloom"), c.HyperLogLog("lr-hll")
	// Warm up: scripts loaded, Bloom parameters cached, INFO replication cached (acked mode).
	if _, err := a.Add(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompareAndSwap(ctx, -1, -2); err != nil {
		t.Fatal(err)
	}
	if err := b.SetRange(ctx, 0, 4); err != nil { // bits 0..3: 0xF0
		t.Fatal(err)
	}
	if _, err := f.TryInit(ctx, 100000, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "warm-up"); err != nil {
		t.Fatal(err)
	}
	lost := func(what string, op func() error) {
		t.Helper()
		if _, err := a.Load(ctx); err != nil { // a pooled connection: the dropped reply is op's
			t.Fatal(err)
		}
		p.DropReplies(1)
		if err := op(); err == nil {
			t.Errorf("%s with its reply dropped = nil error; want the network error (re-sent?)", what)
		}
		p.DropReplies(0)
	}
	lost("Add(5)", func() error { _, err := a.Add(ctx, 5); return err })
	if v, err := a.Load(ctx); err != nil || v != 15 {
		t.Errorf("after Add(5) lost its reply: %d, %v; want 15", v, err)
	}
	lost("Swap(100)", func() error { _, err := a.Swap(ctx, 100); return err })
	lost("SetIfGreater(101)", func() error { _, err := a.SetIfGreater(ctx, 101); return err })
	lost("GetAndDelete", func() error { _, err := a.GetAndDelete(ctx); return err })
	if v, err := admin.Exists(ctx, "{lr}").Result(); err != nil || v != 0 {
		t.Errorf("after GetAndDelete lost its reply: exists %d, %v", v, err)
	}
	// Not twice is no change: the lost Not must have flipped exactly once.
	lost("Not", func() error { return b.Not(ctx) })
	if got, err := b.Bytes(ctx); err != nil || !bytes.Equal(got, []byte{0x0F}) {
		t.Errorf("after Not lost its reply: %x, %v; want 0f (flipped once)", got, err)
	}
	a17Must(t, "SetBytes", admin.Set(ctx, "{lr-bits:x}", []byte{0xFF}, 0).Err())
	lost("Xor", func() error { return b.Xor(ctx, "lr-bits:x") })
	if got, err := b.Bytes(ctx); err != nil || !bytes.Equal(got, []byte{0xF0}) {
		t.Errorf("after Xor lost its reply: %x, %v; want f0 (xored once)", got, err)
	}
	lost("AddField", func() error { _, err := b.AddField(ctx, redisson.Uint8, 8, 3); return err })
	if v, err := b.GetField(ctx, redisson.Uint8, 8); err != nil || v != 3 {
		t.Errorf("after AddField(3) lost its reply: %d, %v; want 3", v, err)
	}
	lost("SetField", func() error { _, err := b.SetField(ctx, redisson.Int8, 16, -7); return err })
	if v, err := b.GetField(ctx, redisson.Int8, 16); err != nil || v != -7 {
		t.Errorf("after SetField lost its reply: %d, %v; want -7", v, err)
	}
	lost("SetRange", func() error { return b.SetRange(ctx, 30, 50) })
	lost("HyperLogLog.AddMany", func() error { _, err := h.AddMany(ctx, []string{"a", "b", "c"}); return err })
	if n, err := h.Count(ctx); err != nil || n != 3 {
		t.Errorf("HyperLogLog.Count after the lost AddMany = %d, %v; want 3", n, err)
	}
	// A multi-call AddMany (several script calls in one pipeline): the connection closes when the
	// first replies come back, so later calls may not have run (documented: a batch of several calls
	// is not atomic, and after a network error it may or may not have happened); none is re-sent,
	// and each call is all or nothing: every element is either fully in or reported new again.
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("m%d", i)
	}
	lost("BloomFilter.AddMany(5000)", func() error { _, err := f.AddMany(ctx, many); return err })
	if _, err := f.AddMany(ctx, many); err != nil {
		t.Fatal(err)
	}
	got, err := f.ContainsMany(ctx, many)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if !ok {
			t.Errorf("element %d of the lost AddMany not contained", i)
			break
		}
	}
	lost("BloomFilter.Delete", func() error { _, err := f.Delete(ctx); return err })
	if _, err := f.Contains(ctx, "m1"); !errors.Is(err, redisson.ErrNotInitialized) {
		t.Errorf("Contains after the lost Delete = %v; want ErrNotInitialized", err)
	}
}

// passing: every non-idempotent mutation with its reply lost is applied once (plain mode).
func TestAttack17LostReplyEveryMutation(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }) // default MaxRetries
	lostReplies(t, admin, p, newClient(t, rdb))
}

// passing: the same in the replica-acknowledged mode (the pipeline with WAIT on a master with a
// replica).
func TestAttack17LostReplyEveryMutationAcked(t *testing.T) {
	r := redistest.StartReplicated(t)
	admin := r.Master.Client(t)
	p := redistest.NewProxy(t, r.Master.Addr())
	rdb := r.Master.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	lostReplies(t, admin, p, newClient(t, rdb, redisson.WithReplicaAcks(1, 2e9)))
}

// ---------------------------------------------------------------------------------------------
// BitSet
// ---------------------------------------------------------------------------------------------

// applyBitRange applies SetRange/ClearRange to a Go copy of the string, as documented.
func applyBitRange(s []byte, from, to int64, set bool) []byte {
	if set && to > 0 && from < to {
		need := (to + 7) / 8
		for int64(len(s)) < need {
			s = append(s, 0)
		}
	}
	for i := from; i < to && i/8 < int64(len(s)); i++ {
		if set {
			s[i/8] |= 0x80 >> (i % 8)
		} else {
			s[i/8] &^= 0x80 >> (i % 8)
		}
	}
	return s
}

// passing: SetRange/ClearRange at byte boundaries agree with a model; ClearRange never lengthens;
// Length on strings ending in many zero bytes (across the script's 4 KiB window).
func TestAttack17BitSetRangeBoundaries(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	b := c.BitSet("rb")
	edges := []int64{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 8 * 4096, 8*4096 + 3}
	start := bytes.Repeat([]byte{0xA5}, 3)
	for _, from := range edges {
		for _, to := range edges {
			for _, set := range []bool{true, false} {
				a17Must(t, "SET", admin.Set(ctx, "{rb}", start, 0).Err())
				var err error
				if set {
					err = b.SetRange(ctx, from, to)
				} else {
					err = b.ClearRange(ctx, from, to)
				}
				want := bytes.Clone(start)
				if from > to { // a reversed range is refused, nothing changed (issue 18)
					if !errors.Is(err, redisson.ErrInvalidArgument) {
						t.Fatalf("range(%d, %d, %v) = %v; want ErrInvalidArgument", from, to, set, err)
					}
				} else {
					a17Must(t, fmt.Sprintf("range(%d, %d, %v)", from, to, set), err)
					want = applyBitRange(want, from, to, set)
				}
				got, err := admin.Get(ctx, "{rb}").Bytes()
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("range [%d, %d) set=%v on a5a5a5: %x, %v; want %x", from, to, set, got, err, want)
				}
			}
		}
	}
	// ClearRange far past the end, and on an absent key: no lengthening, no key made.
	a17Must(t, "ClearRange", b.ClearRange(ctx, 0, redisson.MaxBit+1))
	if n, err := admin.StrLen(ctx, "{rb}").Result(); err != nil || n != 3 {
		t.Fatalf("STRLEN after ClearRange(0, MaxBit+1) = %d, %v; want 3", n, err)
	}
	a17Must(t, "ClearRange", c.BitSet("rb-absent").ClearRange(ctx, 5, 1<<20))
	if n, _ := admin.Exists(ctx, "{rb-absent}").Result(); n != 0 {
		t.Fatal("ClearRange on an absent BitSet created it")
	}
	for _, tail := range []int{0, 1, 4095, 4096, 4097, 20000} {
		s := append([]byte{0x00, 0x01}, make([]byte, tail)...)
		a17Must(t, "SET", admin.Set(ctx, "{rb}", s, 0).Err())
		if n, err := b.Length(ctx); err != nil || n != 16 {
			t.Fatalf("Length of 0001 + %d zero bytes = %d, %v; want 16", tail, n, err)
		}
	}
	a17Must(t, "SET", admin.Set(ctx, "{rb}", make([]byte, 9000), 0).Err())
	if n, err := b.Length(ctx); err != nil || n != 0 {
		t.Fatalf("Length of 9000 zero bytes = %d, %v; want 0", n, err)
	}
}

// Was a defect, fixed in review 17: SetRange/ClearRange document "ErrInvalidArgument (from or to outside [0, MaxBit+1])", and
// "none if from ≥ to": the empty range [MaxBit+1, MaxBit+1) is valid input, but from is checked
// against [0, MaxBit] and the call fails with ErrInvalidArgument.
func TestAttack17BitSetEmptyRangeAtEnd(t *testing.T) {
	ctx := t.Context()
	c, _, _ := setup(t)
	b := c.BitSet("end")
	if err := b.SetRange(ctx, redisson.MaxBit+1, redisson.MaxBit+1); err != nil {
		t.Errorf("SetRange(MaxBit+1, MaxBit+1) (empty, both bounds in [0, MaxBit+1]) = %v; want nil", err)
	}
	if err := b.ClearRange(ctx, redisson.MaxBit+1, redisson.MaxBit+1); err != nil {
		t.Errorf("ClearRange(MaxBit+1, MaxBit+1) = %v; want nil", err)
	}
}

// Was a defect, fixed in review 17: Bytes documents "nil for an empty set", and SetBytes "an empty p leaves an empty set". After
// SetBytes(nil) the key holds "" and Bytes returns a non-nil empty slice; the empty string also stays
// in Redis as a key (EXISTS 1), which makes a BloomFilter of that name refuse TryInit (a bitmap
// without a configuration).
func TestAttack17BitSetSetBytesEmpty(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	b := c.BitSet("empty")
	a17Must(t, "SetBytes(abc)", b.SetBytes(ctx, []byte("abc")))
	a17Must(t, "SetBytes(nil)", b.SetBytes(ctx, nil))
	got, err := b.Bytes(ctx)
	if err != nil || got != nil {
		t.Errorf("Bytes after SetBytes(nil) = %#v, %v; want nil (the empty set)", got, err)
	}
	if n, _ := admin.Exists(ctx, "{empty}").Result(); n != 0 {
		t.Errorf("SetBytes(nil) left an empty string key in Redis (EXISTS = %d)", n)
	}
}

// passing: BitField bounds: field types, offsets at the very end of the BitSet, values at the edges
// of each type, and wrap-around of AddField for i64 and u63.
func TestAttack17BitFieldBounds(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	b := c.BitSet("bf")
	for _, f := range []redisson.BitField{{}, redisson.Signed(0), redisson.Signed(65), redisson.Signed(300), redisson.Signed(-3),
		redisson.Unsigned(0), redisson.Unsigned(64), redisson.Unsigned(1000)} {
		if _, err := b.GetField(ctx, f, 0); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("GetField(%v) = %v; want ErrInvalidArgument", f, err)
		}
		if _, err := b.SetField(ctx, f, 0, 0); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("SetField(%v) = %v; want ErrInvalidArgument", f, err)
		}
		if _, err := b.AddField(ctx, f, 0, 0); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("AddField(%v) = %v; want ErrInvalidArgument", f, err)
		}
	}
	// Reads at the very end: no allocation, 0.
	for _, f := range []redisson.BitField{redisson.Int64, redisson.Unsigned(63), redisson.Signed(1), redisson.Unsigned(1)} {
		end := int64(redisson.MaxBit) + 1 - int64(map[string]int{"i64": 64, "u63": 63, "i1": 1, "u1": 1}[f.String()])
		if v, err := b.GetField(ctx, f, end); err != nil || v != 0 {
			t.Errorf("GetField(%v, %d) = %d, %v; want 0", f, end, v, err)
		}
		if _, err := b.GetField(ctx, f, end+1); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("GetField(%v, %d) past the end = %v; want ErrInvalidArgument", f, end+1, err)
		}
		if _, err := b.SetField(ctx, f, end+1, 0); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("SetField(%v, %d) past the end = %v; want ErrInvalidArgument", f, end+1, err)
		}
	}
	if n, _ := admin.Exists(ctx, "{bf}").Result(); n != 0 {
		t.Fatal("refused calls created the BitSet")
	}
	type setCase struct {
		f  redisson.BitField
		v  int64
		ok bool
	}
	for _, sc := range []setCase{
		{redisson.Int8, -128, true}, {redisson.Int8, 127, true}, {redisson.Int8, 128, false}, {redisson.Int8, -129, false},
		{redisson.Uint8, 255, true}, {redisson.Uint8, 256, false}, {redisson.Uint8, -1, false},
		{redisson.Signed(1), -1, true}, {redisson.Signed(1), 1, false}, {redisson.Unsigned(1), 1, true}, {redisson.Unsigned(1), 2, false},
		{redisson.Int64, math.MinInt64, true}, {redisson.Int64, math.MaxInt64, true},
		{redisson.Unsigned(63), math.MaxInt64, true}, {redisson.Unsigned(63), -1, false},
		{redisson.Signed(63), -1 << 62, true}, {redisson.Signed(63), 1<<62 - 1, true}, {redisson.Signed(63), 1 << 62, false},
	} {
		_, err := b.SetField(ctx, sc.f, 3, sc.v)
		if sc.ok {
			if err != nil {
				t.Errorf("SetField(%v, 3, %d) = %v", sc.f, sc.v, err)
				continue
			}
			if got, err := b.GetField(ctx, sc.f, 3); err != nil || got != sc.v {
				t.Errorf("GetField(%v, 3) after SetField(%d) = %d, %v", sc.f, sc.v, got, err)
			}
		} else if !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("SetField(%v, 3, %d) = %v; want ErrInvalidArgument", sc.f, sc.v, err)
		}
	}
	// Wrap-around.
	_, err := b.SetField(ctx, redisson.Int64, 100, math.MaxInt64)
	a17Must(t, "SetField", err)
	if v, err := b.AddField(ctx, redisson.Int64, 100, 1); err != nil || v != math.MinInt64 {
		t.Errorf("AddField(i64, MaxInt64 + 1) = %d, %v; want MinInt64", v, err)
	}
	_, err = b.SetField(ctx, redisson.Unsigned(63), 200, 0)
	a17Must(t, "SetField", err)
	if v, err := b.AddField(ctx, redisson.Unsigned(63), 200, -1); err != nil || v != math.MaxInt64 {
		t.Errorf("AddField(u63, 0 - 1) = %d, %v; want MaxInt64", v, err)
	}
	if v, err := b.AddField(ctx, redisson.Uint8, 300, 1000); err != nil || v != 1000%256 {
		t.Errorf("AddField(u8, 1000) = %d, %v; want %d", v, err, 1000%256)
	}
	if v, err := b.AddField(ctx, redisson.Int8, 400, math.MinInt64); err != nil || v != 0 {
		t.Errorf("AddField(i8, MinInt64) = %d, %v; want 0 (MinInt64 mod 256)", v, err)
	}
}

// Was a defect, fixed in review 17: BitSet documents "Each method is one round trip and one atomic step in Redis" and
// "ErrWrongType (nothing changed...)". With a server whose proto-max-bulk-len is lowered (a legal
// setting, minimum 1mb), SetRange(1, 2^24) fails on the script's SETRANGE after its SETBIT loop
// has already written bits 1..7: a failed call leaves a partial range behind. (A script is not
// rolled back on error.) The same holds for a BloomFilter AddMany call whose indices pass the limit.
func TestAttack17BitSetRangePartialOnError(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.WithArgs("--proto-max-bulk-len", "1mb"))
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t))
	b := c.BitSet("partial")
	err := b.SetRange(ctx, 1, 1<<24) // 2 MiB of bits: past the 1 MiB limit
	if err == nil {
		t.Fatal("SetRange past proto-max-bulk-len = nil; want an error")
	}
	if n, _ := admin.Exists(ctx, "{partial}").Result(); n != 0 {
		v, _ := admin.GetRange(ctx, "{partial}", 0, 3).Bytes()
		t.Errorf("SetRange failed (%v) but left the key behind, starting %x: not one atomic step", err, v)
	}
}

// ---------------------------------------------------------------------------------------------
// BloomFilter
// ---------------------------------------------------------------------------------------------

// Was a defect, fixed in review 17: Count decodes the configuration on its own (ParseFloat of bits and hashes, ignoring
// errors), not with load (the "one Go decoder"): a tampered configuration with bits "NaN" or "inf"
// gives a garbage estimate (int64 of NaN) with a nil error instead of ErrWrongType, while Config
// reports ErrWrongType for the same hash.
func TestAttack17BloomCountTamperedConfig(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	for _, tc := range []struct{ field, value string }{
		{"bits", "NaN"}, {"bits", "inf"}, {"hashes", "NaN"}, {"bits", "1e300"}, {"hashes", "1e-300"},
	} {
		name := "tamper-" + tc.field + "-" + tc.value
		f := c.BloomFilter(name)
		if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
			t.Fatal(err)
		}
		if _, err := f.AddMany(ctx, []string{"a", "b", "c"}); err != nil {
			t.Fatal(err)
		}
		a17Must(t, "HSET", admin.HSet(ctx, "{"+name+"}", tc.field, tc.value).Err())
		if _, err := f.Config(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Config with %s=%q = %v; want ErrWrongType", tc.field, tc.value, err)
		}
		if n, err := f.Count(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Count with %s=%q = %d, %v; want ErrWrongType (as Config)", tc.field, tc.value, n, err)
		}
	}
}

// Was a defect, fixed in review 17: a configuration whose bits are written non-canonically ("01000", "+1000") is accepted by
// Config (strconv.ParseInt) but refused by bloom.lua (string comparison with the canonical ARGV), so
// every Add, Contains and TryInit of the filter fails with ErrConfigMismatch, an error Add and
// Contains do not document, while Config says the filter is fine. The two decoders disagree; both
// should refuse it (ErrWrongType), or both accept it.
func TestAttack17BloomNonCanonicalConfig(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	f := c.BloomFilter("noncanon")
	bits, _, err := redisson.BloomSize(1000, 0.01)
	a17Must(t, "BloomSize", err)
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	a17Must(t, "HSET", admin.HSet(ctx, "{noncanon}", "bits", fmt.Sprintf("0%d", bits)).Err())
	c2 := newClient(t, admin)
	f2 := c2.BloomFilter("noncanon")
	_, cfgErr := f2.Config(ctx)
	_, addErr := f2.Add(ctx, "x")
	if (cfgErr == nil) != (addErr == nil) {
		t.Errorf("configuration with bits %q: Config = %v but Add = %v; the Go and Lua decoders disagree", fmt.Sprintf("0%d", bits), cfgErr, addErr)
	}
	if addErr != nil && !errors.Is(addErr, redisson.ErrWrongType) {
		t.Errorf("Add with a non-canonical configuration = %v; want ErrWrongType (documented errors of Add)", addErr)
	}
}

// passing: Client A has (m, k) cached; Client B deletes the filter and makes it again with other
// parameters, then adds. A's Contains has no false negatives for B's elements, A's adds (one call
// and many calls) land in the new filter with its parameters, and B sees them.
func TestAttack17BloomReinitWhileCached(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	a, b := newClient(t, srv.Client(t)), newClient(t, srv.Client(t))
	fa, fb := a.BloomFilter("reinit"), b.BloomFilter("reinit")
	if _, err := fa.TryInit(ctx, 100000, 0.001); err != nil {
		t.Fatal(err)
	}
	if _, err := fa.Add(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := fb.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fb.TryInit(ctx, 300, 0.2); err != nil {
		t.Fatal(err)
	}
	elems := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return out
	}
	bElems := elems("b", 200)
	if _, err := fb.AddMany(ctx, bElems); err != nil {
		t.Fatal(err)
	}
	got, err := fa.ContainsMany(ctx, bElems)
	a17Must(t, "A.ContainsMany", err)
	for i, ok := range got {
		if !ok {
			t.Fatalf("A (stale cache) does not contain B's element %d: false negative", i)
		}
	}
	// A's adds go to the new filter with the new parameters: several script calls (k is small).
	aElems := elems("a", 20000)
	if _, err := b.BloomFilter("reinit").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fb.TryInit(ctx, 50000, 0.05); err != nil {
		t.Fatal(err)
	}
	if _, err := fa.AddMany(ctx, aElems); err != nil {
		t.Fatal(err)
	}
	got, err = fb.ContainsMany(ctx, aElems)
	a17Must(t, "B.ContainsMany", err)
	for i, ok := range got {
		if !ok {
			t.Fatalf("B does not contain A's element %d (A added with stale parameters?)", i)
		}
	}
	cfg, err := fa.Config(ctx)
	if err != nil || cfg.Insertions != 50000 {
		t.Fatalf("Config = %+v, %v; want B's", cfg, err)
	}
}

// passing: TryInit races between Clients with different parameters: exactly one configuration wins,
// the others get false (same) or ErrConfigMismatch, and every Client then uses the winner's.
func TestAttack17BloomTryInitRace(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	params := []struct {
		n int64
		p float64
	}{{1000, 0.01}, {1000, 0.01}, {2000, 0.01}, {1000, 0.1}, {5, 0.5}, {100000, 0.001}, {1000, 0.01}, {7, 0.3}}
	type res struct {
		created bool
		err     error
	}
	out := make([]res, len(params))
	clients := make([]*redisson.Client, len(params))
	for i := range clients {
		clients[i] = newClient(t, srv.Client(t))
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, pr := range params {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ok, err := clients[i].BloomFilter("race").TryInit(ctx, pr.n, pr.p)
			out[i] = res{ok, err}
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, r := range out {
		if r.created {
			if winner >= 0 {
				t.Fatalf("two TryInit created the filter: %d and %d", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("no TryInit created the filter: %+v", out)
	}
	wm, wk, _ := redisson.BloomSize(params[winner].n, params[winner].p)
	for i, r := range out {
		m, k, _ := redisson.BloomSize(params[i].n, params[i].p)
		switch {
		case i == winner:
		case m == wm && k == wk:
			if r.err != nil {
				t.Errorf("TryInit %d (same size as the winner) = %v", i, r.err)
			}
		default:
			if !errors.Is(r.err, redisson.ErrConfigMismatch) {
				t.Errorf("TryInit %d (other size) = %v; want ErrConfigMismatch", i, r.err)
			}
		}
		if _, err := clients[i].BloomFilter("race").Add(ctx, fmt.Sprint("e", i)); err != nil {
			t.Errorf("Add by Client %d = %v", i, err)
		}
	}
	for i := range clients {
		for j := range clients {
			if ok, err := clients[i].BloomFilter("race").Contains(ctx, fmt.Sprint("e", j)); err != nil || !ok {
				t.Errorf("Client %d does not contain Client %d's element: %v, %v", i, j, ok, err)
			}
		}
	}
}

// passing: a huge batch with k = 100 (many script calls), the empty string, duplicates and elements
// of very different sizes: all contained, the count of new elements plausible, Count with every
// bit set is m.
func TestAttack17BloomHugeBatch(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	f := c.BloomFilter("huge")
	m, k, err := redisson.BloomSize(3000, 1e-30)
	a17Must(t, "BloomSize", err)
	if k != 100 {
		t.Fatalf("BloomSize(3000, 1e-30) hashes = %d; want 100", k)
	}
	if _, err := f.TryInit(ctx, 3000, 1e-30); err != nil {
		t.Fatal(err)
	}
	elems := []string{"", "", strings.Repeat("x", 100000), "\x00", "\xff\xfe"}
	for i := range 2990 {
		elems = append(elems, fmt.Sprint(i))
	}
	n, err := f.AddMany(ctx, elems)
	if err != nil || n != len(elems)-1 { // k = 100 at p = 1e-30: no false positive expected
		t.Fatalf("AddMany(%d with a duplicate) = %d, %v", len(elems), n, err)
	}
	got, err := f.ContainsMany(ctx, elems)
	if err != nil || len(got) != len(elems) {
		t.Fatalf("ContainsMany = %d answers, %v", len(got), err)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("element %d (%.10q) added but not contained", i, elems[i])
		}
	}
	// Every bit set (m is not a multiple of 8 here: bits past m set too).
	a17Must(t, "SET", admin.Set(ctx, fmt.Sprintf("{huge}:~bf:%d:%d", m, k), bytes.Repeat([]byte{0xFF}, int((m+7)/8)), 0).Err())
	if cnt, err := f.Count(ctx); err != nil || cnt != m {
		t.Fatalf("Count with every bit set = %d, %v; want m = %d", cnt, err, m)
	}
	// A fresh filter with every bit clear but the bitmap allocated.
	g := c.BloomFilter("zero")
	if _, err := g.TryInit(ctx, 10, 0.1); err != nil {
		t.Fatal(err)
	}
	if cnt, err := g.Count(ctx); err != nil || cnt != 0 {
		t.Fatalf("Count of an empty filter = %d, %v", cnt, err)
	}
}

// Was a defect (key collision): the filter's bits were at the object key, so a Lock acquired on the
// name of a filter initialised before any Add had its string overwritten by the next AddMany, which
// reported success. Fixed: the configuration (a hash) is at the object key and the bits beside it,
// so the Lock is refused, and a filter on a held Lock's name is refused, both with ErrWrongType and
// nothing changed.
func TestAttack17BloomFilterCorruptsLock(t *testing.T) {
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

// Documented limit (was reported as a defect): an AtomicLong and a Semaphore (or CountDownLatch)
// share one stored format, a decimal integer string at the object key (Redisson's layouts), so
// Redis cannot tell them apart: under one name they are one value. doc.go and keys.go say so; this
// test pins the documented behaviour, and that a lock's name is still refused.
func TestAttack17AtomicLongChangesSemaphore(t *testing.T) {
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

// ---------------------------------------------------------------------------------------------
// HyperLogLog
// ---------------------------------------------------------------------------------------------

// Was a defect, fixed in review 17: HyperLogLog documents that a string not in its format fails with ErrWrongType. A string
// with the HLL header but a corrupt sparse body gets Redis's "INVALIDOBJ Corrupted HLL object
// detected", which objectErr does not map: Count (and CountWith/MergeWith) fail with an error that
// does not match ErrWrongType.
func TestAttack17HyperLogLogCorruptIsWrongType(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	// "HYLL", encoding 1 (sparse), 3 unused bytes, 8 bytes of cached cardinality with the
	// "invalid" bit set (so PFCOUNT recomputes), then one ZERO opcode covering 1 register of 16384.
	raw := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x00")
	a17Must(t, "SET", admin.Set(ctx, "{corrupt}", raw, 0).Err())
	h := c.HyperLogLog("corrupt")
	if n, err := h.Count(ctx); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Count of a corrupt HLL = %d, %v; want ErrWrongType", n, err)
	}
	if _, err := h.Add(ctx, "x"); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Add to a corrupt HLL = %v; want ErrWrongType", err)
	}
	if got, _ := admin.Get(ctx, "{corrupt}").Bytes(); !bytes.Equal(got, raw) {
		t.Errorf("the corrupt HLL was changed: %x", got)
	}
	ok := c.HyperLogLog("{corrupt}:ok")
	if _, err := ok.Add(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	if err := ok.MergeWith(ctx, "corrupt"); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("MergeWith a corrupt HLL = %v; want ErrWrongType", err)
	}
}

// ---------------------------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------------------------

// passing: nil and zero handles, nil contexts and closed Clients: no panic, the documented errors.
func TestAttack17NilZeroClosedHandles(t *testing.T) {
	ctx := t.Context()
	c, _, _ := setup(t)
	var nilC *redisson.Client
	calls := func(a *redisson.AtomicLong, b *redisson.BitSet, f *redisson.BloomFilter, h *redisson.HyperLogLog, ctx context.Context) map[string]error {
		m := map[string]error{}
		_, m["a.Load"] = a.Load(ctx)
		_, m["a.Add"] = a.Add(ctx, 1)
		m["a.Store"] = a.Store(ctx, 1)
		_, m["a.CAS"] = a.CompareAndSwap(ctx, 0, 1)
		_, m["a.GetAndDelete"] = a.GetAndDelete(ctx)
		_, m["b.Get"] = b.Get(ctx, 1)
		_, m["b.Set"] = b.Set(ctx, 1)
		m["b.SetRange"] = b.SetRange(ctx, 0, 9)
		m["b.SetBytes"] = b.SetBytes(ctx, []byte{1})
		_, m["b.Bytes"] = b.Bytes(ctx)
		_, m["b.Length"] = b.Length(ctx)
		m["b.And"] = b.And(ctx, "x")
		m["b.Not"] = b.Not(ctx)
		_, m["b.GetField"] = b.GetField(ctx, redisson.Int8, 0)
		_, m["b.AddField"] = b.AddField(ctx, redisson.Int8, 0, 1)
		_, m["b.Delete"] = b.Delete(ctx)
		_, m["f.TryInit"] = f.TryInit(ctx, 10, 0.1)
		_, m["f.Add"] = f.Add(ctx, "x")
		_, m["f.ContainsMany"] = f.ContainsMany(ctx, []string{"x"})
		_, m["f.Count"] = f.Count(ctx)
		_, m["f.Config"] = f.Config(ctx)
		_, m["f.Delete"] = f.Delete(ctx)
		_, m["h.Add"] = h.Add(ctx, "x")
		_, m["h.CountWith"] = h.CountWith(ctx, "y")
		m["h.MergeWith"] = h.MergeWith(ctx, "y")
		_, m["h.Delete"] = h.Delete(ctx)
		return m
	}
	check := func(what string, m map[string]error, want error) {
		t.Helper()
		for k, err := range m {
			if !errors.Is(err, want) {
				t.Errorf("%s: %s = %v; want %v", what, k, err, want)
			}
		}
	}
	check("nil handles", calls(nil, nil, nil, nil, ctx), redisson.ErrInvalidArgument)
	check("zero handles", calls(&redisson.AtomicLong{}, &redisson.BitSet{}, &redisson.BloomFilter{}, &redisson.HyperLogLog{}, ctx), redisson.ErrInvalidArgument)
	check("nil Client", calls(nilC.AtomicLong("x"), nilC.BitSet("x"), nilC.BloomFilter("x"), nilC.HyperLogLog("x"), ctx), redisson.ErrInvalidArgument)
	//nolint:staticcheck // nil context under test
	check("nil context", calls(c.AtomicLong("x"), c.BitSet("x"), c.BloomFilter("x"), c.HyperLogLog("x"), nil), redisson.ErrInvalidArgument)
	check("bad names", calls(c.AtomicLong("}"), c.BitSet(""), c.BloomFilter("}a"), c.HyperLogLog(""), ctx), redisson.ErrInvalidArgument)
	a17Must(t, "Close", c.Close())
	check("closed Client", calls(c.AtomicLong("x"), c.BitSet("x"), c.BloomFilter("x"), c.HyperLogLog("x"), ctx), redisson.ErrClosed)
}

// Was a defect, fixed in review 17: BloomFilter documents "The elements of one script call (8,192 bit indices) are added
// atomically". With proto-max-bulk-len lowered (1mb: 8,388,608 bits) and a filter larger than that
// (TryInit accepts up to 2^32 bits), an AddMany of one element whose first bit index is below the
// limit and a later one above it fails on that SETBIT with some of its bits already set: the failed
// call leaves a partial element behind (and later Adds report it "not new" or Contains may be
// skewed). The script does not check its indices before writing. The error is also reported as
// ErrWrongType ("nothing changed"), as objectErr maps any "not an integer" to it.
func TestAttack17BloomAddPartialOnError(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.WithArgs("--proto-max-bulk-len", "1mb"))
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t))
	f := c.BloomFilter("bigbloom")
	if _, err := f.TryInit(ctx, 1000000, 0.01); err != nil { // 9.6M bits, k = 7
		t.Fatal(err)
	}
	for i := range 200 {
		before, _ := admin.BitCount(ctx, "{bigbloom}", nil).Result()
		_, err := f.Add(ctx, fmt.Sprint("e", i))
		after, _ := admin.BitCount(ctx, "{bigbloom}", nil).Result()
		if err != nil && errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Add(e%d) refused by a server limit = %v: classified as ErrWrongType (objectErr matches \"not an integer\" in \"bit offset is not an integer or out of range\")", i, err)
		}
		if err != nil && after != before {
			t.Fatalf("Add(e%d) failed (%v) but set %d bits: one script call is not atomic", i, err, after-before)
		}
	}
}

// passing: on a Cluster, CountWith, MergeWith and And/Or/Xor with a name in another slot fail with
// ErrInvalidArgument before anything is sent; names sharing the {hash tag} work.
func TestAttack17ClusterCrossSlotNames(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Cluster")
	}
	ctx := t.Context()
	cl := sharedCluster(t)
	admin := cl.Client(t)
	c := newClient(t, cl.Client(t))
	h := c.HyperLogLog("a17-hll")
	if _, err := h.Add(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	other := c.HyperLogLog("a17-other")
	if _, err := other.Add(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CountWith(ctx, "a17-other"); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("CountWith(other slot) = %v; want ErrInvalidArgument", err)
	}
	if err := h.MergeWith(ctx, "a17-other"); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("MergeWith(other slot) = %v; want ErrInvalidArgument", err)
	}
	if n, err := h.Count(ctx); err != nil || n != 1 {
		t.Errorf("Count after the refused merge = %d, %v; want 1", n, err)
	}
	b := c.BitSet("a17-bits")
	if _, err := b.Set(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"And": b.And(ctx, "a17-x"), "Or": b.Or(ctx, "a17-bits", "a17-x"), "Xor": b.Xor(ctx, "a17-x"),
	} {
		if !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("%s(other slot) = %v; want ErrInvalidArgument", what, err)
		}
	}
	if got, err := admin.Get(ctx, "{a17-bits}").Bytes(); err != nil || !bytes.Equal(got, []byte{0x10}) {
		t.Errorf("BitSet after refused BITOPs = %x, %v", got, err)
	}
	// Same tag: works.
	t1, t2 := c.HyperLogLog("{a17t}:1"), c.HyperLogLog("{a17t}:2")
	if _, err := t2.AddMany(ctx, []string{"p", "q"}); err != nil {
		t.Fatal(err)
	}
	if err := t1.MergeWith(ctx, "{a17t}:2"); err != nil {
		t.Fatal(err)
	}
	if n, err := t1.CountWith(ctx, "{a17t}:2"); err != nil || n != 2 {
		t.Errorf("CountWith(same tag) = %d, %v; want 2", n, err)
	}
	// A BloomFilter across its two keys, with a lost-reply-free AddMany of several calls.
	f := c.BloomFilter("a17-bloom")
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

// passing: SCRIPT FLUSH before multi-call pipelines (BloomFilter.AddMany/ContainsMany, plain and
// replica-acknowledged mode) and lone scripts: every call is sent again after the load, once.
func TestAttack17ScriptFlushPipelines(t *testing.T) {
	ctx := t.Context()
	r := redistest.StartReplicated(t)
	admin := r.Master.Client(t)
	for _, mode := range []string{"plain", "acked"} {
		var opts []redisson.Option
		if mode == "acked" {
			opts = append(opts, redisson.WithReplicaAcks(1, 2e9))
		}
		c := newClient(t, r.Master.Client(t), opts...)
		f := c.BloomFilter("flush-" + mode)
		a := c.AtomicLong("flush-long-" + mode)
		a17Must(t, "SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
		if _, err := f.TryInit(ctx, 50000, 0.01); err != nil {
			t.Fatalf("%s: TryInit after SCRIPT FLUSH: %v", mode, err)
		}
		el := make([]string, 6000) // 6000 × 7 indices: 6 script calls
		for i := range el {
			el[i] = fmt.Sprint(mode, i)
		}
		a17Must(t, "SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
		n, err := f.AddMany(ctx, el)
		if err != nil || n < 5990 {
			t.Fatalf("%s: AddMany after SCRIPT FLUSH = %d, %v", mode, n, err)
		}
		a17Must(t, "SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
		got, err := f.ContainsMany(ctx, el)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range got {
			if !ok {
				t.Fatalf("%s: element %d not contained", mode, i)
			}
		}
		a17Must(t, "SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
		if ok, err := a.CompareAndSwap(ctx, 0, 5); err != nil || !ok {
			t.Fatalf("%s: CompareAndSwap after SCRIPT FLUSH = %v, %v", mode, ok, err)
		}
		if ok, err := a.CompareAndSwap(ctx, 0, 6); err != nil || ok {
			t.Fatalf("%s: second CompareAndSwap(0, 6) = %v, %v; want false", mode, ok, err)
		}
	}
}

// passing: in the replica-acknowledged mode with too few replicas (a standalone master, 1 required)
// every mutation is applied once and reports ErrNotReplicated with its real result.
func TestAttack17AckedNotReplicatedResults(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t), redisson.WithReplicaAcks(1, 20e6))
	a, b, f, h := c.AtomicLong("nr"), c.BitSet("nr-bits"), c.BloomFilter("nr-bloom"), c.HyperLogLog("nr-hll")
	nr := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, redisson.ErrNotReplicated) {
			t.Errorf("%s = %v; want ErrNotReplicated", what, err)
		}
	}
	v, err := a.Add(ctx, 7)
	nr("Add", err)
	if v != 7 {
		t.Errorf("Add(7) = %d; want 7", v)
	}
	old, err := a.Swap(ctx, 9)
	nr("Swap", err)
	if old != 7 {
		t.Errorf("Swap = %d; want 7", old)
	}
	ok, err := a.CompareAndSwap(ctx, 9, 10)
	nr("CompareAndSwap", err)
	if !ok {
		t.Error("CompareAndSwap(9, 10) = false; want true")
	}
	if v, err := a.Load(ctx); err != nil || v != 10 {
		t.Errorf("Load = %d, %v; want 10", v, err)
	}
	was, err := b.Set(ctx, 1)
	nr("Set", err)
	if was {
		t.Error("Set(1) reported set before")
	}
	fv, err := b.AddField(ctx, redisson.Uint8, 8, 5)
	nr("AddField", err)
	if fv != 5 {
		t.Errorf("AddField = %d; want 5", fv)
	}
	created, err := f.TryInit(ctx, 100, 0.01)
	nr("TryInit", err)
	if !created {
		t.Error("TryInit = false; want true")
	}
	n, err := f.AddMany(ctx, []string{"a", "b", "c"})
	nr("AddMany", err)
	if n != 3 {
		t.Errorf("AddMany = %d; want 3", n)
	}
	changed, err := h.Add(ctx, "x")
	nr("HyperLogLog.Add", err)
	if !changed {
		t.Error("HyperLogLog.Add = false; want true")
	}
	existed, err := f.Delete(ctx)
	nr("BloomFilter.Delete", err)
	if !existed {
		t.Error("Delete = false; want true")
	}
}
