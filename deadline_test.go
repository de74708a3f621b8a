package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	{"Lock.TryLock(WithWait(0))", func(t *testing.T, c *redisson.Client) func(ctx context.Context) error {
		l := c.Lock("dl-trylock-0-" + time.Now().String()) // a single attempt would find the other's turn
		return func(ctx context.Context) error {
			_, err := l.TryLock(ctx, redisson.WithWait(0))
			return err
		}
	}},
	{"Semaphore.TryAcquire(WithWait(0))", callOnly(func(ctx context.Context, c *redisson.Client) error {
		ok, err := c.Semaphore("dl-tryacquire-0").TryAcquire(ctx, 1, redisson.WithWait(0))
		if ok {
			return errors.New("acquired a permit that was never set")
		}
		return err
	})},
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
	for _, run := range []struct {
		fault string
		piped bool // the Client WithAutoPipelining: the calls' concurrent commands go through it
	}{{"stopped", false}, {"paused", false}, {"stopped", true}, {"paused", true}} {
		fault, name := run.fault, run.fault
		if run.piped {
			name += "/piped"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			c := newClient(t, srv.Client(t), redisson.WithAutoPipelining(run.piped))
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
			if run.piped && redisson.Piped(c) == 0 {
				t.Error("WithAutoPipelining: no command went through the pipeliner")
			}
		})
	}
}

// boundedWait is a wait with a WithWait bound on an object that something else holds (or that has
// no permits), so that the call waits: setup, run while Redis is up, makes it so and returns the
// call. compat: the Clients are made WithRedissonCompat.
type boundedWait struct {
	name   string
	compat bool
	setup  func(t *testing.T, holder, c *redisson.Client) func(ctx context.Context, bound time.Duration) error
}

// heldLockWait is a boundedWait on a lock (kind: see lockOf) that holder holds.
func heldLockWait(kind string) boundedWait {
	return boundedWait{kind, strings.HasPrefix(kind, "Compat"), func(t *testing.T, holder, c *redisson.Client) func(context.Context, time.Duration) error {
		name := "bound-" + kind
		mustLock(t, lockOf(holder, kind, name), t.Context())
		return func(ctx context.Context, bound time.Duration) error {
			_, err := lockOf(c, kind, name).TryLock(ctx, redisson.WithWait(bound))
			return err
		}
	}}
}

// heldReadWait is a boundedWait of a reader on a ReadWriteLock whose write side holder holds.
func heldReadWait(compat bool) boundedWait {
	return boundedWait{"ReadWriteLock.TryRLock", compat, func(t *testing.T, holder, c *redisson.Client) func(context.Context, time.Duration) error {
		name := fmt.Sprintf("bound-read-%t", compat)
		mustLock(t, holder.ReadWriteLock(name), t.Context()) // the writer keeps readers out
		return func(ctx context.Context, bound time.Duration) error {
			_, err := c.ReadWriteLock(name).TryRLock(ctx, redisson.WithWait(bound))
			return err
		}
	}}
}

// emptySemaphoreWait is a boundedWait for a permit of a semaphore that has none.
func emptySemaphoreWait(leased, compat bool) boundedWait {
	name := "Semaphore.TryAcquire"
	if leased {
		name = "PermitExpirableSemaphore.TryAcquire"
	}
	return boundedWait{name, compat, func(t *testing.T, _, c *redisson.Client) func(context.Context, time.Duration) error {
		return func(ctx context.Context, bound time.Duration) error {
			if leased {
				ids, err := c.PermitExpirableSemaphore(fmt.Sprintf("bound-psem-%t", compat)).TryAcquire(ctx, 1, redisson.WithWait(bound))
				if ids != nil {
					return errors.New("acquired a permit that was never set")
				}
				return err
			}
			ok, err := c.Semaphore(fmt.Sprintf("bound-sem-%t", compat)).TryAcquire(ctx, 1, redisson.WithWait(bound))
			if ok {
				return errors.New("acquired a permit that was never set")
			}
			return err
		}
	}}
}

var boundedWaits = []boundedWait{
	heldLockWait("Lock"), heldLockWait("FairLock"), heldLockWait("FencedLock"), heldLockWait("SpinLock"),
	heldLockWait("ReadWriteLock"), heldReadWait(false), heldLockWait("MultiLock"),
	emptySemaphoreWait(false, false), emptySemaphoreWait(true, false),
	heldLockWait("CompatLock"), heldLockWait("CompatFairLock"), heldLockWait("CompatReadWriteLock"), heldReadWait(true),
	emptySemaphoreWait(false, true), emptySemaphoreWait(true, true),
}

