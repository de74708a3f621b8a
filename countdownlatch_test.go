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

// Issue 9: with re-polls 10 s apart, 50 waiters across 2 processes are all released within 1 s of
// the last count-down, so by its message; the test prints the spread.
func TestCountDownLatchFiftyWaitersTwoProcesses(t *testing.T) {
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
	latest = max(latest, time.Unix(0, theirs).Sub(at))
	t.Logf("50 waiters released at most %v after the last count-down", latest)
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

// Issue 9: waiters are still released when the pub/sub connection is killed while they wait (by the
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
