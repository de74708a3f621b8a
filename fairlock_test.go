package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// fairQueued returns how many waiters are queued in Redis for fair lock name (no key prefix).
func fairQueued(t *testing.T, admin *redis.Client, name string) int64 {
	t.Helper()
	q, _ := redisson.QueueKeys("FairLock", name)
	n, err := admin.ZCard(t.Context(), q).Result()
	if err != nil {
		t.Fatalf("ZCARD: %v", err)
	}
	return n
}

// fairKeys returns the lock and queue keys of fair lock name (no key prefix).
func fairKeys(name string) []string {
	q, qt := redisson.QueueKeys("FairLock", name)
	return []string{"{" + name + "}", q, qt}
}

// faultHelperFairWaiter (child role "fairwaiter"): waits for FairLock name with the waiter timeout
// GOREDISSON_FAULT_WAITER_MS, then appends GOREDISSON_FAULT_ID to the list GOREDISSON_FAULT_LOG and
// unlocks.
func faultHelperFairWaiter(t *testing.T, ctx context.Context, addr, name string) {
	wt := time.Duration(faultHelperInt(t, "GOREDISSON_FAULT_WAITER_MS")) * time.Millisecond
	rdb := faultHelperRedis(t, addr)
	c := newClient(t, rdb, redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(100*time.Millisecond))
	h, err := c.FairLock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if err := rdb.RPush(ctx, os.Getenv("GOREDISSON_FAULT_LOG"), os.Getenv("GOREDISSON_FAULT_ID")).Err(); err != nil {
		t.Fatalf("RPUSH: %v", err)
	}
	fmt.Println("FAULT-ACQUIRED")
	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}

// Waiters enqueued in a known order, in this process and in others, acquire in that order.
func TestFairLockOrder(t *testing.T) {
	const (
		name    = "fair-order"
		logKey  = "fair-order-log"
		waiters = 10
	)
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t))
	holder := mustLock(t, c.FairLock(name), ctx)

	var wg sync.WaitGroup
	var children []*faultChild
	for i := range waiters {
		if i%3 == 1 { // every third waiter in its own process
			children = append(children, faultStartChild(t, "fairwaiter",
				"GOREDISSON_FAULT_ADDR="+srv.Addr(), "GOREDISSON_FAULT_LOCK="+name,
				"GOREDISSON_FAULT_LOG="+logKey, "GOREDISSON_FAULT_ID="+strconv.Itoa(i),
				"GOREDISSON_FAULT_WAITER_MS=5000"))
		} else {
			spawn(&wg, func() {
				h, err := c.FairLock(name).Lock(ctx)
				if err != nil {
					t.Errorf("waiter %d: %v", i, err)
					return
				}
				admin.RPush(ctx, logKey, i)
				if err := h.Unlock(ctx); err != nil {
					t.Errorf("waiter %d: Unlock: %v", i, err)
				}
			})
		}
		// The next waiter starts once this one is queued: the order of arrival is known.
		eventually(t, 30*time.Second, fmt.Sprintf("waiter %d to queue", i), func() bool {
			return fairQueued(t, admin, name) == int64(i+1)
		})
	}
	mustUnlock(t, holder)
	wg.Wait()
	for _, ch := range children {
		ch.expect(t, "FAULT-ACQUIRED", 30*time.Second)
		ch.wait(t, 30*time.Second)
	}
	got, err := admin.LRange(ctx, logKey, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	inversions := 0
	for i := 1; i < len(got); i++ {
		a, _ := strconv.Atoi(got[i-1])
		b, _ := strconv.Atoi(got[i])
		if b < a {
			inversions++
		}
	}
	if len(got) != waiters || inversions != 0 {
		t.Fatalf("acquisition order %v: %d inversions; want 0..%d in order", got, inversions, waiters-1)
	}
	if n := admin.Exists(ctx, fairKeys(name)...).Val(); n != 0 {
		t.Fatalf("%d lock or queue keys left after everyone unlocked", n)
	}
}

