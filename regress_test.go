package redisson_test

// Regression tests for defects found in the lock of b7b8680. Each test asserts the correct
// behaviour, so it fails on b7b8680 and passes on a library without the defect.
//
// The tests reach the lock only through the lockDriver seam (driver_test.go), built by
// newRegressDriver (regress_driver_select_test.go), so that the same tests run against every API
// generation. They never build a lock key or value themselves: driver.Key and driver.Decode do.
//
// Interleavings are forced, not hoped for:
//   - a lost reply: redistest.Proxy drops the next reply chunk and closes that connection, so
//     go-redis re-sends the command on a new connection. The proxied go-redis client dials through
//     regressDialer, which can hold that new connection (and so the re-send) until the test has
//     made something else happen first, or refuse it. Its pub/sub connections bypass the proxy, so
//     a wake-up message can never take the dropped chunk's place.
//   - a Client kept from acting: cmdHook holds back every command of a go-redis client (or
//     every command not marked by the test) until released.
//   - a goroutine waiting inside Lock: regressParked finds it parked (select or channel receive)
//     in the library, called through regressInLock.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// regressClaimAfter is how long a waiter waits before it claims the lock (the library's starvation
// threshold): its next attempt after that claims it.
const regressClaimAfter = 10 * time.Millisecond

// regressMark marks the contexts of the test's own lock calls, so that cmdHook can let them
// through while it holds back the library's background commands (renewals).
type regressMark struct{}

func regressMarked(ctx context.Context) bool { return ctx.Value(regressMark{}) != nil }

// regressDialer is the Dialer of a go-redis client whose command connections go through a
// redistest.Proxy. Pub/sub connections go straight to the server. The next command connection can
// be held until resumed, or refused.
type regressDialer struct {
	proxy, direct string

	mu      sync.Mutex
	next    int           // what happens to the next command connection: regressDial*
	reached chan struct{} // closed when a held dial starts waiting
	resume  chan struct{} // closed to let held dials go on
	resumed bool
	dials   int // command connections dialled or refused so far
}

const (
	regressDialPass = iota
	regressDialHold
	regressDialFail
)

// regressProxied returns a go-redis client for srv whose command connections go through p.
func regressProxied(t *testing.T, srv *redistest.Server, p *redistest.Proxy, mod ...func(*redis.Options)) (*redis.Client, *regressDialer) {
	t.Helper()
	d := &regressDialer{proxy: p.Addr(), direct: srv.Addr(), resume: make(chan struct{})}
	rdb := srv.Client(t, append([]func(*redis.Options){func(o *redis.Options) {
		o.Addr = p.Addr()
		o.Dialer = d.dial
	}}, mod...)...)
	t.Cleanup(d.resumeDials) // runs before rdb is closed
	return rdb, d
}

// holdNext makes the next command connection wait, before it is dialled, until resumeDials. The
// returned channel is closed when it starts waiting.
func (d *regressDialer) holdNext() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next, d.reached = regressDialHold, make(chan struct{})
	return d.reached
}

// failNext makes the next command connection fail to dial, as if the network were down.
func (d *regressDialer) failNext() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = regressDialFail
}

// passNext cancels a pending holdNext or failNext.
func (d *regressDialer) passNext() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = regressDialPass
}

// dialed reports how many command connections were dialled (or refused) so far.
func (d *regressDialer) dialed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials
}

// resumeDials lets a held dial go on. It is idempotent.
func (d *regressDialer) resumeDials() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.resumed {
		d.resumed = true
		close(d.resume)
	}
}

func (d *regressDialer) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var nd net.Dialer
	if regressPubSubDial() {
		return nd.DialContext(ctx, network, d.direct)
	}
	d.mu.Lock()
	next, reached, resume := d.next, d.reached, d.resume
	d.next = regressDialPass
	d.dials++
	d.mu.Unlock()
	switch next {
	case regressDialHold:
		close(reached)
		select {
		case <-resume:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case regressDialFail:
		return nil, errors.New("regress: connection refused (simulated network failure)")
	}
	return nd.DialContext(ctx, network, d.proxy)
}

// regressPubSubDial reports whether the calling dial opens a go-redis pub/sub connection.
func regressPubSubDial() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "(*PubSubPool).NewConn") {
			return true
		}
		if !more {
			return false
		}
	}
}

