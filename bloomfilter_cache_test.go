package redisson_test

// A BloomFilter's parameters cached by a Client going stale: the filter deleted, made again or
// replaced by another kind of object by another Client.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// Client A has the filter's parameters cached; Client B deletes the filter and makes it again with
// other parameters, then adds. A's lookups have no false negatives for B's elements, A's adds (one
// call and many calls) land in the new filter with its parameters, and B sees them.
func TestBloomFilterReinitWhileCached(t *testing.T) {
	long(t)
	t.Parallel()
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
	mustDo(t, "A.ContainsMany", err)
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
	mustDo(t, "B.ContainsMany", err)
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

// A filter deleted (by another Client) and not made again: every call of a Client with the
// parameters cached fails with ErrNotInitialized (never a panic, never an answer) and creates
// nothing. Bits left without a configuration (deleted by hand) are garbage: calls report
// ErrNotInitialized, Delete removes them and reports false, and TryInit over garbage bits removes
// them and starts empty.
func TestBloomFilterDeletedNotRecreated(t *testing.T) {
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
		for _, op := range bloomOps[1:] { // all but TryInit
			if err := op.run(ctx, c, "gone"); !errors.Is(err, redisson.ErrNotInitialized) {
				t.Errorf("%s: %s = %v; want ErrNotInitialized", when, op.name, err)
			}
		}
		if keys, _ := admin.Keys(ctx, "*gone*").Result(); len(keys) != 0 {
			n := len(keys)
			t.Errorf("%s: the calls created %d keys", when, n)
		}
	}
	check("after Delete")
	// Config cached again? Re-cache through a fresh TryInit + Delete, then try each op on a fresh handle.
	if _, err := f.TryInit(ctx, 50, 0.03); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Del(ctx, "gone").Result(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.TryInit(ctx, 50, 0.03); !errors.Is(err, redisson.ErrWrongType) && err != nil {
		t.Errorf("TryInit with an empty bitmap absent = %v", err)
	}
	mustDo(t, "Delete", errOnly(f.Delete(ctx)))
	// Now bits without a configuration.
	if _, err := f.TryInit(ctx, 50, 0.03); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "z"); err != nil {
		t.Fatal(err)
	}
	mustDo(t, "DEL config", admin.Del(ctx, "gone").Err())
	// The bits are keyed by their parameters, and bits without a configuration are garbage
	// under the package's namespace: calls report ErrNotInitialized (a stale add removes what
	// it wrote, and the bits beside it), TryInit removes what is left and starts empty.
	for _, op := range bloomOps[1:] {
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
	mustDo(t, "SET garbage", admin.SetBit(ctx, bitsKey, 3, 1).Err())
	if ok, err := f.TryInit(ctx, 50, 0.03); err != nil || !ok {
		t.Errorf("TryInit over garbage bits = %v, %v; want true", ok, err)
	}
	if n, _ := admin.Exists(ctx, bitsKey).Result(); n != 0 {
		t.Error("TryInit kept garbage bits")
	}
	mustDo(t, "Delete", errOnly(f.Delete(ctx)))
	if ok, err := f.TryInit(ctx, 50, 0.03); err != nil || !ok {
		t.Errorf("TryInit after Delete = %v, %v", ok, err)
	}
}

// Lookups under churn: one Client deletes and re-creates a filter with alternating parameters and
// adds a fixed set (one script call: atomic) while two other Clients look it up; a second filter
// only ever grows. Lookups must never panic nor fail with an undocumented error; on the growing
// filter every element whose Add returned before the lookup began is found; at the end, every
// Client (stale caches) finds the whole set in the final filter.
func TestBloomFilterLookupsUnderChurn(t *testing.T) {
	long(t)
	t.Parallel()
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
				// ErrConfigMismatch: made again twice during the lookup (documented). ErrWrongType (a
				// load's reads racing a TryInit) fails the test.
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

// bloomWriterAndHookedReader starts a server and returns a Client w, a Client r whose connection has
// a bloomLoadHook, and that hook.
func bloomWriterAndHookedReader(t *testing.T) (w, r *redisson.Client, h *bloomLoadHook) {
	t.Helper()
	srv := redistest.Start(t)
	w = newClient(t, srv.Client(t))
	h = &bloomLoadHook{}
	return w, hookedClient(t, srv, h), h
}

// A lookup during which the filter is made again twice (by another Client, between the lookup's
// round trips, forced by a hook on the looking-up Client's connection) fails with ErrConfigMismatch
// or ErrNotInitialized, documented errors of Contains and ContainsMany, or answers true: never
// another error, never false for an element in the filter.
func TestBloomFilterLookupDuringDoubleReinit(t *testing.T) {
	ctx := t.Context()
	w, r, h := bloomWriterAndHookedReader(t)
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
	// ErrConfigMismatch is among Contains's documented errors (the filter made again twice).
	if err != nil && !errors.Is(err, redisson.ErrConfigMismatch) && !errors.Is(err, redisson.ErrNotInitialized) {
		t.Errorf("Contains = %v", err)
	} else if err == nil && !ok {
		t.Errorf("Contains = false for an element in the filter (unchanged since the lookup's last read)")
	}
}

// bloomLoadHook runs before (if set) before each pipeline the client sends.
type bloomLoadHook struct {
	before atomic.Pointer[func()] // before each pipeline starting with HMGET
	after  atomic.Pointer[func()] // after each single HMGET
}

func (h *bloomLoadHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *bloomLoadHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if f := h.after.Load(); f != nil && cmd.Name() == "hmget" {
			(*f)()
		}
		return err
	}
}

func (h *bloomLoadHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if f := h.before.Load(); f != nil && len(cmds) > 0 && cmds[0].Name() == "hmget" {
			(*f)()
		}
		return next(ctx, cmds)
	}
}

