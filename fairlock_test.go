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
	n, err := admin.ZCount(t.Context(), q, "-inf", "(+inf").Result()
	if err != nil {
		t.Fatalf("ZCARD: %v", err)
	}
	return n
}

// fairKeys returns the lock and queue keys of fair lock name (no key prefix).
func fairKeys(name string) []string {
	q, qt := redisson.QueueKeys("FairLock", name)
	return []string{name, q, qt}
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
	long(t)
	t.Parallel()
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
	long(t)
	t.Parallel()
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
	long(t)
	t.Parallel()
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

// lateGrantOrder checks that a waiter whose grant is answered too late keeps its place.
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
			for f := range admin.HGetAll(ctx, name).Val() {
				if strings.HasPrefix(f, "ww:") {
					n++
				}
			}
			return n
		}
		q, _ := redisson.QueueKeys(kind, name)
		return admin.ZCount(ctx, q, "-inf", "(+inf").Val()
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
	long(t)
	t.Parallel()
	t.Run("one-client", func(t *testing.T) { lateGrantOrder(t, "FairLock", true) })
	t.Run("two-clients", func(t *testing.T) { lateGrantOrder(t, "FairLock", false) })
}

// TestFairLockLiveWaiterOutlastsShortTimeoutWaiters checks that a live FairLock waiter keeps its
// place when the Clients of the lock have different waiter timeouts. FairLock: "A live waiter keeps
// its place however long the holder keeps the lock (its Client keeps it alive with heartbeats)".
// The queue keys must live as long as the longest-lived waiter needs, not just two timeouts of
// whichever Client joined alone or beat last.
//
// Interleaving: H holds. A (waiter timeout 150ms) queues alone. B (waiter timeout 30s, heartbeats
// every 10s) queues behind it. A gives up and leaves. 600ms later (more than two of A's waiter
// timeouts) B must still be queued; C then queues, and H's Unlock must hand the lock to B, which
// came first.
func TestFairLockLiveWaiterOutlastsShortTimeoutWaiters(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "fair-timeouts"
	q, _ := redisson.QueueKeys("FairLock", name)
	hc := newClient(t, srv.Client(t))
	ac := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(150*time.Millisecond))
	bc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))
	cc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.FairLock(name), ctx)
	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	aDone, _ := lockAsync(actx, ac.FairLock(name))
	eventually(t, 5*time.Second, "A queued", func() bool { return admin.ZCount(ctx, q, "-inf", "(+inf").Val() == 1 })
	order := make(chan string, 2)
	var wg sync.WaitGroup
	waiter := func(c *redisson.Client, who string) {
		spawn(&wg, func() {
			h, err := c.FairLock(name).Lock(ctx)
			if err != nil {
				t.Errorf("%s: %v", who, err)
				return
			}
			order <- who
			_ = h.Unlock(ctx)
		})
	}
	waiter(bc, "B")
	eventually(t, 5*time.Second, "B queued behind A", func() bool { return admin.ZCount(ctx, q, "-inf", "(+inf").Val() == 2 })
	acancel()
	if r := <-aDone; r.err == nil {
		t.Fatal("A acquired")
	}
	time.Sleep(600 * time.Millisecond) // > two of A's waiter timeouts; < a third of B's
	if n := admin.ZCount(ctx, q, "-inf", "(+inf").Val(); n != 1 {
		t.Errorf("live waiter B dropped from the queue: %d queued, want 1", n)
	}
	waiter(cc, "C")
	eventually(t, 5*time.Second, "C queued", func() bool {
		return admin.ZCount(ctx, q, "-inf", "(+inf").Val() >= 1 && len(admin.ZRange(ctx, q, 0, -1).Val()) >= 1
	})
	time.Sleep(100 * time.Millisecond)
	mustUnlock(t, h)
	first := ""
	select {
	case first = <-order:
	case <-time.After(15 * time.Second):
		t.Fatal("nobody acquired after H's Unlock")
	}
	if first != "B" {
		t.Errorf("FairLock served %s first; B queued before it and stayed alive", first)
	}
	wg.Wait()
}

