package redisson_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// latchConformance is the CountDownLatch's suite (TestConformance): set only if zero, count down,
// waiters of several Clients released by the last count-down (by its message: re-polls an hour
// apart), re-arm after zero, bad input and wrong types.
func latchConformance() []conformanceCase {
	return []conformanceCase{
		{"count down and wait", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			l := newC().CountDownLatch(name)
			if err := l.Wait(ctx); err != nil {
				t.Fatalf("Wait on a latch never set = %v; want nil at once", err)
			}
			if ok, err := l.TrySetCount(ctx, 2); err != nil || !ok {
				t.Fatalf("TrySetCount = %v, %v", ok, err)
			}
			if ok, err := l.TrySetCount(ctx, 5); err != nil || ok {
				t.Fatalf("second TrySetCount = %v, %v; want false", ok, err)
			}
			done := make(chan error, 6)
			for range 3 {
				c := newC(redisson.WithRepollInterval(time.Hour))
				for range 2 {
					go func() { done <- c.CountDownLatch(name).Wait(ctx) }()
				}
			}
			if n, err := l.CountDown(ctx); err != nil || n != 1 {
				t.Fatalf("CountDown = %d, %v; want 1", n, err)
			}
			select {
			case err := <-done:
				t.Fatalf("a waiter returned (%v) with the count at 1", err)
			case <-time.After(100 * time.Millisecond):
			}
			if n, err := l.Count(ctx); err != nil || n != 1 {
				t.Fatalf("Count = %d, %v; want 1", n, err)
			}
			if n, err := l.CountDown(ctx); err != nil || n != 0 {
				t.Fatalf("last CountDown = %d, %v; want 0", n, err)
			}
			for range 6 {
				if err := recvWithin(t, done, 10*time.Second, "waiters released by the last count-down"); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := l.CountDown(ctx); err != nil || n != 0 {
				t.Fatalf("CountDown at zero = %d, %v; want 0", n, err)
			}
			// Re-armed after zero.
			if ok, err := l.TrySetCount(ctx, 1); err != nil || !ok {
				t.Fatalf("TrySetCount after zero = %v, %v; want true", ok, err)
			}
			wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			if err := l.Wait(wctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Wait on the re-armed latch = %v; want the context's deadline", err)
			}
		}},
		{"bad input", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			l := c.CountDownLatch(name)
			for what, err := range map[string]error{
				"TrySetCount(0)":  func() error { _, err := l.TrySetCount(ctx, 0); return err }(),
				"TrySetCount(-1)": func() error { _, err := l.TrySetCount(ctx, -1); return err }(),
				"nil latch":       (*redisson.CountDownLatch)(nil).Wait(ctx),
				"empty name":      func() error { _, err := c.CountDownLatch("").CountDown(ctx); return err }(),
			} {
				if !errors.Is(err, redisson.ErrInvalidArgument) {
					t.Errorf("%s = %v; want ErrInvalidArgument", what, err)
				}
			}
			if n, err := l.Count(ctx); err != nil || n != 0 {
				t.Fatalf("Count after bad input = %d, %v; want 0 (nothing set)", n, err)
			}
			h, err := c.Lock(name + ":lock").Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer mustUnlock(t, h)
			other := c.CountDownLatch(name + ":lock")
			if _, err := other.CountDown(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("CountDown on a lock's name = %v; want ErrWrongType", err)
			}
			if err := other.Wait(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("Wait on a lock's name = %v; want ErrWrongType", err)
			}
			if _, err := c.Semaphore(name + ":lock").AvailablePermits(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("AvailablePermits on a lock's name = %v; want ErrWrongType", err)
			}
		}},
	}
}

