package redisson_test

// A Lock of a Client made WithRedissonCompat against Java Redisson 3.x RLock clients on the same
// Redis, played by the internal/javadouble test double (javaClient below).

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/javadouble"
	"github.com/goredisson/redisson/redistest"
)

// javaClient is one Java Redisson client (the internal/javadouble test double), with the RLock
// calls these tests make on it; thread ids are Java's.
type javaClient struct{ d *javadouble.Client }

// newJavaClient starts a Java client over rdb with lockWatchdogTimeout watchdog, closed when the
// test ends.
func newJavaClient(t *testing.T, rdb redis.UniversalClient, watchdog time.Duration) *javaClient {
	d := javadouble.New(rdb, javadouble.WatchdogTimeout(watchdog))
	t.Cleanup(d.Close)
	return &javaClient{d}
}

// javaChannel is Redisson's lock channel of name.
func javaChannel(name string) string {
	if strings.Contains(name, "{") {
		return "redisson_lock__channel:" + name
	}
	return "redisson_lock__channel:{" + name + "}"
}

// tryLock is RLock.tryLock(0, lease) for thread tid (lease 0: the watchdog's, and the watchdog armed).
func (j *javaClient) tryLock(ctx context.Context, name string, tid int, lease time.Duration) (bool, error) {
	return j.d.Lock(name).TryLock(ctx, int64(tid), 0, lease)
}

// lock is RLock.lock() for thread tid: waits on the channel, the watchdog armed.
func (j *javaClient) lock(ctx context.Context, name string, tid int) error {
	return j.d.Lock(name).Lock(ctx, int64(tid), 0)
}

// unlock is RLock.unlock() for thread tid: an error matching javadouble.ErrIllegalMonitorState if
// the thread does not hold the lock.
func (j *javaClient) unlock(ctx context.Context, name string, tid int) error {
	return j.d.Lock(name).Unlock(ctx, int64(tid))
}

// forceUnlock is RLock.forceUnlock().
func (j *javaClient) forceUnlock(ctx context.Context, name string) (bool, error) {
	return j.d.Lock(name).ForceUnlock(ctx)
}

// compatTopologies runs f on a standalone server, a Cluster and a Sentinel-managed master (the slow
// ones not with -short); rdb returns a new go-redis client over the topology.
func compatTopologies(t *testing.T, f func(t *testing.T, rdb func() redis.UniversalClient, name string)) {
	for _, top := range topologies {
		if len(top.opts) > 0 {
			continue // the replica-acknowledged variants: the conformance suite runs those
		}
		t.Run(top.name, func(t *testing.T) {
			if top.slow && testing.Short() {
				t.Skip("-short: slow topology")
			}
			name := "compat:" + strings.ReplaceAll(t.Name(), "/", ":")
			f(t, func() redis.UniversalClient { return top.rdb(t) }, name)
		})
	}
}

// compatClient is a Go Client made WithRedissonCompat over rdb.
func compatClient(t *testing.T, rdb redis.UniversalClient, opts ...redisson.Option) *redisson.Client {
	return newClient(t, rdb, append([]redisson.Option{redisson.WithRedissonCompat()}, opts...)...)
}

// The stored format is Redisson's: a HASH at exactly the name, field the owner, value the count, TTL
// the lease; the final unlock publishes "0" on Redisson's channel.
func TestCompatLockStoredFormat(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"goods:1000", "{user:7}:lock"} {
		c, admin, _ := setup(t, redisson.WithRedissonCompat())
		ctx := t.Context()
		sub := admin.Subscribe(ctx, javaChannel(name))
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		h := mustLock(t, c.Lock(name), ctx)
		if typ := admin.Type(ctx, name).Val(); typ != "hash" {
			t.Fatalf("%s: type %q; want hash", name, typ)
		}
		fields := admin.HGetAll(ctx, name).Val()
		if len(fields) != 1 {
			t.Fatalf("%s: fields %v; want one, the owner", name, fields)
		}
		var owner string
		for f, v := range fields {
			owner = f
			if v != "1" {
				t.Fatalf("%s: count %q; want 1", name, v)
			}
		}
		if !strings.Contains(owner, ":") {
			t.Fatalf("%s: owner field %q; want <client id>:<sequence>", name, owner)
		}
		if ttl := admin.PTTL(ctx, name).Val(); ttl <= 20*time.Second || ttl > redisson.DefaultWatchdogTimeout {
			t.Fatalf("%s: TTL %v; want about the watchdog lease %v", name, ttl, redisson.DefaultWatchdogTimeout)
		}
		if keys := dataKeysOf(t, ctx, admin); len(keys) != 1 {
			t.Fatalf("%s: keys %v; want the lock's only", name, keys)
		}
		inner, err := h.Reenter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v := admin.HGet(ctx, name, owner).Val(); v != "2" {
			t.Fatalf("%s: count after a re-entry %q; want 2", name, v)
		}
		if n, err := h.HoldCount(ctx); err != nil || n != 2 {
			t.Fatalf("%s: HoldCount %d, %v; want 2", name, n, err)
		}
		mustUnlock(t, inner)
		if v := admin.HGet(ctx, name, owner).Val(); v != "1" {
			t.Fatalf("%s: count after a partial unlock %q; want 1", name, v)
		}
		mustUnlock(t, h)
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil || msg.Payload != "0" {
			t.Fatalf("%s: message %v, %v; want \"0\" on %s", name, msg, err, javaChannel(name))
		}
		// The unlock latches are deleted once answered (in the background).
		eventually(t, 5*time.Second, "no key left after the release", func() bool { return len(dataKeysOf(t, ctx, admin)) == 0 })
	}
}