// Two queued waiter processes killed with SIGKILL delay the live waiters behind them by at most the
// waiter timeout (plus a re-poll), and leave nothing behind.
func TestFairLockDeadWaitersEvicted(t *testing.T) {
	const (
		name          = "fair-dead"
		waiterTimeout = time.Second
	)
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	opts := []redisson.Option{redisson.WithWaiterTimeout(waiterTimeout), redisson.WithRepollInterval(100 * time.Millisecond)}
	c := newClient(t, srv.Client(t), opts...)
	holder := mustLock(t, c.FairLock(name), ctx)

	var doomed []*faultChild
	for i := range 2 {
		doomed = append(doomed, faultStartChild(t, "fairwaiter",
			"GOREDISSON_FAULT_ADDR="+srv.Addr(), "GOREDISSON_FAULT_LOCK="+name,
			"GOREDISSON_FAULT_LOG=fair-dead-log", "GOREDISSON_FAULT_ID=dead",
			"GOREDISSON_FAULT_WAITER_MS="+strconv.Itoa(int(waiterTimeout.Milliseconds()))))
		eventually(t, 30*time.Second, "a doomed waiter to queue", func() bool { return fairQueued(t, admin, name) == int64(i+1) })
	}
	type result struct {
		at  time.Time
		err error
	}
	live := make(chan result, 2)
	for i := range 2 {
		go func() {
			h, err := c.FairLock(name).Lock(ctx)
			live <- result{time.Now(), err}
			if err == nil {
				_ = h.Unlock(ctx)
			}
		}()
		eventually(t, 10*time.Second, "a live waiter to queue", func() bool { return fairQueued(t, admin, name) == int64(3+i) })
	}
	for _, d := range doomed {
		if err := d.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-d.done
	}
	released := time.Now()
	mustUnlock(t, holder) // hands the lock to the first dead waiter, reserved until its deadline
	first := <-live
	second := <-live
	if first.err != nil || second.err != nil {
		t.Fatalf("live waiters: %v, %v", first.err, second.err)
	}
	delay := first.at.Sub(released)
	t.Logf("the first live waiter acquired %v after the release (waiter timeout %v, two dead waiters ahead)", delay, waiterTimeout)
	if limit := waiterTimeout + 500*time.Millisecond; delay > limit {
		t.Errorf("two dead waiters delayed the next live one by %v; want at most the waiter timeout + 0.5s (%v)", delay, limit)
	}
	eventually(t, 5*time.Second, "the lock and queue keys to be gone", func() bool {
		return admin.Exists(ctx, fairKeys(name)...).Val() == 0
	})
	for _, k := range admin.Keys(ctx, "*").Val() {
		if ttl := admin.PTTL(ctx, k).Val(); ttl < 0 {
			t.Errorf("key %q left without a TTL", k)
		}
	}
}

// A waiter whose wait is cancelled leaves the queue at once: the waiter behind it is served by the
// next release, woken by it (the re-poll interval is long), not after a delay.
func TestFairLockCancelledWaiterDelaysNobody(t *testing.T) {
	const name = "fair-cancel"
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Minute))
	holder := mustLock(t, c.FairLock(name), ctx)

	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan error, 1)
	go func() {
		_, err := c.FairLock(name).Lock(cctx)
		cancelled <- err
	}()
	eventually(t, 10*time.Second, "the first waiter to queue", func() bool { return fairQueued(t, admin, name) == 1 })
	second := make(chan error, 1)
	go func() {
		h, err := c.FairLock(name).Lock(ctx)
		if err == nil {
			err = h.Unlock(ctx)
		}
		second <- err
	}()
	eventually(t, 10*time.Second, "the second waiter to queue", func() bool { return fairQueued(t, admin, name) == 2 })
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) || !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("cancelled wait = %v; want ErrNotObtained and context.Canceled", err)
	}
	if n := fairQueued(t, admin, name); n != 1 {
		t.Fatalf("%d waiters queued after the cancellation; want 1", n)
	}
	mustUnlock(t, holder)
	select {
	case err := <-second:
		if err != nil {
			t.Fatalf("second waiter: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter behind a cancelled one was not served by the release (only a minute-long re-poll could wake it)")
	}
}

// A live waiter keeps its place however long the holder keeps the lock (Redisson #3004): its Client
// keeps it alive, so a waiter that arrives later never overtakes it; and TryLock without a wait never
// queues.
func TestFairLockLiveWaiterKeepsItsPlace(t *testing.T) {
	const name = "fair-patient"
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	// Waiter timeout 300ms: the holder keeps the lock for several of them.
	c := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(300*time.Millisecond))
	other := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(300*time.Millisecond))
	holder := mustLock(t, c.FairLock(name), ctx)

	order := make(chan string, 2)
	var wg sync.WaitGroup
	spawn(&wg, func() {
		h, err := c.FairLock(name).Lock(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		order <- "first"
		_ = h.Unlock(ctx)
	})
	eventually(t, 10*time.Second, "the first waiter to queue", func() bool { return fairQueued(t, admin, name) == 1 })
	if _, err := other.FairLock(name).TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) || fairQueued(t, admin, name) != 1 {
		t.Fatalf("TryLock without a wait = %v, queue %d; want not obtained, and not queued", err, fairQueued(t, admin, name))
	}
	// Several waiter timeouts pass while the holder holds; heartbeats keep the first waiter queued.
	beats := c.Stats().Heartbeats
	eventually(t, 10*time.Second, "several heartbeats", func() bool { return c.Stats().Heartbeats >= beats+6 })
	spawn(&wg, func() {
		h, err := other.FairLock(name).Lock(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		order <- "second"
		_ = h.Unlock(ctx)
	})
	eventually(t, 10*time.Second, "the second waiter to queue", func() bool { return fairQueued(t, admin, name) == 2 })
	mustUnlock(t, holder)
	wg.Wait()
	if a, b := <-order, <-order; a != "first" || b != "second" {
		t.Fatalf("served %s then %s; want the waiter that queued first, first", a, b)
	}
}