// TestFairLockResentReleaseAfterSameClientRetook checks that a FairLock release whose reply is lost
// answers what its first run did even after the lock it handed over was taken and released by
// another goroutine of the same Client. doc.go, "Re-sent commands": a repeat of a final release
// finds the owner gone, and, as the answer to a re-send of a release sent while the lease was in
// force, is reported as released. A FairLock release hands the lock through the Redis queue
// to another goroutine of the same Client, which can take it (from the message, no round trip) and
// release it while the first release's reply is still lost.
//
// Interleaving: L and M are FairLock acquisitions of one Client. L holds, M is queued. L's Unlock
// hands the lock to M; its reply is lost and go-redis re-sends it on a new connection, whose dial
// is held. M takes the lock and unlocks. Then the re-send goes: L's Unlock must return nil, not
// ErrNotHeld and ErrLockLost for a release that succeeded.
func TestFairLockResentReleaseAfterSameClientRetook(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "fair-resent"
	p := redistest.NewProxy(t, srv.Addr())
	rdb, dial := proxiedClient(t, srv, p, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
		o.MaxIdleConns = 1 // the re-send cannot find another idle connection: it dials
	})
	// Long waiter timeout and watchdog: no heartbeat or renewal can take the dropped reply.
	c := newClient(t, rdb, redisson.WithWaiterTimeout(time.Minute))
	// Load the scripts, so the dropped reply is not a NOSCRIPT error.
	warm := mustLock(t, c.FairLock("fair-warmup"), ctx)
	mustUnlock(t, warm)

	l := mustLock(t, c.FairLock(name), ctx)
	got, _ := lockAsync(ctx, c.FairLock(name))
	q, _ := redisson.QueueKeys("FairLock", name)
	eventually(t, 5*time.Second, "M queued", func() bool { return admin.ZCount(ctx, q, "-inf", "(+inf").Val() == 1 })
	time.Sleep(100 * time.Millisecond)

	reached := dial.holdNext()
	dials := dial.dialed()
	p.DropReplies(1)
	unlocked := make(chan error, 1)
	go func() { unlocked <- l.Unlock(ctx) }()
	select {
	case <-reached:
	case err := <-unlocked:
		t.Fatalf("precondition: L's Unlock returned %v without re-sending", err)
	case <-time.After(5 * time.Second):
		t.Fatal("precondition: L's release was not re-sent")
	}
	p.DropReplies(0)
	r := recvWithin(t, got, 10*time.Second, "M's Lock")
	if r.err != nil {
		t.Fatalf("M's Lock: %v", r.err)
	}
	// M's Unlock dials its own connection (the held dial is the re-send's).
	dial.mu.Lock()
	dial.next = dialPass
	dial.mu.Unlock()
	// M's Unlock runs aside (on its own connection), then L's re-send goes through.
	mUnlocked := make(chan error, 1)
	go func() { mUnlocked <- r.h.Unlock(ctx) }()
	dial.resumeDials()
	err := recvWithin(t, unlocked, 10*time.Second, "L's Unlock")
	if err := recvWithin(t, mUnlocked, 10*time.Second, "M's Unlock"); err != nil {
		t.Fatalf("M's Unlock: %v", err)
	}
	if dial.dialed() == dials {
		t.Fatal("precondition: no new connection for the re-send")
	}
	if err != nil {
		t.Errorf("L's Unlock (reply lost; re-sent after M, a goroutine of the same Client, took the lock "+
			"from it and released it) = %v; want nil: the release succeeded", err)
	}
}

