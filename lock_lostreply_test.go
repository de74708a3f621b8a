package redisson_test

// Lost replies and re-sent commands of a Lock: a command that Redis applied and whose reply was lost
// is re-sent by go-redis on a new connection, and the re-send must answer what the first run did
// (doc.go, "Re-sent commands"), whatever happened in between. The interleavings are forced, not
// hoped for:
//   - a lost reply: redistest.Proxy drops the next reply chunk and closes that connection, so
//     go-redis re-sends the command on a new connection. The proxied go-redis client dials through
//     heldDialer, which can hold that new connection (and so the re-send) until the test has made
//     something else happen first, or refuse it. Its pub/sub connections bypass the proxy, so a
//     wake-up message can never take the dropped chunk's place.
//   - a Client kept from acting: cmdHook holds back every command of a go-redis client (or every
//     command not marked by the test) until released.
//   - a goroutine waiting inside Lock: parkedInLock finds it parked (select or channel receive) in
//     the library, called through inLock.
//
// Some tests reach the lock through the lockDriver seam (driver_test.go): they never build a lock
// key or value themselves, driver.Key and driver.Decode do.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// TestLockResentHandOverToClaimerKeepsOneOwner: G1 (Client A, via the proxy) holds; G2 is queued
// behind it in Client A; W (Client B) has waited long enough to claim the lock. G1's final unlock
// hands the lock to the claimer W; its reply is lost and go-redis re-sends it. The re-send must
// answer what the first run did (handed to W), so that Client A does not hand the lock to G2 too.
//
// W's commands are held back (cmdHook) from before G1's unlock until G1's Unlock has returned,
// so the re-send surely runs before W confirms the hand-over. Then G2 and W must never hold at the
// same time, and G1's Unlock must succeed.
func TestLockResentHandOverToClaimerKeepsOneOwner(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "resent-handover"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	})
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA, redisson.WithRepollInterval(10*time.Second))
	rdbB := srv.Client(t)
	hookB := &cmdHook{}
	rdbB.AddHook(hookB)
	b := newClient(t, rdbB, redisson.WithRepollInterval(20*time.Millisecond))

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); hookB.release(); wg.Wait() })
	warmUpDriver(t, ctx, d, a)

	g1, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}

	// Who holds, as far as the Lock calls returned; an acquisition while another live hold is
	// there is recorded.
	var mu sync.Mutex
	holding := map[string]driverHold{}
	var twoOwners []string
	acquired := func(who string, h driverHold) {
		mu.Lock()
		defer mu.Unlock()
		for other, oh := range holding {
			if oh.Context().Err() == nil && h.Context().Err() == nil {
				twoOwners = append(twoOwners, fmt.Sprintf("%s acquired while %s held", who, other))
			}
		}
		holding[who] = h
	}
	releasing := func(who string) {
		mu.Lock()
		defer mu.Unlock()
		delete(holding, who)
	}

	wDone, g2Done := make(chan struct{}), make(chan struct{}) // closed when the Lock call returned
	wRes, g2Res := make(chan error, 1), make(chan error, 1)
	spawn(&wg, func() { // W, through Client B
		h, err := d.Lock(ctx, b, name, 20*time.Second, 0)
		if err == nil {
			acquired("W", h)
		}
		close(wDone)
		wRes <- err
		if err != nil {
			return
		}
		// Hold until G2's Lock returns (which must not happen while W holds), or a grace period
		// far longer than the hand-over takes.
		awaitClosed(ctx, g2Done, 2*time.Second)
		releasing("W")
		_ = h.Unlock(context.WithoutCancel(ctx))
	})
	eventually(t, 5*time.Second, "W to claim the lock (two attempts after waiting 10ms)", hookB.claimed)

	spawn(&wg, func() { // G2, queued behind G1 in Client A
		var h driverHold
		var err error
		inLock(func() { h, err = d.Lock(ctx, a, name, 20*time.Second, 0) })
		if err == nil {
			acquired("G2", h)
		}
		close(g2Done)
		g2Res <- err
		if err != nil {
			return
		}
		awaitClosed(ctx, wDone, 5*time.Second)
		releasing("G2")
		_ = h.Unlock(context.WithoutCancel(ctx))
	})
	eventually(t, 5*time.Second, "G2 to wait for the lock in Client A", func() bool { return parkedInLock() >= 1 })

	// Keep W from confirming the hand-over until G1's Unlock has returned.
	hookB.hold(nil)
	eventually(t, 5*time.Second, "W's commands in flight to be answered", func() bool { return hookB.inFlight() == 0 })
	// Only G1's unlock may be in flight on Client A when the reply is dropped.
	eventually(t, 5*time.Second, "Client A's commands in flight to be answered", func() bool { return hookA.inFlight() == 0 })

	// G1's final unlock hands the lock to W; its reply is lost and go-redis re-sends it.
	dials := dialA.dialed()
	p.DropReplies(1)
	unlockRes := make(chan error, 1)
	spawn(&wg, func() { unlockRes <- g1.Unlock(context.WithoutCancel(ctx)) })
	unlockErr := recvWithin(t, unlockRes, 10*time.Second, "G1's Unlock")
	p.DropReplies(0)
	hookB.release()
	if dialA.dialed() == dials {
		t.Fatalf("precondition: G1's unlock opened no new connection: its reply was not dropped and re-sent")
	}

	if err := recvWithin(t, wRes, 10*time.Second, "W's Lock"); err != nil {
		t.Errorf("W's Lock = %v, want the lock (handed over by G1's unlock)", err)
	}
	if err := recvWithin(t, g2Res, 10*time.Second, "G2's Lock"); err != nil {
		t.Errorf("G2's Lock = %v, want the lock after W", err)
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	recvWithin(t, allDone, 10*time.Second, "W and G2 to unlock")

	if unlockErr != nil {
		t.Errorf("G1's Unlock (reply lost, re-sent) = %v, want nil", unlockErr)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range twoOwners {
		t.Errorf("two owners: %s", s)
	}
}

// TestLockResentHandOverAfterClaimerConfirmed: the same lost reply of G1's final unlock, which
// handed the lock to the claimer W, but W confirms the hand-over before the re-send arrives. G1's
// Unlock must return nil (not ErrNotHeld and ErrLockLost), and no EventLost be emitted for G1.
//
// The re-send needs a new connection, which heldDialer holds until W's Lock has returned (W
// confirmed the hand-over).
func TestLockResentHandOverAfterClaimerConfirmed(t *testing.T) {
	const name = "resent-handover-confirmed"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p)
	var evMu sync.Mutex
	var events []redisson.Event
	a := newClient(t, rdbA, redisson.WithEventHook(func(e redisson.Event) {
		evMu.Lock()
		events = append(events, e)
		evMu.Unlock()
	}))
	rdbB := srv.Client(t)
	hookB := &cmdHook{}
	rdbB.AddHook(hookB)
	b := newClient(t, rdbB, redisson.WithRepollInterval(20*time.Millisecond))

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wUnlock := make(chan struct{})
	t.Cleanup(func() { cancel(); dialA.resumeDials(); wg.Wait() })
	warmUpDriver(t, ctx, d, a)

	g1, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	wRes := make(chan error, 1)
	spawn(&wg, func() { // W, through Client B
		h, err := d.Lock(ctx, b, name, 20*time.Second, 0)
		wRes <- err
		if err != nil {
			return
		}
		awaitClosed(ctx, wUnlock, 10*time.Second)
		_ = h.Unlock(context.WithoutCancel(ctx))
	})
	eventually(t, 5*time.Second, "W to claim the lock (two attempts after waiting 10ms)", hookB.claimed)

	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	unlockRes := make(chan error, 1)
	spawn(&wg, func() { unlockRes <- g1.Unlock(context.WithoutCancel(ctx)) })
	recvWithin(t, reached, 5*time.Second, "the re-send of G1's unlock to open a new connection")
	p.DropReplies(0)
	if err := recvWithin(t, wRes, 5*time.Second, "W to confirm the hand-over (its Lock to return)"); err != nil {
		t.Fatalf("W's Lock = %v, want the lock handed over by G1's unlock", err)
	}
	dialA.resumeDials()
	unlockErr := recvWithin(t, unlockRes, 10*time.Second, "G1's Unlock")
	close(wUnlock)

	if unlockErr != nil {
		t.Errorf("G1's Unlock (reply lost, re-sent after W confirmed) = %v (ErrNotHeld %v, ErrLockLost %v), want nil",
			unlockErr, errors.Is(unlockErr, redisson.ErrNotHeld), errors.Is(unlockErr, redisson.ErrLockLost))
	}
	evMu.Lock()
	defer evMu.Unlock()
	for _, e := range events {
		if e.Kind == redisson.EventLost && e.Name == name {
			t.Errorf("EventLost emitted for G1's lock after its successful unlock: %v", e.Err)
		}
	}
}