// Two Go Clients and two Java clients (two threads each) take one lock in turns, with a shared
// counter: never two inside, and every critical section done.
func TestCompatLockMutualExclusion(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx := t.Context()
		var inside, overlaps, done atomic.Int32
		section := func() {
			if inside.Add(1) > 1 {
				overlaps.Add(1)
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			done.Add(1)
		}
		const rounds = 10
		var wg sync.WaitGroup
		for range 2 {
			c := compatClient(t, rdb())
			for range 2 {
				spawn(&wg, func() {
					for range rounds {
						h, err := c.Lock(name).Lock(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						section()
						if err := h.Unlock(ctx); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
		}
		for range 2 {
			j := newJavaClient(t, rdb(), 30*time.Second)
			for tid := 1; tid <= 2; tid++ {
				spawn(&wg, func() {
					for range rounds {
						if err := j.lock(ctx, name, tid); err != nil {
							t.Error(err)
							return
						}
						section()
						if err := j.unlock(ctx, name, tid); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
		}
		wg.Wait()
		if overlaps.Load() != 0 || done.Load() != 8*rounds {
			t.Fatalf("%d overlaps, %d of %d critical sections", overlaps.Load(), done.Load(), 8*rounds)
		}
	})
}

// A Go waiter is woken by a Java unlock, and a Java waiter by a Go unlock, long before the holder's
// 30s lease would end (and, for Go, its 1 minute re-poll).
func TestCompatLockUnlockWakesOtherSide(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx := t.Context()
		c := compatClient(t, rdb(), redisson.WithRepollInterval(time.Minute))
		j := newJavaClient(t, rdb(), 30*time.Second)

		// Java holds; Go waits; Java unlocks.
		if ok, err := j.tryLock(ctx, name, 1, 0); !ok || err != nil {
			t.Fatalf("Java tryLock: %v, %v", ok, err)
		}
		got, cancel := lockAsync(ctx, c.Lock(name))
		defer cancel()
		eventually(t, 10*time.Second, "the Go waiter to wait", func() bool { return c.Stats().Waiting == 1 })
		eventually(t, 10*time.Second, "the Go waiter to subscribe", func() bool {
			return channelSubscribers(ctx, rdb(), javaChannel(name)) > 0
		})
		if err := j.unlock(ctx, name, 1); err != nil {
			t.Fatal(err)
		}
		r := recvWithin(t, got, 10*time.Second, "the Go waiter to be woken by the Java unlock")
		if r.err != nil {
			t.Fatal(r.err)
		}

		// Go holds; Java waits; Go unlocks.
		jgot := make(chan error, 1)
		go func() { jgot <- j.lock(ctx, name, 2) }()
		eventually(t, 10*time.Second, "the Java waiter to subscribe", func() bool {
			return channelSubscribers(ctx, rdb(), javaChannel(name)) > 0
		})
		mustUnlock(t, r.h)
		if err := recvWithin(t, jgot, 10*time.Second, "the Java waiter to be woken by the Go unlock"); err != nil {
			t.Fatal(err)
		}
		if err := j.unlock(ctx, name, 2); err != nil {
			t.Fatal(err)
		}
	})
}

// channelSubscribers is how many clients are subscribed to channel (sharded on a Cluster).
func channelSubscribers(ctx context.Context, rdb redis.UniversalClient, channel string) int64 {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, channel)
		if err != nil {
			return 0
		}
		n, err := node.Do(ctx, "pubsub", "shardnumsub", channel).Slice()
		if err != nil || len(n) != 2 {
			return 0
		}
		v, _ := n[1].(int64)
		return v
	}
	return rdb.PubSubNumSub(ctx, channel).Val()[channel]
}

// A re-entrant hold (count 2) on one side keeps the other out until it is fully released.
func TestCompatLockReentrantHoldBlocksOtherSide(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx := t.Context()
		c := compatClient(t, rdb())
		j := newJavaClient(t, rdb(), 30*time.Second)
		goTry := func(want bool, what string) {
			t.Helper()
			h, err := c.Lock(name).TryLock(ctx)
			if (err == nil) != want {
				t.Fatalf("%s: Go TryLock = %v; want acquired %v", what, err, want)
			}
			if err == nil {
				mustUnlock(t, h)
			}
		}
		javaTry := func(want bool, what string) {
			t.Helper()
			ok, err := j.tryLock(ctx, name, 9, 0)
			if err != nil || ok != want {
				t.Fatalf("%s: Java tryLock = %v, %v; want %v", what, ok, err, want)
			}
			if ok {
				if err := j.unlock(ctx, name, 9); err != nil {
					t.Fatal(err)
				}
			}
		}
		for range 2 {
			if ok, err := j.tryLock(ctx, name, 1, 0); !ok || err != nil {
				t.Fatalf("Java tryLock: %v, %v", ok, err)
			}
		}
		goTry(false, "Java holds 2")
		if err := j.unlock(ctx, name, 1); err != nil {
			t.Fatal(err)
		}
		goTry(false, "Java holds 1")
		if err := j.unlock(ctx, name, 1); err != nil {
			t.Fatal(err)
		}
		goTry(true, "Java released")

		h := mustLock(t, c.Lock(name), ctx)
		inner, err := h.Reenter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		javaTry(false, "Go holds 2")
		mustUnlock(t, inner)
		javaTry(false, "Go holds 1")
		mustUnlock(t, h)
		javaTry(true, "Go released")
	})
}

// A Go ForceUnlock frees a Java holder's lock and wakes a Java waiter; a Java forceUnlock frees a Go
// holder's (which is told: ErrLockLost) and wakes a Go waiter.
func TestCompatLockForceUnlockAcrossSides(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx := t.Context()
		holder := compatClient(t, rdb(), redisson.WithWatchdogTimeout(time.Second))
		waiter := compatClient(t, rdb(), redisson.WithRepollInterval(time.Minute))
		j1, j2 := newJavaClient(t, rdb(), 30*time.Second), newJavaClient(t, rdb(), 30*time.Second)

		if ok, err := j1.tryLock(ctx, name, 1, 0); !ok || err != nil {
			t.Fatalf("Java tryLock: %v, %v", ok, err)
		}
		jgot := make(chan error, 1)
		go func() { jgot <- j2.lock(ctx, name, 1) }()
		eventually(t, 10*time.Second, "the Java waiter to subscribe", func() bool {
			return channelSubscribers(ctx, rdb(), javaChannel(name)) > 0
		})
		if ok, err := waiter.Lock(name).ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("Go ForceUnlock of a Java hold = %v, %v", ok, err)
		}
		if err := recvWithin(t, jgot, 10*time.Second, "the Java waiter after the Go ForceUnlock"); err != nil {
			t.Fatal(err)
		}
		if err := j1.unlock(ctx, name, 1); err == nil {
			t.Fatal("the force-unlocked Java holder could still unlock")
		}
		if ok, err := j2.forceUnlock(ctx, name); err != nil || !ok {
			t.Fatalf("clean-up: %v, %v", ok, err)
		}

		h := mustLock(t, holder.Lock(name), ctx)
		got, cancel := lockAsync(ctx, waiter.Lock(name))
		defer cancel()
		eventually(t, 10*time.Second, "the Go waiter to wait", func() bool { return waiter.Stats().Waiting == 1 })
		eventually(t, 10*time.Second, "the Go waiter to subscribe", func() bool {
			return channelSubscribers(ctx, rdb(), javaChannel(name)) > 0
		})
		if ok, err := j1.forceUnlock(ctx, name); err != nil || !ok {
			t.Fatalf("Java forceUnlock of a Go hold = %v, %v", ok, err)
		}
		servedAfterJavaForceUnlock(t, got, h, "the Go waiter after the Java forceUnlock")
	})
}

