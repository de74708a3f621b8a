package redisson_test

// PermitExpirableSemaphore waiters woken when the earliest lease ends: new, shortened and renewed
// leases, and nudges.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// leasedPermit sets the permits of c's PermitExpirableSemaphore name to 1 and acquires that permit
// with a fixed lease; it returns the semaphore and the permit's ids.
func leasedPermit(t *testing.T, ctx context.Context, c *redisson.Client, name string, lease time.Duration) (*redisson.PermitExpirableSemaphore, []string) {
	t.Helper()
	p := c.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ids, err := p.Acquire(ctx, 1, redisson.WithLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	return p, ids
}

// awaitServed waits at most d for a waiter's Acquire to return its error on got: it fails the test
// if the Acquire failed, or with the message notServed makes (then: it may read Redis) if it has not
// returned.
func awaitServed(t *testing.T, got <-chan error, d time.Duration, notServed func() string) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-timer.C:
		t.Fatal(notServed())
	}
}

// A waiter queued behind a waiter that then takes a short-leased permit gets the permit shortly
// after that lease ends, though nobody publishes (doc: "waiters sleep no longer than until the
// earliest lease ends, so they get it even if nobody publishes"): a lease that ends before any
// other nudges the waiters.
//
// Scenario (re-polls and heartbeats far apart): 0 permits; W1 waits for 1 permit with
// WithLease(300ms), then W2 waits for 1. AddPermits(1) wakes W1, which takes the permit with its
// 300ms lease. W2 is served within 2.5s.
func TestPermitWaiterWokenWhenNewLeaseEnds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, admin, srv := setup(t)
	quiet := quietWaiters()
	c1, c2, c3 := newClient(t, srv.Client(t), quiet...), newClient(t, srv.Client(t), quiet...), newClient(t, srv.Client(t))
	const name = "behind"
	if _, err := c3.PermitExpirableSemaphore(name).TrySetPermits(ctx, 0); err != nil {
		t.Fatal(err)
	}
	got1, got2 := make(chan time.Time, 1), make(chan error, 1)
	go func() {
		_, err := c1.PermitExpirableSemaphore(name).Acquire(ctx, 1, redisson.WithLease(300*time.Millisecond))
		if err == nil {
			got1 <- time.Now()
		}
	}()
	eventually(t, 5*time.Second, "W1 queued", func() bool { return semWaiters(t, c3, name) == 1 })
	go func() {
		_, err := c2.PermitExpirableSemaphore(name).Acquire(ctx, 1, redisson.WithLease(time.Minute))
		got2 <- err
	}()
	eventually(t, 5*time.Second, "W2 queued", func() bool { return semWaiters(t, c3, name) == 2 })
	if _, err := c3.PermitExpirableSemaphore(name).AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var t1 time.Time
	select {
	case t1 = <-got1:
	case <-time.After(5 * time.Second):
		t.Fatal("precondition: W1 did not get the added permit")
	}
	awaitServed(t, got2, 2500*time.Millisecond, func() string {
		return fmt.Sprintf("W2 not served %v after W1's 300ms lease began (leased now: %d, available: %d): nothing woke it",
			time.Since(t1), permitsLeased(t, admin, name), permitsAvailable(t, c3.PermitExpirableSemaphore(name)))
	})
	t.Logf("W2 got the permit %v after W1 took it with a 300ms lease", time.Since(t1))
}

// SetLease shortening a permit's lease moves its waiters' retry: with the only permit leased by H
// for an hour and W waiting (its retry the hour; quiet re-polls and heartbeats), SetLease(200ms)
// lets W get the permit within 2.5s, not at the old lease's end (the permit "returns to the pool by
// itself and waiters are woken for it even if nobody publishes").
func TestPermitWaiterWokenWhenSetLeaseShortens(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	h, w := newClient(t, srv.Client(t)), newClient(t, srv.Client(t), quietWaiters()...)
	const name = "shorten"
	p, ids := leasedPermit(t, ctx, h, name, time.Hour)
	got := make(chan error, 1)
	go func() {
		_, err := w.PermitExpirableSemaphore(name).Acquire(ctx, 1, redisson.WithLease(time.Minute))
		got <- err
	}()
	eventually(t, 5*time.Second, "W queued", func() bool { return semWaiters(t, h, name) == 1 })
	if err := p.SetLease(ctx, 200*time.Millisecond, ids...); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	awaitServed(t, got, 2500*time.Millisecond, func() string {
		return fmt.Sprintf("W not served %v after the lease was cut to 200ms (leased %d): nothing woke it", time.Since(start), permitsLeased(t, admin, name))
	})
	t.Logf("W got the permit %v after SetLease(200ms)", time.Since(start))
}