// TestLockResentPartialUnlockAppliedOnce: goroutine X holds at depth 2 (acquire + Reenter) and
// unlocks one level; the reply is lost; goroutine Y (sharing the hold) re-enters before the
// re-send. The re-send must not decrement again: the hold count stays exact, and after X's
// remaining unlock Y's level must still exclude another Client.
//
// The re-send needs a new connection, which heldDialer holds until Y's re-entry has returned.
func TestLockResentPartialUnlockAppliedOnce(t *testing.T) {
	const name = "resent-partial"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p)
	a := newClient(t, rdbA)
	other := newClient(t, srv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	warmUpDriver(t, ctx, d, a)

	x, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("X Lock: %v", err)
	}
	xLevel2, err := x.Reenter(ctx)
	if err != nil {
		t.Fatalf("X Reenter: %v", err)
	}

	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	xRes := make(chan error, 1)
	spawn(&wg, func() { xRes <- xLevel2.Unlock(ctx) }) // X: partial unlock, reply lost
	recvWithin(t, reached, 5*time.Second, "the re-send of X's partial unlock to open a new connection")
	p.DropReplies(0)
	yRes := make(chan driverAcq, 1)
	spawn(&wg, func() { // Y: re-enters the same hold before the re-send
		lvl, err := x.Reenter(ctx)
		yRes <- driverAcq{lvl: lvl, err: err}
	})
	y := recvWithin(t, yRes, 5*time.Second, "Y's re-entry")
	dialA.resumeDials()
	if err := recvWithin(t, xRes, 10*time.Second, "X's partial unlock"); err != nil {
		t.Errorf("X's partial Unlock (reply lost, re-sent) = %v, want nil", err)
	}
	if y.err != nil {
		t.Fatalf("Y's Reenter = %v", y.err)
	}

	// Levels held: X's acquisition and Y's re-entry.
	if n, err := x.HoldCount(ctx); err != nil || n != 2 {
		t.Errorf("HoldCount after X's partial unlock and Y's re-entry = %d (err %v), want 2", n, err)
	}
	if err := x.Unlock(ctx); err != nil {
		t.Errorf("X's remaining Unlock = %v, want nil", err)
	}
	if h, err := d.Lock(ctx, other, name, 0, 0); err == nil {
		t.Errorf("another Client acquired the lock while Y still holds a level of it")
		_ = h.Unlock(ctx)
	}
	if err := y.lvl.Unlock(ctx); err != nil {
		t.Logf("Y's Unlock: %v", err)
	}
}

