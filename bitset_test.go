package redisson_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// bitsetConformance is the BitSet's suite (TestConformance): single bits and ranges, counts,
// bytes, the bitwise operations, typed fields, and wrong types and bad input changing nothing.
func bitsetConformance() []conformanceCase {
	return []conformanceCase{
		{"bits, ranges and bytes", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			b, other := newC().BitSet(name), newC().BitSet(name)
			counts := func(what string, card, length, size int64) {
				t.Helper()
				c, err1 := other.Cardinality(ctx)
				l, err2 := other.Length(ctx)
				s, err3 := other.Size(ctx)
				if err1 != nil || err2 != nil || err3 != nil || c != card || l != length || s != size {
					t.Fatalf("%s: cardinality %d, length %d, size %d (%v, %v, %v); want %d, %d, %d",
						what, c, l, s, err1, err2, err3, card, length, size)
				}
			}
			counts("empty", 0, 0, 0)
			if was, err := b.Set(ctx, 3); err != nil || was {
				t.Fatalf("Set(3) = %v, %v; want false", was, err)
			}
			if was, err := b.Set(ctx, 3); err != nil || !was {
				t.Fatalf("Set(3) again = %v, %v; want true", was, err)
			}
			if on, err := other.Get(ctx, 3); err != nil || !on {
				t.Fatalf("Get(3) = %v, %v", on, err)
			}
			if on, err := other.Get(ctx, 1000); err != nil || on {
				t.Fatalf("Get(1000) past the end = %v, %v", on, err)
			}
			if p, err := other.Bytes(ctx); err != nil || !bytes.Equal(p, []byte{0x10}) {
				t.Fatalf("Bytes = %x, %v; want 10 (bit 3 is the byte's fourth from the top)", p, err)
			}
			counts("bit 3", 1, 4, 8)
			if err := b.SetRange(ctx, 5, 30); err != nil {
				t.Fatal(err)
			}
			counts("bits 3 and 5..29", 26, 30, 32)
			if was, err := b.Clear(ctx, 29); err != nil || !was {
				t.Fatalf("Clear(29) = %v, %v; want true", was, err)
			}
			if err := b.ClearRange(ctx, 0, 10); err != nil {
				t.Fatal(err)
			}
			counts("bits 10..28", 19, 29, 32)
			if err := b.ClearRange(ctx, 100, 200); err != nil {
				t.Fatal(err)
			}
			counts("a range cleared past the end does not lengthen", 19, 29, 32)
			if err := b.SetRange(ctx, 9, 9); err != nil {
				t.Fatal(err)
			}
			counts("an empty range", 19, 29, 32)
			if err := b.SetRange(ctx, 7, 8*3000+3); err != nil { // whole bytes in the middle
				t.Fatal(err)
			}
			counts("bits 7..24002", 8*3000+3-7, 8*3000+3, 8*3001)
			if err := b.SetBytes(ctx, []byte{0xff, 0x01}); err != nil {
				t.Fatal(err)
			}
			counts("SetBytes ff 01", 9, 16, 16)
			if err := b.Not(ctx); err != nil {
				t.Fatal(err)
			}
			if p, err := other.Bytes(ctx); err != nil || !bytes.Equal(p, []byte{0x00, 0xfe}) {
				t.Fatalf("Bytes after Not = %x, %v; want 00fe", p, err)
			}
			if ok, err := b.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
			counts("deleted", 0, 0, 0)
			if p, err := other.Bytes(ctx); err != nil || p != nil {
				t.Fatalf("Bytes of nothing = %x, %v; want nil", p, err)
			}
		}},
		{"and, or, xor", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			// Names sharing a {hash tag}: one slot on a Cluster.
			tag := "{" + name + "}:"
			x, y, z := c.BitSet(tag+"x"), c.BitSet(tag+"y"), c.BitSet(tag+"z")
			for _, s := range []struct {
				b *redisson.BitSet
				p []byte
			}{{x, []byte{0b1100_0000}}, {y, []byte{0b1010_0000}}, {z, []byte{0b0000_0001, 0xff}}} {
				if err := s.b.SetBytes(ctx, s.p); err != nil {
					t.Fatal(err)
				}
			}
			step := func(what string, err error, want []byte) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if p, err := x.Bytes(ctx); err != nil || !bytes.Equal(p, want) {
					t.Fatalf("after %s: %08b, %v; want %08b", what, p, err, want)
				}
			}
			step("And(y)", x.And(ctx, tag+"y"), []byte{0b1000_0000})
			step("Or(y, z)", x.Or(ctx, tag+"y", tag+"z"), []byte{0b1010_0001, 0xff})
			step("Xor(y)", x.Xor(ctx, tag+"y"), []byte{0b0000_0001, 0xff})
			step("And(missing)", x.And(ctx, tag+"missing"), []byte{0, 0})
			if p, err := y.Bytes(ctx); err != nil || !bytes.Equal(p, []byte{0b1010_0000}) {
				t.Fatalf("the operand changed: %08b, %v", p, err)
			}
		}},
		{"bit fields", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			b := newC().BitSet(name)
			field := func(what string, got, want int64, err error) {
				t.Helper()
				if err != nil || got != want {
					t.Fatalf("%s = %d, %v; want %d", what, got, err, want)
				}
			}
			v, err := b.SetField(ctx, redisson.Int8, 0, -5)
			field("SetField(i8 @0, -5)", v, 0, err)
			v, err = b.GetField(ctx, redisson.Int8, 0)
			field("GetField(i8 @0)", v, -5, err)
			v, err = b.GetField(ctx, redisson.Uint8, 0)
			field("GetField(u8 @0)", v, 251, err)
			v, err = b.AddField(ctx, redisson.Int8, 0, 130)
			field("AddField(i8 @0, 130) wraps", v, 125, err)
			v, err = b.SetField(ctx, redisson.Unsigned(63), 8, 1<<62)
			field("SetField(u63 @8)", v, 0, err)
			v, err = b.GetField(ctx, redisson.Unsigned(63), 8)
			field("GetField(u63 @8)", v, 1<<62, err)
			v, err = b.AddField(ctx, redisson.Int64, 100, -7)
			field("AddField(i64 @100, -7)", v, -7, err)
			v, err = b.GetField(ctx, redisson.Signed(3), 1000)
			field("GetField past the end", v, 0, err)
		}},
		{"bad input and wrong types", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			b := c.BitSet(name)
			if err := b.SetBytes(ctx, []byte{0xf0}); err != nil {
				t.Fatal(err)
			}
			errOf := func(_ any, err error) error { return err }
			for what, err := range map[string]error{
				"Get(-1)":                   errOf(b.Get(ctx, -1)),
				"Set(-1)":                   errOf(b.Set(ctx, -1)),
				"Clear(2^32)":               errOf(b.Clear(ctx, redisson.MaxBit+1)),
				"SetRange(-1, 5)":           b.SetRange(ctx, -1, 5),
				"SetRange(0, 2^32+1)":       b.SetRange(ctx, 0, redisson.MaxBit+2),
				"ClearRange(-5, -1)":        b.ClearRange(ctx, -5, -1),
				"GetField(zero BitField)":   errOf(b.GetField(ctx, redisson.BitField{}, 0)),
				"GetField(u64)":             errOf(b.GetField(ctx, redisson.Unsigned(64), 0)),
				"GetField(i65)":             errOf(b.GetField(ctx, redisson.Signed(65), 0)),
				"SetField(i8, 200)":         errOf(b.SetField(ctx, redisson.Int8, 0, 200)),
				"SetField(u8, -1)":          errOf(b.SetField(ctx, redisson.Uint8, 0, -1)),
				"SetField(u8 @-1)":          errOf(b.SetField(ctx, redisson.Uint8, -1, 1)),
				"AddField(i32 @2^32-31)":    errOf(b.AddField(ctx, redisson.Int32, redisson.MaxBit-30, 1)),
				"And(empty name)":           b.And(ctx, ""),
				"Or(name starting with })":  b.Or(ctx, "}x"),
				"Set on an empty name":      errOf(c.BitSet("").Set(ctx, 1)),
				"Cardinality on nil handle": errOf((*redisson.BitSet)(nil).Cardinality(ctx)),
			} {
				wantErr(t, what, err, redisson.ErrInvalidArgument)
			}
			if p, err := b.Bytes(ctx); err != nil || !bytes.Equal(p, []byte{0xf0}) {
				t.Fatalf("after bad input: %x, %v; want f0 (nothing changed)", p, err)
			}
			_, hash, stillThere := foreignNames(t, ctx, c, name)
			h := c.BitSet(hash)
			for what, err := range map[string]error{
				"Get":         errOf(h.Get(ctx, 1)),
				"Set":         errOf(h.Set(ctx, 1)),
				"Clear":       errOf(h.Clear(ctx, 1)),
				"SetRange":    h.SetRange(ctx, 0, 100),
				"ClearRange":  h.ClearRange(ctx, 0, 100),
				"Cardinality": errOf(h.Cardinality(ctx)),
				"Length":      errOf(h.Length(ctx)),
				"Size":        errOf(h.Size(ctx)),
				"Bytes":       errOf(h.Bytes(ctx)),
				"SetBytes":    h.SetBytes(ctx, []byte{1}),
				"Not":         h.Not(ctx),
				"GetField":    errOf(h.GetField(ctx, redisson.Int8, 0)),
				"SetField":    errOf(h.SetField(ctx, redisson.Int8, 0, 1)),
				"AddField":    errOf(h.AddField(ctx, redisson.Int8, 0, 1)),
			} {
				wantErr(t, what+" on a hash", err, redisson.ErrWrongType)
			}
			stillThere()
		}},
	}
}

