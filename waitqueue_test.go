package redisson_test

// The Redis-side wait queue that the lock kinds share (internal/scripts/wait_queue.lua): hand-over
// to the head of the queue, the liveness of waiters per Client (deadlines in the ":qt" key,
// heartbeats, PUBLISH receiver counts) and reservations of a handed lock. Tests of the FairLock's
// order are in fairlock_test.go.

import (
	"context"
	"fmt"
	"net"
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

// waiterOp marks the contexts of a waiter's lock calls (cmdHook.markKey of pubSubProxied).
type waiterOp struct{}

// pubSubProxied returns a go-redis client for srv whose pub/sub connections go through p (so a
// test can delay wake-up messages) and whose command connections go straight to the server,
// through a cmdHook counting the held commands marked with waiterOp.
func pubSubProxied(t *testing.T, srv *redistest.Server, p *redistest.Proxy) (*redis.Client, *cmdHook) {
	t.Helper()
	hook := &cmdHook{markKey: waiterOp{}}
	rdb := srv.Client(t, func(o *redis.Options) {
		o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var nd net.Dialer
			if pubSubDial() {
				return nd.DialContext(ctx, network, p.Addr())
			}
			return nd.DialContext(ctx, network, srv.Addr())
		}
	})
	rdb.AddHook(hook)
	t.Cleanup(hook.release) // runs before rdb is closed
	return rdb, hook
}

// TestWaitQueueLateHandOverMessageKeepsOneOwner checks, for every kind, that a hand-over message
// read late does not make its waiter an owner of a lock that has expired meanwhile and been taken
// by another owner. A waiter takes a hand-over from the message naming it, counting the
// reservation from the send time of its latest queued attempt or heartbeat; that is sound only if
// the hand-over came after that request ran, but the message may be read after a later attempt of
// the same wait (run by a wake-up that came first, here a heartbeat's kick) found the lock no
// longer the waiter's.
//
// Interleaving (W's Client: its commands held by a cmdHook, its pub/sub connection delayed by a
// proxy): H holds the lock, W is queued. All of W's commands are held, and the pub/sub delayed by a
// little more than W's remaining reservation. H unlocks: the lock is handed to W (reserved until W's
// liveness deadline) and "W" is published. W's held heartbeat lapses, which kicks W: its attempt is
// held too. The reservation runs out; X takes the free lock. W's commands go: the attempt finds X
// holding and queues W. Then the delayed message arrives: W's Lock must not return a Hold while X
// holds the lock.
func TestWaitQueueLateHandOverMessageKeepsOneOwner(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) { lateHandOverMessage(t, kind) })
	}
}

