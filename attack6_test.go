package redisson_test

// Sixth adversarial review (of 2c3f1fe): queue_purge on a free lock, queue_keep that never shortens
// a key's TTL, and Clients with different waiter timeouts sharing one queue. Each test forces an
// interleaving and asserts a guarantee stated in doc.go or the scripts' own comments; each fails on
// 2c3f1fe for the reason given in its comment. (The second, local transfers that bypass the Redis
// queue, is older than 2c3f1fe: review 4's fix, the heartbeat that reports a free lock, misses it.)

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a6Score is the ticket of member in q, or -1 if it is not queued.
func a6Score(t *testing.T, admin *redis.Client, q, member string) float64 {
	t.Helper()
	s, err := admin.ZScore(t.Context(), q, member).Result()
	if err != nil {
		return -1
	}
	return s
}

// wait_queue.lua: "Both keys live at least two waiter timeouts (of the longest timeout among the
// waiters that joined or were kept alive since) after the last join or refresh"; FairLock: a live
// waiter keeps its place. queue_keep, called by a heartbeat or a refreshing join with check = qt,
// looks only at qt's TTL and extends q only when qt is short. Since review 5, qt's TTL is never
// shortened, so qt may carry a long TTL (a Client with a long waiter timeout queued and left) while q,
// created afresh by a short-timeout Client's join, has only two of that Client's timeouts. Every
// later heartbeat sees qt long enough and leaves q alone: q simply expires under live, heartbeating
// waiters, every 2 x 300ms. Each then finds itself unqueued at its next heartbeat and joins again at
// the back, in whatever order the heartbeats happen to come: FIFO is lost.
//
// Interleaving: H holds the FairLock. A1 (Client A, waiter timeout 3s) queues and gives up: q is gone,
// qt keeps A's deadline with a TTL of 6s. B1 (Client B, 300ms; its network adds 40ms each way) queues:
// q is new, PEXPIRE 600ms. D1 (Client D, 150ms) queues behind B1. Nobody extends q (qt has seconds
// left); it expires. D's heartbeat (every 50ms) re-queues D1 before B's (every 100ms, plus its round
// trip) re-queues B1: D1 is now ahead of B1. H unlocks: the lock goes to D1.
func TestAttack6QueueExpiresUnderLiveShortTimeoutWaiters(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a6-q-expires"
	key := "{" + name + "}"
	q, qt := redisson.QueueKeys("FairLock", name)
	p := redistest.NewProxy(t, srv.Addr())
	hc := newClient(t, srv.Client(t))
	ac := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(3*time.Second), redisson.WithRepollInterval(time.Minute))
	bc := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }),
		redisson.WithWaiterTimeout(300*time.Millisecond), redisson.WithRepollInterval(time.Minute))
	dc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(150*time.Millisecond), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.FairLock(name), ctx)
	a, cancelA := lockAsync(ctx, ac.FairLock(name))
	a5Count(t, admin, q, 1, "A1 queued")
	a5Cancel(t, a, cancelA)
	a5Count(t, admin, q, 0, "A1 left")

	p.Delay(40 * time.Millisecond)
	defer p.Delay(0)
	b, cancelB := lockAsync(ctx, bc.FairLock(name))
	defer cancelB()
	a5Count(t, admin, q, 1, "B1 queued")
	bMember := admin.ZRange(ctx, q, 0, 0).Val()[0]
	bTicket := a6Score(t, admin, q, bMember)
	qTTL, qtTTL := admin.PTTL(ctx, q).Val(), admin.PTTL(ctx, qt).Val()
	d, cancelD := lockAsync(ctx, dc.FairLock(name))
	defer cancelD()
	a5Count(t, admin, q, 2, "D1 queued behind B1")
	dMember := admin.ZRange(ctx, q, 1, 1).Val()[0]

	// Watch the queue for up to 3s: B1 must keep its ticket, ahead of D1.
	requeued, inverted := false, false
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && !inverted; time.Sleep(2 * time.Millisecond) {
		bs, ds := a6Score(t, admin, q, bMember), a6Score(t, admin, q, dMember)
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
	a6Drain(t, b, d)
}

// a6Drain waits for every background Lock call to return, unlocking each that acquired (in whatever
// order they are served).
func a6Drain(t *testing.T, chs ...<-chan lockResult) {
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

// doc.go, Waiting/Fairness: a Lock is "not FIFO, but no starvation": "processes are served in turn",
// a newcomer "may overtake queued waiters only in the moments the lock is free without having been
// handed over", and "a Lock that a newcomer took with SET NX while it was free, whose release finds
// no mark and frees the lock without looking at the queue, is noticed at the waiters' next
// heartbeat". wait_beat.lua: a heartbeat returns 0 (try again) only when the waiter is no longer
// queued or the object is free.
//
// The newcomer's lock string has no mark ("N|1|"). When the newcomer's Client has another goroutine
// queued locally, its final release names it as heir; lock_release.lua hands over through the Redis
// queue only if the mark is set, so it transfers the lock to the heir, again with an empty mark, and
// so on for as long as that process has goroutines wanting the lock. The lock is never free, so the
// queued waiter's heartbeats keep answering 1 ("still queued, the object held") and never tell it to
// try again; no release ever looks at the queue. The waiter is passed over by an unbounded number of
// the newcomer process's acquisitions, until its re-poll (up to an hour; here a minute) marks the
// lock.
//
// Interleaving: H holds the Lock with a 1s lease; W (waiter timeout 600ms: heartbeats every 200ms;
// re-poll one minute) queues. H's lease runs out (the test deletes the key), and N (a fresh Client:
// SET NX), asking at that moment, takes the free lock;
// two goroutines of N then lock and unlock it in turn for 3s, each release transferring it to the
// other. W should be served within a heartbeat or two of N's first release; it never is.
func TestAttack6LocalTransfersStarveQueuedWaiter(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a6-starve"
	key := "{" + name + "}"
	q, _ := redisson.QueueKeys("Lock", name)
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(600*time.Millisecond), redisson.WithRepollInterval(time.Minute))
	nc := newClient(t, srv.Client(t))

	if _, err := hc.Lock(name).Lock(ctx, redisson.WithLease(time.Second)); err != nil {
		t.Fatalf("H Lock: %v", err)
	}
	got, cancel := lockAsync(ctx, wc.Lock(name))
	defer cancel()
	a4Queued(t, admin, wc, name, q, 1)
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
			v, nHolds.Load(), admin.Get(ctx, key).Val(), admin.ZCard(ctx, q).Val())
		cancel()
		if r := <-got; r.err == nil {
			_ = r.h.Unlock(ctx)
		}
	}
}
