package redisson_test

// Attack 15: PermitExpirableSemaphore (permitsemaphore.go, sem_*.lua with leased permits) and
// CountDownLatch (countdownlatch.go, latch.lua). Each failing test states the scenario, the expected
// behaviour and what happens; tests marked PASSING are kept as regression tests of attacks the code
// withstood.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// a15Hook runs f around every command and pipeline (f calls next to send it; its return is the
// command's error). nil f: pass-through.
type a15Hook struct {
	mu   sync.Mutex
	cmd  func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error
	pipe func(ctx context.Context, cmds []redis.Cmder, next func() error) error
}

func a15Args(cmd redis.Cmder) []string {
	args := cmd.Args()
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = fmt.Sprint(a)
	}
	return s
}

func (h *a15Hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *a15Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		f := h.cmd
		h.mu.Unlock()
		if f == nil {
			return next(ctx, cmd)
		}
		return f(ctx, a15Args(cmd), cmd, func() error { return next(ctx, cmd) })
	}
}

func (h *a15Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		f, c := h.pipe, h.cmd
		h.mu.Unlock()
		if f == nil && c != nil && len(cmds) > 0 {
			// A pipeline (CountDownLatch.Wait reads its round, then its count) is seen as its last
			// command.
			last := cmds[len(cmds)-1]
			return c(ctx, a15Args(last), last, func() error { return next(ctx, cmds) })
		}
		if f == nil {
			return next(ctx, cmds)
		}
		return f(ctx, cmds, func() error { return next(ctx, cmds) })
	}
}

func (h *a15Hook) setCmd(f func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error) {
	h.mu.Lock()
	h.cmd = f
	h.mu.Unlock()
}

func (h *a15Hook) setPipe(f func(ctx context.Context, cmds []redis.Cmder, next func() error) error) {
	h.mu.Lock()
	h.pipe = f
	h.mu.Unlock()
}

// a15Latch matches a latch.lua call (3 keys, then what, n, publish, channel, window) of kind what.
func a15Latch(what string) func(a []string) bool {
	return func(a []string) bool {
		return len(a) == 11 && (a[0] == "evalsha" || a[0] == "eval") && a[2] == "3" && a[6] == what
	}
}

func a15Avail(t *testing.T, p *redisson.PermitExpirableSemaphore) int64 {
	t.Helper()
	n, err := p.AvailablePermits(context.Background())
	if err != nil {
		t.Fatalf("AvailablePermits: %v", err)
	}
	return n
}

func a15Leased(t *testing.T, admin *redis.Client, name string) int64 {
	t.Helper()
	n, err := admin.ZCard(context.Background(), "{"+name+"}:~sl").Result()
	if err != nil {
		t.Fatalf("ZCARD leases: %v", err)
	}
	return n
}

// Fixed (review 15: repeated ids are refused, ErrInvalidArgument). Was: Release with the same permit id twice counts it back twice: permits are created.
//
// Scenario: 2 permits; acquire 1 (id p); Release(p, p) (e.g. an application merging id lists).
// Expected: ErrNotHeld/ErrInvalidArgument with nothing changed, or p released once (2 available).
// Actual: sem_release.lua "x" checks each id with ZSCORE (both see p), ZREMs them (1 removed) and
// then INCRBYs the key by #pids = 2: 3 permits available of 2, and a third holder gets in.
func TestAttack15ReleaseDuplicateIDsCreatesPermit(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	p := c.PermitExpirableSemaphore("dup")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	ids, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Release(ctx, ids[0], ids[0])
	n := a15Avail(t, p)
	t.Logf("Release(p, p) = %v; available %d, leased %d", err, n, a15Leased(t, admin, "dup"))
	if err == nil && n != 2 || err != nil && n != 1 {
		t.Fatalf("Release of the same id twice: err %v, %d permits available of 2 (want 2 after a release, 1 if refused)", err, n)
	}
}

