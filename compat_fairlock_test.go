package redisson_test

// A FairLock of a Client made WithRedissonCompat against Java Redisson 3.x RFairLock clients (the
// internal/javadouble test double) on the same Redis.

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/javadouble"
	"github.com/goredisson/redisson/redistest"
)

// fairNames are Redisson's RFairLock keys and waiter-channel prefix for name.
func fairNames(name string) (queue, timeouts, channelPrefix string) {
	tag := "{" + name + "}"
	if strings.Contains(name, "{") {
		tag = name
	}
	return "redisson_lock_queue:" + tag, "redisson_lock_timeout:" + tag, "redisson_lock__channel:" + tag
}

// newJava is a Java Redisson client (the test double) over rdb, closed when the test ends.
func newJava(t *testing.T, rdb redis.UniversalClient, opts ...javadouble.Option) *javadouble.Client {
	j := javadouble.New(rdb, opts...)
	t.Cleanup(j.Close)
	return j
}

// awaitQueue waits until Redisson's fair queue of name holds n waiters and returns them.
func awaitQueue(t *testing.T, rdb redis.UniversalClient, name string, n int) []string {
	t.Helper()
	queue, _, _ := fairNames(name)
	var got []string
	eventually(t, 10*time.Second, "the fair queue to hold the waiters", func() bool {
		got = rdb.LRange(t.Context(), queue, 0, -1).Val()
		return len(got) == n
	})
	return got
}

// The layout is Redisson's: the hash at the name, the queue LIST and the deadline ZSET (client-clock
// deadlines: the lock's TTL plus 5 minutes for the first waiter, the one ahead's plus 5 minutes for
// the next), a channel per waiter; a release wakes the head on its own channel; nothing is left
// once everyone is done.
func TestCompatFairLockLayout(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fair:1000", "{user:7}:fair"} {
		c, admin, _ := setup(t, redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Minute))
		ctx := t.Context()
		j := newJava(t, admin)
		queue, timeouts, prefix := fairNames(name)

		h := mustLock(t, c.FairLock(name), ctx)
		fields := admin.HGetAll(ctx, name).Val()
		if len(fields) != 1 {
			t.Fatalf("%s: fields %v; want the owner only", name, fields)
		}
		var goHolder string
		for f, v := range fields {
			goHolder = f
			if v != "1" {
				t.Fatalf("%s: count %q; want 1", name, v)
			}
		}
		if ttl := admin.PTTL(ctx, name).Val(); ttl <= 20*time.Second || ttl > redisson.DefaultWatchdogTimeout {
			t.Fatalf("%s: TTL %v; want the watchdog lease", name, ttl)
		}

		jdone := make(chan error, 1)
		before := time.Now().UnixMilli()
		go func() { jdone <- j.FairLock(name).Lock(ctx, 1, 0) }()
		awaitQueue(t, admin, name, 1)
		got, cancel := lockAsync(ctx, c.FairLock(name))
		defer cancel()
		waiters := awaitQueue(t, admin, name, 2)
		after := time.Now().UnixMilli()
		if waiters[0] != j.Owner(1) || waiters[1] == goHolder || strings.HasPrefix(waiters[1], j.ID()) {
			t.Fatalf("%s: queue %v; want the Java waiter %s, then a new Go owner", name, waiters, j.Owner(1))
		}
		goWaiter := waiters[1]
		d1, d2 := admin.ZScore(ctx, timeouts, j.Owner(1)).Val(), admin.ZScore(ctx, timeouts, goWaiter).Val()
		fiveMin := float64((5 * time.Minute).Milliseconds())
		if lo, hi := float64(before)+fiveMin+20000, float64(after)+fiveMin+30000; d1 < lo || d1 > hi {
			t.Fatalf("%s: Java waiter's deadline %v; want now + the lock's TTL + 5 min, in [%v, %v]", name, d1, lo, hi)
		}
		if d2-d1 < fiveMin-1000 || d2-d1 > fiveMin+1000 {
			t.Fatalf("%s: Go waiter's deadline %v is %v after the Java waiter's; want 5 min", name, d2, d2-d1)
		}
		for _, w := range waiters {
			awaitSubscribers(t, admin, prefix+":"+w, 1)
		}

		sub := admin.Subscribe(ctx, prefix+":"+j.Owner(1))
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		mustUnlock(t, h)
		if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "0" {
			t.Fatalf("%s: message %v, %v; want \"0\" on the head's channel", name, msg, err)
		}
		if err := recvWithin(t, jdone, 10*time.Second, "the Java head to take the lock"); err != nil {
			t.Fatal(err)
		}
		if q := admin.LRange(ctx, queue, 0, -1).Val(); len(q) != 1 || q[0] != goWaiter {
			t.Fatalf("%s: queue after the Java waiter's acquisition %v; want the Go waiter", name, q)
		}
		if d := admin.ZScore(ctx, timeouts, goWaiter).Val(); d > d2-fiveMin+1000 {
			t.Fatalf("%s: the Go waiter's deadline %v after the acquisition; want one slot (5 min) earlier than %v", name, d, d2)
		}
		if err := j.FairLock(name).Unlock(ctx, 1); err != nil {
			t.Fatal(err)
		}
		r := recvWithin(t, got, 10*time.Second, "the Go waiter to take the lock after the Java release")
		if r.err != nil {
			t.Fatal(r.err)
		}
		if v := admin.HGet(ctx, name, goWaiter).Val(); v != "1" {
			t.Fatalf("%s: the Go waiter's count %q; want 1 (its owner is the one it queued as)", name, v)
		}
		mustUnlock(t, r.h)
		eventually(t, 5*time.Second, "no key left", func() bool { return len(dataKeysOf(t, ctx, admin)) == 0 })
	}
}