// TestLockResentReentryAppliedOnce mirrors TestLockResentPartialUnlockAppliedOnce for a re-entry:
// X re-enters; the reply is lost; Y (sharing the hold) re-enters before the re-send, which
// heldDialer holds until then. The re-send must not increment again: the hold count stays exact
// and as many Unlocks as acquisitions and re-entries free the lock (rather than leaving it held,
// renewed by the watchdog).
func TestLockResentReentryAppliedOnce(t *testing.T) {
	const name = "resent-reentry"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p)
	a := newClient(t, rdbA)
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	warmUpDriver(t, ctx, d, a)

	x, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("X Lock: %v", err)
	}
	owner := x.Owner()

	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	xRes := make(chan driverAcq, 1)
	spawn(&wg, func() { // X: re-entry, reply lost
		lvl, err := x.Reenter(ctx)
		xRes <- driverAcq{lvl: lvl, err: err}
	})
	recvWithin(t, reached, 5*time.Second, "the re-send of X's re-entry to open a new connection")
	p.DropReplies(0)
	yRes := make(chan driverAcq, 1)
	spawn(&wg, func() { // Y: re-enters the same hold before the re-send
		lvl, err := x.Reenter(ctx)
		yRes <- driverAcq{lvl: lvl, err: err}
	})
	y := recvWithin(t, yRes, 5*time.Second, "Y's re-entry")
	dialA.resumeDials()
	xr := recvWithin(t, xRes, 10*time.Second, "X's re-entry")

	levels := []driverLevel{x}
	for i, r := range []driverAcq{xr, y} {
		if r.err != nil {
			t.Errorf("%s's Reenter = %v, want success", []string{"X", "Y"}[i], r.err)
			continue
		}
		levels = append(levels, r.lvl)
	}
	if n, err := x.HoldCount(ctx); err != nil || n != len(levels) {
		t.Errorf("HoldCount after the acquisition and %d re-entries = %d (err %v), want %d", len(levels)-1, n, err, len(levels))
	}
	for i, lvl := range slices.Backward(levels) {
		if err := lvl.Unlock(ctx); err != nil {
			t.Errorf("Unlock of level %d = %v, want nil", i+1, err)
		}
	}
	if o, n := driverHolder(t, admin, d, name); o == owner {
		t.Errorf("after %d Unlocks for %d acquisitions and re-entries the lock is still held by its owner "+
			"(hold count %d), renewed by the watchdog", len(levels), len(levels), n)
	}
}

// TestLockResentFinalUnlockAfterManyReleases: a final release is applied, its reply lost, and while
// its re-send is held back another Client locks and unlocks the lock 200 times. The re-send must
// still answer what the first run did: Unlock returns nil and no EventLost is emitted (rather than
// ErrNotHeld and ErrLockLost for a lock that was released). doc.go: "a repeat answers what the
// first run did, even after the lock changed hands any number of times."
func TestLockResentFinalUnlockAfterManyReleases(t *testing.T) {
	const name = "resent-final"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p)
	var evMu sync.Mutex
	var lost []error
	a := newClient(t, rdbA, redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			evMu.Lock()
			lost = append(lost, e.Err)
			evMu.Unlock()
		}
	}))
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	warmUpDriver(t, ctx, d, a)

	g1, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	spawn(&wg, func() { res <- g1.Unlock(ctx) })
	recvWithin(t, reached, 5*time.Second, "the re-send of G1's final unlock to open a new connection")
	p.DropReplies(0)

	// The lock was released by the first run; others use it meanwhile.
	const cycles = 200
	for i := 0; i < cycles; i++ {
		h, err := b.Lock(name).TryLock(ctx)
		if err != nil {
			t.Fatalf("B TryLock %d: %v", i, err)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("B Unlock %d: %v", i, err)
		}
	}
	dialA.resumeDials()
	if err := recvWithin(t, res, 10*time.Second, "G1's Unlock"); err != nil {
		t.Errorf("G1's final Unlock (applied, reply lost, re-sent after %d other releases) = %v "+
			"(ErrNotHeld %v, ErrLockLost %v), want nil", cycles, err,
			errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost))
	}
	evMu.Lock()
	defer evMu.Unlock()
	for _, e := range lost {
		t.Errorf("EventLost emitted for G1's lock, which its Unlock released: %v", e)
	}
}