// SetRange and ClearRange refuse a reversed range (from > to) with ErrInvalidArgument and
// change nothing, as Java's BitSet and Go's slicing do; an empty range (from == to) is a no-op.
func TestBitSetReversedRange(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	b := c.BitSet("reversed")
	if err := b.SetBytes(ctx, []byte{0xf0, 0x0f}); err != nil {
		t.Fatal(err)
	}
	absent := c.BitSet("reversed-absent")
	for what, err := range map[string]error{
		"SetRange(10, 5)":               b.SetRange(ctx, 10, 5),
		"ClearRange(10, 5)":             b.ClearRange(ctx, 10, 5),
		"ClearRange(8, 7)":              b.ClearRange(ctx, 8, 7),
		"SetRange(MaxBit+1, 0)":         b.SetRange(ctx, redisson.MaxBit+1, 0),
		"SetRange(9, 3) on an absent":   absent.SetRange(ctx, 9, 3),
		"ClearRange(9, 3) on an absent": absent.ClearRange(ctx, 9, 3),
	} {
		wantErr(t, what, err, redisson.ErrInvalidArgument)
	}
	for what, err := range map[string]error{
		"SetRange(5, 5)":                b.SetRange(ctx, 5, 5),
		"ClearRange(0, 0)":              b.ClearRange(ctx, 0, 0),
		"SetRange(3, 3) on an absent":   absent.SetRange(ctx, 3, 3),
		"ClearRange(3, 3) on an absent": absent.ClearRange(ctx, 3, 3),
	} {
		if err != nil {
			t.Errorf("%s (empty) = %v; want nil", what, err)
		}
	}
	if p, err := b.Bytes(ctx); err != nil || !bytes.Equal(p, []byte{0xf0, 0x0f}) {
		t.Errorf("after reversed and empty ranges: %x, %v; want f00f (nothing changed)", p, err)
	}
	if n, err := admin.Exists(ctx, "reversed-absent").Result(); err != nil || n != 0 {
		t.Errorf("a reversed range on an absent BitSet: EXISTS = %d, %v; want 0 (nothing made)", n, err)
	}
}

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

