package redisson_test

// Fault-injection tests: every test here runs against a real redis-server started by redistest and
// breaks something on purpose (lost replies, killed pub/sub connections, deleted keys, a dead or hung
// server, a killed holder process) to check that the lock keeps its guarantees.
//
// Cross-process tests re-execute the test binary (see TestFaultHelperProcess and faultStartChild).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/redistest"
)

// faultChannels returns how many Clients are subscribed to their wake-up channel of the lock called
// name (no key prefix): each Client has its own (see redisson.WakePattern).
func faultChannels(tb testing.TB, admin *redis.Client, name string) int {
	tb.Helper()
	chans, err := admin.PubSubChannels(tb.Context(), redisson.WakePattern(name)).Result()
	if err != nil {
		tb.Fatalf("PUBSUB CHANNELS: %v", err)
	}
	return len(chans)
}

// faultKey is the key of the lock called name (no key prefix).
func faultKey(name string) string { return name }

// faultWaitDone waits for ctx to end, failing the test after timeout. It returns when it ended.
func faultWaitDone(tb testing.TB, ctx context.Context, timeout time.Duration, what string) time.Time {
	tb.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return time.Now()
	case <-timer.C:
		tb.Fatalf("timed out after %v waiting for %s", timeout, what)
		return time.Time{}
	}
}

// faultScriptRuns returns how many EVALSHA commands the server has executed so far (every script of
// the package is run with EVALSHA once loaded).
func faultScriptRuns(tb testing.TB, admin *redis.Client) int64 {
	tb.Helper()
	info, err := admin.Info(tb.Context(), "commandstats").Result()
	if err != nil {
		tb.Fatalf("INFO commandstats: %v", err)
	}
	// Top-level commands the lock sends: EVALSHA, and SET for the fast path of a fresh acquisition
	// (SET calls made inside scripts are counted too, so count EVALSHA and subtract nothing: the test
	// only compares a step with and without a dropped reply).
	var total int64
	for _, line := range strings.Split(info, "\n") {
		for _, cmd := range []string{"evalsha", "set"} {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
			if err != nil {
				tb.Fatalf("parsing %q: %v", line, err)
			}
			total += n
		}
	}
	return total
}

// faultHolders returns the holder of lock name with its hold count, read with the package's decoder
// (empty when the lock is free).
func faultHolders(tb testing.TB, admin *redis.Client, name string) map[string]string {
	tb.Helper()
	key := faultKey(name)
	v, err := admin.Get(tb.Context(), key).Result()
	if errors.Is(err, redis.Nil) {
		return map[string]string{}
	}
	if err != nil {
		tb.Fatalf("GET %s: %v", key, err)
	}
	owner, n, ok := redisson.DecodeLockValue(v)
	if !ok {
		tb.Fatalf("GET %s = %q: not a lock value", key, v)
	}
	return map[string]string{owner: strconv.Itoa(n)}
}