// Go and Java waiters queued alternately (Go, Java, Go, Java) are served in that order, each woken by
// the release before it long before any lease or re-poll would have woken it.
func TestCompatFairLockFIFOAcrossLanguages(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		admin := rdb()
		goSide := compatClient(t, rdb(), redisson.WithRepollInterval(time.Hour))
		j := newJava(t, rdb())
		h := mustLock(t, goSide.FairLock(name), ctx)

		var mu sync.Mutex
		var order []string
		served := func(who string) {
			mu.Lock()
			order = append(order, who)
			mu.Unlock()
		}
		done := make(chan error, 4)
		who := []string{"go1", "java1", "go2", "java2"}
		for i, w := range who {
			if strings.HasPrefix(w, "go") {
				c := compatClient(t, rdb(), redisson.WithRepollInterval(time.Hour))
				go func() {
					h, err := c.FairLock(name).Lock(ctx)
					if err == nil {
						served(w)
						err = h.Unlock(ctx)
					}
					done <- err
				}()
			} else {
				tid := int64(i)
				go func() {
					l := j.FairLock(name)
					err := l.Lock(ctx, tid, 0)
					if err == nil {
						served(w)
						err = l.Unlock(ctx, tid)
					}
					done <- err
				}()
			}
			awaitQueue(t, admin, name, i+1)
		}
		start := time.Now()
		mustUnlock(t, h)
		for range who {
			if err := recvWithin(t, done, 20*time.Second, "every waiter served (a lease is 30s)"); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("4 hand-overs across languages in %v", time.Since(start))
		if strings.Join(order, ",") != strings.Join(who, ",") {
			t.Fatalf("served %v; want the queue's order %v", order, who)
		}
	})
}