// A FencedLock of a Client made WithRedissonCompat is Java Redisson's RFencedLock: the RLock hash,
// excluding Java holders of the name both ways, and Redisson's token counter beside it: every fresh
// acquisition, Java or Go, increments it, and a Go hold's token is the value it took (re-entry keeps
// it). A MultiLock may have one as a part.
func TestCompatFencedLock(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	ctx := t.Context()
	j := newJavaClient(t, admin, 30*time.Second)
	const name = "cfenced"
	const counter = "redisson_lock_token:{cfenced}"
	counted := func() int64 { n, _ := admin.Get(ctx, counter).Int64(); return n }

	h := mustLock(t, c.FencedLock(name), ctx)
	if typ := admin.Type(ctx, name).Val(); typ != "hash" {
		t.Fatalf("the lock is a %q; want Redisson's hash", typ)
	}
	t1 := h.Token()
	if t1 < 1 || counted() != t1 {
		t.Fatalf("token %d, counter %d; want the counter's new value", t1, counted())
	}
	inner, err := h.Reenter(ctx)
	mustDo(t, "Reenter", err)
	if inner.Token() != t1 || counted() != t1 {
		t.Fatalf("re-entry: token %d, counter %d; want both %d", inner.Token(), counted(), t1)
	}
	mustUnlock(t, inner)
	if ok, err := j.tryLock(ctx, name, 1, 0); ok || err != nil {
		t.Fatalf("Java tryLock on a Go-held RFencedLock = %v, %v; want false", ok, err)
	}
	mustUnlock(t, h)

	// A Java RFencedLock acquisition: the hash, and the counter incremented (as its script does).
	if ok, err := j.tryLock(ctx, name, 1, 0); !ok || err != nil {
		t.Fatalf("Java tryLock after the Go release = %v, %v; want true", ok, err)
	}
	javaToken := admin.Incr(ctx, counter).Val()
	if _, err := c.FencedLock(name).TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("Go TryLock on a Java-held lock: %v; want ErrNotObtained", err)
	}
	got, cancel := lockAsync(ctx, c.FencedLock(name))
	defer cancel()
	eventually(t, 5*time.Second, "the Go waiter to wait", func() bool { return c.Stats().Waiting == 1 })
	mustDo(t, "Java unlock", j.unlock(ctx, name, 1)) // publishes "0": the Go waiter tries again
	r := recvWithin(t, got, 5*time.Second, "the Go waiter to take the lock")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.h.Token() <= javaToken {
		t.Fatalf("Go token %d after the Java holder's %d; want greater", r.h.Token(), javaToken)
	}
	mustUnlock(t, r.h)

	ml := mustLock(t, redisson.NewMultiLock(c.Lock(name+"a"), c.FencedLock(name+"b")), ctx)
	if parts := ml.Parts(); len(parts) != 2 || parts[1].Token() < 1 {
		t.Fatalf("MultiLock parts %v; want the FencedLock part with a token", parts)
	}
	mustUnlock(t, ml)
}