// regressOneConn checks that rdb has exactly one connection, idle: a command whose reply is lost is
// then re-sent on a newly dialled connection (through regressDialer).
func regressOneConn(t *testing.T, rdb *redis.Client) {
	t.Helper()
	if s := rdb.PoolStats(); s.TotalConns != 1 || s.IdleConns != 1 {
		t.Fatalf("precondition: the proxied client has %d connections (%d idle), want 1 idle", s.TotalConns, s.IdleConns)
	}
}

// regressInLock runs fn, a call into the lock API, so that regressParked can find it.
//
//go:noinline
func regressInLock(fn func()) { fn() }

// regressParked counts the goroutines running a call through regressInLock that are parked inside
// the library (in a select, a channel receive or a condition variable): waiting for the lock, not
// sending or receiving a command.
func regressParked() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "redisson_test.regressInLock(") {
			continue
		}
		lines := strings.Split(g, "\n")
		i, j := strings.IndexByte(lines[0], '['), strings.IndexAny(lines[0], ",]")
		if i < 0 || j < i {
			continue
		}
		switch lines[0][i+1 : j] {
		case "select", "chan receive", "sync.Cond.Wait":
		default:
			continue
		}
		for _, l := range lines[1:] {
			if l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "runtime.") ||
				strings.HasPrefix(l, "sync.") || strings.HasPrefix(l, "internal/") {
				continue
			}
			if strings.HasPrefix(l, "github.com/goredisson/redisson.") || strings.HasPrefix(l, "github.com/goredisson/redisson/") {
				count++
			}
			break
		}
	}
	return count
}

// regressWarmUp loads the lock's scripts into the server through c (a re-entry and a partial and a
// final unlock), so that a reply dropped later is a script's reply and not a NOSCRIPT error.
func regressWarmUp(t *testing.T, ctx context.Context, d lockDriver, c *redisson.Client) {
	t.Helper()
	h, err := d.Lock(ctx, c, "regress-warmup", 0, 0)
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	lvl, err := h.Reenter(ctx)
	if err != nil {
		t.Fatalf("warm-up Reenter: %v", err)
	}
	if err := lvl.Unlock(ctx); err != nil {
		t.Fatalf("warm-up partial Unlock: %v", err)
	}
	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("warm-up final Unlock: %v", err)
	}
}

// regressHolder returns the owner and hold count stored in lock name ("" if it is free).
func regressHolder(t *testing.T, admin *redis.Client, d lockDriver, name string) (string, int) {
	t.Helper()
	v, err := admin.Get(context.Background(), d.Key(name)).Result()
	if errors.Is(err, redis.Nil) {
		return "", 0
	}
	if err != nil {
		t.Fatalf("GET %s: %v", d.Key(name), err)
	}
	owner, count, ok := d.Decode(v)
	if !ok {
		t.Fatalf("GET %s = %q: not a lock value", d.Key(name), v)
	}
	return owner, count
}

// regressWait receives from ch, failing the test after timeout.
func regressWait[T any](t *testing.T, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
		panic("unreachable")
	}
}

// regressAwait waits until ch is closed, ctx ends, or d passes.
func regressAwait(ctx context.Context, ch <-chan struct{}, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-timer.C:
	}
}

// regressAcq is the outcome of a Lock or Reenter call made on another goroutine.
type regressAcq struct {
	h   driverHold
	lvl driverLevel
	err error
}

// regressGo runs fn on a goroutine counted by wg.
func regressGo(wg *sync.WaitGroup, fn func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		fn()
	}()
}