// lateHandOverMessage runs TestWaitQueueLateHandOverMessageKeepsOneOwner's scenario for kind.
func lateHandOverMessage(t *testing.T, kind string) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "late-message-" + kind
	const wt = 2 * time.Second
	p := redistest.NewProxy(t, srv.Addr())
	wrdb, hook := pubSubProxied(t, srv, p)
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, wrdb, redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))
	xc := newClient(t, srv.Client(t))
	key := name
	q, qt := redisson.QueueKeys(kind, name)

	h := mustLock(t, lockOf(hc, kind, name), ctx)
	got, _ := lockAsync(context.WithValue(ctx, waiterOp{}, true), lockOf(wc, kind, name))
	eventually(t, 5*time.Second, "W queued and subscribed", func() bool {
		subs := admin.PubSubNumSub(ctx, redisson.ChannelOf(wc, name)).Val()
		return admin.ZCount(ctx, q, "-inf", "(+inf").Val() == 1 && subs[redisson.ChannelOf(wc, name)] == 1
	})
	time.Sleep(100 * time.Millisecond) // the subscription confirmed; W asleep

	// Hold every command of W's Client; then read W's liveness deadline, which nothing moves now.
	hook.hold(nil)
	eventually(t, 2*time.Second, "W's commands in flight to finish", func() bool { return hook.inFlight() == 0 })
	w, client := queuedWaiter(admin.ZRange(ctx, q, 0, 0).Val()[0])
	deadline, _ := admin.ZScore(ctx, qt, client).Result()
	now, _ := admin.Time(ctx).Result()
	left := time.Duration(int64(deadline)-now.UnixMilli()) * time.Millisecond
	p.Delay(left + 500*time.Millisecond) // the message arrives half a second after the reservation ends

	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("H Unlock: %v", err)
	}
	if v := admin.Get(ctx, key).Val(); !strings.HasPrefix(v, w+"|") {
		t.Fatalf("precondition: the lock was not handed to W: %q", v)
	}
	eventually(t, 2*wt, "W's attempt (kicked by its lapsed heartbeat) to be held", func() bool { return hook.heldMarked() >= 1 })
	eventually(t, 2*wt, "the reservation to run out", func() bool { return admin.Exists(ctx, key).Val() == 0 })
	x := mustLock(t, lockOf(xc, kind, name), ctx)
	hook.release()
	p.Delay(0)

	select {
	case r := <-got:
		if r.err == nil {
			holder := admin.Get(ctx, key).Val()
			t.Errorf("W's Lock returned a Hold (token %d, context err %v) while X holds the lock (lock string %q, "+
				"X is %q, token %d): two owners", r.h.Token(), r.h.Context().Err(), holder, redisson.OwnerOf(x), x.Token())
			_ = r.h.Unlock(ctx)
		} else {
			t.Logf("W: %v", r.err)
		}
	case <-time.After(left + 2*time.Second):
		// W still waits behind X: correct.
	}
	mustUnlock(t, x)
}

// TestWaitQueueNewcomerReleaseHandsOverToQueuedWaiter checks that a release hands the lock to the
// queued waiter even when the releasing holder was a newcomer that took the lock while it was free
// (a plain SET NX, its lock string without the queue's mark). docs/guarantees.md: "a release hands the lock to
// the first live waiter in its script and wakes only it"; Lock docs: a newcomer "may overtake
// queued waiters only in the moments the lock is free without having been handed over (it
// expired, ...)". A release that deleted the key without looking at the queue would leave the
// waiter asleep until its re-poll (here a minute: WithRepollInterval allows up to an hour) while
// the lock is free.
//
// Interleaving: H holds the Lock with a 1s lease; W (another Client, re-poll one minute) queues
// behind it. H's lease runs out (documented: no hand-over then). N, a fresh Client (no recent
// contention, so its acquisition is a plain SET NX), takes the free lock and unlocks it at once.
// W must be handed the lock by that release.
func TestWaitQueueNewcomerReleaseHandsOverToQueuedWaiter(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "newcomer-release"
	key := name
	q, _ := redisson.QueueKeys("Lock", name)
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Minute))
	nc := newClient(t, srv.Client(t))

	if _, err := hc.Lock(name).Lock(ctx, redisson.WithLease(time.Second)); err != nil {
		t.Fatalf("H Lock: %v", err)
	}
	got, cancel := lockAsync(ctx, wc.Lock(name))
	defer cancel()
	awaitQueuedAsleep(t, admin, wc, name, q, 1)
	eventually(t, 5*time.Second, "H's lease to run out", func() bool { return admin.Exists(ctx, key).Val() == 0 })

	n := mustLock(t, nc.Lock(name), ctx)
	v := admin.Get(ctx, key).Val()
	mustUnlock(t, n)
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("W: %v", r.err)
		}
		mustUnlock(t, r.h)
	case <-time.After(3 * time.Second):
		t.Errorf("N's Unlock (lock string %q, taken while W was queued) freed the lock without handing it to W, "+
			"queued before it: W still waits %v later (lock now %q, %d queued); it would wait for its re-poll (1m)",
			v, 3*time.Second, admin.Get(ctx, key).Val(), admin.ZCount(ctx, q, "-inf", "(+inf").Val())
		cancel()
		if r := <-got; r.err == nil {
			_ = r.h.Unlock(ctx)
		}
	}
}