// A MultiLock of compat Locks holds every part in Redisson's format.
func TestCompatLockInMultiLock(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	ctx := t.Context()
	j := newJavaClient(t, admin, 30*time.Second)
	ml := redisson.NewMultiLock(c.Lock("ma"), c.Lock("mb"))
	h := mustLock(t, ml, ctx)
	for _, k := range []string{"ma", "mb"} {
		if typ := admin.Type(ctx, k).Val(); typ != "hash" {
			t.Fatalf("part %s: %q; want hash", k, typ)
		}
		if ok, err := j.tryLock(ctx, k, 1, 0); ok || err != nil {
			t.Fatalf("Java tryLock of part %s: %v, %v; want held", k, ok, err)
		}
	}
	mustUnlock(t, h)
	if n := admin.Exists(ctx, "ma", "mb").Val(); n != 0 {
		t.Fatalf("%d parts left after the unlock", n)
	}
}

// A name holding another type, a ReadWriteLock's hash, or a hash that is no Redisson lock is
// refused with ErrWrongType and left as it was; a plain Client's Lock refuses a compat lock.
func TestCompatLockWrongType(t *testing.T) {
	t.Parallel()
	c, admin, srv := setup(t, redisson.WithRedissonCompat())
	plain := newClient(t, srv.Client(t))
	ctx := t.Context()
	mustDo(t, "SET", admin.Set(ctx, "str", "x", 0).Err())
	mustDo(t, "HSET", admin.HSet(ctx, "two", "a", "1", "b", "1").Err())
	mustDo(t, "HSET", admin.HSet(ctx, "notcount", "a", "x").Err())
	rwh := mustLock(t, plain.ReadWriteLock("rw"), ctx)
	defer mustUnlock(t, rwh)
	for _, name := range []string{"str", "two", "notcount", "rw"} {
		before := serverSnapshot(t, admin)
		l := c.Lock(name)
		checks := map[string]error{
			"TryLock":      errOnly(l.TryLock(ctx)),
			"IsLocked":     errOnly(l.IsLocked(ctx)),
			"RemainingTTL": errOnly(l.RemainingTTL(ctx)),
			"ForceUnlock":  errOnly(l.ForceUnlock(ctx)),
		}
		for what, err := range checks {
			if !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s on %q: %v; want ErrWrongType", what, name, err)
			}
		}
		if d := snapshotDiff(before, serverSnapshot(t, admin)); d != "" {
			t.Errorf("%q: changed %s", name, d)
		}
	}
	h := mustLock(t, c.Lock("mine"), ctx)
	defer mustUnlock(t, h)
	if _, err := plain.Lock("mine").TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
		t.Fatalf("a plain Client's Lock on a compat lock: %v; want ErrWrongType", err)
	}
}

// IsLocked, RemainingTTL and HoldCount read Java holds too.
func TestCompatLockReadsJavaHold(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	ctx := t.Context()
	j := newJavaClient(t, admin, 30*time.Second)
	l := c.Lock("read")
	if ok, err := l.IsLocked(ctx); err != nil || ok {
		t.Fatalf("free: IsLocked %v, %v", ok, err)
	}
	if ttl, err := l.RemainingTTL(ctx); err != nil || ttl != 0 {
		t.Fatalf("free: RemainingTTL %v, %v", ttl, err)
	}
	if ok, err := j.tryLock(ctx, "read", 1, 10*time.Second); !ok || err != nil {
		t.Fatalf("Java tryLock: %v, %v", ok, err)
	}
	if ok, err := l.IsLocked(ctx); err != nil || !ok {
		t.Fatalf("Java holds: IsLocked %v, %v", ok, err)
	}
	if ttl, err := l.RemainingTTL(ctx); err != nil || ttl <= 5*time.Second || ttl > 10*time.Second {
		t.Fatalf("Java holds (lease 10s): RemainingTTL %v, %v", ttl, err)
	}
}

// oneIdle keeps at most one idle connection: the deletions of unlock latches, sent in the
// background, may open a second one, which oneIdleConn would find.
func oneIdle(o *redis.Options) { o.MaxIdleConns = 1 }

// warmUpCompat loads the compat scripts through c and waits for the unlock latches to be deleted,
// so that a reply dropped later is the reply of the command under test.
func warmUpCompat(t *testing.T, c *redisson.Client, admin *redis.Client) {
	t.Helper()
	warmUpScripts(t, c)
	awaitUnlockLatchesGone(t, admin)
}

// awaitUnlockLatchesGone waits until the unlock latches of the releases made so far, deleted in the
// background once answered, are gone.
func awaitUnlockLatchesGone(t *testing.T, admin *redis.Client) {
	t.Helper()
	eventually(t, 5*time.Second, "the unlock latches deleted", func() bool {
		return len(admin.Keys(t.Context(), "redisson_unlock_latch:*").Val()) == 0
	})
}