// The nudge of a new earliest lease ("*" on the Client's channel) reaches a waiter whose first
// attempt ran in Redis but which is not registered in the Client's hub yet, while the Client's
// channel for the semaphore is subscribed already (by another waiter of the Client, or lingering
// after one): the hub wakes a waiter that registers soon after a "*".
//
// Scenario (re-polls and heartbeats far apart): 1 permit, leased by H for an hour. Client W: W1
// waits (subscribed, confirmed). W2 (same Client) starts; right after its first attempt registered
// it in Redis, H cuts its lease to 1s (SetLease publishes "*"; it wakes W1, proving the hub handled
// it), and W1 gives up (its channel lingers). W2 then registers in the hub, and must get the permit
// shortly after the 1s lease ends.
func TestPermitNudgeReachesWaiterNotYetRegistered(t *testing.T) {
	long(t)
	t.Parallel()
	ctx := t.Context()
	_, admin, srv := setup(t)
	h := newClient(t, srv.Client(t))
	hook := &aroundHook{}
	w := hookedClient(t, srv, hook, quietWaiters()...)
	const name = "nudge16"
	p, ids := leasedPermit(t, ctx, h, name, time.Hour)
	var mu sync.Mutex
	attempts := map[string]int{}
	w1 := ""
	w1Attempt := make(chan int, 16)
	setLeaseAt := make(chan time.Time, 1)
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	w1Done := make(chan error, 1)
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		if !semAcquireCall("", "w")(a) {
			return next()
		}
		err := next()
		mu.Lock()
		id := a[7]
		attempts[id]++
		k := attempts[id]
		if w1 == "" {
			w1 = id
		}
		isW1 := id == w1
		mu.Unlock()
		if isW1 {
			w1Attempt <- k
			return err
		}
		if k != 1 {
			return err
		}
		// W2's first attempt ran: it is registered in Redis, not yet in the hub.
		if e := p.SetLease(context.Background(), time.Second, ids...); e != nil {
			t.Errorf("SetLease: %v", e)
			return err
		}
		setLeaseAt <- time.Now()
		for {
			select {
			case k := <-w1Attempt:
				if k < 3 {
					continue
				}
			case <-time.After(5 * time.Second):
				t.Errorf("precondition: W1 (quiet) was not nudged by the SetLease")
			}
			break
		}
		cancel1()
		select {
		case <-w1Done:
		case <-time.After(5 * time.Second):
			t.Errorf("W1 did not return after its context ended")
		}
		return err
	})
	go func() {
		_, err := w.PermitExpirableSemaphore(name).Acquire(ctx1, 1, redisson.WithLease(time.Minute))
		w1Done <- err
	}()
	for k := 0; k < 2; {
		select {
		case k = <-w1Attempt:
		case <-time.After(5 * time.Second):
			t.Fatal("precondition: W1 did not make its attempt after the subscription was confirmed")
		}
	}
	ctx2, cancel2 := context.WithCancel(ctx)
	got, w2Done := make(chan error, 1), make(chan struct{})
	defer func() { cancel2(); <-w2Done }()
	go func() {
		defer close(w2Done)
		ids2, err := w.PermitExpirableSemaphore(name).Acquire(ctx2, 1, redisson.WithLease(time.Minute))
		got <- err
		if err == nil {
			_ = w.PermitExpirableSemaphore(name).Release(context.Background(), ids2...)
		}
	}()
	var t0 time.Time
	select {
	case t0 = <-setLeaseAt:
	case <-time.After(10 * time.Second):
		t.Fatal("precondition: W2's first attempt not seen")
	}
	awaitServed(t, got, time.Until(t0.Add(4*time.Second)), func() string {
		return fmt.Sprintf("W2 not served %v after the only lease was cut to 1s (leased %d, available %d): the nudge reached the hub before W2 registered and was dropped",
			time.Since(t0), permitsLeased(t, admin, name), permitsAvailable(t, h.PermitExpirableSemaphore(name)))
	})
	t.Logf("W2 got the permit %v after SetLease(1s)", time.Since(t0))
}

