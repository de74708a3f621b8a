package redisson_test

// Attack 14: the distributed counting Semaphore (semaphore.go, internal/scripts/sem_*.lua). Each
// failing test states the scenario, the expected behaviour and what happens; tests marked PASSING
// are kept as regression tests of attacks the code withstood.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a14SemAcquire matches a sem_acquire.lua call (EVALSHA/EVAL, 3 keys, then id, n, mode, waiter
// timeout, re-send window) of id ("" any) in mode ("" any).
func a14SemAcquire(id, mode string) func(a []string) bool {
	return func(a []string) bool {
		if len(a) != 15 || (a[0] != "evalsha" && a[0] != "eval") || a[2] != "4" {
			return false
		}
		return (id == "" || a[7] == id) && (mode == "" || a[9] == mode)
	}
}

// a14SemChange matches a sem_release.lua call (4 keys, then what, n, publish, prefix, window, id,
// leased flag, permit ids) of kind what ("" any).
func a14SemChange(what string) func(a []string) bool {
	return func(a []string) bool {
		if len(a) < 14 || (a[0] != "evalsha" && a[0] != "eval") || a[2] != "4" {
			return false
		}
		return what == "" || a[7] == what
	}
}

func a14Permits(t *testing.T, s *redisson.Semaphore) int64 {
	t.Helper()
	n, err := s.AvailablePermits(context.Background())
	if err != nil {
		t.Fatalf("AvailablePermits: %v", err)
	}
	return n
}

func a14Waiters(t *testing.T, c *redisson.Client, name string) int {
	t.Helper()
	n, err := redisson.SemaphoreWaiters(context.Background(), c, name)
	if err != nil {
		t.Fatalf("SemaphoreWaiters: %v", err)
	}
	return n
}

// a14Quiet: re-polls and heartbeats far apart, so only a message (or its absence) decides.
func a14Quiet() []redisson.Option {
	return []redisson.Option{redisson.WithRepollInterval(time.Hour), redisson.WithWatchdogTimeout(time.Hour),
		redisson.WithWaiterTimeout(time.Hour)}
}

// PASSING. Every change re-sent by go-redis after a lost reply (redistest.Proxy.DropReplies: the
// script ran, its reply was lost, go-redis sends it again on a new connection) is applied once:
// TrySetPermits, AddPermits (both signs), Release, TryAcquire, DrainPermits, and a waiting Acquire.
func TestAttack14_ResentChangesAppliedOnce(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, _ := regressProxied(t, srv, p)
	c := newClient(t, rdb)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s := c.Semaphore("resent")
	chk := newClient(t, srv.Client(t)).Semaphore("resent")
	step := func(what string, want int64, f func() error) {
		t.Helper()
		p.DropReplies(1)
		if err := f(); err != nil {
			t.Fatalf("%s with its reply lost: %v", what, err)
		}
		p.DropReplies(0)
		if got := a14Permits(t, chk); got != want {
			t.Fatalf("after %s (reply lost, re-sent): %d permits; want %d", what, got, want)
		}
	}
	step("TrySetPermits(5)", 5, func() error {
		ok, err := s.TrySetPermits(ctx, 5)
		if err == nil && !ok {
			err = errors.New("reported false: the re-sent copy's answer is not the first run's")
		}
		return err
	})
	step("AddPermits(3)", 8, func() error {
		n, err := s.AddPermits(ctx, 3)
		if err == nil && n != 8 {
			err = errors.New("returned " + strconv.FormatInt(n, 10))
		}
		return err
	})
	step("AddPermits(-2)", 6, func() error { _, err := s.AddPermits(ctx, -2); return err })
	step("TryAcquire(4)", 2, func() error {
		ok, err := s.TryAcquire(ctx, 4)
		if err == nil && !ok {
			err = errors.New("reported false")
		}
		return err
	})
	step("Release(1)", 3, func() error { return s.Release(ctx, 1) })
	step("Acquire(2)", 1, func() error { return s.Acquire(ctx, 2) })
	step("DrainPermits", 0, func() error {
		n, err := s.DrainPermits(ctx)
		if err == nil && n != 1 {
			err = errors.New("drained " + strconv.FormatInt(n, 10))
		}
		return err
	})
}

