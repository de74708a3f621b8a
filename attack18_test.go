package redisson_test

// Attack 18: review 17's fixes to the data objects: the BloomFilter's new layout (configuration at
// the object key, bits at "<key>:~bf") against every other kind both ways, lookups as a plain
// pipeline under concurrent Delete/TryInit/Add, a filter deleted and not re-created, configuration
// decoding; BitSet ranges written highest first (random model, > 1 MiB, proto-max-bulk-len);
// objectErr's mapping.
//
// Tests marked "passing" are attacks the code withstands; the others documented a defect, fixed in
// review 18, and now pass.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a18Snapshot returns every key of the server with its type and DUMP, for "nothing changed" checks.
func a18Snapshot(t *testing.T, admin *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := admin.Keys(ctx, "*").Result()
	a17Must(t, "KEYS", err)
	out := map[string]string{}
	for _, k := range keys {
		d, err := admin.Dump(ctx, k).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		a17Must(t, "DUMP "+k, err)
		ttl, _ := admin.PTTL(ctx, k).Result()
		out[k] = d + fmt.Sprintf("|ttl>0:%v", ttl > 0)
	}
	return out
}

func a18SameKeys(a, b map[string]string) string {
	var diffs []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			diffs = append(diffs, "removed "+k)
		} else if v != w {
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, "added "+k)
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, ", ")
}

type a18Op struct {
	name string
	run  func(ctx context.Context, c *redisson.Client, name string) error
}

func a18Err[T any](_ T, err error) error { return err }

// a18KindOps are the mutating and reading calls of every other kind, each expected to be refused
// with ErrWrongType on a BloomFilter's name.
var a18KindOps = []a18Op{
	{"Lock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error { return a18Err(c.Lock(n).TryLock(ctx)) }},
	{"FairLock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.FairLock(n).TryLock(ctx))
	}},
	{"FencedLock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.FencedLock(n).TryLock(ctx))
	}},
	{"SpinLock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.SpinLock(n).TryLock(ctx))
	}},
	{"ReadWriteLock.TryLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.ReadWriteLock(n).TryLock(ctx))
	}},
	{"ReadWriteLock.TryRLock", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.ReadWriteLock(n).TryRLock(ctx))
	}},
	{"Lock.ForceUnlock", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.Lock(n).ForceUnlock(ctx))
	}},
	{"FairLock.ForceUnlock", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.FairLock(n).ForceUnlock(ctx))
	}},
	{"ReadWriteLock.ForceUnlock", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.ReadWriteLock(n).ForceUnlock(ctx))
	}},
	{"Semaphore.TrySetPermits", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.Semaphore(n).TrySetPermits(ctx, 3))
	}},
	{"Semaphore.AddPermits", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.Semaphore(n).AddPermits(ctx, 3))
	}},
	{"Semaphore.TryAcquire", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.Semaphore(n).TryAcquire(ctx, 1))
	}},
	{"Semaphore.Release", func(ctx context.Context, c *redisson.Client, n string) error { return c.Semaphore(n).Release(ctx, 1) }},
	{"Semaphore.DrainPermits", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.Semaphore(n).DrainPermits(ctx))
	}},
	{"Semaphore.AvailablePermits", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.Semaphore(n).AvailablePermits(ctx))
	}},
	{"CountDownLatch.TrySetCount", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.CountDownLatch(n).TrySetCount(ctx, 2))
	}},
	{"CountDownLatch.CountDown", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.CountDownLatch(n).CountDown(ctx))
	}},
	{"CountDownLatch.Count", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.CountDownLatch(n).Count(ctx))
	}},
	{"AtomicLong.Add", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.AtomicLong(n).Add(ctx, 1))
	}},
	{"AtomicLong.Store", func(ctx context.Context, c *redisson.Client, n string) error { return c.AtomicLong(n).Store(ctx, 1) }},
	{"AtomicLong.Swap", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.AtomicLong(n).Swap(ctx, 1))
	}},
	{"AtomicLong.CompareAndSwap", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.AtomicLong(n).CompareAndSwap(ctx, 0, 1))
	}},
	{"AtomicLong.SetIfGreater", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.AtomicLong(n).SetIfGreater(ctx, 5))
	}},
	{"AtomicLong.GetAndDelete", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.AtomicLong(n).GetAndDelete(ctx))
	}},
	{"AtomicLong.Load", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.AtomicLong(n).Load(ctx))
	}},
	{"BitSet.Set", func(ctx context.Context, c *redisson.Client, n string) error { return a18Err(c.BitSet(n).Set(ctx, 3)) }},
	{"BitSet.Clear", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BitSet(n).Clear(ctx, 3))
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
	{"BitSet.Bytes", func(ctx context.Context, c *redisson.Client, n string) error { return a18Err(c.BitSet(n).Bytes(ctx)) }},
	{"BitSet.Length", func(ctx context.Context, c *redisson.Client, n string) error { return a18Err(c.BitSet(n).Length(ctx)) }},
	{"BitSet.Cardinality", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BitSet(n).Cardinality(ctx))
	}},
	{"HyperLogLog.Add", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.HyperLogLog(n).Add(ctx, "e"))
	}},
	{"HyperLogLog.Count", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.HyperLogLog(n).Count(ctx))
	}},
	{"HyperLogLog.MergeWith", func(ctx context.Context, c *redisson.Client, n string) error {
		return c.HyperLogLog(n).MergeWith(ctx, n+"-other")
	}},
}