// A partial unlock whose reply is lost, re-sent after the same owner re-entered meanwhile, is
// answered from its unlock latch and not applied again: the count stays exact (2), and after one
// more unlock the owner still holds the lock.
func TestCompatLockResentPartialUnlockAppliedOnce(t *testing.T) {
	t.Parallel()
	const name = "compat-resent-partial"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p, oneIdle)
	a := compatClient(t, rdbA)
	j := newJavaClient(t, admin, 30*time.Second)
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	warmUpCompat(t, a, admin)

	x := mustLock(t, a.Lock(name), ctx)
	xLevel2, err := x.Reenter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	xRes := make(chan error, 1)
	spawn(&wg, func() { xRes <- xLevel2.Unlock(ctx) }) // partial unlock, reply lost
	recvWithin(t, reached, 5*time.Second, "the re-send of the partial unlock to open a new connection")
	p.DropReplies(0)
	yRes := make(chan error, 1)
	var y *redisson.Hold
	spawn(&wg, func() { // the same owner re-enters before the re-send
		var err error
		y, err = x.Reenter(ctx)
		yRes <- err
	})
	if err := recvWithin(t, yRes, 5*time.Second, "the re-entry"); err != nil {
		t.Fatalf("Reenter: %v", err)
	}
	dialA.resumeDials()
	if err := recvWithin(t, xRes, 10*time.Second, "the partial unlock"); err != nil {
		t.Errorf("partial Unlock (reply lost, re-sent) = %v, want nil", err)
	}
	if n, err := x.HoldCount(ctx); err != nil || n != 2 {
		t.Errorf("HoldCount after the partial unlock and a re-entry = %d (err %v), want 2", n, err)
	}
	mustUnlock(t, x)
	if ok, err := j.tryLock(ctx, name, 1, 0); ok || err != nil {
		t.Fatalf("a Java client acquired the lock while the owner still holds a level: %v, %v", ok, err)
	}
	mustUnlock(t, y)
	if ok, err := j.tryLock(ctx, name, 1, 0); !ok || err != nil {
		t.Fatalf("Java tryLock after the last unlock: %v, %v", ok, err)
	}
}

// A final unlock whose reply is lost, re-sent after Java clients locked and unlocked the lock many
// times, reports the release (from its unlock latch): nil, and no EventLost.
func TestCompatLockResentFinalUnlockReportsRelease(t *testing.T) {
	t.Parallel()
	const name = "compat-resent-final"
	r := newCompatLostReplyRig(t, nil)
	j := newJavaClient(t, r.admin, 30*time.Second)
	r.finalUnlockReleasedDespiteJava(t, mustLock(t, r.c.Lock(name), t.Context()), 50, func(ctx context.Context) error {
		if ok, err := j.tryLock(ctx, name, 1, 0); !ok || err != nil {
			return errors.Join(errors.New("Java tryLock failed"), err)
		}
		return j.unlock(ctx, name, 1)
	})
}

// compatLostReplyRig is what the compatible kinds' lost-reply tests share: a Client made
// WithRedissonCompat whose connections go through a proxy (p) that can drop replies and hold its
// next dial (dial), warmed up (every script loaded, no background clean-up left) with one idle
// connection, and how many EventLost it reported.
type compatLostReplyRig struct {
	admin *redis.Client
	p     *redistest.Proxy
	rdb   *redis.Client
	dial  *heldDialer
	c     *redisson.Client
	lost  atomic.Int32
	wg    sync.WaitGroup
}

// newCompatLostReplyRig starts the rig on a server of its own; warm, if set, loads the scripts of
// the kind under test.
func newCompatLostReplyRig(t *testing.T, warm func(ctx context.Context, c *redisson.Client)) *compatLostReplyRig {
	t.Helper()
	srv := redistest.Start(t)
	r := &compatLostReplyRig{admin: srv.Client(t), p: redistest.NewProxy(t, srv.Addr())}
	r.rdb, r.dial = proxiedClient(t, srv, r.p, oneIdle)
	r.c = compatClient(t, r.rdb, redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			r.lost.Add(1)
		}
	}))
	t.Cleanup(func() { r.dial.resumeDials(); r.wg.Wait() })
	if warm != nil {
		warm(t.Context(), r.c)
	}
	warmUpCompat(t, r.c, r.admin) // also waits for the warm-ups' unlock latches to be deleted
	return r
}

// finalUnlockReleasedDespiteJava drops the reply of h's final Unlock, so that it is re-sent, and
// holds the re-send's dial while javaUse takes and frees the lock n times: the Unlock must report
// the release (its first copy ran; Redisson's unlock latch answers the re-send), with no EventLost.
func (r *compatLostReplyRig) finalUnlockReleasedDespiteJava(t *testing.T, h *redisson.Hold, n int, javaUse func(ctx context.Context) error) {
	t.Helper()
	ctx := t.Context()
	oneIdleConn(t, r.rdb)
	reached := r.dial.holdNext()
	r.p.DropReplies(1)
	res := make(chan error, 1)
	spawn(&r.wg, func() { res <- h.Unlock(ctx) })
	recvWithin(t, reached, 5*time.Second, "the re-send of the final unlock to open a new connection")
	r.p.DropReplies(0)
	for i := range n {
		if err := javaUse(ctx); err != nil {
			t.Fatalf("Java use %d: %v", i, err)
		}
	}
	r.dial.resumeDials()
	if err := recvWithin(t, res, 10*time.Second, "the final Unlock"); err != nil {
		t.Errorf("final Unlock (applied, reply lost, re-sent) = %v, want nil", err)
	}
	if n := r.lost.Load(); n != 0 {
		t.Errorf("%d EventLost for a lock its Unlock released", n)
	}
}

