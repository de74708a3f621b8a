package redisson_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// Sized for 50,000 insertions at 1%, the filter has no false negatives among the 50,000 elements
// added and a false-positive rate between 0.5% and 1.5% over 50,000 others. The test prints the
// rate.
func TestBloomFilterFalsePositiveRate(t *testing.T) {
	long(t)
	srv := redistest.Start(t)
	ctx := t.Context()
	f := newClient(t, srv.Client(t)).BloomFilter("bloom-fpr")
	// 50,000 lookups of absent elements: the rate's standard deviation is 0.045%, so the bounds
	// below are 11 deviations away from 1%.
	const n, batch = 50000, 1000
	if _, err := f.TryInit(ctx, n, 0.01); err != nil {
		t.Fatal(err)
	}
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
	t.Logf("50,000 insertions at a 1%% target: %d false negatives, false-positive rate %.3f%% (%d of %d); Count %d, %v",
		falseNeg, 100*rate, falsePos, n, count, err)
	if falseNeg != 0 || rate < 0.005 || rate > 0.015 {
		t.Fatalf("%d false negatives, false-positive rate %.3f%%; want 0 and 0.5%%..1.5%%", falseNeg, 100*rate)
	}
}

// Goroutines of one Client add and look up while another goroutine of the same Client
// deletes the filter and makes it again (with alternating parameters), and another makes the
// Client remember 4,096 other filters over and over (resetting its cache). No call panics (a call
// computes with the parameters it read, even if another call made the Client forget them
// meanwhile: before the fix it read them again from the Client's cache and divided by zero), and
// every error is one the methods document for a filter deleted or made again during the call.
func TestBloomFilterConcurrentDeleteAndInit(t *testing.T) {
	long(t)
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

// The parameters a call read are forgotten by the Client before the call uses them,
// forced deterministically (OnBloomLoad): the Client's cache is reset (it remembers at most 4,096
// filters), or the filter is deleted (Delete forgets them). Each method either works with the
// parameters it read or reports the filter gone (ErrNotInitialized); none panics. Before the fix
// the call read the cache again, found nothing and divided by zero.
func TestBloomFilterParamsForgottenAfterRead(t *testing.T) {
	long(t)
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

// Every error of a BloomFilter whose name holds another type, or a hash that is not a
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
	if err := admin.HSet(ctx, "tampered", "hashes", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Del(ctx, "replaced").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, "replaced", "application data", 0).Err(); err != nil {
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
	if v, err := admin.Get(ctx, "replaced").Result(); err != nil || v != "application data" {
		t.Errorf("the string under a filter's name = %q, %v; want it untouched", v, err)
	}
}

// TryInit's ErrConfigMismatch says both what is stored and what was asked for: the
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

// Count decodes the configuration with the one Go decoder every call uses: with bits or hashes
// tampered to "NaN", "inf", "1e300" or "1e-300", Count fails with ErrWrongType as Config does,
// rather than return an estimate computed from garbage with a nil error.
func TestBloomFilterCountTamperedConfigIsWrongType(t *testing.T) {
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
		mustDo(t, "HSET", admin.HSet(ctx, name, tc.field, tc.value).Err())
		if _, err := f.Config(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Config with %s=%q = %v; want ErrWrongType", tc.field, tc.value, err)
		}
		if n, err := f.Count(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Count with %s=%q = %d, %v; want ErrWrongType (as Config)", tc.field, tc.value, n, err)
		}
	}
}

// A configuration whose bits are written non-canonically ("0959") is judged alike by the Go decoder
// (Config) and the Lua one (Add): both refuse it or both accept it, and a refusing Add fails with
// ErrWrongType, one of its documented errors.
func TestBloomFilterNonCanonicalConfigIsWrongType(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	f := c.BloomFilter("noncanon")
	bits, _, err := redisson.BloomSize(1000, 0.01)
	mustDo(t, "BloomSize", err)
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	mustDo(t, "HSET", admin.HSet(ctx, "noncanon", "bits", fmt.Sprintf("0%d", bits)).Err())
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

// TryInit races between Clients with different parameters: exactly one configuration wins, the
// others get false (same size) or ErrConfigMismatch, and every Client then uses the winner's: each
// sees every Client's element.
func TestBloomFilterTryInitRace(t *testing.T) {
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

// A huge batch with k = 100 (many script calls), the empty string, duplicates and elements of very
// different sizes: all contained, the count of new elements exact, Count with every bit set is m,
// and Count of an empty filter is 0.
func TestBloomFilterHugeBatch(t *testing.T) {
	long(t)
	t.Parallel()
	ctx := t.Context()
	c, admin, _ := setup(t)
	f := c.BloomFilter("huge")
	m, k, err := redisson.BloomSize(3000, 1e-30)
	mustDo(t, "BloomSize", err)
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
	mustDo(t, "SET", admin.Set(ctx, fmt.Sprintf("{huge}:~bf:%d:%d", m, k), bytes.Repeat([]byte{0xFF}, int((m+7)/8)), 0).Err())
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

// The elements of one script call (8,192 bit indices) are added atomically even when a server limit
// refuses one of its indices: with proto-max-bulk-len lowered to 1mb (8,388,608 bits) and a filter
// of 9.6M bits, an Add whose indices straddle the limit fails without setting any of its bits (a
// partial element would skew later Adds and lookups), and its error is not ErrWrongType (the limit
// is not a type mismatch).
func TestBloomFilterAddOverProtoLimitWritesNothing(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.WithArgs("--proto-max-bulk-len", "1mb"))
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t))
	f := c.BloomFilter("bigbloom")
	if _, err := f.TryInit(ctx, 1000000, 0.01); err != nil { // 9.6M bits, k = 7
		t.Fatal(err)
	}
	for i := range 200 {
		before, _ := admin.BitCount(ctx, "bigbloom", nil).Result()
		_, err := f.Add(ctx, fmt.Sprint("e", i))
		after, _ := admin.BitCount(ctx, "bigbloom", nil).Result()
		if err != nil && errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Add(e%d) refused by a server limit = %v: classified as ErrWrongType (objectErr matches \"not an integer\" in \"bit offset is not an integer or out of range\")", i, err)
		}
		if err != nil && after != before {
			t.Fatalf("Add(e%d) failed (%v) but set %d bits: one script call is not atomic", i, err, after-before)
		}
	}
}