// A Go waiter whose wait ends leaves Redisson's queue, as Java's acquireFailed does: the waiter
// behind it moves one slot (its 5 minutes) earlier, and is the one the release wakes.
func TestCompatFairLockGiveUpLeavesQueue(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Hour))
	ctx := t.Context()
	j := newJava(t, admin)
	const name = "fair-give-up"
	_, timeouts, _ := fairNames(name)
	h := mustLock(t, c.FairLock(name), ctx)
	bctx, cancelB := context.WithCancel(ctx)
	bgot, _ := lockAsync(bctx, c.FairLock(name))
	awaitQueue(t, admin, name, 1)
	jdone := make(chan error, 1)
	go func() { jdone <- j.FairLock(name).Lock(ctx, 1, 0) }()
	awaitQueue(t, admin, name, 2)
	d := admin.ZScore(ctx, timeouts, j.Owner(1)).Val()
	cancelB()
	if r := recvWithin(t, bgot, 10*time.Second, "the cancelled wait"); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", r.err)
	}
	if q := awaitQueue(t, admin, name, 1); q[0] != j.Owner(1) {
		t.Fatalf("queue %v; want the Java waiter alone", q)
	}
	fiveMin := float64((5 * time.Minute).Milliseconds())
	if nd := admin.ZScore(ctx, timeouts, j.Owner(1)).Val(); d-nd < fiveMin-1000 || d-nd > fiveMin+1000 {
		t.Fatalf("the Java waiter's deadline moved by %v; want one slot, 5 min", d-nd)
	}
	mustUnlock(t, h)
	if err := recvWithin(t, jdone, 10*time.Second, "the Java waiter to take the lock"); err != nil {
		t.Fatal(err)
	}
	if err := j.FairLock(name).Unlock(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

// A Go ForceUnlock frees a Java holder's fair lock and wakes the Java head; a Java forceUnlock frees a
// Go holder's (which is told: ErrLockLost) and wakes the Go head.
func TestCompatFairLockForceUnlockAcrossSides(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx := t.Context()
		admin := rdb()
		holder := compatClient(t, rdb(), redisson.WithWatchdogTimeout(time.Second))
		waiter := compatClient(t, rdb(), redisson.WithRepollInterval(time.Hour))
		j1, j2 := newJava(t, rdb()), newJava(t, rdb())

		if err := j1.FairLock(name).Lock(ctx, 1, 0); err != nil {
			t.Fatal(err)
		}
		jdone := make(chan error, 1)
		go func() { jdone <- j2.FairLock(name).Lock(ctx, 1, 0) }()
		awaitQueue(t, admin, name, 1)
		if ok, err := waiter.FairLock(name).ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("Go ForceUnlock of a Java hold = %v, %v", ok, err)
		}
		if err := recvWithin(t, jdone, 10*time.Second, "the Java waiter after the Go ForceUnlock"); err != nil {
			t.Fatal(err)
		}
		if ok, err := j2.FairLock(name).ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("clean-up: %v, %v", ok, err)
		}

		h := mustLock(t, holder.FairLock(name), ctx)
		got, cancel := lockAsync(ctx, waiter.FairLock(name))
		defer cancel()
		awaitQueue(t, admin, name, 1)
		if ok, err := j1.FairLock(name).ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("Java forceUnlock of a Go hold = %v, %v", ok, err)
		}
		servedAfterJavaForceUnlock(t, got, h, "the Go waiter after the Java forceUnlock")
	})
}

// A fair lock and a compat Lock of the same name are one lock (Redisson's RFairLock keeps an RLock's
// hash), and a ReadWriteLock's hash or another type is refused with ErrWrongType, unchanged.
func TestCompatFairLockWrongType(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	ctx := t.Context()
	mustDo(t, "SET", admin.Set(ctx, "str", "x", 0).Err())
	mustDo(t, "HSET", admin.HSet(ctx, "rwhash", "mode", "read", "a:1", "1").Err())
	queue, _, _ := fairNames("badqueue")
	mustDo(t, "SET", admin.Set(ctx, queue, "x", 0).Err())
	for _, name := range []string{"str", "rwhash", "badqueue"} {
		before := serverSnapshot(t, admin)
		l := c.FairLock(name)
		for what, err := range map[string]error{
			"TryLock":     errOnly(l.TryLock(ctx)),
			"Lock (wait)": errOnly(l.TryLock(ctx, redisson.WithWait(50*time.Millisecond))),
			"ForceUnlock": errOnly(l.ForceUnlock(ctx)),
		} {
			if !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s on %q: %v; want ErrWrongType", what, name, err)
			}
		}
		if d := snapshotDiff(before, serverSnapshot(t, admin)); d != "" {
			t.Errorf("%q: changed %s", name, d)
		}
	}
	h := mustLock(t, c.FairLock("same"), ctx)
	if _, err := c.Lock("same").TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) || errors.Is(err, redisson.ErrWrongType) {
		t.Fatalf("a compat Lock on a held compat FairLock: %v; want held by another owner", err)
	}
	mustUnlock(t, h)
}

