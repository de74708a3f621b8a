package redisson_test

// Attack 9: SpinLock, MultiLock and RedLock (spinlock.go, multilock.go, the group dispatch of
// hold.go). Each failing test states the scenario, the expected behaviour and what happens; tests
// marked PASSING are kept as regression tests of attacks the code withstood.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a9NoPanic runs f and turns a panic into a test error (so that one panicking call does not take
// the whole test binary down).
func a9NoPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// a9Quick is the go-redis tuning of independent(): quick to give up on a silent server.
func a9Quick(o *redis.Options) {
	o.MaxRetries, o.DialTimeout, o.DialerRetries, o.PoolSize = 1, 200*time.Millisecond, 1, 1000
}

// FIXED. Was: defect: a group acquisition does not end when a part's Client is closed.
//
// Scenario: (a) a MultiLock over a lock of Client A and a lock of Client B, B closed before the
// Lock call; (b) the same MultiLock, the part of B held by another owner, B closed while the group
// waits for it; (c) a RedLock over three parts, two of them on Clients closed before the call (no
// majority can ever be acquired).
//
// Expected (MultiLock.Lock / RedLock.Lock doc: "waiting until it succeeds, ctx ends, the optional
// WithWait bound passes, or a part's Client is closed"): Lock returns promptly, with an error
// matching ErrNotObtained and ErrClosed.
//
// Actual: group.acquire stops retrying only on the wait's end, ErrWrongType or ErrInvalidArgument;
// the part's ErrClosed just fails the round, and a new round starts after a random pause, forever:
// Lock spins (a round every ~50ms) until the caller's context ends, and then reports the context's
// deadline. Observed: every run (4/4), each case returns only at the 3s context deadline.
func TestAttack9GroupLockClosedPartClient(t *testing.T) {
	srv := redistest.Start(t)
	const bound = 3 * time.Second
	check := func(t *testing.T, what string, lock func(ctx context.Context) (*redisson.Hold, error)) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), bound)
		defer cancel()
		start := time.Now()
		h, err := lock(ctx)
		took := time.Since(start)
		if err == nil {
			_ = h.Unlock(t.Context())
			t.Errorf("%s: acquired with a closed part Client", what)
			return
		}
		if !errors.Is(err, redisson.ErrClosed) || took > bound/2 {
			t.Errorf("%s: Lock returned after %v with %v; want ErrClosed at once (a part's Client was closed)",
				what, took.Round(time.Millisecond), err)
		}
	}

	t.Run("MultiLockClosedBefore", func(t *testing.T) {
		a := newClient(t, srv.Client(t))
		b := newClient(t, srv.Client(t))
		ml := redisson.NewMultiLock(a.Lock("a9-closed-1a"), b.Lock("a9-closed-1b"))
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		check(t, "MultiLock, part Client closed before Lock", func(ctx context.Context) (*redisson.Hold, error) {
			return ml.Lock(ctx)
		})
	})
	t.Run("MultiLockClosedWhileWaiting", func(t *testing.T) {
		a := newClient(t, srv.Client(t))
		b := newClient(t, srv.Client(t))
		other := newClient(t, srv.Client(t))
		held := mustLock(t, other.Lock("a9-closed-2b"), t.Context())
		defer func() { _ = held.Unlock(t.Context()) }()
		// B's part first: a group waits only for its first part (the others get one attempt).
		ml := redisson.NewMultiLock(b.Lock("a9-closed-2b"), a.Lock("a9-closed-2a"))
		eventuallyClosed := make(chan struct{})
		go func() {
			defer close(eventuallyClosed)
			deadline := time.Now().Add(2 * time.Second)
			for b.Stats().Waiting == 0 && time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
			}
			_ = b.Close()
		}()
		check(t, "MultiLock, part Client closed while waiting", func(ctx context.Context) (*redisson.Hold, error) {
			return ml.Lock(ctx)
		})
		<-eventuallyClosed
	})
	t.Run("RedLockClosedMajority", func(t *testing.T) {
		_, cs := independent(t, 3) // a RedLock's parts are on distinct servers
		a, b, c := cs[0], cs[1], cs[2]
		rl := redisson.NewRedLock(a.Lock("a9-closed-3"), b.Lock("a9-closed-3"), c.Lock("a9-closed-3"))
		_ = b.Close()
		_ = c.Close()
		check(t, "RedLock, 2 of 3 part Clients closed", func(ctx context.Context) (*redisson.Hold, error) {
			return rl.Lock(ctx)
		})
	})
}

