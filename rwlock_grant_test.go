package redisson_test

// ReadWriteLock hand-overs (rw_grant in rw_value.lua, called by rw_release.lua, rw_force_unlock.lua and
// the undo of a wait; a waiter accepts a grant from its message when the ticket matches), and re-sent
// or late copies of its scripts.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// rwAcquireCall matches an rw_acquire.lua call (EVALSHA/EVAL with 2 keys, then owner, lease, level, mode,
// side, waiter timeout, vouch) of owner ("" any) in mode ("" any) on side ("r" or "x").
func rwAcquireCall(owner, mode, side string) func(args []string) bool {
	return func(a []string) bool {
		if len(a) != 11 || (a[0] != "evalsha" && a[0] != "eval") || a[2] != "1" {
			return false
		}
		return (owner == "" || a[4] == owner) && (mode == "" || a[7] == mode) && a[8] == side
	}
}

// A partial Unlock that reaches Redis before a concurrent Reenter of the same hold (its command
// held back on the network) keeps the lock held: a Hold is safe for concurrent use, and a partial
// release never frees a side, as lock_release.lua keeps a Lock "even with no level left, until the
// final release". While the re-entry is in flight another Client's TryLock is refused; the re-entry
// then succeeds with one level. Write side, read side, and a Lock as the control.
func TestReadWriteLockPartialUnlockRacingReenterKeepsLock(t *testing.T) {
	for _, side := range []string{"x", "r", "Lock"} {
		t.Run(map[string]string{"x": "writer", "r": "reader", "Lock": "LockControl"}[side], func(t *testing.T) {
			srv := redistest.Start(t)
			hook := newScriptHook()
			a := hookedClient(t, srv, hook)
			b := newClient(t, srv.Client(t))
			ctx := t.Context()
			name := "rw-partial-" + side
			rw := a.ReadWriteLock(name)
			var h *redisson.Hold
			switch side {
			case "x":
				h = mustLockRW(t, rw, ctx)
			case "r":
				h = mustRLock(t, rw, ctx)
			default:
				h = mustLock(t, a.Lock(name), ctx)
			}
			if side == "Lock" {
				owner := redisson.OwnerOf(h)
				hook.set(func(a []string) bool { // lock_acquire.lua: 4 keys, owner, lease, level, mode
					return len(a) == 14 && (a[0] == "evalsha" || a[0] == "eval") && a[2] == "4" && a[7] == owner && a[10] == "r"
				}, true)
			} else {
				hook.set(rwAcquireCall(redisson.OwnerOf(h), "r", side), true)
			}
			defer hook.release()
			type res struct {
				h   *redisson.Hold
				err error
			}
			got := make(chan res, 1)
			go func() {
				in, err := h.Reenter(ctx)
				got <- res{in, err}
			}()
			awaitClosed(ctx, hook.reached, 10*time.Second)
			select {
			case <-hook.reached:
			default:
				t.Fatal("precondition: the re-entry was not sent")
			}
			if err := h.Unlock(ctx); err != nil {
				t.Fatalf("partial Unlock (a re-entry in flight): %v", err)
			}
			var other redisson.Locker = b.ReadWriteLock(name)
			if side == "Lock" {
				other = b.Lock(name)
			}
			w, err := other.TryLock(ctx)
			if err == nil {
				t.Errorf("another Client took the lock while the owner (%s) holds it with a re-entry in flight "+
					"(owner's context live: %v): the partial unlock freed the lock", side, h.Context().Err() == nil)
				_ = w.Unlock(ctx)
			}
			hook.release()
			r := recvWithin(t, got, 10*time.Second, "the re-entry")
			if r.err != nil {
				t.Errorf("Reenter racing a partial Unlock: %v (ErrLockLost %v); want a level", r.err, errors.Is(r.err, redisson.ErrLockLost))
				return
			}
			if n, err := r.h.HoldCount(ctx); err != nil || n != 1 {
				t.Errorf("after the race HoldCount = %d, %v; want 1", n, err)
			}
			mustUnlock(t, r.h)
		})
	}
}