// TestWaitQueueHandedLockFreedWithinWatchdogAfterClose checks that a lock handed to a watchdog
// waiter stays in Redis for at most the watchdog timeout when the waiter's Client closes right
// after (as if its process had exited). Close: "a held lock stays in Redis until its lease runs out
// (at most the watchdog timeout after its last renewal), as if the process had exited";
// WithWatchdogTimeout: "a lock whose process dies is freed at most this long after the last
// renewal". The hand-over reserves the lock until the waiter's liveness deadline, up to the waiter
// timeout, an independent option that may be much longer: the waiter must not keep that
// reservation as its lease.
//
// Interleaving: W's Client has WithWatchdogTimeout(300ms) and WithWaiterTimeout(10s). H holds; W
// queues and sleeps on its channel. H unlocks: the lock is handed to W, and W's Lock returns from
// the message. W's Client is closed at once. The lock must be gone within the watchdog timeout
// (checked after 1.3s).
func TestWaitQueueHandedLockFreedWithinWatchdogAfterClose(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "handed-close"
	key := name
	q, _ := redisson.QueueKeys("Lock", name)
	const watchdog = 300 * time.Millisecond
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(watchdog),
		redisson.WithWaiterTimeout(10*time.Second), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.Lock(name), ctx)
	got, _ := lockAsync(ctx, wc.Lock(name))
	awaitQueuedAsleep(t, admin, wc, name, q, 1)
	mustUnlock(t, h)
	r := recvWithin(t, got, 5*time.Second, "W's Lock")
	if r.err != nil {
		t.Fatalf("W: %v", r.err)
	}
	pttl := admin.PTTL(ctx, key).Val()
	if err := wc.Close(); err != nil {
		t.Fatal(err)
	}
	closed := time.Now()
	time.Sleep(watchdog + time.Second) // the bound Close documents, and a second of slack
	if left := admin.PTTL(ctx, key).Val(); left > 0 {
		t.Errorf("%v after W's Client was closed, the lock it was handed is still held for %v more "+
			"(PTTL at acquisition %v); Close promises at most the watchdog timeout (%v) after its last renewal",
			time.Since(closed).Round(time.Millisecond), left, pttl, watchdog)
	}
}

// TestWaitQueueReentryAfterHandOverKeepsOneOwner checks, for every kind, that a re-entry right
// after a hand-over cannot let the key expire behind the renewal scheduler's back. doc.go: "at most
// one owner holds a lock at a time, and the owner is told (ErrLockLost) before its lease can
// lapse". A watchdog waiter handed the lock holds it first for the reservation (up to the waiter
// timeout), and its first renewal is scheduled accordingly; a re-entry sets the key's lease to the
// watchdog timeout from now, which may be much shorter (WithWatchdogTimeout and WithWaiterTimeout
// are independent options). Whenever another Client can take the lock, the waiter's hold must have
// ended.
//
// Interleaving: W's Client has WithWatchdogTimeout(1s) and WithWaiterTimeout(10s). H holds; W
// queues and sleeps. H unlocks: the lock is handed to W (PX ~10s), W's Lock returns from the
// message, and W re-enters at once (PX 1s). X tries to take the lock for three watchdog timeouts.
func TestWaitQueueReentryAfterHandOverKeepsOneOwner(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) { reenterAfterHandOver(t, kind, false) })
	}
}

// TestWaitQueuePartialUnlockAfterHandOverKeepsOneOwner: as
// TestWaitQueueReentryAfterHandOverKeepsOneOwner, through a partial unlock (Reenter, then Unlock of
// that level), which also sets the watchdog lease on the key.
func TestWaitQueuePartialUnlockAfterHandOverKeepsOneOwner(t *testing.T) {
	long(t)
	t.Parallel()
	reenterAfterHandOver(t, "Lock", true)
}

