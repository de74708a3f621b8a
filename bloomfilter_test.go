package redisson_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// Issue 18: goroutines of one Client add and look up while another goroutine of the same Client
// deletes the filter and makes it again (with alternating parameters), and another makes the
// Client remember 4,096 other filters over and over (resetting its cache). No call panics (a call
// computes with the parameters it read, even if another call made the Client forget them
// meanwhile: before the fix it read them again from the Client's cache and divided by zero), and
// every error is one the methods document for a filter deleted or made again during the call.
func TestBloomFilterConcurrentDeleteAndInit(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	f := c.BloomFilter("rotating")
	sizes := []struct {
		n int64
		p float64
	}{{1000, 0.01}, {5000, 0.001}}
	if _, err := f.TryInit(ctx, sizes[0].n, sizes[0].p); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var calls, failed, panics atomic.Int64
	call := func(what string, fn func() error) {
		calls.Add(1)
		defer func() {
			if r := recover(); r != nil {
				if panics.Add(1) == 1 {
					t.Errorf("%s panicked: %v", what, r)
				}
			}
		}()
		err := fn()
		if err == nil {
			return
		}
		failed.Add(1)
		if !errors.Is(err, redisson.ErrNotInitialized) && !errors.Is(err, redisson.ErrConfigMismatch) {
			t.Errorf("%s while the filter is deleted and made again = %v; want nil, ErrNotInitialized or ErrConfigMismatch", what, err)
		}
	}
	for w := range 6 {
		spawn(&wg, func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				e := fmt.Sprint("w", w, "-", i)
				switch i % 4 {
				case 0:
					call("Add", func() error { _, err := f.Add(ctx, e); return err })
				case 1:
					call("Contains", func() error { _, err := f.Contains(ctx, e); return err })
				case 2:
					call("AddMany", func() error { _, err := f.AddMany(ctx, []string{e, e + "b", e + "c"}); return err })
				case 3:
					call("ContainsMany", func() error { _, err := f.ContainsMany(ctx, []string{e, e + "b"}); return err })
				}
			}
		})
	}
	// The Client also uses many other filters: its cache of parameters is reset over and over.
	spawn(&wg, func() {
		for {
			select {
			case <-done:
				return
			default:
				redisson.FillBloomCache(c)
			}
		}
	})
	// A bounded run: as many rotations as fit in 2 seconds, at most 2,000.
	rotations, deadline := 0, time.Now().Add(2*time.Second)
	for ; rotations < 2000 && time.Now().Before(deadline); rotations++ {
		if _, err := f.Delete(ctx); err != nil {
			t.Errorf("Delete: %v", err)
		}
		s := sizes[(rotations+1)%len(sizes)]
		if ok, err := f.TryInit(ctx, s.n, s.p); err != nil || !ok {
			t.Errorf("TryInit after Delete = %v, %v; want true", ok, err)
		}
	}
	close(done)
	wg.Wait()
	t.Logf("%d rotations, %d calls: %d failed with ErrNotInitialized or ErrConfigMismatch, %d panicked",
		rotations, calls.Load(), failed.Load(), panics.Load())
}

// Issue 18: the parameters a call read are forgotten by the Client before the call uses them,
// forced deterministically (OnBloomLoad): the Client's cache is reset (it remembers at most 4,096
// filters), or the filter is deleted (Delete forgets them). Each method either works with the
// parameters it read or reports the filter gone (ErrNotInitialized); none panics. Before the fix
// the call read the cache again, found nothing and divided by zero.
func TestBloomFilterParamsForgottenAfterRead(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	const name = "forgotten"
	maker := newClient(t, rdb).BloomFilter(name) // another Client: the one under test reads the configuration
	ops := []struct {
		name      string
		call      func(*redisson.BloomFilter) error
		ifDeleted error // what the call returns when the filter was deleted under it
	}{
		{"Add", func(f *redisson.BloomFilter) error { _, err := f.Add(ctx, "a"); return err }, redisson.ErrNotInitialized},
		{"AddMany", func(f *redisson.BloomFilter) error { _, err := f.AddMany(ctx, []string{"a", "b"}); return err }, redisson.ErrNotInitialized},
		{"Contains", func(f *redisson.BloomFilter) error { _, err := f.Contains(ctx, "a"); return err }, redisson.ErrNotInitialized},
		{"ContainsMany", func(f *redisson.BloomFilter) error { _, err := f.ContainsMany(ctx, []string{"a", "b"}); return err }, redisson.ErrNotInitialized},
		{"Count", func(f *redisson.BloomFilter) error { _, err := f.Count(ctx); return err }, redisson.ErrNotInitialized},
		{"Delete", func(f *redisson.BloomFilter) error { _, err := f.Delete(ctx); return err }, nil},
	}
	for _, forget := range []struct {
		what    string
		deleted bool
		do      func(*redisson.Client, *redisson.BloomFilter)
	}{
		{"the Client's cache is reset", false, func(c *redisson.Client, _ *redisson.BloomFilter) { redisson.FillBloomCache(c) }},
		{"the filter is deleted", true, func(_ *redisson.Client, f *redisson.BloomFilter) {
			if _, err := f.Delete(ctx); err != nil {
				t.Errorf("Delete: %v", err)
			}
		}},
	} {
		for _, op := range ops {
			if _, err := maker.TryInit(ctx, 1000, 0.01); err != nil {
				t.Fatal(err)
			}
			c := newClient(t, rdb) // nothing remembered: the call reads the configuration
			f := c.BloomFilter(name)
			fired := false
			redisson.OnBloomLoad(c, func() {
				if !fired {
					fired = true
					forget.do(c, f)
				}
			})
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return op.call(f)
			}()
			var want error
			if forget.deleted {
				want = op.ifDeleted
			}
			if !fired {
				t.Errorf("%s: the configuration was not read", op.name)
			}
			if (want == nil && err != nil) || !errors.Is(err, want) {
				t.Errorf("%s when %s after the configuration was read = %v; want %v", op.name, forget.what, err, want)
			}
		}
	}
}