// releaseCall reports whether a are the arguments of a release script call (rw_release.lua for kind
// "ReadWriteLock", lock_release.lua otherwise) of owner with final "0" or "1".
func releaseCall(a []string, kind, owner, final string) bool {
	if len(a) < 3 || (a[0] != "evalsha" && a[0] != "eval") {
		return false
	}
	if kind == "ReadWriteLock" {
		return len(a) >= 11 && a[2] == "1" && (a[8] == "PUBLISH" || a[8] == "SPUBLISH") && a[4] == owner && a[6] == final
	}
	return len(a) >= 16 && a[2] == "4" && a[7] == owner && a[9] == final
}

// Two levels of one hold unlocked concurrently, the partial release running in Redis after the
// final one but its reply processed first: both Unlocks return nil, the hold's Context ends with
// context.Canceled and no EventLost is emitted. A partial release that finds its owner gone while
// the owner's final release is under way or done is not a loss (hold.go: owner.release).
// ReadWriteLock write and read sides, and Lock.
func TestPartialUnlockOvertakenByFinalIsNotALoss(t *testing.T) {
	for _, kind := range []string{"Lock", "ReadWriteLock"} {
		for _, side := range []string{"x", "r"} {
			if kind == "Lock" && side == "r" {
				continue
			}
			name := kind
			if kind == "ReadWriteLock" {
				name += map[string]string{"x": "/writer", "r": "/reader"}[side]
			}
			t.Run(name, func(t *testing.T) {
				srv := redistest.Start(t)
				hook := newScriptHook()
				var mu sync.Mutex
				var lost []error
				a := hookedClient(t, srv, hook, redisson.WithEventHook(func(e redisson.Event) {
					if e.Kind == redisson.EventLost {
						mu.Lock()
						lost = append(lost, e.Err)
						mu.Unlock()
					}
				}))
				ctx := t.Context()
				lname := "rw-overtaken-" + kind + side
				take := func(lname string) (*redisson.Hold, *redisson.Hold) {
					var h *redisson.Hold
					switch {
					case kind == "Lock":
						h = mustLock(t, a.Lock(lname), ctx)
					case side == "x":
						h = mustLockRW(t, a.ReadWriteLock(lname), ctx)
					default:
						h = mustRLock(t, a.ReadWriteLock(lname), ctx)
					}
					in, err := h.Reenter(ctx)
					if err != nil {
						t.Fatal(err)
					}
					return h, in
				}
				wh, win := take(lname + "-warm") // loads the scripts: no NOSCRIPT round trip below
				mustUnlock(t, wh)
				mustUnlock(t, win)
				h, in := take(lname)
				owner := redisson.OwnerOf(h)
				partialSent, finalRan, replyGo := make(chan struct{}), make(chan struct{}), make(chan struct{})
				var once, once2 sync.Once
				hook.setAround(func(args []string, next func()) {
					switch {
					case releaseCall(args, kind, owner, "0"):
						once2.Do(func() { close(partialSent) })
						waitClosed(finalRan)
						next()
					case releaseCall(args, kind, owner, "1"):
						next()
						once.Do(func() { close(finalRan) })
						waitClosed(replyGo)
					default:
						next()
					}
				})
				defer once.Do(func() { close(finalRan) })
				errA, errB := make(chan error, 1), make(chan error, 1)
				go func() { errA <- h.Unlock(ctx) }()
				waitClosed(partialSent)
				go func() { errB <- in.Unlock(ctx) }()
				ea := recvWithin(t, errA, 15*time.Second, "the partial Unlock")
				close(replyGo)
				eb := recvWithin(t, errB, 15*time.Second, "the final Unlock")
				hook.setAround(nil)
				if ea != nil {
					t.Errorf("the partial Unlock (its release ran after the final one) = %v (ErrLockLost %v); want nil",
						ea, errors.Is(ea, redisson.ErrLockLost))
				}
				if eb != nil {
					t.Errorf("the final Unlock = %v; want nil", eb)
				}
				if cause := context.Cause(h.Context()); !errors.Is(cause, context.Canceled) {
					t.Errorf("the hold's context ended with %v; want context.Canceled (released)", cause)
				}
				mu.Lock()
				for _, e := range lost {
					t.Errorf("EventLost for a hold released normally: %v", e)
				}
				mu.Unlock()
				if locked, err := lockOf(a, kind, lname).IsLocked(ctx); err != nil || locked {
					t.Errorf("IsLocked after both unlocks = %v, %v; want false", locked, err)
				}
			})
		}
	}
}