// TestLockResentPartialUnlockAfterOwnerReleased checks that a re-sent partial release answers what
// its first run did even after the owner's final release and another release of the lock by the
// same Client. A partial release does not hold the Client's turn, so those can run, answer and
// overwrite the Client's history record while the partial release's re-send is in flight. The
// partial Unlock must return nil (not ErrNotHeld and ErrLockLost, "changing nothing") and no
// EventLost be emitted: the owner released the lock normally and was never lost. doc.go: "a repeat
// answers what the first run did, even after the lock changed hands any number of times".
//
// Forcing: X holds two levels; the partial unlock's reply is dropped and its re-send waits for a new
// connection (heldDialer); meanwhile X's final unlock releases the lock and another goroutine of
// the same Client locks and unlocks it. Then the re-send goes.
func TestLockResentPartialUnlockAfterOwnerReleased(t *testing.T) {
	const name = "resent-partial-released"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p)
	var evMu sync.Mutex
	var lost []error
	a := newClient(t, rdbA, redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			evMu.Lock()
			lost = append(lost, e.Err)
			evMu.Unlock()
		}
	}))
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	warmUpDriver(t, ctx, d, a)

	x, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("X Lock: %v", err)
	}
	lvl, err := x.Reenter(ctx)
	if err != nil {
		t.Fatalf("X Reenter: %v", err)
	}
	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	spawn(&wg, func() { res <- lvl.Unlock(ctx) })
	recvWithin(t, reached, 5*time.Second, "the re-send of the partial unlock to open a new connection")
	p.DropReplies(0)
	if n, err := x.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("precondition: after the partial unlock's first run the owner holds %d levels (err %v), want 1", n, err)
	}

	// X's final unlock, then another goroutine of the same Client takes and releases the lock.
	if err := x.Unlock(ctx); err != nil {
		t.Fatalf("X's final Unlock = %v", err)
	}
	g2, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("G2 Lock: %v", err)
	}
	if err := g2.Unlock(ctx); err != nil {
		t.Fatalf("G2 Unlock: %v", err)
	}

	dialA.resumeDials()
	if err := recvWithin(t, res, 10*time.Second, "the partial unlock"); err != nil {
		t.Errorf("partial Unlock whose first run released the level (reply lost, re-sent after the owner's final "+
			"release and another release by the same Client) = %v (ErrNotHeld %v, ErrLockLost %v), want nil",
			err, errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost))
	}
	evMu.Lock()
	defer evMu.Unlock()
	for _, e := range lost {
		t.Errorf("EventLost emitted for a hold that was released normally: %v", e)
	}
}

// TestLockResentForceUnlockSparesNextHolder checks that ForceUnlock, which "deletes the lock
// whoever holds it", does so once: when its reply is lost it is not sent again (Redis keeps no
// record of it, and a second run would delete the lock of whoever acquired it since: another owner
// Y, while a third acquirer Z then takes it too). ForceUnlock reports the unknown outcome instead,
// and Y keeps the lock it acquired after the first run.
func TestLockResentForceUnlockSparesNextHolder(t *testing.T) {
	const name = "resent-force"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbF, dialF := proxiedClient(t, srv, p)
	f := newClient(t, rdbF)
	x := newClient(t, srv.Client(t))
	y := newClient(t, srv.Client(t))
	z := newClient(t, srv.Client(t))
	ctx := t.Context()
	// Load the script through f.
	if _, err := f.Lock(name).ForceUnlock(ctx); err != nil {
		t.Fatalf("warm-up ForceUnlock: %v", err)
	}

	hx, err := x.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("X Lock: %v", err)
	}
	oneIdleConn(t, rdbF)
	dials := dialF.dialed()
	p.DropReplies(1)
	_, err = f.Lock(name).ForceUnlock(ctx)
	p.DropReplies(0)
	if err == nil {
		t.Errorf("ForceUnlock whose reply was lost = nil; want the error of the unknown outcome")
	}
	if admin.Exists(ctx, redisson.LockKeyOf(f, name)).Val() != 0 {
		t.Fatalf("precondition: the first run of ForceUnlock did not delete X's lock")
	}
	if n := dialF.dialed() - dials; n != 0 {
		t.Errorf("ForceUnlock opened %d new connections after its reply was lost; want none (no re-send)", n)
	}
	_ = hx // X learns of the force unlock at its next renewal
	hy, err := y.Lock(name).TryLock(ctx)
	if err != nil {
		t.Fatalf("Y TryLock after the force unlock: %v", err)
	}
	if hz, err := z.Lock(name).TryLock(ctx); err == nil {
		t.Errorf("Z acquired the lock while Y (which acquired after the force unlock) still holds it "+
			"(Y's hold context live: %v): a second run of ForceUnlock deleted Y's lock", hy.Context().Err() == nil)
		_ = hz.Unlock(ctx)
	}
	_ = hy.Unlock(ctx)
}

// refusingDialer wraps heldDialer: while fail is positive it refuses command connections (as a
// network that is down would), counting them down in fail and up in seen; then it dials normally.
type refusingDialer struct {
	*heldDialer
	mu   sync.Mutex
	fail int
	seen int // refused so far
}

func (d *refusingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if !pubSubDial() {
		d.mu.Lock()
		if d.fail > 0 {
			d.fail--
			d.seen++
			d.mu.Unlock()
			return nil, errors.New("connection refused (simulated)")
		}
		d.mu.Unlock()
	}
	return d.heldDialer.dial(ctx, network, addr)
}