// Issue 18: every error of a BloomFilter whose name holds another type, or a hash that is not a
// configuration, says "key holds a value of another type" once, whichever way the call found out
// (a command's WRONGTYPE, the configuration read, or the check of the configuration an add made).
// Before the fix some paths explained an error already matching ErrWrongType again.
func TestBloomFilterWrongTypeSaidOnce(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	const phrase = "key holds a value of another type"
	str, hash, stillThere := foreignNames(t, ctx, c, "wt")
	// A filter this Client knows whose configuration is then tampered with, and one replaced by a
	// string.
	for _, n := range []string{"tampered", "replaced"} {
		if _, err := c.BloomFilter(n).TryInit(ctx, 1000, 0.01); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.HSet(ctx, "{tampered}", "hashes", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Del(ctx, "{replaced}").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, "{replaced}", "application data", 0).Err(); err != nil {
		t.Fatal(err)
	}
	fresh := newClient(t, admin) // remembers nothing
	for _, n := range []string{str, hash, "tampered", "replaced"} {
		for _, cl := range []*redisson.Client{c, fresh} {
			f := cl.BloomFilter(n)
			errOf := func(_ any, err error) error { return err }
			for _, op := range []struct {
				what string
				err  func() error
			}{
				{"TryInit", func() error { return errOf(f.TryInit(ctx, 1000, 0.01)) }},
				{"Config", func() error { return errOf(f.Config(ctx)) }},
				{"Add", func() error { return errOf(f.Add(ctx, "a")) }},
				{"AddMany", func() error { return errOf(f.AddMany(ctx, []string{"a", "b"})) }},
				{"Contains", func() error { return errOf(f.Contains(ctx, "a")) }},
				{"ContainsMany", func() error { return errOf(f.ContainsMany(ctx, []string{"a", "b"})) }},
				{"Count", func() error { return errOf(f.Count(ctx)) }},
				{"Delete", func() error { return errOf(f.Delete(ctx)) }},
			} {
				err := op.err()
				if !errors.Is(err, redisson.ErrWrongType) {
					t.Errorf("%s of %s = %v; want ErrWrongType", op.what, n, err)
				} else if k := strings.Count(err.Error(), phrase); k != 1 {
					t.Errorf("%s of %s says %q %d times: %v", op.what, n, phrase, k, err)
				}
			}
		}
	}
	stillThere()
	if v, err := admin.Get(ctx, "{replaced}").Result(); err != nil || v != "application data" {
		t.Errorf("the string under a filter's name = %q, %v; want it untouched", v, err)
	}
}

// Issue 18: TryInit's ErrConfigMismatch says both what is stored and what was asked for: the
// insertions, rate, bits and hashes of each.
func TestBloomFilterConfigMismatchSaysStoredAndAsked(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	f := c.BloomFilter("mismatch")
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	_, err := f.TryInit(ctx, 2000, 0.001)
	if !errors.Is(err, redisson.ErrConfigMismatch) {
		t.Fatalf("TryInit with other parameters = %v; want ErrConfigMismatch", err)
	}
	bits, hashes, _ := redisson.BloomSize(1000, 0.01)
	askedBits, askedHashes, _ := redisson.BloomSize(2000, 0.001)
	for _, want := range []string{
		fmt.Sprintf("stored: 1000 insertions at 0.01 (bits %d, hashes %d)", bits, hashes),
		fmt.Sprintf("asked: 2000 insertions at 0.001 (bits %d, hashes %d)", askedBits, askedHashes),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("TryInit's error %q does not say %q", err, want)
		}
	}
}