// SetRange and ClearRange at byte boundaries agree with a model (a reversed range is refused with
// ErrInvalidArgument and changes nothing); ClearRange never lengthens the string nor creates a key;
// Length is right on strings ending in many zero bytes (across the script's 4 KiB window).
func TestBitSetRangeBoundaries(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	b := c.BitSet("rb")
	edges := []int64{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 8 * 4096, 8*4096 + 3}
	start := bytes.Repeat([]byte{0xA5}, 3)
	for _, from := range edges {
		for _, to := range edges {
			for _, set := range []bool{true, false} {
				mustDo(t, "SET", admin.Set(ctx, "rb", start, 0).Err())
				var err error
				if set {
					err = b.SetRange(ctx, from, to)
				} else {
					err = b.ClearRange(ctx, from, to)
				}
				want := bytes.Clone(start)
				if from > to { // a reversed range is refused, nothing changed
					if !errors.Is(err, redisson.ErrInvalidArgument) {
						t.Fatalf("range(%d, %d, %v) = %v; want ErrInvalidArgument", from, to, set, err)
					}
				} else {
					mustDo(t, fmt.Sprintf("range(%d, %d, %v)", from, to, set), err)
					want = applyBitRange(want, from, to, set)
				}
				got, err := admin.Get(ctx, "rb").Bytes()
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("range [%d, %d) set=%v on a5a5a5: %x, %v; want %x", from, to, set, got, err, want)
				}
			}
		}
	}
	// ClearRange far past the end, and on an absent key: no lengthening, no key made.
	mustDo(t, "ClearRange", b.ClearRange(ctx, 0, redisson.MaxBit+1))
	if n, err := admin.StrLen(ctx, "rb").Result(); err != nil || n != 3 {
		t.Fatalf("STRLEN after ClearRange(0, MaxBit+1) = %d, %v; want 3", n, err)
	}
	mustDo(t, "ClearRange", c.BitSet("rb-absent").ClearRange(ctx, 5, 1<<20))
	if n, _ := admin.Exists(ctx, "rb-absent").Result(); n != 0 {
		t.Fatal("ClearRange on an absent BitSet created it")
	}
	for _, tail := range []int{0, 1, 4095, 4096, 4097, 20000} {
		s := append([]byte{0x00, 0x01}, make([]byte, tail)...)
		mustDo(t, "SET", admin.Set(ctx, "rb", s, 0).Err())
		if n, err := b.Length(ctx); err != nil || n != 16 {
			t.Fatalf("Length of 0001 + %d zero bytes = %d, %v; want 16", tail, n, err)
		}
	}
	mustDo(t, "SET", admin.Set(ctx, "rb", make([]byte, 9000), 0).Err())
	if n, err := b.Length(ctx); err != nil || n != 0 {
		t.Fatalf("Length of 9000 zero bytes = %d, %v; want 0", n, err)
	}
}