// TestFairLockManyDeadWaitersLetNoNewcomerOvertake checks the FairLock order behind many dead
// waiters. FairLock: "every waiting acquisition ... queues in Redis in the order of its arrival
// there, and a release hands the lock to the head of the queue"; a waiter "whose process died is
// evicted after the waiter timeout". A crashed process may leave many waiters queued (a FairLock has
// no local gate: every goroutine queues in Redis). However many dead waiters are ahead of a live
// one, the release must hand the lock to the live waiter, and a newcomer must not find "nobody
// waits" and take the lock ahead of it.
//
// The dead waiters (40) are written as a process that crashed leaves them: ids queued before the
// live waiter, their liveness deadlines passed.
func TestFairLockManyDeadWaitersLetNoNewcomerOvertake(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "fair-dead-many"
	q, qt := redisson.QueueKeys("FairLock", name)
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Minute))
	nc := newClient(t, srv.Client(t))

	h := mustLock(t, hc.FairLock(name), ctx)
	now, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	const dead = 40
	for i := 0; i < dead; i++ {
		id := fmt.Sprintf("0123456789abcdef01234567:%d", i+1)
		admin.ZAdd(ctx, q, redis.Z{Score: float64(now.UnixMicro() - 10_000_000 + int64(i)), Member: queueMember(id, 5*time.Second)})
	}
	admin.ZAdd(ctx, qt, redis.Z{Score: float64(now.UnixMilli() - 1000), Member: "0123456789abcdef01234567"})
	admin.PExpire(ctx, q, 10*time.Second)
	admin.PExpire(ctx, qt, 10*time.Second)

	got, _ := lockAsync(ctx, wc.FairLock(name))
	eventually(t, 5*time.Second, "W queued behind the dead waiters", func() bool { return admin.ZCount(ctx, q, "-inf", "(+inf").Val() == dead+1 })
	mustUnlock(t, h)

	nctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if n, err := nc.FairLock(name).Lock(nctx); err == nil {
		t.Errorf("a newcomer acquired the FairLock ahead of the live waiter W queued before it " +
			"(the release evicted 16 dead waiters and freed the lock; the newcomer evicted 16 more)")
		mustUnlock(t, n)
	}
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("W: %v", r.err)
		}
		mustUnlock(t, r.h)
	case <-time.After(5 * time.Second):
		t.Errorf("the live waiter W was not served within 5s of the lock becoming free")
	}
}

// TestFairLockDeadHeirStallsAtMostWaiterTimeout checks doc.go, Waiting: "if the lock was handed to
// it just before it died, the lock is reserved for it until that deadline, so a dead waiter stalls
// the lock at most a waiter timeout" (WithWaiterTimeout: "this also bounds how long a dead waiter
// stalls the lock"). When the dead waiter's reservation runs out, the key simply expires and nobody
// is told; on a FairLock nobody else may take the free lock meanwhile (it goes only to the head of
// the queue), so the next live waiter must find it free by itself, not sleep on until its re-poll
// (here a minute; up to an hour).
//
// The dead waiter is written as a crashed process leaves it: queued before the live waiter, its
// liveness deadline 1.5s ahead (its last heartbeat was just before it died).
func TestFairLockDeadHeirStallsAtMostWaiterTimeout(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "fair-dead-heir"
	const wt = 2 * time.Second // every Client's waiter timeout
	key := name
	q, qt := redisson.QueueKeys("FairLock", name)
	hc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt))
	wc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.FairLock(name), ctx)
	now, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	const dead = "0123456789abcdef01234567:1"
	admin.ZAdd(ctx, q, redis.Z{Score: float64(now.UnixMicro() - 1000), Member: queueMember(dead, wt)})
	admin.ZAdd(ctx, qt, redis.Z{Score: float64(now.UnixMilli() + 1500), Member: "0123456789abcdef01234567"})
	admin.PExpire(ctx, q, 2*wt)
	admin.PExpire(ctx, qt, 2*wt)

	got, cancel := lockAsync(ctx, wc.FairLock(name))
	defer cancel()
	awaitQueuedAsleep(t, admin, wc, name, q, 2)
	mustUnlock(t, h)
	released := time.Now()
	if v := admin.Get(ctx, key).Val(); !strings.HasPrefix(v, dead+"|") {
		t.Fatalf("precondition: the lock was not handed to the dead waiter: %q", v)
	}
	bound := wt + 2*time.Second // the documented stall, and slack
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("W: %v", r.err)
		}
		mustUnlock(t, r.h)
	case <-time.After(bound):
		t.Errorf("the live waiter W, queued right behind a dead waiter that was handed the FairLock, is still waiting "+
			"%v after the release (lock now %q, %d queued); a dead waiter should stall the lock at most a waiter timeout (%v)",
			time.Since(released).Round(time.Millisecond), admin.Get(ctx, key).Val(), admin.ZCount(ctx, q, "-inf", "(+inf").Val(), wt)
		cancel()
		if r := <-got; r.err == nil {
			_ = r.h.Unlock(ctx)
		}
	}
}