// A late copy of the waiting attempt of a writer that gave up is undone by the Client's repeated
// undos (250ms, 1s and 4s after the wait ended), so it holds the lock for well under its watchdog
// lease. Scenario: R0 holds a read hold; W's TryLock(WithWait(300ms)) registers W as a waiting
// writer and gives up; R0 unlocks; a replayed copy of W's attempt then takes the free lock. Another
// Client waiting for the write lock must get it within 10s, not after the copy's 30s lease.
func TestReadWriteLockLateWaitCopyAfterAbandonIsUndone(t *testing.T) {
	long(t)
	t.Parallel()
	_, admin, hook, a, b := hookedSetup(t)
	ctx := t.Context()
	const name = "rw-late-abandon"
	r0 := mustRLock(t, b.ReadWriteLock(name), ctx)
	hook.set(rwAcquireCall("", "w", "x"), false)
	if w, err := a.ReadWriteLock(name).TryLock(ctx, redisson.WithWait(300*time.Millisecond)); err == nil {
		_ = w.Unlock(ctx)
		t.Fatal("precondition: the writer got in beside a reader")
	}
	hook.release()
	copy1 := hook.last(t)
	mustUnlock(t, r0)
	late, err := admin.Do(ctx, copy1...).Int64Slice()
	if err != nil {
		t.Fatalf("replaying the late copy: %v", err)
	}
	if len(late) == 0 || late[0] < 1 {
		t.Fatalf("precondition: the replayed copy answered %v; want it to take the free lock", late)
	}
	if w, err := b.ReadWriteLock(name).TryLock(ctx, redisson.WithWait(10*time.Second)); err != nil {
		wr, _ := rwWriterReaders(t, admin, name)
		t.Errorf("B cannot take the write lock within 10s after every owner is done (held by %q, TTL %v): %v",
			wr, admin.PTTL(ctx, name).Val().Round(time.Second), err)
	} else {
		mustUnlock(t, w)
	}
}

// holdNextRWAttempt holds back the next waiting attempt of owner w on side (rw_acquire "w") and
// returns once it is held; the gate opens at the end of the test at the latest.
func holdNextRWAttempt(t *testing.T, ctx context.Context, hook *scriptHook, w, side string) *cmdGate {
	t.Helper()
	gate := newCmdGate(rwAcquireCall(w, "w", side))
	hook.setAround(gate.around)
	t.Cleanup(func() { hook.setAround(nil) })
	t.Cleanup(gate.open)
	gate.arm()
	awaitClosed(ctx, gate.reached, 5*time.Second)
	select {
	case <-gate.reached:
	default:
		t.Fatal("precondition: W made no further attempt")
	}
	return gate
}

// rwHookedSetup starts a server and returns it, an admin connection, a hook, Client a (with the hook
// and aOpts) and Client b (without): hookedSetup with options for a.
func rwHookedSetup(t *testing.T, aOpts ...redisson.Option) (srv *redistest.Server, admin *redis.Client, hook *scriptHook, a, b *redisson.Client) {
	t.Helper()
	srv = redistest.Start(t)
	hook = newScriptHook()
	return srv, srv.Client(t), hook, hookedClient(t, srv, hook, aOpts...), newClient(t, srv.Client(t))
}

// rwWaiterSubscribed waits until a waiter of ReadWriteLock name is registered in its hash under
// prefix pfx ("ww:" or "wr:") and Client a's channel of the lock is subscribed, and returns the
// waiter's id.
func rwWaiterSubscribed(t *testing.T, admin *redis.Client, a *redisson.Client, name, pfx string) string {
	t.Helper()
	var w string
	eventually(t, 5*time.Second, "W registered and subscribed", func() bool {
		w = rwWaiter(t, admin, name, pfx)
		ch := redisson.ChannelOf(a, name)
		return w != "" && admin.PubSubNumSub(t.Context(), ch).Val()[ch] >= 1
	})
	return w
}