// FIXED. Was: defect: a zero-value MultiLock or RedLock "acquires" nothing and reports success; some of its
// calls panic.
//
// Scenario: `var m redisson.MultiLock` and `var r redisson.RedLock` (not made by NewMultiLock /
// NewRedLock), as a struct field left unset would be. Lock, TryLock, RemainingTTL, and the HoldCount
// of whatever Lock returned.
//
// Expected: as for a zero Lock (ErrInvalidArgument: "lock handle not created by a Client"), every
// call fails with ErrInvalidArgument; nothing panics.
//
// Actual: the zero group has err == nil and quorum 0: Lock and TryLock succeed with a Hold that
// holds no lock at all (mutual exclusion silently lost); RemainingTTL indexes ttls[quorum-1] =
// ttls[-1] and panics (index out of range [-1]); so does Hold.HoldCount (counts[-1]). Every run (4/4).
func TestAttack9ZeroValueGroup(t *testing.T) {
	ctx := t.Context()
	var zl redisson.Lock
	if _, err := zl.Lock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("control: zero Lock.Lock = %v; want ErrInvalidArgument", err)
	}
	groups := map[string]redisson.Locker{"MultiLock": &redisson.MultiLock{}, "RedLock": &redisson.RedLock{}}
	for _, kind := range []string{"MultiLock", "RedLock"} {
		l := groups[kind]
		a9NoPanic(t, "zero "+kind+".Lock", func() {
			h, err := l.Lock(ctx)
			if err == nil {
				t.Errorf("zero %s.Lock succeeded (a hold over no lock at all); want ErrInvalidArgument", kind)
				a9NoPanic(t, "HoldCount of a zero "+kind+"'s hold", func() {
					if _, err := h.HoldCount(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
						t.Errorf("HoldCount of a zero %s's hold = %v; want an error", kind, err)
					}
				})
				_ = h.Unlock(ctx)
			} else if !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Errorf("zero %s.Lock = %v; want ErrInvalidArgument", kind, err)
			}
		})
		a9NoPanic(t, "zero "+kind+".TryLock", func() {
			h, err := l.TryLock(ctx)
			if err == nil {
				t.Errorf("zero %s.TryLock succeeded; want ErrInvalidArgument", kind)
				_ = h.Unlock(ctx)
			}
		})
		a9NoPanic(t, "zero "+kind+".RemainingTTL", func() {
			if _, err := l.RemainingTTL(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Errorf("zero %s.RemainingTTL = %v; want ErrInvalidArgument", kind, err)
			}
		})
	}
}

// FIXED. Was: defect: a lock given twice to a MultiLock through a nested group is not refused.
//
// Scenario: one Client, lock a; NewMultiLock(a, NewMultiLock(a)) (the same lock, same Client and
// name, once directly and once inside a group), Lock with a 3s context.
//
// Expected (NewMultiLock doc: "Nil locks, or the same lock (same Client and name) twice, are
// reported by the first call on the result (ErrInvalidArgument)"; groups are accepted as parts, see
// isNilLocker): ErrInvalidArgument at once, nothing sent to Redis.
//
// Actual: newGroup only checks the identity of the top-level parts (a nested group is no
// groupPart), so the duplicate goes unnoticed: the outer round takes a, the inner group then waits
// for a (held by the outer round, in the same Client's local queue) until the round ends, releases,
// and retries, until the context ends: Lock returns after 3s with the context's deadline, not
// ErrInvalidArgument. Every run.
func TestAttack9NestedGroupDuplicate(t *testing.T) {
	c, _, _ := setup(t)
	a := c.Lock("a9-nested")
	ml := redisson.NewMultiLock(a, redisson.NewMultiLock(a))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	start := time.Now()
	h, err := ml.Lock(ctx)
	if err == nil {
		_ = h.Unlock(t.Context())
		t.Fatal("a MultiLock holding the same lock twice (once nested) was acquired")
	}
	if !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("Lock after %v = %v; want ErrInvalidArgument at once (lock %q appears twice)",
			time.Since(start).Round(time.Millisecond), err, a.Name())
	}
}

