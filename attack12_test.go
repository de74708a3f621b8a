package redisson_test

// Attack 12: the ReadWriteLock grant mechanism (rw_grant in internal/scripts/rw_value.lua, called by
// rw_release.lua, rw_force_unlock.lua and the undo of a wait; lock.go contend → takeHanded, which
// accepts a grant from its message alone when the message's ticket matches the ticket of the
// waiter's latest queued attempt). Each failing test states the scenario, the expected behaviour and
// what happens; tests marked PASSING are kept as regression tests of attacks the code withstood.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a12Gate holds back the first command matching match once armed, and reports every later matching
// command on seen (non-blocking). Install it with a11Hook.setAround.
type a12Gate struct {
	mu      sync.Mutex
	match   func(a []string) bool
	armed   bool
	held    bool
	reached chan struct{}
	release chan struct{}
	seen    chan struct{}
}

func newA12Gate(match func(a []string) bool) *a12Gate {
	return &a12Gate{match: match, reached: make(chan struct{}), release: make(chan struct{}), seen: make(chan struct{}, 64)}
}

func (g *a12Gate) arm() {
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
}

func (g *a12Gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.release:
	default:
		close(g.release)
	}
}

func (g *a12Gate) around(a []string, next func()) {
	g.mu.Lock()
	m := g.match(a)
	hold := m && g.armed && !g.held
	if hold {
		g.held = true
		close(g.reached)
	}
	g.mu.Unlock()
	if hold {
		a11Within(g.release)
	}
	next()
	if m && !hold {
		select {
		case g.seen <- struct{}{}:
		default:
		}
	}
}

// a12HoldNextAttempt holds back the next waiting attempt of owner w on side (rw_acquire "w") and
// returns once it is held; the gate opens at the end of the test at the latest.
func a12HoldNextAttempt(t *testing.T, ctx context.Context, hook *a11Hook, w, side string) *a12Gate {
	t.Helper()
	gate := newA12Gate(a11Acquire(w, "w", side))
	hook.setAround(gate.around)
	t.Cleanup(func() { hook.setAround(nil) })
	t.Cleanup(gate.open)
	gate.arm()
	regressAwait(ctx, gate.reached, 5*time.Second)
	select {
	case <-gate.reached:
	default:
		t.Fatal("precondition: W made no further attempt")
	}
	return gate
}

// a12Fields returns the hash fields of a ReadWriteLock key.
func a12Fields(t *testing.T, admin *redis.Client, key string) map[string]string {
	t.Helper()
	m, err := admin.HGetAll(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", key, err)
	}
	return m
}

// a12Waiter returns the owner id of the waiter registered on the lock (field prefix "ww:" or "wr:").
func a12Waiter(t *testing.T, admin *redis.Client, key, pfx string) string {
	t.Helper()
	for f := range a12Fields(t, admin, key) {
		if strings.HasPrefix(f, pfx) {
			return strings.TrimPrefix(f, pfx)
		}
	}
	return ""
}

