package redisson_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson"
)

// inspectCase sets up one kind of object under name with c and checks what Inspect reports.
type inspectCase struct {
	name   string
	compat bool // also in Java Redisson's layout (WithRedissonCompat)
	native bool // in this package's layout
	setup  func(t *testing.T, ctx context.Context, c *redisson.Client, name string)
	check  func(t *testing.T, in redisson.Inspection, compat bool)
}

func wantKind(t *testing.T, in redisson.Inspection, k redisson.Kind) {
	t.Helper()
	if in.Kind != k {
		t.Fatalf("Kind = %q, want %q (%+v)", in.Kind, k, in)
	}
}

func wantHolder(t *testing.T, in redisson.Inspection, i, levels int, side string) {
	t.Helper()
	if len(in.Holders) <= i {
		t.Fatalf("Holders = %+v, want at least %d", in.Holders, i+1)
	}
	h := in.Holders[i]
	if h.Owner == "" || h.Levels != levels || h.Side != side || h.Remaining <= 0 || h.Remaining > time.Minute {
		t.Fatalf("Holders[%d] = %+v, want %d levels, side %q, 0 < remaining ≤ 1m", i, h, levels, side)
	}
}

var inspectCases = []inspectCase{
	{name: "nothing", native: true, compat: true,
		setup: func(*testing.T, context.Context, *redisson.Client, string) {},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindNone)
			if in.Holders != nil || in.Waiters != nil || in.TTL != 0 || in.RedisType != "none" {
				t.Fatalf("%+v", in)
			}
		}},
	{name: "lock reentered", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			h := mustLock(t, c.Lock(name), ctx)
			if _, err := h.Reenter(ctx); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, in redisson.Inspection, compat bool) {
			wantKind(t, in, map[bool]redisson.Kind{false: redisson.KindLock, true: redisson.KindRedissonLock}[compat])
			wantHolder(t, in, 0, 2, "")
			if len(in.Holders) != 1 || in.TTL <= 0 {
				t.Fatalf("%+v", in)
			}
		}},
	{name: "fair lock with a waiter", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			l := c.FairLock(name)
			mustLock(t, l, ctx)
			wctx, cancel := context.WithCancel(ctx)
			t.Cleanup(cancel)
			done := make(chan struct{})
			go func() { defer close(done); _, _ = l.Lock(wctx) }()
			t.Cleanup(func() { cancel(); <-done })
			eventually(t, 5*time.Second, "a queued waiter", func() bool {
				in, err := c.Inspect(ctx, name)
				return err == nil && len(in.Waiters) == 1
			})
		},
		check: func(t *testing.T, in redisson.Inspection, compat bool) {
			wantKind(t, in, map[bool]redisson.Kind{false: redisson.KindFairLock, true: redisson.KindRedissonFairLock}[compat])
			wantHolder(t, in, 0, 1, "")
			if len(in.Waiters) != 1 || in.Waiters[0].Owner == "" || in.Waiters[0].Owner == in.Holders[0].Owner {
				t.Fatalf("Waiters = %+v", in.Waiters)
			}
			if !compat && in.Waiters[0].Age <= 0 {
				t.Fatalf("waiter's age %v, want > 0", in.Waiters[0].Age)
			}
		}},
	{name: "fenced lock", native: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			l := c.FencedLock(name)
			h := mustLock(t, l, ctx)
			if err := h.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			mustLock(t, l, ctx)
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindFencedLock)
			wantHolder(t, in, 0, 1, "")
			if in.FencingToken < 2 || in.Holders[0].Token != in.FencingToken {
				t.Fatalf("token %d, counter %d: want the holder's token = the counter ≥ 2", in.Holders[0].Token, in.FencingToken)
			}
		}},
	{name: "spin lock", native: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			mustLock(t, c.SpinLock(name), ctx, redisson.WithLease(time.Minute))
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindSpinLock)
			wantHolder(t, in, 0, 1, "")
		}},
	{name: "read-write lock with two readers", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			l := c.ReadWriteLock(name)
			h, err := l.RLock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Reenter(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := l.RLock(ctx); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, in redisson.Inspection, compat bool) {
			wantKind(t, in, map[bool]redisson.Kind{false: redisson.KindReadWriteLock, true: redisson.KindRedissonReadWriteLock}[compat])
			if len(in.Holders) != 2 {
				t.Fatalf("Holders = %+v", in.Holders)
			}
			a, b := in.Holders[0], in.Holders[1]
			if a.Levels+b.Levels != 3 || a.Side != "read" || b.Side != "read" {
				t.Fatalf("Holders = %+v, want two readers with 2 and 1 levels", in.Holders)
			}
		}},
	{name: "read-write lock with a waiting writer", native: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			l := c.ReadWriteLock(name)
			if _, err := l.RLock(ctx); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _, _ = l.Lock(wctx) }()
			t.Cleanup(func() { cancel(); <-done })
			eventually(t, 5*time.Second, "a waiting writer", func() bool {
				in, err := c.Inspect(ctx, name)
				return err == nil && len(in.Waiters) == 1
			})
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindReadWriteLock)
			wantHolder(t, in, 0, 1, "read")
			if w := in.Waiters; len(w) != 1 || w[0].Side != "write" || w[0].Expires <= 0 {
				t.Fatalf("Waiters = %+v, want one writer", w)
			}
		}},
	{name: "semaphore with a waiter", native: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			s := c.Semaphore(name)
			if _, err := s.TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			if err := s.Acquire(ctx, 1); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = s.Acquire(wctx, 5) }()
			t.Cleanup(func() { cancel(); <-done })
			eventually(t, 5*time.Second, "a waiting acquisition", func() bool {
				in, err := c.Inspect(ctx, name)
				return err == nil && len(in.Waiters) == 1
			})
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindSemaphore)
			if in.Value != 2 || in.Waiters[0].Permits != 5 || in.Waiters[0].Expires <= 0 {
				t.Fatalf("%+v, want 2 permits and a waiter for 5", in)
			}
		}},
	{name: "semaphore without waiters", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			if _, err := c.Semaphore(name).TrySetPermits(ctx, 7); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindInteger) // the permits alone are an integer, as an AtomicLong's
			if in.Value != 7 || in.TTL != -1 {
				t.Fatalf("%+v", in)
			}
		}},
	{name: "permit semaphore", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			p := c.PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			ids, err := p.Acquire(ctx, 2, redisson.WithLease(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			inspectIDs[name] = ids
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindPermitSemaphore)
			if in.Value != 1 || len(in.Leases) != 2 {
				t.Fatalf("%+v, want 1 permit and 2 leases", in)
			}
			ids := inspectIDs[in.Name]
			for _, l := range in.Leases {
				if (l.ID != ids[0] && l.ID != ids[1]) || l.Remaining <= 0 || l.Remaining > time.Minute {
					t.Fatalf("lease %+v, want one of %q with 0 < remaining ≤ 1m", l, ids)
				}
			}
		}},
	{name: "count-down latch", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			l := c.CountDownLatch(name)
			if _, err := l.TrySetCount(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := l.CountDown(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := l.TrySetCount(ctx, 3); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindCountDownLatch)
			if in.Value != 3 || in.Rounds != 1 {
				t.Fatalf("%+v, want count 3 after 1 round", in)
			}
		}},
	{name: "atomic long", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			if err := c.AtomicLong(name).Store(ctx, -42); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) {
			wantKind(t, in, redisson.KindInteger)
			if in.Value != -42 {
				t.Fatalf("%+v", in)
			}
		}},
	{name: "hyperloglog", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			if _, err := c.HyperLogLog(name).Add(ctx, "x"); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) { wantKind(t, in, redisson.KindHyperLogLog) }},
	{name: "bloom filter", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			if _, err := c.BloomFilter(name).TryInit(ctx, 100, 0.01); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) { wantKind(t, in, redisson.KindBloomFilter) }},
	{name: "bitset", native: true, compat: true,
		setup: func(t *testing.T, ctx context.Context, c *redisson.Client, name string) {
			if _, err := c.BitSet(name).Set(ctx, 3); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, in redisson.Inspection, _ bool) { wantKind(t, in, redisson.KindString) }},
}