// TestFaultDroppedReplyKeepsHoldCountExact loses the reply of acquire, re-entry and unlock scripts
// (the proxy drops it and closes the connection, so go-redis re-sends the same command): the scripts
// must recognise the repeat, so the hold count stays exact and the final unlock still succeeds.
func TestFaultDroppedReplyKeepsHoldCountExact(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }) // default MaxRetries: re-sends

	// Control: a dropped reply really makes go-redis run a non-idempotent command twice.
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING through proxy: %v", err)
	}
	p.DropReplies(1)
	got, err := rdb.Incr(ctx, "fault-drop-control").Result()
	if err != nil {
		t.Fatalf("INCR through proxy with a dropped reply: %v", err)
	}
	if stored, err := admin.Get(ctx, "fault-drop-control").Int(); err != nil || got != 2 || stored != 2 {
		t.Fatalf("control: INCR with a dropped reply returned %d and stored %d (err %v); want 2 and 2: "+
			"the proxy did not drop the reply or go-redis did not re-send", got, stored, err)
	}

	// Default 30s watchdog: no renewal runs during the test; no loss tracking, whose checks are
	// scripts too.
	c := newClient(t, rdb, redisson.WithLossTracking(false))
	const name = "fault-drop"
	l := c.Lock(name)

	// Warm up so the scripts are loaded: each dropped reply below is then the reply of a script that
	// ran, not a NOSCRIPT error.
	// ran, not a NOSCRIPT error (a fresh acquisition takes the SET NX path: the re-entry loads the
	// acquisition script).
	wh, err := l.Lock(ctx)
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	wl, err := wh.Reenter(ctx)
	if err != nil {
		t.Fatalf("warm-up Reenter: %v", err)
	}
	if err := errors.Join(wl.Unlock(ctx), wh.Unlock(ctx)); err != nil {
		t.Fatalf("warm-up Unlock: %v", err)
	}

	var levels []*redisson.Hold // the holds taken and not unlocked, the first one being the acquisition
	// wantRuns counts EVALSHA and SET calls, including SETs inside scripts: a fresh acquisition is one
	// SET NX; with its reply dropped, the re-sent SET NX finds the key and the script recognises the
	// owner's own level (and sets its lease again). A re-entry is one script with one SET inside, and
	// its repeat too; a partial unlock is one script with one SET, and its repeat finds the level gone
	// (no SET); a final unlock is one script with a DEL, and its repeat finds the owner gone (read as
	// released: the reply answers a re-send).
	step := func(what string, drop bool, op func() error, want int, wantRuns int64) {
		t.Helper()
		before := faultScriptRuns(t, admin)
		if drop {
			p.DropReplies(1)
		}
		if err := op(); err != nil {
			t.Fatalf("%s (reply dropped: %v): %v (ErrNotHeld: %v)", what, drop, err, errors.Is(err, redisson.ErrNotHeld))
		}
		runs := faultScriptRuns(t, admin) - before
		if runs != wantRuns {
			t.Fatalf("%s (reply dropped: %v): the server ran %d scripts and SETs, want %d", what, drop, runs, wantRuns)
		}
		if len(levels) > 0 {
			n, err := levels[0].HoldCount(ctx)
			if err != nil {
				t.Fatalf("%s: HoldCount: %v", what, err)
			}
			if n != want {
				t.Fatalf("%s (reply dropped: %v): HoldCount = %d, want %d", what, drop, n, want)
			}
		}
		holders := faultHolders(t, admin, name)
		switch {
		case want == 0 && len(holders) != 0:
			t.Fatalf("%s: lock still has holders %v", what, holders)
		case want > 0 && (len(holders) != 1 || !faultHasValue(holders, strconv.Itoa(want))):
			t.Fatalf("%s: lock holders %v, want one owner with count %d", what, holders, want)
		}
	}

	lockOp := func() error {
		h, err := l.Lock(ctx)
		if err == nil {
			levels = append(levels, h)
		}
		return err
	}
	reenter := func() error {
		h, err := levels[0].Reenter(ctx)
		if err == nil {
			levels = append(levels, h)
		}
		return err
	}
	unlock := func() error {
		h := levels[len(levels)-1]
		levels = levels[:len(levels)-1]
		return h.Unlock(ctx)
	}
	var own *redisson.Hold

	step("acquire", true, lockOp, 1, 4) // SET NX, SET NX again, EVALSHA + SET PX
	own = levels[0]
	step("re-enter", false, reenter, 2, 2)      // EVALSHA + SET inside
	step("re-enter", true, reenter, 3, 4)       // EVALSHA + SET, then the same again
	step("partial unlock", true, unlock, 2, 3)  // EVALSHA + SET, then EVALSHA finding the level gone
	step("partial unlock", false, unlock, 1, 2) // EVALSHA + SET
	step("final unlock", true, unlock, 0, 2)    // EVALSHA (DEL), then EVALSHA finding the owner gone

	if h := faultHolders(t, admin, name); len(h) != 0 {
		t.Fatalf("after the final unlock %s is held by %v, want nobody", name, h)
	}
	faultWaitDone(t, own.Context(), time.Second, "the hold's context to end after the final unlock")
	if cause := context.Cause(own.Context()); !errors.Is(cause, context.Canceled) || errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("hold's context cause after the final unlock = %v, want context.Canceled", cause)
	}
	// A re-send of the same release is answered as released; a second Unlock call by the caller is
	// refused by the Hold itself.
	if err := own.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("a second Unlock after the final unlock = %v, want ErrNotHeld", err)
	}
}

func faultHasValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// TestFaultPubSubKilledWaitersStillAcquire kills the pub/sub connections of two Clients while their
// goroutines wait for a lock, then releases it: every waiter must still get the lock, one at a time,
// each within a bounded time of the previous release.
func TestFaultPubSubKilledWaitersStillAcquire(t *testing.T) {
	long(t)
	t.Parallel()
	// go-redis reconnects and resubscribes at once; the hubs must notice (Stats().Reconnects).
	t.Run("resubscribed", func(t *testing.T) { faultPubSubKill(t, false) })
	// SUBSCRIBE is refused (ACL) when go-redis reconnects, so the hubs stay unsubscribed and every
	// wake-up published after the kill is lost: only the re-poll timers can move the waiters on.
	t.Run("wakeups-lost", func(t *testing.T) { faultPubSubKill(t, true) })
}