// Fixed (review 15: at most 1000 leased permits per call, refused before any write). Was: a leased acquisition of 5000 permits fails in Lua after it took them: the permits are lost
// for good.
//
// Scenario: 10000 permits; TryAcquire(5000, WithLease(1m)).
// Expected: either 5000 ids (5000 left, 5000 leased), or an error with nothing changed (10000).
// Actual: sem_acquire.lua DECRBYs the key, then ZADDs unpack(args) with 10000 arguments: Lua's
// unpack fails ("too many results to unpack", the C stack limit LUAI_MAXCSTACK 8000). The script
// errors after the DECRBY (Redis does not roll back a script's writes); no lease and no record were
// written, so no lease expiry, undo or release can ever give the 5000 permits back. The same unpack
// limit hits the undo ("u": ZREM unpack(sem_ids)) of a leased acquisition of more than ~8000.
func TestAttack15LargeLeasedAcquisitionLosesPermits(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	p := c.PermitExpirableSemaphore("big")
	if _, err := p.TrySetPermits(ctx, 10000); err != nil {
		t.Fatal(err)
	}
	ids, err := p.TryAcquire(ctx, 5000, redisson.WithLease(time.Minute))
	n, leased := a15Avail(t, p), a15Leased(t, admin, "big")
	t.Logf("TryAcquire(5000) = %d ids, %v; available %d, leased %d", len(ids), err, n, leased)
	switch {
	case err == nil && len(ids) == 5000:
		if n != 5000 || leased != 5000 {
			t.Fatalf("after a leased acquisition of 5000: %d available, %d leased; want 5000, 5000", n, leased)
		}
	case n+leased != 10000:
		t.Fatalf("TryAcquire(5000) failed (%v) and %d permits are gone: %d available + %d leased of 10000", err, 10000-n-leased, n, leased)
	}
}

// Fixed (review 15: a lease that ends before any other nudges the waiters). Was: a waiter queued behind a waiter that then takes a short-leased permit is not woken when
// that lease ends: it sleeps until its re-poll or heartbeat.
//
// Scenario (re-polls and heartbeats far apart, as the conformance "lease ends" case): 0 permits;
// W1 waits for 1 permit with WithLease(300ms), then W2 waits for 1. AddPermits(1) wakes W1, which
// takes the permit with a 300 ms lease.
// Expected (doc: "waiters sleep no longer than until the earliest lease ends, so they get it even if
// nobody publishes"; issue 9: "waiters are woken for it even if nobody publishes"): W2 gets the
// permit shortly after the lease ends.
// Actual: W2's only attempt ran when nothing was leased, so its retry was -1 (or W1's registration
// deadline, an hour away); the attempt of W1 that leased the permit wakes nobody, and the lease's end
// publishes nothing. W2 sleeps until the re-poll interval or a heartbeat (waiter timeout / 3).
func TestAttack15WaiterBehindNewLeaseNotWoken(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	quiet := a14Quiet()
	c1, c2, c3 := newClient(t, srv.Client(t), quiet...), newClient(t, srv.Client(t), quiet...), newClient(t, srv.Client(t))
	const name = "behind"
	if _, err := c3.PermitExpirableSemaphore(name).TrySetPermits(ctx, 0); err != nil {
		t.Fatal(err)
	}
	got1, got2 := make(chan time.Time, 1), make(chan error, 1)
	go func() {
		_, err := c1.PermitExpirableSemaphore(name).Acquire(ctx, 1, redisson.WithLease(300*time.Millisecond))
		if err == nil {
			got1 <- time.Now()
		}
	}()
	eventually(t, 5*time.Second, "W1 queued", func() bool { return a14Waiters(t, c3, name) == 1 })
	go func() {
		_, err := c2.PermitExpirableSemaphore(name).Acquire(ctx, 1, redisson.WithLease(time.Minute))
		got2 <- err
	}()
	eventually(t, 5*time.Second, "W2 queued", func() bool { return a14Waiters(t, c3, name) == 2 })
	if _, err := c3.PermitExpirableSemaphore(name).AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var t1 time.Time
	select {
	case t1 = <-got1:
	case <-time.After(5 * time.Second):
		t.Fatal("precondition: W1 did not get the added permit")
	}
	select {
	case err := <-got2:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("W2 got the permit %v after W1 took it with a 300ms lease", time.Since(t1))
	case <-time.After(2500 * time.Millisecond):
		t.Fatalf("W2 not served %v after W1's 300ms lease began (leased now: %d, available: %d): nothing woke it",
			time.Since(t1), a15Leased(t, admin, name), a15Avail(t, c3.PermitExpirableSemaphore(name)))
	}
}