// A watchdog renewal never shortens a permit's lease (ZADD GT): a waiter was told to retry when the
// lease ends, and nothing would wake it when a shorter lease ended. Scenario: H (watchdog 600ms)
// holds the only permit without WithLease and sets its lease to an hour (SetLease); W (quiet
// re-polls and heartbeats) waits. After H's next watchdog renewal the lease is still about an hour,
// and W is not served meanwhile.
func TestPermitWatchdogRenewalNeverShortensLease(t *testing.T) {
	ctx := t.Context()
	_, _, srv := setup(t)
	hHook, wHook := &aroundHook{}, &aroundHook{}
	h := hookedClient(t, srv, hHook, redisson.WithWatchdogTimeout(600*time.Millisecond))
	w := hookedClient(t, srv, wHook, quietWaiters()...)
	const name = "shrink16"
	p := h.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	gate, renewed := make(chan struct{}), make(chan struct{}, 64)
	var pid string
	var pidMu sync.Mutex
	hHook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		pidMu.Lock()
		match := pid != "" && permitRenewalCall(pid)(a)
		pidMu.Unlock()
		if !match {
			return next()
		}
		select {
		case <-gate:
		case <-time.After(15 * time.Second):
		}
		err := next()
		if err == nil { // not a NOSCRIPT refusal (the pipeline is sent again once the script is loaded)
			select {
			case renewed <- struct{}{}:
			default:
			}
		}
		return err
	})
	ids, err := p.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	pidMu.Lock()
	pid = ids[0]
	pidMu.Unlock()
	// (A renewal that started before pid was set may still run: it is done well before the SetLease
	// below is answered, or is held by the gate; either way the lease then is the hour.)
	if err := p.SetLease(ctx, time.Hour, ids...); err != nil {
		t.Fatal(err)
	}
	wAttempts := make(chan struct{}, 16)
	wHook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		err := next()
		if semAcquireCall("", "w")(a) {
			wAttempts <- struct{}{}
		}
		return err
	})
	wctx, cancel := context.WithCancel(ctx)
	got, wDone := make(chan error, 1), make(chan struct{})
	defer func() { cancel(); <-wDone }()
	go func() {
		defer close(wDone)
		_, err := w.PermitExpirableSemaphore(name).Acquire(wctx, 1, redisson.WithLease(time.Minute))
		got <- err
	}()
	for i := 0; i < 2; i++ { // its first attempt, and the one after its subscription was confirmed
		select {
		case <-wAttempts:
		case <-time.After(5 * time.Second):
			t.Fatal("precondition: W's attempts not seen")
		}
	}
	if d, err := p.RemainingLease(ctx, ids[0]); err != nil || d < 30*time.Minute {
		t.Fatalf("precondition: lease after SetLease(1h) = %v, %v", d, err)
	}
	close(gate)
	select {
	case <-renewed:
	case <-time.After(5 * time.Second):
		t.Fatal("precondition: no watchdog renewal")
	}
	// The renewal must not have shortened the lease below what the waiter was told (an hour): had it,
	// nothing would wake the waiter when the shorter lease ends.
	d, err := newClient(t, srv.Client(t)).PermitExpirableSemaphore(name).RemainingLease(ctx, ids[0])
	if err != nil || d < 30*time.Minute {
		t.Fatalf("lease after the watchdog renewal = %v, %v; want the hour SetLease gave (renewals never shorten)", d, err)
	}
	select {
	case err := <-got:
		t.Fatalf("W served while the only permit is leased for an hour: %v", err)
	default:
	}
}

// A nudge ("*") on one semaphore's channel wakes only that semaphore's waiters of the Client: a
// waiter of another semaphore on the same Client makes no extra attempt; and the nudged waiter
// learns the new retry (it gets the permit right after the short lease ends).
func TestPermitNudgeScopedToObject(t *testing.T) {
	long(t)
	t.Parallel()
	ctx := t.Context()
	_, _, srv := setup(t)
	h := newClient(t, srv.Client(t))
	hook := &aroundHook{}
	w := hookedClient(t, srv, hook, quietWaiters()...)
	var mu sync.Mutex
	perKey := map[string]int{}
	seen := make(chan string, 64)
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		err := next()
		if semAcquireCall("", "w")(a) {
			mu.Lock()
			perKey[a[3]]++
			mu.Unlock()
			seen <- a[3]
		}
		return err
	})
	idsOf := map[string][]string{}
	for _, name := range []string{"oa16", "ob16"} {
		_, idsOf[name] = leasedPermit(t, ctx, h, name, time.Hour)
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	gotA := make(chan error, 1)
	spawn(&wg, func() {
		_, err := w.PermitExpirableSemaphore("oa16").Acquire(wctx, 1, redisson.WithLease(time.Minute))
		gotA <- err
	})
	spawn(&wg, func() { _, _ = w.PermitExpirableSemaphore("ob16").Acquire(wctx, 1, redisson.WithLease(time.Minute)) })
	counts := map[string]int{}
	for counts["oa16"] < 2 || counts["ob16"] < 2 {
		select {
		case k := <-seen:
			counts[k]++
		case <-time.After(5 * time.Second):
			t.Fatalf("precondition: waiters' attempts %v", counts)
		}
	}
	if err := h.PermitExpirableSemaphore("oa16").SetLease(ctx, 300*time.Millisecond, idsOf["oa16"]...); err != nil {
		t.Fatal(err)
	}
	awaitServed(t, gotA, 3*time.Second, func() string { return "the nudged waiter of oa16 not served after its 300ms lease" })
	mu.Lock()
	b := perKey["ob16"]
	mu.Unlock()
	if b != 2 {
		t.Fatalf("the waiter of ob16 made %d attempts; want 2 (a nudge of oa16 must not wake it)", b)
	}
}