// A fresh acquisition whose reply is lost is re-sent and counted once: HoldCount 1, and one Unlock
// frees the lock.
func TestCompatLockResentAcquisitionCountsOnce(t *testing.T) {
	t.Parallel()
	const name = "compat-resent-acquire"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, _ := proxiedClient(t, srv, p, oneIdle)
	a := compatClient(t, rdbA)
	ctx := t.Context()
	warmUpCompat(t, a, admin)
	oneIdleConn(t, rdbA)
	p.DropReplies(1)
	h, err := a.Lock(name).TryLock(ctx)
	p.DropReplies(0)
	if err != nil {
		t.Fatalf("TryLock (reply lost, re-sent) = %v", err)
	}
	if n, err := h.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("HoldCount = %d, %v; want 1", n, err)
	}
	mustUnlock(t, h)
	if n := admin.Exists(ctx, name).Val(); n != 0 {
		t.Fatal("the lock is still there after its only Unlock")
	}
}

// An acquisition whose reply was lost and whose re-sends could not be written is undone (the
// owner's field deleted) once Redis can be reached again, well before the 30s lease.
func TestCompatLockLostReplyThenUnreachableIsUndone(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, down := refusableProxyClient(t, srv, p, oneIdle)
	c := compatClient(t, rdb)
	ctx := t.Context()
	warmUpCompat(t, c, admin)
	oneIdleConn(t, rdb)
	const name = "compat-lost-then-unreachable"
	down.Store(true)
	p.DropReplies(1)
	_, err := c.Lock(name).TryLock(ctx)
	p.DropReplies(0)
	if err == nil {
		t.Fatal("TryLock with its reply lost and Redis unreachable = nil; want an error")
	}
	if n := admin.HLen(ctx, name).Val(); n != 1 {
		t.Fatalf("precondition: the acquisition did not run (%d fields); TryLock = %v", n, err)
	}
	down.Store(false)
	eventually(t, 6*time.Second, "the lost acquisition undone once Redis is reachable", func() bool {
		return admin.Exists(ctx, name).Val() == 0
	})
}

// dropFirstUnlock makes the first unlock script (the one naming an unlock latch) that goes through
// hook fail as a lost connection (io.EOF) without being sent: the Client cannot tell that it never
// ran, and sends it again. It reports whether it has dropped one.
func dropFirstUnlock(hook *aroundHook) *atomic.Bool {
	var dropped atomic.Bool
	hook.setCmd(func(_ context.Context, a []string, cmd redis.Cmder, next func() error) error {
		if strings.Contains(strings.Join(a, " "), "redisson_unlock_latch") && dropped.CompareAndSwap(false, true) {
			cmd.SetErr(io.EOF)
			return io.EOF
		}
		return next()
	})
	return &dropped
}

// resentFinalUnlockAfterJavaTookIt checks a final Unlock whose first copy never ran, after a Java
// client force-unlocked the lock (javaTake) and took it, the Go holder not told yet (no loss
// tracking; its watchdog renews every 10s): the re-send finds neither the owner nor the unlock latch a first run would have
// left, so the owner had lost the lock before its release, and Unlock reports the loss (ErrNotHeld,
// ErrLockLost), as a first copy finding the owner gone does; the Java hold is untouched (javaHolds).
func resentFinalUnlockAfterJavaTookIt(t *testing.T, acquire func(c *redisson.Client) (*redisson.Hold, error),
	javaTake func(ctx context.Context, admin *redis.Client) error, javaHolds func(ctx context.Context, admin *redis.Client) bool) {
	t.Helper()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	hook := &aroundHook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	var lost atomic.Int32
	// Without loss tracking: a hold that lives past its delay (a slow machine between the
	// acquisition and the Unlock) would be told lost at the Java forceUnlock, and its Unlock then
	// sends nothing to re-send.
	c := compatClient(t, rdb, redisson.WithLossTracking(false), redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			lost.Add(1)
		}
	}))
	h, err := acquire(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := javaTake(ctx, admin); err != nil {
		t.Fatalf("the Java client's forceUnlock and acquisition: %v", err)
	}
	dropped := dropFirstUnlock(hook)
	err = h.Unlock(ctx)
	if !dropped.Load() {
		t.Fatal("precondition: no unlock was dropped")
	}
	if !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
		t.Errorf("final Unlock (first copy never ran, re-sent after a Java forceUnlock and acquisition) = %v; want ErrNotHeld and ErrLockLost", err)
	}
	if n := lost.Load(); n != 1 {
		t.Errorf("%d EventLost; want 1", n)
	}
	if !javaHolds(ctx, admin) {
		t.Error("the Java holder lost its lock to the Go release")
	}
}

// A Lock's final Unlock re-sent after a Java client took the lock reports the loss (see
// resentFinalUnlockAfterJavaTookIt).
func TestCompatLockResentFinalUnlockReportsLossToJava(t *testing.T) {
	t.Parallel()
	const name = "compat-resent-final-lost"
	var j *javaClient
	resentFinalUnlockAfterJavaTookIt(t,
		func(c *redisson.Client) (*redisson.Hold, error) { return c.Lock(name).TryLock(t.Context()) },
		func(ctx context.Context, admin *redis.Client) error {
			j = newJavaClient(t, admin, 30*time.Second)
			if ok, err := j.forceUnlock(ctx, name); !ok || err != nil {
				return errors.Join(errors.New("forceUnlock found nothing"), err)
			}
			if ok, err := j.tryLock(ctx, name, 1, 0); !ok || err != nil {
				return errors.Join(errors.New("tryLock failed"), err)
			}
			return nil
		},
		func(ctx context.Context, _ *redis.Client) bool {
			ok, err := j.d.Lock(name).IsHeldByThread(ctx, 1)
			return ok && err == nil
		})
}