// Fixed (review 15: as above, for SetLease). Was: SetLease shortening a permit's lease does not move its waiters' retry: they sleep until the
// old lease's end.
//
// Scenario (quiet re-polls and heartbeats): 1 permit, leased by H for an hour; W waits (its attempt
// answers retry = 1 h, the earliest lease). H calls SetLease(200ms, id).
// Expected: W gets the permit shortly after 200 ms (the permit "returns to the pool by itself and
// waiters are woken for it even if nobody publishes").
// Actual: "e" publishes nothing and W's retry still points at the old expiry: W sleeps on (until the
// hour, the re-poll, or a heartbeat).
func TestAttack15SetLeaseShortenedWaiterNotWoken(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	h, w := newClient(t, srv.Client(t)), newClient(t, srv.Client(t), a14Quiet()...)
	const name = "shorten"
	p := h.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ids, err := p.Acquire(ctx, 1, redisson.WithLease(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := w.PermitExpirableSemaphore(name).Acquire(ctx, 1, redisson.WithLease(time.Minute))
		got <- err
	}()
	eventually(t, 5*time.Second, "W queued", func() bool { return a14Waiters(t, h, name) == 1 })
	if err := p.SetLease(ctx, 200*time.Millisecond, ids...); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("W got the permit %v after SetLease(200ms)", time.Since(start))
	case <-time.After(2500 * time.Millisecond):
		t.Fatalf("W not served %v after the lease was cut to 200ms (leased %d): nothing woke it", time.Since(start), a15Leased(t, admin, name))
	}
}

// PASSING. An acquisition whose leased permits (some or all) expired and were counted back before its
// undo runs is given back once, not twice.
//
// Scenario: 3 permits; TryAcquire(2, WithLease(1m)) runs in Redis, then its reply is replaced by a
// network error (the caller undoes). Before the undo, 0, 1 or 2 of its leases are made to pass.
// Expected: 3 available and nothing leased afterwards.
func TestAttack15UndoAfterLeasesExpired(t *testing.T) {
	for _, expired := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("expired=%d", expired), func(t *testing.T) {
			ctx := t.Context()
			_, admin, srv := setup(t)
			hook := &a15Hook{}
			rdb := srv.Client(t)
			rdb.AddHook(hook)
			c := newClient(t, rdb)
			name := fmt.Sprintf("undo%d", expired)
			p := c.PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			injected := errors.New("a15: connection reset (injected)")
			var once sync.Once
			hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
				if !a14SemAcquire("", "f")(a) {
					return next()
				}
				if err := next(); err != nil {
					return err
				}
				fired := false
				once.Do(func() { fired = true })
				if !fired {
					return nil
				}
				for i := 1; i <= expired; i++ {
					admin.ZAdd(ctx, "{"+name+"}:~sl", redis.Z{Score: 1, Member: fmt.Sprintf("%s#%d", a[7], i)})
				}
				cmd.SetErr(injected)
				return injected
			})
			ids, err := p.TryAcquire(ctx, 2, redisson.WithLease(time.Minute))
			hook.setCmd(nil)
			if err == nil || ids != nil {
				t.Fatalf("precondition: TryAcquire with its reply lost = %v, %v; want an error", ids, err)
			}
			if n, l := a15Avail(t, p), a15Leased(t, admin, name); n != 3 || l != 0 {
				t.Fatalf("after the undo of an acquisition with %d of 2 leases passed: %d available, %d leased; want 3, 0", expired, n, l)
			}
		})
	}
}

