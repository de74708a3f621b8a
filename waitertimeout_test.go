package redisson_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
	"github.com/redis/go-redis/v9"
)

// Every kind that queues its waiters in Redis serves them in turn, and a waiter whose process stops
// (its connections stay open, so nothing tells Redis it is gone) holds up the ones behind it for its
// own waiter timeout, not the releasing Client's: what is handed or reserved to a waiter lasts as
// long as the waiter said it would live. One table over the kinds, so that a kind added later is
// checked the same way.

// queuedKind makes one kind's acquisition: acquire blocks until it holds (or ctx ends) and returns
// the release; setup prepares the object once (a semaphore's permits).
type queuedKind struct {
	name    string
	setup   func(t *testing.T, c *redisson.Client, name string)
	acquire func(ctx context.Context, c *redisson.Client, name string) (release func(context.Context) error, err error)
}

func lockKindAcquire(kind string) func(ctx context.Context, c *redisson.Client, name string) (func(context.Context) error, error) {
	return func(ctx context.Context, c *redisson.Client, name string) (func(context.Context) error, error) {
		h, err := lockOf(c, kind, name).Lock(ctx)
		if err != nil {
			return nil, err
		}
		return h.Unlock, nil
	}
}

var queuedKinds = []queuedKind{
	{name: "Lock", acquire: lockKindAcquire("Lock")},
	{name: "FairLock", acquire: lockKindAcquire("FairLock")},
	{name: "FencedLock", acquire: lockKindAcquire("FencedLock")},
	{name: "ReadWriteLock", acquire: lockKindAcquire("ReadWriteLock")},
	{
		name: "Semaphore",
		setup: func(t *testing.T, c *redisson.Client, name string) {
			if _, err := c.Semaphore(name).TrySetPermits(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
		},
		acquire: func(ctx context.Context, c *redisson.Client, name string) (func(context.Context) error, error) {
			s := c.Semaphore(name)
			if err := s.Acquire(ctx, 1); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return s.Release(ctx, 1) }, nil
		},
	},
	{
		name: "PermitExpirableSemaphore",
		setup: func(t *testing.T, c *redisson.Client, name string) {
			if _, err := c.PermitExpirableSemaphore(name).TrySetPermits(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
		},
		acquire: func(ctx context.Context, c *redisson.Client, name string) (func(context.Context) error, error) {
			s := c.PermitExpirableSemaphore(name)
			ids, err := s.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return s.Release(ctx, ids...) }, nil
		},
	},
}

// queuedSetup starts a server and three Clients on it: r, with rOpt, which takes the object of kind k
// called name (after k.setup), w, with wOpt, whose connections go through the returned Proxy, and
// x, with xOpt. It returns w, x, the Proxy and r's release.
func queuedSetup(t *testing.T, ctx context.Context, k queuedKind, name string, rOpt, wOpt, xOpt redisson.Option) (w, x *redisson.Client, p *redistest.Proxy, release func(context.Context) error) {
	t.Helper()
	srv := redistest.Start(t)
	p = redistest.NewProxy(t, srv.Addr())
	r := newClient(t, srv.Client(t), rOpt)
	w = newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }), wOpt)
	x = newClient(t, srv.Client(t), xOpt)
	if k.setup != nil {
		k.setup(t, r, name)
	}
	release, err := k.acquire(ctx, r, name)
	if err != nil {
		t.Fatalf("holder: %v", err)
	}
	return w, x, p, release
}

// The holder's Client has a 20s waiter timeout; W (2s) queues, then X (re-polls every second)
// queues behind it; W's process stops and the holder releases. X must be served within W's timeout
// plus X's re-poll and generous slack (10s in all, half the releaser's timeout).
func TestEveryQueuedKindStallsOnlyForTheStoppedWaitersOwnTimeout(t *testing.T) {
	long(t)
	t.Parallel()
	for _, k := range queuedKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			name := "stopped-waiter-" + k.name
			ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
			defer cancel()
			w, x, p, release := queuedSetup(t, ctx, k, name, redisson.WithWaiterTimeout(20*time.Second),
				redisson.WithWaiterTimeout(2*time.Second), redisson.WithRepollInterval(time.Second))
			defer p.Blackhole(false) // before the Clients close
			type result struct {
				release func(context.Context) error
				err     error
			}
			async := func(c *redisson.Client) (<-chan result, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				got := make(chan result, 1)
				go func() {
					rel, err := k.acquire(ctx, c, name)
					got <- result{rel, err}
				}()
				return got, cancel
			}
			wGot, wCancel := async(w)
			defer wCancel()
			eventually(t, 5*time.Second, "W to wait", func() bool { return w.Stats().Waiting == 1 })
			xGot, xCancel := async(x)
			defer xCancel()
			eventually(t, 5*time.Second, "X to wait", func() bool { return x.Stats().Waiting == 1 })
			p.Blackhole(true) // W's process stops; its connections stay open
			if err := release(ctx); err != nil {
				t.Fatalf("holder's release: %v", err)
			}
			released := time.Now()
			select {
			case res := <-xGot:
				if res.err != nil {
					t.Fatalf("X: %v", res.err)
				}
				t.Logf("X served %v after the release", time.Since(released).Round(time.Millisecond))
				if err := res.release(ctx); err != nil {
					t.Errorf("X's release: %v", err)
				}
			case res := <-wGot:
				t.Fatalf("W, cut off, returned %v", res.err)
			case <-time.After(10 * time.Second):
				t.Fatalf("X not served within 10s of the release: the stopped waiter W (waiter timeout 2s) holds it up for the releaser's waiter timeout (20s)")
			}
		})
	}
}

// A releasing Client with a short waiter timeout does not cut short what it hands or reserves to a
// waiter of another Client with a longer one: W (waiter timeout 5s, 300ms from the server each way)
// queues, X (re-polls every 50ms) queues behind it, and the holder, whose Client's waiter timeout is
// 200ms, releases. W must be served before X.
func TestEveryQueuedKindKeepsTheWaitersTurnWhateverTheReleasersTimeout(t *testing.T) {
	long(t)
	t.Parallel()
	for _, k := range queuedKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			name := "short-releaser-" + k.name
			ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
			defer cancel()
			w, x, p, release := queuedSetup(t, ctx, k, name, redisson.WithWaiterTimeout(200*time.Millisecond),
				redisson.WithWaiterTimeout(5*time.Second), redisson.WithRepollInterval(50*time.Millisecond))
			served := make(chan string, 2)
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			p.Delay(300 * time.Millisecond)
			for _, ww := range []struct {
				c   *redisson.Client
				who string
			}{{w, "W"}, {x, "X"}} {
				spawn(&wg, func() {
					rel, err := k.acquire(ctx, ww.c, name)
					if err != nil {
						t.Errorf("%s: %v", ww.who, err)
						return
					}
					served <- ww.who
					if err := rel(ctx); err != nil {
						t.Errorf("%s's release: %v", ww.who, err)
					}
				})
				eventually(t, 10*time.Second, ww.who+" to wait", func() bool { return ww.c.Stats().Waiting == 1 })
			}
			if err := release(ctx); err != nil {
				t.Fatalf("holder's release: %v", err)
			}
			wg.Wait()
			close(served)
			var order []string
			for who := range served {
				order = append(order, who)
			}
			if len(order) != 2 || order[0] != "W" || order[1] != "X" {
				t.Fatalf("served %v; want [W X]: what is given to W lasts W's own waiter timeout", order)
			}
		})
	}
}