// Fixed (review 12): a grant message read after the waiter re-registered was accepted when the ticket
// number was issued again: tickets restarted at 1 whenever the hash was deleted (the "seq" field goes
// with it), so "<owner>|<ticket>" did not identify a grant, and the waiter took a hold that Redis gave
// to someone else: two writers (or a reader beside a writer). Now a new hash's tickets start at its
// server time in µs (rw_wait in rw_value.lua), so they never repeat across lives of the hash.
//
// Scenario: H (Client B) holds the write lock; W (Client A) waits (write or read side), queued with
// ticket T. W's re-poll attempt (rw_acquire "w") is slow on the network. Meanwhile H unlocks:
// rw_grant makes W the holder and publishes "W|T|5000" on A's channel (held by A's hub: W is in its
// attempt). An operator's ForceUnlock removes W's granted hold; the hash is now empty and deleted,
// seq included. X (Client C) takes the write lock. W's attempt lands: W is blocked by X and registers
// again (before the fix: with ticket T again, seq having restarted). W then reads the held message: owner and ticket match its
// latest queued attempt, and takeHanded accepts it without asking Redis.
//
// Expected: W keeps waiting while X holds (the message predates W's latest registration).
// Actual: W's Lock/RLock returns a hold while X holds the write lock in Redis.
// Fix: make tickets unique across incarnations of the hash (e.g. a ticket that embeds the server time
// or a per-lock counter kept outside the hash / never reset, or include a random nonce per
// registration in the message), or have takeHanded accept only a message that arrived after the
// attempt that returned the ticket was answered AND that names a grant time later than that attempt.
func TestAttack12StaleGrantAcceptedAfterTicketReuse(t *testing.T) {
	for _, side := range []string{"x", "r"} {
		t.Run(map[string]string{"x": "writer", "r": "reader"}[side], func(t *testing.T) {
			srv := redistest.Start(t)
			admin := srv.Client(t)
			hook := newA11Hook()
			a := a11Client(t, srv, hook, redisson.WithRepollInterval(150*time.Millisecond))
			b := newClient(t, srv.Client(t))
			c := newClient(t, srv.Client(t))
			ctx := t.Context()
			name := "a12-reuse-" + side
			key := "{" + name + "}"
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
			var w string
			eventually(t, 5*time.Second, "W registered and subscribed", func() bool {
				w = a12Waiter(t, admin, key, pfx)
				n := admin.PubSubNumSub(ctx, redisson.ChannelOf(a, name)).Val()[redisson.ChannelOf(a, name)]
				return w != "" && n >= 1
			})
			if v := a12Fields(t, admin, key)[pfx+w]; !strings.Contains(v, "|") {
				t.Fatalf("precondition: W's registration %q; want \"<ticket>|<deadline>\"", v)
			}
			gate := a12HoldNextAttempt(t, ctx, hook, w, side)

			mustUnlock(t, hx) // grants the lock to W, message "W|T|..." to A's channel
			f := a12Fields(t, admin, key)
			if side == "x" && !strings.HasPrefix(f["w"], w+"|") || side == "r" && f["r:"+w] == "" {
				t.Fatalf("precondition: the release did not grant the lock to W: %v", f)
			}
			if ok, err := c.ReadWriteLock(name).ForceUnlock(ctx); err != nil || !ok {
				t.Fatalf("ForceUnlock = %v, %v", ok, err)
			}
			if n := admin.Exists(ctx, key).Val(); n != 0 {
				t.Fatalf("precondition: the hash survived the force unlock: %v", a12Fields(t, admin, key))
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
					wr, _ := a10Holders(t, admin, key)
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
				if r := regressWait(t, got, 10*time.Second, "W's wait to end"); r.err == nil {
					_ = r.h.Unlock(context.Background())
				}
			}
		})
	}
}