// The empty range [MaxBit+1, MaxBit+1) is valid input: SetRange and ClearRange accept from and to
// in [0, MaxBit+1] and change nothing when from >= to, so both return nil.
func TestBitSetEmptyRangeAtEnd(t *testing.T) {
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

// SetBytes(nil) leaves an empty set ("an empty p leaves an empty set"): Bytes then returns nil, and
// no empty string stays in Redis as a key (one would, for example, make a BloomFilter of that name
// refuse TryInit).
func TestBitSetSetBytesEmptyLeavesNoKey(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	b := c.BitSet("empty")
	mustDo(t, "SetBytes(abc)", b.SetBytes(ctx, []byte("abc")))
	mustDo(t, "SetBytes(nil)", b.SetBytes(ctx, nil))
	got, err := b.Bytes(ctx)
	if err != nil || got != nil {
		t.Errorf("Bytes after SetBytes(nil) = %#v, %v; want nil (the empty set)", got, err)
	}
	if n, _ := admin.Exists(ctx, "empty").Result(); n != 0 {
		t.Errorf("SetBytes(nil) left an empty string key in Redis (EXISTS = %d)", n)
	}
}

// BitField bounds: bad field types are ErrInvalidArgument; reads at the very end of the BitSet
// return 0 without allocating, and offsets past it are refused; values at the edges of each type
// are accepted or refused exactly; AddField wraps around for i64, u63, u8 and i8.
func TestBitSetFieldBounds(t *testing.T) {
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
	if n, _ := admin.Exists(ctx, "bf").Result(); n != 0 {
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
	mustDo(t, "SetField", err)
	if v, err := b.AddField(ctx, redisson.Int64, 100, 1); err != nil || v != math.MinInt64 {
		t.Errorf("AddField(i64, MaxInt64 + 1) = %d, %v; want MinInt64", v, err)
	}
	_, err = b.SetField(ctx, redisson.Unsigned(63), 200, 0)
	mustDo(t, "SetField", err)
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

// A SetRange that a server limit refuses is still one atomic step: with proto-max-bulk-len lowered
// to 1mb (a legal setting), SetRange(1, 2^24) fails and leaves nothing behind. A script is not
// rolled back on error, so the limit must be checked before any bit is written ("ErrWrongType
// (nothing changed...)" and "one atomic step in Redis").
func TestBitSetRangeOverProtoLimitWritesNothing(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.WithArgs("--proto-max-bulk-len", "1mb"))
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t))
	b := c.BitSet("partial")
	err := b.SetRange(ctx, 1, 1<<24) // 2 MiB of bits: past the 1 MiB limit
	if err == nil {
		t.Fatal("SetRange past proto-max-bulk-len = nil; want an error")
	}
	if n, _ := admin.Exists(ctx, "partial").Result(); n != 0 {
		v, _ := admin.GetRange(ctx, "partial", 0, 3).Bytes()
		t.Errorf("SetRange failed (%v) but left the key behind, starting %x: not one atomic step", err, v)
	}
}

