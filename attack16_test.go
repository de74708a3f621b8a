package redisson_test

// Attack 16: the fixes of review 15 (sem_nudge / sem_first, repeated and too many permit ids, Release
// stopping renewals, latch rounds) and the sem_open refactor. Each failing test states the scenario,
// the expected behaviour and what happens; tests marked PASSING are kept as regression tests of
// attacks the code withstood.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// a16Renewal matches a sem_renew.lua call (or a pipeline seen as its first command) renewing pid.
func a16Renewal(pid string) func(a []string) bool {
	return func(a []string) bool {
		return len(a) >= 6 && (a[0] == "evalsha" || a[0] == "eval") && a[2] == "1" &&
			strings.HasSuffix(a[3], ":~sl") && a[5] == pid
	}
}

// Fixed (review 16: the hub wakes a waiter that registers within Hold of a "*"). Was: the nudge of a new earliest lease ("*" on the Client's channel) is lost for a waiter
// whose first attempt ran in Redis but who is not yet registered in the hub, when the Client's
// channel for the semaphore is subscribed already (another waiter of the Client, or a channel
// lingering after one): "*" is not held for late registrants (only messages naming a waiter are),
// and WasReady makes the waiter sleep on its first attempt's retry, which predates the new lease.
//
// Scenario (re-polls and heartbeats far apart): 1 permit, leased by H for an hour. Client W: W1 waits
// (subscribed, confirmed). W2 (same Client) starts; right after its first attempt registered it, H
// cuts its lease to 1s (SetLease: "*" published; it wakes W1, proving the hub handled it), and W1
// gives up (its channel lingers). W2 then registers in the hub.
// Expected (doc: "waiters sleep no longer than until the earliest lease ends, so they get it even
// if nobody publishes anything"): W2 gets the permit shortly after the 1s lease ends.
// Actual: W2 sleeps on the retry of its first attempt (the hour-long lease) or the re-poll.
func TestAttack16NudgeLostBeforeWaiterRegisters(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	h := newClient(t, srv.Client(t))
	hook := &a15Hook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	w := newClient(t, rdb, a14Quiet()...)
	const name = "nudge16"
	p := h.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ids, err := p.Acquire(ctx, 1, redisson.WithLease(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	attempts := map[string]int{}
	w1 := ""
	w1Attempt := make(chan int, 16)
	setLeaseAt := make(chan time.Time, 1)
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	w1Done := make(chan error, 1)
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		if !a14SemAcquire("", "w")(a) {
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
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("W2 got the permit %v after SetLease(1s)", time.Since(t0))
	case <-time.After(time.Until(t0.Add(4 * time.Second))):
		t.Fatalf("W2 not served %v after the only lease was cut to 1s (leased %d, available %d): the nudge reached the hub before W2 registered and was dropped",
			time.Since(t0), a15Leased(t, admin, name), a15Avail(t, h.PermitExpirableSemaphore(name)))
	}
}

// Fixed (review 16: a renewal never shortens a lease, ZADD GT). Was: a watchdog renewal that shortens a lease (a watchdog permit whose lease SetLease had
// extended: "gets the watchdog's lease again at its next renewal") does not nudge the waiters, whose
// retry still points at the long lease.
//
// Scenario: H (watchdog 600ms) holds the only permit without WithLease and sets its lease to an hour
// (SetLease). W (quiet re-polls and heartbeats) waits: its attempts answer retry ≈ 1h. H's watchdog
// renewal then sets the lease to now+600ms (sem_renew.lua, no nudge), and H closes (dies): the
// permit lapses 600ms later.
// Expected (doc: a permit "returns within the watchdog timeout of its holder's death", and "waiters
// sleep no longer than until the earliest lease ends"): W gets the permit within about a second.
// Actual: W sleeps until the hour, its re-poll or a heartbeat.
func TestAttack16WatchdogRenewalShortensLeaseNoNudge(t *testing.T) {
	ctx := t.Context()
	_, _, srv := setup(t)
	hHook, wHook := &a15Hook{}, &a15Hook{}
	hRdb, wRdb := srv.Client(t), srv.Client(t)
	hRdb.AddHook(hHook)
	wRdb.AddHook(wHook)
	h := newClient(t, hRdb, redisson.WithWatchdogTimeout(600*time.Millisecond))
	w := newClient(t, wRdb, a14Quiet()...)
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
		match := pid != "" && a16Renewal(pid)(a)
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
		if a14SemAcquire("", "w")(a) {
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

// Fixed (review 16: the round is read before the count). Was: CountDownLatch.Wait read the count, then the round, in a pipeline: Redis does not run a
// pipeline atomically, and a count-down to zero followed by a TrySetCount landing between the two
// GETs makes the first read pair (count 1 before the zero, round after it) take the new round for
// the round the wait began in: the waiter then waits for the next round.
//
// Scenario: count 1; W (re-poll an hour) calls Wait. Between its first GET of the count and its GET
// of the round (simulated at the hook: the two GETs are run one by one, the other Client's commands
// between them), another Client counts down to zero and sets the count to 1 again.
// Expected (doc: Wait "returns nil once the count ... has reached zero since Wait began even if the
// latch was set again since"): W returns.
// Actual: first = the new round, count 1: W waits on. Suggested fix: read the round before the count
// (GET round, GET count), or both in MULTI/EXEC or one script.
func TestAttack16LatchWaitReadsCountBeforeRound(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := &a15Hook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	const name = "il16"
	w := newClient(t, rdb, redisson.WithRepollInterval(time.Hour)).CountDownLatch(name)
	ctl := newClient(t, srv.Client(t)).CountDownLatch(name)
	if ok, err := ctl.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var once sync.Once
	reads := make(chan struct{}, 16)
	copyTo := func(cmd redis.Cmder, key string) {
		v, err := admin.Get(ctx, key).Result()
		sc := cmd.(*redis.StringCmd)
		if err != nil {
			sc.SetErr(err)
		} else {
			sc.SetVal(v)
		}
	}
	hook.setPipe(func(ctx context.Context, cmds []redis.Cmder, next func() error) error {
		if len(cmds) != 2 || strings.Join(a15Args(cmds[1]), " ") != "get {"+name+"}" {
			return next()
		}
		reads <- struct{}{}
		first := false
		once.Do(func() { first = true })
		if !first {
			return next()
		}
		// Wait reads the round, then the count (the fix): the zero and the re-arm come between.
		copyTo(cmds[0], "{"+name+"}:~lr")
		if v, err := ctl.CountDown(context.Background()); v != 0 || err != nil {
			t.Errorf("CountDown = %d, %v", v, err)
		}
		if ok, err := ctl.TrySetCount(context.Background(), 1); !ok || err != nil {
			t.Errorf("TrySetCount = %v, %v", ok, err)
		}
		copyTo(cmds[1], "{"+name+"}")
		return nil
	})
	wctx, cancel := context.WithCancel(ctx)
	done, exited := make(chan error, 1), make(chan struct{})
	defer func() { cancel(); <-exited }()
	go func() { defer close(exited); done <- w.Wait(wctx) }()
	<-reads
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("W, waiting before the count reached zero, not released: its first read took the round after the zero for its own (count 1 read before it)")
	}
}

// Fixed (review 16: the round is checked before any write). Was: a round key that is not an integer (a hash, a non-numeric string, or at INCR's maximum)
// makes the count-down that reaches zero fail after it deleted the count: latch.lua DELs the count,
// then INCR of the round fails, and Redis does not roll a script back. The caller gets an error
// (untyped for a string: "ERR value is not an integer"), yet the latch is open, no "*" is published
// and no record is kept.
//
// Expected (contract: bad state → typed error, nothing changed): ErrWrongType with count 1 kept (or
// success with the round handled).
func TestAttack16LatchBadRoundKeyCountDownHalfApplied(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	for i, bad := range []func(key string){
		func(key string) { admin.HSet(ctx, key, "f", "1") },
		func(key string) { admin.Set(ctx, key, "abc", 0) },
		func(key string) { admin.Set(ctx, key, "9223372036854775807", 0) },
	} {
		name := fmt.Sprintf("lrbad%d", i)
		l := c.CountDownLatch(name)
		if ok, err := l.TrySetCount(ctx, 1); !ok || err != nil {
			t.Fatalf("TrySetCount = %v, %v", ok, err)
		}
		bad("{" + name + "}:~lr")
		if ok, err := l.TrySetCount(ctx, 1); ok || !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("round key %d: TrySetCount = %v, %v; want ErrWrongType", i, ok, err)
		}
		n, err := l.CountDown(ctx)
		left := admin.Get(ctx, "{"+name+"}").Val()
		t.Logf("round %d: CountDown = %d, %v; count now %q", i, n, err, left)
		switch {
		case err == nil && left != "":
			t.Errorf("round key %d: CountDown succeeded but the count is %q", i, left)
		case err != nil && left != "1":
			t.Errorf("round key %d: CountDown failed (%v; ErrWrongType: %v) but the count changed from 1 to %q (the latch opened, unannounced)",
				i, err, errors.Is(err, redisson.ErrWrongType), left)
		case err != nil && !errors.Is(err, redisson.ErrWrongType):
			t.Errorf("round key %d: CountDown = %v; want ErrWrongType", i, err)
		}
	}
}

// PASSING. Release by permit ids: another Client's Release (failing with ErrNotHeld, or refused as
// bad input) does not stop the holder's renewal; bad input (repeated ids, 1001 ids, 1001 leased
// permits) is ErrInvalidArgument with nothing changed; 1000 ids work; the holder's own Release whose
// outcome is unknown (the command never reached Redis) stops the renewal, and the permit lapses
// within the watchdog timeout.
func TestAttack16ReleaseIDsRenewalAndLimits(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := &a15Hook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	a := newClient(t, rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
	b := newClient(t, srv.Client(t))
	const name = "rel16"
	pa, pb := a.PermitExpirableSemaphore(name), b.PermitExpirableSemaphore(name)
	if _, err := pa.TrySetPermits(ctx, 1001); err != nil {
		t.Fatal(err)
	}
	ids, err := pa.Acquire(ctx, 1) // watchdog-renewed
	if err != nil {
		t.Fatal(err)
	}
	renewals := make(chan struct{}, 256)
	hook.setCmd(func(ctx context.Context, args []string, cmd redis.Cmder, next func() error) error {
		err := next()
		if a16Renewal(ids[0])(args) && err == nil {
			select {
			case renewals <- struct{}{}:
			default:
			}
		}
		return err
	})
	if err := pb.Release(ctx, ids[0], "nobody#1"); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("B's Release(A's id, unknown) = %v; want ErrNotHeld", err)
	}
	for _, bad := range [][]string{{ids[0], ids[0]}, make([]string, 1001), {}} {
		for i := range bad {
			if bad[i] == "" {
				bad[i] = fmt.Sprintf("x#%d", i)
			}
		}
		if err := pb.Release(ctx, bad...); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("Release of %d ids (repeated/too many/none) = %v; want ErrInvalidArgument", len(bad), err)
		}
	}
	if got, err := pb.TryAcquire(ctx, 1001, redisson.WithLease(time.Minute)); got != nil || !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("TryAcquire(1001 leased) = %d ids, %v; want ErrInvalidArgument", len(got), err)
	}
	if n, l := a15Avail(t, pa), a15Leased(t, admin, name); n != 1000 || l != 1 {
		t.Fatalf("after refused calls: %d available, %d leased; want 1000, 1", n, l)
	}
	// Several watchdog timeouts of renewals after B's calls: A's permit is still renewed.
	for len(renewals) > 0 {
		<-renewals
	}
	for i := 0; i < 6; i++ {
		select {
		case <-renewals:
		case <-time.After(3 * time.Second):
			t.Fatalf("A's renewal stopped after B's failed Release (%d renewals seen)", i)
		}
	}
	if _, err := pa.RemainingLease(ctx, ids[0]); err != nil {
		t.Fatalf("A's permit lapsed: %v", err)
	}
	// 1000 ids at once.
	big, err := pb.TryAcquire(ctx, 1000, redisson.WithLease(time.Minute))
	if err != nil || len(big) != 1000 {
		t.Fatalf("TryAcquire(1000) = %d ids, %v", len(big), err)
	}
	if err := pb.Release(ctx, big...); err != nil {
		t.Fatalf("Release(1000 ids) = %v", err)
	}
	// A's own Release whose command never reached Redis: the renewal stops, the permit lapses.
	injected := errors.New("a16: connection reset (injected)")
	hook.setCmd(func(ctx context.Context, args []string, cmd redis.Cmder, next func() error) error {
		if a14SemChange("x")(args) {
			cmd.SetErr(injected)
			return injected
		}
		return next()
	})
	if err := pa.Release(ctx, ids...); err == nil {
		t.Fatal("precondition: Release with the command lost succeeded")
	}
	hook.setCmd(nil)
	eventually(t, 3*time.Second, "A's unreleased permit lapses once no longer renewed", func() bool {
		_, err := pa.RemainingLease(ctx, ids[0])
		return errors.Is(err, redisson.ErrNotHeld)
	})
	if n := a15Avail(t, pa); n != 1001 {
		t.Fatalf("after the lapse: %d available; want 1001", n)
	}
}