// A final release re-sent late, after its first run released the lock and its reply was lost, is
// reported as a release: the re-send finds the owner gone ("not held"), and since it answers a
// re-send of a release sent while the lease was in force, Unlock returns nil and no EventLost is
// reported (hold.go: releaseFinal). Redis keeps no record of releases, so none can expire before a
// late re-send arrives, however long the dials before it take.
//
// Forcing: MaxRetries 1 and 200ms timeouts; DialerRetryTimeout is 1s. The final release's reply is
// dropped, and the first 3 dials of the re-send are refused, so the re-send runs ~3s after the first
// run.
func TestLockFinalUnlockResentLateReportsRelease(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "resent-late-release"
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rd := &heldDialer{proxy: p.Addr(), direct: srv.Addr(), resume: make(chan struct{})}
	fd := &refusingDialer{heldDialer: rd}
	rdbA := srv.Client(t, func(o *redis.Options) {
		o.Addr = p.Addr()
		o.Dialer = fd.dial
		o.MaxRetries = 1
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 8*time.Millisecond
		o.DialerRetryTimeout = time.Second
	})
	var evMu sync.Mutex
	var lost []error
	a := newClient(t, rdbA, redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost {
			evMu.Lock()
			lost = append(lost, e.Err)
			evMu.Unlock()
		}
	}))
	ctx := t.Context()
	warmUpScripts(t, a)

	h, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	oneIdleConn(t, rdbA)
	fd.mu.Lock()
	fd.fail = 3
	fd.mu.Unlock()
	p.DropReplies(1)
	start := time.Now()
	err = h.Unlock(ctx)
	took := time.Since(start)
	p.DropReplies(0)
	fd.mu.Lock()
	refused := fd.seen
	fd.mu.Unlock()
	if refused != 3 {
		t.Fatalf("precondition: %d dials refused, want 3 (Unlock = %v after %v)", refused, err, took)
	}
	t.Logf("final Unlock (reply dropped, re-sent after %v) = %v", took, err)
	if err != nil {
		t.Errorf("final Unlock whose first run released the lock = %v (ErrNotHeld %v, ErrLockLost %v), want nil: "+
			"the re-send arrived %v after the first run",
			err, errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost), took)
	}
	evMu.Lock()
	defer evMu.Unlock()
	for _, e := range lost {
		t.Errorf("EventLost emitted for a lock its Unlock released: %v", e)
	}
}

// heldOp marks the contexts of the operations a test wants to hold back (downHook).
type heldOp struct{}

func heldOpMarked(ctx context.Context) bool { return ctx.Value(heldOp{}) != nil }

// downHook is a go-redis hook: while down, commands whose context is not marked (heldOp or
// testMark) fail at once, as over a broken network (the library's renewals); while holding,
// commands marked with heldOp wait until released (or their context ends).
type downHook struct {
	mu   sync.Mutex
	down bool
	hold chan struct{}
	held int // marked commands waiting right now
}

func (h *downHook) setDown(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.down = on
}

func (h *downHook) holdOps() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold == nil {
		h.hold = make(chan struct{})
	}
}

func (h *downHook) releaseOps() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold != nil {
		close(h.hold)
		h.hold = nil
	}
}

func (h *downHook) heldOps() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

func (h *downHook) gate(ctx context.Context) error {
	marked := heldOpMarked(ctx) || testMarked(ctx)
	h.mu.Lock()
	if !marked {
		down := h.down
		h.mu.Unlock()
		if down {
			return errNetworkDown
		}
		return nil
	}
	hold := h.hold
	if hold == nil || !heldOpMarked(ctx) {
		h.mu.Unlock()
		return nil
	}
	h.held++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.held--
		h.mu.Unlock()
	}()
	select {
	case <-hold:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *downHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *downHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.gate(ctx); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *downHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.gate(ctx); err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		return next(ctx, cmds)
	}
}

var errNetworkDown = errors.New("network down (simulated)")

// TestLockLostReplyAfterLossDoesNotReArm checks that a re-entry or partial unlock that lands after
// the owner was declared lost, and whose reply is lost (MaxRetries -1: no re-send), does not leave
// the lock held after the owner's last Unlock. doc.go: "A re-entry or partial unlock still in
// flight when the hold is lost may set the lease again when it lands; the client then releases the
// lock at once (and again later if the operation's own outcome stayed unknown)". Here the outcome
// is unknown, and the lease it may have set (and, for a re-entry, the clean-up that releases the
// new level, which sets the lease once more after the loss) must still be undone: the owner's last
// Unlock sends nothing, so nothing else would. The key's expiry must not move past the expiry in
// force at the loss.
//
// Forcing: Client A's renewals fail (downHook down) so the scheduler declares the loss at lease/2
// (margin 0.5); the operation is held back by the hook until the loss, then let through with its
// reply dropped by the proxy.
func TestLockLostReplyAfterLossDoesNotReArm(t *testing.T) {
	long(t)
	t.Parallel()
	for _, op := range []string{"reenter", "partial-unlock"} {
		t.Run(op, func(t *testing.T) {
			const watchdog = 1200 * time.Millisecond
			name := "lost-reply-after-loss-" + op
			srv := redistest.Start(t)
			admin := srv.Client(t)
			p := redistest.NewProxy(t, srv.Addr())
			rdbA, dialA := proxiedClient(t, srv, p, func(o *redis.Options) { o.MaxRetries = -1 })
			hook := &downHook{}
			rdbA.AddHook(hook)
			a := newClient(t, rdbA, redisson.WithWatchdogTimeout(watchdog), redisson.WithLossMargin(0.5))
			var wg sync.WaitGroup
			t.Cleanup(func() { hook.releaseOps(); dialA.resumeDials(); wg.Wait() })
			warmUpScripts(t, a)
			ctx := context.WithValue(t.Context(), heldOp{}, true)
			key := redisson.LockKeyOf(a, name)

			h, err := a.Lock(name).Lock(ctx)
			if err != nil {
				t.Fatalf("Lock: %v", err)
			}
			owner := redisson.OwnerOf(h)
			var lvl *redisson.Hold
			if op == "partial-unlock" {
				if lvl, err = h.Reenter(ctx); err != nil {
					t.Fatalf("Reenter: %v", err)
				}
			}

			hook.setDown(true) // renewals fail from now on
			hook.holdOps()
			res := make(chan error, 1)
			spawn(&wg, func() {
				if op == "partial-unlock" {
					res <- lvl.Unlock(ctx)
					return
				}
				l, err := h.Reenter(ctx)
				if err == nil {
					_ = l.Unlock(ctx)
				}
				res <- err
			})
			eventually(t, 5*time.Second, "the "+op+" to be held back", func() bool { return hook.heldOps() >= 1 })
			faultWaitDone(t, h.Context(), 5*time.Second, "the loss to be declared (renewals failing)")
			if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
				t.Fatalf("precondition: hold ended with %v, want ErrLockLost", cause)
			}
			o, expiryAtLoss := lockHolder(t, admin, key)
			if o != owner || expiryAtLoss.IsZero() {
				t.Fatalf("precondition: at the loss the key is held by %q (expiry %v), want the lost owner with a TTL", o, expiryAtLoss)
			}

			// The operation lands now; its reply is lost.
			p.DropReplies(1)
			hook.releaseOps()
			opErr := recvWithin(t, res, 10*time.Second, op)
			p.DropReplies(0)
			// The operation may answer either way: the library sends it again after its lost reply
			// (the scripts are safe to run twice). Either way it must not re-arm the lost lock.
			t.Logf("%s with its reply lost after the loss = %v", op, opErr)
			// The owner's last level.
			if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
				t.Logf("last Unlock = %v", err)
			}

			o, expiry := lockHolder(t, admin, key)
			if o == owner && expiry.After(expiryAtLoss.Add(150*time.Millisecond)) {
				t.Errorf("after the loss and the owner's last Unlock, the lost owner's lock was re-armed by the %s "+
					"(reply lost): it is held by nobody until %v from now, %v past the lease in force at the loss; "+
					"nothing undoes it", op, time.Until(expiry).Round(time.Millisecond),
					expiry.Sub(expiryAtLoss).Round(time.Millisecond))
			}
		})
	}
}