// A grant message read after its waiter registered again is refused, even when the lock's hash was
// deleted and made again in between: a new hash's tickets start at its server time in µs (rw_wait
// in rw_value.lua), so "<owner>|<ticket>" never repeats across lives of the hash, and a waiter
// never takes a hold that Redis gave to someone else.
//
// Scenario (write and read side): H holds the write lock; W waits, and its next attempt is held on
// the network. H unlocks: rw_grant makes W the holder and publishes the grant. A ForceUnlock
// removes W's granted hold (the hash, its ticket counter included, is deleted) and X takes the
// write lock. W's attempt lands and registers W again. W must keep waiting while X holds: not
// return a hold.
func TestReadWriteLockStaleGrantRefusedAfterHashRecreated(t *testing.T) {
	long(t)
	t.Parallel()
	for _, side := range []string{"x", "r"} {
		t.Run(map[string]string{"x": "writer", "r": "reader"}[side], func(t *testing.T) {
			srv, admin, hook, a, b := rwHookedSetup(t, redisson.WithRepollInterval(150*time.Millisecond))
			c := newClient(t, srv.Client(t))
			ctx := t.Context()
			name := "rw-reuse-" + side
			key := name
			hx := mustLockRW(t, b.ReadWriteLock(name), ctx)

			wctx, wcancel := context.WithCancel(ctx)
			defer wcancel()
			got := make(chan lockResult, 1)
			go func() {
				var h *redisson.Hold
				var err error
				if side == "x" {
					h, err = a.ReadWriteLock(name).Lock(wctx)
				} else {
					h, err = a.ReadWriteLock(name).RLock(wctx)
				}
				got <- lockResult{h, err}
			}()
			pfx := map[string]string{"x": "ww:", "r": "wr:"}[side]
			w := rwWaiterSubscribed(t, admin, a, name, pfx)
			if v := rwFields(t, admin, key)[pfx+w]; !strings.Contains(v, "|") {
				t.Fatalf("precondition: W's registration %q; want \"<ticket>|<deadline>\"", v)
			}
			gate := holdNextRWAttempt(t, ctx, hook, w, side)

			mustUnlock(t, hx) // grants the lock to W, message "W|T|..." to A's channel
			f := rwFields(t, admin, key)
			if side == "x" && !strings.HasPrefix(f["w"], w+"|") || side == "r" && f["r:"+w] == "" {
				t.Fatalf("precondition: the release did not grant the lock to W: %v", f)
			}
			if ok, err := c.ReadWriteLock(name).ForceUnlock(ctx); err != nil || !ok {
				t.Fatalf("ForceUnlock = %v, %v", ok, err)
			}
			if n := admin.Exists(ctx, key).Val(); n != 0 {
				t.Fatalf("precondition: the hash survived the force unlock: %v", rwFields(t, admin, key))
			}
			xh, err := c.ReadWriteLock(name).TryLock(ctx)
			if err != nil {
				t.Fatalf("precondition: X cannot take the free write lock: %v", err)
			}
			defer func() { _ = xh.Unlock(context.Background()) }()
			gate.open() // W's attempt lands: blocked by X, registered again

			consumed := false
			select {
			case r := <-got:
				consumed = true
				if r.err == nil {
					wr, _ := rwWriterReaders(t, admin, key)
					t.Errorf("W's %s returned a hold (owner %s) while X holds the write lock (Redis: writer %q, X's context %v): "+
						"a stale grant message accepted after the ticket number was reissued",
						map[string]string{"x": "Lock", "r": "RLock"}[side], redisson.OwnerOf(r.h), wr, xh.Context().Err())
					_ = r.h.Unlock(context.Background())
				} else {
					t.Errorf("W's wait ended with %v; want it still waiting", r.err)
				}
			case <-gate.seen: // W's next attempt: it did not take the message's word
			case <-time.After(5 * time.Second):
				t.Fatal("W neither returned nor tried again within 5s")
			}
			wcancel()
			if !consumed {
				if r := recvWithin(t, got, 10*time.Second, "W's wait to end"); r.err == nil {
					_ = r.h.Unlock(context.Background())
				}
			}
		})
	}
}