func faultPubSubKill(t *testing.T, refuseSubscribe bool) {
	const (
		repoll  = 300 * time.Millisecond
		maxGap  = 2*repoll + 500*time.Millisecond
		waiters = 8
		name    = "fault-pubsub"
	)
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	holder := newClient(t, srv.Client(t), redisson.WithRepollInterval(repoll))
	clients := []*redisson.Client{
		newClient(t, srv.Client(t), redisson.WithRepollInterval(repoll)),
		newClient(t, srv.Client(t), redisson.WithRepollInterval(repoll)),
	}

	hl := holder.Lock(name)
	hh, err := hl.Lock(ctx)
	if err != nil {
		t.Fatalf("holder Lock: %v", err)
	}

	var (
		mu          sync.Mutex
		lastRelease time.Time
		gaps        []time.Duration
		inside      atomic.Int32
		overlaps    atomic.Int32
		wg          sync.WaitGroup
		errs        = make(chan error, 2*waiters)
	)
	for i := range waiters {
		l := clients[i%len(clients)].Lock(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := l.Lock(ctx)
			if err != nil {
				errs <- fmt.Errorf("waiter %d: Lock: %w", i, err)
				return
			}
			mu.Lock()
			gaps = append(gaps, time.Since(lastRelease))
			mu.Unlock()
			if inside.Add(1) != 1 {
				overlaps.Add(1)
			}
			// One round trip inside the critical section, so an overlap would have time to show.
			if err := admin.Incr(ctx, "fault-pubsub-count").Err(); err != nil {
				errs <- fmt.Errorf("waiter %d: INCR: %w", i, err)
			}
			inside.Add(-1)
			mu.Lock()
			lastRelease = time.Now()
			mu.Unlock()
			if err := h.Unlock(ctx); err != nil {
				errs <- fmt.Errorf("waiter %d: Unlock: %w", i, err)
			}
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	t.Cleanup(func() {
		// On an early failure the test context is cancelled: the waiters give up.
		_ = hh.Unlock(ctx)
		<-allDone
	})

	// Both Clients have a waiter subscribed (the head of each local queue waits in Redis).
	numSub := func() int { return faultChannels(t, admin, name) }
	eventually(t, 5*time.Second, "both clients to subscribe to their wake-up channels", func() bool { return numSub() == 2 })

	if refuseSubscribe {
		if err := admin.Do(ctx, "ACL", "SETUSER", "default", "-subscribe").Err(); err != nil {
			t.Fatalf("ACL SETUSER default -subscribe: %v", err)
		}
	}
	killed, err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
	if err != nil {
		t.Fatalf("CLIENT KILL TYPE pubsub: %v", err)
	}
	if killed != 2 {
		t.Fatalf("CLIENT KILL TYPE pubsub killed %d connections, want the 2 of the waiting clients", killed)
	}
	if refuseSubscribe {
		if n := numSub(); n != 0 {
			t.Fatalf("%d wake-up channels subscribed after the kill with SUBSCRIBE refused, want 0", n)
		}
	}

	// Release at once: in the first case the wake-up may be published before go-redis resubscribes,
	// in the second it surely is lost.
	mu.Lock()
	lastRelease = time.Now()
	mu.Unlock()
	if err := hh.Unlock(ctx); err != nil {
		t.Fatalf("holder Unlock: %v", err)
	}

	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	select {
	case <-allDone:
	case <-timer.C:
		mu.Lock()
		n := len(gaps)
		mu.Unlock()
		t.Fatalf("not every waiter acquired the lock within 20s of the release (%d did)", n)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d waiters were inside the critical section at the same time as another", n)
	}
	if n, err := admin.Get(ctx, "fault-pubsub-count").Int(); err != nil || n != waiters {
		t.Errorf("critical sections run = %d (err %v), want %d", n, err, waiters)
	}
	mu.Lock()
	if len(gaps) != waiters {
		t.Errorf("%d acquisitions, want %d", len(gaps), waiters)
	}
	for i, g := range gaps {
		if g > maxGap {
			t.Errorf("handoff %d took %v after the release, want at most %v (repoll interval %v)", i, g, maxGap, repoll)
		}
	}
	t.Logf("handoff gaps after the kill: %v", gaps)
	mu.Unlock()

	if refuseSubscribe {
		// Control: the hubs really were without a subscription through all the handoffs.
		if n := numSub(); n != 0 {
			t.Errorf("%d wake-up channels subscribed at the end, want 0: a hub resubscribed, wake-ups were not all lost", n)
		}
		for i, c := range clients {
			if r := c.Stats().Reconnects; r != 0 {
				t.Errorf("client %d reports %d pub/sub reconnects while SUBSCRIBE was refused, want 0", i, r)
			}
		}
		return
	}
	// Both hubs noticed their connection was re-established (and resubscribed).
	for i, c := range clients {
		eventually(t, 5*time.Second, fmt.Sprintf("client %d to report a pub/sub reconnect", i), func() bool {
			return c.Stats().Reconnects > 0
		})
	}
}

// faultWatchdogHold starts a server and a Client on it (watchdog timeout watchdog) that holds lock
// name. It returns the server, an admin client, the Client, the lock and its hold.
func faultWatchdogHold(t *testing.T, ctx context.Context, watchdog time.Duration, name string) (*redistest.Server, *redis.Client, *redisson.Client, *redisson.Lock, *redisson.Hold) {
	t.Helper()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(watchdog))
	l := c.Lock(name)
	h, err := l.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	return srv, admin, c, l, h
}

// TestFaultLockLostWhenKeyDeleted deletes a held lock behind its owner's back: the watchdog must
// notice at its next renewal and cancel the ownership context with ErrLockLost.
func TestFaultLockLostWhenKeyDeleted(t *testing.T) {
	const watchdog = 600 * time.Millisecond
	ctx := t.Context()
	const name = "fault-del"
	_, admin, c, _, h := faultWatchdogHold(t, ctx, watchdog, name)
	lctx := h.Context()

	deleted := time.Now()
	if n, err := admin.Del(ctx, faultKey(name)).Result(); err != nil || n != 1 {
		t.Fatalf("DEL %s = %d, %v; want 1", name, n, err)
	}
	ended := faultWaitDone(t, lctx, 10*time.Second, "the ownership context to be cancelled")
	if d := ended.Sub(deleted); d > watchdog {
		t.Errorf("the loss was reported %v after the key was deleted, want at most the watchdog timeout %v", d, watchdog)
	}
	// The watchdog must have found the key gone at a renewal (renew.ErrGone), not merely failed to
	// renew until the lease ran out: both report ErrLockLost, within the watchdog timeout here.
	if cause := context.Cause(lctx); !errors.Is(cause, redisson.ErrLockLost) || !errors.Is(cause, renew.ErrGone) {
		t.Errorf("ownership context cause = %v, want ErrLockLost because the key is gone (%v)", cause, renew.ErrGone)
	}
	err := h.Unlock(ctx)
	if !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
		t.Errorf("Unlock after the loss = %v, want ErrNotHeld and ErrLockLost", err)
	}
	if n, err := admin.Exists(ctx, faultKey(name)).Result(); err != nil || n != 0 {
		t.Errorf("EXISTS %s = %d (err %v) after the loss, want 0: something recreated the key", name, n, err)
	}
	if s := c.Stats(); s.Held != 0 || s.Lost != 1 {
		t.Errorf("Stats = %+v, want Held 0 and Lost 1", s)
	}
}