// TestLockResentReleaseDoesNotHandOverLapsedLease checks that a final release that transferred the
// lock to the local heir (lock_release.lua: SET heir PX <heir's lease>), whose reply was lost and
// whose re-send comes late, does not hand the heir a lock whose lease lapsed meanwhile: the heir's
// Lock must not return success while another Client holds the lock. doc.go: "at most one owner
// holds a lock at a time, and the owner is told (ErrLockLost) before its lease can lapse"; Lock's
// success promises a held lock, not one lost before it was returned.
//
// Forcing: G1 (Client A) holds; W (Client A, WithLease 1s) is queued behind it. G1's final
// unlock transfers the lock to W; its reply is dropped and the re-send waits for a new connection
// (heldDialer) until W's transferred lease has expired and Client B has acquired the lock.
func TestLockResentReleaseDoesNotHandOverLapsedLease(t *testing.T) {
	long(t)
	t.Parallel()
	// Whether W's Lock sees the loss before it returns is a race between W's goroutine (woken by
	// the hand-over) and the scheduler goroutine (poked by the registration that follows it): W
	// usually wins. A few rounds make the failure reliable.
	const rounds = 5
	for i := range rounds {
		if msg := resentHandOverRound(t, fmt.Sprintf("handover-lapsed-%d", i)); msg != "" {
			t.Errorf("round %d: %s", i+1, msg)
			return
		}
	}
}

// resentHandOverRound runs the scenario of TestLockResentReleaseDoesNotHandOverLapsedLease once
// and returns a description of the violation, or "".
func resentHandOverRound(t *testing.T, name string) string {
	const heirLease = time.Second // long enough to see the transfer on a loaded machine
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	})
	// No loss tracking on A: its connection would go through the same proxy and dialer, whose
	// faults (one dropped reply, one held dial) are aimed at G1's release.
	a := newClient(t, rdbA, redisson.WithLossTracking(false))
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	defer func() { dialA.resumeDials(); wg.Wait() }()
	warmUpDriver(t, ctx, d, a)

	g1, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	type wResult struct {
		h       *redisson.Hold
		err     error
		at      time.Time
		liveNow bool // the hold's context was live when Lock returned
	}
	wRes := make(chan wResult, 1)
	spawn(&wg, func() {
		var r wResult
		inLock(func() { r.h, r.err = a.Lock(name).Lock(ctx, redisson.WithLease(heirLease)) })
		r.at = time.Now()
		if r.err == nil {
			r.liveNow = r.h.Context().Err() == nil
		}
		wRes <- r
	})
	eventually(t, 5*time.Second, "W to queue behind G1 in Client A", func() bool { return parkedInLock() >= 1 })

	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	unlockRes := make(chan error, 1)
	spawn(&wg, func() { unlockRes <- g1.Unlock(ctx) })
	recvWithin(t, reached, 5*time.Second, "the re-send of G1's final unlock to open a new connection")
	p.DropReplies(0)
	if o, _ := lockHolder(t, admin, redisson.LockKeyOf(a, name)); o == "" || o == redisson.OwnerOf(g1) {
		t.Fatalf("precondition: the first run of G1's unlock did not transfer the lock (holder %q)", o)
	}

	// W's transferred lease runs out (nobody renews a fixed lease; W does not know it holds); B takes the lock.
	bctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	hb, err := b.Lock(name).Lock(bctx)
	if err != nil {
		t.Fatalf("B Lock after W's transferred lease ran out: %v", err)
	}
	bAt := time.Now()
	dialA.resumeDials()
	if err := recvWithin(t, unlockRes, 5*time.Second, "G1's Unlock"); err != nil {
		t.Logf("G1's Unlock = %v", err)
	}
	// G1's Unlock decided the hand-over before returning: had it handed W the lock, W's hold would
	// be registered with A's scheduler by now, while B holds the lock.
	select {
	case r := <-wRes:
		if r.err == nil {
			_ = r.h.Unlock(ctx)
			return fmt.Sprintf("W's Lock returned success %v after B acquired the lock, while B still holds it (B's hold live: %v; "+
				"W's hold context live when Lock returned: %v): the re-sent release's answer handed W a lock whose lease "+
				"had lapsed", r.at.Sub(bAt).Round(time.Millisecond), hb.Context().Err() == nil, r.liveNow)
		}
		t.Logf("W's Lock = %v", r.err)
		return ""
	default:
	}
	if n := a.Stats().Held; n != 0 {
		return fmt.Sprintf("Client A registered %d hold(s) after B acquired the lock: the re-sent release's answer "+
			"handed W a lock whose lease had lapsed", n)
	}
	// W still waits, as any waiter: it gets the lock once B releases it.
	if err := hb.Unlock(ctx); err != nil {
		t.Fatalf("B Unlock: %v", err)
	}
	r := recvWithin(t, wRes, 5*time.Second, "W's Lock after B's release")
	if r.err != nil {
		t.Fatalf("W's Lock after B's release = %v", r.err)
	}
	_ = r.h.Unlock(ctx)
	return ""
}