// TestFairLockWaiterDeadlineSurvivesShortTimeoutClient checks that a live FairLock waiter is never
// evicted as dead for want of its Client's deadline in ":qt". wait_queue.lua, "Epochs": a Client
// skips refreshing its deadline on a join while its last refresh is recent, "which is only safe
// while that refresh is still in qt"; so a Client with a smaller waiter timeout that joins an empty
// queue must not cut ":qt"'s TTL below what the other Clients' deadlines need. FairLock: "A live
// waiter keeps its place however long the holder keeps the lock".
//
// Interleaving: H holds the FairLock. L1 (Client L, waiter timeout 30s) queues, refreshing L's
// deadline, and gives up. S (waiter timeout 200ms) queues alone and gives up; 600ms pass: L's
// deadline must still be in ":qt". L2 (Client L again) queues (no refresh: same epoch), and N (a
// default Client) queues behind it. H's process dies (Close: the lock expires with its 1s watchdog
// lease). The FairLock must serve L2, which queued first and is alive, before N.
func TestFairLockWaiterDeadlineSurvivesShortTimeoutClient(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "fair-epoch"
	q, qt := redisson.QueueKeys("FairLock", name)
	hc := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(time.Second))
	lc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))
	sc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(200*time.Millisecond))
	nc := newClient(t, srv.Client(t))

	mustLock(t, hc.FairLock(name), ctx)

	l1, cancelL1 := lockAsync(ctx, lc.FairLock(name))
	awaitQueueLen(t, admin, q, 1, "L1 queued")
	lClient := queuedClientAt(t, admin, q, 0)
	if err := admin.ZScore(ctx, qt, lClient).Err(); err != nil {
		t.Fatalf("precondition: L's deadline not in qt after L1 queued: %v", err)
	}
	cancelLock(t, l1, cancelL1)
	awaitQueueLen(t, admin, q, 0, "L1 to leave")

	s, cancelS := lockAsync(ctx, sc.FairLock(name))
	awaitQueueLen(t, admin, q, 1, "S queued")
	qtTTL := admin.PTTL(ctx, qt).Val()
	cancelLock(t, s, cancelS)
	awaitQueueLen(t, admin, q, 0, "S to leave")
	// Past two of S's waiter timeouts (a TTL S's join could set): a time, not an event, is awaited.
	time.Sleep(600 * time.Millisecond)
	if err := admin.ZScore(ctx, qt, lClient).Err(); err != nil {
		t.Fatalf("L's deadline gone from qt after a Client with a shorter waiter timeout queued and left: %v", err)
	}

	l2, cancelL2 := lockAsync(ctx, lc.FairLock(name))
	defer cancelL2()
	awaitQueueLen(t, admin, q, 1, "L2 queued")
	lDeadline := admin.ZScore(ctx, qt, lClient).Err()
	n, cancelN := lockAsync(ctx, nc.FairLock(name))
	defer cancelN()
	awaitQueueLen(t, admin, q, 2, "N queued behind L2")

	if err := hc.Close(); err != nil { // H's process "dies": its lock expires with its lease
		t.Fatal(err)
	}
	select {
	case r := <-l2:
		if r.err != nil {
			t.Fatalf("L2: %v", r.err)
		}
		mustUnlock(t, r.h)
	case r := <-n:
		if r.err != nil {
			t.Fatalf("N: %v", r.err)
		}
		t.Errorf("FairLock served N before L2, which queued first and is alive (its Client's heartbeat for it is due a third "+
			"of its 30s timeout after it queued): "+
			"S (waiter timeout 200ms) cut qt's TTL to %v, qt expired, and L2's join skipped its refresh under the "+
			"unchanged epoch (L's deadline in qt when L2 queued: %v), so queue_head evicted L2 as dead", qtTTL, lDeadline)
		mustUnlock(t, r.h)
	case <-time.After(14 * time.Second): // L2's heartbeat (a third of 30s) notices the free lock
		t.Fatal("nobody acquired the free FairLock")
	}
}