// TestFaultLockLostWhenRedisStops makes the server unreachable (killed) or unresponsive (paused)
// while a lock is held: the watchdog cannot renew, and must report the loss once the lease may have
// lapsed, not later.
func TestFaultLockLostWhenRedisStops(t *testing.T) {
	long(t)
	t.Parallel()
	const watchdog = 600 * time.Millisecond
	for _, tc := range []struct {
		name  string
		fail  func(*redistest.Server) error
		recov func(*redistest.Server) error
	}{
		{"kill", (*redistest.Server).Kill, (*redistest.Server).Restart},
		{"pause", (*redistest.Server).Pause, (*redistest.Server).Resume},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			const name = "fault-stop"
			srv, admin, c, l, h := faultWatchdogHold(t, ctx, watchdog, name)
			lctx := h.Context()

			failed := time.Now()
			if err := tc.fail(srv); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			recovered := false
			t.Cleanup(func() {
				if !recovered {
					_ = tc.recov(srv)
				}
			})
			ended := faultWaitDone(t, lctx, 10*time.Second, "the ownership context to be cancelled")
			if d, limit := ended.Sub(failed), watchdog+time.Second; d > limit {
				t.Errorf("the loss was reported %v after the server stopped, want at most %v", d, limit)
			}
			if cause := context.Cause(lctx); !errors.Is(cause, redisson.ErrLockLost) {
				t.Errorf("ownership context cause = %v, want ErrLockLost", cause)
			}
			if s := c.Stats(); s.Held != 0 || s.Lost != 1 {
				t.Errorf("Stats = %+v, want Held 0 and Lost 1", s)
			}

			recovered = true
			if err := tc.recov(srv); err != nil {
				t.Fatalf("recovering the server: %v", err)
			}
			// A killed server lost its data; a paused one expires the key as soon as it runs again.
			eventually(t, 10*time.Second, "the lock key to be gone", func() bool {
				n, err := admin.Exists(ctx, faultKey(name)).Result()
				return err == nil && n == 0
			})
			err := h.Unlock(ctx)
			if !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
				t.Errorf("Unlock after the loss = %v, want ErrNotHeld and ErrLockLost", err)
			}
			// The client works again once the server is back.
			h2, err := l.Lock(ctx, redisson.WithWait(5*time.Second))
			if err != nil {
				t.Fatalf("Lock after the server came back: %v", err)
			}
			if err := h2.Unlock(ctx); err != nil {
				t.Fatalf("Unlock after the server came back: %v", err)
			}
		})
	}
}

