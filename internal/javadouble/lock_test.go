package javadouble

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Two Clients, two threads each, increment a counter kept in Redis under the lock with a plain
// GET/SET (a lost update shows a broken exclusion), and check no two are inside at once.
func TestLockMutualExclusionBetweenClients(t *testing.T) {
	forTopologies(t, both, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxFor(t, 30*time.Second)
		a, b := newDouble(t, rdb), newDouble(t, rdb)
		name, counter := keyName(t, "lock"), keyName(t, "counter")
		const iterations = 40
		var inside atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for i, c := range []*Client{a, a, b, b} {
			wg.Add(1)
			go func(c *Client, tid int64) {
				defer wg.Done()
				l := c.Lock(name)
				for range iterations {
					if err := l.Lock(ctx, tid, 0); err != nil {
						errs <- err
						return
					}
					if inside.Add(1) != 1 {
						errs <- errors.New("two holders at once")
					}
					n, err := rdb.Get(ctx, counter).Int()
					if err != nil && !errors.Is(err, redis.Nil) {
						errs <- err
					}
					if err := rdb.Set(ctx, counter, n+1, 0).Err(); err != nil {
						errs <- err
					}
					inside.Add(-1)
					if err := l.Unlock(ctx, tid); err != nil {
						errs <- err
						return
					}
				}
			}(c, int64(i+1))
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n, _ := rdb.Get(ctx, counter).Int(); n != 4*iterations {
			t.Fatalf("counter %d, want %d", n, 4*iterations)
		}
	})
}

// The waiter's TryLock wait (20 s) is shorter than the holder's lease (60 s), and its sleeps are
// bounded by min(PTTL, remaining wait): only the unlock message can wake it before its wait ends.
func TestLockWaiterWokenByUnlockMessage(t *testing.T) {
	forTopologies(t, both, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxFor(t, 30*time.Second)
		a, b := newDouble(t, rdb), newDouble(t, rdb)
		name := keyName(t, "lock")
		if err := a.Lock(name).Lock(ctx, 1, time.Minute); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			ok, err := b.Lock(name).TryLock(ctx, 1, 20*time.Second, 0)
			if err == nil && !ok {
				err = errors.New("TryLock timed out: the unlock message did not wake it")
			}
			got <- err
		}()
		channel := "redisson_lock__channel:{" + name + "}"
		eventually(t, 10*time.Second, "the waiter's subscription", func() bool { return subscribers(t, rdb, channel) == 1 })
		if err := a.Lock(name).Unlock(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if held, _ := b.Lock(name).IsHeldByThread(ctx, 1); !held {
			t.Fatal("waiter does not hold the lock")
		}
		if err := b.Lock(name).Unlock(ctx, 1); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "the waiter's unsubscribe", func() bool { return subscribers(t, rdb, channel) == 0 })
	})
}

