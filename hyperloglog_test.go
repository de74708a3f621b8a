package redisson_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/goredisson/redisson"
)

// hllConformance is the HyperLogLog's suite (TestConformance): add, count, count with and merge
// with others, and wrong types and bad input changing nothing.
func hllConformance() []conformanceCase {
	return []conformanceCase{
		{"add, count, merge", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			tag := "{" + name + "}:"
			x, y := c.HyperLogLog(tag+"x"), newC().HyperLogLog(tag+"y")
			if n, err := x.Count(ctx); err != nil || n != 0 {
				t.Fatalf("Count of nothing = %d, %v", n, err)
			}
			if changed, err := x.Add(ctx, "a"); err != nil || !changed {
				t.Fatalf("Add(a) = %v, %v; want changed", changed, err)
			}
			if changed, err := x.Add(ctx, "a"); err != nil || changed {
				t.Fatalf("Add(a) again = %v, %v; want unchanged", changed, err)
			}
			if changed, err := x.AddMany(ctx, nil); err != nil || changed {
				t.Fatalf("AddMany(nothing) = %v, %v", changed, err)
			}
			var xs, ys []string
			for i := range 1000 {
				xs = append(xs, fmt.Sprint("e", i))
				ys = append(ys, fmt.Sprint("e", i+500)) // 500 shared
			}
			if _, err := x.AddMany(ctx, xs); err != nil {
				t.Fatal(err)
			}
			if _, err := y.AddMany(ctx, ys); err != nil {
				t.Fatal(err)
			}
			near := func(what string, got, want int64, err error) {
				t.Helper()
				if err != nil || got < want*97/100 || got > want*103/100 {
					t.Fatalf("%s = %d, %v; want %d ± 3%%", what, got, err, want)
				}
			}
			n, err := x.Count(ctx)
			near("Count", n, 1001, err)
			n, err = x.CountWith(ctx, tag+"y")
			near("CountWith(y)", n, 1501, err)
			n, err = x.Count(ctx)
			near("Count after CountWith (unchanged)", n, 1001, err)
			if err := x.MergeWith(ctx, tag+"y", tag+"missing"); err != nil {
				t.Fatal(err)
			}
			n, err = x.Count(ctx)
			near("Count after MergeWith(y)", n, 1501, err)
			n, err = y.Count(ctx)
			near("Count of y after the merge (unchanged)", n, 1000, err)
			if ok, err := x.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
			if n, err := x.Count(ctx); err != nil || n != 0 {
				t.Fatalf("Count after Delete = %d, %v", n, err)
			}
		}},
		{"bad input and wrong types", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			h := c.HyperLogLog(name)
			if _, err := h.Add(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			errOf := func(_ any, err error) error { return err }
			for what, err := range map[string]error{
				"Add on an empty name":    errOf(c.HyperLogLog("").Add(ctx, "a")),
				"Count on a nil handle":   errOf((*redisson.HyperLogLog)(nil).Count(ctx)),
				"CountWith(empty name)":   errOf(h.CountWith(ctx, "")),
				"MergeWith(}bad)":         h.MergeWith(ctx, "}bad"),
				"AddMany on a nil handle": errOf((*redisson.HyperLogLog)(nil).AddMany(ctx, []string{"a"})),
			} {
				wantErr(t, what, err, redisson.ErrInvalidArgument)
			}
			if n, err := h.Count(ctx); err != nil || n != 1 {
				t.Fatalf("Count after bad input = %d, %v; want 1", n, err)
			}
			str, hash, stillThere := foreignNames(t, ctx, c, name)
			for _, n := range []string{str, hash} {
				o := c.HyperLogLog(n)
				for what, err := range map[string]error{
					"Add":     errOf(o.Add(ctx, "a")),
					"AddMany": errOf(o.AddMany(ctx, []string{"a", "b"})),
					"Count":   errOf(o.Count(ctx)),
					"Merge":   o.MergeWith(ctx),
				} {
					wantErr(t, what+" on "+n, err, redisson.ErrWrongType)
				}
			}
			stillThere()
		}},
	}
}

// A string with the HyperLogLog header but a corrupt sparse body (Redis answers "INVALIDOBJ
// Corrupted HLL object detected") fails Count, Add and MergeWith with ErrWrongType, as any string
// not in the format does, and is left unchanged.
func TestHyperLogLogCorruptIsWrongType(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	// "HYLL", encoding 1 (sparse), 3 unused bytes, 8 bytes of cached cardinality with the
	// "invalid" bit set (so PFCOUNT recomputes), then one ZERO opcode covering 1 register of 16384.
	raw := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x00")
	mustDo(t, "SET", admin.Set(ctx, "corrupt", raw, 0).Err())
	h := c.HyperLogLog("corrupt")
	if n, err := h.Count(ctx); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Count of a corrupt HLL = %d, %v; want ErrWrongType", n, err)
	}
	if _, err := h.Add(ctx, "x"); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Add to a corrupt HLL = %v; want ErrWrongType", err)
	}
	if got, _ := admin.Get(ctx, "corrupt").Bytes(); !bytes.Equal(got, raw) {
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