// Watchdogs of 1s keep the other side out for 3.5s, for every shared lock kind: a Go Lock, FairLock,
// ReadWriteLock writer and reader (its acquisition keys and the hash renewed as Redisson's
// ReadLockTask does) keep the Java side out, and Java's holds keep Go out.
func TestCompatWatchdogKeepsOtherSideOut(t *testing.T) {
	long(t)
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		c := compatClient(t, rdb(), redisson.WithWatchdogTimeout(time.Second))
		j := newJava(t, rdb(), javadouble.WatchdogTimeout(time.Second))
		rw1, jrw1 := c.ReadWriteLock(name+":rw1"), j.ReadWriteLock(name+":rw1")
		rw2, jrw2 := c.ReadWriteLock(name+":rw2"), j.ReadWriteLock(name+":rw2")
		for _, tc := range []struct {
			kind  string
			goOut func(t *testing.T, ctx context.Context) *redisson.Hold // a Go hold that keeps java out
			java  *javadouble.Lock
			// javaOut is a Java hold that keeps goTry out.
			javaOut *javadouble.Lock
			goTry   func(ctx context.Context) (*redisson.Hold, error)
		}{
			{"Lock", func(t *testing.T, ctx context.Context) *redisson.Hold { return mustLock(t, c.Lock(name), ctx) }, j.Lock(name),
				j.Lock(name), func(ctx context.Context) (*redisson.Hold, error) { return c.Lock(name).TryLock(ctx) }},
			{"FairLock", func(t *testing.T, ctx context.Context) *redisson.Hold {
				return mustLock(t, c.FairLock(name+":fair"), ctx)
			}, j.FairLock(name + ":fair"),
				j.FairLock(name + ":fair"), func(ctx context.Context) (*redisson.Hold, error) { return c.FairLock(name + ":fair").TryLock(ctx) }},
			{"ReadWriteLock/GoReaderJavaReader", func(t *testing.T, ctx context.Context) *redisson.Hold { return mustRLock(t, rw1, ctx) }, jrw1.WriteLock(),
				jrw1.ReadLock(), func(ctx context.Context) (*redisson.Hold, error) { return rw1.TryLock(ctx) }},
			{"ReadWriteLock/GoWriterJavaWriter", func(t *testing.T, ctx context.Context) *redisson.Hold { return mustLock(t, rw2, ctx) }, jrw2.ReadLock(),
				jrw2.WriteLock(), func(ctx context.Context) (*redisson.Hold, error) { return rw2.TryRLock(ctx) }},
		} {
			t.Run(tc.kind, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				const hold = 3500 * time.Millisecond
				h := tc.goOut(t, ctx)
				for end := time.Now().Add(hold); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
					if ok, err := tc.java.TryLock(ctx, 1, 0, 0); ok || err != nil {
						t.Fatalf("%s: Java acquired while Go holds (watchdog 1s): %v, %v", tc.kind, ok, err)
					}
				}
				if h.Context().Err() != nil {
					t.Fatalf("%s: the Go hold ended: %v", tc.kind, context.Cause(h.Context()))
				}
				mustUnlock(t, h)
				if ok, err := tc.javaOut.TryLock(ctx, 1, 0, 0); !ok || err != nil {
					t.Fatalf("%s: Java tryLock: %v, %v", tc.kind, ok, err)
				}
				for end := time.Now().Add(hold); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
					if h, err := tc.goTry(ctx); err == nil {
						mustUnlock(t, h)
						t.Fatalf("%s: Go acquired while Java holds (watchdog 1s)", tc.kind)
					}
				}
				if err := tc.javaOut.Unlock(ctx, 1); err != nil {
					t.Fatalf("%s: Java unlock after %v: %v", tc.kind, hold, err)
				}
			})
		}
	})
}

// servedAfterJavaForceUnlock checks the end of a Java forceUnlock of Go hold h's lock: the Go waiter
// (got) acquires (what), and h is told, with a cause matching ErrLockLost.
func servedAfterJavaForceUnlock(t *testing.T, got <-chan lockResult, h *redisson.Hold, what string) {
	t.Helper()
	r := recvWithin(t, got, 10*time.Second, what)
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { mustUnlock(t, r.h) })
	select {
	case <-h.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the force-unlocked Go holder was not told")
	}
	if !errors.Is(context.Cause(h.Context()), redisson.ErrLockLost) {
		t.Fatalf("cause %v; want ErrLockLost", context.Cause(h.Context()))
	}
}