// a18BloomOps are the BloomFilter's calls, each expected to be refused with ErrWrongType on another
// kind's name.
var a18BloomOps = []a18Op{
	{"TryInit", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BloomFilter(n).TryInit(ctx, 100, 0.01))
	}},
	{"Add", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BloomFilter(n).Add(ctx, "a"))
	}},
	{"AddMany", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BloomFilter(n).AddMany(ctx, []string{"a", "b"}))
	}},
	{"Contains", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BloomFilter(n).Contains(ctx, "a"))
	}},
	{"ContainsMany", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BloomFilter(n).ContainsMany(ctx, []string{"a", "b"}))
	}},
	{"Count", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BloomFilter(n).Count(ctx))
	}},
	{"Config", func(ctx context.Context, c *redisson.Client, n string) error {
		return a18Err(c.BloomFilter(n).Config(ctx))
	}},
}

// Every other kind on a BloomFilter's name is refused with ErrWrongType, nothing changed; and the
// BloomFilter on every other kind's name, the same. Two Clients: one with the filter's parameters
// cached, one fresh.
func TestAttack18BloomKindsBothWays(t *testing.T) {
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
	before := a18Snapshot(t, admin)
	for _, op := range a18KindOps {
		err := op.run(ctx, c2, "bf")
		if !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s on a BloomFilter's name = %v; want ErrWrongType", op.name, err)
		}
		if d := a18SameKeys(before, a18Snapshot(t, admin)); d != "" {
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
		"Lock":          func(n string) error { return a18Err(c.Lock(n).TryLock(ctx)) },
		"FairLock":      func(n string) error { return a18Err(c.FairLock(n).TryLock(ctx)) },
		"FencedLock":    func(n string) error { return a18Err(c.FencedLock(n).TryLock(ctx)) },
		"ReadWriteLock": func(n string) error { return a18Err(c.ReadWriteLock(n).TryLock(ctx)) },
		"RWLock-read":   func(n string) error { return a18Err(c.ReadWriteLock(n).TryRLock(ctx)) },
		"Semaphore":     func(n string) error { return a18Err(c.Semaphore(n).TrySetPermits(ctx, 3)) },
		"CountDownLatch": func(n string) error {
			return a18Err(c.CountDownLatch(n).TrySetCount(ctx, 3))
		},
		"AtomicLong":  func(n string) error { return c.AtomicLong(n).Store(ctx, 42) },
		"BitSet":      func(n string) error { return c.BitSet(n).SetRange(ctx, 0, 77) },
		"HyperLogLog": func(n string) error { return a18Err(c.HyperLogLog(n).AddMany(ctx, []string{"a", "b"})) },
	}
	for kind, mk := range makers {
		name := "k-" + kind
		a17Must(t, "make "+kind, mk(name))
		snap := a18Snapshot(t, admin)
		for _, cl := range []*redisson.Client{c, c2} {
			for _, op := range a18BloomOps {
				if err := op.run(ctx, cl, name); !errors.Is(err, redisson.ErrWrongType) {
					t.Errorf("BloomFilter.%s on a %s's name = %v; want ErrWrongType", op.name, kind, err)
				}
				if d := a18SameKeys(snap, a18Snapshot(t, admin)); d != "" {
					t.Fatalf("BloomFilter.%s on a %s's name changed Redis: %s", op.name, kind, d)
				}
			}
		}
	}
}