// TestFaultNoRenewalAfterUnlock checks that the watchdog stops for good at the final unlock: the key
// is then recreated with the old owner's field, which a stale renewal would extend (PEXPIRE back to
// the watchdog timeout), and for three renewal periods nothing may touch its TTL.
func TestFaultNoRenewalAfterUnlock(t *testing.T) {
	long(t)
	t.Parallel()
	const (
		watchdog = 600 * time.Millisecond
		period   = watchdog / 3
		ttl      = 5 * time.Second
		name     = "fault-norenew"
	)
	ctx := t.Context()
	_, admin, c, _, h := faultWatchdogHold(t, ctx, watchdog, name)
	holders := faultHolders(t, admin, name)
	if len(holders) != 1 {
		t.Fatalf("lock holders %v, want one owner", holders)
	}
	var owner string
	for owner = range holders {
	}

	// Control: while held, the watchdog does renew. Unlock right after a renewal, so that none is in
	// flight during the unlock.
	eventually(t, 5*time.Second, "a renewal while held", func() bool { return c.Stats().Renewed > 0 })
	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	calls := c.Stats().RenewCalls
	if s := c.Stats(); s.Held != 0 {
		t.Fatalf("Stats after unlock = %+v, want Held 0", s)
	}

	set := time.Now()
	if _, err := admin.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, faultKey(name), owner+"|1|", ttl)
		return nil
	}); err != nil {
		t.Fatalf("recreating the key: %v", err)
	}
	prev := ttl
	for time.Since(set) < 3*period+period/2 {
		pttl, err := admin.PTTL(ctx, faultKey(name)).Result()
		if err != nil {
			t.Fatalf("PTTL: %v", err)
		}
		// Without renewals the TTL only decreases, and at most as fast as the clock (with a margin for
		// millisecond rounding). A renewal would set it to the watchdog timeout, far below.
		if low := ttl - time.Since(set) - 20*time.Millisecond; pttl < low || pttl > prev {
			t.Fatalf("PTTL %v after %v (previous sample %v, expected at least %v): the key was renewed after the unlock",
				pttl, time.Since(set), prev, low)
		}
		prev = pttl
		time.Sleep(10 * time.Millisecond) // sampling interval, not synchronisation
	}
	if s := c.Stats(); s.RenewCalls != calls {
		t.Fatalf("renewal calls went from %d to %d after the unlock", calls, s.RenewCalls)
	}
	if v, err := admin.Get(ctx, faultKey(name)).Result(); err != nil || v != owner+"|1|" {
		t.Fatalf("GET %s = %q, %v; want the recreated value untouched", name, v, err)
	}
}

// Cross-process tests.

// faultHelperEnv selects the role of a child process (see TestFaultHelperProcess).
const faultHelperEnv = "GOREDISSON_FAULT_HELPER"