// With re-polls 10 s apart, 50 waiters across 2 processes are all released within 1 s of
// the last count-down, so by its message; the test prints the spread.
func TestCountDownLatchFiftyWaitersTwoProcesses(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	const name = "latch-procs"
	l := newClient(t, rdb).CountDownLatch(name)
	if ok, err := l.TrySetCount(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	child := faultStartChild(t, "latchwait", "GOREDISSON_FAULT_ADDR="+srv.Addr(), "GOREDISSON_FAULT_LOCK="+name)
	mine := make(chan time.Time, 25)
	waiting := latchWaiters(t, ctx, rdb, name, 25, mine)
	child.expect(t, "FAULT-READY", 30*time.Second)
	waiting.Wait()
	at := time.Now()
	if n, err := l.CountDown(ctx); err != nil || n != 0 {
		t.Fatalf("CountDown = %d, %v", n, err)
	}
	var latest time.Duration
	for range 25 {
		latest = max(latest, recvWithin(t, mine, 5*time.Second, "this process's waiters").Sub(at))
	}
	line := child.expect(t, "FAULT-LATCH ", 30*time.Second)
	var theirs int64 // UnixNano of the child's last release
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "FAULT-LATCH ")), &theirs); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	child.wait(t, 30*time.Second)
	t.Logf("this process's 25 waiters released at most %v after the last count-down, the child's %v",
		latest, time.Unix(0, theirs).Sub(at))
	latest = max(latest, time.Unix(0, theirs).Sub(at))
	if latest > time.Second {
		t.Fatalf("the last waiter was released %v after the count-down; want within 1s (by message, not the 10s re-poll)", latest)
	}
}

// latchWaiters starts n goroutines waiting on the latch, on 5 Clients with re-polls 10 s apart; each
// sends the time it was released on done. The returned group is done once every Client has its
// subscription (and its waiters attempted once).
func latchWaiters(t *testing.T, ctx context.Context, rdb *redis.Client, name string, n int, done chan<- time.Time) *sync.WaitGroup {
	var ready sync.WaitGroup
	for range 5 {
		c := newClient(t, rdb, redisson.WithRepollInterval(10*time.Second))
		for range n / 5 {
			go func() {
				if err := c.CountDownLatch(name).Wait(ctx); err != nil {
					t.Error(err)
				}
				done <- time.Now()
			}()
		}
		ready.Add(1)
		go func() {
			defer ready.Done()
			eventually(t, 10*time.Second, "latch waiters subscribed", func() bool { return c.Stats().Subscriptions >= 1 })
		}()
	}
	return &ready
}

// faultHelperLatchWait is the child's share of TestCountDownLatchFiftyWaitersTwoProcesses: 25
// waiters; it prints the time the last was released.
func faultHelperLatchWait(t *testing.T, ctx context.Context, addr, name string) {
	rdb := faultHelperRedis(t, addr)
	done := make(chan time.Time, 25)
	latchWaiters(t, ctx, rdb, name, 25, done).Wait()
	fmt.Println("FAULT-READY")
	var latest time.Time
	for range 25 {
		if at := <-done; at.After(latest) {
			latest = at
		}
	}
	fmt.Printf("FAULT-LATCH %s\n", strconv.FormatInt(latest.UnixNano(), 10))
}

// Waiters are still released when the pub/sub connection is killed while they wait (by the
// resubscription's wake-up, or at the latest by the re-poll).
func TestCountDownLatchPubSubKilled(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	admin := srv.Client(t)
	ctx := t.Context()
	const name = "latch-kill"
	l := newClient(t, rdb).CountDownLatch(name)
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Time, 10)
	latchWaiters(t, ctx, rdb, name, 10, done).Wait()
	if n, err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n == 0 {
		t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v", n, err)
	}
	if _, err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		recvWithin(t, done, 15*time.Second, "waiters released after their pub/sub connections were killed")
	}
}

// latchCall matches a latch.lua call (3 keys, then what, n, publish, channel, record TTL, re-send
// flag, the messages of zero and of a set) of kind what.
func latchCall(what string) func(a []string) bool {
	return func(a []string) bool {
		return len(a) == 14 && (a[0] == "evalsha" || a[0] == "eval") && a[2] == "3" && a[6] == what
	}
}