// PASSING: a grant that lands while the waiter's attempt is in flight, and the wait then ends (ctx
// cancelled, WithWait bound, Client closed), is given back at once by the wait's undo: the lock is
// free for another Client right after the waiter's call returns, and the waiter's Client keeps no
// hold or waiter registered (Stats) — not for the whole reservation (5s).
func TestAttack12GrantRacingWaitEndPassing(t *testing.T) {
	for _, how := range []string{"cancel", "withwait", "close"} {
		for _, side := range []string{"x", "r"} {
			t.Run(how+"/"+map[string]string{"x": "writer", "r": "reader"}[side], func(t *testing.T) {
				srv := redistest.Start(t)
				admin := srv.Client(t)
				hook := newA11Hook()
				a := a11Client(t, srv, hook, redisson.WithRepollInterval(150*time.Millisecond))
				b := newClient(t, srv.Client(t))
				ctx := t.Context()
				name := "a12-waitend-" + how + side
				key := "{" + name + "}"
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
				var w string
				eventually(t, 5*time.Second, "W registered and subscribed", func() bool {
					w = a12Waiter(t, admin, key, pfx)
					ch := redisson.ChannelOf(a, name)
					return w != "" && admin.PubSubNumSub(ctx, ch).Val()[ch] >= 1
				})
				gate := a12HoldNextAttempt(t, ctx, hook, w, side)
				mustUnlock(t, hx) // grants the lock to W
				if f := a12Fields(t, admin, key); side == "x" && !strings.HasPrefix(f["w"], w+"|") || side == "r" && f["r:"+w] == "" {
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
				r := regressWait(t, got, 10*time.Second, "W's call to return")
				if r.err == nil {
					t.Logf("W got the lock (its attempt ran before the wait ended); unlocking")
					mustUnlock(t, r.h)
				}
				if h, err := newClient(t, srv.Client(t)).ReadWriteLock(name).TryLock(ctx); err != nil {
					t.Errorf("after W's wait ended (%v), another Client cannot take the write lock: %v (hash %v)", r.err, err, a12Fields(t, admin, key))
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

// a12Within returns the result from ch, or fails the test if it takes longer than d.
func a12Within(t *testing.T, ch <-chan lockResult, d time.Duration, what string) lockResult {
	t.Helper()
	r := regressWait(t, ch, 10*time.Second+d, what)
	return r
}

// PASSING: a MultiLock over the write sides of two ReadWriteLocks waits for a reader of its first
// part (the part a group waits for: the later ones get one attempt each) and is given that part by
// the reader's release (rw_grant), not by a re-poll (1h here) or a heartbeat (waiter timeout 30s:
// every 10s): it holds both parts within 2s of the release, excludes readers of both while it holds
// them, and frees both on Unlock. Stats count one group hold's parts and no waiter.
func TestAttack12MultiLockOverWriteSidesGrantedPassing(t *testing.T) {
	srv := redistest.Start(t)
	a := newClient(t, srv.Client(t), redisson.WithRepollInterval(time.Hour), redisson.WithWaiterTimeout(30*time.Second))
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	rw1, rw2 := a.ReadWriteLock("a12-multi-1"), a.ReadWriteLock("a12-multi-2")
	r2 := mustRLock(t, b.ReadWriteLock("a12-multi-2"), ctx)
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
	r := a12Within(t, got, 0, "the MultiLock")
	if r.err != nil {
		t.Fatalf("MultiLock = %v", r.err)
	}
	if d := time.Since(released); d > 2*time.Second {
		t.Errorf("the MultiLock got its part %v after the reader's release; want it handed over at once (< 2s)", d)
	}
	for _, name := range []string{"a12-multi-1", "a12-multi-2"} {
		if h, err := b.ReadWriteLock(name).TryRLock(ctx); err == nil {
			_ = h.Unlock(ctx)
			t.Errorf("a reader got %s while the MultiLock holds its write side", name)
		}
	}
	if s := a.Stats(); s.Held != 2 || s.Waiting != 0 {
		t.Errorf("Stats while the MultiLock holds: Held %d, Waiting %d; want 2, 0", s.Held, s.Waiting)
	}
	mustUnlock(t, r.h)
	for _, name := range []string{"a12-multi-1", "a12-multi-2"} {
		h, err := b.ReadWriteLock(name).TryLock(ctx)
		if err != nil {
			t.Errorf("after the MultiLock's Unlock, %s cannot be taken: %v", name, err)
			continue
		}
		mustUnlock(t, h)
	}
}

// PASSING: downgrade and grants. W (Client A) holds the write lock; X (Client B) waits to write, then
// R (Client C) waits to read (behind X). W takes a vouched read hold V and releases the write side:
// nobody is granted (V reads; X is first and a reader holds). V's release grants X alone; X's release
// grants R. No overlap of a writer with anyone is observed in Redis at any step.
func TestAttack12DowngradeGrantsPassing(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	slow := []redisson.Option{redisson.WithRepollInterval(time.Hour), redisson.WithWaiterTimeout(30 * time.Second)}
	a := newClient(t, srv.Client(t))
	b := newClient(t, srv.Client(t), slow...)
	c := newClient(t, srv.Client(t), slow...)
	ctx := t.Context()
	const name = "a12-downgrade"
	key := "{" + name + "}"
	w := mustLockRW(t, a.ReadWriteLock(name), ctx)
	xc, cancelX := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancelX()
	eventually(t, 5*time.Second, "X waiting", func() bool { return a12Waiter(t, admin, key, "ww:") != "" })
	rc, cancelR := rLockAsync(ctx, c.ReadWriteLock(name))
	defer cancelR()
	eventually(t, 5*time.Second, "R waiting", func() bool { return a12Waiter(t, admin, key, "wr:") != "" })
	v, err := a.ReadWriteLock(name).RLock(redisson.ContextWithHold(ctx, w))
	if err != nil {
		t.Fatalf("vouched read: %v", err)
	}
	mustUnlock(t, w)
	if wr, n := a10Holders(t, admin, key); wr != "" || n != 1 {
		t.Fatalf("after the downgrade: writer %q, %d readers; want none, 1 (V)", wr, n)
	}
	mustUnlock(t, v)
	x := a12Within(t, xc, 0, "X")
	if x.err != nil {
		t.Fatalf("X: %v", x.err)
	}
	if wr, n := a10Holders(t, admin, key); !strings.HasPrefix(wr, redisson.OwnerOf(x.h)+"|") || n != 0 {
		t.Fatalf("after V's release: writer %q, %d readers; want X alone", wr, n)
	}
	select {
	case r := <-rc:
		t.Fatalf("R got in beside the writer X: %v", r.err)
	default:
	}
	mustUnlock(t, x.h)
	r := a12Within(t, rc, 0, "R")
	if r.err != nil {
		t.Fatalf("R: %v", r.err)
	}
	mustUnlock(t, r.h)
}

// PASSING: a go-redis re-send of a final ReadWriteLock release (its script run again with the same
// arguments) after the lock moved on grants nothing and publishes nothing: H (Client A) releases,
// which grants W (Client B); W releases; R0 (Client C) reads and W3 (Client B) waits to write behind
// it. The replayed release of H leaves the hash as it was (W3 still waiting, R0 alone reading) and
// sends no wake message (a sentinel published after it is the first message seen).
func TestAttack12ReplayedReleaseGrantsNothingPassing(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	hook := newA11Hook()
	a := a11Client(t, srv, hook)
	b := newClient(t, srv.Client(t))
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	const name = "a12-replay"
	key := "{" + name + "}"
	h := mustLockRW(t, a.ReadWriteLock(name), ctx)
	wc, cancelW := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancelW()
	eventually(t, 5*time.Second, "W waiting", func() bool { return a12Waiter(t, admin, key, "ww:") != "" })
	owner := redisson.OwnerOf(h)
	hook.set(func(a []string) bool { return a11Release(a, "ReadWriteLock", owner, "1") }, false)
	mustUnlock(t, h)
	hook.release()
	replay := hook.last(t)
	w := a12Within(t, wc, 0, "W")
	if w.err != nil {
		t.Fatalf("W: %v", w.err)
	}
	mustUnlock(t, w.h)
	r0 := mustRLock(t, c.ReadWriteLock(name), ctx)
	defer mustUnlock(t, r0)
	w3c, cancelW3 := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancelW3()
	eventually(t, 5*time.Second, "W3 waiting", func() bool { return a12Waiter(t, admin, key, "ww:") != "" })

	sub := admin.PSubscribe(ctx, redisson.WakePattern(name))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	before := a12Fields(t, admin, key)
	res, err := admin.Do(ctx, replay...).Int64()
	if err != nil {
		t.Fatalf("replaying the release: %v", err)
	}
	after := a12Fields(t, admin, key)
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

// PASSING (control of TestAttack12StaleGrantAcceptedAfterTicketReuse): the same interleaving, but the
// hash survives the force unlock because another writer Y (Client C) waits too: the force unlock
// grants Y, W's slow attempt registers W again with a new ticket (seq kept), and the stale message
// "W|1|..." is refused (ticket mismatch): W tries again instead of taking Y's lock.
func TestAttack12StaleGrantRejectedWhenHashKeptPassing(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	hook := newA11Hook()
	a := a11Client(t, srv, hook, redisson.WithRepollInterval(150*time.Millisecond))
	b := newClient(t, srv.Client(t))
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	const name = "a12-reuse-kept"
	key := "{" + name + "}"
	hx := mustLockRW(t, b.ReadWriteLock(name), ctx)
	got, wcancel := lockAsync(ctx, a.ReadWriteLock(name))
	defer wcancel()
	var w string
	eventually(t, 5*time.Second, "W registered and subscribed", func() bool {
		w = a12Waiter(t, admin, key, "ww:")
		ch := redisson.ChannelOf(a, name)
		return w != "" && admin.PubSubNumSub(ctx, ch).Val()[ch] >= 1
	})
	yc, ycancel := lockAsync(ctx, c.ReadWriteLock(name))
	defer ycancel()
	eventually(t, 5*time.Second, "Y registered", func() bool {
		n := 0
		for f := range a12Fields(t, admin, key) {
			if strings.HasPrefix(f, "ww:") {
				n++
			}
		}
		return n == 2
	})
	gate := a12HoldNextAttempt(t, ctx, hook, w, "x")
	mustUnlock(t, hx) // grants W (ticket 1)
	if f := a12Fields(t, admin, key); !strings.HasPrefix(f["w"], w+"|") {
		t.Fatalf("precondition: the release did not grant the lock to W: %v", f)
	}
	if ok, err := b.ReadWriteLock(name).ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	y := a12Within(t, yc, 0, "Y, granted by the force unlock")
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
	if v := a12Fields(t, admin, key)["ww:"+w]; strings.HasPrefix(v, "1|") || v == "" {
		t.Errorf("W's registration %q; want a new ticket", v)
	}
}