// TestFaultHelperProcess is not a test of its own: it is the body of the child processes started by
// the cross-process fault tests, which re-execute this test binary with
// -test.run=^TestFaultHelperProcess$ and GOREDISSON_FAULT_HELPER set to a role. In a normal run the
// variable is absent and it returns at once.
func TestFaultHelperProcess(t *testing.T) {
	role := os.Getenv(faultHelperEnv)
	if role == "" {
		return
	}
	addr := os.Getenv("GOREDISSON_FAULT_ADDR")
	name := os.Getenv("GOREDISSON_FAULT_LOCK")
	stdin := bufio.NewReader(os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch role {
	case "counter":
		faultHelperCounter(t, ctx, addr, name, stdin)
	case "holder":
		faultHelperHolder(t, ctx, addr, name, stdin)
	case "fairwaiter":
		faultHelperFairWaiter(t, ctx, addr, name)
	case "fencedloop":
		faultHelperFencedLoop(t, ctx, addr, name)
	case "fencedholder":
		faultHelperFencedHolder(t, ctx, addr, name, stdin)
	case "rwload":
		faultHelperRWLoad(t, ctx, addr, name, stdin)
	case "semload":
		faultHelperSemLoad(t, ctx, addr, name, stdin)
	case "latchwait":
		faultHelperLatchWait(t, ctx, addr, name)
	case "atomicload":
		faultHelperAtomicLoad(t, ctx, addr, name, stdin)
	case "permitholder":
		faultHelperPermitHolder(t, ctx, addr, name, stdin)
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// faultHelperRedis opens a go-redis client for a child process; closed when the helper test ends.
func faultHelperRedis(t *testing.T, addr string) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func faultHelperInt(t *testing.T, env string) int {
	n, err := strconv.Atoi(os.Getenv(env))
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return n
}

// faultHelperCounter: GOREDISSON_FAULT_CLIENTS Clients, GOREDISSON_FAULT_GOROUTINES goroutines
// spread over them, each doing GOREDISSON_FAULT_ITERS non-atomic increments (GET, then SET value+1)
// of GOREDISSON_FAULT_COUNTER under the lock, starting when the parent writes a line to stdin.
func faultHelperCounter(t *testing.T, ctx context.Context, addr, name string, stdin *bufio.Reader) {
	nClients := faultHelperInt(t, "GOREDISSON_FAULT_CLIENTS")
	goroutines := faultHelperInt(t, "GOREDISSON_FAULT_GOROUTINES")
	iters := faultHelperInt(t, "GOREDISSON_FAULT_ITERS")
	counter := os.Getenv("GOREDISSON_FAULT_COUNTER")
	logKey := os.Getenv("GOREDISSON_FAULT_LOG")
	me := os.Getenv("GOREDISSON_FAULT_ID")

	kind := os.Getenv("GOREDISSON_FAULT_KIND")

	var rdbs []*redis.Client
	var locks []redisson.Locker
	for range nClients {
		rdb := faultHelperRedis(t, addr)
		rdbs = append(rdbs, rdb)
		locks = append(locks, lockOf(newClient(t, rdb), kind, name))
	}
	fmt.Println("FAULT-READY")
	if _, err := stdin.ReadString('\n'); err != nil {
		t.Fatalf("waiting for the start signal: %v", err)
	}

	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		rdb, l := rdbs[g%nClients], locks[g%nClients]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range iters {
				if err := faultIncrement(ctx, rdb, l, counter, logKey, me); err != nil {
					errs <- fmt.Errorf("goroutine %d: %w", g, err)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	fmt.Printf("FAULT-DONE %d\n", done.Load())
}

// faultIncrement adds one to counter under the lock, the unsafe way.
func faultIncrement(ctx context.Context, rdb *redis.Client, l redisson.Locker, counter, logKey, me string) error {
	h, err := l.Lock(ctx)
	if err != nil {
		return fmt.Errorf("Lock: %w", err)
	}
	if err := faultCriticalSection(h.Context(), rdb, counter, logKey, me); err != nil {
		_ = h.Unlock(ctx)
		return err
	}
	if err := h.Unlock(ctx); err != nil {
		return fmt.Errorf("Unlock: %w", err)
	}
	return nil
}

func faultCriticalSection(lctx context.Context, rdb *redis.Client, counter, logKey, me string) error {
	v, err := rdb.Get(lctx, counter).Int()
	if errors.Is(err, redis.Nil) {
		v, err = 0, nil
	}
	if err != nil {
		return fmt.Errorf("GET: %w", err)
	}
	// A round trip between the read and the write widens the window for a lost update.
	if err := rdb.RPush(lctx, logKey, me).Err(); err != nil {
		return fmt.Errorf("RPUSH: %w", err)
	}
	if err := rdb.Set(lctx, counter, v+1, 0).Err(); err != nil {
		return fmt.Errorf("SET: %w", err)
	}
	if lctx.Err() != nil {
		return fmt.Errorf("lock lost inside the critical section: %w", context.Cause(lctx))
	}
	return nil
}

// faultHelperHolder acquires the lock with the watchdog timeout GOREDISSON_FAULT_WATCHDOG_MS, reports
// it, and keeps it (renewed) until its stdin is closed or it is killed.
func faultHelperHolder(t *testing.T, ctx context.Context, addr, name string, stdin *bufio.Reader) {
	wd := time.Duration(faultHelperInt(t, "GOREDISSON_FAULT_WATCHDOG_MS")) * time.Millisecond
	l := newClient(t, faultHelperRedis(t, addr), redisson.WithWatchdogTimeout(wd)).Lock(name)
	h, err := l.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	fmt.Println("FAULT-READY")
	_, _ = io.Copy(io.Discard, stdin) // until the parent goes away
	if err := h.Unlock(ctx); err != nil {
		t.Errorf("Unlock: %v", err)
	}
}

// faultChild is a running child process of the test binary.
type faultChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string   // protocol lines ("FAULT-...") from stdout
	done  chan struct{} // closed when the process has exited
	err   error         // exit status, valid after done
	mu    sync.Mutex
	out   bytes.Buffer // everything it wrote, for failure messages
}

// faultStartChild re-executes the test binary in helper role with extra environment variables. The
// child is killed, if still running, when the test ends.
func faultStartChild(t *testing.T, role string, env ...string) *faultChild {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, "-test.run=^TestFaultHelperProcess$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), faultHelperEnv+"="+role)
	cmd.Env = append(cmd.Env, env...)
	ch := &faultChild{cmd: cmd, lines: make(chan string, 16), done: make(chan struct{})}
	cmd.Stderr = faultWriter{ch}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if ch.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the helper process: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			_, _ = faultWriter{ch}.Write([]byte(line + "\n"))
			if strings.HasPrefix(line, "FAULT-") {
				select {
				case ch.lines <- line:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		ch.err = cmd.Wait()
		close(ch.done)
	}()
	t.Cleanup(func() {
		_ = ch.stdin.Close()
		select {
		case <-ch.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-ch.done
		}
	})
	return ch
}

type faultWriter struct{ c *faultChild }

func (w faultWriter) Write(b []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.out.Write(b)
}

func (c *faultChild) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// expect waits for the next protocol line, which must start with prefix, and returns it.
func (c *faultChild) expect(t *testing.T, prefix string, timeout time.Duration) string {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line := <-c.lines:
		if !strings.HasPrefix(line, prefix) {
			t.Fatalf("helper process said %q, want %s...; output:\n%s", line, prefix, c.output())
		}
		return line
	case <-c.done:
		// Every line was queued before done was closed: take one still buffered first.
		select {
		case line := <-c.lines:
			if strings.HasPrefix(line, prefix) {
				return line
			}
		default:
		}
		t.Fatalf("helper process exited (%v) before saying %s; output:\n%s", c.err, prefix, c.output())
	case <-timer.C:
		t.Fatalf("helper process did not say %s within %v; output:\n%s", prefix, timeout, c.output())
	}
	return ""
}

// wait waits for the process to exit and fails the test unless it succeeded.
func (c *faultChild) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-c.done:
		if c.err != nil {
			t.Fatalf("helper process failed: %v; output:\n%s", c.err, c.output())
		}
	case <-timer.C:
		t.Fatalf("helper process did not exit within %v; output:\n%s", timeout, c.output())
	}
}

// TestFaultMutualExclusionAcrossProcesses runs four OS processes of 8 goroutines each (over 2 Clients
// per process) that increment a counter stored in Redis with a read and a separate write under a
// Lock, then under a FairLock: with mutual exclusion no update is lost.
func TestFaultMutualExclusionAcrossProcesses(t *testing.T) {
	long(t)
	t.Parallel()
	for _, kind := range []string{"Lock", "FairLock"} {
		t.Run(kind, func(t *testing.T) { faultMutualExclusion(t, kind) })
	}
}

func faultMutualExclusion(t *testing.T, kind string) {
	const (
		procs      = 4
		clients    = 2
		goroutines = 8
		iters      = 15
		name       = "fault-xproc"
		counter    = "fault-xproc-counter"
		logKey     = "fault-xproc-log"
	)
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)

	var children []*faultChild
	for i := range procs {
		children = append(children, faultStartChild(t, "counter",
			"GOREDISSON_FAULT_ADDR="+srv.Addr(),
			"GOREDISSON_FAULT_LOCK="+name,
			"GOREDISSON_FAULT_COUNTER="+counter,
			"GOREDISSON_FAULT_LOG="+logKey,
			"GOREDISSON_FAULT_ID="+strconv.Itoa(i),
			"GOREDISSON_FAULT_CLIENTS="+strconv.Itoa(clients),
			"GOREDISSON_FAULT_GOROUTINES="+strconv.Itoa(goroutines),
			"GOREDISSON_FAULT_ITERS="+strconv.Itoa(iters),
			"GOREDISSON_FAULT_KIND="+kind,
		))
	}
	for _, c := range children {
		c.expect(t, "FAULT-READY", 30*time.Second)
	}
	// Start both at once, so the processes really contend.
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatalf("starting the helper: %v", err)
		}
	}
	for i, c := range children {
		line := c.expect(t, "FAULT-DONE", 60*time.Second)
		if got, want := strings.TrimSpace(strings.TrimPrefix(line, "FAULT-DONE")), strconv.Itoa(goroutines*iters); got != want {
			t.Errorf("process %d completed %s increments, want %s; output:\n%s", i, got, want, c.output())
		}
		c.wait(t, 30*time.Second)
	}

	const total = procs * goroutines * iters
	got, err := admin.Get(ctx, counter).Int()
	if err != nil {
		t.Fatalf("GET %s: %v", counter, err)
	}
	if got != total {
		t.Fatalf("counter = %d, want %d: %d updates lost", got, total, total-got)
	}
	log, err := admin.LRange(ctx, logKey, 0, -1).Result()
	if err != nil {
		t.Fatalf("LRANGE %s: %v", logKey, err)
	}
	if len(log) != total {
		t.Fatalf("%d critical sections logged, want %d", len(log), total)
	}
	switches := 0
	for i := 1; i < len(log); i++ {
		if log[i] != log[i-1] {
			switches++
		}
	}
	t.Logf("%d increments, lock passed between processes %d times", total, switches)
	if h := faultHolders(t, admin, name); len(h) != 0 {
		t.Fatalf("%s held by %v after every process finished, want nobody", name, h)
	}
}

