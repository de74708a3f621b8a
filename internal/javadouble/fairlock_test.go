package javadouble

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Threads of two Clients queue one after the other behind a holder; they acquire in queue order.
func TestFairLockFIFOAcrossClients(t *testing.T) {
	forTopologies(t, both, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxFor(t, 30*time.Second)
		a, b := newDouble(t, rdb), newDouble(t, rdb)
		name := keyName(t, "fair")
		queue := "redisson_lock_queue:{" + name + "}"
		if err := a.FairLock(name).Lock(ctx, 100, 0); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order, want []string
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 6 {
			c := []*Client{a, b}[i%2]
			tid := int64(i + 1)
			want = append(want, c.Owner(tid))
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := c.FairLock(name)
				if err := l.Lock(ctx, tid, 0); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				order = append(order, c.Owner(tid))
				mu.Unlock()
				if err := l.Unlock(ctx, tid); err != nil {
					errs <- err
				}
			}()
			eventually(t, 5*time.Second, fmt.Sprintf("waiter %d queued", i), func() bool {
				n, _ := rdb.LLen(ctx, queue).Result()
				return n == int64(i+1)
			})
		}
		if err := a.FairLock(name).Unlock(ctx, 100); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if !slices.Equal(order, want) {
			t.Fatalf("acquired in order\n%v\nwant\n%v", order, want)
		}
		for _, k := range []string{name, queue, "redisson_lock_timeout:{" + name + "}"} {
			if n, _ := rdb.Exists(ctx, k).Result(); n != 0 {
				t.Errorf("%s left behind", k)
			}
		}
	})
}

// A queued waiter's deadline is client clock + PTTL + threadWaitTime; a TryLock that times out
// leaves the queue (acquireFailed) and moves later waiters' deadlines earlier by its wait.
func TestFairLockQueueDeadlinesAndGiveUp(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 20*time.Second)
	a, b := newDouble(t, rdb, FairLockWaitTimeout(time.Minute)), newDouble(t, rdb)
	name := keyName(t, "fair")
	queue, timeouts := "redisson_lock_queue:{"+name+"}", "redisson_lock_timeout:{"+name+"}"
	if err := a.FairLock(name).Lock(ctx, 1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	if ok, err := b.FairLock(name).TryLock(ctx, 1, 300*time.Millisecond, 0); ok || err != nil {
		t.Fatal(ok, err)
	}
	if n, _ := rdb.LLen(ctx, queue).Result(); n != 0 {
		t.Fatalf("queue length %d after a timed-out TryLock, want 0", n)
	}
	got := make(chan error, 1)
	go func() { got <- a.FairLock(name).Lock(ctx, 2, 0) }()
	eventually(t, 5*time.Second, "the waiter queued", func() bool {
		n, _ := rdb.LLen(ctx, queue).Result()
		return n == 1
	})
	score, err := rdb.ZScore(ctx, timeouts, a.Owner(2)).Result()
	if err != nil {
		t.Fatal(err)
	}
	// now + PTTL (≤ 10 s) + fairLockWaitTimeout (1 min)
	if lo, hi := float64(before+60000), float64(time.Now().UnixMilli()+70000); score < lo || score > hi {
		t.Fatalf("deadline %v outside [%v, %v]", score, lo, hi)
	}
	if err := a.FairLock(name).Unlock(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := a.FairLock(name).Unlock(ctx, 2); err != nil {
		t.Fatal(err)
	}
}