// inspectIDs passes the permit ids a case acquired to its check, by name.
var inspectIDs = map[string][]string{}

// Inspect tells every kind apart and reads its state, in this package's layouts and in Java
// Redisson's (WithRedissonCompat), under a key prefix.
func TestInspectEveryKind(t *testing.T) {
	for _, compat := range []bool{false, true} {
		opts := []redisson.Option{redisson.WithKeyPrefix("app:")}
		layout := "native"
		if compat {
			opts, layout = append(opts, redisson.WithRedissonCompat()), "compat"
		}
		c, admin, _ := setup(t, opts...)
		for _, tc := range inspectCases {
			if (compat && !tc.compat) || (!compat && !tc.native) {
				continue
			}
			t.Run(layout+"/"+tc.name, func(t *testing.T) {
				ctx := t.Context()
				name := layout + ":" + tc.name
				tc.setup(t, ctx, c, name)
				in, err := c.Inspect(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if in.Name != name || in.Key != "app:"+name {
					t.Fatalf("Name %q, Key %q", in.Name, in.Key)
				}
				tc.check(t, in, compat)
			})
		}
		_ = admin
	}
}

// Inspect reports a value of another Redis type as KindOther, and refuses a bad name.
func TestInspectForeignAndInvalid(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	admin.RPush(ctx, "a list", "x")
	in, err := c.Inspect(ctx, "a list")
	if err != nil || in.Kind != redisson.KindOther || in.RedisType != "list" {
		t.Fatalf("Inspect(list) = %+v, %v", in, err)
	}
	admin.HSet(ctx, "a hash", "f", "v", "g", "w")
	if in, err := c.Inspect(ctx, "a hash"); err != nil || in.Kind != redisson.KindOther {
		t.Fatalf("Inspect(hash) = %+v, %v", in, err)
	}
	if _, err := c.Inspect(ctx, "a{b"); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("Inspect(a{b) = %v, want ErrInvalidArgument", err)
	}
}