// bloomOps are the BloomFilter's calls, each expected to be refused with ErrWrongType on another
// kind's name.
var bloomOps = []objectOp{
	{"TryInit", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BloomFilter(n).TryInit(ctx, 100, 0.01))
	}},
	{"Add", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BloomFilter(n).Add(ctx, "a"))
	}},
	{"AddMany", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BloomFilter(n).AddMany(ctx, []string{"a", "b"}))
	}},
	{"Contains", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BloomFilter(n).Contains(ctx, "a"))
	}},
	{"ContainsMany", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BloomFilter(n).ContainsMany(ctx, []string{"a", "b"}))
	}},
	{"Count", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BloomFilter(n).Count(ctx))
	}},
	{"Config", func(ctx context.Context, c *redisson.Client, n string) error {
		return errOnly(c.BloomFilter(n).Config(ctx))
	}},
}

// Tampered configurations (a bad fpr; bits, hashes or insertions non-canonical or out of range;
// another hash name) are each decoded as not a configuration (ErrWrongType) by Config, Count,
// Contains, Add and TryInit, and nothing changes: bloom.lua checks all five fields as the Go
// decoder does. A foreign hash that happens to have a field "bits" is refused by every call.
func TestBloomFilterTamperedConfigRefused(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	good := map[string]string{"bits": "959", "hashes": "7", "insertions": "100", "fpr": "0.01", "hash": "xxh3-128"}
	bad := []map[string]string{
		{"fpr": "1"}, {"fpr": "0"}, {"fpr": "NaN"}, {"fpr": "-0.5"}, {"fpr": "Inf"}, {"fpr": "1e-400"}, {"fpr": ""},
		{"bits": "+959"}, {"bits": "0959"}, {"bits": " 959"}, {"bits": "959.0"}, {"bits": "0"}, {"bits": "4294967297"},
		{"hashes": "07"}, {"hashes": "0"}, {"hashes": "101"}, {"hashes": "-7"},
		{"insertions": "0"}, {"insertions": "1e2"}, {"insertions": "-100"},
		{"hash": "XXH3-128"}, {"hash": "xxh3-128 "}, {"hash": ""},
	}
	for i, mod := range bad {
		name := "cfg" + strconv.Itoa(i)
		key := name
		fields := map[string]any{}
		for k, v := range good {
			fields[k] = v
		}
		for k, v := range mod {
			fields[k] = v
		}
		mustDo(t, "HSET", admin.HSet(ctx, key, fields).Err())
		snap := serverSnapshot(t, admin)
		f := c.BloomFilter(name)
		if _, err := f.Config(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%v: Config = %v; want ErrWrongType", mod, err)
		}
		if _, err := f.Count(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%v: Count = %v; want ErrWrongType", mod, err)
		}
		if _, err := f.Contains(ctx, "a"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%v: Contains = %v; want ErrWrongType", mod, err)
		}
		if _, err := f.Add(ctx, "a"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%v: Add = %v; want ErrWrongType", mod, err)
		}
		// TryInit with the same bits/hashes/hash must not accept the corrupt configuration (false,
		// nil) and cache it: Add would then set bits under a configuration that Config and Count refuse.
		if ok, err := f.TryInit(ctx, 100, 0.01); err == nil {
			t.Errorf("%v: TryInit = %v, nil; want an error (ErrWrongType): the configuration is not one", mod, ok)
		}
		if _, err := f.Add(ctx, "b"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%v: Add after TryInit = %v; want ErrWrongType", mod, err)
		}
		if d := snapshotDiff(snap, serverSnapshot(t, admin)); d != "" {
			t.Errorf("%v: changed Redis: %s", mod, d)
		}
	}
	// A foreign hash that happens to have a field "bits" (and nothing else of a configuration).
	mustDo(t, "HSET", admin.HSet(ctx, "foreign", "bits", "959", "owner", "app").Err())
	f := c.BloomFilter("foreign")
	for _, op := range bloomOps {
		if err := op.run(ctx, c, "foreign"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("foreign hash {bits, owner}: %s = %v; want ErrWrongType", op.name, err)
		}
	}
	_ = f
}