// PASSING. A nudge ("*") on one semaphore's channel wakes only that semaphore's waiters of the
// Client: a waiter of another semaphore on the same Client makes no extra attempt; and the nudged
// waiter learns the new retry (it gets the permit right after the short lease ends).
func TestAttack16NudgeScopedToObject(t *testing.T) {
	ctx := t.Context()
	_, _, srv := setup(t)
	h := newClient(t, srv.Client(t))
	hook := &a15Hook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	w := newClient(t, rdb, a14Quiet()...)
	var mu sync.Mutex
	perKey := map[string]int{}
	seen := make(chan string, 64)
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		err := next()
		if a14SemAcquire("", "w")(a) {
			mu.Lock()
			perKey[a[3]]++
			mu.Unlock()
			seen <- a[3]
		}
		return err
	})
	idsOf := map[string][]string{}
	for _, name := range []string{"oa16", "ob16"} {
		p := h.PermitExpirableSemaphore(name)
		if _, err := p.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		ids, err := p.Acquire(ctx, 1, redisson.WithLease(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		idsOf[name] = ids
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
	for counts["{oa16}"] < 2 || counts["{ob16}"] < 2 {
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
	select {
	case err := <-gotA:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the nudged waiter of oa16 not served after its 300ms lease")
	}
	mu.Lock()
	b := perKey["{ob16}"]
	mu.Unlock()
	if b != 2 {
		t.Fatalf("the waiter of ob16 made %d attempts; want 2 (a nudge of oa16 must not wake it)", b)
	}
}