// A grant that lands while the waiter's attempt is in flight, after which the wait ends (context
// cancelled, WithWait bound passed, or Client closed), is given back at once by the wait's undo:
// the lock is free for another Client right after the waiter's call returns, not only after the 5s
// reservation, and the waiter's Client keeps no hold or waiter registered (Stats).
func TestReadWriteLockGrantRacingWaitEndIsGivenBack(t *testing.T) {
	long(t)
	t.Parallel()
	for _, how := range []string{"cancel", "withwait", "close"} {
		for _, side := range []string{"x", "r"} {
			t.Run(how+"/"+map[string]string{"x": "writer", "r": "reader"}[side], func(t *testing.T) {
				srv, admin, hook, a, b := rwHookedSetup(t, redisson.WithRepollInterval(150*time.Millisecond))
				ctx := t.Context()
				name := "rw-waitend-" + how + side
				key := name
				hx := mustLockRW(t, b.ReadWriteLock(name), ctx)
				wctx, wcancel := context.WithCancel(ctx)
				defer wcancel()
				bound := time.Minute
				if how == "withwait" {
					bound = time.Second
				}
				start := time.Now()
				got := make(chan lockResult, 1)
				go func() {
					var h *redisson.Hold
					var err error
					if side == "x" {
						h, err = a.ReadWriteLock(name).TryLock(wctx, redisson.WithWait(bound))
					} else {
						h, err = a.ReadWriteLock(name).TryRLock(wctx, redisson.WithWait(bound))
					}
					got <- lockResult{h, err}
				}()
				pfx := map[string]string{"x": "ww:", "r": "wr:"}[side]
				w := rwWaiterSubscribed(t, admin, a, name, pfx)
				gate := holdNextRWAttempt(t, ctx, hook, w, side)
				mustUnlock(t, hx) // grants the lock to W
				if f := rwFields(t, admin, key); side == "x" && !strings.HasPrefix(f["w"], w+"|") || side == "r" && f["r:"+w] == "" {
					t.Fatalf("precondition: the release did not grant the lock to W: %v", f)
				}
				switch how {
				case "cancel":
					wcancel()
				case "withwait":
					time.Sleep(time.Until(start.Add(bound + 50*time.Millisecond))) // the bound's own deadline
				case "close":
					_ = a.Close()
				}
				gate.open()
				r := recvWithin(t, got, 10*time.Second, "W's call to return")
				if r.err == nil {
					t.Logf("W got the lock (its attempt ran before the wait ended); unlocking")
					mustUnlock(t, r.h)
				}
				if h, err := newClient(t, srv.Client(t)).ReadWriteLock(name).TryLock(ctx); err != nil {
					t.Errorf("after W's wait ended (%v), another Client cannot take the write lock: %v (hash %v)", r.err, err, rwFields(t, admin, key))
				} else {
					mustUnlock(t, h)
				}
				if how != "close" {
					if s := a.Stats(); s.Held != 0 || s.Waiting != 0 {
						t.Errorf("W's Client after the wait: Held %d, Waiting %d; want 0, 0", s.Held, s.Waiting)
					}
				}
			})
		}
	}
}

// A MultiLock over the write sides of two ReadWriteLocks waits for a reader of its first part (the
// part a group waits for: the later ones get one attempt each) and is handed that part by the
// reader's release (rw_grant), not by a re-poll (an hour here) or a heartbeat (every 10s): it holds
// both parts within 2s of the release, keeps readers out of both while it holds them, and frees
// both on Unlock. Stats count the group's two parts and no waiter.
func TestReadWriteLockGrantsMultiLockWriteSides(t *testing.T) {
	srv := redistest.Start(t)
	a := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Hour), redisson.WithWaiterTimeout(30*time.Second))
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	rw1, rw2 := a.ReadWriteLock("rw-multi-1"), a.ReadWriteLock("rw-multi-2")
	r2 := mustRLock(t, b.ReadWriteLock("rw-multi-2"), ctx)
	ml := redisson.NewMultiLock(rw2, rw1)
	got := make(chan lockResult, 1)
	go func() {
		h, err := ml.TryLock(ctx, redisson.WithWait(20*time.Second))
		got <- lockResult{h, err}
	}()
	eventually(t, 5*time.Second, "the MultiLock waiting for its first part", func() bool {
		return a.Stats().Waiting == 1 && a.Stats().Held == 0
	})
	released := time.Now()
	mustUnlock(t, r2)
	r := recvWithin(t, got, 10*time.Second, "the MultiLock")
	if r.err != nil {
		t.Fatalf("MultiLock = %v", r.err)
	}
	if d := time.Since(released); d > 2*time.Second {
		t.Errorf("the MultiLock got its part %v after the reader's release; want it handed over at once (< 2s)", d)
	}
	for _, name := range []string{"rw-multi-1", "rw-multi-2"} {
		if h, err := b.ReadWriteLock(name).TryRLock(ctx); err == nil {
			_ = h.Unlock(ctx)
			t.Errorf("a reader got %s while the MultiLock holds its write side", name)
		}
	}
	if s := a.Stats(); s.Held != 2 || s.Waiting != 0 {
		t.Errorf("Stats while the MultiLock holds: Held %d, Waiting %d; want 2, 0", s.Held, s.Waiting)
	}
	mustUnlock(t, r.h)
	for _, name := range []string{"rw-multi-1", "rw-multi-2"} {
		h, err := b.ReadWriteLock(name).TryLock(ctx)
		if err != nil {
			t.Errorf("after the MultiLock's Unlock, %s cannot be taken: %v", name, err)
			continue
		}
		mustUnlock(t, h)
	}
}