// FIXED (re-entry is now all live parts or none; a part released by an unlock also counts as gone).
// Was: Defect: after a partial re-entry, a RedLock keeps its hold (Context alive) with only a minority
// of its parts held, while another owner acquires the RedLock: two owners.
//
// Scenario: RedLock over 3 independent servers (Clients A, watchdog 3s); part 2 reached through a
// proxy. h1 = Lock. The proxy then delays by 300ms, and h2 = h1.Reenter(ctx with a 150ms timeout):
// parts 0 and 1 re-enter, part 2 times out, so Reenter succeeds (2 of 3 ≥ the quorum) with a level
// that has no part 2. The delay is lifted and h1 is unlocked: that releases level 1 of every part,
// the last level of part 2, which is freed (its part hold ends with context.Canceled). h2 now holds
// parts 0 and 1. Another Client then force-unlocks part 0; A's watchdog finds it lost.
//
// Expected: with only part 1 held (1 of 3, below the majority), h2's Context is cancelled with
// ErrLockLost, and in any case no other RedLock over the same locks can be acquired while h2's
// Context is alive.
//
// Actual: groupOwner.alive counts parts held since the acquisition and is decremented only by a
// part's loss (partEnded ignores a part hold ended by a release), so part 2's release through h1's
// unlock is never subtracted: alive = 3 → 2 after the loss of part 0, still ≥ the quorum: h2's
// Context stays alive, and Clients B acquire the RedLock (parts 0 and 2) at the same time. Every
// run (4/4).
func TestAttack9RedLockPartialReenterMiscount(t *testing.T) {
	const name = "a9-red-reenter"
	var as, bs []*redisson.Client
	var proxy *redistest.Proxy
	for i := range 3 {
		s := redistest.Start(t)
		var rdb *redis.Client
		if i == 2 {
			proxy = redistest.NewProxy(t, s.Addr())
			rdb = s.Client(t, func(o *redis.Options) { o.Addr = proxy.Addr() })
		} else {
			rdb = s.Client(t)
		}
		as = append(as, newClient(t, rdb, redisson.WithWatchdogTimeout(3*time.Second)))
		bs = append(bs, newClient(t, s.Client(t)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	h1, err := redLockOf(as, name).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proxy.Delay(300 * time.Millisecond)
	rctx, rcancel := context.WithTimeout(ctx, 150*time.Millisecond)
	h2, err := h1.Reenter(rctx)
	rcancel()
	proxy.Delay(0)
	if err != nil {
		// FIXED: a group re-enters every live part or none, so no level can lack a part that the
		// others have. The failed re-entry took back what it took: every part holds one level.
		if !errors.Is(err, redisson.ErrNotObtained) {
			t.Fatalf("a failed re-entry: %v; want ErrNotObtained", err)
		}
		for i, p := range h1.Parts() {
			eventually(t, 5*time.Second, fmt.Sprintf("part %d back to one level", i), func() bool {
				n, err := p.HoldCount(ctx)
				return err == nil && n == 1
			})
		}
		if err := h1.Context().Err(); err != nil {
			t.Fatalf("the group was ended by a failed re-entry: %v", context.Cause(h1.Context()))
		}
		mustUnlock(t, h1)
		return
	}
	if p := h2.Parts(); p[2] != nil || p[0] == nil || p[1] == nil {
		t.Fatalf("the re-entry's parts: %v; want parts 0 and 1 only", p)
	}
	if err := h1.Unlock(ctx); err != nil {
		t.Fatalf("unlock of level 1: %v", err)
	}
	eventually(t, 5*time.Second, "part 2 to be free (its only level was released)", func() bool {
		locked, err := bs[2].Lock(name).IsLocked(ctx)
		return err == nil && !locked
	})
	if _, err := bs[0].Lock(name).ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "part 0's loss to be noticed", func() bool {
		return h2.Parts()[0].Context().Err() != nil
	})
	// Only part 1 is held now.
	select {
	case <-h2.Context().Done():
		return // told: fine
	case <-time.After(2 * time.Second):
	}
	t.Errorf("h2's Context alive with 1 of 3 parts held (part 0 lost, part 2 released by h1's unlock)")
	h3, err := redLockOf(bs, name).TryLock(ctx)
	if err == nil {
		if h2.Context().Err() == nil {
			t.Errorf("two owners: another RedLock acquired parts %v while h2's Context is alive", partsHeld(h3))
		}
		_ = h3.Unlock(ctx)
	}
	_ = h2.Unlock(ctx)
}

// partsHeld lists the indexes of the parts a group hold holds.
func partsHeld(h *redisson.Hold) []int {
	var idx []int
	for i, p := range h.Parts() {
		if p != nil {
			idx = append(idx, i)
		}
	}
	return idx
}

// FIXED. Was: defect: one silent server (a minority) makes a RedLock attempt last ~5s instead of at most
// lease/10 (≤ 1s), so a RedLock with a lease of a few seconds cannot be acquired at all while a
// single one of its servers is unreachable.
//
// Scenario: RedLock over 3 independent servers; part 0 through a proxy that is black-holed (a
// silent network: the classic minority failure Redlock is meant to tolerate). TryLock with
// WithLease(3s).
//
// Expected (RedLock doc: "An attempt tries every part at once (one attempt each, bounded by a tenth
// of the lease, at most 1s) and succeeds if ... at least N/2+1 were acquired and the validity left
// ... is positive"): parts 1 and 2 are acquired within milliseconds; the attempt on part 0 gives up
// after 300ms; TryLock succeeds in well under a second.
//
// Actual: the attempt on part 0 ends at 300ms, but its TryLock then undoes the unknown outcome
// synchronously (mutex.undo on a detached 5s context), blocked by the silent network; redRound
// waits for every part (eachPart), so the elapsed time is ~5s > the lease: "a majority was acquired
// too late", both healthy parts are released, TryLock fails. Every run (4/4); a Lock with a wait
// fails every round the same way.
func TestAttack9RedLockSilentMinority(t *testing.T) {
	const name = "a9-red-silent"
	var clients []*redisson.Client
	var proxy *redistest.Proxy
	for i := range 3 {
		s := redistest.Start(t)
		var rdb *redis.Client
		if i == 0 {
			proxy = redistest.NewProxy(t, s.Addr())
			rdb = s.Client(t, a9Quick, func(o *redis.Options) { o.Addr = proxy.Addr() })
		} else {
			rdb = s.Client(t, a9Quick)
		}
		clients = append(clients, newClient(t, rdb))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	attackWarmUp(t, clients[0])
	proxy.Blackhole(true)
	defer proxy.Blackhole(false)
	start := time.Now()
	h, err := redLockOf(clients, name).TryLock(ctx, redisson.WithLease(3*time.Second))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("TryLock with 2 of 3 servers healthy failed after %v: %v", took.Round(time.Millisecond), err)
	}
	defer func() { _ = h.Unlock(ctx) }()
	if took > 1500*time.Millisecond {
		t.Errorf("TryLock took %v; want about lease/10 (300ms) at most", took.Round(time.Millisecond))
	}
}

// FIXED. Was: defect: the final Unlock of a MultiLock whose part was lost (not yet noticed by the watchdog)
// reports the loss, but the group's Context ends with cause context.Canceled, as after a successful
// release.
//
// Scenario: a MultiLock over two locks of Client A (default 30s watchdog); Client B force-unlocks
// part 0; A unlocks the group before its watchdog notices.
//
// Expected (Hold.Context doc: cancelled "when the owner's final unlock succeeds (cause
// context.Canceled) or when the lock is lost (cause matching ErrLockLost: ... an unlock failed
// ...)"; a single Lock in the same situation does end with ErrLockLost, checked here as a
// control): Unlock fails with ErrLockLost (not ErrNotHeld, since it released the other part: see
// MultiLock), and the group's Context cause matches ErrLockLost, so that work watching the Context
// learns that the protected section ran without the lock.
//
// Actual: groupLevel.unlock stops the parts' watchers before unlocking them, then cancels the
// group's context with context.Canceled whatever the parts answered: cause context.Canceled. Every
// run.
func TestAttack9MultiLockUnlockAfterUnnoticedLoss(t *testing.T) {
	a, _, srv := setup(t)
	b := newClient(t, srv.Client(t))
	ctx := t.Context()

	// Control: a single Lock.
	single := mustLock(t, a.Lock("a9-unnoticed-single"), ctx)
	if _, err := b.Lock("a9-unnoticed-single").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := single.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("control: unlock of a force-unlocked Lock = %v; want ErrNotHeld", err)
	}
	if cause := context.Cause(single.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("control: single Lock's cause %v; want ErrLockLost", cause)
	}

	ml := redisson.NewMultiLock(a.Lock("a9-unnoticed-0"), a.Lock("a9-unnoticed-1"))
	h := mustLock(t, ml, ctx)
	if _, err := b.Lock("a9-unnoticed-0").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	// ErrLockLost, not ErrNotHeld: the Unlock released the other part, so it did change something
	// (ErrNotHeld means "changing nothing", as after a loss already reported).
	err := h.Unlock(ctx)
	if !errors.Is(err, redisson.ErrLockLost) || errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("unlock of a MultiLock with a part force-unlocked = %v; want ErrLockLost, not ErrNotHeld", err)
	}
	if h.Context().Err() == nil {
		t.Fatal("the group's Context is alive after its final Unlock")
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Errorf("the group's Context cause after an Unlock that reported %q is %v; want ErrLockLost", err, cause)
	}
	if locked, err := a.Lock("a9-unnoticed-1").IsLocked(ctx); err != nil || locked {
		t.Errorf("the other part was left locked (%v, %v)", locked, err)
	}
}

