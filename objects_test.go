package redisson_test

// Behaviour common to the data objects (AtomicLong, BitSet, BloomFilter, HyperLogLog): handles,
// error mapping, lost replies, script reloads.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// objectLostReplies runs the non-idempotent mutations of every data object through c with their
// reply dropped by p, and checks that each was applied exactly once (admin reads the server
// directly).
func objectLostReplies(t *testing.T, admin *redis.Client, p *redistest.Proxy, c *redisson.Client) {
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
	if v, err := admin.Exists(ctx, "lr").Result(); err != nil || v != 0 {
		t.Errorf("after GetAndDelete lost its reply: exists %d, %v", v, err)
	}
	// Not twice is no change: the lost Not must have flipped exactly once.
	lost("Not", func() error { return b.Not(ctx) })
	if got, err := b.Bytes(ctx); err != nil || !bytes.Equal(got, []byte{0x0F}) {
		t.Errorf("after Not lost its reply: %x, %v; want 0f (flipped once)", got, err)
	}
	mustDo(t, "SetBytes", admin.Set(ctx, "lr-bits:x", []byte{0xFF}, 0).Err())
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

// Every non-idempotent mutation of every data object whose reply is lost fails with the network
// error (it is not re-sent) and was applied exactly once: AtomicLong Add, Swap, SetIfGreater,
// GetAndDelete; BitSet Not, Xor, AddField, SetField, SetRange; HyperLogLog AddMany; BloomFilter
// AddMany of several calls (each call all or nothing) and Delete.
func TestObjectsLostReplyEveryMutationAppliedOnce(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }) // default MaxRetries
	objectLostReplies(t, admin, p, newClient(t, rdb))
}

// The same in the replica-acknowledged mode (the pipeline with WAIT, on a master with a replica).
func TestObjectsLostReplyEveryMutationAppliedOnceAcked(t *testing.T) {
	long(t)
	t.Parallel()
	r := redistest.StartReplicated(t)
	admin := r.Master.Client(t)
	p := redistest.NewProxy(t, r.Master.Addr())
	rdb := r.Master.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	objectLostReplies(t, admin, p, newClient(t, rdb, redisson.WithReplicaAcks(1, 2e9)))
}

// Nil and zero data-object handles, handles of a nil Client, nil contexts and bad names fail every
// call with ErrInvalidArgument, and handles of a closed Client with ErrClosed: no panic, the
// documented errors.
func TestObjectsNilZeroAndClosedHandles(t *testing.T) {
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
	mustDo(t, "Close", c.Close())
	check("closed Client", calls(c.AtomicLong("x"), c.BitSet("x"), c.BloomFilter("x"), c.HyperLogLog("x"), ctx), redisson.ErrClosed)
}

// After SCRIPT FLUSH, multi-call pipelines (BloomFilter.AddMany and ContainsMany, plain and
// replica-acknowledged mode) and lone scripts (AtomicLong.CompareAndSwap) load their scripts and
// send every call again, once.
func TestObjectsScriptFlushSendsAgainOnce(t *testing.T) {
	long(t)
	t.Parallel()
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
		mustDo(t, "SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
		if _, err := f.TryInit(ctx, 50000, 0.01); err != nil {
			t.Fatalf("%s: TryInit after SCRIPT FLUSH: %v", mode, err)
		}
		el := make([]string, 6000) // 6000 × 7 indices: 6 script calls
		for i := range el {
			el[i] = fmt.Sprint(mode, i)
		}
		mustDo(t, "SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
		n, err := f.AddMany(ctx, el)
		if err != nil || n < 5990 {
			t.Fatalf("%s: AddMany after SCRIPT FLUSH = %d, %v", mode, n, err)
		}
		mustDo(t, "SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
		got, err := f.ContainsMany(ctx, el)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range got {
			if !ok {
				t.Fatalf("%s: element %d not contained", mode, i)
			}
		}
		mustDo(t, "SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
		if ok, err := a.CompareAndSwap(ctx, 0, 5); err != nil || !ok {
			t.Fatalf("%s: CompareAndSwap after SCRIPT FLUSH = %v, %v", mode, ok, err)
		}
		if ok, err := a.CompareAndSwap(ctx, 0, 6); err != nil || ok {
			t.Fatalf("%s: second CompareAndSwap(0, 6) = %v, %v; want false", mode, ok, err)
		}
	}
}

// Redis errors map to the data objects' sentinels exactly: ErrWrongType only for WRONGTYPE,
// INCRBY's "value is not an integer" and INVALIDOBJ; ErrOutOfRange only for INCRBY's overflow;
// other Redis errors (OOM) match no sentinel.
func TestObjectsErrorMapping(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	a := c.AtomicLong("al")
	for _, s := range []string{"abc", "1.5", "99999999999999999999", " 1"} {
		mustDo(t, "SET", admin.Set(ctx, "al", s, 0).Err())
		if _, err := a.Add(ctx, 1); !errors.Is(err, redisson.ErrWrongType) || errors.Is(err, redisson.ErrOutOfRange) {
			t.Errorf("Add on %q = %v; want ErrWrongType only", s, err)
		}
	}
	mustDo(t, "SET", admin.Set(ctx, "al", "9223372036854775807", 0).Err())
	if _, err := a.Add(ctx, 1); !errors.Is(err, redisson.ErrOutOfRange) || errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Add overflowing = %v; want ErrOutOfRange only", err)
	}
	mustDo(t, "SET", admin.Set(ctx, "al", "-9223372036854775808", 0).Err())
	if _, err := a.Add(ctx, -1); !errors.Is(err, redisson.ErrOutOfRange) {
		t.Errorf("Add underflowing = %v; want ErrOutOfRange", err)
	}
	// OOM: no sentinel.
	f := c.BloomFilter("oomf")
	if _, err := f.TryInit(ctx, 100, 0.01); err != nil {
		t.Fatal(err)
	}
	mustDo(t, "maxmemory", admin.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = admin.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	mustDo(t, "policy", admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	calls := map[string]func() error{
		"AtomicLong.Add":      func() error { return errOnly(c.AtomicLong("oom").Add(ctx, 1)) },
		"AtomicLong.Store":    func() error { return c.AtomicLong("oom").Store(ctx, 1) },
		"AtomicLong.CAS":      func() error { return errOnly(c.AtomicLong("oom").CompareAndSwap(ctx, 0, 1)) },
		"BitSet.Set":          func() error { return errOnly(c.BitSet("oom").Set(ctx, 1)) },
		"BitSet.SetRange":     func() error { return c.BitSet("oom").SetRange(ctx, 1, 99) },
		"BitSet.SetBytes":     func() error { return c.BitSet("oom").SetBytes(ctx, []byte("x")) },
		"HyperLogLog.Add":     func() error { return errOnly(c.HyperLogLog("oom").Add(ctx, "x")) },
		"BloomFilter.Add":     func() error { return errOnly(f.Add(ctx, "x")) },
		"BloomFilter.TryInit": func() error { return errOnly(c.BloomFilter("oom2").TryInit(ctx, 10, 0.1)) },
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