// TestFaultHolderKilledIsReplacedWithinLease kills (SIGKILL) a process holding a lock: a waiter in
// another process must get it at most one watchdog timeout (plus slack) later, and not before the kill
// while the holder was alive and renewing.
func TestFaultHolderKilledIsReplacedWithinLease(t *testing.T) {
	long(t)
	t.Parallel()
	const (
		lease = time.Second
		name  = "fault-killed"
	)
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)

	child := faultStartChild(t, "holder",
		"GOREDISSON_FAULT_ADDR="+srv.Addr(),
		"GOREDISSON_FAULT_LOCK="+name,
		"GOREDISSON_FAULT_WATCHDOG_MS="+strconv.Itoa(int(lease.Milliseconds())),
	)
	child.expect(t, "FAULT-READY", 30*time.Second)
	holders := faultHolders(t, admin, name)
	if len(holders) != 1 {
		t.Fatalf("lock holders %v after the helper acquired, want one owner", holders)
	}

	c := newClient(t, srv.Client(t))
	l := c.Lock(name)
	type result struct {
		h   *redisson.Hold
		err error
		at  time.Time
	}
	acquired := make(chan result, 1)
	go func() {
		h, err := l.Lock(ctx)
		acquired <- result{h, err, time.Now()}
	}()
	t.Cleanup(func() {
		if r := <-acquired; r.err == nil {
			_ = r.h.Unlock(context.Background())
		}
	})
	eventually(t, 5*time.Second, "the waiter to subscribe to its wake-up channel", func() bool {
		return faultChannels(t, admin, name) == 1
	})
	// See the holder's watchdog renew (the TTL goes up, to at most its lease): it is alive and holding.
	prev := time.Duration(-1)
	eventually(t, 5*time.Second, "the holder's watchdog to renew the lock", func() bool {
		pttl, err := admin.PTTL(ctx, faultKey(name)).Result()
		if err != nil || pttl < 0 || pttl > lease {
			return false
		}
		renewed := prev >= 0 && pttl > prev
		prev = pttl
		return renewed
	})
	select {
	case r := <-acquired:
		acquired <- r // for the cleanup
		t.Fatalf("the waiter acquired (err %v) while the holder was alive", r.err)
	default:
	}
	if now := faultHolders(t, admin, name); !maps.Equal(now, holders) {
		t.Fatalf("lock holders went from %v to %v while the holder was alive", holders, now)
	}

	killed := time.Now()
	if err := child.cmd.Process.Kill(); err != nil {
		t.Fatalf("killing the holder: %v", err)
	}
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case r := <-acquired:
		acquired <- r // for the cleanup
		if r.err != nil {
			t.Fatalf("waiter Lock: %v", r.err)
		}
		if d, limit := r.at.Sub(killed), lease+time.Second; d > limit {
			t.Errorf("the waiter acquired %v after the holder was killed, want at most %v", d, limit)
		}
		if n, err := r.h.HoldCount(ctx); err != nil || n != 1 {
			t.Errorf("waiter HoldCount = %d (err %v), want 1", n, err)
		}
	case <-timer.C:
		t.Fatalf("the waiter did not acquire within 30s of the holder's death")
	}
	<-child.done
}

