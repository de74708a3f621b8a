package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
	"github.com/redis/go-redis/v9"
)

// With WithAutoPipelining, the concurrent commands of one Client's goroutines go through go-redis's
// pipeliner, and every lock kind still has one owner at a time, a Semaphore no more holders than
// permits, and nothing is left held once every goroutine is done.
func TestAutoPipeliningKeepsExclusion(t *testing.T) {
	t.Parallel()
	c, rdb, _ := setup(t, redisson.WithAutoPipelining(true))
	ctx := t.Context()
	const goroutines, cycles = 16, 30
	kinds := []string{"Lock", "FairLock", "FencedLock", "SpinLock", "ReadWriteLock"}
	sem := c.Semaphore("piped-sem")
	if _, err := sem.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var inside [6]atomic.Int32 // per kind; the last one the Semaphore's holders
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range cycles {
				k := (g + i) % (len(kinds) + 1)
				if k == len(kinds) {
					if err := sem.Acquire(ctx, 1); err != nil {
						t.Errorf("semaphore: %v", err)
						return
					}
					if n := inside[k].Add(1); n > 2 {
						t.Errorf("semaphore: %d holders of 2 permits", n)
					}
					inside[k].Add(-1)
					if err := sem.Release(ctx, 1); err != nil {
						t.Errorf("semaphore release: %v", err)
						return
					}
					continue
				}
				h, err := lockOf(c, kinds[k], "piped-"+kinds[k]).Lock(ctx)
				if err != nil {
					t.Errorf("%s: %v", kinds[k], err)
					return
				}
				if n := inside[k].Add(1); n > 1 {
					t.Errorf("%s: %d owners at once", kinds[k], n)
				}
				inside[k].Add(-1)
				if err := h.Unlock(context.WithoutCancel(ctx)); err != nil {
					t.Errorf("%s unlock: %v", kinds[k], err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if redisson.Piped(c) == 0 {
		t.Fatal("no command went through the pipeliner")
	}
	for _, kind := range kinds {
		if n, err := rdb.Exists(ctx, redisson.LockKeyOf(c, "piped-"+kind)).Result(); err != nil || n != 0 {
			t.Errorf("%s still held after every goroutine is done: %v, %v", kind, n, err)
		}
	}
	if n, err := sem.AvailablePermits(ctx); err != nil || n != 2 {
		t.Errorf("semaphore: %d permits available after every goroutine is done, want 2 (%v)", n, err)
	}
}

// The pipeliner a WithAutoPipelining Client uses is rdb's shared AsyncAutoPipeline, which any other
// user of rdb may Close (go-redis's own examples do): rdb then builds a fresh one on its next
// AsyncAutoPipeline call, and rdb itself keeps working. The Client's calls must keep working too,
// and not fail (as if Redis could not be reached) whenever two of them happen to overlap.
func TestAutoPipeliningOutlivesTheSharedPipelinerBeingClosed(t *testing.T) {
	t.Parallel()
	c, rdb, _ := setup(t, redisson.WithAutoPipelining(true))
	ctx := t.Context()
	ap, err := rdb.AsyncAutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	if err := ap.Close(); err != nil { // another user of rdb is done with its pipeliner
		t.Fatal(err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("rdb after its pipeliner was closed: %v", err)
	}
	const goroutines, cycles = 16, 40
	var failures atomic.Int32
	var first atomic.Value
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := c.Lock(fmt.Sprintf("closed-ap-%d", g))
			for range cycles {
				h, err := l.Lock(ctx)
				if err != nil {
					failures.Add(1)
					first.CompareAndSwap(nil, err.Error())
					continue
				}
				if err := h.Unlock(context.WithoutCancel(ctx)); err != nil {
					failures.Add(1)
					first.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d calls failed once rdb's shared pipeliner was closed (rdb itself works); first: %v",
			n, 2*goroutines*cycles, first.Load())
	}
}

// A pipelined acquisition whose context ends while it is queued behind a batch in flight is left to
// the pipeliner, which writes it once that batch is done: possibly long after the call returned and
// after the undo's own repeats. Here the batch ahead of it is held on the network until the go-redis
// ReadTimeout (6s, longer than the undo's repeats) fails it; the queued SET NX of a TryLock whose
// context had ended long before is then written and may take the lock for an owner that is done.
// The undo is repeated once that batch has ended (see Client.repeat), so the lock is freed at once,
// not held for a whole lease with nobody to renew or release it.
func TestPipelinedAcquireQueuedPastItsContextIsUndoneOnceWritten(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, _ := proxiedClient(t, srv, p, func(o *redis.Options) { o.ReadTimeout = 6 * time.Second })
	c := newClient(t, rdb, redisson.WithAutoPipelining(true))
	warmUpScripts(t, c)
	ctx := t.Context()
	start := time.Now()
	p.HoldRequests(2)
	// Two counter increments (nothing to undo) keep a command of the Client out: the first goes
	// straight to a connection, the second (another is out) through the pipeliner, where its batch
	// holds the pipeliner's one batch permit. Both are held on the network.
	early, cancelEarly := context.WithDeadline(ctx, start.Add(400*time.Millisecond))
	defer cancelEarly()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = c.AtomicLong("late-n0").Add(early, 1) }()
	eventually(t, 2*time.Second, "the first increment held", func() bool { return p.Held() == 1 })
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = c.AtomicLong("late-n1").Add(early, 1) }()
	eventually(t, 2*time.Second, "the pipelined increment held", func() bool { return p.Held() == 2 })
	if redisson.Piped(c) == 0 {
		t.Fatal("the second increment did not go through the pipeliner")
	}
	// The TryLock goes through the pipeliner too, queued behind the held batch; its context ends
	// after the increments' (so that no other command of the Client is out by then).
	l := c.Lock("late-acquire")
	tryCtx, cancelTry := context.WithDeadline(ctx, start.Add(700*time.Millisecond))
	defer cancelTry()
	if h, err := l.TryLock(tryCtx); err == nil {
		t.Fatalf("TryLock acquired the lock while its command was queued behind a held batch (%v)", h)
	}
	returned := time.Since(start)
	wg.Wait()
	key := redisson.LockKeyOf(c, "late-acquire")
	// The held batch fails at 6s; the queued SET NX may be written then, and take the lock for the
	// done owner: the undo, repeated once the batch has ended, must free it at once (its first
	// repeat comes 250ms after; 2s is the slack). Watch until well after.
	deadline := start.Add(9 * time.Second)
	var seen time.Time
	for time.Now().Before(deadline) {
		n, err := admin.Exists(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case n == 1 && seen.IsZero():
			seen = time.Now()
			t.Logf("the queued SET NX took the lock %v after the TryLock returned (at %v)", seen.Sub(start)-returned, returned)
		case n == 1 && time.Since(seen) > 2*time.Second:
			ttl := admin.PTTL(ctx, key).Val()
			t.Fatalf("the lock taken by the queued SET NX %v after the TryLock returned (at %v) is still held %v later: "+
				"held for a done owner, TTL %v, nobody to renew or release it", seen.Sub(start)-returned, returned, time.Since(seen), ttl)
		case n == 0 && !seen.IsZero():
			t.Logf("freed %v after it was taken", time.Since(seen))
			seen = time.Time{}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !seen.IsZero() {
		t.Fatalf("the lock taken by the queued SET NX is still held at the end (taken %v ago)", time.Since(seen))
	}
}

// WithAutoPipelining over a go-redis client without a ReadTimeout is refused: nothing would bound
// how long the commands queued behind a batch held by a hung server wait to be written.
func TestAutoPipeliningNeedsAReadTimeout(t *testing.T) {
	t.Parallel()
	for _, rt := range []time.Duration{-1, -2} {
		rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ReadTimeout: rt, ContextTimeoutEnabled: true})
		c, err := redisson.New(rdb, redisson.WithAutoPipelining(true))
		if !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("ReadTimeout %v: New = %v, %v; want ErrInvalidArgument", rt, c, err)
		}
		if c != nil {
			_ = c.Close()
		}
		_ = rdb.Close()
	}
}