// Late copies of a latch's TrySetCount and CountDown from a finished round, replayed after the
// latch reached zero or was set again, change nothing: the copy of the set does not arm the latch
// again, and round 1's count-down does not count round 2 down.
func TestCountDownLatchLateCopiesAfterRearmChangeNothing(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := newScriptHook()
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	l := newClient(t, rdb).CountDownLatch("rearm")
	hook.set(latchCall("s"), false)
	if ok, err := l.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	set := hook.last(t)
	hook.set(latchCall("d"), false)
	if n, err := l.CountDown(ctx); n != 0 || err != nil {
		t.Fatal(n, err)
	}
	down := hook.last(t)
	hook.release()
	// Zero: a late copy of the set must not arm it again.
	if err := admin.Do(ctx, set...).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Count(ctx); n != 0 || err != nil {
		t.Fatalf("Count after a late TrySetCount copy = %d, %v; want 0", n, err)
	}
	// Round 2: a late copy of round 1's count-down must not count it down.
	if ok, err := l.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := admin.Do(ctx, down...).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Count(ctx); n != 2 || err != nil {
		t.Fatalf("Count of round 2 after a late count-down copy of round 1 = %d, %v; want 2", n, err)
	}
}

// A stray "*" on the latch channel (an earlier round's message read late) does not release a waiter
// of the current round: it reads the count again and waits on, until the count reaches zero.
func TestCountDownLatchStaleMessageDoesNotReleaseNewRound(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := &aroundHook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	w := newClient(t, rdb, redisson.WithRepollInterval(time.Hour)).CountDownLatch("stale")
	ctl := newClient(t, srv.Client(t)).CountDownLatch("stale")
	if ok, err := ctl.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatal(ok, err)
	}
	polls := make(chan struct{}, 16)
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		err := next()
		if len(a) == 2 && a[0] == "get" && a[1] == "stale" {
			polls <- struct{}{}
		}
		return err
	})
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- w.Wait(wctx) }()
	<-polls
	eventually(t, 5*time.Second, "W subscribed", func() bool {
		return admin.PubSubNumSub(ctx, "{stale}:~lw").Val()["{stale}:~lw"] == 1
	})
	for i := 0; i < 2; i++ {
		admin.Publish(ctx, "{stale}:~lw", "*")
		select {
		case <-polls:
		case err := <-done:
			t.Fatalf("round-2 waiter released by a stray message (count 2): %v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("the stray message did not make W re-read the count")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("round-2 waiter released by a stray message (count 2): %v", err)
	default:
	}
	_, _ = ctl.CountDown(ctx)
	_, _ = ctl.CountDown(ctx)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("W not released after the count reached zero")
	}
}

// A waiter present when the count reaches zero is released even if the latch is set again (as the
// doc offers: it "may be set again to be used once more") before the waiter reads the count: a
// round counter tells Wait that its round ended.
//
// Scenario: count 1; W waits (subscribed, re-polls an hour apart). Another Client counts down to
// zero (one "*" published) and at once sets the count to 1 again; W's reading of the count,
// prompted by the "*", is held back to land after that (in production, the pub/sub delivery and the
// GET round trip are that window). W returns.
func TestCountDownLatchWaiterReleasedDespiteRearm(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := &aroundHook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	w := newClient(t, rdb, redisson.WithRepollInterval(time.Hour)).CountDownLatch("aba")
	ctl := newClient(t, srv.Client(t)).CountDownLatch("aba")
	if ok, err := ctl.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	polls, gate := make(chan struct{}, 16), make(chan struct{})
	var mu sync.Mutex
	n := 0
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		if len(a) == 2 && a[0] == "get" && a[1] == "aba" {
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			polls <- struct{}{}
			if k == 2 {
				select {
				case <-gate:
				case <-time.After(10 * time.Second):
				}
			}
		}
		return next()
	})
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- w.Wait(wctx) }()
	<-polls
	eventually(t, 5*time.Second, "W subscribed", func() bool {
		return admin.PubSubNumSub(ctx, "{aba}:~lw").Val()["{aba}:~lw"] == 1
	})
	if v, err := ctl.CountDown(ctx); v != 0 || err != nil {
		t.Fatal(v, err)
	}
	select {
	case <-polls:
	case <-time.After(5 * time.Second):
		t.Fatal("precondition: the zero message did not make W re-read the count")
	}
	if ok, err := ctl.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	close(gate)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("W, waiting when the count reached zero, not released: the latch was re-armed before W read the count")
	}
	_, _ = ctl.CountDown(ctx)
}