// TestRegressDefect1_ResentHandOverTwoOwners:
//
//	"Two owners after a re-sent hand-over. G1 (Client A, via proxy) holds; G2 is queued behind it
//	in Client A; W (Client B) has waited >10ms so it has claimed the lock. G1's final unlock hands
//	the lock to the claimer W; the reply is lost; the re-send returns -2 and A hands the lock to G2
//	too."
//
// W's commands are held back (cmdHook) from before G1's unlock until G1's Unlock has returned,
// so the re-send surely runs before W confirms the hand-over. Then G2 and W must never hold at the
// same time, and G1's Unlock must succeed.
func TestRegressDefect1_ResentHandOverTwoOwners(t *testing.T) {
	const name = "regress1"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p, func(o *redis.Options) {
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
	regressWarmUp(t, ctx, d, a)

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
	regressGo(&wg, func() { // W, through Client B
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
		regressAwait(ctx, g2Done, 2*time.Second)
		releasing("W")
		_ = h.Unlock(context.WithoutCancel(ctx))
	})
	eventually(t, 5*time.Second, "W to claim the lock (two attempts after waiting 10ms)", hookB.claimed)

	regressGo(&wg, func() { // G2, queued behind G1 in Client A
		var h driverHold
		var err error
		regressInLock(func() { h, err = d.Lock(ctx, a, name, 20*time.Second, 0) })
		if err == nil {
			acquired("G2", h)
		}
		close(g2Done)
		g2Res <- err
		if err != nil {
			return
		}
		regressAwait(ctx, wDone, 5*time.Second)
		releasing("G2")
		_ = h.Unlock(context.WithoutCancel(ctx))
	})
	eventually(t, 5*time.Second, "G2 to wait for the lock in Client A", func() bool { return regressParked() >= 1 })

	// Keep W from confirming the hand-over until G1's Unlock has returned.
	hookB.hold(nil)
	eventually(t, 5*time.Second, "W's commands in flight to be answered", func() bool { return hookB.inFlight() == 0 })
	// Only G1's unlock may be in flight on Client A when the reply is dropped.
	eventually(t, 5*time.Second, "Client A's commands in flight to be answered", func() bool { return hookA.inFlight() == 0 })

	// G1's final unlock hands the lock to W; its reply is lost and go-redis re-sends it.
	dials := dialA.dialed()
	p.DropReplies(1)
	unlockRes := make(chan error, 1)
	regressGo(&wg, func() { unlockRes <- g1.Unlock(context.WithoutCancel(ctx)) })
	unlockErr := regressWait(t, unlockRes, 10*time.Second, "G1's Unlock")
	p.DropReplies(0)
	hookB.release()
	if dialA.dialed() == dials {
		t.Fatalf("precondition: G1's unlock opened no new connection: its reply was not dropped and re-sent")
	}

	if err := regressWait(t, wRes, 10*time.Second, "W's Lock"); err != nil {
		t.Errorf("W's Lock = %v, want the lock (handed over by G1's unlock)", err)
	}
	if err := regressWait(t, g2Res, 10*time.Second, "G2's Lock"); err != nil {
		t.Errorf("G2's Lock = %v, want the lock after W", err)
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	regressWait(t, allDone, 10*time.Second, "W and G2 to unlock")

	if unlockErr != nil {
		t.Errorf("G1's Unlock (reply lost, re-sent) = %v, want nil", unlockErr)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range twoOwners {
		t.Errorf("two owners: %s", s)
	}
}

// TestRegressDefect2_ResentHandOverAfterConfirm:
//
//	"Same lost reply, but the claimer W confirms before the re-send" (b7b8680: G1's Unlock returns
//	ErrNotHeld + ErrLockLost, and EventLost is emitted for G1).
//
// The re-send needs a new connection, which regressDialer holds until W's Lock has returned (W
// confirmed the hand-over). G1's Unlock must then return nil and no loss be reported.
func TestRegressDefect2_ResentHandOverAfterConfirm(t *testing.T) {
	const name = "regress2"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p)
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
	regressWarmUp(t, ctx, d, a)

	g1, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	wRes := make(chan error, 1)
	regressGo(&wg, func() { // W, through Client B
		h, err := d.Lock(ctx, b, name, 20*time.Second, 0)
		wRes <- err
		if err != nil {
			return
		}
		regressAwait(ctx, wUnlock, 10*time.Second)
		_ = h.Unlock(context.WithoutCancel(ctx))
	})
	eventually(t, 5*time.Second, "W to claim the lock (two attempts after waiting 10ms)", hookB.claimed)

	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	unlockRes := make(chan error, 1)
	regressGo(&wg, func() { unlockRes <- g1.Unlock(context.WithoutCancel(ctx)) })
	regressWait(t, reached, 5*time.Second, "the re-send of G1's unlock to open a new connection")
	p.DropReplies(0)
	if err := regressWait(t, wRes, 5*time.Second, "W to confirm the hand-over (its Lock to return)"); err != nil {
		t.Fatalf("W's Lock = %v, want the lock handed over by G1's unlock", err)
	}
	dialA.resumeDials()
	unlockErr := regressWait(t, unlockRes, 10*time.Second, "G1's Unlock")
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

// TestRegressDefect3_ResentPartialUnlockAppliedTwice:
//
//	"A re-sent partial unlock applied twice: goroutine X holds at depth 2 (acquire + Reenter) and
//	unlocks one level; the reply is lost; goroutine Y (sharing the hold) re-enters before the
//	re-send; the re-send decrements again."
//
// The re-send needs a new connection, which regressDialer holds until Y's re-entry has returned.
// The hold count must stay exact, and after X's remaining unlock Y's level must still exclude
// another Client.
func TestRegressDefect3_ResentPartialUnlockAppliedTwice(t *testing.T) {
	const name = "regress3"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p)
	a := newClient(t, rdbA)
	other := newClient(t, srv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	regressWarmUp(t, ctx, d, a)

	x, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("X Lock: %v", err)
	}
	xLevel2, err := x.Reenter(ctx)
	if err != nil {
		t.Fatalf("X Reenter: %v", err)
	}

	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	xRes := make(chan error, 1)
	regressGo(&wg, func() { xRes <- xLevel2.Unlock(ctx) }) // X: partial unlock, reply lost
	regressWait(t, reached, 5*time.Second, "the re-send of X's partial unlock to open a new connection")
	p.DropReplies(0)
	yRes := make(chan regressAcq, 1)
	regressGo(&wg, func() { // Y: re-enters the same hold before the re-send
		lvl, err := x.Reenter(ctx)
		yRes <- regressAcq{lvl: lvl, err: err}
	})
	y := regressWait(t, yRes, 5*time.Second, "Y's re-entry")
	dialA.resumeDials()
	if err := regressWait(t, xRes, 10*time.Second, "X's partial unlock"); err != nil {
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

// TestRegressDefect4_ResentReentryAppliedTwice:
//
//	"Mirror: a re-sent re-entry applied twice."
//
// X re-enters; the reply is lost; Y (sharing the hold) re-enters before the re-send, which
// regressDialer holds until then; the re-send increments again. The hold count must stay exact and
// as many Unlocks as acquisitions and re-entries must free the lock.
func TestRegressDefect4_ResentReentryAppliedTwice(t *testing.T) {
	const name = "regress4"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p)
	a := newClient(t, rdbA)
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	regressWarmUp(t, ctx, d, a)

	x, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("X Lock: %v", err)
	}
	owner := x.Owner()

	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	xRes := make(chan regressAcq, 1)
	regressGo(&wg, func() { // X: re-entry, reply lost
		lvl, err := x.Reenter(ctx)
		xRes <- regressAcq{lvl: lvl, err: err}
	})
	regressWait(t, reached, 5*time.Second, "the re-send of X's re-entry to open a new connection")
	p.DropReplies(0)
	yRes := make(chan regressAcq, 1)
	regressGo(&wg, func() { // Y: re-enters the same hold before the re-send
		lvl, err := x.Reenter(ctx)
		yRes <- regressAcq{lvl: lvl, err: err}
	})
	y := regressWait(t, yRes, 5*time.Second, "Y's re-entry")
	dialA.resumeDials()
	xr := regressWait(t, xRes, 10*time.Second, "X's re-entry")

	levels := []driverLevel{x}
	for i, r := range []regressAcq{xr, y} {
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
	if o, n := regressHolder(t, admin, d, name); o == owner {
		t.Errorf("after %d Unlocks for %d acquisitions and re-entries the lock is still held by its owner "+
			"(hold count %d), renewed by the watchdog", len(levels), len(levels), n)
	}
}

// TestRegressDefect5_ForceUnlockClaimedLock:
//
//	"ForceUnlock refuses a claimed lock (WRONGTYPE) — the lock value has a claim mark."
//
// W claims the lock held by G1 and is then held back (cmdHook) so that it cannot take the lock
// after the force unlock. ForceUnlock must report a deleted lock, and the lock must be free.
func TestRegressDefect5_ForceUnlockClaimedLock(t *testing.T) {
	const name = "regress5"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	a := newClient(t, srv.Client(t))
	rdbB := srv.Client(t)
	hookB := &cmdHook{}
	rdbB.AddHook(hookB)
	b := newClient(t, rdbB, redisson.WithRepollInterval(20*time.Millisecond))
	c := newClient(t, srv.Client(t))

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); hookB.release(); wg.Wait() })

	g1, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("G1 Lock: %v", err)
	}
	t.Cleanup(func() { _ = g1.Unlock(context.Background()) })
	wRes := make(chan error, 1)
	regressGo(&wg, func() { // W, through Client B
		h, err := d.Lock(ctx, b, name, 20*time.Second, 0)
		wRes <- err
		if err == nil {
			_ = h.Unlock(context.WithoutCancel(ctx))
		}
	})
	eventually(t, 5*time.Second, "W to claim the lock (two attempts after waiting 10ms)", hookB.claimed)
	hookB.hold(nil)
	eventually(t, 5*time.Second, "W's commands in flight to be answered", func() bool { return hookB.inFlight() == 0 })

	ok, err := d.ForceUnlock(ctx, c, name)
	if err != nil || !ok {
		t.Errorf("ForceUnlock of a lock claimed by a waiter = %v, %v; want true, nil", ok, err)
	}
	// The lock is free, or handed to the waiter queued for it: not held by G1 any more.
	if o, n := regressHolder(t, admin, d, name); o == g1.Owner() {
		t.Errorf("after ForceUnlock the lock is still held by %s (count %d)", o, n)
	}
	hookB.release()
	if err == nil && ok {
		// The waiter gets the freed lock.
		if err := regressWait(t, wRes, 10*time.Second, "W's Lock after the force unlock"); err != nil {
			t.Errorf("W's Lock after the force unlock = %v", err)
		}
	}
}