// Grants around a downgrade. W (Client A) holds the write lock; X (Client B) waits to write, then R
// (Client C) waits to read, behind X. W takes a vouched read hold V and releases the write side:
// nobody is granted (V reads; X is first and a reader holds). V's release grants X alone; X's
// release grants R. No writer overlaps anyone in Redis at any step.
func TestReadWriteLockDowngradeGrantsInOrder(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	slow := []redisson.Option{redisson.WithRepollInterval(time.Hour), redisson.WithWaiterTimeout(30 * time.Second)}
	a := newClient(t, srv.Client(t))
	b := newClient(t, srv.Client(t), slow...)
	c := newClient(t, srv.Client(t), slow...)
	ctx := t.Context()
	const name = "rw-downgrade"
	key := name
	w := mustLockRW(t, a.ReadWriteLock(name), ctx)
	xc, cancelX := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancelX()
	eventually(t, 5*time.Second, "X waiting", func() bool { return rwWaiter(t, admin, key, "ww:") != "" })
	rc, cancelR := rLockAsync(ctx, c.ReadWriteLock(name))
	defer cancelR()
	eventually(t, 5*time.Second, "R waiting", func() bool { return rwWaiter(t, admin, key, "wr:") != "" })
	v, err := a.ReadWriteLock(name).RLock(redisson.ContextWithHold(ctx, w))
	if err != nil {
		t.Fatalf("vouched read: %v", err)
	}
	mustUnlock(t, w)
	if wr, n := rwWriterReaders(t, admin, key); wr != "" || n != 1 {
		t.Fatalf("after the downgrade: writer %q, %d readers; want none, 1 (V)", wr, n)
	}
	mustUnlock(t, v)
	x := recvWithin(t, xc, 10*time.Second, "X")
	if x.err != nil {
		t.Fatalf("X: %v", x.err)
	}
	if wr, n := rwWriterReaders(t, admin, key); !strings.HasPrefix(wr, redisson.OwnerOf(x.h)+"|") || n != 0 {
		t.Fatalf("after V's release: writer %q, %d readers; want X alone", wr, n)
	}
	select {
	case r := <-rc:
		t.Fatalf("R got in beside the writer X: %v", r.err)
	default:
	}
	mustUnlock(t, x.h)
	r := recvWithin(t, rc, 10*time.Second, "R")
	if r.err != nil {
		t.Fatalf("R: %v", r.err)
	}
	mustUnlock(t, r.h)
}

