package javadouble

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Eight threads of two Clients share 3 permits: never more than 3 inside, and every blocked
// Acquire is woken by releases (blocking Acquire has no poll fallback, so a lost wake-up hangs).
func TestSemaphoreBoundsHolders(t *testing.T) {
	forTopologies(t, both, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxFor(t, 30*time.Second)
		a, b := newDouble(t, rdb), newDouble(t, rdb)
		name := keyName(t, "sem")
		if ok, err := a.Semaphore(name).TrySetPermits(ctx, 3); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if ok, _ := b.Semaphore(name).TrySetPermits(ctx, 5); ok {
			t.Fatal("TrySetPermits over an existing count")
		}
		var inside, most atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			s := []*Client{a, b}[i%2].Semaphore(name)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 15 {
					if err := s.Acquire(ctx, 1); err != nil {
						errs <- err
						return
					}
					n := inside.Add(1)
					for {
						m := most.Load()
						if n <= m || most.CompareAndSwap(m, n) {
							break
						}
					}
					time.Sleep(time.Millisecond)
					inside.Add(-1)
					if err := s.Release(ctx, 1); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if m := most.Load(); m > 3 {
			t.Fatalf("%d holders at once, want at most 3", m)
		}
		if n, _ := a.Semaphore(name).AvailablePermits(ctx); n != 3 {
			t.Fatalf("%d permits at the end, want 3", n)
		}
	})
}

func TestSemaphoreTryAcquireWokenByRelease(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 30*time.Second)
	a, b := newDouble(t, rdb), newDouble(t, rdb)
	name := keyName(t, "sem")
	s := a.Semaphore(name)
	if ok, _ := s.TryAcquire(ctx, 1, 0); ok {
		t.Fatal("acquired from a missing key")
	}
	if err := s.AddPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.TryAcquire(ctx, 2, 0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	got := make(chan error, 1)
	go func() {
		ok, err := b.Semaphore(name).TryAcquire(ctx, 2, 20*time.Second)
		if err == nil && !ok {
			err = errors.New("not woken")
		}
		got <- err
	}()
	eventually(t, 5*time.Second, "the waiter's subscription", func() bool {
		return subscribers(t, rdb, "redisson_sc:{"+name+"}") == 1
	})
	if err := s.Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DrainPermits(ctx); n != 5 || err != nil {
		t.Fatal(n, err)
	}
	if err := s.Acquire(ctx, -1); !errors.Is(err, ErrIllegalArgument) {
		t.Fatalf("negative permits: %v", err)
	}
}