// PASSING. A Release racing the lease's end returns the permit at most once.
//
// Scenario: 2 permits; 25 rounds of TryAcquire(1, WithLease(25ms)), then Release at a random moment
// around the expiry while another Client counts back expired leases (AvailablePermits).
// Expected: each Release succeeds or fails with ErrNotHeld; at the end 2 available, nothing leased.
func TestAttack15ReleaseRacingExpiry(t *testing.T) {
	ctx := t.Context()
	c, admin, srv := setup(t)
	other := newClient(t, srv.Client(t)).PermitExpirableSemaphore("race")
	p := c.PermitExpirableSemaphore("race")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	spawn(&wg, func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n, err := other.AvailablePermits(ctx); err != nil || n > 2 {
				t.Errorf("AvailablePermits = %d, %v; want ≤ 2", n, err)
				return
			}
		}
	})
	for i := 0; i < 25; i++ {
		ids, err := p.Acquire(ctx, 1, redisson.WithLease(25*time.Millisecond), redisson.WithWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(15+rand.IntN(20)) * time.Millisecond) // jitter around the expiry, not synchronisation
		if err := p.Release(ctx, ids...); err != nil && !errors.Is(err, redisson.ErrNotHeld) {
			t.Fatalf("Release = %v", err)
		}
	}
	close(stop)
	wg.Wait()
	eventually(t, 2*time.Second, "every lease back", func() bool { return a15Avail(t, p) == 2 })
	if n, l := a15Avail(t, p), a15Leased(t, admin, "race"); n != 2 || l != 0 {
		t.Fatalf("after releases racing expiries: %d available, %d leased; want 2, 0", n, l)
	}
}

// PASSING. Late copies of a Release, of a leased TryAcquire that took permits (then released), and of
// one that found too few, replayed after the semaphore moved on, change nothing.
func TestAttack15LateCopiesOfPermitRequests(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := newA11Hook()
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	c := newClient(t, rdb)
	p := c.PermitExpirableSemaphore("late")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	hook.set(a14SemAcquire("", "f"), false)
	ids, err := p.TryAcquire(ctx, 2, redisson.WithLease(time.Minute))
	if err != nil || len(ids) != 2 {
		t.Fatalf("TryAcquire(2) = %v, %v", ids, err)
	}
	took := hook.last(t)
	refusedIDs, err := p.TryAcquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil || refusedIDs != nil {
		t.Fatalf("TryAcquire(1) of 0 = %v, %v", refusedIDs, err)
	}
	refused := hook.last(t)
	hook.set(a14SemChange("x"), false)
	if err := p.Release(ctx, ids...); err != nil {
		t.Fatal(err)
	}
	rel := hook.last(t)
	hook.release()
	again, err := p.TryAcquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil || len(again) != 1 {
		t.Fatalf("TryAcquire(1) = %v, %v", again, err)
	}
	for _, copy := range [][]any{took, refused, rel} {
		if err := admin.Do(ctx, copy...).Err(); err != nil {
			t.Fatalf("replay %v: %v", copy[:8], err)
		}
	}
	if n, l := a15Avail(t, p), a15Leased(t, admin, "late"); n != 1 || l != 1 {
		t.Fatalf("after late copies: %d available, %d leased; want 1, 1", n, l)
	}
	if err := p.Release(ctx, again...); err != nil {
		t.Fatal(err)
	}
}

