package redisson_test

// Attack 19: BloomFilter adds without a script (review 18's change): bits keyed by their parameters
// ("<key>:~bf:<m>:<k>"), an add a MULTI of HMGET + BITFIELD SET checked on the reply, "drop" of a
// stale Client's bits, TryInit deleting leftovers; execOnce in plain and acked mode.
//
// Tests marked "passing" are attacks the code withstands; the others documented a defect, each fixed
// in review 19:
//   - TryInitOOMWithLeftovers: with bits left under its key, TryInit's DEL lifted the OOM check and
//     the configuration was written under maxmemory/noeviction (now HSET comes first).
//   - LostReplyAfterDeleteLeavesBits / CanceledBeforeDropLeavesBits: a stale add whose reply was
//     lost, or whose ctx ended before the drop, left a bits key nobody reads or deletes (now every
//     call that finds the parameters stale drops their bits, with a context of its own).
//   - ForeignUnderCachedParams(Acked), "half config": a hash with only bits/hashes/hash matching the
//     cached parameters was accepted by Add/Contains (now adds and lookups decode all five fields).
//   - ClusterMoved: an acked add after its slot moved failed with EXECABORT (now the refusal of a
//     queued command is followed: slot map reloaded, transaction sent again).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// a19Bits is the bits key of filter name sized for (n, p).
func a19Bits(t *testing.T, name string, n int64, p float64) string {
	t.Helper()
	m, k, err := redisson.BloomSize(n, p)
	a17Must(t, "BloomSize", err)
	return "{" + name + "}:~bf:" + strconv.FormatInt(m, 10) + ":" + strconv.Itoa(k)
}

// a19BitsKeys lists the bits keys of every filter on the server.
func a19BitsKeys(t *testing.T, admin redis.UniversalClient) []string {
	t.Helper()
	keys, err := admin.Keys(context.Background(), "*:~bf:*").Result()
	a17Must(t, "KEYS", err)
	return keys
}

// a19Hook runs after (if set) after each pipeline containing a BITFIELD (an add's MULTI), with the
// pipeline's context.
type a19Hook struct {
	after atomic.Pointer[func(ctx context.Context)]
}

