package redisson_test

// Fifth adversarial review (of 37f3eda): the wait queue's liveness per Client, the queue epochs that
// let a queueing attempt skip refreshing its Client's deadline, and the hand-over that trusts the
// receiver count of PUBLISH. Each test forces an interleaving and asserts a guarantee stated in
// doc.go, the API docs or the scripts' own comments; each fails on 37f3eda for the reason given in
// its comment.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a5Count waits until q holds n waiters.
func a5Count(t *testing.T, admin *redis.Client, q string, n int64, what string) {
	t.Helper()
	eventually(t, 5*time.Second, what, func() bool { return admin.ZCard(t.Context(), q).Val() == n })
}

// a5Client is the client id (the qt member) of the waiter at index i of q.
func a5Client(t *testing.T, admin *redis.Client, q string, i int64) string {
	t.Helper()
	m := admin.ZRange(t.Context(), q, i, i).Val()
	if len(m) != 1 {
		t.Fatalf("no waiter at %d in %s", i, q)
	}
	_, c := queuedWaiter(m[0])
	return c
}

// a5Cancel cancels a background Lock call and releases what it got, if anything.
func a5Cancel(t *testing.T, got <-chan lockResult, cancel context.CancelFunc) {
	t.Helper()
	cancel()
	if r := regressWait(t, got, 10*time.Second, "a cancelled Lock to return"); r.err == nil {
		_ = r.h.Unlock(context.WithoutCancel(t.Context()))
	}
}

// wait_queue.lua, "Epochs": "A client skips refreshing its deadline on a join while its last refresh
// is recent, which is only safe while that refresh is still in qt" — and the claimed invariant is
// that qt is only ever removed together with the end of the epoch (a release or free acquisition
// that finds the queue empty). But qt also *expires*, and its TTL can be cut short by a Client with a
// smaller waiter timeout: queue_keep, run when a join creates q afresh (PTTL(q) = -1), sets both q and
// qt to two of *the joining Client's* timeouts, even when qt holds the deadline of a Client with a
// much longer timeout. When that qt expires, the lock still carries the same epoch, so the long-timeout
// Client's next join skips its refresh (knownEpoch == the lock's epoch) and its waiter is queued with
// no deadline at all: every script that reads deadlines (queue_head on a free FairLock, queue_serve
// when PUBLISH reaches nobody) takes it for dead and evicts it, though its Client is alive and
// heartbeating. FairLock docs: "A live waiter keeps its place however long the holder keeps the lock".
//
// Interleaving: H holds the FairLock (epoch e). L1 (Client L, waiter timeout 30s) queues: L refreshes
// its deadline under e (note: e, valid 10s); L1 gives up (q empties, qt keeps L's deadline, TTL 60s).
// S (waiter timeout 200ms) queues alone: q is new, so q and qt get PEXPIRE 400ms; S gives up; qt
// expires 400ms later. L2 (Client L again, 1s after L's refresh) queues: the lock still carries e, so
// no refresh: L has no entry in qt. N (default Client) queues behind L2. H's process dies (Close: the
// lock expires with its 1s watchdog lease). N's re-poll finds the FairLock free; queue_head evicts L2
// (no deadline) and serves N: L2, queued first and alive, is overtaken and loses its place.
func TestAttack5EpochSkipAfterQueueTTLShortenedEvictsLiveFairWaiter(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a5-epoch-ttl"
	q, qt := redisson.QueueKeys("FairLock", name)
	hc := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(time.Second))
	lc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))
	sc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(200*time.Millisecond))
	nc := newClient(t, srv.Client(t))

	mustLock(t, hc.FairLock(name), ctx)

	l1, cancelL1 := lockAsync(ctx, lc.FairLock(name))
	a5Count(t, admin, q, 1, "L1 queued")
	lClient := a5Client(t, admin, q, 0)
	if err := admin.ZScore(ctx, qt, lClient).Err(); err != nil {
		t.Fatalf("precondition: L's deadline not in qt after L1 queued: %v", err)
	}
	a5Cancel(t, l1, cancelL1)
	a5Count(t, admin, q, 0, "L1 to leave")

	s, cancelS := lockAsync(ctx, sc.FairLock(name))
	a5Count(t, admin, q, 1, "S queued")
	qtTTL := admin.PTTL(ctx, qt).Val()
	a5Cancel(t, s, cancelS)
	a5Count(t, admin, q, 0, "S to leave")
	// Past the TTL S's join used to set (two of its timeouts): a time, not an event, is awaited.
	time.Sleep(600 * time.Millisecond)
	if err := admin.ZScore(ctx, qt, lClient).Err(); err != nil {
		t.Fatalf("L's deadline gone from qt after a Client with a shorter waiter timeout queued and left: %v", err)
	}

	l2, cancelL2 := lockAsync(ctx, lc.FairLock(name))
	defer cancelL2()
	a5Count(t, admin, q, 1, "L2 queued")
	lDeadline := admin.ZScore(ctx, qt, lClient).Err()
	n, cancelN := lockAsync(ctx, nc.FairLock(name))
	defer cancelN()
	a5Count(t, admin, q, 2, "N queued behind L2")

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

