package redisson_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// bloomConformance is the BloomFilter's suite (TestConformance): init only if absent, add and
// contain one or many across Clients, count, delete and re-init, and wrong types and bad input
// changing nothing.
func bloomConformance() []conformanceCase {
	return []conformanceCase{
		{"init, add, contains, count, delete", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			f, g := newC().BloomFilter(name), newC().BloomFilter(name)
			if _, err := f.Add(ctx, "a"); !errors.Is(err, redisson.ErrNotInitialized) {
				t.Fatalf("Add before TryInit = %v; want ErrNotInitialized", err)
			}
			if ok, err := f.TryInit(ctx, 1000, 0.01); err != nil || !ok {
				t.Fatalf("TryInit = %v, %v", ok, err)
			}
			if ok, err := g.TryInit(ctx, 1000, 0.01); err != nil || ok {
				t.Fatalf("TryInit with the same parameters = %v, %v; want false", ok, err)
			}
			if _, err := g.TryInit(ctx, 2000, 0.01); !errors.Is(err, redisson.ErrConfigMismatch) {
				t.Fatalf("TryInit with other parameters = %v; want ErrConfigMismatch", err)
			}
			cfg, err := g.Config(ctx)
			bits, hashes, _ := redisson.BloomSize(1000, 0.01)
			if err != nil || cfg != (redisson.BloomConfig{Insertions: 1000, FalsePositiveRate: 0.01, Bits: bits, Hashes: hashes}) || bits != 9586 || hashes != 7 {
				t.Fatalf("Config = %+v, %v; BloomSize = %d, %d", cfg, err, bits, hashes)
			}
			if isNew, err := f.Add(ctx, "a"); err != nil || !isNew {
				t.Fatalf("Add(a) = %v, %v; want new", isNew, err)
			}
			if isNew, err := g.Add(ctx, "a"); err != nil || isNew {
				t.Fatalf("Add(a) by another Client = %v, %v; want not new", isNew, err)
			}
			var batch []string
			for i := range 500 {
				batch = append(batch, fmt.Sprint("e", i))
			}
			if n, err := g.AddMany(ctx, batch); err != nil || n < 490 {
				t.Fatalf("AddMany(500 new) = %d, %v", n, err)
			}
			if n, err := g.AddMany(ctx, batch[:10]); err != nil || n != 0 {
				t.Fatalf("AddMany(10 old) = %d, %v; want 0", n, err)
			}
			if n, err := g.AddMany(ctx, nil); err != nil || n != 0 {
				t.Fatalf("AddMany(nothing) = %d, %v", n, err)
			}
			if ok, err := f.Contains(ctx, "e7"); err != nil || !ok {
				t.Fatalf("Contains(e7) = %v, %v", ok, err)
			}
			got, err := f.ContainsMany(ctx, append(batch[:3:3], "absent-1", "absent-2"))
			if err != nil || len(got) != 5 || !got[0] || !got[1] || !got[2] {
				t.Fatalf("ContainsMany = %v, %v", got, err)
			}
			if n, err := g.Count(ctx); err != nil || n < 480 || n > 520 {
				t.Fatalf("Count = %d, %v; want about 501", n, err)
			}
			// Deleted and made again with other parameters: Clients that knew the old ones follow.
			if ok, err := g.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
			if _, err := f.Contains(ctx, "a"); !errors.Is(err, redisson.ErrNotInitialized) {
				t.Fatalf("Contains after Delete = %v; want ErrNotInitialized", err)
			}
			if ok, err := g.TryInit(ctx, 50000, 0.001); err != nil || !ok {
				t.Fatalf("TryInit after Delete = %v, %v", ok, err)
			}
			if ok, err := f.Contains(ctx, "a"); err != nil || ok {
				t.Fatalf("Contains(a) in the new filter = %v, %v; want false", ok, err)
			}
			if isNew, err := f.Add(ctx, "a"); err != nil || !isNew {
				t.Fatalf("Add(a) to the new filter = %v, %v", isNew, err)
			}
			if ok, err := g.Contains(ctx, "a"); err != nil || !ok {
				t.Fatalf("Contains(a) by the other Client = %v, %v", ok, err)
			}
		}},
		{"large batches", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			f := newC().BloomFilter(name)
			if _, err := f.TryInit(ctx, 20000, 0.01); err != nil {
				t.Fatal(err)
			}
			batch := make([]string, 5000) // several script calls in one pipeline
			for i := range batch {
				batch[i] = fmt.Sprint("big-", i)
			}
			if n, err := f.AddMany(ctx, batch); err != nil || n < 4900 {
				t.Fatalf("AddMany(5000) = %d, %v", n, err)
			}
			got, err := newC().BloomFilter(name).ContainsMany(ctx, batch)
			if err != nil || len(got) != len(batch) {
				t.Fatalf("ContainsMany = %d answers, %v", len(got), err)
			}
			for i, ok := range got {
				if !ok {
					t.Fatalf("element %d added but not contained", i)
				}
			}
		}},
		{"bad input and wrong types", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			f := c.BloomFilter(name)
			errOf := func(_ any, err error) error { return err }
			for what, err := range map[string]error{
				"TryInit(0, 0.01)":        errOf(f.TryInit(ctx, 0, 0.01)),
				"TryInit(-5, 0.01)":       errOf(f.TryInit(ctx, -5, 0.01)),
				"TryInit(100, 0)":         errOf(f.TryInit(ctx, 100, 0)),
				"TryInit(100, 1)":         errOf(f.TryInit(ctx, 100, 1)),
				"TryInit(100, NaN)":       errOf(f.TryInit(ctx, 100, math.NaN())),
				"TryInit(100, -0.1)":      errOf(f.TryInit(ctx, 100, -0.1)),
				"TryInit(1e10, 1e-3)":     errOf(f.TryInit(ctx, 1e10, 1e-3)), // more than 2^32 bits
				"TryInit(10, 1e-40)":      errOf(f.TryInit(ctx, 10, 1e-40)),  // more than 100 hashes
				"Add on an empty name":    errOf(c.BloomFilter("").Add(ctx, "a")),
				"Contains on nil handle":  errOf((*redisson.BloomFilter)(nil).Contains(ctx, "a")),
				"Delete on nil handle":    errOf((*redisson.BloomFilter)(nil).Delete(ctx)),
				"TryInit on }name":        errOf(c.BloomFilter("}x").TryInit(ctx, 10, 0.1)),
				"ContainsMany on }name":   errOf(c.BloomFilter("}x").ContainsMany(ctx, []string{"a"})),
				"Count on an empty name":  errOf(c.BloomFilter("").Count(ctx)),
				"Config on an empty name": errOf(c.BloomFilter("").Config(ctx)),
			} {
				wantErr(t, what, err, redisson.ErrInvalidArgument)
			}
			if _, err := f.Config(ctx); !errors.Is(err, redisson.ErrNotInitialized) {
				t.Fatalf("Config after bad input = %v; want ErrNotInitialized (nothing made)", err)
			}
			for what, err := range map[string]error{
				"Add":          errOf(f.Add(ctx, "a")),
				"AddMany":      errOf(f.AddMany(ctx, []string{"a"})),
				"Contains":     errOf(f.Contains(ctx, "a")),
				"ContainsMany": errOf(f.ContainsMany(ctx, []string{"a"})),
				"Count":        errOf(f.Count(ctx)),
			} {
				wantErr(t, what+" before TryInit", err, redisson.ErrNotInitialized)
			}
			str, hash, stillThere := foreignNames(t, ctx, c, name)
			for _, n := range []string{str, hash} {
				if _, err := c.BloomFilter(n).TryInit(ctx, 100, 0.01); !errors.Is(err, redisson.ErrWrongType) {
					t.Errorf("TryInit on %s = %v; want ErrWrongType", n, err)
				}
				o := c.BloomFilter(n)
				for what, err := range map[string]error{
					"Config":       errOf(o.Config(ctx)),
					"Add":          errOf(o.Add(ctx, "a")),
					"ContainsMany": errOf(o.ContainsMany(ctx, []string{"a", "b"})),
					"Count":        errOf(o.Count(ctx)),
				} {
					wantErr(t, what+" of "+n, err, redisson.ErrWrongType)
				}
			}
			stillThere()
			// The other way round: a filter's name refuses a lock.
			if _, err := f.TryInit(ctx, 100, 0.01); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Lock(name).TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("TryLock on a BloomFilter's name = %v; want ErrWrongType", err)
			}
		}},
	}
}

