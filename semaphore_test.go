package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// semaphoreConformance is the Semaphore's suite (TestConformance): permits never exceeded across
// Clients, set-if-unset, add/drain, waiting and wake-up by release, first come first served with
// reservations, an ended wait leaves the semaphore as it was, bad input.
func semaphoreConformance() []conformanceCase {
	return []conformanceCase{
		{"bound", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			if ok, err := newC().Semaphore(name).TrySetPermits(ctx, 3); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			var inside, most, done int32
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 3 {
				s := newC().Semaphore(name)
				for range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 8 {
							if err := s.Acquire(ctx, 1); err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							inside++
							most = max(most, inside)
							mu.Unlock()
							time.Sleep(time.Millisecond)
							mu.Lock()
							inside--
							done++
							mu.Unlock()
							if err := s.Release(ctx, 1); err != nil {
								t.Error(err)
								return
							}
						}
					}()
				}
			}
			wg.Wait()
			if most > 3 || done != 72 {
				t.Fatalf("at most %d holders at once (want ≤ 3), %d of 72 acquisitions", most, done)
			}
			if n, err := newC().Semaphore(name).AvailablePermits(ctx); err != nil || n != 3 {
				t.Fatalf("AvailablePermits at the end = %d, %v; want 3", n, err)
			}
		}},
		{"set add drain", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			s := newC().Semaphore(name)
			if n, err := s.AvailablePermits(ctx); err != nil || n != 0 {
				t.Fatalf("AvailablePermits of an unset semaphore = %d, %v; want 0", n, err)
			}
			if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			if ok, err := s.TrySetPermits(ctx, 9); err != nil || ok {
				t.Fatalf("second TrySetPermits = %v, %v; want false", ok, err)
			}
			if n, err := s.AddPermits(ctx, -2); err != nil || n != 3 {
				t.Fatalf("AddPermits(-2) = %d, %v; want 3", n, err)
			}
			if ok, err := s.TryAcquire(ctx, 4); err != nil || ok {
				t.Fatalf("TryAcquire(4) of 3 = %v, %v; want false", ok, err)
			}
			if ok, err := s.TryAcquire(ctx, 2); err != nil || !ok {
				t.Fatalf("TryAcquire(2) of 3 = %v, %v; want true", ok, err)
			}
			if n, err := s.DrainPermits(ctx); err != nil || n != 1 {
				t.Fatalf("DrainPermits = %d, %v; want 1", n, err)
			}
			if err := s.Release(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if n, err := s.AvailablePermits(ctx); err != nil || n != 2 {
				t.Fatalf("AvailablePermits = %d, %v; want 2", n, err)
			}
		}},
		{"wake by release", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			a := newC().Semaphore(name)
			// Re-polls and heartbeats far apart: only the release's message can wake the waiter.
			b := newC(redisson.WithRepollInterval(time.Hour), redisson.WithWaiterTimeout(time.Hour)).Semaphore(name)
			if _, err := a.TrySetPermits(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if err := a.Acquire(ctx, 2); err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() { got <- b.Acquire(ctx, 2) }()
			semWaiting(t, newC(), name, 1)
			if err := a.Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-got:
				t.Fatalf("B acquired 2 permits with 1 available: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
			if err := a.Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := recvWithin(t, got, 10*time.Second, "B woken by the release"); err != nil {
				t.Fatal(err)
			}
		}},
		{"first come first served", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			s := newC().Semaphore(name)
			big := make(chan error, 1)
			go func() { big <- newC().Semaphore(name).Acquire(ctx, 3) }()
			semWaiting(t, newC(), name, 1)
			small := make(chan error, 1)
			go func() { small <- newC().Semaphore(name).Acquire(ctx, 1) }()
			semWaiting(t, newC(), name, 2)
			if _, err := s.AddPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			select {
			case <-small:
				t.Fatal("a later request for 1 passed an earlier one for 3")
			case <-big:
				t.Fatal("3 permits acquired with 1 available")
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := s.AddPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			if err := recvWithin(t, big, 10*time.Second, "the request for 3"); err != nil {
				t.Fatal(err)
			}
			if err := recvWithin(t, small, 10*time.Second, "the request for 1"); err != nil {
				t.Fatal(err)
			}
			if n, err := s.AvailablePermits(ctx); err != nil || n != 0 {
				t.Fatalf("AvailablePermits = %d, %v; want 0", n, err)
			}
		}},
		{"ended wait", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			s := newC().Semaphore(name)
			if _, err := s.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithCancel(ctx)
			got := make(chan error, 1)
			go func() { got <- newC().Semaphore(name).Acquire(wctx, 2) }()
			semWaiting(t, newC(), name, 1)
			cancel()
			if err := recvWithin(t, got, 10*time.Second, "the cancelled wait"); !errors.Is(err, context.Canceled) || !errors.Is(err, redisson.ErrNotObtained) {
				t.Fatalf("cancelled Acquire = %v; want context.Canceled and ErrNotObtained", err)
			}
			if ok, err := newC().Semaphore(name).TryAcquire(ctx, 2, redisson.WithWait(50*time.Millisecond)); err != nil || ok {
				t.Fatalf("TryAcquire(2) with a wait bound, 1 available = %v, %v; want false, nil", ok, err)
			}
			semWaiting(t, newC(), name, 0)
			if n, err := s.AvailablePermits(ctx); err != nil || n != 1 {
				t.Fatalf("AvailablePermits after ended waits = %d, %v; want 1", n, err)
			}
			// The ended waits hold up nobody: an acquisition of the one permit succeeds at once.
			if ok, err := s.TryAcquire(ctx, 1); err != nil || !ok {
				t.Fatalf("TryAcquire(1) = %v, %v", ok, err)
			}
		}},
		{"bad input", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			s := c.Semaphore(name)
			if _, err := s.TrySetPermits(ctx, 2); err != nil {
				t.Fatal(err)
			}
			for what, err := range map[string]error{
				"Acquire(-1)":         s.Acquire(ctx, -1),
				"Acquire(WithLease)":  s.Acquire(ctx, 1, redisson.WithLease(time.Second)),
				"Release(-1)":         s.Release(ctx, -1),
				"nil semaphore":       (*redisson.Semaphore)(nil).Release(ctx, 1),
				"empty name":          c.Semaphore("").Release(ctx, 1),
				"AddPermits(0)":       func() error { _, err := s.AddPermits(ctx, 0); return err }(),
				"TrySetPermits(-1)":   func() error { _, err := s.TrySetPermits(ctx, -1); return err }(),
				"TryAcquire(-3)":      func() error { _, err := s.TryAcquire(ctx, -3); return err }(),
				"Acquire(nil option)": s.Acquire(ctx, 1, nil),
			} {
				if !errors.Is(err, redisson.ErrInvalidArgument) {
					t.Errorf("%s = %v; want ErrInvalidArgument", what, err)
				}
			}
			if n, err := s.AvailablePermits(ctx); err != nil || n != 2 {
				t.Fatalf("AvailablePermits after bad input = %d, %v; want 2 (unchanged)", n, err)
			}
			// A name used as a lock is not a semaphore, and the reverse.
			h, err := c.Lock(name + ":lock").Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Semaphore(name+":lock").TryAcquire(ctx, 1); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("TryAcquire on a lock's name = %v; want ErrWrongType", err)
			}
			if err := c.Semaphore(name+":lock").Release(ctx, 1); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("Release on a lock's name = %v; want ErrWrongType", err)
			}
			mustUnlock(t, h)
			if _, err := c.Lock(name).TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("TryLock on a semaphore's name = %v; want ErrWrongType", err)
			}
			if n, err := s.AvailablePermits(ctx); err != nil || n != 2 {
				t.Fatalf("AvailablePermits at the end = %d, %v; want 2 (unchanged)", n, err)
			}
		}},
	}
}

