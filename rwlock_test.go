package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// Readers share, a writer excludes everyone, and a writer that waits makes newcomer readers wait
// behind it (while the readers already in keep reading and may re-enter).
func TestReadWriteLockSharingAndWriterPreference(t *testing.T) {
	c, rdb, _ := setup(t)
	d := newClient(t, rdb)
	ctx := t.Context()
	rw, rwD := c.ReadWriteLock("rw"), d.ReadWriteLock("rw")
	r1 := mustRLock(t, rw, ctx)
	r2 := mustRLock(t, rwD, ctx) // another Client reads at once
	if _, err := rwD.TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a writer while readers read: %v; want ErrNotObtained", err)
	}
	wgot, cancel := lockAsync(ctx, rwD) // a writer waits
	defer cancel()
	eventually(t, 5*time.Second, "the writer to wait", func() bool { return d.Stats().Waiting == 1 })
	if _, err := rw.TryRLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a newcomer reader while a writer waits: %v; want ErrNotObtained (writer preference)", err)
	}
	inner, err := r1.Reenter(ctx) // a reader already in may re-enter
	if err != nil {
		t.Fatalf("a reader's re-entry while a writer waits: %v", err)
	}
	mustUnlock(t, inner)
	mustUnlock(t, r1)
	select {
	case r := <-wgot:
		t.Fatalf("the writer got the lock while a reader still held it: %v", r.err)
	default:
	}
	mustUnlock(t, r2)
	r := recvWithin(t, wgot, 10*time.Second, "the writer to get the lock after the last reader")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if _, err := rw.TryRLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a reader while a writer holds: %v; want ErrNotObtained", err)
	}
	rgot, cancelR := rLockAsync(ctx, rw)
	defer cancelR()
	mustUnlock(t, r.h)
	rr := recvWithin(t, rgot, 10*time.Second, "a waiting reader to get the lock after the writer")
	if rr.err != nil {
		t.Fatal(rr.err)
	}
	mustUnlock(t, rr.h)
}

// The writer downgrades: it reads with a context marked by its write hold, then releases the write
// hold and keeps reading; a reader cannot upgrade.
func TestReadWriteLockDowngradeNoUpgrade(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	rw := c.ReadWriteLock("dg")
	w := mustLockRW(t, rw, ctx)
	if _, err := rw.TryRLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("an unmarked reader beside the writer: %v; want ErrNotObtained", err)
	}
	r, err := rw.RLock(redisson.ContextWithHold(ctx, w))
	if err != nil {
		t.Fatalf("the writer's read: %v", err)
	}
	mustUnlock(t, w) // downgraded
	other, err := c.ReadWriteLock("dg").TryRLock(ctx)
	if err != nil {
		t.Fatalf("another reader after the downgrade: %v", err)
	}
	mustUnlock(t, other)
	if _, err := rw.Lock(redisson.ContextWithHold(ctx, r)); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("an upgrade: %v; want ErrNotObtained at once", err)
	}
	mustUnlock(t, r)
	if locked, err := rw.IsLocked(ctx); err != nil || locked {
		t.Fatalf("after every unlock: locked %v, %v", locked, err)
	}
}