// Every wait returns within its WithWait bound, on a context with no deadline, whatever Redis does
// meanwhile: paused (SIGSTOP), killed, or black-holed (a silent network) part-way into the wait. What
// must follow the wait (leaving the queue, giving back what may have been granted) goes on in the
// background.
func TestEveryWaitKeepsItsBound(t *testing.T) {
	const (
		bound   = 600 * time.Millisecond
		faultAt = 200 * time.Millisecond
	)
	for _, run := range []struct {
		fault string
		piped bool // the waiting Clients WithAutoPipelining: the waits' concurrent commands go through it
	}{{"paused", false}, {"killed", false}, {"black-holed", false}, {"paused", true}, {"killed", true}, {"black-holed", true}} {
		fault, name := run.fault, run.fault
		if run.piped {
			name += "/piped"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			p := redistest.NewProxy(t, srv.Addr())
			var holders, clients [2]*redisson.Client // ours, and made WithRedissonCompat
			for i, opts := range [][]redisson.Option{nil, {redisson.WithRedissonCompat()}} {
				holders[i] = newClient(t, srv.Client(t), opts...)
				clients[i] = newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }),
					append(opts, redisson.WithAutoPipelining(run.piped))...)
				warmUpScripts(t, clients[i])
			}
			calls := make([]func(context.Context, time.Duration) error, len(boundedWaits))
			for i, bw := range boundedWaits {
				mode := 0
				if bw.compat {
					mode = 1
				}
				calls[i] = bw.setup(t, holders[mode], clients[mode])
			}
			var wg sync.WaitGroup
			var slowest struct {
				sync.Mutex
				d time.Duration
			}
			defer func() {
				t.Logf("the slowest of the %v waits returned after %v", bound, slowest.d.Round(time.Millisecond))
			}()
			start := time.Now()
			for i, bw := range boundedWaits {
				spawn(&wg, func() {
					// context.Background: only the bound ends the wait (the test's own context would
					// end it at the test's deadline).
					began := time.Now()
					err := calls[i](context.Background(), bound)
					took := time.Since(began)
					if !errors.Is(err, redisson.ErrNotObtained) && err != nil {
						t.Errorf("%s with Redis %s: %v; want ErrNotObtained or nothing", bw.name, fault, err)
					}
					if took > bound+deadlineSlack {
						t.Errorf("%s with Redis %s part-way into a %v wait returned after %v: %v", bw.name, fault, bound, took, err)
					}
					slowest.Lock()
					slowest.d = max(slowest.d, took)
					slowest.Unlock()
				})
			}
			time.Sleep(time.Until(start.Add(faultAt))) // the fault comes part-way into the waits
			switch fault {
			case "paused":
				if err := srv.Pause(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = srv.Resume() })
			case "killed":
				if err := srv.Kill(); err != nil {
					t.Fatal(err)
				}
			case "black-holed":
				p.Blackhole(true)
				t.Cleanup(func() { p.Blackhole(false) })
			}
			wg.Wait()
			if run.piped && redisson.Piped(clients[0])+redisson.Piped(clients[1]) == 0 {
				t.Error("WithAutoPipelining: no command went through the pipeliner")
			}
		})
	}
}

// A bound shorter than a round trip still makes its attempt, and keeps the call within the bound
// (plus the attempt's grace: a few milliseconds and two round trips) whatever Redis does: on a
// black-holed Redis and context.Background, WithWait(1ms) returns in milliseconds. (WithWait(0) is
// no bound but a single attempt, bounded by its context: see TestEveryBlockingCallKeepsItsDeadline.)
func TestTinyWaitKeepsItsBound(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	c := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	warmUpScripts(t, c)
	p.Blackhole(true)
	defer p.Blackhole(false)
	calls := map[string]func(ctx context.Context, bound time.Duration) error{ // each on an object of its own
		"Lock.TryLock": func(ctx context.Context, bound time.Duration) error {
			_, err := c.Lock(fmt.Sprint("wait-zero-lock-", bound)).TryLock(ctx, redisson.WithWait(bound))
			return err
		},
		"Semaphore.TryAcquire": func(ctx context.Context, bound time.Duration) error {
			_, err := c.Semaphore(fmt.Sprint("wait-zero-sem-", bound)).TryAcquire(ctx, 1, redisson.WithWait(bound))
			return err
		},
	}
	var wg sync.WaitGroup
	for name, call := range calls {
		for _, bound := range []time.Duration{time.Millisecond, 5 * time.Millisecond} {
			spawn(&wg, func() {
				start := time.Now()
				err := call(context.Background(), bound)
				if took := time.Since(start); took > bound+deadlineSlack {
					t.Errorf("%s(WithWait(%v)) with Redis black-holed returned after %v: %v", name, bound, took.Round(time.Millisecond), err)
				}
			})
		}
	}
	wg.Wait()
}