// PASSING. A watchdog renewal held in flight while the permit is released (by its holder, or by
// another Client) does not bring the permit back, and the holder's watchdog drops it.
func TestAttack15RenewalInFlightAcrossRelease(t *testing.T) {
	for _, by := range []string{"holder", "other"} {
		t.Run(by, func(t *testing.T) {
			ctx := t.Context()
			_, admin, srv := setup(t)
			hook := &a15Hook{}
			rdb := srv.Client(t)
			rdb.AddHook(hook)
			c := newClient(t, rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
			name := "renew-" + by
			p := c.PermitExpirableSemaphore(name)
			if _, err := p.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			ids, err := p.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			reached, open := make(chan struct{}), make(chan struct{})
			renewals := make(chan struct{}, 100)
			var once sync.Once
			hook.setPipe(func(ctx context.Context, cmds []redis.Cmder, next func() error) error {
				renew := false
				for _, cmd := range cmds {
					if a := a15Args(cmd); len(a) == 6 && strings.HasSuffix(a[3], ":~sl") && a[5] == ids[0] {
						renew = true
					}
				}
				if !renew {
					return next()
				}
				first := false
				once.Do(func() { first = true })
				if first {
					close(reached)
					<-open
				} else {
					renewals <- struct{}{}
				}
				return next()
			})
			select {
			case <-reached:
			case <-time.After(5 * time.Second):
				t.Fatal("precondition: no renewal of the permit")
			}
			rel := p
			if by == "other" {
				rel = newClient(t, srv.Client(t)).PermitExpirableSemaphore(name)
			}
			if err := rel.Release(ctx, ids...); err != nil {
				t.Fatal(err)
			}
			close(open)
			if by == "other" {
				// The holder's watchdog learns at its next renewal; after that it sends none.
				eventually(t, 3*time.Second, "a renewal answered 'gone'", func() bool { return len(renewals) >= 1 })
				if err := p.Release(ctx, ids...); !errors.Is(err, redisson.ErrNotHeld) {
					t.Fatalf("holder's Release after another Client released = %v; want ErrNotHeld", err)
				}
			}
			// The released permit is taken by another acquisition; a renewal must never extend that one.
			ids2, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute), redisson.WithWait(2*time.Second))
			if err != nil {
				t.Fatalf("Acquire after release = %v", err)
			}
			if _, err := p.RemainingLease(ctx, ids[0]); !errors.Is(err, redisson.ErrNotHeld) {
				t.Fatalf("RemainingLease of the released permit = %v; want ErrNotHeld", err)
			}
			if n, l := a15Avail(t, p), a15Leased(t, admin, name); n != 0 || l != 1 {
				t.Fatalf("%d available, %d leased; want 0, 1", n, l)
			}
			_ = p.Release(ctx, ids2...)
		})
	}
}

// PASSING. Close racing watchdog acquisitions: every permit in the leases ZSET belongs to an
// acquisition reported successful (none registered after Close, none leaked by a failed one).
func TestAttack15CloseRacingLeasedAcquire(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	c := newClient(t, srv.Client(t))
	const name, total = "closerace", 3
	p := c.PermitExpirableSemaphore(name)
	if _, err := p.TrySetPermits(ctx, total); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	held := map[string]bool{}
	var wg sync.WaitGroup
	started := make(chan struct{}, 6)
	for g := 0; g < 6; g++ {
		spawn(&wg, func() {
			sent := false
			defer func() {
				if !sent {
					started <- struct{}{}
				}
			}()
			for i := 0; ; i++ {
				ids, err := p.Acquire(ctx, 1, redisson.WithWait(5*time.Second))
				if i == 3 {
					started <- struct{}{}
					sent = true
				}
				if err != nil {
					if !errors.Is(err, redisson.ErrClosed) && !errors.Is(err, redisson.ErrNotObtained) {
						t.Errorf("Acquire = %v", err)
					}
					return
				}
				if err := p.Release(ctx, ids...); err != nil {
					if !errors.Is(err, redisson.ErrClosed) {
						t.Errorf("Release = %v", err)
					}
					mu.Lock()
					held[ids[0]] = true
					mu.Unlock()
					return
				}
			}
		})
	}
	for g := 0; g < 6; g++ {
		<-started
	}
	_ = c.Close()
	wg.Wait()
	members, err := admin.ZRange(ctx, "{"+name+"}:~sl", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if !held[m] {
			t.Errorf("permit %s leased in Redis but no caller holds it (leaked by Close racing Acquire)", m)
		}
	}
	n, err := newClient(t, srv.Client(t)).PermitExpirableSemaphore(name).AvailablePermits(ctx)
	if err != nil || n+int64(len(members)) != total {
		t.Fatalf("%d available + %d leased (%v); want %d", n, len(members), err, total)
	}
}