// TestRegressDefect6_ReleaseRecordClobbersKey:
//
//	"The release record clobbers another key: the final release renames lock "x" onto "{x}:rel"."
//
// Releasing lock "x" must neither take lock "{x}:rel" from its holder nor touch application data at
// key "{x}:rel".
func TestRegressDefect6_ReleaseRecordClobbersKey(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	c1 := newClient(t, srv.Client(t))
	c2 := newClient(t, srv.Client(t))
	ctx := t.Context()

	// release takes and releases lock name through c2.
	release := func(t *testing.T, name string) {
		t.Helper()
		h, err := d.Lock(ctx, c2, name, 0, 0)
		if err != nil {
			t.Fatalf("Lock(%q): %v", name, err)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("Unlock(%q): %v", name, err)
		}
	}

	t.Run("lock", func(t *testing.T) {
		const name = "regress6a"
		const victim = "{" + name + "}:rel" // the name of another lock
		h1, err := d.Lock(ctx, c1, victim, 0, 0)
		if err != nil {
			t.Fatalf("Lock(%q): %v", victim, err)
		}
		release(t, name)
		if o, n := regressHolder(t, admin, d, victim); o != h1.Owner() || n != 1 {
			t.Errorf("after lock %q was released, lock %q is held by %q with count %d; want its holder %q with count 1",
				name, victim, o, n, h1.Owner())
		}
		if n, err := h1.HoldCount(ctx); err != nil || n != 1 {
			t.Errorf("HoldCount of lock %q = %d (err %v), want 1", victim, n, err)
		}
		if err := h1.Unlock(ctx); err != nil {
			t.Errorf("Unlock(%q) = %v, want nil", victim, err)
		}
	})

	t.Run("data", func(t *testing.T) {
		const name = "regress6b"
		const victim = "{" + name + "}:rel" // an application key: a hash
		want := map[string]string{"f1": "v1", "f2": "v2"}
		if err := admin.HSet(ctx, victim, want).Err(); err != nil {
			t.Fatalf("HSET %s: %v", victim, err)
		}
		release(t, name)
		typ, err := admin.Type(ctx, victim).Result()
		if err != nil {
			t.Fatalf("TYPE %s: %v", victim, err)
		}
		got, err := admin.HGetAll(ctx, victim).Result()
		if typ != "hash" || err != nil || len(got) != len(want) || got["f1"] != "v1" || got["f2"] != "v2" {
			t.Errorf("after lock %q was released, application key %s is a %s holding %v (err %v); want the hash %v untouched",
				name, victim, typ, got, err, want)
		}
	})
}

