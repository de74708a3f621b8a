package redisson_test

// Third adversarial review: the Redis-side wait queue, direct hand-over, FairLock and FencedLock.
// Each test forces an interleaving and asserts a guarantee stated in doc.go or the API docs; each
// fails on the code it was written against (1abcb3a), for the reason given in its comment.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// A name is one kind of lock: "using it as another kind fails with ErrWrongType" (FairLock,
// FencedLock docs; lock_value.lua: "a name used as two kinds is an error, not two locks"). The kind
// is checked on the lock string only, but the wait queue is shared by every kind of a name, and a
// hand-over writes the lock string of the *releasing* kind for whatever waiter heads the queue.
//
// Interleaving: a Lock waiter P is queued behind a fixed-lease Lock holder; the lease runs out, so
// the key is free while P still sleeps (waiting for its hand-over message). A FencedLock F of the
// same name then finds the key free and acquires (the acquire script only looks at the lock
// string), and its Unlock hands the lock to P as a *fenced* lock string ("P|1||t2"), publishing
// "P|2". P, a Lock, takes it from the message and its Lock returns a Hold. Its Unlock then runs the
// Lock release script on a FencedLock string: WRONGTYPE. The Hold cannot be released; the lock is
// left until its lease runs out and a fencing token was issued to a Lock.
func TestAttack3KindsMixThroughSharedQueue(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a3-kinds"
	a := newClient(t, srv.Client(t))
	// P's Client re-polls rarely, so only the hand-over message wakes it.
	b := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Minute))
	c := newClient(t, srv.Client(t))

	if _, err := a.Lock(name).Lock(ctx, redisson.WithLease(500*time.Millisecond)); err != nil {
		t.Fatalf("holder Lock: %v", err)
	}
	got, cancel := lockAsync(ctx, b.Lock(name))
	defer cancel()
	eventually(t, 5*time.Second, "P queued", func() bool {
		q, _ := redisson.QueueKeys("Lock", name)
		return admin.ZCard(ctx, q).Val() == 1
	})
	eventually(t, 5*time.Second, "the holder's lease to run out", func() bool {
		return admin.Exists(ctx, "{"+name+"}").Val() == 0
	})

	f, err := c.FencedLock(name).Lock(ctx)
	if err != nil {
		// The library detected the mix: fine.
		t.Logf("FencedLock on a queued Lock's name: %v", err)
		return
	}
	if err := f.Unlock(ctx); err != nil {
		t.Fatalf("FencedLock Unlock: %v", err)
	}
	// The FencedLock's release must not have handed anything to P, a Lock waiter: the lock is free
	// and P still queued for a Lock (each kind has its own queue).
	q, _ := redisson.QueueKeys("Lock", name)
	if v, err := admin.Get(ctx, "{"+name+"}").Result(); err != redis.Nil || admin.ZCard(ctx, q).Val() != 1 {
		t.Errorf("after the FencedLock's Unlock, the lock string is %q (%v) and %d Lock waiters are queued; want free, P still queued",
			v, err, admin.ZCard(ctx, q).Val())
	}
	cancel()
	r := regressWait(t, got, 10*time.Second, "P's Lock to end")
	if r.err == nil {
		v := admin.Get(ctx, "{"+name+"}").Val()
		if err := r.h.Unlock(ctx); err != nil {
			t.Errorf("the Lock waiter got a Hold of the lock string %q, and its Unlock fails: %v", v, err)
		}
	} else if !errors.Is(r.err, context.Canceled) {
		t.Errorf("P's Lock = %v; want a Hold or context.Canceled", r.err)
	}
}

// a3Op marks the contexts of a test's own lock calls.
type a3Op struct{}