// A fresh acquisition whose reply is lost is re-sent and counted once; a final unlock whose reply
// is lost, re-sent after Java clients took and released the lock, reports the release.
func TestCompatFairLockLostReplies(t *testing.T) {
	t.Parallel()
	const name = "compat-fair-resent"
	r := newCompatLostReplyRig(t, func(ctx context.Context, c *redisson.Client) {
		mustUnlock(t, mustLock(t, c.FairLock("warmup-fair"), ctx)) // loads the fair scripts
	})
	j := newJava(t, r.admin)
	ctx := t.Context()

	oneIdleConn(t, r.rdb)
	r.p.DropReplies(1)
	h, err := r.c.FairLock(name).TryLock(ctx)
	r.p.DropReplies(0)
	if err != nil {
		t.Fatalf("TryLock (reply lost, re-sent) = %v", err)
	}
	if n, err := h.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("HoldCount = %d, %v; want 1", n, err)
	}
	r.finalUnlockReleasedDespiteJava(t, h, 20, func(ctx context.Context) error {
		if ok, err := j.FairLock(name).TryLock(ctx, 1, 0, 0); !ok || err != nil {
			return errors.Join(errors.New("Java tryLock failed"), err)
		}
		return j.FairLock(name).Unlock(ctx, 1)
	})
	eventually(t, 5*time.Second, "no key left", func() bool { return len(dataKeysOf(t, ctx, r.admin)) == 0 })
}

// A FairLock's final Unlock re-sent after a Java client took the lock reports the loss (see
// resentFinalUnlockAfterJavaTookIt).
func TestCompatFairLockResentFinalUnlockReportsLossToJava(t *testing.T) {
	t.Parallel()
	const name = "fair-resent-final-lost"
	var j *javadouble.Client
	resentFinalUnlockAfterJavaTookIt(t,
		func(c *redisson.Client) (*redisson.Hold, error) { return c.FairLock(name).TryLock(t.Context()) },
		func(ctx context.Context, admin *redis.Client) error {
			j = newJava(t, admin)
			if ok, err := j.FairLock(name).ForceUnlock(ctx); !ok || err != nil {
				return errors.Join(errors.New("forceUnlock found nothing"), err)
			}
			if ok, err := j.FairLock(name).TryLock(ctx, 1, 0, 0); !ok || err != nil {
				return errors.Join(errors.New("tryLock failed"), err)
			}
			return nil
		},
		func(ctx context.Context, _ *redis.Client) bool {
			ok, err := j.FairLock(name).IsHeldByThread(ctx, 1)
			return ok && err == nil
		})
}

// doomedFairClient is a Client made WithRedissonCompat and WithWaiterTimeout(wt), connected to srv
// through a proxy, and cut, which cuts the proxy for good: from then on nothing of that Client
// reaches Redis, not even the undo of its waits, as if its process had died.
func doomedFairClient(t *testing.T, srv *redistest.Server, wt time.Duration) (c *redisson.Client, cut func()) {
	p := redistest.NewProxy(t, srv.Addr())
	c = compatClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }),
		redisson.WithWaiterTimeout(wt), redisson.WithLogger(slog.New(slog.DiscardHandler)))
	return c, func() { _ = p.Close() }
}

// deadlineOf is waiter owner's deadline in Redisson's fair queue of name (client-clock ms).
func deadlineOf(t *testing.T, admin *redis.Client, name, owner string) time.Time {
	t.Helper()
	_, timeouts, _ := fairNames(name)
	ms, err := admin.ZScore(t.Context(), timeouts, owner).Result()
	if err != nil {
		t.Fatalf("the deadline of %s: %v", owner, err)
	}
	return time.UnixMilli(int64(ms))
}