// TestRegressDefect7_SharedWakeUpChannel:
//
//	"Locks "x" and "{x}" share a wake-up channel."
//
// With a re-poll interval of 10s, a waiter of "x" must be woken promptly by the release of "x"
// while a waiter of "{x}" in the same Client (which started waiting first) waits too.
func TestRegressDefect7_SharedWakeUpChannel(t *testing.T) {
	const (
		nameX      = "regress7"
		nameBraced = "{" + nameX + "}"
		repoll     = 10 * time.Second
		bound      = 3 * time.Second // far below the re-poll interval, far above a wake-up
	)
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	holders := newClient(t, srv.Client(t))
	waiters := newClient(t, srv.Client(t), redisson.WithRepollInterval(repoll))

	ctx := t.Context()
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	hx, err := d.Lock(ctx, holders, nameX, 0, 0)
	if err != nil {
		t.Fatalf("Lock(%q): %v", nameX, err)
	}
	hb, err := d.Lock(ctx, holders, nameBraced, 0, 0)
	if err != nil {
		t.Fatalf("Lock(%q): %v", nameBraced, err)
	}
	t.Cleanup(func() { _ = hb.Unlock(context.Background()) })

	wait := func(name string, res chan<- regressAcq) {
		regressGo(&wg, func() {
			var r regressAcq
			regressInLock(func() { r.h, r.err = d.Lock(wctx, waiters, name, 30*time.Second, 0) })
			if r.err == nil {
				_ = r.h.Unlock(context.Background())
			}
			res <- r
		})
	}
	bracedRes, xRes := make(chan regressAcq, 1), make(chan regressAcq, 1)
	wait(nameBraced, bracedRes)
	eventually(t, 5*time.Second, "the waiter of "+nameBraced+" to wait", func() bool { return regressParked() >= 1 })
	wait(nameX, xRes)
	eventually(t, 5*time.Second, "the waiter of "+nameX+" to wait", func() bool { return regressParked() >= 2 })

	if err := hx.Unlock(ctx); err != nil {
		t.Fatalf("Unlock(%q): %v", nameX, err)
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case r := <-xRes:
		if r.err != nil {
			t.Errorf("the waiter of %q: Lock = %v, want the lock", nameX, r.err)
		}
	case <-timer.C:
		t.Errorf("the waiter of %q was not woken within %v of the release of %q (re-poll interval %v): "+
			"the wake-up went to the waiter of %q", nameX, bound, nameX, repoll, nameBraced)
	}
}