// reenterAfterHandOver runs TestWaitQueueReentryAfterHandOverKeepsOneOwner's scenario for kind;
// with partial, the waiter unlocks the level it re-entered at once.
func reenterAfterHandOver(t *testing.T, kind string, partial bool) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "handed-reenter-" + kind
	key := name
	q, _ := redisson.QueueKeys(kind, name)
	const watchdog = time.Second
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(watchdog),
		redisson.WithWaiterTimeout(10*time.Second), redisson.WithRepollInterval(time.Minute))
	xc := newClient(t, srv.Client(t))

	h := mustLock(t, lockOf(hc, kind, name), ctx)
	got, _ := lockAsync(ctx, lockOf(wc, kind, name))
	awaitQueuedAsleep(t, admin, wc, name, q, 1)
	mustUnlock(t, h)
	r := recvWithin(t, got, 5*time.Second, "W's Lock")
	if r.err != nil {
		t.Fatalf("W: %v", r.err)
	}
	w := r.h
	pttl := admin.PTTL(ctx, key).Val()
	lvl, err := w.Reenter(ctx)
	if err != nil {
		t.Fatalf("W Reenter: %v", err)
	}
	if partial {
		if err := lvl.Unlock(ctx); err != nil {
			t.Fatalf("W partial Unlock: %v", err)
		}
	}
	after := admin.PTTL(ctx, key).Val()
	// For three watchdog timeouts, whenever X can take the lock, W's hold must have ended.
	for end := time.Now().Add(3 * watchdog); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		x, err := lockOf(xc, kind, name).TryLock(ctx)
		if err != nil {
			continue
		}
		if w.Context().Err() == nil {
			t.Errorf("X acquired the lock (token %d) while W's hold (token %d) is still live: two owners. The hand-over "+
				"set PX %v; W's re-entry set PX %v, and the key expired before W's first renewal", x.Token(), w.Token(), pttl, after)
		}
		mustUnlock(t, x)
		return
	}
	if !partial {
		mustUnlock(t, lvl)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Errorf("W's Unlock after renewals kept it: %v", err)
	}
}

// TestWaitQueueSubscribingWaiterKeepsItsTurn checks, for every kind, that a release does not skip
// a live waiter whose Client is (re)subscribing when the wake-up is published. queue_serve trusts
// a waiter whose Client receives the wake-up and, "only when nobody receives it (the process died,
// or it is subscribing or resubscribing)", reads its Client's deadline: "a live waiter keeps what
// it is given, for no longer than its deadline". The Client's deadline must therefore be in ":qt"
// even when its waiter joined under an unchanged queue epoch (a join may skip refreshing the
// deadline while its last refresh is recent) after a Client with a shorter waiter timeout had
// queued and left: ":qt" must not have expired meanwhile.
//
// Interleaving: L1 (Client L, waiter timeout 30s) queues and gives up; S (waiter timeout 200ms)
// queues alone and gives up; 600ms pass (more than two of S's waiter timeouts): L's deadline must
// still be in ":qt". L's channel is left to be unsubscribed (its 2s linger), L's pub/sub connection
// is slowed (a proxy delays it by 2s, so L2's SUBSCRIBE is in flight, as after a reconnect), L2
// queues (no refresh: same epoch) and N queues behind it. H unlocks: PUBLISH to L reaches nobody,
// and the lock must nevertheless go to L2, the head of the queue, not to N.
func TestWaitQueueSubscribingWaiterKeepsItsTurn(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) { subscribingWaiterKeepsItsTurn(t, kind) })
	}
}

