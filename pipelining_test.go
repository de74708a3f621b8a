package redisson_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goredisson/redisson"
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