func (h *a19Hook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *a19Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *a19Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
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

// passing: Under OOM (maxmemory 1, noeviction) an add's BITFIELD is refused at queue time and EXEC answers
// EXECABORT: Add must fail with that plain Redis error (not a configuration error), nothing written;
// TryInit likewise.
func TestAttack19BloomOOM(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	f := c.BloomFilter("oom")
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	before := a18Snapshot(t, admin)
	a17Must(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	a17Must(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory", "1").Err())
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
	c2 := newClient(t, srv19(admin))
	if _, err := c2.BloomFilter("oom").Add(ctx, "z"); err == nil || errors.Is(err, redisson.ErrConfigMismatch) {
		t.Errorf("Add by a fresh Client under OOM = %v; want the plain OOM error", err)
	}
	if d := a18SameKeys(before, a18Snapshot(t, admin)); d != "" {
		t.Errorf("under OOM the keys changed: %s", d)
	}
}

// srv19 returns a new client to admin's server.
func srv19(admin *redis.Client) *redis.Client {
	o := *admin.Options()
	return redis.NewClient(&o)
}

// TryInit under OOM when bits are left under its parameters' key (a Client's add after Delete whose
// reply was lost, see TestAttack19LostReplyAfterDeleteLeavesBits): its DEL lifts the OOM check, and
// the configuration is written although Redis is out of memory.
func TestAttack19BloomTryInitOOMWithLeftovers(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	bits := a19Bits(t, "left", 1000, 0.01)
	a17Must(t, "SET", admin.Set(ctx, bits, "\xff", 0).Err())
	a17Must(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	a17Must(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { admin.ConfigSet(context.Background(), "maxmemory", "0") })
	ok, err := c.BloomFilter("left").TryInit(ctx, 1000, 0.01)
	if err == nil {
		t.Errorf("TryInit under OOM with leftover bits = %v, nil; want an OOM error, nothing written (config written: %v)",
			ok, admin.Exists(ctx, "{left}").Val() == 1)
	}
}

// A Client whose cached parameters are stale (the filter was deleted by another Client) adds, and
// the reply to its MULTI is lost: the bits went to its parameters' key with no configuration, and no
// drop runs. The key stays for good (unless a TryInit with the same parameters comes).
func TestAttack19LostReplyAfterDeleteLeavesBits(t *testing.T) {
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
	stale := a19Bits(t, "lost", 1000, 0.01)
	if n := admin.Exists(ctx, stale).Val(); n != 0 {
		t.Errorf("after a stale add lost its reply (and a later successful add), %s is left behind: garbage no one reads or deletes; keys %v",
			stale, a19BitsKeys(t, admin))
	}
}

// The same with the context ending between the add's EXEC and the drop (a caller's deadline, not
// a dead Client): the drop is not sent and the stale bits stay.
func TestAttack19CanceledBeforeDropLeavesBits(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdb := srv.Client(t)
	h := &a19Hook{}
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
	if keys := a19BitsKeys(t, admin); len(keys) != 0 {
		t.Errorf("Add cancelled after its EXEC (error %v) left stale bits %v behind (drop not sent: ctx ended)", err, keys)
	}
}

// Foreign objects replace the filter under a Client with cached parameters: every add and lookup
// fails with ErrWrongType and leaves the server as it was (no bits key), plain and acked.
func a19ForeignKinds(t *testing.T, c *redisson.Client, admin *redis.Client, setupC *redisson.Client) {
	ctx := t.Context()
	kinds := []struct {
		name string
		make func(key, name string)
	}{
		{"string", func(key, _ string) { a17Must(t, "SET", admin.Set(ctx, key, "v", 0).Err()) }},
		{"list", func(key, _ string) { a17Must(t, "RPUSH", admin.RPush(ctx, key, "v").Err()) }},
		{"foreign hash", func(key, _ string) { a17Must(t, "HSET", admin.HSet(ctx, key, "f", "v").Err()) }},
		{"lock", func(_, name string) { mustLock(t, setupC.Lock(name), ctx) }},
		{"atomiclong", func(_, name string) { a17Must(t, "AtomicLong", a18Err(setupC.AtomicLong(name).Add(ctx, 3))) }},
		{"half config", func(key, _ string) {
			m, k, _ := redisson.BloomSize(1000, 0.01)
			a17Must(t, "HSET", admin.HSet(ctx, key, "bits", m, "hashes", k, "hash", "xxh3-128").Err())
		}},
	}
	for i, kind := range kinds {
		name := "foreign" + strconv.Itoa(i)
		key := "{" + name + "}"
		f := c.BloomFilter(name)
		if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Add(ctx, "warm"); err != nil {
			t.Fatal(err)
		}
		a17Must(t, "DEL", admin.Del(ctx, key, a19Bits(t, name, 1000, 0.01)).Err())
		kind.make(key, name)
		before := a18Snapshot(t, admin)
		_, err := f.AddMany(ctx, []string{"a", "b"})
		if !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: AddMany with stale parameters = %v; want ErrWrongType", kind.name, err)
		}
		if d := a18SameKeys(before, a18Snapshot(t, admin)); d != "" {
			t.Errorf("%s: AddMany changed the server: %s", kind.name, d)
		}
		// Again with the Client's parameters cached anew: Contains, Add by a fresh handle.
		if _, err := c.BloomFilter(name).Contains(ctx, "a"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: Contains = %v; want ErrWrongType", kind.name, err)
		}
		if _, err := c.BloomFilter(name).Add(ctx, "a"); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s: Add (no cache) = %v; want ErrWrongType", kind.name, err)
		}
		if d := a18SameKeys(before, a18Snapshot(t, admin)); d != "" {
			t.Errorf("%s: Contains/Add changed the server: %s", kind.name, d)
		}
	}
}

func TestAttack19BloomForeignUnderCachedParams(t *testing.T) {
	srv := redistest.Start(t)
	a19ForeignKinds(t, newClient(t, srv.Client(t)), srv.Client(t), newClient(t, srv.Client(t)))
}

func TestAttack19BloomForeignUnderCachedParamsAcked(t *testing.T) {
	r := redistest.StartReplicated(t)
	a19ForeignKinds(t, newClient(t, r.Master.Client(t), redisson.WithReplicaAcks(1, 2e9)), r.Master.Client(t),
		newClient(t, r.Master.Client(t)))
}

// A stale Client's add is interleaved (between its EXEC and its drop) with Delete, TryInit with the
// stale Client's own parameters and an add by a third Client: the drop must keep the live bits, and
// both elements are found; no garbage.
func a19StaleInterleave(t *testing.T, opts ...redisson.Option) {
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdb := srv.Client(t)
	h := &a19Hook{}
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
	if keys := a19BitsKeys(t, admin); len(keys) != 1 || keys[0] != a19Bits(t, "il", 1000, 0.01) {
		t.Errorf("bits keys %v; want only the live one", keys)
	}
}

// passing: the interleaving, plain.
func TestAttack19StaleAddInterleaved(t *testing.T) { a19StaleInterleave(t) }

// passing: the interleaving, acked (execOnce by hand).
func TestAttack19StaleAddInterleavedAcked(t *testing.T) {
	// acked on a standalone server with 0 replicas required: execOnce's by-hand MULTI path.
	a19StaleInterleave(t, redisson.WithReplicaAcks(0, time.Second))
}

// passing: Churn: Clients add unique elements while another Client deletes and re-makes the filter with one
// of two parameter sets (for the first half of the adds). Every element whose Add returned nil while no Delete was in flight or
// later must be found at the end; no bits key but the live one remains.
func TestAttack19ChurnNoFalseNegatives(t *testing.T) {
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
	keys := a19BitsKeys(t, admin)
	if cfg, err := f.Config(ctx); err == nil {
		want := a19Bits(t, "churn", cfg.Insertions, cfg.FalsePositiveRate)
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

// passing: Lost replies on adds, acked mode: an AddMany whose reply (EXEC + WAIT) is lost fails, nothing is
// re-sent, and the elements are in (applied once).
func TestAttack19LostReplyAcked(t *testing.T) {
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

// Cluster: adds and lookups plain and acked, then the filter's slot migrates to another master and a
// Client with the old slot map adds (MOVED) plain and acked.
func TestAttack19ClusterMoved(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	cl := sharedCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	admin := cl.Client(t)
	plain := newClient(t, cl.Client(t))
	acked := newClient(t, cl.Client(t), redisson.WithReplicaAcks(1, 2*time.Second))
	name := fmt.Sprintf("a19mv%d", rand.N(1<<30))
	for i, c := range []*redisson.Client{plain, acked} {
		f := c.BloomFilter(name)
		if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
			t.Fatal(err)
		}
		if _, err := f.AddMany(ctx, []string{"p" + strconv.Itoa(i), "q" + strconv.Itoa(i)}); err != nil {
			t.Fatalf("client %d AddMany = %v", i, err)
		}
		if ok, err := f.Contains(ctx, "p"+strconv.Itoa(i)); err != nil || !ok {
			t.Fatalf("client %d Contains = %v, %v", i, ok, err)
		}
	}
	src, slot := a7SlotMaster(t, ctx, admin, "{"+name+"}")
	masters, err := cl.Masters(ctx)
	a17Must(t, "masters", err)
	var dst string
	for _, m := range masters {
		if m != src {
			dst = m
			break
		}
	}
	a17Must(t, "migrate", cl.MigrateSlot(ctx, int(slot), dst))
	t.Cleanup(func() { _ = cl.MigrateSlot(context.Background(), int(slot), src) })
	for i, c := range []*redisson.Client{plain, acked} {
		f := c.BloomFilter(name)
		el := "after" + strconv.Itoa(i)
		if _, err := f.Add(ctx, el); err != nil {
			t.Errorf("client %d (acked=%v) Add after its slot moved = %v", i, i == 1, err)
			continue
		}
		if ok, err := f.Contains(ctx, el); err != nil || !ok {
			t.Errorf("client %d Contains after move = %v, %v", i, ok, err)
		}
	}
}
