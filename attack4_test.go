package redisson_test

// Fourth adversarial review (of 4af5ba6): the Redis-side wait queue after "a handed lock stays
// marked", the ticketed hand-over taken without a round trip, the FairLock release gate, the
// renewal scheduler's generations and Stats. Each test forces an interleaving and asserts a
// guarantee stated in doc.go, README.md or the API docs; each fails on 4af5ba6 for the reason given
// in its comment.

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a4Queued waits until c's wake-up channel of lock name has a subscriber and q holds n waiters.
func a4Queued(t *testing.T, admin *redis.Client, c *redisson.Client, name, q string, n int64) {
	t.Helper()
	ctx := t.Context()
	ch := redisson.ChannelOf(c, name)
	eventually(t, 5*time.Second, "the waiter queued and subscribed", func() bool {
		return admin.ZCard(ctx, q).Val() == n && admin.PubSubNumSub(ctx, ch).Val()[ch] == 1
	})
	// The subscription is confirmed on the server; give the hub a moment to read the confirmation
	// and the waiter to go to sleep on its channel (nothing observable marks that moment).
	time.Sleep(100 * time.Millisecond)
}

// README: "a release hands the lock to the first live waiter in its script and wakes only it ... a
// lost message costs at most the 500 ms re-poll"; Lock docs: "A release hands the lock to the head
// of the Redis queue (waking only that waiter)", and a newcomer "may overtake queued waiters only in
// the moments the lock is free without having been handed over (it expired, ...)".
//
// The newcomer that overtakes in such a moment takes the free Lock with the fast-path SET NX, which
// writes the lock string with an empty mark ("N|1|") although waiters are queued. Its Unlock then
// matches the release script's fast path (cur == expected) and DELetes the key without looking at
// the queue: nobody is handed the lock, nobody is woken. The queued waiter sleeps until its re-poll
// (here a minute: WithRepollInterval allows up to an hour) while the lock is free.
//
// Interleaving: H holds the Lock with a 1s lease; W (another Client, re-poll one minute) queues
// behind it. H's lease runs out (documented: no hand-over then). N, a fresh Client (no recent
// contention, so its acquisition is a plain SET NX), takes the free lock and unlocks it at once.
// W should be handed the lock by that release.
func TestAttack4NewcomerReleaseStrandsQueuedWaiter(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a4-strand"
	key := "{" + name + "}"
	q, _ := redisson.QueueKeys("Lock", name)
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Minute))
	nc := newClient(t, srv.Client(t))

	if _, err := hc.Lock(name).Lock(ctx, redisson.WithLease(time.Second)); err != nil {
		t.Fatalf("H Lock: %v", err)
	}
	got, cancel := lockAsync(ctx, wc.Lock(name))
	defer cancel()
	a4Queued(t, admin, wc, name, q, 1)
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
			v, 3*time.Second, admin.Get(ctx, key).Val(), admin.ZCard(ctx, q).Val())
		cancel()
		if r := <-got; r.err == nil {
			_ = r.h.Unlock(ctx)
		}
	}
}

// Close: "a held lock stays in Redis until its lease runs out (at most the watchdog timeout after
// its last renewal), as if the process had exited"; WithWatchdogTimeout: "a lock whose process dies
// is freed at most this long after the last renewal".
//
// A watchdog waiter that takes the lock from the hand-over message keeps the lease the release set:
// the reservation, which runs until the waiter's liveness deadline, i.e. up to the waiter timeout.
// Its first renewal is only due a third of that reservation later (Entry.First). With a waiter
// timeout longer than the watchdog timeout (both are independent options), a holder that Closes (or
// dies) right after being handed the lock leaves it in Redis for up to the waiter timeout, not the
// watchdog timeout.
//
// Interleaving: W's Client has WithWatchdogTimeout(300ms) and WithWaiterTimeout(10s). H holds; W
// queues and sleeps on its channel. H unlocks: the lock is handed to W, PX ~10s, and W's Lock
// returns from the message. W's Client is closed at once. The lock should be gone within the
// watchdog timeout (300ms, checked after 1.3s); it stays ~10s.
func TestAttack4HandedLockOutlivesWatchdogAfterClose(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a4-reserve"
	key := "{" + name + "}"
	q, _ := redisson.QueueKeys("Lock", name)
	const watchdog = 300 * time.Millisecond
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(watchdog),
		redisson.WithWaiterTimeout(10*time.Second), redisson.WithRepollInterval(time.Minute))

	h := mustLock(t, hc.Lock(name), ctx)
	got, _ := lockAsync(ctx, wc.Lock(name))
	a4Queued(t, admin, wc, name, q, 1)
	mustUnlock(t, h)
	r := regressWait(t, got, 5*time.Second, "W's Lock")
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

// Stats.Lost: "holds that ended without an unlock (lost, fixed lease over, or Close)". Close ends
// every hold (its context is cancelled with ErrLockLost and ErrClosed, and EventLost is emitted),
// but the scheduler hands the entries it still had back to the Client without counting them, so
// Stats().Lost stays 0.
func TestAttack4StatsLostMissesClose(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	var lostEvents atomic.Int32
	c := newClient(t, srv.Client(t), redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			lostEvents.Add(1)
		}
	}))
	h := mustLock(t, c.Lock("a4-stats-close"), ctx)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if h.Context().Err() == nil {
		t.Fatal("precondition: the hold's context was not cancelled by Close")
	}
	if s := c.Stats(); s.Lost != 1 {
		t.Errorf("after Close ended one hold (EventLost emitted %d times): Stats().Lost = %d, want 1", lostEvents.Load(), s.Lost)
	}
}