// Each reader has its own lease: a reader whose Client is gone (closed: nothing renews it) lapses
// on its own, and its field leaves the lock's hash, while another, renewed, keeps reading; then a
// waiting writer gets in at the last live reader's release.
func TestReadWriteLockReaderLeasesApart(t *testing.T) {
	long(t)
	t.Parallel()
	_, rdb, _ := setup(t)
	ctx := t.Context()
	alive := newClient(t, rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
	doomed, err := redisson.New(rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	kept := mustRLock(t, alive.ReadWriteLock("apart"), ctx)
	_ = mustRLock(t, doomed.ReadWriteLock("apart"), ctx)
	if err := doomed.Close(); err != nil { // its read hold stays in Redis until its lease ends
		t.Fatal(err)
	}
	readerFields := func() (n int) {
		for _, f := range rdb.HKeys(ctx, "apart").Val() {
			if strings.HasPrefix(f, "r:") {
				n++
			}
		}
		return n
	}
	if n := readerFields(); n != 2 {
		t.Fatalf("%d readers in the hash; want 2", n)
	}
	// The live reader's renewals load the hash, which drops the lapsed reader.
	eventually(t, 5*time.Second, "the closed Client's reader to lapse", func() bool { return readerFields() == 1 })
	if err := kept.Context().Err(); err != nil {
		t.Fatalf("the renewed reader lost its hold: %v", context.Cause(kept.Context()))
	}
	w, cancel := lockAsync(ctx, alive.ReadWriteLock("apart"))
	defer cancel()
	eventually(t, 5*time.Second, "the writer to wait", func() bool { return alive.Stats().Waiting == 1 })
	mustUnlock(t, kept)
	r := recvWithin(t, w, 10*time.Second, "the writer after the last live reader")
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustUnlock(t, r.h)
}

func mustRLock(t *testing.T, rw *redisson.ReadWriteLock, ctx context.Context) *redisson.Hold {
	t.Helper()
	h, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustLockRW(t *testing.T, rw *redisson.ReadWriteLock, ctx context.Context) *redisson.Hold {
	t.Helper()
	h, err := rw.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// rLockAsync is lockAsync for a read hold.
func rLockAsync(ctx context.Context, rw *redisson.ReadWriteLock) (<-chan lockResult, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	got := make(chan lockResult, 1)
	go func() {
		h, err := rw.RLock(ctx)
		got <- lockResult{h, err}
	}()
	return got, cancel
}

// rwLoadResult is what one process's share of the mixed load saw.
type rwLoadResult struct {
	Overlaps, MaxReaders, Writes, Reads int64
	MaxWriterWait                       time.Duration
}

// rwLoad runs readers and writers goroutines on c's ReadWriteLock name until stop, each holding for
// 1ms. Who is inside is counted in Redis (name+":readers", name+":writers"), shared by every process:
// a writer that finds anyone else inside, or a reader that finds a writer, is an overlap.
func rwLoad(t *testing.T, ctx context.Context, c *redisson.Client, rdb *redis.Client, name string, readers, writers int, stop time.Time) rwLoadResult {
	var mu sync.Mutex
	var res rwLoadResult
	var wg sync.WaitGroup
	rk, wk := name+":readers", name+":writers"
	for g := range readers + writers {
		writer := g < writers
		spawn(&wg, func() {
			for time.Now().Before(stop) {
				start := time.Now()
				var h *redisson.Hold
				var err error
				if writer {
					h, err = c.ReadWriteLock(name).Lock(ctx)
				} else {
					h, err = c.ReadWriteLock(name).RLock(ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
				waited := time.Since(start)
				var overlap bool
				var inside int64
				if writer {
					inside = rdb.Incr(ctx, wk).Val()
					others, _ := rdb.Get(ctx, rk).Int64()
					overlap = inside != 1 || others != 0
				} else {
					inside = rdb.Incr(ctx, rk).Val()
					writers, _ := rdb.Get(ctx, wk).Int64()
					overlap = writers != 0
				}
				time.Sleep(time.Millisecond) // the critical section
				if writer {
					rdb.Decr(ctx, wk)
				} else {
					rdb.Decr(ctx, rk)
				}
				mu.Lock()
				if overlap {
					res.Overlaps++
				}
				if writer {
					res.Writes++
					res.MaxWriterWait = max(res.MaxWriterWait, waited)
				} else {
					res.Reads++
					res.MaxReaders = max(res.MaxReaders, inside)
				}
				mu.Unlock()
				if err := h.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return res
}

// 8 readers and 2 writers in 2 OS processes (4 + 1 each) for 10s: never a writer beside anyone,
// several readers inside at once, both writers served and readers not starved; the longest writer
// wait is printed.
func TestReadWriteLockTwoProcesses(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	const name = "rw-procs"
	mine, theirs := twoProcesses(t, srv, "rwload", name, "FAULT-RW", 10*time.Second, func(stop time.Time) rwLoadResult {
		return rwLoad(t, ctx, newClient(t, rdb), rdb, name, 4, 1, stop)
	})
	t.Logf("this process %+v; the other %+v", mine, theirs)
	if mine.Overlaps+theirs.Overlaps != 0 {
		t.Fatalf("%d overlaps of a writer with another holder", mine.Overlaps+theirs.Overlaps)
	}
	if max(mine.MaxReaders, theirs.MaxReaders) < 2 || mine.Writes == 0 || theirs.Writes == 0 {
		t.Fatalf("most readers at once %d, writes %d and %d; want readers sharing and both writers served",
			max(mine.MaxReaders, theirs.MaxReaders), mine.Writes, theirs.Writes)
	}
	// Phases alternate: 8 readers, each as busy as a writer, read more often than 2 writers write.
	if reads, writes := mine.Reads+theirs.Reads, mine.Writes+theirs.Writes; reads <= writes {
		t.Fatalf("%d reads and %d writes: readers starved", reads, writes)
	}
	t.Logf("longest writer wait: %v", max(mine.MaxWriterWait, theirs.MaxWriterWait))
}

// faultHelperRWLoad is the child's share of TestReadWriteLockTwoProcesses: it starts when the parent
// writes the stop time (UnixNano) and prints its result as JSON.
func faultHelperRWLoad(t *testing.T, ctx context.Context, addr, name string, stdin *bufio.Reader) {
	rdb := faultHelperRedis(t, addr)
	c := newClient(t, rdb)
	childLoad(t, stdin, "FAULT-RW", func(stop time.Time) rwLoadResult { return rwLoad(t, ctx, c, rdb, name, 4, 1, stop) })
}

// 16 Clients, one goroutine each, 90% reads, with re-polls an hour apart: every wait must be ended by
// a message. A lost wake-up stalls every waiter (they queue behind the one not woken) until the
// context ends. (It did: a hub drops messages naming its future waiters once its small store of
// messages for other Clients' waiters was full.)
func TestReadWriteLockNoLostWakeups(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	stop := time.Now().Add(3 * time.Second)
	for i := range 16 {
		c := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Hour))
		spawn(&wg, func() {
			for n := 0; time.Now().Before(stop); n++ {
				var h *redisson.Hold
				var err error
				if (n+i)%10 == 0 {
					h, err = c.ReadWriteLock("wakeups").Lock(ctx)
				} else {
					h, err = c.ReadWriteLock("wakeups").RLock(ctx)
				}
				if err != nil {
					t.Errorf("a wait ended without the lock (a lost wake-up stalls it until the context ends): %v", err)
					return
				}
				time.Sleep(time.Millisecond)
				if err := h.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// rwHolders is the checker of TestReadWriteLockRandomFaults: who is inside, by its hold.
type rwHolders struct {
	mu         sync.Mutex
	in         map[*redisson.Hold]bool // hold → writer
	violations []string
}

// enter records h (a writer if writer) and reports an overlap with any holder still believing it
// holds (its context alive): a writer beside anyone, or anyone beside a writer.
func (r *rwHolders) enter(h *redisson.Hold, writer bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for o, w := range r.in {
		if o.Context().Err() == nil && (w || writer) {
			r.violations = append(r.violations, fmt.Sprintf("%s entered (writer %v) beside a live holder (writer %v)", h.Name(), writer, w))
		}
	}
	r.in[h] = writer
}

func (r *rwHolders) leave(h *redisson.Hold) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.in, h)
}

// Randomized faults against one ReadWriteLock: 4 Clients, each behind its own fault proxy, 3
// goroutines each, read and write, re-enter and unlock at random while replies are dropped and
// connections closed. Checked: no writer ever beside another live holder, every goroutine keeps
// making progress, and the lock is free at the end. The seed is printed (replay: -rw.seed).
func TestReadWriteLockRandomFaults(t *testing.T) {
	long(t)
	t.Parallel()
	seed := time.Now().UnixNano()
	if *rwSeedFlag != 0 {
		seed = *rwSeedFlag
	}
	t.Logf("seed=%d (replay with -rw.seed=%d)", seed, seed)
	srv := redistest.Start(t)
	ctx := t.Context()
	var proxies []*redistest.Proxy
	var clients []*redisson.Client
	for range 4 {
		p := redistest.NewProxy(t, srv.Addr())
		proxies = append(proxies, p)
		clients = append(clients, newClient(t, srv.Client(t, func(o *redis.Options) {
			o.Addr = p.Addr()
			o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 4*time.Millisecond
		}), redisson.WithWatchdogTimeout(time.Second), redisson.WithRepollInterval(100*time.Millisecond)))
	}
	chk := &rwHolders{in: map[*redisson.Hold]bool{}}
	stop := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	var acquired atomic.Int64
	for g := range 12 {
		c := clients[g%4]
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(g)))
		spawn(&wg, func() {
			for time.Now().Before(stop) {
				writer := rng.IntN(4) == 0
				actx, cancel := context.WithTimeout(ctx, 3*time.Second)
				var h *redisson.Hold
				var err error
				if writer {
					h, err = c.ReadWriteLock("faults").Lock(actx)
				} else {
					h, err = c.ReadWriteLock("faults").RLock(actx)
				}
				cancel()
				if err != nil {
					continue // a fault may fail an acquisition; nothing is held then
				}
				acquired.Add(1)
				chk.enter(h, writer)
				levels := []*redisson.Hold{h}
				if rng.IntN(3) == 0 {
					if inner, err := h.Reenter(ctx); err == nil {
						levels = append(levels, inner)
					}
				}
				time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
				chk.leave(h)
				for i := len(levels) - 1; i >= 0; i-- {
					_ = levels[i].Unlock(ctx) // a fault may fail it; the hold then ends as lost
				}
			}
		})
	}
	faults := rand.New(rand.NewPCG(uint64(seed), 99))
	for time.Now().Before(stop) {
		p := proxies[faults.IntN(len(proxies))]
		if faults.IntN(2) == 0 {
			p.DropReplies(1)
		} else {
			p.CloseConns()
		}
		time.Sleep(time.Duration(20+faults.IntN(60)) * time.Millisecond) // the fault rate, not synchronisation
	}
	for _, p := range proxies {
		p.DropReplies(0)
	}
	wg.Wait()
	t.Logf("%d acquisitions", acquired.Load())
	for _, v := range chk.violations {
		t.Error(v)
	}
	if acquired.Load() < 50 {
		t.Errorf("only %d acquisitions in 5s: progress stalled", acquired.Load())
	}
	// Holds ended by a failed unlock expire with their lease (1s): then nothing is left.
	eventually(t, 10*time.Second, "the lock to be free at the end", func() bool {
		locked, err := clients[0].ReadWriteLock("faults").IsLocked(ctx)
		return err == nil && !locked
	})
}

var rwSeedFlag = flag.Int64("rw.seed", 0, "seed of TestReadWriteLockRandomFaults (0: from the clock)")

// A writer that is given the lock but gives it back because the answer came too late (a paused
// server) keeps its place: served before the writer of another Client that registered after it (see
// lateGrantOrder in fairlock_test.go; the writers of one Client take turns locally).
func TestReadWriteLockLateGrantKeepsItsPlace(t *testing.T) {
	long(t)
	t.Parallel()
	lateGrantOrder(t, "ReadWriteLock", false)
}

// rwWriterReaders returns the writer field and the number of reader fields of the ReadWriteLock hash key.
func rwWriterReaders(t *testing.T, admin *redis.Client, key string) (writer string, readers int) {
	t.Helper()
	m, err := admin.HGetAll(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", key, err)
	}
	for f, v := range m {
		switch {
		case f == "w":
			writer = v
		case strings.HasPrefix(f, "r:"):
			readers++
		}
	}
	return writer, readers
}

// rwWarmUp runs every ReadWriteLock script once through c, so that a reply dropped later is a script's
// reply and not a NOSCRIPT error.
func rwWarmUp(t *testing.T, ctx context.Context, c *redisson.Client) {
	t.Helper()
	rw := c.ReadWriteLock("rw-warmup")
	for _, read := range []bool{true, false} {
		var h *redisson.Hold
		var err error
		if read {
			h, err = rw.RLock(ctx)
		} else {
			h, err = rw.Lock(ctx)
		}
		if err != nil {
			t.Fatalf("warm-up: %v", err)
		}
		in, err := h.Reenter(ctx)
		if err != nil {
			t.Fatalf("warm-up Reenter: %v", err)
		}
		if err := in.Unlock(ctx); err != nil {
			t.Fatalf("warm-up partial Unlock: %v", err)
		}
		if _, err := h.HoldCount(ctx); err != nil {
			t.Fatalf("warm-up HoldCount: %v", err)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("warm-up Unlock: %v", err)
		}
	}
	if _, err := rw.ForceUnlock(ctx); err != nil {
		t.Fatalf("warm-up ForceUnlock: %v", err)
	}
}

// Re-entering a ReadWriteLock hold taken with a fixed lease (WithLease(20s)), on the write side and
// on the read side, adds a level and keeps the fixed lease, as a Lock's re-entry does ("a fixed
// lease is not extended"): the key's TTL stays near 20s and another Client's write attempt is
// refused. A re-entry that set the holder's expiry from a zero lease would drop the whole hold
// while its owner goes on working, and let another writer in.
func TestReadWriteLockReenterKeepsFixedLease(t *testing.T) {
	for _, side := range []string{"writer", "reader"} {
		t.Run(side, func(t *testing.T) {
			c, rdb, _ := setup(t)
			other := newClient(t, rdb)
			ctx := t.Context()
			name := "rw-fixed-" + side
			rw := c.ReadWriteLock(name)
			var h *redisson.Hold
			var err error
			if side == "writer" {
				h, err = rw.Lock(ctx, redisson.WithLease(20*time.Second))
			} else {
				h, err = rw.RLock(ctx, redisson.WithLease(20*time.Second))
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = h.Unlock(ctx) }()
			in, err := h.Reenter(ctx)
			if err != nil {
				t.Fatalf("Reenter: %v", err)
			}
			defer func() { _ = in.Unlock(ctx) }()
			if n, err := h.HoldCount(ctx); err != nil || n != 2 {
				t.Errorf("after one re-entry HoldCount = %d, %v; want 2", n, err)
			}
			if ttl, err := rdb.PTTL(ctx, name).Result(); err != nil || ttl < 10*time.Second {
				t.Errorf("after the re-entry the lock key's TTL is %v (%v); want about 20s (fixed lease kept)", ttl, err)
			}
			w, err := other.ReadWriteLock(name).TryLock(ctx)
			if err == nil {
				defer func() { _ = w.Unlock(ctx) }()
				t.Fatalf("another Client took the write lock while the %s holds it (fixed lease, re-entered once; "+
					"the holder's context is live: %v)", side, h.Context().Err())
			}
		})
	}
}

// A final Unlock of a ReadWriteLock hold (read or write side) whose reply is lost, and which
// go-redis sends again on a new connection, returns nil, ends the hold's Context with
// context.Canceled and emits no EventLost: the re-sent release finds the owner gone, which, as the
// answer to a re-send of a release sent while the lease was in force, is reported as released
// (hold.go: releaseFinal), so the application is not told that its work ran unprotected when it
// did not.
func TestReadWriteLockReleaseLostReplyIsNotALoss(t *testing.T) {
	for _, side := range []string{"reader", "writer"} {
		t.Run(side, func(t *testing.T) {
			srv := redistest.Start(t)
			p := redistest.NewProxy(t, srv.Addr())
			rdbA, _ := proxiedClient(t, srv, p)
			var mu sync.Mutex
			var lost []error
			a := newClient(t, rdbA, redisson.WithEventHook(func(e redisson.Event) {
				if e.Kind == redisson.EventLost {
					mu.Lock()
					lost = append(lost, e.Err)
					mu.Unlock()
				}
			}))
			ctx := t.Context()
			rwWarmUp(t, ctx, a)
			rw := a.ReadWriteLock("rw-lost-reply-" + side)
			var h *redisson.Hold
			var err error
			if side == "reader" {
				h, err = rw.RLock(ctx)
			} else {
				h, err = rw.Lock(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			oneIdleConn(t, rdbA)
			p.DropReplies(1)
			err = h.Unlock(ctx)
			p.DropReplies(0)
			if err != nil {
				t.Errorf("final Unlock whose reply was lost (and re-sent by go-redis) = %v (ErrNotHeld %v, ErrLockLost %v); want nil",
					err, errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost))
			}
			if cause := context.Cause(h.Context()); !errors.Is(cause, context.Canceled) {
				t.Errorf("the hold's context ended with %v; want context.Canceled (released)", cause)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, e := range lost {
				t.Errorf("EventLost emitted for a hold that was released normally: %v", e)
			}
			if locked, err := rw.IsLocked(ctx); err != nil || locked {
				t.Errorf("after the Unlock: IsLocked = %v, %v; want false", locked, err)
			}
		})
	}
}

// A ReadWriteLock.ForceUnlock whose reply is lost is not sent again, so it does not delete a write
// hold acquired after its first run. Scenario: X holds the write lock; Client A's ForceUnlock runs
// and its reply is lost: ForceUnlock reports the unknown outcome and opens no new connection (no
// re-send); Y then takes the free write lock and keeps it, and a third writer Z is refused: never
// two writers.
func TestReadWriteLockForceUnlockResendKeepsNewHolder(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p)
	a := newClient(t, rdbA)
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	rwWarmUp(t, ctx, a)
	const name = "rw-force-resend"
	x := mustLockRW(t, b.ReadWriteLock(name), ctx)

	oneIdleConn(t, rdbA)
	dials := dialA.dialed()
	p.DropReplies(1)
	_, err := a.ReadWriteLock(name).ForceUnlock(ctx)
	p.DropReplies(0)
	if err == nil {
		t.Errorf("ForceUnlock whose reply was lost = nil; want the error of the unknown outcome")
	}
	if n := dialA.dialed() - dials; n != 0 {
		t.Errorf("ForceUnlock opened %d new connections after its reply was lost; want none (no re-send)", n)
	}
	if w, _ := rwWriterReaders(t, admin, name); w != "" {
		t.Fatalf("precondition: the first run of ForceUnlock left the writer %q", w)
	}
	_ = x                                                                  // X learns of the force unlock at its next renewal
	y, err := newClient(t, srv.Client(t)).ReadWriteLock(name).TryLock(ctx) // B's turn is X's until X learns
	if err != nil {
		t.Fatalf("Y TryLock after the force unlock: %v", err)
	}
	defer func() { _ = y.Unlock(ctx) }()
	if w, _ := rwWriterReaders(t, admin, name); w == "" {
		t.Errorf("the write hold Y acquired after the force unlock is gone (Y's context: %v)", y.Context().Err())
	}
	z, err := newClient(t, srv.Client(t)).ReadWriteLock(name).TryLock(ctx)
	if err == nil {
		defer func() { _ = z.Unlock(ctx) }()
		t.Errorf("Z took the write lock while Y holds it (Y's context live: %v): two writers", y.Context().Err() == nil)
	}
}

// wakeOnlyByMessages is a Client option under which only messages (and heartbeat kicks) wake a
// waiter: re-polls are an hour apart.
var wakeOnlyByMessages = redisson.WithRepollInterval(time.Hour)

// A hold that ends without a release (its fixed lease of 1.5s runs out) wakes the waiters: a reader
// of a Client whose re-polls are an hour apart gets the read hold soon after the write lease
// lapses, through its heartbeat, which tells a waiter to try again when the lock is free (as
// wait_beat.lua does for a Lock: "the object is free (it ended without a release that would have
// handed it over: a lease that ran out, a holder that died ...)"). The Lock subtest is the control.
func TestReadWriteLockLapsedHoldWakesWaiters(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range []string{"Lock", "ReadWriteLock"} {
		t.Run(kind, func(t *testing.T) {
			_, rdb, _ := setup(t)
			a := newClient(t, rdb)
			b := newClient(t, rdb, wakeOnlyByMessages)
			ctx := t.Context()
			name := "rw-lapsed-" + kind
			h, err := lockOf(a, kind, name).Lock(ctx, redisson.WithLease(1500*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			_ = h // left to its lease
			start := time.Now()
			wctx, cancel := context.WithTimeout(ctx, 12*time.Second)
			defer cancel()
			var got *redisson.Hold
			if kind == "Lock" {
				got, err = b.Lock(name).Lock(wctx)
			} else {
				got, err = b.ReadWriteLock(name).RLock(wctx)
			}
			if err != nil {
				t.Fatalf("the waiter did not get the lock %v after it was taken with a 1.5s lease that lapsed: %v",
					time.Since(start).Round(time.Millisecond), err)
			}
			t.Logf("waited %v", time.Since(start).Round(time.Millisecond))
			_ = got.Unlock(ctx)
		})
	}
}

// A writer that gives up waiting does not strand the readers queued behind it. R0 holds a read
// hold; W waits for the write lock with WithWait(1s); R1 (re-polls an hour apart) asks for a read
// hold and queues behind W. When W's bound passes, R1 enters within seconds: only readers hold the
// lock, and readers wait only "while a writer holds or waits".
func TestReadWriteLockAbandonedWriterLetsReadersIn(t *testing.T) {
	long(t)
	t.Parallel()
	_, rdb, _ := setup(t)
	a, b, c := newClient(t, rdb), newClient(t, rdb), newClient(t, rdb, wakeOnlyByMessages)
	ctx := t.Context()
	const name = "rw-abandoned"
	r0 := mustRLock(t, a.ReadWriteLock(name), ctx)
	defer func() { _ = r0.Unlock(ctx) }()
	wres := make(chan error, 1)
	go func() {
		h, err := b.ReadWriteLock(name).TryLock(ctx, redisson.WithWait(time.Second))
		if err == nil {
			_ = h.Unlock(ctx)
		}
		wres <- err
	}()
	eventually(t, 5*time.Second, "the writer to wait", func() bool { return b.Stats().Waiting == 1 })
	got, cancel := rLockAsync(ctx, c.ReadWriteLock(name))
	defer cancel()
	eventually(t, 5*time.Second, "the reader to queue behind the writer", func() bool { return c.Stats().Waiting == 1 })
	if err := recvWithin(t, wres, 10*time.Second, "the writer's wait bound"); err == nil {
		t.Fatal("precondition: the writer got the lock beside a reader")
	}
	left := time.Now()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		t.Logf("the reader entered %v after the writer left", time.Since(left).Round(time.Millisecond))
		_ = r.h.Unlock(ctx)
	case <-time.After(8 * time.Second):
		t.Errorf("the reader queued behind a writer that gave up is still waiting %v later, though only readers hold the lock",
			time.Since(left).Round(time.Millisecond))
	}
}

// A waiting writer whose network goes silent (as a killed process: no heartbeat, no undo; waiter
// timeout 1s) stops blocking the reader queued behind it after the waiter timeout: the reader
// (re-polls an hour apart) enters within 10s (ReadWriteLock: "one whose process died stops blocking
// the others after the waiter timeout"). Its registration lapsing is not enough: the reader must be
// told to try again.
func TestReadWriteLockDeadWaiterStopsBlockingAfterTimeout(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb := srv.Client(t)
	a := newClient(t, rdb)
	c := newClient(t, rdb, wakeOnlyByMessages)
	d := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr(); quickToGiveUp(o) }), redisson.WithWaiterTimeout(time.Second))
	ctx := t.Context()
	const name = "rw-dead-waiter"
	r0 := mustRLock(t, a.ReadWriteLock(name), ctx)
	defer func() { _ = r0.Unlock(ctx) }()
	wctx, wcancel := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() {
		defer close(wdone)
		if h, err := d.ReadWriteLock(name).Lock(wctx); err == nil {
			_ = h.Unlock(ctx)
		}
	}()
	defer func() { p.Blackhole(false); wcancel(); <-wdone }()
	eventually(t, 5*time.Second, "the writer to wait", func() bool { return d.Stats().Waiting == 1 })
	p.Blackhole(true)
	got, cancel := rLockAsync(ctx, c.ReadWriteLock(name))
	defer cancel()
	eventually(t, 5*time.Second, "the reader to queue behind the writer", func() bool { return c.Stats().Waiting == 1 })
	dead := time.Now()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		t.Logf("the reader entered %v after the writer went silent", time.Since(dead).Round(time.Millisecond))
		_ = r.h.Unlock(ctx)
	case <-time.After(10 * time.Second):
		w, n := rwWriterReaders(t, rdb, name)
		fields, _ := rdb.HKeys(ctx, name).Result()
		t.Errorf("a reader is still waiting %v after the only writer ahead of it went silent (waiter timeout 1s); "+
			"writer %q, %d readers, fields %v", time.Since(dead).Round(time.Millisecond), w, n, fields)
	}
}

// A context marked by a read hold that has since been released does not refuse the write lock: the
// mark stands for the owner only "as long as the owner holds the lock" (ContextWithHold), and a
// released read hold cannot make the writer wait for itself. TryLock of the free lock with that
// context succeeds.
func TestReadWriteLockReleasedReadMarkAllowsWrite(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	rw := c.ReadWriteLock("rw-stale-mark")
	r := mustRLock(t, rw, ctx)
	marked := redisson.ContextWithHold(ctx, r)
	mustUnlock(t, r)
	if locked, err := rw.IsLocked(ctx); err != nil || locked {
		t.Fatalf("precondition: IsLocked = %v, %v after the only hold's release", locked, err)
	}
	w, err := rw.TryLock(marked)
	if err != nil {
		t.Fatalf("TryLock on a free lock with a context marked by a released read hold: %v", err)
	}
	mustUnlock(t, w)
}

// Downgrade, then a second writer: after the writer takes a vouched read hold and releases the
// write side, the waiting writer still waits for the downgraded reader; a reader vouched for by the
// released writer is refused while a writer waits; the downgraded reader can re-enter; once it
// leaves, the writer enters alone (never two writers, never a writer beside a reader), and the key
// is gone at the end.
func TestReadWriteLockDowngradeThenWriterWaits(t *testing.T) {
	t.Parallel()
	c, rdb, _ := setup(t)
	d := newClient(t, rdb)
	ctx := t.Context()
	const name = "rw-downgrade"
	w := mustLockRW(t, c.ReadWriteLock(name), ctx)
	r, err := c.ReadWriteLock(name).RLock(redisson.ContextWithHold(ctx, w))
	if err != nil {
		t.Fatal(err)
	}
	w2, cancel := lockAsync(ctx, d.ReadWriteLock(name))
	defer cancel()
	eventually(t, 5*time.Second, "the second writer to wait", func() bool { return d.Stats().Waiting == 1 })
	mustUnlock(t, w) // downgraded: the second writer must still wait for the reader
	if _, err := c.ReadWriteLock(name).TryRLock(redisson.ContextWithHold(ctx, w)); err == nil {
		t.Fatal("a reader vouched for by a released writer entered while a writer waits")
	}
	select {
	case got := <-w2:
		t.Fatalf("the second writer got the lock beside the downgraded reader: %v", got.err)
	case <-time.After(300 * time.Millisecond):
	}
	in, err := r.Reenter(ctx)
	if err != nil {
		t.Fatalf("the downgraded reader's re-entry: %v", err)
	}
	mustUnlock(t, in)
	mustUnlock(t, r)
	got := recvWithin(t, w2, 10*time.Second, "the second writer")
	if got.err != nil {
		t.Fatal(got.err)
	}
	if wr, n := rwWriterReaders(t, rdb, name); wr == "" || n != 0 {
		t.Errorf("with the second writer in: writer %q, %d readers", wr, n)
	}
	mustUnlock(t, got.h)
	eventually(t, 5*time.Second, "the key to go", func() bool { return rdb.Exists(ctx, name).Val() == 0 })
}

// On a Cluster, with re-polls an hour apart, the sharded wake-ups (SPUBLISH) alone move the lock
// through a reader phase, a writer and a second reader phase.
func TestReadWriteLockClusterWakeUps(t *testing.T) {
	long(t)
	t.Parallel()
	cl := redistest.StartCluster(t)
	a := newClient(t, cl.Client(t), wakeOnlyByMessages)
	b := newClient(t, cl.Client(t), wakeOnlyByMessages)
	ctx := t.Context()
	const name = "rw-cluster"
	r := mustRLock(t, a.ReadWriteLock(name), ctx)
	w, cancelW := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancelW()
	eventually(t, 10*time.Second, "the writer to wait", func() bool { return b.Stats().Waiting == 1 })
	r2, cancelR := rLockAsync(ctx, a.ReadWriteLock(name))
	defer cancelR()
	eventually(t, 10*time.Second, "the reader to queue", func() bool { return a.Stats().Waiting == 1 })
	mustUnlock(t, r)
	got := recvWithin(t, w, 10*time.Second, "the writer, woken by SPUBLISH")
	if got.err != nil {
		t.Fatal(got.err)
	}
	mustUnlock(t, got.h)
	rr := recvWithin(t, r2, 10*time.Second, "the queued reader, woken by SPUBLISH")
	if rr.err != nil {
		t.Fatal(rr.err)
	}
	mustUnlock(t, rr.h)
}

// rwFields returns the hash fields of a ReadWriteLock key.
func rwFields(t *testing.T, admin *redis.Client, key string) map[string]string {
	t.Helper()
	m, err := admin.HGetAll(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", key, err)
	}
	return m
}

// rwWaiter returns the owner id of the waiter registered on the lock (field prefix "ww:" or "wr:").
func rwWaiter(t *testing.T, admin *redis.Client, key, pfx string) string {
	t.Helper()
	for f := range rwFields(t, admin, key) {
		if strings.HasPrefix(f, pfx) {
			return strings.TrimPrefix(f, pfx)
		}
	}
	return ""
}

// rwSides checks the per-side queries and forced unlocks of a ReadWriteLock (newC makes Clients of
// the layout under test): IsReadLocked and IsWriteLocked report their own side (a writer's read
// holds count as read-held, as Redisson's readLock().isLocked()); ForceWriteUnlock changes nothing
// while only readers hold the lock, and ForceReadUnlock nothing while a writer does (even beside its
// own read hold); each frees its own side, whose holders are told (ErrLockLost), and the waiter
// gets in.
func rwSides(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
	ctx := t.Context()
	holder, other := newC(redisson.WithWatchdogTimeout(600*time.Millisecond)), newC()
	rw, orw := holder.ReadWriteLock(name), other.ReadWriteLock(name)
	sides := func(what string, read, write bool) {
		t.Helper()
		r, err := orw.IsReadLocked(ctx)
		if err != nil || r != read {
			t.Fatalf("%s: IsReadLocked = %v, %v; want %v", what, r, err, read)
		}
		w, err := orw.IsWriteLocked(ctx)
		if err != nil || w != write {
			t.Fatalf("%s: IsWriteLocked = %v, %v; want %v", what, w, err, write)
		}
	}
	force := func(what string, f func(context.Context) (bool, error), want bool) {
		t.Helper()
		mustForce(t, ctx, what, f, want)
	}

	sides("free", false, false)
	force("ForceReadUnlock of a free lock", orw.ForceReadUnlock, false)
	force("ForceWriteUnlock of a free lock", orw.ForceWriteUnlock, false)

	r1, r2 := mustRLock(t, rw, ctx), mustRLock(t, rw, ctx)
	sides("read-held", true, false)
	force("ForceWriteUnlock while readers hold", orw.ForceWriteUnlock, false)
	mustLive(t, "ForceWriteUnlock while readers hold", r1, r2)
	got, cancel := lockAsync(ctx, orw)
	defer cancel()
	eventually(t, 10*time.Second, "the writer to wait", func() bool { return other.Stats().Waiting == 1 })
	forceServes(t, ctx, "ForceReadUnlock while readers hold", orw.ForceReadUnlock, got, r1, r2)

	wh := mustLock(t, rw, ctx)
	dr := mustRLock(t, rw, redisson.ContextWithHold(ctx, wh)) // the writer reads too
	sides("write-held with the writer's read hold", true, true)
	force("ForceReadUnlock while a writer holds", orw.ForceReadUnlock, false)
	mustLive(t, "ForceReadUnlock while a writer holds", wh, dr)
	rgot, rcancel := rLockAsync(ctx, orw)
	defer rcancel()
	eventually(t, 10*time.Second, "the reader to wait", func() bool { return other.Stats().Waiting == 1 })
	forceServes(t, ctx, "ForceWriteUnlock while a writer holds", orw.ForceWriteUnlock, rgot, wh, dr)
	sides("free again", false, false)
}

// A ReadWriteLock's sides, in this package's layout and in Java Redisson's (WithRedissonCompat):
// see rwSides. The conformance suite runs it on every topology.
func TestReadWriteLockSides(t *testing.T) {
	t.Parallel()
	for _, layout := range []string{"own", "redisson"} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			rwSides(t, func(opts ...redisson.Option) *redisson.Client {
				if layout == "redisson" {
					opts = append(opts, redisson.WithRedissonCompat())
				}
				return newClient(t, srv.Client(t), opts...)
			}, "rw-sides")
		})
	}
}

// mustForce runs the forced unlock f (what) and fails unless it reports want.
func mustForce(t *testing.T, ctx context.Context, what string, f func(context.Context) (bool, error), want bool) {
	t.Helper()
	if ok, err := f(ctx); err != nil || ok != want {
		t.Fatalf("%s = %v, %v; want %v", what, ok, err, want)
	}
}

// mustLive fails if a hold of hs has ended (after what).
func mustLive(t *testing.T, what string, hs ...*redisson.Hold) {
	t.Helper()
	for _, h := range hs {
		if h.Context().Err() != nil {
			t.Fatalf("%s: a hold ended: %v", what, context.Cause(h.Context()))
		}
	}
}

// forceServes runs the forced unlock f (what), which must free the lock: every hold of lost is told
// (awaitLost), and the waiter whose result got delivers gets in; it is then released.
func forceServes(t *testing.T, ctx context.Context, what string, f func(context.Context) (bool, error), got <-chan lockResult, lost ...*redisson.Hold) {
	t.Helper()
	mustForce(t, ctx, what, f, true)
	awaitLost(t, what, lost...)
	r := recvWithin(t, got, 10*time.Second, "the waiter after "+what)
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustUnlock(t, r.h)
}

// awaitLost waits until every hold of hs is told of its loss (after what), with a cause matching
// ErrLockLost.
func awaitLost(t *testing.T, what string, hs ...*redisson.Hold) {
	t.Helper()
	for _, h := range hs {
		select {
		case <-h.Context().Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: a force-unlocked holder was not told", what)
		}
		if !errors.Is(context.Cause(h.Context()), redisson.ErrLockLost) {
			t.Fatalf("%s: cause %v; want ErrLockLost", what, context.Cause(h.Context()))
		}
	}
}