// a3PubSubProxied returns a go-redis client for srv whose pub/sub connections go through p (so a
// test can delay wake-up messages) and whose command connections go straight to the server,
// through a cmdHook counting the held commands marked with a3Op.
func a3PubSubProxied(t *testing.T, srv *redistest.Server, p *redistest.Proxy) (*redis.Client, *cmdHook) {
	t.Helper()
	hook := &cmdHook{markKey: a3Op{}}
	rdb := srv.Client(t, func(o *redis.Options) {
		o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var nd net.Dialer
			if regressPubSubDial() {
				return nd.DialContext(ctx, network, p.Addr())
			}
			return nd.DialContext(ctx, network, srv.Addr())
		}
	})
	rdb.AddHook(hook)
	t.Cleanup(hook.release) // runs before rdb is closed
	return rdb, hook
}

// takeHanded takes a hand-over from the message naming the waiter, counting the reservation from
// woken.Since, the send time of the waiter's latest queued attempt or heartbeat. That is sound only
// if the hand-over came after that request ran. But the message may be read after a later attempt
// of the same wait that found the lock no longer the waiter's: a wake-up that came first (here a
// heartbeat's kick) runs an attempt, and the message, published before it, is read only afterwards.
// The reservation then counted from that attempt is fiction: the lock the message announced expired
// long ago and another owner holds it.
//
// Interleaving (W's Client: its commands held by a cmdHook, its pub/sub connection delayed by a
// proxy): H holds the lock, W is queued. All of W's commands are held, and the pub/sub delayed by a
// little more than W's remaining reservation. H unlocks: the lock is handed to W (reserved until W's
// liveness deadline) and "W" is published. W's held heartbeat lapses, which kicks W: its attempt is
// held too. The reservation runs out; X takes the free lock. W's commands go: the attempt finds X
// holding and queues W (queuedAt = its send time, a moment ago). Then the delayed message arrives:
// W takes the lock "without a round trip", its deadline counted from that attempt, while X holds it.
// Two owners until W's first renewal (a third of the waiter timeout later) finds the lock X's.
func TestAttack3StaleHandOverMessageTwoOwners(t *testing.T) {
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) { attack3StaleHandOver(t, kind) })
	}
}

func attack3StaleHandOver(t *testing.T, kind string) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "a3-stale-" + kind
	const wt = 2 * time.Second
	p := redistest.NewProxy(t, srv.Addr())
	wrdb, hook := a3PubSubProxied(t, srv, p)
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, wrdb, redisson.WithWaiterTimeout(wt), redisson.WithRepollInterval(time.Minute))
	xc := newClient(t, srv.Client(t))
	key := "{" + name + "}"
	q, qt := redisson.QueueKeys(kind, name)

	h := mustLock(t, lockOf(hc, kind, name), ctx)
	got, _ := lockAsync(context.WithValue(ctx, a3Op{}, true), lockOf(wc, kind, name))
	eventually(t, 5*time.Second, "W queued and subscribed", func() bool {
		subs := admin.PubSubNumSub(ctx, redisson.ChannelOf(wc, name)).Val()
		return admin.ZCard(ctx, q).Val() == 1 && subs[redisson.ChannelOf(wc, name)] == 1
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

// FairLock: "A live waiter keeps its place however long the holder keeps the lock (its Client keeps
// it alive with heartbeats)". The queue keys get a TTL of two waiter timeouts, of the joining
// Client's waiter timeout, when a waiter joins alone, and each heartbeat sets it to two of the
// beating Client's timeouts; a waiter joining a non-empty queue sets nothing. Clients of one lock
// with different WithWaiterTimeout settings therefore let the queue expire under a live waiter.
//
// Interleaving: H holds. A (waiter timeout 150ms) queues alone: TTL 300ms. B (waiter timeout 30s,
// heartbeats every 10s) queues behind it: TTL unchanged. A gives up and leaves. 300ms later the
// queue keys expire, taking B's place with them, though B is alive and its Client beats for it. C
// queues (alone: a fresh queue) and H's Unlock hands the lock to C, ahead of B which came first.
func TestAttack3FairLockQueueExpiresUnderLiveWaiter(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a3-fair-ttl"
	q, _ := redisson.QueueKeys("FairLock", name)
	hc := newClient(t, srv.Client(t))
	ac := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(150*time.Millisecond))
	bc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))
	cc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.FairLock(name), ctx)
	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	aDone, _ := lockAsync(actx, ac.FairLock(name))
	eventually(t, 5*time.Second, "A queued", func() bool { return admin.ZCard(ctx, q).Val() == 1 })
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
	eventually(t, 5*time.Second, "B queued behind A", func() bool { return admin.ZCard(ctx, q).Val() == 2 })
	acancel()
	if r := <-aDone; r.err == nil {
		t.Fatal("A acquired")
	}
	time.Sleep(600 * time.Millisecond) // > two of A's waiter timeouts; < a third of B's
	if n := admin.ZCard(ctx, q).Val(); n != 1 {
		t.Errorf("live waiter B dropped from the queue: %d queued, want 1", n)
	}
	waiter(cc, "C")
	eventually(t, 5*time.Second, "C queued", func() bool { return admin.ZCard(ctx, q).Val() >= 1 && len(admin.ZRange(ctx, q, 0, -1).Val()) >= 1 })
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