// subscribingWaiterKeepsItsTurn runs TestWaitQueueSubscribingWaiterKeepsItsTurn's scenario for kind.
func subscribingWaiterKeepsItsTurn(t *testing.T, kind string) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "subscribing-" + kind
	key := name
	q, qt := redisson.QueueKeys(kind, name)
	p := redistest.NewProxy(t, srv.Addr())
	lrdb, _ := pubSubProxied(t, srv, p)
	hc := newClient(t, srv.Client(t))
	lc := newClient(t, lrdb, redisson.WithWaiterTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))
	sc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(200*time.Millisecond))
	nc := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Minute))
	lch := redisson.ChannelOf(lc, name)

	h := mustLock(t, lockOf(hc, kind, name), ctx)

	l1, cancelL1 := lockAsync(ctx, lockOf(lc, kind, name))
	awaitQueueLen(t, admin, q, 1, "L1 queued")
	lClient := queuedClientAt(t, admin, q, 0)
	cancelLock(t, l1, cancelL1)
	awaitQueueLen(t, admin, q, 0, "L1 to leave")

	s, cancelS := lockAsync(ctx, lockOf(sc, kind, name))
	awaitQueueLen(t, admin, q, 1, "S queued")
	cancelLock(t, s, cancelS)
	awaitQueueLen(t, admin, q, 0, "S to leave")
	// Past two of S's waiter timeouts (a TTL S's join could set): a time, not an event, is awaited.
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
	awaitQueueLen(t, admin, q, 1, "L2 queued")
	lDeadline := admin.ZScore(ctx, qt, lClient).Err()
	n, cancelN := lockAsync(ctx, lockOf(nc, kind, name))
	defer cancelN()
	awaitQueueLen(t, admin, q, 2, "N queued behind L2")
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
		if r := recvWithin(t, ch, 10*time.Second, "a waiter to end"); r.err == nil {
			_ = r.h.Unlock(ctx)
		}
	}
}

// TestWaitQueuePatternSubscriberStallsOncePerDeadClient checks, for every kind, that a pattern
// subscriber matching the wake-up channel (a monitoring tool, redis-cli psubscribe '*') makes a
// dead Client's waiters stall the lock at most once. PUBLISH's receiver count includes pattern
// subscribers, so it makes a dead waiter look alive to the release, which hands it the lock for its
// waiter timeout: that stall is bounded, and documented, once per dead Client, not once per waiter.
//
// Interleaving: a process D died (its connection is closed) with two waiters queued; its deadline
// passed 10s ago (written as the crashed process left it). W, alive, queues behind them. An
// unrelated connection runs PSUBSCRIBE *. H unlocks: D's first waiter is handed the lock (the one
// stall); when that ends, the lock is found free and D's second waiter is evicted with D's other
// waiters: W acquires within one waiter timeout (plus its heartbeat and slack), and D's second
// waiter never holds the lock, not even after W's release.
func TestWaitQueuePatternSubscriberStallsOncePerDeadClient(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) { patternSubscriberStall(t, kind) })
	}
}

// patternSubscriberStall runs TestWaitQueuePatternSubscriberStallsOncePerDeadClient's scenario for
// kind.
func patternSubscriberStall(t *testing.T, kind string) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "psub-" + kind
	key := name
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
	awaitQueueLen(t, admin, q, 3, "W queued behind the dead waiters")
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
	r := recvWithin(t, got, 10*time.Second, "W")
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