// FIXED. Was: defect: a MultiLock waiting for a FairLock part loses its place in the FairLock's queue every
// round, so a FairLock waiter that came later is served first (FIFO broken).
//
// Scenario: Client H holds FairLock F. M = NewMultiLock(F of Client M) calls Lock and queues for F
// (first in line). Then W, a plain FairLock.Lock of F on Client W, queues (second in line). H holds
// F for 2.5s, then unlocks.
//
// Expected (FairLock: strict first come, first served; MultiLock: "each waiting its turn"): M, first
// in line, gets F before W.
//
// Actual: M's round waits for F at most 1.5s per part; when the round ends without F (nothing else
// was taken), M leaves the FairLock queue, pauses and queues again, now behind W: W is served first,
// M only after W releases. Every run (4/4).
func TestAttack9MultiLockFairPartLosesPlace(t *testing.T) {
	const name = "a9-fair-place"
	hc, _, srv := setup(t)
	mc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	held := mustLock(t, hc.FairLock(name), ctx)

	var order []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	take := func(who string, l redisson.Locker) {
		h, err := l.Lock(ctx)
		if err != nil {
			t.Errorf("%s: %v", who, err)
			return
		}
		mu.Lock()
		order = append(order, who)
		mu.Unlock()
		time.Sleep(100 * time.Millisecond) // the critical section
		_ = h.Unlock(ctx)
	}
	spawn(&wg, func() { take("multi", redisson.NewMultiLock(mc.FairLock(name))) })
	eventually(t, 5*time.Second, "the MultiLock to queue", func() bool { return mc.Stats().Waiting == 1 })
	spawn(&wg, func() { take("single", wc.FairLock(name)) })
	eventually(t, 5*time.Second, "the FairLock waiter to queue", func() bool { return wc.Stats().Waiting == 1 })
	time.Sleep(2500 * time.Millisecond) // H's critical section: longer than a MultiLock round
	mustUnlock(t, held)
	wg.Wait()
	if len(order) != 2 || order[0] != "multi" {
		t.Errorf("service order %v; want [multi single] (the MultiLock queued first)", order)
	}
}