// The same hole at a release, for every kind. queue_serve trusts a waiter whose Client receives the
// wake-up and, "only when nobody receives it (the process died, or it is subscribing or
// resubscribing)", reads its Client's deadline: "a live waiter keeps what it is given, for no longer
// than its deadline, and finds it its own when it tries again once subscribed". A waiter queued by a
// join that skipped its refresh (epoch unchanged, but qt expired after a shorter-timeout Client cut
// its TTL) has no deadline: if the release comes while its Client is (re)subscribing, it is skipped
// as dead and evicted, and the lock goes to a waiter that queued after it.
//
// Interleaving: as in TestAttack5EpochSkipAfterQueueTTLShortenedEvictsLiveFairWaiter up to qt's
// expiry; then L's channel is left to be unsubscribed (its 2s linger), L's pub/sub connection is
// slowed (a proxy delays it by 2s, so L2's SUBSCRIBE is in flight, as after a reconnect), L2 queues
// (no refresh: same epoch) and N queues behind it. H unlocks: PUBLISH to L reaches nobody, L has no
// deadline, L2 is skipped; the lock is handed to N.
func TestAttack5EpochSkipLiveWaiterSkippedWhileSubscribing(t *testing.T) {
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) { attack5SkippedWhileSubscribing(t, kind) })
	}
}

func attack5SkippedWhileSubscribing(t *testing.T, kind string) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "a5-subscribing-" + kind
	key := "{" + name + "}"
	q, qt := redisson.QueueKeys(kind, name)
	p := redistest.NewProxy(t, srv.Addr())
	lrdb, _ := a3PubSubProxied(t, srv, p)
	hc := newClient(t, srv.Client(t))
	lc := newClient(t, lrdb, redisson.WithWaiterTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))
	sc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(200*time.Millisecond))
	nc := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Minute))
	lch := redisson.ChannelOf(lc, name)

	h := mustLock(t, lockOf(hc, kind, name), ctx)

	l1, cancelL1 := lockAsync(ctx, lockOf(lc, kind, name))
	a5Count(t, admin, q, 1, "L1 queued")
	lClient := a5Client(t, admin, q, 0)
	a5Cancel(t, l1, cancelL1)
	a5Count(t, admin, q, 0, "L1 to leave")

	s, cancelS := lockAsync(ctx, lockOf(sc, kind, name))
	a5Count(t, admin, q, 1, "S queued")
	a5Cancel(t, s, cancelS)
	a5Count(t, admin, q, 0, "S to leave")
	// Past the TTL S's join used to set (two of its timeouts): a time, not an event, is awaited.
	time.Sleep(600 * time.Millisecond)
	if err := admin.ZScore(ctx, qt, lClient).Err(); err != nil {
		t.Fatalf("L's deadline gone from qt after a Client with a shorter waiter timeout queued and left: %v", err)
	}
	eventually(t, 5*time.Second, "L's channel to be unsubscribed (linger)", func() bool {
		return admin.PubSubNumSub(ctx, lch).Val()[lch] == 0
	})

	p.Delay(2 * time.Second) // L's next SUBSCRIBE is in flight for 2s
	defer p.Delay(0)
	l2, cancelL2 := lockAsync(ctx, lockOf(lc, kind, name))
	defer cancelL2()
	a5Count(t, admin, q, 1, "L2 queued")
	lDeadline := admin.ZScore(ctx, qt, lClient).Err()
	n, cancelN := lockAsync(ctx, lockOf(nc, kind, name))
	defer cancelN()
	a5Count(t, admin, q, 2, "N queued behind L2")
	nch := redisson.ChannelOf(nc, name)
	eventually(t, 5*time.Second, "N subscribed", func() bool { return admin.PubSubNumSub(ctx, nch).Val()[nch] == 1 })
	if admin.PubSubNumSub(ctx, lch).Val()[lch] != 0 {
		t.Fatal("precondition: L's SUBSCRIBE was not delayed")
	}

	mustUnlock(t, h)
	v := admin.Get(ctx, key).Val()
	owner, _, _ := redisson.DecodeLockValue(v)
	if _, client := queuedWaiter(owner); client != lClient {
		t.Errorf("H's release skipped L2, the head of the queue, alive (its Client heartbeats, only its SUBSCRIBE was in "+
			"flight) and handed the lock to %q, queued after it: L2's join skipped its refresh under the unchanged "+
			"epoch after qt expired (L's deadline in qt when L2 queued: %v)", v, lDeadline)
	}
	p.Delay(0)
	cancelL2()
	cancelN()
	for _, ch := range []<-chan lockResult{l2, n} {
		if r := regressWait(t, ch, 10*time.Second, "a waiter to end"); r.err == nil {
			_ = r.h.Unlock(ctx)
		}
	}
}