// CountDownLatch.Wait reads the round before the count: Redis does not run a pipeline atomically,
// and a count-down to zero followed by a TrySetCount landing between the two reads must not make
// the waiter take the new round for the one its wait began in (Wait "returns nil once the count ...
// has reached zero since Wait began even if the latch was set again since"). The interleaving is
// forced at the hook: the two reads are run one by one, the other Client's commands between them. W
// returns.
func TestCountDownLatchWaitReadsRoundBeforeCount(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := &aroundHook{}
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
		if len(cmds) != 2 || strings.Join(cmdArgs(cmds[1]), " ") != "get "+name {
			return next()
		}
		reads <- struct{}{}
		first := false
		once.Do(func() { first = true })
		if !first {
			return next()
		}
		// Wait reads the round, then the count: the zero and the re-arm come between.
		copyTo(cmds[0], "{"+name+"}:~lr")
		if v, err := ctl.CountDown(context.Background()); v != 0 || err != nil {
			t.Errorf("CountDown = %d, %v", v, err)
		}
		if ok, err := ctl.TrySetCount(context.Background(), 1); !ok || err != nil {
			t.Errorf("TrySetCount = %v, %v", ok, err)
		}
		copyTo(cmds[1], name)
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

// A round key that is not a counter (a hash, a non-numeric string, or a value at INCR's maximum) is
// checked before any write: TrySetCount fails with ErrWrongType, and the count-down that would
// reach zero either succeeds with the count gone or fails with ErrWrongType with the count still 1;
// it never opens the latch unannounced (no "*", no record) while reporting an error.
func TestCountDownLatchBadRoundKeyChangesNothing(t *testing.T) {
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
		left := admin.Get(ctx, name).Val()
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

// Bad counts are ErrInvalidArgument with nothing written, and a latch key holding a hash, "0" or "-3"
// fails every latch call (Wait, CountDown, TrySetCount, Count) with ErrWrongType and is left
// unchanged.
func TestCountDownLatchWrongTypeAndBadCount(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	l := c.CountDownLatch("lt")
	for _, bad := range []int64{0, -1} {
		if ok, err := l.TrySetCount(ctx, bad); ok || !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("TrySetCount(%d) = %v, %v; want ErrInvalidArgument", bad, ok, err)
		}
	}
	if ex := admin.Exists(ctx, "lt").Val(); ex != 0 {
		t.Errorf("latch key exists after bad TrySetCount")
	}
	for _, setv := range []func(){
		func() { admin.Del(ctx, "lt"); admin.HSet(ctx, "lt", "f", "1") },
		func() { admin.Del(ctx, "lt"); admin.Set(ctx, "lt", "-3", 0) },
		func() { admin.Del(ctx, "lt"); admin.Set(ctx, "lt", "x", 0) },
	} {
		setv()
		before := admin.Dump(ctx, "lt").Val()
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if err := l.Wait(wctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Wait = %v; want ErrWrongType", err)
		}
		cancel()
		if _, err := l.CountDown(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("CountDown = %v; want ErrWrongType", err)
		}
		if _, err := l.TrySetCount(ctx, 3); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("TrySetCount = %v; want ErrWrongType", err)
		}
		if _, err := l.Count(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Count = %v; want ErrWrongType", err)
		}
		if after := admin.Dump(ctx, "lt").Val(); after != before {
			t.Errorf("latch key changed by refused calls")
		}
	}
	// "0" (Java Redisson's trySetCount(0) may store it) is an open latch, as absent is.
	admin.Set(ctx, "lt", "0", 0)
	if err := l.Wait(ctx); err != nil {
		t.Errorf("Wait on \"0\" = %v; want nil at once", err)
	}
	if n, err := l.Count(ctx); n != 0 || err != nil {
		t.Errorf("Count of \"0\" = %d, %v; want 0", n, err)
	}
	if ok, err := l.TrySetCount(ctx, 2); !ok || err != nil {
		t.Errorf("TrySetCount over \"0\" = %v, %v; want true", ok, err)
	}
}