// PASSING (kept as a regression test): two MultiLocks over the same two locks in opposite orders,
// on different Clients, under contention: never both inside, and both make progress (no deadlock,
// no livelock within the bound).
func TestAttack9MultiLockOppositeOrders(t *testing.T) {
	sx, sy := redistest.Start(t), redistest.Start(t)
	a0, a1 := newClient(t, sx.Client(t)), newClient(t, sy.Client(t))
	b0, b1 := newClient(t, sx.Client(t)), newClient(t, sy.Client(t))
	m1 := redisson.NewMultiLock(a0.Lock("a9-opp-x"), a1.Lock("a9-opp-y"))
	m2 := redisson.NewMultiLock(b1.Lock("a9-opp-y"), b0.Lock("a9-opp-x"))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Second)
	defer cancel()
	var inside, overlaps atomic.Int32
	var done [2]atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	for i, m := range []*redisson.MultiLock{m1, m2} {
		spawn(&wg, func() {
			for range 3 {
				h, err := m.Lock(ctx)
				if err != nil {
					t.Errorf("owner %d: %v", i, err)
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				time.Sleep(20 * time.Millisecond)
				inside.Add(-1)
				if err := h.Unlock(ctx); err != nil {
					t.Errorf("owner %d: unlock: %v", i, err)
				}
				done[i].Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("6 acquisitions in %v", time.Since(start).Round(time.Millisecond))
	if overlaps.Load() != 0 {
		t.Errorf("%d overlaps", overlaps.Load())
	}
	if done[0].Load() != 3 || done[1].Load() != 3 {
		t.Errorf("progress %d, %d; want 3, 3", done[0].Load(), done[1].Load())
	}
}

// PASSING (kept as a regression test): a RedLock attempt whose parts all answer too slowly (proxy
// Delay beyond lease/10) fails, and leaves nothing held on any server once the delayed requests have
// landed (well before the lease would have freed them).
func TestAttack9RedLockSlowPartsNothingLeft(t *testing.T) {
	const name = "a9-red-slow"
	var clients []*redisson.Client
	var admins []*redis.Client
	var proxies []*redistest.Proxy
	for range 3 {
		s := redistest.Start(t)
		p := redistest.NewProxy(t, s.Addr())
		proxies = append(proxies, p)
		admins = append(admins, s.Client(t))
		clients = append(clients, newClient(t, s.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	for _, c := range clients {
		attackWarmUp(t, c)
	}
	for _, p := range proxies {
		p.Delay(700 * time.Millisecond)
	}
	_, err := redLockOf(clients, name).TryLock(ctx, redisson.WithLease(20*time.Second)) // attempts bounded by 1s
	if err == nil {
		t.Fatal("acquired through a 1.4s round trip with attempts bounded by 1s? (test setup)")
	}
	for _, p := range proxies {
		p.Delay(0)
	}
	key := redisson.LockKeyOf(clients[0], name)
	// The undo is retried in the background (250ms, 1s, 4s after): within 6s nothing may be held.
	eventually(t, 6*time.Second, "every part to be free", func() bool {
		for _, a := range admins {
			if n, err := a.Exists(ctx, key).Result(); err != nil || n != 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(time.Second) // nothing lands later
	for i, a := range admins {
		if v, err := a.Get(ctx, key).Result(); !errors.Is(err, redis.Nil) {
			t.Errorf("server %d: %s = %q (%v) after the failed attempt: a part left held", i, key, v, err)
		}
	}
}

// PASSING (kept as a regression test): closing a part's Client while a MultiLock is held loses the
// group (cause ErrLockLost), and the group's Unlock then releases the other parts.
func TestAttack9MultiLockPartClientClosed(t *testing.T) {
	a, _, srv := setup(t)
	b := newClient(t, srv.Client(t))
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	ml := redisson.NewMultiLock(a.Lock("a9-pcc-a"), b.SpinLock("a9-pcc-b"))
	h := mustLock(t, ml, ctx)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the group was not told of its part's Client closing")
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("cause %v; want ErrLockLost", cause)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("Unlock of the lost group = %v; want ErrNotHeld", err)
	}
	if locked, err := c.Lock("a9-pcc-a").IsLocked(ctx); err != nil || locked {
		t.Errorf("part a left locked (%v, %v)", locked, err)
	}
}

// PASSING (kept as a regression test): concurrent Unlock and Reenter of one group Hold from many
// goroutines: exactly one Unlock succeeds, the re-entered levels stay usable, and once all are
// unlocked nothing is held and the Context has ended.
func TestAttack9GroupHoldConcurrentUnlock(t *testing.T) {
	c, _, srv := setup(t)
	other := newClient(t, srv.Client(t))
	withRedLockPeers(t, c)
	withRedLockPeers(t, other)
	ctx := t.Context()
	for _, kind := range []string{"MultiLock", "RedLock"} {
		t.Run(kind, func(t *testing.T) {
			name := "a9-conc-" + kind
			h := mustLock(t, lockOf(c, kind, name), ctx)
			var ok atomic.Int32
			var levels sync.Map
			var wg sync.WaitGroup
			for i := range 16 {
				spawn(&wg, func() {
					if i%2 == 0 {
						if err := h.Unlock(ctx); err == nil {
							ok.Add(1)
						}
						return
					}
					if l, err := h.Reenter(ctx); err == nil {
						levels.Store(i, l)
					}
				})
			}
			wg.Wait()
			if ok.Load() != 1 {
				t.Errorf("%d concurrent Unlocks succeeded; want 1", ok.Load())
			}
			levels.Range(func(_, v any) bool {
				if err := v.(*redisson.Hold).Unlock(ctx); err != nil {
					t.Errorf("unlock of a re-entered level: %v", err)
				}
				return true
			})
			if h.Context().Err() == nil {
				t.Error("Context alive after every level was unlocked")
			}
			if locked, err := lockOf(other, kind, name).IsLocked(ctx); err != nil || locked {
				t.Errorf("left locked (%v, %v)", locked, err)
			}
		})
	}
}

// PASSING (kept as a regression test): SpinLock name collisions with the other kinds, both ways,
// waiting or not, fail with ErrWrongType at once; a spinning wait honours WithWait and ends promptly
// when its context is cancelled; ContextWithHold re-enters a SpinLock.
func TestAttack9SpinLockKindsAndBounds(t *testing.T) {
	c, _, srv := setup(t, redisson.WithSpinBackoff(time.Millisecond, 20*time.Millisecond))
	ctx := t.Context()
	for _, kind := range lockKinds {
		name := "a9-spin-kind-" + kind
		h := mustLock(t, lockOf(c, kind, name), ctx)
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if _, err := c.SpinLock(name).Lock(wctx); !errors.Is(err, redisson.ErrWrongType) || wctx.Err() != nil {
			t.Errorf("SpinLock over a held %s: %v; want ErrWrongType at once", kind, err)
		}
		cancel()
		mustUnlock(t, h)
		sh := mustLock(t, c.SpinLock(name), ctx)
		wctx, cancel = context.WithTimeout(ctx, 2*time.Second)
		if _, err := lockOf(c, kind, name).Lock(wctx); !errors.Is(err, redisson.ErrWrongType) || wctx.Err() != nil {
			t.Errorf("%s over a held SpinLock: %v; want ErrWrongType at once", kind, err)
		}
		cancel()
		mustUnlock(t, sh)
	}

	other := newClient(t, srv.Client(t))
	held := mustLock(t, c.SpinLock("a9-spin-bound"), ctx)
	start := time.Now()
	_, err := other.SpinLock("a9-spin-bound").TryLock(ctx, redisson.WithWait(300*time.Millisecond))
	if took := time.Since(start); !errors.Is(err, redisson.ErrNotObtained) || took < 280*time.Millisecond || took > time.Second {
		t.Errorf("TryLock(WithWait(300ms)) = %v after %v", err, took)
	}
	cctx, ccancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() {
		_, err := other.SpinLock("a9-spin-bound").Lock(cctx)
		got <- err
	}()
	eventually(t, 2*time.Second, "the spinner to count as waiting", func() bool { return other.Stats().Waiting == 1 })
	ccancel()
	cancelled := time.Now()
	if err := regressWait(t, got, 2*time.Second, "the cancelled spin"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled spin = %v; want context.Canceled", err)
	}
	if d := time.Since(cancelled); d > 200*time.Millisecond {
		t.Errorf("cancelled spin returned %v after the cancel", d)
	}
	lvl, err := c.SpinLock("a9-spin-bound").Lock(redisson.ContextWithHold(ctx, held))
	if err != nil {
		t.Fatalf("re-entry through ContextWithHold: %v", err)
	}
	if n, err := held.HoldCount(ctx); err != nil || n != 2 {
		t.Errorf("HoldCount = %d, %v; want 2", n, err)
	}
	mustUnlock(t, lvl)
	mustUnlock(t, held)
	if other.Stats().Waiting != 0 {
		t.Errorf("Stats.Waiting = %d after the waits ended", other.Stats().Waiting)
	}
}

// FIXED (a part found lost when the round ends fails the round). Was: Defect: MultiLock.Lock reports
// success although one of its parts was lost during the round, and
// is held by another owner when Lock returns.
//
// Scenario: Client A (watchdog 600ms); MultiLock(pa, pb), pb through a Client whose replies are
// delayed, so the round takes pa and its attempt on pb stays in flight. Meanwhile Client X
// force-unlocks pa and locks it itself; A's watchdog finds pa gone (the part hold ends with
// ErrLockLost). Then pb's attempt returns: the round took it.
//
// Expected ("all of them or none"): Lock does not return a hold over a part it no longer has: it
// notices the part's loss and goes on waiting (a new round, served once X releases pa), or fails;
// it never returns nil error while another owner holds pa.
//
// Actual: multiRound never looks back at the parts already taken; group.hold registers the lost
// part, whose context has already ended, and Lock returns (h, nil) with pa held by X: the returned
// Context is already cancelled (the loss is "signalled" at birth), but the error says the group was
// obtained; in 1 of 3 runs the Context was not even cancelled yet when Lock returned (the part's
// AfterFunc runs on its own goroutine). Every run (4/4) returns success with pa held by X.
func TestAttack9MultiLockReturnsLostPart(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	a := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(600*time.Millisecond))
	slow := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	x := newClient(t, srv.Client(t))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	mustUnlock(t, mustLock(t, slow.Lock("a9-lostpart-b"), ctx)) // a connection, scripts loaded
	p.Delay(time.Second)                                        // pb's attempt takes 2s from now on
	got := make(chan lockResult, 1)
	go func() {
		// Bounded: going on waiting (pa stays held by X) is a correct outcome too.
		h, err := redisson.NewMultiLock(a.Lock("a9-lostpart-a"), slow.Lock("a9-lostpart-b")).Lock(ctx, redisson.WithWait(6*time.Second))
		got <- lockResult{h, err}
	}()
	eventually(t, 5*time.Second, "the round to take pa", func() bool {
		locked, err := x.Lock("a9-lostpart-a").IsLocked(ctx)
		return err == nil && locked
	})
	if _, err := x.Lock("a9-lostpart-a").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	heldA := mustLock(t, x.Lock("a9-lostpart-a"), ctx)
	defer func() { _ = heldA.Unlock(t.Context()) }()
	eventually(t, 5*time.Second, "A's watchdog to find pa lost", func() bool { return a.Stats().Lost >= 1 })
	r := regressWait(t, got, 20*time.Second, "the MultiLock's Lock")
	p.Delay(0)
	if r.err != nil {
		// Not obtained is acceptable; so is a later success once pa is free again.
		return
	}
	defer func() { _ = r.h.Unlock(t.Context()) }()
	if heldA.Context().Err() == nil {
		t.Errorf("MultiLock.Lock returned success (Context err %v) while part %q is held by another owner",
			r.h.Context().Err(), "a9-lostpart-a")
	}
}

// PASSING (kept as a regression test): RedLock attempts whose parts' replies are lost (the
// acquisition ran, its reply never came, go-redis re-sent it) either hold the part or leave it free:
// after the group's Unlock (or the failed attempt) no part is left held on any server.
func TestAttack9RedLockLostRepliesNothingLeft(t *testing.T) {
	const name = "a9-red-drop"
	var clients []*redisson.Client
	var admins []*redis.Client
	var proxies []*redistest.Proxy
	for range 3 {
		s := redistest.Start(t)
		p := redistest.NewProxy(t, s.Addr())
		proxies = append(proxies, p)
		admins = append(admins, s.Client(t))
		clients = append(clients, newClient(t, s.Client(t, func(o *redis.Options) {
			o.Addr = p.Addr()
			o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
		})))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	for _, c := range clients {
		attackWarmUp(t, c)
	}
	key := redisson.LockKeyOf(clients[0], name)
	free := func() bool {
		for _, a := range admins {
			if n, err := a.Exists(ctx, key).Result(); err != nil || n != 0 {
				return false
			}
		}
		return true
	}
	for round := range 6 {
		for i, p := range proxies {
			if (round>>i)&1 == 1 || round == 5 {
				p.DropReplies(1)
			}
		}
		h, err := redLockOf(clients, name).TryLock(ctx, redisson.WithLease(20*time.Second))
		for _, p := range proxies {
			p.DropReplies(0)
		}
		if err == nil {
			if err := h.Unlock(ctx); err != nil {
				t.Errorf("round %d: unlock: %v", round, err)
			}
		}
		eventually(t, 6*time.Second, fmt.Sprintf("round %d: every part free", round), free)
	}
}
