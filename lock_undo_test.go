package redisson_test

// Acquisitions whose outcome is unknown (a reply lost, a call given up) are undone: doc.go, "An
// acquisition whose outcome is unknown (network error, context ended mid-call) is undone", and "As
// the request may still be travelling, the undo is repeated in the background after 250ms, 1s and
// 4s". These tests make copies of such a request land before and after the undo.

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// TestLockUndoFreesAcquisitionLandingAfterIt checks that an acquisition with an unknown outcome is
// undone even when the acquiring command reaches Redis after the undo (a slow network: go-redis
// gave up at the deadline while the command was still on its way; the undo went out on a new
// connection): the background re-checks free what the late SET NX takes, rather than leaving the
// lock held for a whole lease by an owner that no longer exists, every other acquirer locked out,
// although Lock returned "not obtained, nothing held".
//
// Forcing: a proxy delays the chunk carrying SET NX by 500ms; the caller's deadline is 100ms; a
// hook sets the delay back to 0 when the undo (EVALSHA) is sent, so the undo runs first.
func TestLockUndoFreesAcquisitionLandingAfterIt(t *testing.T) {
	const name = "undo-late-setnx"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(10*time.Second))
	b := newClient(t, srv.Client(t))
	warmUpScripts(t, a)

	var mu sync.Mutex
	undoSent := false
	hookA.setBefore(func(_ context.Context, cmd string) {
		if strings.EqualFold(cmd, "evalsha") || strings.EqualFold(cmd, "eval") {
			p.Delay(0)
			mu.Lock()
			undoSent = true
			mu.Unlock()
		}
	})
	p.Delay(500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	_, err := a.Lock(name).TryLock(ctx)
	cancel()
	p.Delay(0)
	hookA.setBefore(nil)
	if err == nil {
		t.Fatalf("precondition: TryLock succeeded through a 500ms delay with a 100ms deadline")
	}
	if !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock = %v, want ErrNotObtained", err)
	}
	mu.Lock()
	sent := undoSent
	mu.Unlock()
	if !sent {
		t.Fatalf("precondition: no undo was sent after the acquisition with an unknown outcome (TryLock = %v)", err)
	}
	t.Logf("TryLock = %v", err)

	// The delayed SET NX arrives after the undo; the undo is repeated in the background (after 250ms,
	// 1s and 4s) and frees what it finds, rather than leaving the lock held for its 10s lease.
	eventually(t, 6*time.Second, "the late acquisition to be undone", func() bool {
		err := admin.Get(t.Context(), redisson.LockKeyOf(a, name)).Err()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("GET: %v", err)
		}
		return errors.Is(err, redis.Nil)
	})
	if h, err := b.Lock(name).TryLock(t.Context()); err != nil {
		t.Errorf("another Client cannot take the lock nobody holds: %v", err)
	} else {
		_ = h.Unlock(t.Context())
	}
}