// A Client reading the configuration (Config, or the first Add or Contains) while another Client
// creates the filter never fails with ErrWrongType ("a hash that is not a BloomFilter
// configuration") for a name that only ever held a proper filter: load reads the configuration and
// the key's existence in one MULTI, so a TryInit cannot land between them. The interleaving is
// forced by a hook after the reading Client's HMGET; it also occurs under churn
// (TestBloomFilterLookupsUnderChurn).
func TestBloomFilterLoadRacingTryInitIsNotWrongType(t *testing.T) {
	ctx := t.Context()
	w, r, h := bloomWriterAndHookedReader(t)
	calls := []objectOp{bloomOps[1], bloomOps[3], bloomOps[6]} // Add, Contains, Config
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

// bloomAddHook runs after (if set) after each pipeline containing a BITFIELD (an add's MULTI), with the
// pipeline's context.
type bloomAddHook struct {
	after atomic.Pointer[func(ctx context.Context)]
}

func (h *bloomAddHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *bloomAddHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *bloomAddHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if c.Name() == "bitfield" {
				if f := h.after.Load(); f != nil {
					(*f)(ctx)
				}
				break
			}
		}
		return err
	}
}

// A Client whose cached parameters are stale (another Client deleted the filter and made it with
// other parameters) adds, and the reply to its MULTI is lost: its bits went to the old parameters'
// key, which has no configuration. The next call that finds the parameters stale drops those bits
// (a later lookup and add here), so no key is left that nobody reads or deletes.
func TestBloomFilterStaleAddLostReplyLeavesNoBits(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	other := newClient(t, srv.Client(t))
	f := c.BloomFilter("lost")
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.BloomFilter("lost").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	// Another filter made under the name with other parameters: the garbage is never re-used.
	if _, err := other.BloomFilter("lost").TryInit(ctx, 500, 0.02); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AtomicLong("warm-conn").Load(ctx); err != nil {
		t.Fatal(err)
	}
	p.DropReplies(1)
	if _, err := f.Add(ctx, "x"); err == nil {
		t.Fatal("Add with its reply dropped = nil")
	}
	// A lookup finds the parameters stale and reloads them: the Client forgets it ever wrote under
	// the old ones, and its next add (on the new filter) has nothing to drop.
	if _, err := f.Contains(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	stale := bloomBitsKey(t, "lost", 1000, 0.01)
	if n := admin.Exists(ctx, stale).Val(); n != 0 {
		t.Errorf("after a stale add lost its reply (and a later successful add), %s is left behind: garbage no one reads or deletes; keys %v",
			stale, bloomBitsKeys(t, admin))
	}
}

// A stale add whose caller's context ends between the add's EXEC and the drop of its bits (a
// caller's deadline, not a dead Client) still drops them: the drop runs with a context of its own,
// and no stale bits are left.
func TestBloomFilterStaleAddCanceledLeavesNoBits(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdb := srv.Client(t)
	h := &bloomAddHook{}
	rdb.AddHook(h)
	c := newClient(t, rdb)
	other := newClient(t, srv.Client(t))
	bg := t.Context()
	f := c.BloomFilter("cancel")
	if _, err := f.TryInit(bg, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := other.BloomFilter("cancel").Delete(bg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	fn := func(context.Context) { cancel() }
	h.after.Store(&fn)
	_, err := f.Add(ctx, "x")
	h.after.Store(nil)
	if err == nil {
		t.Fatal("Add with its context cancelled = nil")
	}
	if keys := bloomBitsKeys(t, admin); len(keys) != 0 {
		t.Errorf("Add cancelled after its EXEC (error %v) left stale bits %v behind (drop not sent: ctx ended)", err, keys)
	}
}

// bloomForeignUnderCachedParams replaces filters, under Client c with their parameters cached, by
// other objects (made through admin and setupC): a string, a list, a foreign hash, a Lock, an
// AtomicLong and a half configuration (bits, hashes and hash matching the cached parameters,
// nothing else). Every add and lookup must fail with ErrWrongType and leave the server as it was
// (no bits key).
func bloomForeignUnderCachedParams(t *testing.T, c *redisson.Client, admin *redis.Client, setupC *redisson.Client) {
	ctx := t.Context()
	kinds := []struct {
		name string
		make func(key, name string)
	}{
		{"string", func(key, _ string) { mustDo(t, "SET", admin.Set(ctx, key, "v", 0).Err()) }},
		{"list", func(key, _ string) { mustDo(t, "RPUSH", admin.RPush(ctx, key, "v").Err()) }},
		{"foreign hash", func(key, _ string) { mustDo(t, "HSET", admin.HSet(ctx, key, "f", "v").Err()) }},
		{"lock", func(_, name string) { mustLock(t, setupC.Lock(name), ctx) }},
		{"atomiclong", func(_, name string) { mustDo(t, "AtomicLong", errOnly(setupC.AtomicLong(name).Add(ctx, 3))) }},
		{"half config", func(key, _ string) {
			m, k, _ := redisson.BloomSize(1000, 0.01)
			mustDo(t, "HSET", admin.HSet(ctx, key, "bits", m, "hashes", k, "hash", "xxh3-128").Err())
		}},
	}
	for i, kind := range kinds {
		name := "foreign" + strconv.Itoa(i)
		key := name
		f := c.BloomFilter(name)
		if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Add(ctx, "warm"); err != nil {
			t.Fatal(err)
		}
		mustDo(t, "DEL", admin.Del(ctx, key, bloomBitsKey(t, name, 1000, 0.01)).Err())
		kind.make(key, name)
		before := serverSnapshot(t, admin)
		_, err := f.AddMany(ctx, []string{"a", "b"})
		if !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: AddMany with stale parameters = %v; want ErrWrongType", kind.name, err)
		}
		if d := snapshotDiff(before, serverSnapshot(t, admin)); d != "" {
			t.Errorf("%s: AddMany changed the server: %s", kind.name, d)
		}
		// Again with the Client's parameters cached anew: Contains, Add by a fresh handle.
		if _, err := c.BloomFilter(name).Contains(ctx, "a"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: Contains = %v; want ErrWrongType", kind.name, err)
		}
		if _, err := c.BloomFilter(name).Add(ctx, "a"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: Add (no cache) = %v; want ErrWrongType", kind.name, err)
		}
		if d := snapshotDiff(before, serverSnapshot(t, admin)); d != "" {
			t.Errorf("%s: Contains/Add changed the server: %s", kind.name, d)
		}
	}
}

// Another kind of object replacing a filter under a Client with cached parameters is refused by
// every add and lookup, nothing changed (see bloomForeignUnderCachedParams).
func TestBloomFilterForeignObjectUnderCachedParams(t *testing.T) {
	srv := redistest.Start(t)
	bloomForeignUnderCachedParams(t, newClient(t, srv.Client(t)), srv.Client(t), newClient(t, srv.Client(t)))
}

// The same in the replica-acknowledged mode.
func TestBloomFilterForeignObjectUnderCachedParamsAcked(t *testing.T) {
	r := redistest.StartReplicated(t)
	bloomForeignUnderCachedParams(t, newClient(t, r.Master.Client(t), redisson.WithReplicaAcks(1, 2e9)), r.Master.Client(t),
		newClient(t, r.Master.Client(t)))
}

// bloomStaleAddInterleaved interleaves a stale Client's add, between its EXEC and its drop, with a
// Delete, a TryInit with the stale Client's own parameters and an add by another Client: the drop
// must keep the live bits, both elements are found, and no garbage is left.
func bloomStaleAddInterleaved(t *testing.T, opts ...redisson.Option) {
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdb := srv.Client(t)
	h := &bloomAddHook{}
	rdb.AddHook(h)
	a := newClient(t, rdb, opts...)
	b := newClient(t, srv.Client(t), opts...)
	fa, fb := a.BloomFilter("il"), b.BloomFilter("il")
	if _, err := fa.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	// b re-makes it with other parameters: a's cache is stale.
	if _, err := fb.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fb.TryInit(ctx, 500, 0.02); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	fn := func(context.Context) {
		once.Do(func() {
			// Between a's stale EXEC (bits to key(1000,0.01)) and its drop: delete, re-make with a's
			// parameters, add y.
			if _, err := fb.Delete(ctx); err != nil {
				t.Error(err)
			}
			if _, err := fb.TryInit(ctx, 1000, 0.01); err != nil {
				t.Error(err)
			}
			if _, err := fb.Add(ctx, "y"); err != nil {
				t.Error(err)
			}
		})
	}
	h.after.Store(&fn)
	_, err := fa.Add(ctx, "x")
	h.after.Store(nil)
	if err != nil {
		t.Fatalf("stale Add = %v", err)
	}
	c := newClient(t, srv.Client(t))
	got, err := c.BloomFilter("il").ContainsMany(ctx, []string{"x", "y"})
	if err != nil || !got[0] || !got[1] {
		t.Errorf("after the interleaving ContainsMany(x, y) = %v, %v; want both", got, err)
	}
	if keys := bloomBitsKeys(t, admin); len(keys) != 1 || keys[0] != bloomBitsKey(t, "il", 1000, 0.01) {
		t.Errorf("bits keys %v; want only the live one", keys)
	}
}

// The drop of a stale add keeps the live bits of a filter made again under the same parameters
// meanwhile (see bloomStaleAddInterleaved).
func TestBloomFilterStaleAddInterleaved(t *testing.T) { bloomStaleAddInterleaved(t) }

// The same in the replica-acknowledged mode (execOnce's MULTI sent by hand).
func TestBloomFilterStaleAddInterleavedAcked(t *testing.T) {
	// acked on a standalone server with 0 replicas required: execOnce's by-hand MULTI path.
	bloomStaleAddInterleaved(t, redisson.WithReplicaAcks(0, time.Second))
}

// Churn: Clients add unique elements while another Client deletes the filter and makes it again
// with one of two parameter sets (for the first part of the adds). Every element whose Add returned
// nil with no Delete in flight or after it is found at the end, and no bits key but the live one
// remains.
func TestBloomFilterChurnNoFalseNegatives(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	sizes := []struct {
		n int64
		p float64
	}{{1000, 0.01}, {700, 0.03}}
	churner := newClient(t, srv.Client(t))
	if _, err := churner.BloomFilter("churn").TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	var started, finished, adds atomic.Int64
	stop := make(chan struct{})
	var churnDone sync.WaitGroup
	churnDone.Add(1)
	go func() {
		defer churnDone.Done()
		f := churner.BloomFilter("churn")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if adds.Load() >= 600 {
				return
			}
			started.Add(1)
			if _, err := f.Delete(ctx); err != nil {
				t.Error(err)
			}
			finished.Add(1)
			s := sizes[i%2]
			if _, err := f.TryInit(ctx, s.n, s.p); err != nil && !errors.Is(err, redisson.ErrConfigMismatch) {
				t.Error(err)
			}
		}
	}()
	type rec struct {
		el    string
		epoch int64
	}
	var mu sync.Mutex
	var recs []rec
	var wg sync.WaitGroup
	for w := range 4 {
		c := newClient(t, srv.Client(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := c.BloomFilter("churn")
			for i := range 300 {
				el := fmt.Sprintf("w%d-%d", w, i)
				adds.Add(1)
				s0, f0 := started.Load(), finished.Load()
				var err error
				if i%3 == 0 {
					_, err = f.AddMany(context.Background(), []string{el, el + "b"})
				} else {
					_, err = f.Add(context.Background(), el)
				}
				switch {
				case err == nil:
					if s0 == f0 {
						mu.Lock()
						recs = append(recs, rec{el, s0})
						mu.Unlock()
					}
				case errors.Is(err, redisson.ErrNotInitialized), errors.Is(err, redisson.ErrConfigMismatch):
				default:
					t.Errorf("Add under churn = %v", err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	churnDone.Wait()
	final := started.Load()
	// Make sure the filter exists at the end (the churner may have stopped after a Delete).
	c := newClient(t, srv.Client(t))
	f := c.BloomFilter("churn")
	if _, err := f.Config(ctx); errors.Is(err, redisson.ErrNotInitialized) {
		final++ // nothing qualifies
	}
	checked := 0
	for _, r := range recs {
		if r.epoch != final {
			continue
		}
		checked++
		ok, err := f.Contains(ctx, r.el)
		if err != nil || !ok {
			t.Errorf("%s added (nil) with no Delete after it: Contains = %v, %v", r.el, ok, err)
		}
	}
	t.Logf("%d deletes, %d successful adds, %d checked", final, len(recs), checked)
	keys := bloomBitsKeys(t, admin)
	if cfg, err := f.Config(ctx); err == nil {
		want := bloomBitsKey(t, "churn", cfg.Insertions, cfg.FalsePositiveRate)
		for _, k := range keys {
			if k != want {
				t.Errorf("garbage bits key %s left (live %s)", k, want)
			}
		}
	} else if len(keys) != 0 {
		t.Errorf("no filter, bits keys %v left", keys)
	}
	_ = rand.N[int]
}