// CLIENT KILL TYPE pubsub while 8 waiters of two Clients queue: every one still acquires, one at a
// time.
func TestFairLockPubSubKilled(t *testing.T) {
	const (
		name    = "fair-pubsub"
		waiters = 8
	)
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	opts := []redisson.Option{redisson.WithRepollInterval(300 * time.Millisecond)}
	clients := []*redisson.Client{newClient(t, srv.Client(t), opts...), newClient(t, srv.Client(t), opts...)}
	holder := mustLock(t, clients[0].FairLock(name), ctx)
	var inside, served int32
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range waiters {
		spawn(&wg, func() {
			h, err := clients[i%2].FairLock(name).Lock(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			if inside != 1 {
				t.Error("two holders at once")
			}
			inside--
			served++
			mu.Unlock()
			if err := h.Unlock(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	eventually(t, 10*time.Second, "every waiter to queue", func() bool { return fairQueued(t, admin, name) == waiters })
	if n, err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n == 0 {
		t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v", n, err)
	}
	mustUnlock(t, holder)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("only %d of %d waiters acquired after the pub/sub connections were killed", served, waiters)
	}
}

// FairLock, FencedLock and Lock are different kinds: a name in use as one is an error for the others,
// and changes nothing.
func TestLockKindsDoNotMix(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	for _, first := range lockKinds {
		name := "kinds-" + first
		h := mustLock(t, lockOf(c, first, name), ctx)
		before := rdb.Get(ctx, redisson.LockKeyOf(c, name)).Val()
		for _, other := range lockKinds {
			if other == first {
				continue
			}
			l := lockOf(c, other, name)
			if _, err := l.TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s on a %s's name: TryLock = %v; want ErrWrongType", other, first, err)
			}
			if _, err := l.ForceUnlock(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s on a %s's name: ForceUnlock = %v; want ErrWrongType", other, first, err)
			}
			if _, err := l.IsLocked(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s on a %s's name: IsLocked = %v; want ErrWrongType", other, first, err)
			}
		}
		if after := rdb.Get(ctx, redisson.LockKeyOf(c, name)).Val(); after != before {
			t.Errorf("%s's value changed from %q to %q", first, before, after)
		}
		mustUnlock(t, h)
	}
}

// lateGrantOrder checks that a waiter whose grant is answered too late keeps its place (issue 18).
// A holds the lock of kind (a ReadWriteLock: its write side); B, then C, queue with WithLease(2s), B (and C too if oneClient) through
// a proxy that delays every packet by 50ms, C otherwise directly on a Client of its own. A unlocks:
// the release hands the lock to B and wakes it, and a CLIENT PAUSE WRITE of 2.5s starts before B's
// confirming attempt, 100ms away, reaches the server. That attempt runs when the pause ends, and
// its reply comes more than the vouched part of its lease after it was sent: B gives the lock
// back. B must still be served before C.
func lateGrantOrder(t *testing.T, kind string, oneClient bool) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	name := "late-grant-" + kind
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	a := newClient(t, srv.Client(t))
	b := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	c := b
	if !oneClient {
		c = newClient(t, srv.Client(t))
	}
	queued := func() (n int64) {
		if kind == "ReadWriteLock" { // waiting writers: ww: fields (internal/scripts/rw_value.lua)
			for f := range admin.HGetAll(ctx, "{"+name+"}").Val() {
				if strings.HasPrefix(f, "ww:") {
					n++
				}
			}
			return n
		}
		q, _ := redisson.QueueKeys(kind, name)
		return admin.ZCard(ctx, q).Val()
	}

	ha := mustLock(t, lockOf(a, kind, name), ctx)
	logKey := name + "-log"
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	waiter := func(cl *redisson.Client, who string) {
		spawn(&wg, func() {
			h, err := lockOf(cl, kind, name).Lock(ctx, redisson.WithLease(2*time.Second))
			if err != nil {
				t.Errorf("%s: %v", who, err)
				return
			}
			admin.RPush(ctx, logKey, who)
			_ = h.Unlock(ctx)
		})
	}
	waiter(b, "B")
	eventually(t, 5*time.Second, "B to queue", func() bool { return queued() == 1 })
	waiter(c, "C")
	eventually(t, 5*time.Second, "C to queue", func() bool { return queued() == 2 })
	p.Delay(50 * time.Millisecond)
	mustUnlock(t, ha)
	if err := admin.Do(ctx, "CLIENT", "PAUSE", 2500, "WRITE").Err(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	wg.Wait()
	got := admin.LRange(ctx, logKey, 0, -1).Val()
	if len(got) != 2 || got[0] != "B" || got[1] != "C" {
		t.Fatalf("served %v; want [B C], the order of arrival", got)
	}
}

// A waiter that is granted the lock but gives it back because the answer came too late (a paused
// server) keeps its place at the head of the queue: served B then C where B arrived first, on one
// Client and on two.
func TestFairLockLateGrantKeepsItsPlace(t *testing.T) {
	t.Run("one-client", func(t *testing.T) { lateGrantOrder(t, "FairLock", true) })
	t.Run("two-clients", func(t *testing.T) { lateGrantOrder(t, "FairLock", false) })
}