// PASSING. Wrong-type keys: a leases key of another type fails every semaphore call with
// ErrWrongType and changes nothing; a latch key holding a hash, "0" or "-3" fails every latch call
// with ErrWrongType; bad counts are ErrInvalidArgument.
func TestAttack15WrongTypesAndBadInput(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t)
	p := c.PermitExpirableSemaphore("wt")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	admin.Set(ctx, "{wt}:~sl", "junk", 0)
	if _, err := p.TryAcquire(ctx, 1, redisson.WithLease(time.Minute)); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("TryAcquire with a string leases key = %v; want ErrWrongType", err)
	}
	if err := c.Semaphore("wt").Release(ctx, 1); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Semaphore.Release with a string leases key = %v; want ErrWrongType", err)
	}
	if err := p.Release(ctx, "x#1"); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("Release with a string leases key = %v; want ErrWrongType", err)
	}
	if v := admin.Get(ctx, "{wt}").Val(); v != "2" {
		t.Errorf("permits = %q after refused calls; want 2", v)
	}
	l := c.CountDownLatch("lt")
	for _, bad := range []int64{0, -1} {
		if ok, err := l.TrySetCount(ctx, bad); ok || !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("TrySetCount(%d) = %v, %v; want ErrInvalidArgument", bad, ok, err)
		}
	}
	if ex := admin.Exists(ctx, "{lt}").Val(); ex != 0 {
		t.Errorf("latch key exists after bad TrySetCount")
	}
	for _, setv := range []func(){
		func() { admin.Del(ctx, "{lt}"); admin.HSet(ctx, "{lt}", "f", "1") },
		func() { admin.Del(ctx, "{lt}"); admin.Set(ctx, "{lt}", "0", 0) },
		func() { admin.Del(ctx, "{lt}"); admin.Set(ctx, "{lt}", "-3", 0) },
	} {
		setv()
		before := admin.Dump(ctx, "{lt}").Val()
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if err := l.Wait(wctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Wait = %v; want ErrWrongType", err)
		}
		cancel()
		if _, err := l.CountDown(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("CountDown = %v; want ErrWrongType", err)
		}
		if _, err := l.TrySetCount(ctx, 3); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("TrySetCount = %v; want ErrWrongType", err)
		}
		if _, err := l.Count(ctx); !errors.Is(err, redisson.ErrWrongType) {
			t.Errorf("Count = %v; want ErrWrongType", err)
		}
		if after := admin.Dump(ctx, "{lt}").Val(); after != before {
			t.Errorf("latch key changed by refused calls")
		}
	}
}

// PASSING. Late copies of a latch's CountDown and TrySetCount from a finished round, replayed after the
// latch was re-armed (or reached zero), change nothing.
func TestAttack15LatchLateCopiesAfterRearm(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := newA11Hook()
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	l := newClient(t, rdb).CountDownLatch("rearm")
	hook.set(a15Latch("s"), false)
	if ok, err := l.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	set := hook.last(t)
	hook.set(a15Latch("d"), false)
	if n, err := l.CountDown(ctx); n != 0 || err != nil {
		t.Fatal(n, err)
	}
	down := hook.last(t)
	hook.release()
	// Zero: a late copy of the set must not arm it again.
	if err := admin.Do(ctx, set...).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Count(ctx); n != 0 || err != nil {
		t.Fatalf("Count after a late TrySetCount copy = %d, %v; want 0", n, err)
	}
	// Round 2: a late copy of round 1's count-down must not count it down.
	if ok, err := l.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := admin.Do(ctx, down...).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Count(ctx); n != 2 || err != nil {
		t.Fatalf("Count of round 2 after a late count-down copy of round 1 = %d, %v; want 2", n, err)
	}
}