// Redisson's testWaitTimeoutDrift and testFirstThreadDeathTimeoutDrift, with a waiter timeout of 1s
// (as Redisson's tests set fairLockWaitTimeout): a waiter whose process died while queued blocks the
// queue until its deadline, which is the lock's TTL when it queued plus the waiter timeout (its
// threadWaitTime, not Redisson's default 5 minutes); after a ForceUnlock, or the holder's Unlock
// (which wakes the dead head only), the live waiter behind it gets in soon after that deadline.
func TestCompatFairLockDeadWaiterBlocksOneSlot(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"ForceUnlock", "Unlock"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			const (
				wt    = time.Second
				lease = 2 * time.Second
			)
			c, admin, srv := setup(t, redisson.WithRedissonCompat(), redisson.WithWaiterTimeout(wt))
			ctx := t.Context()
			const name = "fair-dead-slot"
			h := mustLock(t, c.FairLock(name), ctx, redisson.WithLease(lease))
			doomed, cut := doomedFairClient(t, srv, wt)
			queuedAt := time.Now()
			_, cancelDead := lockAsync(ctx, doomed.FairLock(name))
			defer cancelDead()
			dead := awaitQueue(t, admin, name, 1)[0]
			got, cancel := lockAsync(ctx, c.FairLock(name))
			defer cancel()
			awaitQueue(t, admin, name, 2)
			deadline := deadlineOf(t, admin, name, dead)
			if limit := queuedAt.Add(lease + wt + time.Second); deadline.After(limit) {
				t.Fatalf("the waiter's deadline is %v after it queued; want the lock's TTL (%v) plus the waiter timeout (%v)",
					deadline.Sub(queuedAt).Round(time.Millisecond), lease, wt)
			}
			cut()
			if end == "ForceUnlock" {
				if ok, err := c.FairLock(name).ForceUnlock(ctx); err != nil || !ok {
					t.Fatalf("ForceUnlock = %v, %v", ok, err)
				}
			} else {
				mustUnlock(t, h)
			}
			r := recvWithin(t, got, time.Until(deadline)+5*time.Second, "the live waiter behind the dead one")
			if r.err != nil {
				t.Fatal(r.err)
			}
			t.Logf("the live waiter got in %v after the dead waiter's deadline", time.Since(deadline).Round(time.Millisecond))
			mustUnlock(t, r.h)
		})
	}
}

// Redisson's testAbandonedTimeoutDrift_Descrete, with a waiter timeout of 1s: waiters abandoned in
// the queue (their process died) are one waiter timeout apart, each one slot behind the one ahead;
// once the holder's lease ends, the live waiter queued behind two of them gets in soon after the
// second one's deadline, with no release to wake it.
func TestCompatFairLockAbandonedWaitersBlockTheirSlots(t *testing.T) {
	t.Parallel()
	const (
		wt    = time.Second
		lease = time.Second
	)
	c, admin, srv := setup(t, redisson.WithRedissonCompat(), redisson.WithWaiterTimeout(wt))
	ctx := t.Context()
	const name = "fair-abandoned"
	mustLock(t, c.FairLock(name), ctx, redisson.WithLease(lease))
	doomed, cut := doomedFairClient(t, srv, wt)
	for i := range 2 {
		_, cancel := lockAsync(ctx, doomed.FairLock(name))
		defer cancel()
		awaitQueue(t, admin, name, i+1)
	}
	got, cancel := lockAsync(ctx, c.FairLock(name))
	defer cancel()
	q := awaitQueue(t, admin, name, 3)
	cut()
	d1, d2, live := deadlineOf(t, admin, name, q[0]), deadlineOf(t, admin, name, q[1]), deadlineOf(t, admin, name, q[2])
	for _, gap := range []struct {
		what     string
		got, low time.Duration
	}{{"the second dead waiter behind the first", d2.Sub(d1), wt}, {"the live waiter behind the first", live.Sub(d1), 2 * wt}} {
		if gap.got < gap.low-300*time.Millisecond || gap.got > gap.low+300*time.Millisecond {
			t.Fatalf("the deadline of %s is %v later; want %v (a waiter timeout per slot)", gap.what, gap.got, gap.low)
		}
	}
	r := recvWithin(t, got, time.Until(d2)+5*time.Second, "the live waiter behind the abandoned ones")
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("the live waiter got in %v after the second abandoned waiter's deadline", time.Since(d2).Round(time.Millisecond))
	mustUnlock(t, r.h)
}