// TestFairLockCutOffClientStallsOnlyOnce checks doc.go, Waiting: "a dead waiter stalls the lock at
// most a waiter timeout, one in a process stopped or cut off while still subscribed included, and
// the waiter behind it ... finds the lock free at its next heartbeat or re-poll ...; by then the
// stopped process's other waiters are past their deadline and skipped." A process that is cut off
// (or SIGSTOPped, or whose host vanished without a FIN) stays subscribed as far as Redis knows, so
// every PUBLISH to its channel still counts one receiver: a release must nevertheless skip its
// waiters whose Client's deadline has passed, rather than hand each of them the lock for a full
// waiter timeout in turn.
//
// Interleaving (every Client: waiter timeout 1s): H holds the FairLock; P1 (Client P), A, P2
// (Client P) and B queue in that order. P is cut off (a proxy black-holes its connections, which stay
// open). P's deadline passes. H unlocks: P1 is handed the lock (PUBLISH counts P's subscription):
// the documented one stall. It expires; A's heartbeat finds it free and A takes it. A unlocks: P2,
// whose Client's deadline passed a second ago or more, must be skipped and the lock go to B.
func TestFairLockCutOffClientStallsOnlyOnce(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "fair-cutoff"
	const wt = time.Second
	key := name
	q, qt := redisson.QueueKeys("FairLock", name)
	p := redistest.NewProxy(t, srv.Addr())
	pc := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }),
		redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))
	hc := newClient(t, srv.Client(t))
	ac := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))
	bc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.FairLock(name), ctx)
	p1, cancelP1 := lockAsync(ctx, pc.FairLock(name))
	awaitQueueLen(t, admin, q, 1, "P1 queued")
	a, cancelA := lockAsync(ctx, ac.FairLock(name))
	defer cancelA()
	awaitQueueLen(t, admin, q, 2, "A queued")
	p2, cancelP2 := lockAsync(ctx, pc.FairLock(name))
	awaitQueueLen(t, admin, q, 3, "P2 queued")
	b, cancelB := lockAsync(ctx, bc.FairLock(name))
	defer cancelB()
	awaitQueueLen(t, admin, q, 4, "B queued")
	pch := redisson.ChannelOf(pc, name)
	eventually(t, 5*time.Second, "P subscribed", func() bool { return admin.PubSubNumSub(ctx, pch).Val()[pch] == 1 })
	pClient := queuedClientAt(t, admin, q, 0)
	p2ID, _ := queuedWaiter(admin.ZRange(ctx, q, 2, 2).Val()[0])
	defer func() {
		p.Blackhole(false)
		p.CloseConns()
		cancelP1()
		cancelP2()
		for _, ch := range []<-chan lockResult{p1, p2} {
			if r := recvWithin(t, ch, 15*time.Second, "P's waiters to end"); r.err == nil {
				_ = r.h.Unlock(ctx)
			}
		}
	}()

	p.Blackhole(true) // P is cut off; its connections stay open
	eventually(t, 5*time.Second, "P's deadline to pass", func() bool {
		d, err := admin.ZScore(ctx, qt, pClient).Result()
		now, _ := admin.Time(ctx).Result()
		return err == nil && int64(d) < now.UnixMilli()
	})
	mustUnlock(t, h) // P1 is handed the lock: the one documented stall
	ra := recvWithin(t, a, 10*time.Second, "A to take the lock after P1's reservation")
	if ra.err != nil {
		t.Fatalf("A: %v", ra.err)
	}
	d, _ := admin.ZScore(ctx, qt, pClient).Result()
	now, _ := admin.Time(ctx).Result()
	mustUnlock(t, ra.h)
	v := admin.Get(ctx, key).Val()
	pttl := admin.PTTL(ctx, key).Val()
	if owner, _, _ := redisson.DecodeLockValue(v); owner == p2ID {
		t.Errorf("A's release handed the lock (%q, PTTL %v) to P2, a waiter of the cut-off Client P whose deadline passed "+
			"%dms before: the lock stalls a second full waiter timeout; B, alive, waits behind it", v, pttl, now.UnixMilli()-int64(d))
	}
	if rb := recvWithin(t, b, 10*time.Second, "B"); rb.err == nil {
		mustUnlock(t, rb.h)
	}
}

// queueTicket is the ticket (score) of member in q, or -1 if it is not queued.
func queueTicket(t *testing.T, admin *redis.Client, q, member string) float64 {
	t.Helper()
	s, err := admin.ZScore(t.Context(), q, member).Result()
	if err != nil {
		return -1
	}
	return s
}