// SetRange and ClearRange against a Go model over many random ranges: byte-boundary ends, from > to
// (refused with ErrInvalidArgument, nothing changed), ranges inside one byte, ranges over 1 MiB;
// ClearRange never lengthens; Length and Cardinality agree with the model; SetBytes of nothing
// deletes the key; Bytes is nil for the empty string.
func TestBitSetRangesModel(t *testing.T) {
	long(t)
	ctx := t.Context()
	c, admin, _ := setup(t)
	b := c.BitSet("m")
	rng := rand.New(rand.NewPCG(18, 18))
	pick := func(limit int64) int64 {
		switch rng.IntN(4) {
		case 0:
			return rng.Int64N(limit/8+1) * 8
		case 1:
			return rng.Int64N(limit/8+1)*8 + rng.Int64N(8)
		case 2:
			return rng.Int64N(64)
		}
		return rng.Int64N(limit + 1)
	}
	var model []byte
	mustDo(t, "SetBytes", b.SetBytes(ctx, nil))
	for i := range 600 {
		limit := int64(2000)
		if i%100 == 99 {
			limit = 8*(3<<20)/2 + 77 // over 1 MiB
		}
		from, to := pick(limit), pick(limit)
		if rng.IntN(10) == 0 {
			to = from + rng.Int64N(8) // within (or across) one byte
		}
		set := rng.IntN(2) == 0
		var err error
		if set {
			err = b.SetRange(ctx, from, to)
		} else {
			err = b.ClearRange(ctx, from, to)
		}
		if from > to { // a reversed range is refused, nothing changed
			if !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Fatalf("range #%d [%d, %d) set=%v = %v; want ErrInvalidArgument", i, from, to, set, err)
			}
		} else {
			mustDo(t, fmt.Sprintf("range #%d [%d, %d) set=%v", i, from, to, set), err)
			model = applyBitRange(model, from, to, set)
		}
		got, err := admin.Get(ctx, "m").Bytes()
		if errors.Is(err, redis.Nil) {
			got, err = nil, nil
		}
		if err != nil || !bytes.Equal(got, model) {
			t.Fatalf("after range #%d [%d, %d) set=%v: len %d vs model %d (%v)", i, from, to, set, len(got), len(model), err)
		}
		if i%50 == 0 {
			// Length and Cardinality agree with the model too.
			var card, length int64
			for j, by := range model {
				for k := range 8 {
					if by&(0x80>>k) != 0 {
						card++
						length = int64(j*8+k) + 1
					}
				}
			}
			if n, err := b.Cardinality(ctx); err != nil || n != card {
				t.Fatalf("Cardinality = %d, %v; want %d", n, err, card)
			}
			if n, err := b.Length(ctx); err != nil || n != length {
				t.Fatalf("Length = %d, %v; want %d", n, err, length)
			}
		}
		if len(model) > 1<<20 { // keep the run short: start again from a small random string
			model = make([]byte, rng.IntN(300))
			for j := range model {
				model[j] = byte(rng.IntN(256))
			}
			mustDo(t, "SetBytes", b.SetBytes(ctx, model))
			if len(model) == 0 {
				model = nil
			}
		}
	}
	for _, p := range [][]byte{nil, {}} {
		mustDo(t, "SetBytes", b.SetBytes(ctx, []byte("abc")))
		mustDo(t, "SetBytes(empty)", b.SetBytes(ctx, p))
		if n, _ := admin.Exists(ctx, "m").Result(); n != 0 {
			t.Errorf("SetBytes(%#v) left the key", p)
		}
		if v, err := b.Bytes(ctx); err != nil || v != nil {
			t.Errorf("Bytes after SetBytes(%#v) = %#v, %v; want nil", p, v, err)
		}
	}
	mustDo(t, "SET empty", admin.Set(ctx, "m", "", 0).Err())
	if v, err := b.Bytes(ctx); err != nil || v != nil {
		t.Errorf("Bytes of an empty string = %#v, %v; want nil", v, err)
	}
	mustDo(t, "ClearRange", b.ClearRange(ctx, 0, 100))
	if n, _ := admin.StrLen(ctx, "m").Result(); n != 0 {
		t.Errorf("ClearRange lengthened an empty string to %d", n)
	}
}