// doc.go, "Re-sent commands": every final release is recorded in the releasing Client's history key
// of the lock, "A Client releases one owner of a lock at a time (its goroutines take turns for the
// lock, and the turn passes only once the release has answered), so the record is overwritten only
// after the release it records was answered: a repeat answers what the first run did". A FairLock
// has no local turns (gated() is false): a release hands the lock through the Redis queue to
// another goroutine of the same Client, which can take it (from the message, no round trip) and
// release it, overwriting the history entry, while the first release's reply is still lost.
//
// Interleaving (found by TestModel -model.seed=1): L and M are FairLock acquisitions of one Client.
// L holds, M is queued. L's Unlock hands the lock to M; its reply is lost and go-redis re-sends it
// on a new connection, whose dial is held. M takes the lock and unlocks: the history now records
// M. The re-send finds neither the lock nor L's record: -1, and L's Unlock reports ErrNotHeld and
// ErrLockLost (and emits EventLost) for a release that succeeded.
func TestAttack3FairLockResentReleaseHistoryOverwritten(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a3-fair-history"
	p := redistest.NewProxy(t, srv.Addr())
	rdb, dial := regressProxied(t, srv, p, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
		o.MaxIdleConns = 1 // the re-send cannot find another idle connection: it dials
	})
	// Long waiter timeout and watchdog: no heartbeat or renewal can take the dropped reply.
	c := newClient(t, rdb, redisson.WithWaiterTimeout(time.Minute))
	// Load the scripts, so the dropped reply is not a NOSCRIPT error.
	warm := mustLock(t, c.FairLock("a3-warm"), ctx)
	mustUnlock(t, warm)

	l := mustLock(t, c.FairLock(name), ctx)
	got, _ := lockAsync(ctx, c.FairLock(name))
	q, _ := redisson.QueueKeys("FairLock", name)
	eventually(t, 5*time.Second, "M queued", func() bool { return admin.ZCard(ctx, q).Val() == 1 })
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
	r := regressWait(t, got, 10*time.Second, "M's Lock")
	if r.err != nil {
		t.Fatalf("M's Lock: %v", r.err)
	}
	// M's Unlock dials its own connection (the held dial is the re-send's).
	dial.mu.Lock()
	dial.next = regressDialPass
	dial.mu.Unlock()
	// M's Unlock waits for L's to answer (a Client sends one final release of a lock at a time):
	// run it aside, then let L's re-send through.
	mUnlocked := make(chan error, 1)
	go func() { mUnlocked <- r.h.Unlock(ctx) }()
	dial.resumeDials()
	err := regressWait(t, unlocked, 10*time.Second, "L's Unlock")
	if err := regressWait(t, mUnlocked, 10*time.Second, "M's Unlock"); err != nil {
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

// doc.go, Keys: "The auxiliary keys carry the Client's random id or a request id in their names, so
// no other data can be there by accident", and a name "such as "{user:7}:cart"" is the documented
// way to co-locate data with a lock. The wait queue's keys, "{<name>}:q" and "{<name>}:qt", carry
// neither: they are fixed names in the lock's hash tag, where an application's own key of that name
// (a sorted set "{user:7}:q", say) is. A FairLock acquisition of the free lock "user:7" evicts the
// members of that sorted set as dead waiters (no deadline in ":qt"): the application's data is
// deleted. (A waiter's heartbeat would also PEXPIRE it.)
func TestAttack3QueueKeysClobberApplicationData(t *testing.T) {
	c, admin, _ := setup(t)
	ctx := t.Context()
	const name = "a3-app"
	appKey := "{" + name + "}:q" // the application's own sorted set, co-located with the lock's key
	jobs := []redis.Z{{Score: 1, Member: "job-1"}, {Score: 2, Member: "job-2"}, {Score: 3, Member: "job-3"}}
	if err := admin.ZAdd(ctx, appKey, jobs...).Err(); err != nil {
		t.Fatal(err)
	}
	h, err := c.FairLock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("FairLock.Lock: %v", err)
	}
	mustUnlock(t, h)
	got := admin.ZRangeWithScores(ctx, appKey, 0, -1).Val()
	ttl := admin.PTTL(ctx, appKey).Val()
	if len(got) != len(jobs) || ttl != -1 {
		t.Errorf("application sorted set %s after a FairLock acquisition of %q: %v (pttl %v); want %v, no expiry",
			appKey, name, got, ttl, jobs)
	}
}