// Inspect writes nothing into data this package did not write, even a hash whose fields look like
// a ReadWriteLock's counters (the ReadWriteLock's clean-up is for ReadWriteLock hashes only).
func TestInspectChangesNoForeignHash(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	for name, fields := range map[string][]string{
		"counter": {"nr", "3"},
		"seq":     {"seq", "17", "nww", "2"},
		"mixed":   {"nr", "1", "f", "v"},
	} {
		admin.HSet(ctx, name, fields)
		before := admin.HGetAll(ctx, name).Val()
		in, err := c.Inspect(ctx, name)
		if err != nil {
			t.Fatalf("Inspect(%s): %v", name, err)
		}
		after := admin.HGetAll(ctx, name).Val()
		if len(after) != len(before) {
			t.Fatalf("Inspect(%s) changed the hash %v into %v", name, before, after)
		}
		for f, v := range before {
			if after[f] != v {
				t.Fatalf("Inspect(%s) changed the hash %v into %v", name, before, after)
			}
		}
		if ttl := admin.PTTL(ctx, name).Val(); ttl != -1 {
			t.Fatalf("Inspect(%s) gave the hash a TTL %v", name, ttl)
		}
		if in.Kind == redisson.KindReadWriteLock { // {nr = 3} is a Java RLock's format: owner "nr", 3 levels
			t.Fatalf("Inspect(%s).Kind = %q", name, in.Kind)
		}
	}
}

// Inspect changes no key of the kinds that have no clean-up (locks with waiters queued, a fenced
// lock's counter, a semaphore's leases, a latch): every key dumps the same before and after.
func TestInspectWritesNothing(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	mustLock(t, c.Lock("plain"), ctx)
	mustLock(t, c.FairLock("fair"), ctx)
	mustLock(t, c.FencedLock("fenced"), ctx)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queued := make(chan struct{})
	go func() {
		defer close(queued)
		_, _ = c.FairLock("fair").Lock(wctx)
	}()
	p := c.PermitExpirableSemaphore("sem")
	if _, err := p.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CountDownLatch("gate").TrySetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the waiter to queue", func() bool {
		in, err := c.Inspect(ctx, "fair")
		return err == nil && len(in.Waiters) == 1
	})
	dump := func() map[string]string {
		m := map[string]string{}
		for _, k := range dataKeysOf(t, ctx, admin) {
			if strings.HasSuffix(k, "qt") { // liveness deadlines, moved by the waiter's Client's heartbeats
				continue
			}
			m[k] = admin.Dump(ctx, k).Val()
		}
		return m
	}
	before := dump()
	for _, name := range []string{"plain", "fair", "fenced", "sem", "gate", "nothing"} {
		if _, err := c.Inspect(ctx, name); err != nil {
			t.Fatalf("Inspect(%s): %v", name, err)
		}
	}
	after := dump()
	if len(after) != len(before) {
		t.Fatalf("keys before %d, after %d", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("Inspect changed key %q", k)
		}
	}
	cancel()
	<-queued
}

// On a Client made WithRedissonCompat a FencedLock is Redisson's RFencedLock, whose counter is
// "redisson_lock_token:{<key>}": Inspect reports that counter as FencingToken (the last token
// issued, as documented), as it does the native FencedLock's counter.
func TestInspectCompatFencedLockToken(t *testing.T) {
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	ctx := t.Context()
	const name = "inspect-cfenced"
	l := c.FencedLock(name)
	mustUnlock(t, mustLock(t, l, ctx))
	h := mustLock(t, l, ctx)
	if counter, _ := admin.Get(ctx, "redisson_lock_token:{"+name+"}").Int64(); counter != h.Token() || h.Token() < 2 {
		t.Fatalf("precondition: token %d, Redisson's counter %d; want equal, ≥ 2", h.Token(), counter)
	}
	in, err := c.Inspect(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	wantHolder(t, in, 0, 1, "")
	if in.FencingToken != h.Token() {
		t.Errorf("Inspect FencingToken = %d; want Redisson's counter, the last token issued (%d)", in.FencingToken, h.Token())
	}
	mustUnlock(t, h)
}