// A filter deleted (by another Client) and not re-created: every call of a Client with the
// parameters cached fails with ErrNotInitialized (never a panic, never an answer); a bitmap left
// without a configuration (its configuration deleted by hand) makes TryInit fail with ErrWrongType,
// lookups ErrNotInitialized, and Delete clears it.
func TestAttack18BloomDeletedNotRecreated(t *testing.T) {
	ctx := t.Context()
	c, admin, srv := setup(t)
	other := newClient(t, srv.Client(t))
	f := c.BloomFilter("gone")
	if _, err := f.TryInit(ctx, 50, 0.03); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddMany(ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := other.BloomFilter("gone").Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	check := func(when string) {
		t.Helper()
		for _, op := range a18BloomOps[1:] { // all but TryInit
			if err := op.run(ctx, c, "gone"); !errors.Is(err, redisson.ErrNotInitialized) {
				t.Errorf("%s: %s = %v; want ErrNotInitialized", when, op.name, err)
			}
		}
		if keys, _ := admin.Keys(ctx, "{gone}*").Result(); len(keys) != 0 {
			n := len(keys)
			t.Errorf("%s: the calls created %d keys", when, n)
		}
	}
	check("after Delete")
	// Config cached again? Re-cache through a fresh TryInit + Delete, then try each op on a fresh handle.
	if _, err := f.TryInit(ctx, 50, 0.03); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Del(ctx, "{gone}").Result(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.TryInit(ctx, 50, 0.03); !errors.Is(err, redisson.ErrWrongType) && err != nil {
		t.Errorf("TryInit with an empty bitmap absent = %v", err)
	}
	a17Must(t, "Delete", a18Err(f.Delete(ctx)))
	// Now bits without a configuration.
	if _, err := f.TryInit(ctx, 50, 0.03); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "z"); err != nil {
		t.Fatal(err)
	}
	a17Must(t, "DEL config", admin.Del(ctx, "{gone}").Err())
	// Since review 18 the bits are keyed by their parameters and bits without a configuration are
	// garbage under the package's namespace: calls report ErrNotInitialized (a stale add removes what
	// it wrote, and the bits beside it), TryInit removes what is left and starts empty.
	for _, op := range a18BloomOps[1:] {
		if err := op.run(ctx, c, "gone"); !errors.Is(err, redisson.ErrNotInitialized) {
			t.Errorf("bits without configuration: %s = %v; want ErrNotInitialized", op.name, err)
		}
	}
	if ok, err := f.Delete(ctx); err != nil || ok {
		t.Errorf("Delete of bits without configuration = %v, %v; want false, nil", ok, err)
	}
	m, k, _ := redisson.BloomSize(50, 0.03)
	bitsKey := fmt.Sprintf("{gone}:~bf:%d:%d", m, k)
	if n, _ := admin.Exists(ctx, bitsKey).Result(); n != 0 {
		t.Error("bits without configuration left behind")
	}
	a17Must(t, "SET garbage", admin.SetBit(ctx, bitsKey, 3, 1).Err())
	if ok, err := f.TryInit(ctx, 50, 0.03); err != nil || !ok {
		t.Errorf("TryInit over garbage bits = %v, %v; want true", ok, err)
	}
	if n, _ := admin.Exists(ctx, bitsKey).Result(); n != 0 {
		t.Error("TryInit kept garbage bits")
	}
	a17Must(t, "Delete", a18Err(f.Delete(ctx)))
	if ok, err := f.TryInit(ctx, 50, 0.03); err != nil || !ok {
		t.Errorf("TryInit after Delete = %v, %v", ok, err)
	}
}

// Lookups under churn: one Client deletes and re-creates a filter with alternating parameters and
// adds a fixed set (one script call: atomic) while two other Clients look it up; a second filter
// only ever grows. Lookups must never panic nor fail with an undocumented error; on the growing
// filter every element whose Add returned before the lookup began is found; at the end, every
// Client (stale caches) finds the whole set in the final filter.
func TestAttack18BloomLookupsUnderChurn(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	w := newClient(t, srv.Client(t))
	readers := []*redisson.Client{newClient(t, srv.Client(t)), newClient(t, srv.Client(t))}
	set := make([]string, 40)
	for i := range set {
		set[i] = "e" + strconv.Itoa(i)
	}
	params := [][2]float64{{100, 0.01}, {3000, 0.001}, {40, 0.2}}
	churn := w.BloomFilter("churn")
	grow := w.BloomFilter("grow")
	if _, err := grow.TryInit(ctx, 5000, 0.01); err != nil {
		t.Fatal(err)
	}
	var added atomic.Int64 // elements g0..g(added-1) of "grow" have been added (Add returned)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var unexpected sync.Map
	const epochs = 150
	spawn(&wg, func() {
		defer stop.Store(true)
		for e := range epochs {
			p := params[e%len(params)]
			if _, err := churn.Delete(ctx); err != nil {
				t.Error(err)
				return
			}
			if _, err := churn.TryInit(ctx, int64(p[0]), p[1]); err != nil {
				t.Error(err)
				return
			}
			if _, err := churn.AddMany(ctx, set); err != nil {
				t.Error(err)
				return
			}
			if _, err := grow.Add(ctx, "g"+strconv.Itoa(e)); err != nil {
				t.Error(err)
				return
			}
			added.Store(int64(e + 1))
		}
	})
	for _, r := range readers {
		spawn(&wg, func() {
			cf, gf := r.BloomFilter("churn"), r.BloomFilter("grow")
			for !stop.Load() {
				_, err := cf.ContainsMany(ctx, set)
				switch {
				// ErrConfigMismatch: made again twice during the lookup (documented). ErrWrongType was
				// a defect (load's two reads racing a TryInit), fixed: it now fails the test.
				case err == nil, errors.Is(err, redisson.ErrNotInitialized), errors.Is(err, redisson.ErrConfigMismatch):
				default:
					unexpected.Store(err.Error(), true)
				}
				n := added.Load()
				if n == 0 {
					continue
				}
				el := make([]string, n)
				for i := range el {
					el[i] = "g" + strconv.Itoa(i)
				}
				v, err := gf.ContainsMany(ctx, el)
				if err != nil {
					t.Errorf("ContainsMany on the growing filter: %v", err)
					return
				}
				for i, ok := range v {
					if !ok {
						t.Errorf("false negative on the growing filter: %s (added before the lookup began)", el[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	unexpected.Range(func(k, _ any) bool {
		t.Errorf("lookup under churn failed with: %v", k)
		return true
	})
	for i, r := range append(readers, w) {
		v, err := r.BloomFilter("churn").ContainsMany(ctx, set)
		if err != nil {
			t.Errorf("client %d: final ContainsMany: %v", i, err)
			continue
		}
		for j, ok := range v {
			if !ok {
				t.Errorf("client %d: final filter misses %s", i, set[j])
			}
		}
	}
}

// A lookup during which the filter is re-created twice (by another Client, between the lookup's
// round trips, forced by a hook on the looking-up Client's connection) fails with ErrConfigMismatch,
// an error Contains's and ContainsMany's documentation did not list (was a defect, fixed in review
// 18 by documenting it).
func TestAttack18BloomLookupDoubleReinit(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	w := newClient(t, srv.Client(t))
	rdb := srv.Client(t)
	h := &a18PipeHook{}
	rdb.AddHook(h)
	r := newClient(t, rdb)
	wf := w.BloomFilter("twice")
	p := [][2]float64{{100, 0.01}, {3000, 0.001}}
	reinit := func(i int) {
		if _, err := wf.Delete(ctx); err != nil {
			t.Error(err)
		}
		if _, err := wf.TryInit(ctx, int64(p[i][0]), p[i][1]); err != nil {
			t.Error(err)
		}
		if _, err := wf.Add(ctx, "a"); err != nil {
			t.Error(err)
		}
	}
	reinit(0)
	rf := r.BloomFilter("twice")
	if ok, err := rf.Contains(ctx, "a"); err != nil || !ok {
		t.Fatalf("Contains = %v, %v", ok, err)
	}
	var n atomic.Int32
	hook := func() {
		switch n.Add(1) {
		case 1:
			reinit(1)
		case 2:
			reinit(0)
		}
	}
	h.before.Store(&hook)
	ok, err := rf.Contains(ctx, "a")
	h.before.Store(nil)
	t.Logf("pipelines seen: %d; Contains = %v, %v", n.Load(), ok, err)
	// Fixed by documenting it: ErrConfigMismatch is among Contains's errors (made again twice).
	if err != nil && !errors.Is(err, redisson.ErrConfigMismatch) && !errors.Is(err, redisson.ErrNotInitialized) {
		t.Errorf("Contains = %v", err)
	} else if err == nil && !ok {
		t.Errorf("Contains = false for an element in the filter (unchanged since the lookup's last read)")
	}
}

// a18PipeHook runs before (if set) before each pipeline the client sends.
type a18PipeHook struct {
	before atomic.Pointer[func()] // before each pipeline starting with HMGET
	after  atomic.Pointer[func()] // after each single HMGET
}

func (h *a18PipeHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *a18PipeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if f := h.after.Load(); f != nil && cmd.Name() == "hmget" {
			(*f)()
		}
		return err
	}
}
func (h *a18PipeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if f := h.before.Load(); f != nil && len(cmds) > 0 && cmds[0].Name() == "hmget" {
			(*f)()
		}
		return next(ctx, cmds)
	}
}

// A Client reading the configuration (Config, or the first Add/Contains) while another Client
// creates the filter: load's HMGET finds nothing, TryInit runs, then load's EXISTS finds the key, and
// the call fails with ErrWrongType ("a hash that is not a BloomFilter configuration") although the
// name only ever held a proper BloomFilter. The interleaving is forced by a hook on the reading
// Client's connection (after its HMGET returns); it happened without one under churn (see
// TestAttack18BloomLookupsUnderChurn). Was a defect, fixed in review 18: load reads both in one MULTI.
func TestAttack18BloomLoadRaceWrongType(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	w := newClient(t, srv.Client(t))
	rdb := srv.Client(t)
	h := &a18PipeHook{}
	rdb.AddHook(h)
	r := newClient(t, rdb)
	calls := []a18Op{a18BloomOps[1], a18BloomOps[3], a18BloomOps[6]} // Add, Contains, Config
	for i, op := range calls {
		name := "race" + strconv.Itoa(i)
		var once sync.Once
		hook := func() {
			once.Do(func() {
				if _, err := w.BloomFilter(name).TryInit(ctx, 100, 0.01); err != nil {
					t.Error(err)
				}
			})
		}
		h.after.Store(&hook)
		err := op.run(ctx, r, name)
		h.after.Store(nil)
		if errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s while another Client creates the filter = %v; want ErrNotInitialized or success", op.name, err)
		}
	}
}

// Tampered configurations: each decoded as not a configuration (ErrWrongType) by Config, Count,
// Contains, Add and TryInit, nothing changed. Was a defect (TryInit and Add accepted a configuration
// with a bad fpr or insertions, or a foreign hash with a bits field), fixed in review 18: bloom.lua's
// init and count check all five fields as the Go decoder does.
func TestAttack18BloomConfigDecode(t *testing.T) {
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
		key := "{" + name + "}"
		fields := map[string]any{}
		for k, v := range good {
			fields[k] = v
		}
		for k, v := range mod {
			fields[k] = v
		}
		a17Must(t, "HSET", admin.HSet(ctx, key, fields).Err())
		snap := a18Snapshot(t, admin)
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
		// TryInit on the same bits/hashes/hash: bloom.lua's "init" checks only those three fields, so
		// it accepts the corrupt configuration (false, nil) and caches it; Add then sets bits under a
		// configuration that Config and Count refuse.
		if ok, err := f.TryInit(ctx, 100, 0.01); err == nil {
			t.Errorf("%v: TryInit = %v, nil; want an error (ErrWrongType): the configuration is not one", mod, ok)
		}
		if _, err := f.Add(ctx, "b"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%v: Add after TryInit = %v; want ErrWrongType", mod, err)
		}
		if d := a18SameKeys(snap, a18Snapshot(t, admin)); d != "" {
			t.Errorf("%v: changed Redis: %s", mod, d)
		}
	}
	// A foreign hash that happens to have a field "bits" (and nothing else of a configuration).
	a17Must(t, "HSET", admin.HSet(ctx, "{foreign}", "bits", "959", "owner", "app").Err())
	f := c.BloomFilter("foreign")
	for _, op := range a18BloomOps {
		if err := op.run(ctx, c, "foreign"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("foreign hash {bits, owner}: %s = %v; want ErrWrongType", op.name, err)
		}
	}
	_ = f
}

// BitSet SetRange/ClearRange against a Go model, many random ranges: byte-boundary ends, from > to (refused),
// ranges inside one byte, ranges over 1 MiB; ClearRange never lengthens; SetBytes of nothing
// deletes; Bytes is nil for the empty string.
func TestAttack18BitSetRangesModel(t *testing.T) {
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
	a17Must(t, "SetBytes", b.SetBytes(ctx, nil))
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
		if from > to { // a reversed range is refused, nothing changed (issue 18)
			if !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Fatalf("range #%d [%d, %d) set=%v = %v; want ErrInvalidArgument", i, from, to, set, err)
			}
		} else {
			a17Must(t, fmt.Sprintf("range #%d [%d, %d) set=%v", i, from, to, set), err)
			model = applyBitRange(model, from, to, set)
		}
		got, err := admin.Get(ctx, "{m}").Bytes()
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
			a17Must(t, "SetBytes", b.SetBytes(ctx, model))
			if len(model) == 0 {
				model = nil
			}
		}
	}
	for _, p := range [][]byte{nil, {}} {
		a17Must(t, "SetBytes", b.SetBytes(ctx, []byte("abc")))
		a17Must(t, "SetBytes(empty)", b.SetBytes(ctx, p))
		if n, _ := admin.Exists(ctx, "{m}").Result(); n != 0 {
			t.Errorf("SetBytes(%#v) left the key", p)
		}
		if v, err := b.Bytes(ctx); err != nil || v != nil {
			t.Errorf("Bytes after SetBytes(%#v) = %#v, %v; want nil", p, v, err)
		}
	}
	a17Must(t, "SET empty", admin.Set(ctx, "{m}", "", 0).Err())
	if v, err := b.Bytes(ctx); err != nil || v != nil {
		t.Errorf("Bytes of an empty string = %#v, %v; want nil", v, err)
	}
	a17Must(t, "ClearRange", b.ClearRange(ctx, 0, 100))
	if n, _ := admin.StrLen(ctx, "{m}").Result(); n != 0 {
		t.Errorf("ClearRange lengthened an empty string to %d", n)
	}
}

// With --proto-max-bulk-len 1mb, a SetRange past it fails before any write (end aligned or not,
// from inside or past the string, ranges of several chunks), and ClearRange over everything still works.
func TestAttack18BitSetRangeProtoLimit(t *testing.T) {
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
		a17Must(t, "SET", admin.Set(ctx, "{lim}", start, 0).Err())
		err := b.SetRange(ctx, r[0], r[1])
		got, _ := admin.Get(ctx, "{lim}").Bytes()
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
	a17Must(t, "SET", admin.Set(ctx, "{lim}", make([]byte, 100), 0).Err())
	a17Must(t, "SetRange to the limit", b.SetRange(ctx, 7, 8*mib))
	if n, _ := b.Cardinality(ctx); n != 8*mib-7 {
		t.Errorf("Cardinality after SetRange(7, 8 MiB) = %d", n)
	}
	a17Must(t, "ClearRange all", b.ClearRange(ctx, 0, redisson.MaxBit+1))
	if n, _ := b.Cardinality(ctx); n != 0 {
		t.Errorf("Cardinality after ClearRange = %d", n)
	}
}

// objectErr: ErrWrongType only for WRONGTYPE, INCRBY's "value is not an integer" and INVALIDOBJ;
// ErrOutOfRange only for INCRBY's overflow; other Redis errors (OOM) match neither.
func TestAttack18ObjectErrMapping(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	a := c.AtomicLong("al")
	for _, s := range []string{"abc", "1.5", "99999999999999999999", " 1"} {
		a17Must(t, "SET", admin.Set(ctx, "{al}", s, 0).Err())
		if _, err := a.Add(ctx, 1); !errors.Is(err, redisson.ErrWrongType) || errors.Is(err, redisson.ErrOutOfRange) {
			t.Errorf("Add on %q = %v; want ErrWrongType only", s, err)
		}
	}
	a17Must(t, "SET", admin.Set(ctx, "{al}", "9223372036854775807", 0).Err())
	if _, err := a.Add(ctx, 1); !errors.Is(err, redisson.ErrOutOfRange) || errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Add overflowing = %v; want ErrOutOfRange only", err)
	}
	a17Must(t, "SET", admin.Set(ctx, "{al}", "-9223372036854775808", 0).Err())
	if _, err := a.Add(ctx, -1); !errors.Is(err, redisson.ErrOutOfRange) {
		t.Errorf("Add underflowing = %v; want ErrOutOfRange", err)
	}
	// OOM: no sentinel.
	f := c.BloomFilter("oomf")
	if _, err := f.TryInit(ctx, 100, 0.01); err != nil {
		t.Fatal(err)
	}
	a17Must(t, "maxmemory", admin.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = admin.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	a17Must(t, "policy", admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	calls := map[string]func() error{
		"AtomicLong.Add":      func() error { return a18Err(c.AtomicLong("oom").Add(ctx, 1)) },
		"AtomicLong.Store":    func() error { return c.AtomicLong("oom").Store(ctx, 1) },
		"AtomicLong.CAS":      func() error { return a18Err(c.AtomicLong("oom").CompareAndSwap(ctx, 0, 1)) },
		"BitSet.Set":          func() error { return a18Err(c.BitSet("oom").Set(ctx, 1)) },
		"BitSet.SetRange":     func() error { return c.BitSet("oom").SetRange(ctx, 1, 99) },
		"BitSet.SetBytes":     func() error { return c.BitSet("oom").SetBytes(ctx, []byte("x")) },
		"HyperLogLog.Add":     func() error { return a18Err(c.HyperLogLog("oom").Add(ctx, "x")) },
		"BloomFilter.Add":     func() error { return a18Err(f.Add(ctx, "x")) },
		"BloomFilter.TryInit": func() error { return a18Err(c.BloomFilter("oom2").TryInit(ctx, 10, 0.1)) },
	}
	for name, call := range calls {
		err := call()
		if err == nil {
			t.Errorf("%s under OOM succeeded", name)
			continue
		}
		if errors.Is(err, redisson.ErrWrongType) || errors.Is(err, redisson.ErrOutOfRange) || errors.Is(err, redisson.ErrNotInitialized) {
			t.Errorf("%s under OOM = %v: matches a sentinel", name, err)
		}
	}
}