// TestFaultProgressAfterRedisOutage: goroutines of two clients keep locking and unlocking while
// Redis is killed and restarted (its data lost), or paused for longer than the lease. Calls fail
// during the outage; afterwards every goroutine must acquire again: no turn, subscription or renewal
// is left stuck by the failures. (Mutual exclusion is not checked across the outage: a restart
// without persistence loses the lock, which the package documents.)
func TestFaultProgressAfterRedisOutage(t *testing.T) {
	long(t)
	t.Parallel()
	outages := map[string]func(t *testing.T, srv *redistest.Server){
		"kill-restart": func(t *testing.T, srv *redistest.Server) {
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		},
		"pause-resume": func(t *testing.T, srv *redistest.Server) {
			if err := srv.Pause(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond) // the outage itself: longer than the 600ms lease
			if err := srv.Resume(); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, outage := range outages {
		t.Run(name, func(t *testing.T) { faultProgressAfter(t, outage) })
	}
}

func faultProgressAfter(t *testing.T, outage func(*testing.T, *redistest.Server)) {
	srv := redistest.Start(t)
	opts := []redisson.Option{redisson.WithWatchdogTimeout(600 * time.Millisecond), redisson.WithRepollInterval(100 * time.Millisecond)}
	clients := []*redisson.Client{newClient(t, srv.Client(t), opts...), newClient(t, srv.Client(t), opts...)}
	var restarted atomic.Bool
	var before atomic.Int32   // acquisitions before the kill
	var after [6]atomic.Int32 // acquisitions of each goroutine after the restart
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	for g := range after {
		l := clients[g%2].Lock("fault-restart")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				wctx, wcancel := context.WithTimeout(ctx, time.Second)
				h, err := l.Lock(wctx)
				wcancel()
				if err != nil {
					continue // Redis down, or the wait timed out: try again
				}
				if restarted.Load() {
					after[g].Add(1)
				} else {
					before.Add(1)
				}
				_ = h.Unlock(ctx) // may fail while Redis is down
			}
		}()
	}
	eventually(t, 10*time.Second, "some acquisitions before the kill", func() bool { return before.Load() >= 20 })
	outage(t, srv)
	restarted.Store(true)
	eventually(t, 30*time.Second, "every goroutine to acquire after the restart", func() bool {
		for i := range after {
			if after[i].Load() < 3 {
				return false
			}
		}
		return true
	})
	cancel()
	wg.Wait()
}

// twoProcesses runs load in this process and, in a child of the test binary (helper role, on the
// lock or object name), until a stop time d from now shared by both; the child prints marker and its
// result as JSON (see childLoad). It returns both results.
func twoProcesses[R any](t *testing.T, srv *redistest.Server, role, name, marker string, d time.Duration, load func(stop time.Time) R) (mine, theirs R) {
	t.Helper()
	child := faultStartChild(t, role, "GOREDISSON_FAULT_ADDR="+srv.Addr(), "GOREDISSON_FAULT_LOCK="+name)
	child.expect(t, "FAULT-READY", 30*time.Second)
	stop := time.Now().Add(d)
	if _, err := fmt.Fprintf(child.stdin, "%d\n", stop.UnixNano()); err != nil {
		t.Fatal(err)
	}
	mine = load(stop)
	line := child.expect(t, marker+" ", 30*time.Second)
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, marker+" ")), &theirs); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	child.wait(t, 30*time.Second)
	return mine, theirs
}

// childLoad is the child's share of twoProcesses: once ready, it reads the stop time (UnixNano) from
// stdin, runs load until then and prints marker and its result as JSON.
func childLoad[R any](t *testing.T, stdin *bufio.Reader, marker string, load func(stop time.Time) R) {
	fmt.Println("FAULT-READY")
	line, err := stdin.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(load(time.Unix(0, ns)))
	fmt.Printf("%s %s\n", marker, b)
}