// TestWaitQueueLocalTransfersDoNotStarveQueuedWaiter checks that a Lock waiter queued in Redis is
// served soon after a release even while another process keeps passing the lock among its own
// goroutines. doc.go, Waiting/Fairness: a Lock is "not FIFO, but no starvation": "processes are
// served in turn", a newcomer "may overtake queued waiters only in the moments the lock is free
// without having been handed over", and "a Lock that a newcomer took with SET NX while it was
// free, whose release finds no mark and frees the lock without looking at the queue, is noticed at
// the waiters' next heartbeat". A newcomer's lock string has no mark; were each of its releases to
// transfer the lock to its process's next goroutine, again unmarked, the lock would never be free,
// the waiter's heartbeats would keep answering "held, still queued", and no release would ever
// look at the queue, for as long as that process has goroutines wanting the lock.
//
// Interleaving: H holds the Lock with a 1s lease; W (waiter timeout 600ms: heartbeats every 200ms;
// re-poll one minute) queues. H's lease runs out (the test deletes the key), and N (a fresh Client:
// SET NX), asking at that moment, takes the free lock; two goroutines of N then lock and unlock it
// in turn. W must be served within 3s.
func TestWaitQueueLocalTransfersDoNotStarveQueuedWaiter(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "local-transfers"
	key := name
	q, _ := redisson.QueueKeys("Lock", name)
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(600*time.Millisecond), redisson.WithRepollInterval(time.Minute))
	nc := newClient(t, srv.Client(t))

	if _, err := hc.Lock(name).Lock(ctx, redisson.WithLease(time.Second)); err != nil {
		t.Fatalf("H Lock: %v", err)
	}
	got, cancel := lockAsync(ctx, wc.Lock(name))
	defer cancel()
	awaitQueuedAsleep(t, admin, wc, name, q, 1)
	// H's lease runs out (the key is deleted as its expiry would), and N, which asks at that moment,
	// takes the free lock with SET NX before W's next heartbeat notices it is free.
	admin.Del(ctx, key)
	first := mustLock(t, nc.Lock(name), ctx) // SET NX: "N:1|1|"
	v := admin.Get(ctx, key).Val()
	if owner, _, _ := redisson.DecodeLockValue(v); owner != redisson.OwnerOf(first) {
		t.Fatalf("precondition: N's first acquisition is %q; the lock holds %q", redisson.OwnerOf(first), v)
	}
	stop := make(chan struct{})
	var nHolds atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		spawn(&wg, func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				h, err := nc.Lock(name).Lock(ctx)
				if err != nil {
					return
				}
				nHolds.Add(1)
				time.Sleep(10 * time.Millisecond) // the work under the lock
				_ = h.Unlock(ctx)
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // both goroutines queue locally behind the first hold
	mustUnlock(t, first)
	select {
	case r := <-got:
		close(stop)
		if r.err != nil {
			t.Errorf("W: %v", r.err)
		} else {
			mustUnlock(t, r.h)
		}
		wg.Wait()
	case <-time.After(3 * time.Second):
		close(stop)
		wg.Wait()
		t.Errorf("W, queued before N took the free lock (%q) and heartbeating every 200ms, was passed over by %d "+
			"acquisitions of N's process in 3s (each release transferred the unmarked lock to N's next goroutine "+
			"without looking at the queue; W's heartbeats kept answering 'held, still queued'); lock now %q, %d queued",
			v, nHolds.Load(), admin.Get(ctx, key).Val(), admin.ZCount(ctx, q, "-inf", "(+inf").Val())
		cancel()
		if r := <-got; r.err == nil {
			_ = r.h.Unlock(ctx)
		}
	}
}

// A join by a Client whose liveness refresh in the queue is recent costs the join only: no command
// keeps the queue's TTL (the refresh kept it, and the queue's end marker keeps it from being emptied
// and re-created without one while the epoch lasts). A waits for B (refreshing), B for A
// (refreshing), then B again, within a third of its waiter timeout of its refresh: that join must run
// no PTTL or PEXPIRE, yet the queue keeps a TTL, and every queue key is gone once nobody waits.
func TestWaitQueueJoinAfterRecentRefreshKeepsNoTTL(t *testing.T) {
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) {
			srv := redistest.Start(t)
			admin := srv.Client(t)
			ctx := t.Context()
			name := "join-cost-" + kind
			const wt = 3 * time.Second // B's refresh stays recent for a second: the steps below take less
			ca := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt))
			cb := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt))
			q, qt := redisson.QueueKeys(kind, name)

			ha := mustLock(t, lockOf(ca, kind, name), ctx)
			gotB, _ := lockAsync(ctx, lockOf(cb, kind, name)) // B's first join refreshes its deadline
			awaitQueueLen(t, admin, q, 1, "B queued")
			mustUnlock(t, ha)
			hb := awaitHold(t, gotB, "B")
			gotA, _ := lockAsync(ctx, lockOf(ca, kind, name))
			awaitQueueLen(t, admin, q, 1, "A queued")
			mustUnlock(t, hb)
			ha = awaitHold(t, gotA, "A")

			before := ttlCalls(t, admin)
			gotB, _ = lockAsync(ctx, lockOf(cb, kind, name)) // within a third of wt of B's refresh
			awaitQueueLen(t, admin, q, 1, "B queued again")
			if n := ttlCalls(t, admin) - before; n != 0 {
				t.Errorf("B's join after a recent refresh ran %d PTTL/PEXPIRE commands, want 0", n)
			}
			if ttl := admin.PTTL(ctx, q).Val(); ttl <= 0 || ttl > 2*wt {
				t.Errorf("queue TTL %v after the join, want within (0, %v]", ttl, 2*wt)
			}
			mustUnlock(t, ha)
			mustUnlock(t, awaitHold(t, gotB, "B"))
			if n := admin.Exists(ctx, q, qt).Val(); n != 0 {
				t.Errorf("%d queue keys left once nobody waits, want 0", n)
			}
		})
	}
}