// bloomBitsKey is the bits key of filter name sized for (n, p).
func bloomBitsKey(t *testing.T, name string, n int64, p float64) string {
	t.Helper()
	m, k, err := redisson.BloomSize(n, p)
	mustDo(t, "BloomSize", err)
	return "{" + name + "}:~bf:" + strconv.FormatInt(m, 10) + ":" + strconv.Itoa(k)
}

// bloomBitsKeys lists the bits keys of every filter on the server.
func bloomBitsKeys(t *testing.T, admin redis.UniversalClient) []string {
	t.Helper()
	keys, err := admin.Keys(context.Background(), "*:~bf:*").Result()
	mustDo(t, "KEYS", err)
	return keys
}

// Under OOM (maxmemory 1, noeviction) an add's BITFIELD is refused at queue time and EXEC answers
// EXECABORT: Add fails with that plain Redis error (not ErrConfigMismatch, ErrNotInitialized or
// ErrWrongType), and nothing is written; TryInit of a new filter and the Add of a Client with
// nothing cached likewise.
func TestBloomFilterOOMIsPlainError(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	f := c.BloomFilter("oom")
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	before := serverSnapshot(t, admin)
	mustDo(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	mustDo(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { admin.ConfigSet(context.Background(), "maxmemory", "0") })
	_, err := f.AddMany(ctx, []string{"a", "b", "c"})
	if err == nil || errors.Is(err, redisson.ErrConfigMismatch) || errors.Is(err, redisson.ErrNotInitialized) ||
		errors.Is(err, redisson.ErrWrongType) || !strings.Contains(err.Error(), "OOM") && !strings.Contains(err.Error(), "EXECABORT") {
		t.Errorf("AddMany under OOM = %v; want the plain OOM/EXECABORT Redis error", err)
	}
	// A fresh name: TryInit refused, no config.
	g := c.BloomFilter("oom2")
	if ok, err := g.TryInit(ctx, 1000, 0.01); err == nil || ok {
		t.Errorf("TryInit under OOM = %v, %v; want an OOM error", ok, err)
	}
	// A Client with no parameters cached, on the live filter.
	c2 := newClient(t, extraClient(admin))
	if _, err := c2.BloomFilter("oom").Add(ctx, "z"); err == nil || errors.Is(err, redisson.ErrConfigMismatch) {
		t.Errorf("Add by a fresh Client under OOM = %v; want the plain OOM error", err)
	}
	if d := snapshotDiff(before, serverSnapshot(t, admin)); d != "" {
		t.Errorf("under OOM the keys changed: %s", d)
	}
}

// extraClient returns a new go-redis client to admin's server.
func extraClient(admin *redis.Client) *redis.Client {
	o := *admin.Options()
	return redis.NewClient(&o)
}

// TryInit under OOM with bits left under its parameters' key (by a stale add whose reply was lost,
// see TestBloomFilterStaleAddLostReplyLeavesNoBits) fails and writes no configuration: the
// configuration is written first, so deleting the leftovers cannot lift Redis's out-of-memory
// check.
func TestBloomFilterTryInitOOMWithLeftoverBits(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	bits := bloomBitsKey(t, "left", 1000, 0.01)
	mustDo(t, "SET", admin.Set(ctx, bits, "\xff", 0).Err())
	mustDo(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	mustDo(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { admin.ConfigSet(context.Background(), "maxmemory", "0") })
	ok, err := c.BloomFilter("left").TryInit(ctx, 1000, 0.01)
	if err == nil {
		t.Errorf("TryInit under OOM with leftover bits = %v, nil; want an OOM error, nothing written (config written: %v)",
			ok, admin.Exists(ctx, "left").Val() == 1)
	}
}

// The replica-acknowledged mode: an AddMany whose reply (EXEC and WAIT) is lost fails, is not sent
// again (exactly one BITFIELD call), and was applied once (adding the elements again reports none
// new).
func TestBloomFilterLostReplyAckedAppliedOnce(t *testing.T) {
	ctx := t.Context()
	r := redistest.StartReplicated(t)
	admin := r.Master.Client(t)
	p := redistest.NewProxy(t, r.Master.Addr())
	c := newClient(t, r.Master.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }), redisson.WithReplicaAcks(1, 2e9))
	f := c.BloomFilter("lacked")
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "warm"); err != nil {
		t.Fatal(err)
	}

	before := admin.InfoMap(ctx, "commandstats").Item("Commandstats", "cmdstat_bitfield")
	p.DropReplies(1)
	if _, err := f.AddMany(ctx, []string{"x", "y"}); err == nil {
		t.Fatal("AddMany with its reply dropped = nil")
	}
	after := admin.InfoMap(ctx, "commandstats").Item("Commandstats", "cmdstat_bitfield")
	if calls := func(s string) int64 {
		i := strings.Index(s, "calls=")
		if i < 0 {
			return 0
		}
		n, _ := strconv.ParseInt(strings.SplitN(s[i+6:], ",", 2)[0], 10, 64)
		return n
	}; calls(after)-calls(before) != 1 {
		t.Errorf("BITFIELD calls during the lost AddMany: %s -> %s; want exactly one (sent once)", before, after)
	}

	if n, err := f.AddMany(ctx, []string{"x", "y"}); err != nil || n != 0 {
		t.Errorf("AddMany again = %d, %v; want 0 new (applied once already)", n, err)
	}
}