// A CountDown whose reply is lost is re-sent, and the re-sent copy must count down only if the first
// did not. Here the first copy ran, and the copy re-sent at once is slow on the network: it lands
// after the waiter timeout, which is as long as the request's record lives. It must still count
// down once.
func TestCountDownLatchResentCopyLandingLateCountsOnce(t *testing.T) {
	t.Parallel()
	const wt = time.Second
	c, direct, arm := lostReplyThenSlowResend(t, latchCall("d"), wt+wt/2, redisson.WithWaiterTimeout(wt))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	l := c.CountDownLatch("slowcopy")
	if ok, err := l.TrySetCount(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetCount(3) = %v, %v", ok, err)
	}
	arm()
	n, err := l.CountDown(ctx)
	got, cerr := direct.CountDownLatch("slowcopy").Count(ctx)
	if cerr != nil {
		t.Fatal(cerr)
	}
	if got != 2 {
		t.Fatalf("CountDown of 3 (reply lost, the re-sent copy landing %v after it was sent) = %d, %v; the count "+
			"is now %d, want 2 (counted down twice)", wt+wt/2, n, err, got)
	}
}

// TestLatchOnLockNameResentIsWrongType: TrySetCount and CountDown on a name held as a Lock are
// refused with ErrWrongType, also when the refusal's reply is lost and the request re-sent.
func TestLatchOnLockNameResentIsWrongType(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, _ := proxiedClient(t, srv, p)
	c := newClient(t, rdb)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const name = "latch-on-lock-resent"
	if _, err := c.CountDownLatch("latch-on-lock-warm").TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	h, err := newClient(t, srv.Client(t)).Lock(name).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := c.CountDownLatch(name)
	for what, f := range map[string]func() error{
		"TrySetCount": func() error { _, err := l.TrySetCount(ctx, 3); return err },
		"CountDown":   func() error { _, err := l.CountDown(ctx); return err },
	} {
		p.DropReplies(1)
		err := f()
		p.DropReplies(0)
		if !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("%s on a Lock's name, its reply lost and re-sent = %v; want ErrWrongType", what, err)
		}
	}
	mustUnlock(t, h)
}

// A CountDown whose copy ran on Redis but whose reply never came back on a connection that stayed
// open is re-sent after the go-redis ReadTimeout (1s here), Redis reachable all along. With a waiter
// timeout shorter than that (200ms), a record that lived only the waiter timeout was gone by then,
// and the call reported an unknown outcome for a count down made once. The record outlives twice the
// ReadTimeout, as a Semaphore's: the call must report the count down it made, and count once.
func TestCountDownReplyLostForTheReadTimeoutIsAnswered(t *testing.T) {
	t.Parallel()
	const readTimeout, wt = time.Second, 200 * time.Millisecond
	srv, c, hook := hookedReadTimeoutClient(t, readTimeout, redisson.WithWaiterTimeout(wt))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const name = "countdownreadtimeout"
	l := c.CountDownLatch(name)
	if ok, err := l.TrySetCount(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	countDown := func(a []string) bool {
		return len(a) > 6 && (a[0] == "evalsha" || a[0] == "eval") && a[2] == "3" && a[6] == "d"
	}
	loseFirstReplyForReadTimeout(t, hook, countDown, readTimeout) // the count down runs
	n, err := l.CountDown(ctx)
	hook.setCmd(nil)
	if got, cerr := newClient(t, srv.Client(t)).CountDownLatch(name).Count(ctx); cerr != nil || got != 2 {
		t.Fatalf("CountDown from 3 whose reply was lost for the ReadTimeout = %d, %v: count %d, %v; want 2 (counted once)", n, err, got, cerr)
	}
	if err != nil || n != 2 {
		t.Fatalf("CountDown whose copy ran and whose reply was lost for the ReadTimeout (%v, waiter timeout %v), "+
			"re-sent with Redis reachable = %d, %v; want 2, nil (it counted down, once)", readTimeout, wt, n, err)
	}
}