// PASSING. A stray "*" on the latch channel (round 1's message read late) does not release a waiter of
// round 2: it re-reads the count and waits on.
func TestAttack15LatchStaleMessageDoesNotReleaseNewRound(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := &a15Hook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	w := newClient(t, rdb, redisson.WithRepollInterval(time.Hour)).CountDownLatch("stale")
	ctl := newClient(t, srv.Client(t)).CountDownLatch("stale")
	if ok, err := ctl.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatal(ok, err)
	}
	polls := make(chan struct{}, 16)
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		err := next()
		if len(a) == 2 && a[0] == "get" && a[1] == "{stale}" {
			polls <- struct{}{}
		}
		return err
	})
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- w.Wait(wctx) }()
	<-polls
	eventually(t, 5*time.Second, "W subscribed", func() bool {
		return admin.PubSubNumSub(ctx, "{stale}:~lw").Val()["{stale}:~lw"] == 1
	})
	for i := 0; i < 2; i++ {
		admin.Publish(ctx, "{stale}:~lw", "*")
		select {
		case <-polls:
		case err := <-done:
			t.Fatalf("round-2 waiter released by a stray message (count 2): %v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("the stray message did not make W re-read the count")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("round-2 waiter released by a stray message (count 2): %v", err)
	default:
	}
	_, _ = ctl.CountDown(ctx)
	_, _ = ctl.CountDown(ctx)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("W not released after the count reached zero")
	}
}

// Fixed (review 15: a round counter; Wait returns once its round ended). Was: a waiter present when the count reaches zero is not released if the latch is re-armed
// before the waiter reads the count (lost wake-up): it now waits for the next round.
//
// Scenario: count 1; W waits (subscribed). Another Client counts down to zero (one "*" published) and
// at once re-arms the latch (TrySetCount(1), which the doc offers: "may be set again to be used once
// more"). W's re-read of the count, prompted by the "*", lands after the re-arm (held back here to
// land there deterministically; in production the pub/sub delivery and the GET round trip are that
// window).
// Expected (issue 9: "waiters released within ~1 s of the last count-down by notification"): W
// returns.
// Actual: the waiter decides by GET alone; the message says "zero happened" but the count (deleted at
// zero, then set again) keeps no trace of the round, so W sees 1 and waits on, for a round it was not
// waiting for. Suggested fix: a round number (INCR of "{name}:~lr" in the "reaching zero" branch,
// carried in the message); Wait reads it with its first count and returns when it has moved.
func TestAttack15LatchRearmLosesRoundOneWaiter(t *testing.T) {
	ctx := t.Context()
	_, admin, srv := setup(t)
	hook := &a15Hook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	w := newClient(t, rdb, redisson.WithRepollInterval(time.Hour)).CountDownLatch("aba")
	ctl := newClient(t, srv.Client(t)).CountDownLatch("aba")
	if ok, err := ctl.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	polls, gate := make(chan struct{}, 16), make(chan struct{})
	var mu sync.Mutex
	n := 0
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		if len(a) == 2 && a[0] == "get" && a[1] == "{aba}" {
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			polls <- struct{}{}
			if k == 2 {
				select {
				case <-gate:
				case <-time.After(10 * time.Second):
				}
			}
		}
		return next()
	})
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- w.Wait(wctx) }()
	<-polls
	eventually(t, 5*time.Second, "W subscribed", func() bool {
		return admin.PubSubNumSub(ctx, "{aba}:~lw").Val()["{aba}:~lw"] == 1
	})
	if v, err := ctl.CountDown(ctx); v != 0 || err != nil {
		t.Fatal(v, err)
	}
	select {
	case <-polls:
	case <-time.After(5 * time.Second):
		t.Fatal("precondition: the zero message did not make W re-read the count")
	}
	if ok, err := ctl.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	close(gate)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("W, waiting when the count reached zero, not released: the latch was re-armed before W read the count")
	}
	_, _ = ctl.CountDown(ctx)
}