// TestLockUndoneWhenResendGetsErrorReply checks that an acquisition is undone when its first run
// was applied, its reply lost, and go-redis' re-send got an error reply: go-redis retries on some
// error replies too (READONLY, LOADING, MASTERDOWN, TRYAGAIN, CLUSTERDOWN, max clients...) and then
// returns that reply, although the first run took the lock. Such a reply does not prove that
// nothing changed: the acquisition reports ErrNotObtained ("leaves nothing held"), and the lock
// must be free within the undo re-check schedule (250ms, 1s, 4s), not held for a whole lease (30s)
// by an owner that does not exist.
//
// Forcing: A's SET NX applies, its reply is dropped by the proxy and the re-send waits for a new
// connection; meanwhile the server is made a replica of an unreachable master (it keeps its data
// and answers writes with READONLY, which go-redis retries until MaxRetries). Then the server is
// made a master again.
func TestLockUndoneWhenResendGetsErrorReply(t *testing.T) {
	t.Parallel()
	const name = "undo-error-reply"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	})
	a := newClient(t, rdbA)
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	t.Cleanup(func() {
		dialA.resumeDials()
		wg.Wait()
		_ = admin.Do(context.Background(), "REPLICAOF", "NO", "ONE").Err()
	})
	warmUpScripts(t, a)
	key := redisson.LockKeyOf(a, name)

	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	spawn(&wg, func() {
		h, err := a.Lock(name).TryLock(ctx)
		if err == nil {
			_ = h.Unlock(ctx)
		}
		res <- err
	})
	recvWithin(t, reached, 5*time.Second, "the re-send of the SET NX to open a new connection")
	p.DropReplies(0)
	if o, _ := lockHolder(t, admin, key); o == "" {
		t.Fatalf("precondition: the first run of the SET NX did not take the lock")
	}
	// The server turns read-only (a replica of a master it cannot reach), keeping its data.
	if err := admin.Do(ctx, "REPLICAOF", "127.0.0.1", "1").Err(); err != nil {
		t.Fatalf("REPLICAOF: %v", err)
	}
	dialA.resumeDials()
	err := recvWithin(t, res, 10*time.Second, "TryLock")
	if err := admin.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatalf("REPLICAOF NO ONE: %v", err)
	}
	if err == nil {
		t.Fatalf("precondition: TryLock succeeded")
	}
	t.Logf("TryLock (SET NX applied, reply lost, re-sends answered READONLY) = %v", err)
	if !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock = %v, want ErrNotObtained", err)
	}
	owner, _ := lockHolder(t, admin, key)
	if owner == "" {
		t.Fatalf("precondition: the data was not kept (lock key gone)")
	}
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		if o, _ := lockHolder(t, admin, key); o == "" {
			if h, err := b.Lock(name).TryLock(ctx); err != nil {
				t.Errorf("B TryLock of the free lock: %v", err)
			} else {
				_ = h.Unlock(ctx)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, expiry := lockHolder(t, admin, key)
	t.Errorf("TryLock reported ErrNotObtained (nothing held), but its applied SET NX was never undone: the lock "+
		"is held by owner %q, which does not exist, for %v more (checked 6s, past every undo re-check)",
		owner, time.Until(expiry).Round(time.Millisecond))
}

// TestLockUndoRechecksAfterFreeingFirstCopy checks that the undo of an acquisition with an unknown
// outcome keeps its background re-checks (after 250ms, 1s, 4s) even when its first attempt freed
// something: freeing one copy of the acquisition proves nothing about the others, since go-redis
// re-sends a command whose reply was lost and the re-send may still be travelling when the call
// gives up. The re-send that lands afterwards must be freed too, not take the lock for a whole
// lease (30s) for an owner that no longer exists. doc.go: "As the request may still be travelling,
// the undo is repeated in the background after 250ms, 1s and 4s".
//
// Forcing: the first SET NX is applied and its reply dropped (proxy); go-redis' re-send waits for
// a new connection (heldDialer), which is then delayed 600ms by the proxy; TryLock's context
// ends at 300ms; the undo is sent with the delay off (hook), so it runs first.
func TestLockUndoRechecksAfterFreeingFirstCopy(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "undo-first-copy"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	dialA := &heldDialer{proxy: p.Addr(), direct: srv.Addr(), resume: make(chan struct{})}
	// slowSet: the next write carrying a SET of the lock (the re-send, after the new connection's
	// handshake) turns the proxy's delay on before it is forwarded.
	var slowMu sync.Mutex
	slowSet := false
	var key string
	rdbA := srv.Client(t, func(o *redis.Options) {
		o.Addr = p.Addr()
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialA.dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &writeWatchConn{Conn: c, onWrite: func(b []byte) {
				slowMu.Lock()
				defer slowMu.Unlock()
				if slowSet && bytes.Contains(bytes.ToLower(b), []byte("set")) && bytes.Contains(b, []byte(key)) {
					slowSet = false
					p.Delay(600 * time.Millisecond)
				}
			}}, nil
		}
	})
	t.Cleanup(dialA.resumeDials)
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA)
	b := newClient(t, srv.Client(t))
	var wg sync.WaitGroup
	t.Cleanup(func() { dialA.resumeDials(); wg.Wait() })
	warmUpScripts(t, a)
	key = redisson.LockKeyOf(a, name)

	oneIdleConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	start := time.Now()
	spawn(&wg, func() {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		h, err := a.Lock(name).TryLock(ctx)
		if err == nil {
			_ = h.Unlock(t.Context())
		}
		res <- err
	})
	recvWithin(t, reached, 5*time.Second, "the re-send of the SET NX to open a new connection")
	p.DropReplies(0)
	if o, _ := lockHolder(t, admin, key); o == "" {
		t.Fatalf("precondition: the first run of the SET NX did not take the lock")
	}
	var undoMu sync.Mutex
	undoSent := false
	hookA.setBefore(func(_ context.Context, cmd string) {
		if cmd == "evalsha" || cmd == "eval" {
			p.Delay(0)
			undoMu.Lock()
			undoSent = true
			undoMu.Unlock()
		}
	})
	slowMu.Lock()
	slowSet = true // the re-send travels slowly
	slowMu.Unlock()
	dialA.resumeDials()
	err := recvWithin(t, res, 5*time.Second, "TryLock")
	hookA.setBefore(nil)
	p.Delay(0)
	if err == nil {
		t.Fatalf("precondition: TryLock succeeded")
	}
	undoMu.Lock()
	sent := undoSent
	undoMu.Unlock()
	if !sent {
		t.Fatalf("precondition: no undo was sent (TryLock = %v)", err)
	}
	t.Logf("TryLock = %v after %v", err, time.Since(start).Round(time.Millisecond))
	if !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock = %v, want ErrNotObtained", err)
	}

	// The re-send lands ~600ms after it was sent; the re-checks (250ms, 1s, 4s after the undo) must
	// free what it takes.
	deadline := start.Add(5500 * time.Millisecond)
	landed := false
	for time.Now().Before(deadline) {
		o, _ := lockHolder(t, admin, key)
		if o != "" {
			landed = true
		} else if landed {
			break // taken by the re-send, then freed
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !landed {
		t.Fatalf("precondition: the delayed re-send never took the lock")
	}
	if o, expiry := lockHolder(t, admin, key); o != "" {
		t.Errorf("TryLock reported ErrNotObtained, its undo freed the first run's lock and skipped the re-checks; "+
			"the re-send (delayed 600ms) took the lock for owner %q, which does not exist, and nothing frees it: "+
			"held %v after the call, for %v more", o, time.Since(start).Round(time.Millisecond), time.Until(expiry).Round(time.Millisecond))
		return
	}
	if h, err := b.Lock(name).TryLock(t.Context()); err != nil {
		t.Errorf("B TryLock of the free lock: %v", err)
	} else {
		_ = h.Unlock(t.Context())
	}
}

// writeWatchConn calls onWrite with every chunk written, before writing it.
type writeWatchConn struct {
	net.Conn
	onWrite func([]byte)
}

func (c *writeWatchConn) Write(b []byte) (int, error) {
	c.onWrite(b)
	return c.Conn.Write(b)
}

// TestLockReentryWithFailedUndoNotRenewedForever: a re-entry is applied but its reply is lost
// (go-redis does not re-send: MaxRetries -1), and the connection for its undo cannot be opened.
// After the owner's Unlock of every level it obtained, the lock must be free within a few leases,
// not renewed forever by the watchdog for a level nobody holds.
//
// Renewals are held back meanwhile (cmdHook), so that only the test's commands use the one
// connection.
func TestLockReentryWithFailedUndoNotRenewedForever(t *testing.T) {
	const (
		name     = "undo-failed-reentry"
		watchdog = 600 * time.Millisecond
	)
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newLockDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := proxiedClient(t, srv, p, func(o *redis.Options) {
		o.PoolSize, o.MaxRetries, o.DialerRetries = 1, -1, 1
	})
	hookA := &cmdHook{}
	rdbA.AddHook(hookA)
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(watchdog))
	ctx := context.WithValue(t.Context(), testMark{}, true)
	t.Cleanup(hookA.release)
	warmUpDriver(t, ctx, d, a)

	x, err := d.Lock(ctx, a, name, 0, 0)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	owner := x.Owner()

	hookA.hold(testMarked) // renewals wait; the test's calls pass
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
		o, _ := driverHolder(t, admin, d, name)
		return o != owner
	})
}
