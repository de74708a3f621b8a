package redisson_test

import (
	"bytes"
	"testing"

	"github.com/goredisson/redisson"
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

// Issue 18: SetRange and ClearRange refuse a reversed range (from > to) with ErrInvalidArgument and
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
	if n, err := admin.Exists(ctx, "{reversed-absent}").Result(); err != nil || n != 0 {
		t.Errorf("a reversed range on an absent BitSet: EXISTS = %d, %v; want 0 (nothing made)", n, err)
	}
}