// Stats.Lost counts "holds that ended without an unlock (lost, ...)". A hold whose lock was taken
// away (ForceUnlock) and whose owner learns it from its Unlock ends lost: Unlock returns ErrNotHeld
// and ErrLockLost, its context is cancelled with ErrLockLost and EventLost is emitted. Only the
// renewal scheduler counts losses, so this one, found by the release and not by a renewal, is not
// counted: Stats().Lost stays 0 while EventLost was reported.
func TestAttack4StatsLostMissesLossFoundByUnlock(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	var lostEvents atomic.Int32
	c := newClient(t, srv.Client(t), redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			lostEvents.Add(1)
		}
	}))
	other := newClient(t, srv.Client(t))
	const name = "a4-stats-unlock"
	h := mustLock(t, c.Lock(name), ctx)
	if ok, err := other.Lock(name).ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	err := h.Unlock(ctx)
	if !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("precondition: Unlock after ForceUnlock = %v; want ErrLockLost", err)
	}
	if s := c.Stats(); s.Lost != 1 {
		t.Errorf("a hold ended lost (Unlock: %v; EventLost emitted %d times): Stats().Lost = %d, want 1", err, lostEvents.Load(), s.Lost)
	}
}

// doc.go, "What is guaranteed": "at most one owner holds a lock at a time, and the owner is told
// (ErrLockLost) before its lease can lapse".
//
// A watchdog waiter that takes the lock from the hand-over message registers its hold with the
// reservation as its first lease (Entry.First): the scheduler expects the key to live until
// Since + reservation and renews only a third of the reservation in. But a re-entry (or a partial
// unlock) sets the key's lease to the watchdog timeout (o.leaseMs) from now, without telling the
// scheduler. When the reservation (up to the waiter timeout) is longer than the watchdog timeout,
// the key then expires long before the first renewal is due and before the loss signal: another
// owner takes the lock while this hold's context is still live. WithWatchdogTimeout and
// WithWaiterTimeout are independent options; any watchdog timeout below the waiter timeout (for
// instance 1s-4s with the default 5s waiter timeout) opens the window.
//
// Interleaving: W's Client has WithWatchdogTimeout(1s) and WithWaiterTimeout(10s). H holds; W
// queues and sleeps. H unlocks: the lock is handed to W (PX ~10s), W's Lock returns from the
// message, first renewal due ~3.3s later. W re-enters at once: PX 1s. 1s later the key expires; X
// acquires. W's context is not cancelled: two owners.
func TestAttack4ReentryAfterHandOverShortensLeaseBehindScheduler(t *testing.T) {
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) { attack4ReentryAfterHandOver(t, kind, false) })
	}
}

// The same through a partial unlock: Reenter, then Unlock of that level, which also sets the
// watchdog lease (o.leaseMs) on the key.
func TestAttack4PartialUnlockAfterHandOverShortensLeaseBehindScheduler(t *testing.T) {
	attack4ReentryAfterHandOver(t, "Lock", true)
}

func attack4ReentryAfterHandOver(t *testing.T, kind string, partial bool) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	name := "a4-reenter-" + kind
	key := "{" + name + "}"
	q, _ := redisson.QueueKeys(kind, name)
	const watchdog = time.Second
	hc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(watchdog),
		redisson.WithWaiterTimeout(10*time.Second), redisson.WithRepollInterval(time.Minute))
	xc := newClient(t, srv.Client(t))

	h := mustLock(t, lockOf(hc, kind, name), ctx)
	got, _ := lockAsync(ctx, lockOf(wc, kind, name))
	a4Queued(t, admin, wc, name, q, 1)
	mustUnlock(t, h)
	r := regressWait(t, got, 5*time.Second, "W's Lock")
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

// doc.go, Waiting: "if the lock was handed to it just before it died, the lock is reserved for it
// until that deadline, so a dead waiter stalls the lock at most a waiter timeout"
// (WithWaiterTimeout: "this also bounds how long a dead waiter stalls the lock").
//
// When the reservation of a dead waiter runs out, the key simply expires: nobody is told. The next
// live waiter keeps sleeping until its re-poll (its attempt answered "queued: it will be woken",
// so not even the holder's TTL bounds its sleep), and on a FairLock nobody else may take the free
// lock meanwhile (it goes only to the head of the queue): the lock stalls for the re-poll interval
// on top of the reservation. The re-poll may be up to an hour (here a minute).
//
// The dead waiter is written as a crashed process leaves it: queued before the live waiter, its
// liveness deadline 1.5s ahead (its last heartbeat was just before it died).
func TestAttack4DeadWaiterStallsFairLockBeyondWaiterTimeout(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "a4-dead-stall"
	const wt = 2 * time.Second // every Client's waiter timeout
	key := "{" + name + "}"
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
	a4Queued(t, admin, wc, name, q, 2)
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
			time.Since(released).Round(time.Millisecond), admin.Get(ctx, key).Val(), admin.ZCard(ctx, q).Val(), wt)
		cancel()
		if r := <-got; r.err == nil {
			_ = r.h.Unlock(ctx)
		}
	}
}

// Client.Close: "Every later call returns ErrClosed." FencedSet and FencedGet do not check that the
// Client was closed: after Close they still write and read through rdb. (Low severity: an API
// contract mismatch; a service that closes its Client on shutdown can still write fenced values.)
func TestAttack4FencedSetAfterClose(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	c := newClient(t, srv.Client(t))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ok, err := c.FencedSet(ctx, "a4-fenced-after-close", "v", 1)
	if !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("FencedSet after Close = %v, %v; want ErrClosed", ok, err)
	}
	if _, _, err := c.FencedGet(ctx, "a4-fenced-after-close"); !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("FencedGet after Close = %v; want ErrClosed", err)
	}
}