// Shows that an acquisition whose reply was lost and whose re-sends could not even be written (no
// connection could be made) is undone: the first attempt may have run, so the error must not be
// taken for "never sent" (send's notSent), which would skip the undo and leave the lock held for a
// whole lease by an owner that was told it failed. Once Redis can be reached again, the background
// undo frees the lock well before the lease (30s) ends.
func TestLockLostReplyThenUnreachableIsUndone(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, down := refusableProxyClient(t, srv, p)
	c := newClient(t, rdb)
	ctx := t.Context()
	warmUpScripts(t, c)
	oneIdleConn(t, rdb)
	const name = "lost-then-unreachable"
	key := redisson.LockKeyOf(c, name)
	down.Store(true) // the re-sends need a new connection: none can be made
	p.DropReplies(1) // the acquisition (SET NX on the pooled connection) runs; its reply is lost
	_, err := c.Lock(name).TryLock(ctx)
	p.DropReplies(0)
	if err == nil {
		t.Fatal("TryLock with its reply lost and Redis unreachable = nil; want an error")
	}
	if owner := lockOwner(t, admin, key); owner == "" {
		t.Fatalf("precondition: the acquisition did not run (the lock is free); TryLock = %v", err)
	}
	down.Store(false)
	eventually(t, 6*time.Second, "the lost acquisition undone once Redis is reachable", func() bool {
		return lockOwner(t, admin, key) == ""
	})
}

// A copy of an acquisition that lands after the owner's release is undone, also when the
// acquisition was answered by its re-send: A locks through a proxy that drops the reply of the first
// SET NX (it ran); the re-send completes the acquisition; A unlocks; the first copy, replayed as a
// late copy, then takes the free lock for A's finished owner. B must get the lock within 10s (the
// Client's repeated undos), not after the copy's 30s watchdog lease.
func TestLockLateCopyOfResentAcquisitionIsUndone(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "late-resent-acquisition"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	hook := newScriptHook()
	rdbA.AddHook(hook)
	a := newClient(t, rdbA)
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	mustUnlock(t, mustLock(t, a.Lock(name), ctx)) // first use: the server check, connections
	key := redisson.LockKeyOf(a, name)
	hook.set(func(args []string) bool { return len(args) > 1 && strings.EqualFold(args[0], "set") && args[1] == key }, false)
	p.DropReplies(1)
	h := mustLock(t, a.Lock(name), ctx)
	p.DropReplies(0)
	hook.release()
	hook.mu.Lock()
	copies := slices.Clone(hook.captured)
	hook.mu.Unlock()
	if len(copies) < 2 {
		t.Fatalf("precondition: %d SET NX sent; want the first and its re-send", len(copies))
	}
	mustUnlock(t, h)
	lateCopyIsUndone(t, admin, b, name, copies[0], "A's re-sent acquisition")
}

// lateCopyIsUndone replays late, after its owner's final unlock, the first copy of an acquisition
// (copy: its arguments) that was answered by a re-send: it takes the free lock for the ended owner.
// Client other must then get the lock within 10s (the owner's Client's repeated undos), not after
// the copy's whole watchdog lease.
func lateCopyIsUndone(t *testing.T, admin *redis.Client, other *redisson.Client, name string, copy []any, what string) {
	t.Helper()
	ctx := t.Context()
	key := redisson.LockKeyOf(other, name)
	if err := admin.Do(ctx, copy...).Err(); err != nil {
		t.Fatalf("precondition: replaying the first copy: %v", err)
	}
	if admin.Get(ctx, key).Val() == "" {
		t.Fatalf("precondition: the replayed first copy did not take the free lock")
	}
	start := time.Now()
	h, err := other.Lock(name).TryLock(ctx, redisson.WithWait(10*time.Second))
	if err != nil {
		t.Fatalf("another Client cannot take the lock within 10s of the release (held by %q for %v more): %v; "+
			"the late copy of %s holds it for its whole lease", admin.Get(ctx, key).Val(),
			admin.PTTL(ctx, key).Val().Round(time.Second), err, what)
	}
	t.Logf("the other Client took the lock %v after the late copy landed", time.Since(start).Round(time.Millisecond))
	mustUnlock(t, h)
}