// With --proto-max-bulk-len 1mb, a SetRange past it fails before any write (end aligned or not,
// from inside or past the string, ranges of several chunks), and ClearRange over everything still works.
func TestBitSetRangeProtoLimit(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.WithArgs("--proto-max-bulk-len", "1mb"))
	admin := srv.Client(t)
	c := newClient(t, admin)
	b := c.BitSet("lim")
	const mib = int64(1 << 20)
	start := bytes.Repeat([]byte{0x5A}, 100)
	cases := [][2]int64{
		{0, 8*mib + 8}, {3, 8*mib + 8}, {3, 8*mib + 1}, {8 * 50, 8*3*mib + 5}, {8*mib - 3, 8*mib + 2},
		{8*mib + 1, 8*mib + 2}, {0, redisson.MaxBit + 1}, {5, 16*mib + 16},
	}
	for _, r := range cases {
		mustDo(t, "SET", admin.Set(ctx, "lim", start, 0).Err())
		err := b.SetRange(ctx, r[0], r[1])
		got, _ := admin.Get(ctx, "lim").Bytes()
		if err == nil {
			t.Errorf("SetRange[%d, %d) past proto-max-bulk-len succeeded (len %d)", r[0], r[1], len(got))
			continue
		}
		if errors.Is(err, redisson.ErrWrongType) || errors.Is(err, redisson.ErrOutOfRange) {
			t.Errorf("SetRange[%d, %d): %v matches a sentinel it should not", r[0], r[1], err)
		}
		if !bytes.Equal(got, start) {
			t.Errorf("SetRange[%d, %d) failed (%v) but changed the string (len %d)", r[0], r[1], err, len(got))
		}
	}
	// Exactly at the limit: allowed.
	mustDo(t, "SET", admin.Set(ctx, "lim", make([]byte, 100), 0).Err())
	mustDo(t, "SetRange to the limit", b.SetRange(ctx, 7, 8*mib))
	if n, _ := b.Cardinality(ctx); n != 8*mib-7 {
		t.Errorf("Cardinality after SetRange(7, 8 MiB) = %d", n)
	}
	mustDo(t, "ClearRange all", b.ClearRange(ctx, 0, redisson.MaxBit+1))
	if n, _ := b.Cardinality(ctx); n != 0 {
		t.Errorf("Cardinality after ClearRange = %d", n)
	}
}