// doc.go, Waiting: "a dead waiter stalls the lock at most a waiter timeout, one in a process stopped
// or cut off while still subscribed included, and the waiter behind it ... finds the lock free at its
// next heartbeat or re-poll ...; by then the stopped process's other waiters are past their deadline
// and skipped."
//
// queue_serve never reads the deadline of the first waiter it pops: it PUBLISHes, and a receiver
// count ≥ 1 is taken as proof of life, reserving the lock for the waiter's full timeout. A process
// that is cut off (or SIGSTOPped, or whose host vanished without a FIN) stays subscribed as far as
// Redis knows, so every PUBLISH to its channel still counts one receiver, however long its deadline
// has passed. Each of its waiters that reaches the head of the queue at a release is therefore handed
// the lock for a full waiter timeout instead of being skipped: with k of them interleaved with live
// waiters, the lock stalls k waiter timeouts (plus a heartbeat each), not one.
//
// Interleaving (every Client: waiter timeout 1s): H holds the FairLock; P1 (Client P), A, P2
// (Client P) and B queue in that order. P is cut off (a proxy black-holes its connections, which stay
// open). P's deadline passes. H unlocks: P1 is handed the lock (PUBLISH counts P's subscription):
// the documented one stall. It expires; A's heartbeat finds it free and A takes it. A unlocks: P2,
// whose Client's deadline passed a second ago or more, should be skipped and the lock handed to B;
// it is handed to P2, for another full waiter timeout.
func TestAttack5CutOffSubscriberCountsAsAliveForEveryWaiter(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a5-cutoff"
	const wt = time.Second
	key := "{" + name + "}"
	q, qt := redisson.QueueKeys("FairLock", name)
	p := redistest.NewProxy(t, srv.Addr())
	pc := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }),
		redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))
	hc := newClient(t, srv.Client(t))
	ac := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))
	bc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.FairLock(name), ctx)
	p1, cancelP1 := lockAsync(ctx, pc.FairLock(name))
	a5Count(t, admin, q, 1, "P1 queued")
	a, cancelA := lockAsync(ctx, ac.FairLock(name))
	defer cancelA()
	a5Count(t, admin, q, 2, "A queued")
	p2, cancelP2 := lockAsync(ctx, pc.FairLock(name))
	a5Count(t, admin, q, 3, "P2 queued")
	b, cancelB := lockAsync(ctx, bc.FairLock(name))
	defer cancelB()
	a5Count(t, admin, q, 4, "B queued")
	pch := redisson.ChannelOf(pc, name)
	eventually(t, 5*time.Second, "P subscribed", func() bool { return admin.PubSubNumSub(ctx, pch).Val()[pch] == 1 })
	pClient := a5Client(t, admin, q, 0)
	p2ID, _ := queuedWaiter(admin.ZRange(ctx, q, 2, 2).Val()[0])
	defer func() {
		p.Blackhole(false)
		p.CloseConns()
		cancelP1()
		cancelP2()
		for _, ch := range []<-chan lockResult{p1, p2} {
			if r := regressWait(t, ch, 15*time.Second, "P's waiters to end"); r.err == nil {
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
	ra := regressWait(t, a, 10*time.Second, "A to take the lock after P1's reservation")
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
	if rb := regressWait(t, b, 10*time.Second, "B"); rb.err == nil {
		mustUnlock(t, rb.h)
	}
}

// PUBLISH's receiver count includes pattern subscribers: a connection with a PSUBSCRIBE matching the
// wake-up channel (a monitoring tool, redis-cli psubscribe '*') makes a dead waiter look alive to the
// release, which hands it the lock for its waiter timeout. (Review 5 found the stall; it is now
// bounded, and documented: once per dead Client, not once per waiter.)
//
// Interleaving: a process D died (its connection is closed) with two waiters queued; its deadline
// passed 10s ago (written as the crashed process left it). W, alive, queues behind them. An
// unrelated connection runs PSUBSCRIBE *. H unlocks: D's first waiter is handed the lock (the one
// stall); when that ends, the lock is found free and D's second waiter is evicted with D's other
// waiters: W acquires within one waiter timeout (plus its heartbeat and slack), and D's second
// waiter never holds the lock, not even after W's release.
func TestAttack5PatternSubscriberMakesDeadWaiterAlive(t *testing.T) {
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) { attack5PatternSubscriber(t, kind) })
	}
}