// semWaiting waits until want acquisitions wait on the semaphore name, as its waiters hash in Redis
// lists them.
func semWaiting(t *testing.T, c *redisson.Client, name string, want int) {
	t.Helper()
	eventually(t, 10*time.Second, "semaphore waiters", func() bool {
		n, err := redisson.SemaphoreWaiters(t.Context(), c, name)
		return err == nil && n == want
	})
}

// semLoadResult is what one process saw in TestSemaphoreTwoProcesses.
type semLoadResult struct {
	Acquisitions int
	Over         int   // acquisitions that found more than the permits' worth of holders inside
	MostInside   int64 // the most holders inside at once, across both processes
}

// semLoad runs goroutines on 3 Clients of this process until stop, each acquiring one permit of the
// semaphore name and holding it for a millisecond; a Redis counter beside it counts the holders
// inside across processes.
func semLoad(t *testing.T, ctx context.Context, rdb *redis.Client, name string, permits int64, goroutines int, stop time.Time) semLoadResult {
	var mu sync.Mutex
	var res semLoadResult
	var wg sync.WaitGroup
	clients := []*redisson.Client{newClient(t, rdb), newClient(t, rdb), newClient(t, rdb)}
	inside := name + ":inside"
	for g := range goroutines {
		s := clients[g%len(clients)].Semaphore(name)
		spawn(&wg, func() {
			for time.Now().Before(stop) {
				if err := s.Acquire(ctx, 1); err != nil {
					t.Error(err)
					return
				}
				n := rdb.Incr(ctx, inside).Val()
				time.Sleep(time.Millisecond) // the critical section
				rdb.Decr(ctx, inside)
				mu.Lock()
				res.Acquisitions++
				res.MostInside = max(res.MostInside, n)
				if n > permits {
					res.Over++
				}
				mu.Unlock()
				if err := s.Release(ctx, 1); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return res
}

// Issue 9: 3 permits, 12 goroutines across 2 processes for 10 s: never more than 3 holders, 3 seen
// at once, and the permits back to 3 at the end.
func TestSemaphoreTwoProcesses(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	const name = "sem-procs"
	if ok, err := newClient(t, rdb).Semaphore(name).TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	mine, theirs := twoProcesses(t, srv, "semload", name, "FAULT-SEM", 10*time.Second, func(stop time.Time) semLoadResult {
		return semLoad(t, ctx, rdb, name, 3, 6, stop)
	})
	t.Logf("this process %+v; the other %+v", mine, theirs)
	if mine.Over+theirs.Over != 0 {
		t.Fatalf("%d acquisitions found more than 3 holders inside", mine.Over+theirs.Over)
	}
	if max(mine.MostInside, theirs.MostInside) < 3 || mine.Acquisitions == 0 || theirs.Acquisitions == 0 {
		t.Fatalf("most holders at once %d (want 3), acquisitions %d and %d",
			max(mine.MostInside, theirs.MostInside), mine.Acquisitions, theirs.Acquisitions)
	}
	if n, err := newClient(t, rdb).Semaphore(name).AvailablePermits(ctx); err != nil || n != 3 {
		t.Fatalf("AvailablePermits at the end = %d, %v; want 3", n, err)
	}
}

// faultHelperSemLoad is the child's share of TestSemaphoreTwoProcesses: it starts when the parent
// writes the stop time (UnixNano) and prints its result as JSON.
func faultHelperSemLoad(t *testing.T, ctx context.Context, addr, name string, stdin *bufio.Reader) {
	rdb := faultHelperRedis(t, addr)
	childLoad(t, stdin, "FAULT-SEM", func(stop time.Time) semLoadResult { return semLoad(t, ctx, rdb, name, 3, 6, stop) })
}

// Zero permits, as x/sync's semaphore and Redisson allow: Acquire(0), TryAcquire(0) and Release(0)
// succeed at once without sending anything to Redis (here: through a proxy that forwards nothing),
// even with no permits available and a waiter queued; the call's checks still apply (nil handle,
// closed Client, ctx already done, bad options, negative n). A PermitExpirableSemaphore acquires 0
// permits as an empty id list.
func TestSemaphoreZeroPermits(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	px := redistest.NewProxy(t, srv.Addr())
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = px.Addr() }))
	const name = "sem-zero"
	s := c.Semaphore(name)
	p := c.PermitExpirableSemaphore(name)
	// A waiter for the one permit that is not there.
	w := newClient(t, srv.Client(t)).Semaphore(name)
	wctx, stopWaiter := context.WithCancel(ctx)
	defer stopWaiter()
	waitErr := make(chan error, 1)
	go func() { waitErr <- w.Acquire(wctx, 1) }()
	semWaiting(t, newClient(t, srv.Client(t)), name, 1)

	px.Blackhole(true) // anything sent now would hang until the call's deadline
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Acquire(cctx, 0); err != nil {
		t.Errorf("Acquire(0) = %v; want nil", err)
	}
	if ok, err := s.TryAcquire(cctx, 0); err != nil || !ok {
		t.Errorf("TryAcquire(0) = %v, %v; want true, nil", ok, err)
	}
	if err := s.Release(cctx, 0); err != nil {
		t.Errorf("Release(0) = %v; want nil", err)
	}
	if ids, err := p.Acquire(cctx, 0); err != nil || ids == nil || len(ids) != 0 {
		t.Errorf("PermitExpirableSemaphore.Acquire(0) = %#v, %v; want an empty list, nil", ids, err)
	}
	if ids, err := p.TryAcquire(cctx, 0, redisson.WithLease(time.Second)); err != nil || ids == nil || len(ids) != 0 {
		t.Errorf("PermitExpirableSemaphore.TryAcquire(0) = %#v, %v; want an empty list, nil", ids, err)
	}
	if h, err := p.AcquireHeld(cctx, 0); err != nil || len(h.IDs()) != 0 || h.Context().Err() != nil {
		t.Errorf("AcquireHeld(0) = %v, %v; want no ids and a live context", h, err)
	}
	if cctx.Err() != nil {
		t.Fatalf("the calls of 0 permits waited for Redis")
	}

	// The checks still apply.
	done, cancelDone := context.WithCancel(ctx)
	cancelDone()
	var nilCtx context.Context // the bad input under test
	for what, err := range map[string]error{
		"nil handle Acquire(0)":     (*redisson.Semaphore)(nil).Acquire(ctx, 0),
		"nil handle Release(0)":     (*redisson.Semaphore)(nil).Release(ctx, 0),
		"nil context":               s.Acquire(nilCtx, 0),
		"Acquire(0, WithLease)":     s.Acquire(ctx, 0, redisson.WithLease(time.Second)),
		"Acquire(-1)":               s.Acquire(ctx, -1),
		"Release(-1)":               s.Release(ctx, -1),
		"TryAcquire(-1)":            func() error { _, err := s.TryAcquire(ctx, -1); return err }(),
		"permit Acquire(-1)":        func() error { _, err := p.Acquire(ctx, -1); return err }(),
		"nil permit handle Acquire": func() error { _, err := (*redisson.PermitExpirableSemaphore)(nil).Acquire(ctx, 0); return err }(),
	} {
		if !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("%s = %v; want ErrInvalidArgument", what, err)
		}
	}
	if err := s.Acquire(done, 0); !errors.Is(err, context.Canceled) || !errors.Is(err, redisson.ErrNotObtained) {
		t.Errorf("Acquire(0) with a cancelled context = %v; want context.Canceled, ErrNotObtained", err)
	}
	if ok, err := s.TryAcquire(done, 0); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("TryAcquire(0) with a cancelled context = %v, %v; want false, context.Canceled", ok, err)
	}
	px.Blackhole(false)
	closed := newClient(t, srv.Client(t))
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	cs := closed.Semaphore(name)
	if err := cs.Acquire(ctx, 0); !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("Acquire(0) on a closed Client = %v; want ErrClosed", err)
	}
	if ok, err := cs.TryAcquire(ctx, 0); ok || !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("TryAcquire(0) on a closed Client = %v, %v; want false, ErrClosed", ok, err)
	}
	if err := cs.Release(ctx, 0); !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("Release(0) on a closed Client = %v; want ErrClosed", err)
	}
	if _, err := closed.PermitExpirableSemaphore(name).Acquire(ctx, 0); !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("PermitExpirableSemaphore.Acquire(0) on a closed Client = %v; want ErrClosed", err)
	}

	// Nothing changed: the waiter still waits, and gets the permit a release brings.
	if n, err := w.AvailablePermits(ctx); err != nil || n != 0 {
		t.Errorf("AvailablePermits = %d, %v; want 0", n, err)
	}
	if err := w.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-waitErr; err != nil {
		t.Fatalf("the waiter's Acquire = %v", err)
	}
}

// A WithWait bound shorter than a round trip still makes one attempt (issue 18): permits that are
// there are taken with WithWait(1ns), by a Semaphore and a PermitExpirableSemaphore alike.
func TestSemaphoreTinyWaitMakesOneAttempt(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	s := c.Semaphore("tiny-wait")
	if ok, err := s.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if ok, err := s.TryAcquire(ctx, 1, redisson.WithWait(time.Nanosecond)); !ok || err != nil {
		t.Fatalf("TryAcquire(WithWait(1ns)) with a permit free = %v, %v; want it taken", ok, err)
	}
	p := c.PermitExpirableSemaphore("tiny-wait-leased")
	if ok, err := p.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	ids, err := p.TryAcquire(ctx, 1, redisson.WithWait(time.Nanosecond))
	if len(ids) != 1 || err != nil {
		t.Fatalf("PermitExpirableSemaphore.TryAcquire(WithWait(1ns)) with a permit free = %v, %v; want it taken", ids, err)
	}
	if err := p.Release(ctx, ids...); err != nil {
		t.Fatal(err)
	}
}