// Fixed (review 14: a failed single attempt records "u"). Was: a late copy of a TryAcquire that was answered "not now" takes permits nobody holds.
//
// Scenario: 1 permit, held by A. B calls TryAcquire(1) (sem_acquire.lua mode "f"); go-redis's
// first copy is delayed on the network, the re-sent copy runs and answers {0, 0}: TryAcquire returns
// false, nil, and B does nothing more (errNotNow: no undo, and the script wrote no request record).
// A releases its permit. The delayed first copy lands (replayed here with the exact arguments).
//
// Expected: "every change safe to re-send … or a copy may land late": the copy takes nothing (as the
// copy of a waiting acquisition does once its record says "u"); 1 permit available.
// Actual: the copy finds no record, takes the permit and records "a": 0 available, nobody holds it,
// and it is never given back (a permanent leak).
func TestAttack14_LateCopyOfRefusedTryAcquireTakesPermit(t *testing.T) {
	srv, admin, hook, b, a := a11Setup(t)
	_ = srv
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const name = "latetry"
	sa, sb := a.Semaphore(name), b.Semaphore(name)
	if ok, err := sa.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if ok, err := sa.TryAcquire(ctx, 1); err != nil || !ok {
		t.Fatalf("A TryAcquire = %v, %v", ok, err)
	}
	hook.set(a14SemAcquire("", "f"), false)
	if ok, err := sb.TryAcquire(ctx, 1); err != nil || ok {
		t.Fatalf("B TryAcquire(1) with none available = %v, %v; want false, nil", ok, err)
	}
	hook.release()
	copyArgs := hook.last(t)
	if err := sa.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	res, err := admin.Do(ctx, copyArgs...).Result()
	t.Logf("late copy of B's refused TryAcquire answered %v, %v", res, err)
	if n := a14Permits(t, sa); n != 1 {
		t.Fatalf("after a late copy of a TryAcquire that returned false: %d permits available; want 1 "+
			"(the copy took a permit nobody holds or will release)", n)
	}
}