// TestFairLockQueueKeptForLiveShortTimeoutWaiters checks that the queue does not expire under live,
// heartbeating waiters with a short waiter timeout. wait_queue.lua: "Both keys live at least two
// waiter timeouts (of the longest timeout among the waiters that joined or were kept alive since)
// after the last join or refresh"; FairLock: a live waiter keeps its place. A queue that expired
// would send each waiter back to the end at its next heartbeat, in whatever order the heartbeats
// come: FIFO lost. Here ":qt" carries a long TTL (a Client with a long waiter timeout queued and
// left) while ":q" is created afresh by a short-timeout Client's join, with two of that Client's
// timeouts; the heartbeats must keep ":q" alive too, whatever ":qt"'s TTL.
//
// Interleaving: H holds the FairLock. A1 (Client A, waiter timeout 3s) queues and gives up. B1
// (Client B, 300ms; its network adds 40ms each way) queues: ":q" is new. D1 (Client D, 150ms)
// queues behind B1. For 3s B1 must keep its ticket, ahead of D1, and H's Unlock must then hand the
// lock to B1.
func TestFairLockQueueKeptForLiveShortTimeoutWaiters(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "fair-q-kept"
	key := name
	q, qt := redisson.QueueKeys("FairLock", name)
	p := redistest.NewProxy(t, srv.Addr())
	hc := newClient(t, srv.Client(t))
	ac := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(3*time.Second), redisson.WithRepollInterval(time.Minute))
	bc := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }),
		redisson.WithWaiterTimeout(300*time.Millisecond), redisson.WithRepollInterval(time.Minute))
	dc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(150*time.Millisecond), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.FairLock(name), ctx)
	a, cancelA := lockAsync(ctx, ac.FairLock(name))
	awaitQueueLen(t, admin, q, 1, "A1 queued")
	cancelLock(t, a, cancelA)
	awaitQueueLen(t, admin, q, 0, "A1 left")

	p.Delay(40 * time.Millisecond)
	defer p.Delay(0)
	b, cancelB := lockAsync(ctx, bc.FairLock(name))
	defer cancelB()
	awaitQueueLen(t, admin, q, 1, "B1 queued")
	bMember := admin.ZRange(ctx, q, 0, 0).Val()[0]
	bTicket := queueTicket(t, admin, q, bMember)
	qTTL, qtTTL := admin.PTTL(ctx, q).Val(), admin.PTTL(ctx, qt).Val()
	d, cancelD := lockAsync(ctx, dc.FairLock(name))
	defer cancelD()
	awaitQueueLen(t, admin, q, 2, "D1 queued behind B1")
	dMember := admin.ZRange(ctx, q, 1, 1).Val()[0]

	// Watch the queue for up to 3s: B1 must keep its ticket, ahead of D1.
	requeued, inverted := false, false
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && !inverted; time.Sleep(2 * time.Millisecond) {
		bs, ds := queueTicket(t, admin, q, bMember), queueTicket(t, admin, q, dMember)
		requeued = requeued || (bs >= 0 && bs != bTicket)
		inverted = bs >= 0 && ds >= 0 && ds < bs
	}
	order := admin.ZRange(ctx, q, 0, -1).Val()
	mustUnlock(t, h)
	owner, _, _ := redisson.DecodeLockValue(admin.Get(ctx, key).Val())
	if requeued || inverted || owner+"/300" != bMember {
		t.Errorf("B1 (queued first, alive, heartbeating every 100ms) lost its place (re-queued with a new ticket: %v; "+
			"D1 ahead of it: %v): q had PTTL %v when B1 created it, qt %v, and heartbeats never extend q while qt is "+
			"long; queue at H's release %v; the lock went to %q (B1 is %q)",
			requeued, inverted, qTTL, qtTTL, order, owner, bMember)
	}
	p.Delay(0)
	drainLockResults(t, b, d)
}

// drainLockResults waits for every background Lock call to return, unlocking each that acquired (in
// whatever order they are served).
func drainLockResults(t *testing.T, chs ...<-chan lockResult) {
	t.Helper()
	all := make(chan lockResult, len(chs))
	for _, ch := range chs {
		go func() { all <- <-ch }()
	}
	timeout := time.After(15 * time.Second)
	for left := len(chs); left > 0; left-- {
		select {
		case r := <-all:
			if r.err == nil {
				_ = r.h.Unlock(context.WithoutCancel(t.Context()))
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %d waiters to end", left)
		}
	}
}