// ttlCalls is how many PTTL and PEXPIRE commands the server has run, in scripts or not.
func ttlCalls(t *testing.T, admin *redis.Client) int64 {
	t.Helper()
	var n int64
	for _, line := range strings.Split(admin.Info(t.Context(), "commandstats").Val(), "\n") {
		for _, cmd := range []string{"pttl", "pexpire"} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
				calls, _ := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
				n += calls
			}
		}
	}
	return n
}

// awaitHold waits (up to 5s) for the Hold that the Lock call behind got returns.
func awaitHold(t *testing.T, got <-chan lockResult, who string) *redisson.Hold {
	t.Helper()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("%s Lock: %v", who, r.err)
		}
		return r.h
	case <-time.After(5 * time.Second):
		t.Fatalf("%s not handed the lock within 5s", who)
		return nil
	}
}

// A queue whose end marker an older Client evicted (a rolling upgrade: a version without markers
// takes "~end" for a waiter) may lose its TTL, but only until the next heartbeat of a waiting
// Client: the keys of a queue whose processes all die must go. A holds; B and C queue (both
// refreshing their deadlines under the lock's epoch); the marker is then removed, as an older
// Client would. A's release hands over to B, B's to C: the last waiter popped empties the queue,
// which goes, while the lock keeps its epoch. B then queues again within a third of its waiter
// timeout of its refresh, so its join skips the refresh and re-creates the queue without a TTL:
// B's heartbeat (a third of the waiter timeout later) must give it one again.
func TestWaitQueueWithoutEndMarkerRegainsItsTTLWithinAHeartbeat(t *testing.T) {
	t.Parallel()
	const kind = "Lock"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "no-end-marker"
	const wt = 3 * time.Second // B's refresh stays recent for a second: the steps below take less
	ca := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt))
	cb := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt))
	cc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(wt))
	q, qt := redisson.QueueKeys(kind, name)

	ha := mustLock(t, lockOf(ca, kind, name), ctx)
	gotB, _ := lockAsync(ctx, lockOf(cb, kind, name))
	awaitQueueLen(t, admin, q, 1, "B queued")
	gotC, _ := lockAsync(ctx, lockOf(cc, kind, name))
	awaitQueueLen(t, admin, q, 2, "C queued")
	mustDo(t, "ZREM end marker", admin.ZRem(ctx, q, "~end").Err()) // the queue as an older Client left it
	mustUnlock(t, ha)
	hb := awaitHold(t, gotB, "B")
	mustUnlock(t, hb)
	hc := awaitHold(t, gotC, "C")

	gotB, cancelB := lockAsync(ctx, lockOf(cb, kind, name)) // within a third of wt of B's refresh
	eventually(t, 5*time.Second, "B queued again", func() bool { return admin.Exists(ctx, q).Val() == 1 })
	start := time.Now()
	eventually(t, wt, "the queue "+q+" to regain a TTL by B's heartbeat (else, if every process dies, it stays for ever)",
		func() bool { return admin.PTTL(ctx, q).Val() > 0 })
	t.Logf("the queue had no TTL for %v after B's join (qt's TTL: %v)", time.Since(start).Round(time.Millisecond),
		admin.PTTL(ctx, qt).Val())
	cancelLock(t, gotB, cancelB)
	mustUnlock(t, hc)
}