// PASSING. The end of a wait racing its own attempt: W waits for 2; a release makes 2 available and
// wakes W, whose next attempt is held on the network; W's context ends; the undo runs. Then late
// copies of every request of W (the held attempt, the registering attempt, the undo) land.
// Expected: the semaphore is as before the wait (2 permits, no waiter).
func TestAttack14_UndoRacingAttemptAndLateCopies(t *testing.T) {
	_, admin, hook, wc, other := a11Setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const name = "undorace"
	s := other.Semaphore(name)
	hook.set(a14SemAcquire("", "w"), false)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	got := make(chan error, 1)
	go func() { got <- wc.Semaphore(name).Acquire(wctx, 2) }()
	semWaiting(t, other, name, 1)
	registering := hook.last(t)
	hook.release()
	id := registering[7].(string)

	gate := newA12Gate(a14SemAcquire(id, "w"))
	hook.setAround(gate.around)
	t.Cleanup(func() { hook.setAround(nil) })
	t.Cleanup(gate.open)
	gate.arm()
	hook.set(a14SemAcquire(id, "w"), false) // record the held copy too
	if _, err := s.AddPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	regressAwait(ctx, gate.reached, 5*time.Second)
	select {
	case <-gate.reached:
	default:
		t.Fatal("precondition: W was not woken by the AddPermits")
	}
	held := hook.last(t)
	hook.set(a14SemChange("u"), false)
	wcancel()
	gate.open()
	if err := regressWait(t, got, 10*time.Second, "W's ended wait"); err == nil {
		// W got the permits before its context ended: release them, the rest of the test still holds.
		t.Log("W acquired before its context ended")
		if err := s.Release(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, "W's undo", func() bool { return a14Waiters(t, other, name) == 0 })
	var undo []any
	if last := hook.last(t); len(last) == 14 && fmt.Sprint(last[7]) == "u" {
		undo = last
	} else {
		t.Log("no undo recorded")
	}
	hook.release()
	for what, args := range map[string][]any{"held attempt": held, "registering attempt": registering, "undo": undo} {
		if args == nil {
			continue
		}
		res, err := admin.Do(ctx, args...).Result()
		t.Logf("late copy of W's %s: %v, %v", what, res, err)
	}
	if n := a14Permits(t, s); n != 2 {
		t.Fatalf("after W's ended wait and late copies of its requests: %d permits; want 2", n)
	}
	if n := a14Waiters(t, other, name); n != 0 {
		t.Fatalf("%d waiters left; want 0", n)
	}
}

// Fixed (review 14: counts bounded by ±(2^53-1)). Was: counts above 2^53 lost precision in Lua (numbers are doubles): more permits handed
// out than exist.
//
// Scenario: TrySetPermits(2^53); TryAcquire(2^53 + 1).
// Expected: false (only 2^53 exist), or ErrInvalidArgument for a count the scripts cannot represent;
// in any case never true.
// Actual: tonumber("9007199254740993") is 2^53 in sem_acquire.lua: the check passes, DECRBY takes
// 2^53, and TryAcquire reports that 2^53 + 1 permits were taken.
func TestAttack14_PermitCountsAbove2p53(t *testing.T) {
	c, _, _ := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s := c.Semaphore("big")
	const most = int64(1)<<53 - 1
	if ok, err := s.TrySetPermits(ctx, most+1); ok || !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("TrySetPermits(2^53) = %v, %v; want ErrInvalidArgument", ok, err)
	}
	if ok, err := s.TrySetPermits(ctx, most); err != nil || !ok {
		t.Fatalf("TrySetPermits(2^53-1) = %v, %v", ok, err)
	}
	ok, err := s.TryAcquire(ctx, most+2)
	left := a14Permits(t, s)
	if ok {
		t.Fatalf("TryAcquire(2^53+1) with 2^53-1 available = true (err %v): more permits handed out than exist; %d left", err, left)
	}
	if !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("TryAcquire(2^53+1) = %v; want ErrInvalidArgument", err)
	}
	if _, err := s.AddPermits(ctx, 1); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("AddPermits(1) at 2^53-1 = %v; want ErrInvalidArgument (out of range)", err)
	}
	if left := a14Permits(t, s); left != most {
		t.Fatalf("after refused requests: %d permits; want %d", left, most)
	}
}

// Fixed (review 14: counts are bounded by ±(2^53-1), in Go and in the scripts). Was: the same loss of
// precision in AddPermits and Release: AddPermits(2^53+1) on an
// unset semaphore adds 2^53 (and says so), and Release(MaxInt64) fails with an untyped Redis error
// ("value is not an integer") where bad input should be ErrInvalidArgument (or be applied exactly).
func TestAttack14_AddAndReleaseAbove2p53(t *testing.T) {
	c, _, _ := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s := c.Semaphore("bigadd")
	want := int64(1)<<53 + 1
	n, err := s.AddPermits(ctx, want)
	if got := a14Permits(t, s); err == nil && (n != want || got != want) {
		t.Errorf("AddPermits(2^53+1) on 0 = %d, nil, %d available; want %d (or ErrInvalidArgument)", n, got, want)
	} else if err != nil && !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("AddPermits(2^53+1) = %v; want exact or ErrInvalidArgument", err)
	}
	r := c.Semaphore("bigrel")
	if err := r.Release(ctx, math.MaxInt64); err != nil && !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Errorf("Release(MaxInt64) = %v; want it applied or ErrInvalidArgument", err)
	} else if got := a14Permits(t, r); err == nil && got != math.MaxInt64 {
		t.Errorf("Release(MaxInt64) on 0 left %d", got)
	}
}