// javaOwnerForm is the form of a Java Redisson owner, "<UUID>:<thread id>": a random (version 4)
// UUID and a decimal long.
var javaOwnerForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:[0-9]+$`)

// In Redisson's layouts a Go owner has a Java owner's form, so that Java code and operators that
// parse owners (the UUID before the last colon, a long after it) read Go holders too: the field of
// a Lock's, a FairLock's (and its queued waiter's), a ReadWriteLock's reader's and writer's.
func TestCompatOwnerIDsHaveJavaForm(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	ctx := t.Context()
	j := newJava(t, admin)
	check := func(what, owner string) {
		t.Helper()
		if !javaOwnerForm.MatchString(owner) {
			t.Errorf("%s: owner %q; want Java's form <UUID>:<thread id>", what, owner)
		}
	}
	only := func(name string) string {
		t.Helper()
		fields := admin.HGetAll(ctx, name).Val()
		if len(fields) != 1 {
			t.Fatalf("%s: fields %v; want the owner's only", name, fields)
		}
		for f := range fields {
			return f
		}
		return ""
	}

	h := mustLock(t, c.Lock("ids:lock"), ctx)
	check("Go Lock", only("ids:lock"))
	mustUnlock(t, h)
	if err := j.Lock("ids:lock").Lock(ctx, 42, 0); err != nil {
		t.Fatal(err)
	}
	check("Java Lock", only("ids:lock"))
	if err := j.Lock("ids:lock").Unlock(ctx, 42); err != nil {
		t.Fatal(err)
	}

	h = mustLock(t, c.FairLock("ids:fair"), ctx)
	check("Go FairLock", only("ids:fair"))
	got, cancel := lockAsync(ctx, c.FairLock("ids:fair"))
	defer cancel()
	check("Go FairLock waiter", awaitQueue(t, admin, "ids:fair", 1)[0])
	mustUnlock(t, h)
	r := recvWithin(t, got, 10*time.Second, "the Go waiter")
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustUnlock(t, r.h)

	rw := c.ReadWriteLock("ids:rw")
	h = mustRLock(t, rw, ctx)
	for f := range readerFields(t, admin, "ids:rw") {
		check("Go reader", f)
	}
	mustUnlock(t, h)
	h = mustLock(t, rw, ctx)
	for f := range admin.HGetAll(ctx, "ids:rw").Val() {
		if w, ok := strings.CutSuffix(f, ":write"); ok {
			check("Go writer", w)
		} else if f != "mode" {
			t.Errorf("writer's hash has field %q", f)
		}
	}
	mustUnlock(t, h)
	jr := j.ReadWriteLock("ids:rw").ReadLock()
	if err := jr.Lock(ctx, 7, 0); err != nil {
		t.Fatal(err)
	}
	for f := range readerFields(t, admin, "ids:rw") {
		check("Java reader", f)
	}
	if err := jr.Unlock(ctx, 7); err != nil {
		t.Fatal(err)
	}
}

// A SpinLock of a Client made WithRedissonCompat is Java Redisson's RSpinLock: the RLock hash
// (acquired by the script RSpinLock and RLock share), polled, and released without a message. It
// excludes Java holders of the name both ways (the double's RLock: the same hash, the same
// acquisition), and its releases and force unlocks publish nothing.
func TestCompatSpinLock(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat(), redisson.WithSpinBackoff(time.Millisecond, 20*time.Millisecond))
	ctx := t.Context()
	j := newJavaClient(t, admin, 30*time.Second)
	const name = "cspin"
	// silent runs f and fails the test if Redis ran a PUBLISH meanwhile.
	silent := func(what string, f func()) {
		t.Helper()
		publishes := func() string { return admin.InfoMap(ctx, "commandstats").Item("Commandstats", "cmdstat_publish") }
		before := publishes()
		f()
		if after := publishes(); after != before {
			t.Fatalf("%s published (commandstats %q -> %q); RSpinLock publishes nothing", what, before, after)
		}
	}

	// Go holds: Java is refused, and may take it once Go releases.
	var h *redisson.Hold
	silent("an acquisition", func() { h = mustLock(t, c.SpinLock(name), ctx) })
	if typ := admin.Type(ctx, name).Val(); typ != "hash" {
		t.Fatalf("the lock is a %q; want Redisson's hash", typ)
	}
	if ok, err := j.tryLock(ctx, name, 1, 0); ok || err != nil {
		t.Fatalf("Java tryLock on a Go-held RSpinLock = %v, %v; want false", ok, err)
	}
	if n, err := h.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("hold count %d, %v", n, err)
	}
	silent("a release", func() { mustUnlock(t, h) })
	if ok, err := j.tryLock(ctx, name, 1, 0); !ok || err != nil {
		t.Fatalf("Java tryLock after the Go release = %v, %v; want true", ok, err)
	}

	// Java holds: a Go attempt fails, a Go wait spins until the Java release.
	if _, err := c.SpinLock(name).TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("Go TryLock on a Java-held lock: %v; want ErrNotObtained", err)
	}
	got, cancel := lockAsync(ctx, c.SpinLock(name))
	defer cancel()
	eventually(t, 5*time.Second, "the Go waiter to spin", func() bool { return c.Stats().Waiting == 1 })
	mustDo(t, "Java unlock", j.unlock(ctx, name, 1))
	r := recvWithin(t, got, 5*time.Second, "the Go spinner to take the lock")
	if r.err != nil {
		t.Fatal(r.err)
	}
	silent("a force unlock", func() {
		if ok, err := c.SpinLock(name).ForceUnlock(ctx); !ok || err != nil {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
	})
	mustDo(t, "unlock after the force unlock", errOnlyNotHeld(r.h.Unlock(ctx)))
}

// errOnlyNotHeld is nil for nil or an error matching ErrNotHeld (a hold ended by a force unlock).
func errOnlyNotHeld(err error) error {
	if err == nil || errors.Is(err, redisson.ErrNotHeld) || errors.Is(err, redisson.ErrLockLost) {
		return nil
	}
	return err
}
