package redisson_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// Every blocking call returns within its context's deadline when Redis cannot be reached (stopped:
// connections refused) or does not answer (paused: SIGSTOP), rather than seconds later: clean-up
// that must go on (an undo, a release) goes on in the background. A call that provably never
// reached Redis has nothing to undo.

// deadlineSlack is how far past its context's deadline a call may return: scheduling on a loaded
// machine under -race, not network waits (those are what the test catches: seconds).
const deadlineSlack = 250 * time.Millisecond

// blockingCalls are the library's blocking calls, each on objects of its own named after name; a
// call that needs something held first (Unlock, Release) gets it from setup, run while Redis is up.
type blockingCall struct {
	name  string
	setup func(t *testing.T, c *redisson.Client) func(ctx context.Context) error
}

func callOnly(f func(ctx context.Context, c *redisson.Client) error) func(t *testing.T, c *redisson.Client) func(ctx context.Context) error {
	return func(t *testing.T, c *redisson.Client) func(ctx context.Context) error {
		return func(ctx context.Context) error { return f(ctx, c) }
	}
}

func lockCall(ctx context.Context, l redisson.Locker) error {
	_, err := l.Lock(ctx)
	return err
}

var blockingCalls = []blockingCall{
	{"Lock.Lock", callOnly(func(ctx context.Context, c *redisson.Client) error { return lockCall(ctx, c.Lock("dl-lock")) })},
	{"Lock.TryLock", callOnly(func(ctx context.Context, c *redisson.Client) error {
		_, err := c.Lock("dl-trylock").TryLock(ctx, redisson.WithWait(time.Minute))
		return err
	})},
	{"FairLock.Lock", callOnly(func(ctx context.Context, c *redisson.Client) error { return lockCall(ctx, c.FairLock("dl-fair")) })},
	{"FencedLock.Lock", callOnly(func(ctx context.Context, c *redisson.Client) error { return lockCall(ctx, c.FencedLock("dl-fenced")) })},
	{"SpinLock.Lock", callOnly(func(ctx context.Context, c *redisson.Client) error { return lockCall(ctx, c.SpinLock("dl-spin")) })},
	{"ReadWriteLock.RLock", callOnly(func(ctx context.Context, c *redisson.Client) error {
		_, err := c.ReadWriteLock("dl-rw-r").RLock(ctx)
		return err
	})},
	{"ReadWriteLock.Lock", callOnly(func(ctx context.Context, c *redisson.Client) error { return lockCall(ctx, c.ReadWriteLock("dl-rw-w")) })},
	{"MultiLock.Lock", callOnly(func(ctx context.Context, c *redisson.Client) error {
		return lockCall(ctx, redisson.NewMultiLock(c.Lock("dl-multi-a"), c.FairLock("dl-multi-b")))
	})},
	{"Semaphore.Acquire", callOnly(func(ctx context.Context, c *redisson.Client) error { return c.Semaphore("dl-sem").Acquire(ctx, 1) })},
	{"PermitExpirableSemaphore.Acquire", callOnly(func(ctx context.Context, c *redisson.Client) error {
		_, err := c.PermitExpirableSemaphore("dl-psem").Acquire(ctx, 1)
		return err
	})},
	{"CountDownLatch.Wait", func(t *testing.T, c *redisson.Client) func(ctx context.Context) error {
		if _, err := c.CountDownLatch("dl-latch").TrySetCount(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context) error { return c.CountDownLatch("dl-latch").Wait(ctx) }
	}},
	{"Hold.Unlock", func(t *testing.T, c *redisson.Client) func(ctx context.Context) error {
		h := mustLock(t, c.Lock(t.Name()+"-unlock-"+time.Now().String()), t.Context())
		return h.Unlock
	}},
	{"Hold.Reenter", func(t *testing.T, c *redisson.Client) func(ctx context.Context) error {
		h := mustLock(t, c.Lock(t.Name()+"-reenter-"+time.Now().String()), t.Context())
		return func(ctx context.Context) error {
			_, err := h.Reenter(ctx)
			return err
		}
	}},
	{"Semaphore.Release", callOnly(func(ctx context.Context, c *redisson.Client) error { return c.Semaphore("dl-sem-r").Release(ctx, 1) })},
	{"Lock.IsLocked", callOnly(func(ctx context.Context, c *redisson.Client) error {
		_, err := c.Lock("dl-is-locked").IsLocked(ctx)
		return err
	})},
	{"AtomicLong.Load", callOnly(func(ctx context.Context, c *redisson.Client) error {
		_, err := c.AtomicLong("dl-load").Load(ctx)
		return err
	})},
	{"ReadWriteLock.RemainingTTL", callOnly(func(ctx context.Context, c *redisson.Client) error {
		_, err := c.ReadWriteLock("dl-rw-ttl").RemainingTTL(ctx)
		return err
	})},
	{"AtomicLong.Add", callOnly(func(ctx context.Context, c *redisson.Client) error {
		_, err := c.AtomicLong("dl-counter").Add(ctx, 1)
		return err
	})},
	{"BloomFilter.Add", func(t *testing.T, c *redisson.Client) func(ctx context.Context) error {
		f := c.BloomFilter("dl-bloom")
		if _, err := f.TryInit(t.Context(), 100, 0.01); err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context) error {
			_, err := f.Add(ctx, "x")
			return err
		}
	}},
}

func TestEveryBlockingCallKeepsItsDeadline(t *testing.T) {
	for _, fault := range []string{"stopped", "paused"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			c := newClient(t, srv.Client(t))
			deadlines := []time.Duration{300 * time.Millisecond, 1200 * time.Millisecond}
			calls := make([][]func(context.Context) error, len(blockingCalls)) // [call][deadline]
			for i, bc := range blockingCalls {
				for range deadlines {
					calls[i] = append(calls[i], bc.setup(t, c))
				}
			}
			switch fault {
			case "stopped":
				if err := srv.Stop(); err != nil {
					t.Fatal(err)
				}
			case "paused":
				if err := srv.Pause(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = srv.Resume() })
			}
			// The calls run at once, each on objects of its own: a call that overstays its deadline
			// shows in its own time, whatever the others do.
			var wg sync.WaitGroup
			for i, bc := range blockingCalls {
				for j, d := range deadlines {
					spawn(&wg, func() {
						ctx, cancel := context.WithTimeout(t.Context(), d)
						start := time.Now()
						err := calls[i][j](ctx)
						took := time.Since(start)
						cancel()
						if err == nil {
							t.Errorf("%s with Redis %s: no error", bc.name, fault)
						}
						if took > d+deadlineSlack {
							t.Errorf("%s with Redis %s and a %v deadline returned after %v: %v", bc.name, fault, d, took, err)
						}
						if fault == "paused" && !errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("%s with Redis paused: %v; want it to match context.DeadlineExceeded", bc.name, err)
						}
					})
				}
			}
			wg.Wait()
		})
	}
}