// Stats.Held is documented as "holds registered with the renewal scheduler (watchdog and fixed
// lease)", and Stats.Lost as "holds that ended without an unlock". The scheduler now also carries
// the heartbeats of queued waiters: a Client that holds nothing but waits reports Held = 1, and
// every waiter whose heartbeat finds it served or evicted counts as a lost hold.
func TestAttack3StatsCountWaitersAsHolds(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	const name = "a3-stats"
	a := newClient(t, srv.Client(t))
	b := newClient(t, srv.Client(t))
	h := mustLock(t, a.Lock(name), ctx)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.Lock(name).Lock(wctx)
	}()
	admin := srv.Client(t)
	q, _ := redisson.QueueKeys("Lock", name)
	eventually(t, 5*time.Second, "B queued", func() bool { return admin.ZCard(ctx, q).Val() == 1 })
	s := b.Stats()
	cancel()
	<-done
	mustUnlock(t, h)
	if s.Held != 0 {
		t.Errorf("Stats().Held of a Client that holds nothing (one goroutine waiting) = %d; want 0", s.Held)
	}
}

// FairLock: "every waiting acquisition ... queues in Redis in the order of its arrival there, and
// a release hands the lock to the head of the queue"; a waiter "whose process died is evicted after
// the waiter timeout". But queue_head evicts at most 16 dead waiters per call and then reports "no
// live waiter": with more dead waiters ahead of a live one (a crashed process had that many
// goroutines waiting: a FairLock has no local gate, every goroutine queues in Redis), the release
// frees the lock instead of handing it over, the live waiter sleeps on (until its re-poll), and a
// newcomer whose attempt evicts the next 16 finds "nobody waits" and takes the lock ahead of it.
//
// The dead waiters are written as a process that crashed leaves them: ids queued before the live
// waiter, their liveness deadlines passed.
func TestAttack3FairLockManyDeadWaitersLetNewcomerOvertake(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a3-fair-dead"
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
	eventually(t, 5*time.Second, "W queued behind the dead waiters", func() bool { return admin.ZCard(ctx, q).Val() == dead+1 })
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