// A go-redis re-send of a final ReadWriteLock release (its script run again with the same
// arguments) after the lock moved on grants nothing and publishes nothing. H (Client A) releases,
// which grants W (Client B); W releases; R0 (Client C) reads and W3 (Client B) waits to write
// behind it. The replayed release of H leaves the hash as it was (W3 still waiting, R0 alone
// reading) and sends no wake message (a sentinel published after it is the first message seen).
func TestReadWriteLockReplayedReleaseGrantsNothing(t *testing.T) {
	srv, admin, hook, a, b := rwHookedSetup(t)
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	const name = "rw-replay"
	key := name
	h := mustLockRW(t, a.ReadWriteLock(name), ctx)
	wc, cancelW := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancelW()
	eventually(t, 5*time.Second, "W waiting", func() bool { return rwWaiter(t, admin, key, "ww:") != "" })
	owner := redisson.OwnerOf(h)
	hook.set(func(a []string) bool { return releaseCall(a, "ReadWriteLock", owner, "1") }, false)
	mustUnlock(t, h)
	hook.release()
	replay := hook.last(t)
	w := recvWithin(t, wc, 10*time.Second, "W")
	if w.err != nil {
		t.Fatalf("W: %v", w.err)
	}
	mustUnlock(t, w.h)
	r0 := mustRLock(t, c.ReadWriteLock(name), ctx)
	defer mustUnlock(t, r0)
	w3c, cancelW3 := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancelW3()
	eventually(t, 5*time.Second, "W3 waiting", func() bool { return rwWaiter(t, admin, key, "ww:") != "" })

	sub := admin.PSubscribe(ctx, redisson.WakePattern(name))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	before := rwFields(t, admin, key)
	res, err := admin.Do(ctx, replay...).Int64()
	if err != nil {
		t.Fatalf("replaying the release: %v", err)
	}
	after := rwFields(t, admin, key)
	for f, v := range before {
		if after[f] != v && !strings.HasPrefix(f, "ww:") { // a heartbeat may move W3's deadline
			t.Errorf("the replayed release (answer %d) changed field %s: %q → %q", res, f, v, after[f])
		}
	}
	for f := range after {
		if _, ok := before[f]; !ok {
			t.Errorf("the replayed release (answer %d) added field %s = %q", res, f, after[f])
		}
	}
	if err := admin.Publish(ctx, strings.TrimSuffix(redisson.WakePattern(name), "*")+"sentinel", "end").Err(); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Payload != "end" {
		t.Errorf("the replayed release published %q on %s", msg.Payload, msg.Channel)
	}
	select {
	case r := <-w3c:
		t.Errorf("W3 returned beside the reader R0: %v", r.err)
	default:
	}
}

// The interleaving of TestReadWriteLockStaleGrantRefusedAfterHashRecreated, with the hash kept
// alive by another waiting writer Y (Client C): the force unlock grants Y, W's held attempt
// registers W again with a new ticket, and the stale grant message for W is refused (ticket
// mismatch): W tries again instead of taking Y's lock.
func TestReadWriteLockStaleGrantRefusedWhenHashKept(t *testing.T) {
	srv, admin, hook, a, b := rwHookedSetup(t, redisson.WithRepollInterval(150*time.Millisecond))
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	const name = "rw-reuse-kept"
	key := name
	hx := mustLockRW(t, b.ReadWriteLock(name), ctx)
	got, wcancel := lockAsync(ctx, a.ReadWriteLock(name))
	defer wcancel()
	w := rwWaiterSubscribed(t, admin, a, name, "ww:")
	yc, ycancel := lockAsync(ctx, c.ReadWriteLock(name))
	defer ycancel()
	eventually(t, 5*time.Second, "Y registered", func() bool {
		n := 0
		for f := range rwFields(t, admin, key) {
			if strings.HasPrefix(f, "ww:") {
				n++
			}
		}
		return n == 2
	})
	gate := holdNextRWAttempt(t, ctx, hook, w, "x")
	mustUnlock(t, hx) // grants W (ticket 1)
	if f := rwFields(t, admin, key); !strings.HasPrefix(f["w"], w+"|") {
		t.Fatalf("precondition: the release did not grant the lock to W: %v", f)
	}
	if ok, err := b.ReadWriteLock(name).ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	y := recvWithin(t, yc, 10*time.Second, "Y, granted by the force unlock")
	if y.err != nil {
		t.Fatalf("Y: %v", y.err)
	}
	defer func() { _ = y.h.Unlock(context.Background()) }()
	gate.open()
	select {
	case r := <-got:
		if r.err == nil {
			_ = r.h.Unlock(context.Background())
			t.Fatalf("W returned a hold while Y holds the write lock")
		}
		t.Fatalf("W's wait ended with %v; want it still waiting", r.err)
	case <-gate.seen:
	case <-time.After(5 * time.Second):
		t.Fatal("W neither returned nor tried again within 5s")
	}
	if v := rwFields(t, admin, key)["ww:"+w]; strings.HasPrefix(v, "1|") || v == "" {
		t.Errorf("W's registration %q; want a new ticket", v)
	}
}