func attack5PatternSubscriber(t *testing.T, kind string) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "a5-psub-" + kind
	key := "{" + name + "}"
	const wt = time.Second // every Client's
	q, qt := redisson.QueueKeys(kind, name)
	hc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt))
	wc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, lockOf(hc, kind, name), ctx)
	now, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	const dead = "0123456789abcdef01234567"
	for i := range 2 {
		admin.ZAdd(ctx, q, redis.Z{Score: float64(now.UnixMicro() - 20_000_000 + int64(i)), Member: queueMember(fmt.Sprintf("%s:%d", dead, i+1), wt)})
	}
	admin.ZAdd(ctx, qt, redis.Z{Score: float64(now.UnixMilli() - 10_000), Member: dead})
	admin.PExpire(ctx, q, 10*wt)
	admin.PExpire(ctx, qt, 10*wt)

	got, cancel := lockAsync(ctx, lockOf(wc, kind, name))
	defer cancel()
	a5Count(t, admin, q, 3, "W queued behind the dead waiters")
	wch := redisson.ChannelOf(wc, name)
	eventually(t, 5*time.Second, "W subscribed", func() bool { return admin.PubSubNumSub(ctx, wch).Val()[wch] == 1 })

	mon := srv.Client(t).PSubscribe(ctx, "*")
	defer mon.Close()
	if _, err := mon.Receive(ctx); err != nil { // the subscription is confirmed
		t.Fatal(err)
	}
	released := time.Now()
	mustUnlock(t, h)
	var owners []string
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // record every holder until W's wait ends
		defer close(done)
		for {
			if o, _, ok := redisson.DecodeLockValue(admin.Get(ctx, key).Val()); ok && (len(owners) == 0 || owners[len(owners)-1] != o) {
				owners = append(owners, o)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond): // polling the lock's value
			}
		}
	}()
	r := regressWait(t, got, 10*time.Second, "W")
	waited := time.Since(released)
	close(stop)
	<-done
	if r.err != nil {
		t.Fatalf("W: %v", r.err)
	}
	mustUnlock(t, r.h) // W's release hands the lock on to whoever is still queued
	if o, _, ok := redisson.DecodeLockValue(admin.Get(ctx, key).Val()); ok {
		owners = append(owners, o)
	}
	for _, o := range owners {
		if o == dead+":2" {
			t.Errorf("holders %v: the dead Client's second waiter was handed the lock too (a stall per waiter, not per Client)", owners)
		}
	}
	if limit := wt + wt/3 + time.Second; waited > limit {
		t.Errorf("W acquired %v after the release; want one stall at most (%v)", waited, limit)
	}
}