// Issue 10: sized for 200,000 insertions at 1%, the filter has no false negatives among the
// 200,000 elements added and a false-positive rate between 0.5% and 1.5% over 200,000 others. The
// test prints the rate.
func TestBloomFilterFalsePositiveRate(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	f := newClient(t, srv.Client(t)).BloomFilter("bloom-fpr")
	if _, err := f.TryInit(ctx, 200000, 0.01); err != nil {
		t.Fatal(err)
	}
	const n, batch = 200000, 1000
	elements := func(prefix string, from int) []string {
		out := make([]string, batch)
		for i := range out {
			out[i] = fmt.Sprintf("%s:%d", prefix, from+i)
		}
		return out
	}
	for i := 0; i < n; i += batch {
		if _, err := f.AddMany(ctx, elements("in", i)); err != nil {
			t.Fatal(err)
		}
	}
	var falseNeg, falsePos int
	for i := 0; i < n; i += batch {
		in, err := f.ContainsMany(ctx, elements("in", i))
		if err != nil {
			t.Fatal(err)
		}
		out, err := f.ContainsMany(ctx, elements("out", i))
		if err != nil {
			t.Fatal(err)
		}
		for j := range in {
			if !in[j] {
				falseNeg++
			}
			if out[j] {
				falsePos++
			}
		}
	}
	rate := float64(falsePos) / n
	count, err := f.Count(ctx)
	t.Logf("200,000 insertions at a 1%% target: %d false negatives, false-positive rate %.3f%% (%d of %d); Count %d, %v",
		falseNeg, 100*rate, falsePos, n, count, err)
	if falseNeg != 0 || rate < 0.005 || rate > 0.015 {
		t.Fatalf("%d false negatives, false-positive rate %.3f%%; want 0 and 0.5%%..1.5%%", falseNeg, 100*rate)
	}
}