// PASSING. No goroutine outlives its Client: waits ended by ctx, by WithWait and by Close, waits
// served by a release, then Close: the goroutine count returns to what it was.
func TestAttack14_NoGoroutineLeak(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	func() {
		rdb := srv.Client(t)
		defer rdb.Close()
		c, err := redisson.New(rdb)
		if err != nil {
			t.Fatal(err)
		}
		s := c.Semaphore("leak")
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_ = s.Acquire(wctx, 5)
		wcancel()
		_, _ = s.TryAcquire(ctx, 5, redisson.WithWait(100*time.Millisecond))
		got := make(chan error, 2)
		go func() { got <- s.Acquire(ctx, 2) }()
		semWaiting(t, c, "leak", 1)
		if err := s.Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := regressWait(t, got, 10*time.Second, "the served wait"); err != nil {
			t.Fatal(err)
		}
		go func() { got <- s.Acquire(ctx, 1) }()
		semWaiting(t, c, "leak", 1)
		_ = c.Close()
		if err := regressWait(t, got, 10*time.Second, "the closed wait"); !errors.Is(err, redisson.ErrClosed) {
			t.Fatalf("wait ended by Close = %v", err)
		}
	}()
	eventually(t, 10*time.Second, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= base })
}

// Fixed (review 14: digits only). Was: a STRING that Lua's tonumber reads but Redis's integers do not ("1e3", "0x10",
// " 7", "3.0") is taken for a permit count by the scripts and for a wrong type by AvailablePermits.
//
// Expected: the semaphore's name holding a value that is not a permit count is another kind of
// object: every call fails with ErrWrongType and leaves it unchanged (as AvailablePermits reports).
// Actual: sem_permits accepts it; then INCRBY/DECRBY fail with "ERR value is not an integer" (an
// untyped error), and TrySetPermits reports (false, nil) as if a count were set (and wakes waiters
// for 1000 permits that do not exist).
func TestAttack14_NonIntegerStringValue(t *testing.T) {
	c, admin, _ := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var bad []string
	for _, v := range []string{"1e3", "0x10", "3.0"} {
		name := "str" + v
		s := c.Semaphore(name)
		key := "{" + name + "}"
		if err := admin.Set(ctx, key, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AvailablePermits(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%q: AvailablePermits = %v; want ErrWrongType", v, err)
		}
		calls := map[string]error{
			"Release(1)":       s.Release(ctx, 1),
			"TryAcquire(1)":    func() error { _, err := s.TryAcquire(ctx, 1); return err }(),
			"AddPermits(1)":    func() error { _, err := s.AddPermits(ctx, 1); return err }(),
			"DrainPermits":     func() error { _, err := s.DrainPermits(ctx); return err }(),
			"TrySetPermits(1)": func() error { _, err := s.TrySetPermits(ctx, 1); return err }(),
		}
		for what, err := range calls {
			if !errors.Is(err, redisson.ErrWrongType) {
				bad = append(bad, v+": "+what+" = "+errString(err))
			}
		}
		if got := admin.Get(ctx, key).Val(); got != v {
			t.Errorf("%q changed to %q", v, got)
		}
	}
	for _, b := range bad {
		t.Errorf("%s; want ErrWrongType", b)
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// Fixed (review 14: an attempt returns when the registration of a waiter ahead lapses, as its retry
// time). Was (bounded by the waiter's own heartbeat): a dead waiter at the head with a short
// waiter timeout holds up a live waiter of another Client (longer waiter timeout, long re-poll)
// long after the dead waiter's deadline: nothing wakes the live waiter when the reservation ends.
//
// Scenario: 3 permits. D (a Client with a 300ms waiter timeout, whose process died) waits for 5 at
// the head of the queue. B (waiter timeout 30s, so heartbeats every 5s; re-poll 1h) waits for 1:
// 3 − 5 < 1, so B is held up by D's reservation. D's deadline passes 300ms later.
// Expected: "a waiter whose process died stops holding others up after the waiter timeout": B gets
// its permit soon after D's deadline (say within 2s).
// Actual: no script runs when D's deadline passes, B's attempts answer no retry time (Retry: -1),
// so B sleeps until its next heartbeat (≈5s; 10 min with a 1h waiter timeout).
// Fix: sem_acquire.lua could return the earliest deadline of the waiters ahead, and the attempt set
// Outcome.Retry to it, so the waiter re-tries when the reservation ahead can lapse.
func TestAttack14_DeadHeadWaiterShortTimeoutHoldsUpOthers(t *testing.T) {
	_, admin, _ := setup(t)
	srvC := admin
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const name = "deadhead"
	b := newClient(t, srvC, redisson.WithRepollInterval(time.Hour), redisson.WithWaiterTimeout(30*time.Second))
	s := b.Semaphore(name)
	if ok, err := s.TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatal(ok, err)
	}
	// D, registered as sem_acquire.lua registers a waiter of a Client with a 300ms waiter timeout.
	tm, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	now := tm.UnixMilli()
	seq := now * 1000
	waiters := "{" + name + "}:~sw"
	if err := admin.HSet(ctx, waiters, "seq", seq+1, "deadclient:1",
		strconv.FormatInt(seq+1, 10)+"|5|"+strconv.FormatInt(now+300, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := make(chan error, 1)
	go func() { got <- s.Acquire(ctx, 1) }()
	semWaiting(t, b, name, 2)
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("B acquired %v after it started waiting (D's deadline 300ms)", time.Since(start))
	case <-time.After(2500 * time.Millisecond):
		t.Fatalf("B still held up 2.5s after it started waiting, behind a dead head whose deadline was 300ms: " +
			"nothing wakes it when the reservation ahead lapses (it waits for its next heartbeat, about 10s here)")
	}
}

// PASSING. A release wakes exactly the waiters that can proceed: 4 waiters for 1 (on 4 Clients,
// re-polls and heartbeats an hour apart), Release(2): exactly 2 attempts follow and 2 acquire; the
// other 2 make no attempt. Then Release(2) lets the other 2 in.
func TestAttack14_ReleaseWakesOnlyThoseThatFit(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const name = "wakefew"
	var attempts atomic.Int64
	counter := &a14Counter{match: a14SemAcquire("", "w"), n: &attempts}
	chk := newClient(t, admin)
	got := make(chan error, 4)
	for range 4 {
		rdb := srv.Client(t)
		rdb.AddHook(counter)
		s := newClient(t, rdb, a14Quiet()...).Semaphore(name)
		go func() { got <- s.Acquire(ctx, 1) }()
	}
	semWaiting(t, chk, name, 4)
	// Each waiter may try once more when its subscription is confirmed: wait until they all sleep.
	for last := int64(-1); attempts.Load() != last; {
		last = attempts.Load()
		time.Sleep(300 * time.Millisecond) // quiescence: no attempt for 300ms
	}
	attempts.Store(0)
	if err := chk.Semaphore(name).Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := regressWait(t, got, 10*time.Second, "a woken waiter"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // absence check: no further attempt
	if n := attempts.Load(); n != 2 {
		t.Fatalf("Release(2) with 4 waiters for 1: %d attempts; want 2 (only those that fit woken)", n)
	}
	select {
	case err := <-got:
		t.Fatalf("a third waiter returned with no permit left: %v", err)
	default:
	}
	if err := chk.Semaphore(name).Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := regressWait(t, got, 10*time.Second, "the remaining waiters"); err != nil {
			t.Fatal(err)
		}
	}
	if n := a14Permits(t, chk.Semaphore(name)); n != 0 {
		t.Fatalf("%d permits left; want 0", n)
	}
}

type a14Counter struct {
	match func(a []string) bool
	n     *atomic.Int64
}

func (h *a14Counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *a14Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *a14Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		a := make([]string, len(args))
		for i, v := range args {
			a[i] = fmt.Sprint(v)
		}
		if h.match(a) && a[0] == "evalsha" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// PASSING. Negative permits and a drain with a waiter: W waits for 2 (1 available); DrainPermits
// takes the 1; AddPermits(-2) makes −2; three Release(1) bring 1 (W must not get in); a fourth
// brings 2 and wakes W (re-polls and heartbeats an hour apart: the message is needed).
func TestAttack14_NegativePermitsAndDrainWithWaiter(t *testing.T) {
	c, admin, _ := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const name = "negdrain"
	s := c.Semaphore(name)
	w := newClient(t, admin, a14Quiet()...).Semaphore(name)
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- w.Acquire(ctx, 2) }()
	semWaiting(t, c, name, 1)
	if n, err := s.DrainPermits(ctx); err != nil || n != 1 {
		t.Fatalf("DrainPermits = %d, %v; want 1", n, err)
	}
	if n, err := s.AddPermits(ctx, -2); err != nil || n != -2 {
		t.Fatalf("AddPermits(-2) = %d, %v; want -2", n, err)
	}
	if ok, err := s.TryAcquire(ctx, 1); err != nil || ok {
		t.Fatalf("TryAcquire at -2 = %v, %v", ok, err)
	}
	for range 3 {
		if err := s.Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-got:
		t.Fatalf("W (wants 2) returned with 1 available: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := regressWait(t, got, 10*time.Second, "W woken by the fourth release"); err != nil {
		t.Fatal(err)
	}
	if n := a14Permits(t, s); n != 0 {
		t.Fatalf("%d permits at the end; want 0", n)
	}
}

// PASSING. A large waiter is not starved by newcomers: W waits for 3 with 2 available; 50
// TryAcquire(1) newcomers (and one with WithWait) all fail; Release(1) lets W in.
func TestAttack14_NewcomersDoNotPassReservation(t *testing.T) {
	c, admin, _ := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const name = "starve"
	s := c.Semaphore(name)
	if _, err := s.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- newClient(t, admin).Semaphore(name).Acquire(ctx, 3) }()
	semWaiting(t, c, name, 1)
	o := newClient(t, admin).Semaphore(name)
	for i := range 50 {
		if ok, err := o.TryAcquire(ctx, 1); err != nil || ok {
			t.Fatalf("newcomer %d TryAcquire(1) past a waiter for 3 = %v, %v", i, ok, err)
		}
	}
	if ok, err := o.TryAcquire(ctx, 1, redisson.WithWait(100*time.Millisecond)); err != nil || ok {
		t.Fatalf("newcomer with a wait bound = %v, %v", ok, err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := regressWait(t, got, 10*time.Second, "the waiter for 3"); err != nil {
		t.Fatal(err)
	}
	if n := a14Permits(t, s); n != 0 {
		t.Fatalf("%d permits left; want 0", n)
	}
	if n := a14Waiters(t, c, name); n != 0 {
		t.Fatalf("%d waiters left; want 0", n)
	}
}

// PASSING (accounting under faults). 2 permits, 6 goroutines on 3 Clients acquire/release for 4s
// while every ~80ms a random command or pub/sub connection is killed (CLIENT KILL): never more than
// 2 holders; a failed Acquire took nothing; at the end the permits are 2 less any Release whose
// outcome is unknown (an error), and no waiter is left.
func TestAttack14_AccountingUnderConnectionKills(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const name = "kills"
	chk := newClient(t, admin)
	if ok, err := chk.Semaphore(name).TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatal(ok, err)
	}
	var inside, most, acq, acqErr, relErr atomic.Int64
	stop := time.Now().Add(4 * time.Second)
	var wg sync.WaitGroup
	for range 3 {
		c := newClient(t, srv.Client(t), redisson.WithRepollInterval(200*time.Millisecond))
		for range 2 {
			s := c.Semaphore(name)
			spawn(&wg, func() {
				for time.Now().Before(stop) {
					actx, acancel := context.WithTimeout(ctx, time.Second)
					err := s.Acquire(actx, 1)
					acancel()
					if err != nil {
						acqErr.Add(1)
						continue
					}
					n := inside.Add(1)
					for {
						m := most.Load()
						if n <= m || most.CompareAndSwap(m, n) {
							break
						}
					}
					acq.Add(1)
					time.Sleep(time.Millisecond)
					inside.Add(-1)
					if err := s.Release(ctx, 1); err != nil {
						relErr.Add(1)
					}
				}
			})
		}
	}
	killer := make(chan struct{})
	spawn(&wg, func() {
		for time.Now().Before(stop) {
			typ := "normal"
			if rand.IntN(3) == 0 {
				typ = "pubsub"
			}
			_ = admin.Do(ctx, "CLIENT", "KILL", "TYPE", typ, "SKIPME", "yes").Err()
			select {
			case <-time.After(time.Duration(40+rand.IntN(80)) * time.Millisecond):
			case <-killer:
				return
			}
		}
	})
	wg.Wait()
	close(killer)
	t.Logf("acquisitions %d, failed acquisitions %d, failed releases %d, most inside %d",
		acq.Load(), acqErr.Load(), relErr.Load(), most.Load())
	if most.Load() > 2 {
		t.Fatalf("%d holders at once with 2 permits", most.Load())
	}
	eventually(t, 10*time.Second, "no waiter left", func() bool { return a14Waiters(t, chk, name) == 0 })
	n := a14Permits(t, chk.Semaphore(name))
	if n > 2 || n < 2-relErr.Load() {
		t.Fatalf("%d permits at the end; want 2 (less up to %d releases that failed)", n, relErr.Load())
	}
	if acq.Load() == 0 {
		t.Fatal("no acquisition: the test proved nothing")
	}
}

// PASSING. Client.Close during a wait: Acquire fails with ErrClosed, the waiter leaves the queue
// and the permits are unchanged; a waiter behind it on another Client is then let through at once.
func TestAttack14_CloseDuringWait(t *testing.T) {
	c, admin, _ := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const name = "closewait"
	s := c.Semaphore(name)
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	wc, err := redisson.New(admin, a14Quiet()...)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- wc.Semaphore(name).Acquire(ctx, 2) }()
	semWaiting(t, c, name, 1)
	behind := make(chan error, 1)
	go func() { behind <- newClient(t, admin, a14Quiet()...).Semaphore(name).Acquire(ctx, 1) }()
	semWaiting(t, c, name, 2)
	_ = wc.Close()
	if err := regressWait(t, got, 10*time.Second, "the closed wait"); !errors.Is(err, redisson.ErrClosed) {
		t.Fatalf("Acquire ended by Close = %v; want ErrClosed", err)
	}
	if err := regressWait(t, behind, 5*time.Second, "the waiter behind the closed one"); err != nil {
		t.Fatal(err)
	}
	if n := a14Permits(t, s); n != 0 {
		t.Fatalf("%d permits; want 0 (1, taken by the waiter behind)", n)
	}
	if n := a14Waiters(t, c, name); n != 0 {
		t.Fatalf("%d waiters left; want 0", n)
	}
}

// PASSING. Replica-acknowledged mode with the replication link cut: TryAcquire fails with
// ErrNotReplicated and leaves the permits on the master; Release reports ErrNotReplicated and was
// applied on the master.
func TestAttack14_ReplicaAcksCutLink(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c := newClient(t, r.Master.Client(t), redisson.WithReplicaAcks(1, 150*time.Millisecond))
	s := c.Semaphore("acked")
	if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits with the link up = %v, %v", ok, err)
	}
	r.Cut()
	ok, err := s.TryAcquire(ctx, 1)
	if ok || !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("TryAcquire across a cut link = %v, %v; want false, ErrNotReplicated", ok, err)
	}
	if n := a14Permits(t, s); n != 2 {
		t.Fatalf("after the unacknowledged acquisition: %d permits on the master; want 2 (given back)", n)
	}
	if err := s.Release(ctx, 1); !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("Release across a cut link = %v; want ErrNotReplicated", err)
	}
	if n := a14Permits(t, s); n != 3 {
		t.Fatalf("after the unacknowledged release: %d permits on the master; want 3", n)
	}
}