func TestLockReentryAndLayout(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 10*time.Second)
	c, other := newDouble(t, rdb), newDouble(t, rdb)
	name := keyName(t, "lock")
	l := c.Lock(name)
	for range 2 {
		if err := l.Lock(ctx, 5, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	h, err := rdb.HGetAll(ctx, name).Result()
	if err != nil || len(h) != 1 || h[c.ID()+":5"] != "2" {
		t.Fatalf("hash %v %v, want {%s:5: 2}", h, err, c.ID())
	}
	if ok, _ := other.Lock(name).TryLock(ctx, 5, 0, 0); ok {
		t.Fatal("another client's thread 5 acquired a held lock")
	}
	if ok, _ := l.TryLock(ctx, 6, 0, 0); ok {
		t.Fatal("another thread acquired a held lock")
	}
	if err := other.Lock(name).Unlock(ctx, 5); !errors.Is(err, ErrIllegalMonitorState) {
		t.Fatalf("unlock by a non-owner: %v, want ErrIllegalMonitorState", err)
	}
	if err := l.Unlock(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.HoldCount(ctx, 5); n != 1 {
		t.Fatalf("hold count %d after one unlock, want 1", n)
	}
	if ttl, _ := l.RemainTTL(ctx); ttl <= 0 || ttl > 10000 {
		t.Fatalf("TTL %d after a partial unlock, want the 10 s lease", ttl)
	}
	if err := l.Unlock(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if locked, _ := l.IsLocked(ctx); locked {
		t.Fatal("still locked after the last unlock")
	}
	if err := l.Unlock(ctx, 5); !errors.Is(err, ErrIllegalMonitorState) {
		t.Fatalf("unlock of a free lock: %v, want ErrIllegalMonitorState", err)
	}
	if n, _ := rdb.Keys(ctx, "redisson_unlock_latch:{"+name+"}:*").Result(); len(n) != 0 {
		t.Fatalf("unlock latch keys left: %v", n)
	}
}

// A 1 s watchdog keeps a lease-less lock alive for 3 s; after Unlock nothing is renewed any more.
func TestLockWatchdogKeepsLockAlive(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 10*time.Second)
	c := newDouble(t, rdb, WatchdogTimeout(time.Second))
	name := keyName(t, "lock")
	l := c.Lock(name)
	if err := l.Lock(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if held, err := l.IsHeldByThread(ctx, 1); err != nil || !held {
			t.Fatalf("lock lost under the watchdog (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ttl, _ := l.RemainTTL(ctx); ttl <= 0 || ttl > 1000 {
		t.Fatalf("TTL %d, want within the 1 s watchdog timeout", ttl)
	}
	if err := l.Unlock(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.lockTask.mu.Lock()
	n := len(c.lockTask.entries)
	c.lockTask.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d renewal registrations left after unlock", n)
	}
	// A foreign holder under the same field name is never renewed by the stopped task.
	if err := rdb.HSet(ctx, name, c.Owner(1), 1).Err(); err != nil {
		t.Fatal(err)
	}
	rdb.PExpire(ctx, name, 500*time.Millisecond)
	eventually(t, 3*time.Second, "the key to expire without renewal", func() bool {
		n, _ := rdb.Exists(ctx, name).Result()
		return n == 0
	})
}

// A renewal pass finding the owner gone (force unlock elsewhere) de-registers the lock.
func TestLockWatchdogStopsWhenOwnerGone(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 10*time.Second)
	c := newDouble(t, rdb, WatchdogTimeout(600*time.Millisecond))
	name := keyName(t, "lock")
	if err := c.Lock(name).Lock(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, name).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "de-registration", func() bool {
		c.lockTask.mu.Lock()
		defer c.lockTask.mu.Unlock()
		return len(c.lockTask.entries) == 0 && !c.lockTask.running
	})
	if n, _ := rdb.Exists(ctx, name).Result(); n != 0 {
		t.Fatal("the renewal recreated the key")
	}
}

// The unlock script answers a repeat of the same request from its latch: 1, not "not owner".
func TestLockUnlockLatchAnswersRepeat(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 10*time.Second)
	c := newDouble(t, rdb)
	name := keyName(t, "lock")
	l := c.Lock(name)
	if err := l.Lock(ctx, 1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	latch := "redisson_unlock_latch:{" + name + "}:00112233445566778899aabbccddeeff"
	for i := range 2 {
		n, ok, err := l.unlockInner(ctx, 1, latch)
		if err != nil || !ok || n != 1 {
			t.Fatalf("run %d: %d %v %v, want 1", i, n, ok, err)
		}
	}
	ttl, err := rdb.PTTL(ctx, latch).Result()
	if err != nil || ttl < 15*time.Second || ttl > 20*time.Second {
		t.Fatalf("latch TTL %v %v, want (3 s + 1..2 s) × 4", ttl, err)
	}
	if locked, _ := l.IsLocked(ctx); locked {
		t.Fatal("still locked")
	}
}

func TestLockForceUnlockWakesWaiter(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 20*time.Second)
	a, b := newDouble(t, rdb), newDouble(t, rdb)
	name := keyName(t, "lock")
	if err := a.Lock(name).Lock(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- b.Lock(name).Lock(ctx, 2, 5*time.Second) }()
	eventually(t, 5*time.Second, "the waiter's subscription", func() bool {
		return subscribers(t, rdb, "redisson_lock__channel:{"+name+"}") == 1
	})
	if ok, err := b.Lock(name).ForceUnlock(ctx); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Lock(name).HoldCount(ctx, 2); n != 1 {
		t.Fatal("waiter did not acquire after the force unlock")
	}
	a.lockTask.mu.Lock()
	defer a.lockTask.mu.Unlock()
	if len(a.lockTask.entries) != 1 {
		t.Fatal("holder's registration should linger until its renewal finds the owner gone")
	}
}