// TestRegressDefect10_FailedReentryUndoFailedRenewedForever:
//
//	"A failed re-entry whose undo also fails is renewed forever."
//
// The re-entry is applied but its reply is lost (go-redis does not re-send: MaxRetries -1), and
// the connection for its undo cannot be opened. Renewals are held back meanwhile (cmdHook), so
// that only the test's commands use the one connection. After the owner's Unlock of every level it
// obtained, the lock must be free within a few leases.
func TestRegressDefect10_FailedReentryUndoFailedRenewedForever(t *testing.T) {
	const (
		name     = "regress10"
		watchdog = 600 * time.Millisecond
	)
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p, func(o *redis.Options) {
		o.PoolSize, o.MaxRetries, o.DialerRetries = 1, -1, 1
	})
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(watchdog))
	ctx := context.WithValue(t.Context(), regressMark{}, true)
	t.Cleanup(hookA.release)
	regressWarmUp(t, ctx, d, a)

	x, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	owner := x.Owner()

	hookA.hold(regressMarked) // renewals wait; the test's calls pass
	eventually(t, 5*time.Second, "renewals in flight to be answered", func() bool { return hookA.inFlight() == 0 })
	if err := rdbA.Ping(ctx).Err(); err != nil { // the pool's one connection is open
		t.Fatalf("PING: %v", err)
	}
	dialA.failNext()
	p.DropReplies(1)
	lvl, rerr := x.Reenter(ctx)
	p.DropReplies(0)
	dialA.passNext()
	hookA.release()
	t.Logf("Reenter with its reply lost and its undo failing = %v", rerr)
	// The network is back: go-redis, which fails dials at once for a while after one failed, can
	// open a connection again.
	eventually(t, 5*time.Second, "the proxied client to connect again", func() bool { return rdbA.Ping(ctx).Err() == nil })

	levels := []driverLevel{x}
	if rerr == nil {
		levels = append(levels, lvl)
	}
	for _, l := range slices.Backward(levels) {
		if err := l.Unlock(ctx); err != nil {
			t.Logf("Unlock: %v", err)
		}
	}
	// A few leases: the lock must be freed, or at least no longer renewed.
	eventually(t, 5*watchdog, "the lock to be free after the owner's Unlock of every level it obtained "+
		"(it is still held by the owner: renewed by the watchdog)", func() bool {
		o, _ := regressHolder(t, admin, d, name)
		return o != owner
	})
}