// TestLockLateCopyOfResentQueuedAttemptUndoneAfterHandOver: a waiting Lock's queued attempt is
// answered by a re-send (its reply lost), then the holder's release hands the lock to the waiter,
// which takes it from the hand-over message without another attempt (no acquisition of its own
// was answered by a re-send since). The first copy of the queued attempt may still be travelling:
// landing after the waiter's final unlock, it finds the lock free and takes it for the ended
// owner. As for any acquisition answered by a re-send (doc.go), the owner's end must be followed by
// the repeated undos, or the lock stays held by nobody for a whole watchdog lease.
//
// Forcing: the reply of A's first queued attempt (the script in mode "w") is dropped by the proxy;
// the test replays that first copy, recorded by a hook, after A's Unlock.
func TestLockLateCopyOfResentQueuedAttemptUndoneAfterHandOver(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "late-resent-queued-attempt"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, _ := proxiedClient(t, srv, p)
	hook := newScriptHook()
	rdbA.AddHook(hook)
	// A re-polls rarely, so only the hand-over message wakes it.
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(30*time.Second), redisson.WithRepollInterval(time.Minute))
	b := newClient(t, srv.Client(t))
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	warmUpScripts(t, a)
	mustUnlock(t, mustLock(t, a.Lock(name), ctx)) // first use: the server check, connections
	key := redisson.LockKeyOf(a, name)

	hb := mustLock(t, b.Lock(name), ctx)
	queuedAttempt := func(args []string) bool {
		return len(args) > 10 && strings.EqualFold(args[0], "evalsha") && args[3] == key && args[10] == "w"
	}
	hook.set(queuedAttempt, false)
	var dropped atomic.Bool
	hook.setAround(func(args []string, next func()) {
		if queuedAttempt(args) && dropped.CompareAndSwap(false, true) {
			p.DropReplies(1)
		}
		next()
	})
	type result struct {
		h   *redisson.Hold
		err error
	}
	res := make(chan result, 1)
	go func() {
		var h *redisson.Hold
		var err error
		inLock(func() { h, err = a.Lock(name).Lock(ctx) })
		res <- result{h, err}
	}()
	// The first attempt, its re-send, and the attempt made once A's subscription is confirmed.
	eventually(t, 5*time.Second, "A's queued attempts to be sent", func() bool {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		return len(hook.captured) >= 3
	})
	eventually(t, 5*time.Second, "A to wait for its hand-over message", func() bool { return parkedInLock() >= 1 })
	mustUnlock(t, hb) // hands the lock to A, queued at the head
	var r result
	select {
	case r = <-res:
	case <-time.After(10 * time.Second):
		t.Fatal("A was not handed the lock within 10s of B's release")
	}
	if r.err != nil {
		t.Fatalf("A's Lock = %v", r.err)
	}
	hook.setAround(nil)
	hook.release()
	hook.mu.Lock()
	copies := slices.Clone(hook.captured)
	hook.mu.Unlock()
	if len(copies) != 3 {
		t.Fatalf("precondition: %d queued attempts sent; want the first, its re-send and the one after the "+
			"subscription, none after the release (the hand-over taken from the message)", len(copies))
	}
	mustUnlock(t, r.h)
	// The first copy of the queued attempt lands late, after A's owner ended.
	lateCopyIsUndone(t, admin, c, name, copies[0], "A's re-sent queued attempt")
}

// TestLockResentReentryRacingUnlockOfOtherLevel: the owner holds one level; a Reenter's reply is
// lost and its re-send held back while another goroutine unlocks the first level (a partial
// release: the re-entry counts). Then the re-send answers; the hold count must be 1, and unlocking
// the re-entered level must free the lock: as many unlocks as acquisitions.
func TestLockResentReentryRacingUnlockOfOtherLevel(t *testing.T) {
	const name = "resent-reentry-racing-unlock"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p)
	a := newClient(t, rdbA)
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	warmUpDriver(t, ctx, d, a)

	x, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	owner := x.Owner()

	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan driverAcq, 1)
	spawn(&wg, func() {
		lvl, err := x.Reenter(ctx)
		res <- driverAcq{lvl: lvl, err: err}
	})
	recvWithin(t, reached, 5*time.Second, "the re-send of the re-entry to open a new connection")
	p.DropReplies(0)
	unlocked := make(chan error, 1)
	spawn(&wg, func() { unlocked <- x.Unlock(ctx) })
	// The unlock needs a connection too: let it dial (the held dial is the re-send's).
	dialA.passNext()
	if err := recvWithin(t, unlocked, 5*time.Second, "the unlock of the first level"); err != nil {
		t.Errorf("Unlock of the first level while the re-entry is in flight = %v, want nil", err)
	}
	dialA.resumeDials()
	r := recvWithin(t, res, 10*time.Second, "the re-entry")
	if r.err != nil {
		t.Fatalf("Reenter = %v, want success", r.err)
	}
	if n, err := x.HoldCount(ctx); err != nil || n != 1 {
		t.Errorf("HoldCount after one acquisition, one re-entry, one unlock = %d (err %v), want 1", n, err)
	}
	if err := r.lvl.Unlock(ctx); err != nil {
		t.Errorf("Unlock of the re-entered level = %v, want nil", err)
	}
	if o, n := driverHolder(t, admin, d, name); o == owner {
		t.Errorf("after 2 Unlocks for 2 acquisitions the lock is still held by its owner (hold count %d)", n)
	}
}
