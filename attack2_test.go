package redisson_test

// Second adversarial review. Each test forces an interleaving and asserts a guarantee stated in
// doc.go or the API docs; each fails on the code it was written against, for the reason given in
// its comment.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// a2Op marks the contexts of the operations a test wants to hold back (a2Hook).
type a2Op struct{}

func a2Marked(ctx context.Context) bool { return ctx.Value(a2Op{}) != nil }

// a2Hook is a go-redis hook: while down, commands whose context is not marked (a2Op or
// regressMark) fail at once, as over a broken network (the library's renewals); while holding,
// marked commands wait until released (or their context ends).
type a2Hook struct {
	mu   sync.Mutex
	down bool
	hold chan struct{}
	held int // marked commands waiting right now
}

func (h *a2Hook) setDown(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.down = on
}

func (h *a2Hook) holdOps() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold == nil {
		h.hold = make(chan struct{})
	}
}

func (h *a2Hook) releaseOps() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold != nil {
		close(h.hold)
		h.hold = nil
	}
}

func (h *a2Hook) heldOps() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

var errA2Down = errors.New("a2: network down (simulated)")

func (h *a2Hook) gate(ctx context.Context) error {
	marked := a2Marked(ctx) || regressMarked(ctx)
	h.mu.Lock()
	if !marked {
		down := h.down
		h.mu.Unlock()
		if down {
			return errA2Down
		}
		return nil
	}
	hold := h.hold
	if hold == nil || !a2Marked(ctx) {
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

func (h *a2Hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *a2Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.gate(ctx); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *a2Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
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

// a2Expiry returns the owner holding key and when it expires (zero if free or without expiry).
func a2Expiry(t *testing.T, admin *redis.Client, key string) (string, time.Time) {
	t.Helper()
	ctx := context.Background()
	v, err := admin.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", time.Time{}
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	ttl := admin.PTTL(ctx, key).Val()
	owner, _, _ := redisson.DecodeLockValue(v)
	if ttl <= 0 {
		return owner, time.Time{}
	}
	return owner, time.Now().Add(ttl)
}

// TestAttack2LostReplyAfterLossReArms: change 2 of the fix undoes a re-entry or partial unlock that
// *answers* after the owner was lost, since it has set the lease again (doc.go: "A re-entry or
// partial unlock still in flight when the hold is lost may set the lease again when it lands; the
// client then releases the lock at once"). When the same operation lands but its reply is lost
// (MaxRetries -1: no re-send), its outcome is unknown and nothing is undone:
//
//   - reenter: the re-entry sets PX lease, its reply is lost; reenter then sends its own clean-up, a
//     partial release of the new level, which (hold.go: runRelease(..., o.leaseMs, ...)) sets PX
//     lease once more, *after* the loss was declared. No final undo follows.
//   - partial-unlock: the partial release sets PX lease, its reply is lost; release() returns the
//     error without looking at o.endErr.
//
// The owner's last Unlock then sends nothing (the owner has ended), so the lock stays held by the
// lost owner for a whole new lease, renewed by nobody, although the hold was told it was lost and
// unlocked every level: "a lock held after its loss and after its owner's last Unlock".
//
// Forcing: Client A's renewals fail (a2Hook down) so the scheduler declares the loss at lease/2
// (margin 0.5); the operation is held back by the hook until the loss, then let through with its
// reply dropped by the proxy. The key's expiry must not move past the expiry in force at the loss.
func TestAttack2LostReplyAfterLossReArms(t *testing.T) {
	for _, op := range []string{"reenter", "partial-unlock"} {
		t.Run(op, func(t *testing.T) {
			const watchdog = 1200 * time.Millisecond
			name := "attack2-lost-reply-" + op
			srv := redistest.Start(t)
			admin := srv.Client(t)
			p := redistest.NewProxy(t, srv.Addr())
			rdbA, dialA := regressProxied(t, srv, p, func(o *redis.Options) { o.MaxRetries = -1 })
			hook := &a2Hook{}
			rdbA.AddHook(hook)
			a := newClient(t, rdbA, redisson.WithWatchdogTimeout(watchdog), redisson.WithLossMargin(0.5))
			var wg sync.WaitGroup
			t.Cleanup(func() { hook.releaseOps(); dialA.resumeDials(); wg.Wait() })
			attackWarmUp(t, a)
			ctx := context.WithValue(t.Context(), a2Op{}, true)
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
			regressGo(&wg, func() {
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
			o, expiryAtLoss := a2Expiry(t, admin, key)
			if o != owner || expiryAtLoss.IsZero() {
				t.Fatalf("precondition: at the loss the key is held by %q (expiry %v), want the lost owner with a TTL", o, expiryAtLoss)
			}

			// The operation lands now; its reply is lost.
			p.DropReplies(1)
			hook.releaseOps()
			opErr := regressWait(t, res, 10*time.Second, op)
			p.DropReplies(0)
			if opErr == nil {
				t.Fatalf("precondition: the %s succeeded although its reply was dropped", op)
			}
			t.Logf("%s with its reply lost after the loss = %v", op, opErr)
			// The owner's last level.
			if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
				t.Logf("last Unlock = %v", err)
			}

			o, expiry := a2Expiry(t, admin, key)
			if o == owner && expiry.After(expiryAtLoss.Add(150*time.Millisecond)) {
				t.Errorf("after the loss and the owner's last Unlock, the lost owner's lock was re-armed by the %s "+
					"(reply lost): it is held by nobody until %v from now, %v past the lease in force at the loss; "+
					"nothing undoes it", op, time.Until(expiry).Round(time.Millisecond),
					expiry.Sub(expiryAtLoss).Round(time.Millisecond))
			}
		})
	}
}

// TestAttack2RenewalLandsAfterLoss: change 6 lets the scheduler declare an entry lost at its
// deadline while its renewal call is in flight, and ignore the call's late result. But the renewal
// itself may still land: a renewal sent before the deadline that reaches Redis after it (a slow
// network: the very condition in which renewals fail) sets a whole new lease on the lost owner's
// key. The hold was told it is lost, its Unlock sends nothing (the owner has ended), and nothing
// undoes the renewal: the lock stays held by nobody for up to a whole lease after its loss and after
// its owner's last Unlock. renew.go claims "a renewal can never outlive its hold"; for acquisitions
// with an unknown outcome the library undoes (and re-checks) exactly this case, for renewals it does
// nothing, although it knows (e.renewing) that a renewal was in flight at the loss.
//
// Forcing: Client A's connection goes through a proxy that, once A holds the lock, delays every
// chunk by 450ms. Watchdog 1200ms, margin 0.5: the renewal goes out at +400ms (deadline +600ms),
// the loss is declared at +600ms, the renewal reaches Redis at ~+850ms, while the key (lease until
// +1200ms) still exists, and re-arms it until ~+2050ms.
func TestAttack2RenewalLandsAfterLoss(t *testing.T) {
	const (
		name     = "attack2-renewal-after-loss"
		watchdog = 1200 * time.Millisecond
		delay    = 450 * time.Millisecond
	)
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	a := newClient(t, rdbA, redisson.WithWatchdogTimeout(watchdog), redisson.WithLossMargin(0.5))
	ctx := t.Context()
	key := redisson.LockKeyOf(a, name)

	// Warm up: load the acquire, release and renew scripts.
	attackWarmUp(t, a)
	w, err := a.Lock("attack2-warm-renew").Lock(ctx)
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	eventually(t, 5*time.Second, "a renewal", func() bool { return a.Stats().Renewed >= 1 })
	if err := w.Unlock(ctx); err != nil {
		t.Fatalf("warm-up Unlock: %v", err)
	}

	h, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	owner := redisson.OwnerOf(h)
	p.Delay(delay) // the network gets slow
	lost := faultWaitDone(t, h.Context(), 5*time.Second, "the loss (the renewal did not answer in time)")
	p.Delay(0)
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("precondition: hold ended with %v, want ErrLockLost", cause)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("Unlock after the loss = %v, want ErrNotHeld", err)
	}

	// The renewal sent before the loss lands about 250ms after it. A re-armed lease would last until
	// about 1.45s after the loss; the lease in force at the loss ends by 0.6s + the delay after it.
	time.Sleep(time.Until(lost.Add(watchdog/2 + delay + 100*time.Millisecond)))
	if o, expiry := a2Expiry(t, admin, key); o == owner {
		t.Errorf("the lock of the owner lost at %v is still held by it, until %v from now: a renewal in flight "+
			"at the loss landed and re-armed it, and nothing undid it (the owner's Unlock sent nothing)",
			lost.Format("15:04:05.000"), time.Until(expiry).Round(time.Millisecond))
	}
}

// TestAttack2ResentPartialUnlockAfterOwnRelease: the history claim (doc.go: "a repeat answers what
// the first run did, even after the lock changed hands any number of times") covers final releases,
// but partial releases read the same history: lock_release.lua answers a partial release of an owner
// that no longer holds the lock from the Client's history key. That key is overwritten by the
// Client's next final release of the lock, which may come while a partial release of an earlier
// owner is still being re-sent (a partial release does not hold the turn: the owner's final release
// can run, answer and pass the turn while it is in flight). The re-send then answers "not held":
// Unlock returns ErrNotHeld and ErrLockLost, "changing nothing", for a level whose first run was
// released, of an owner that released the lock normally and was never lost.
//
// Forcing: X holds two levels; the partial unlock's reply is dropped and its re-send waits for a new
// connection (regressDialer); meanwhile X's final unlock releases the lock and another goroutine of
// the same Client locks and unlocks it. Then the re-send goes.
func TestAttack2ResentPartialUnlockAfterOwnRelease(t *testing.T) {
	const name = "attack2-partial-history"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p)
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
	regressWarmUp(t, ctx, d, a)

	x, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("X Lock: %v", err)
	}
	lvl, err := x.Reenter(ctx)
	if err != nil {
		t.Fatalf("X Reenter: %v", err)
	}
	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	regressGo(&wg, func() { res <- lvl.Unlock(ctx) })
	regressWait(t, reached, 5*time.Second, "the re-send of the partial unlock to open a new connection")
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
	if err := regressWait(t, res, 10*time.Second, "the partial unlock"); err != nil {
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

// TestAttack2HistoryWindowIgnoresDialerRetryBackoff: change 7 computes the re-send window from the
// go-redis options, counting DialerRetries dial attempts each followed by DialerRetryTimeout. But
// go-redis waits DialerRetryBackoff(attempt) between dial attempts when that option is set
// (internal/pool: dialRetryBackoff), and resendWindow ignores it. A final release whose reply is
// lost and whose re-send has to redial with a longer backoff runs after its history entry expired:
// the re-send answers "not held", Unlock returns ErrNotHeld and ErrLockLost and EventLost is
// reported for a lock that the first run released.
//
// Forcing: MaxRetries 1, 200ms timeouts, DialerRetries 2, DialerRetryTimeout 1ms: the computed
// window is ~3s. DialerRetryBackoff waits 3.5s. The release's reply is dropped and the first dial
// of the re-send is refused: the re-send runs ~3.5s after the first run (within the 5s bound of
// Unlock's context).
func TestAttack2HistoryWindowIgnoresDialerRetryBackoff(t *testing.T) {
	const name = "attack2-window-backoff"
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rd := &regressDialer{proxy: p.Addr(), direct: srv.Addr(), resume: make(chan struct{})}
	fd := &attackFailDialer{regressDialer: rd}
	rdbA := srv.Client(t, func(o *redis.Options) {
		o.Addr = p.Addr()
		o.Dialer = fd.dial
		o.MaxRetries = 1
		o.PoolTimeout = 200 * time.Millisecond
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 8*time.Millisecond
		o.DialerRetries, o.DialerRetryTimeout = 2, time.Millisecond
		o.DialerRetryBackoff = func(int) time.Duration { return 3500 * time.Millisecond }
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
	attackWarmUp(t, a)
	ttl := srv.Client(t).PTTL(ctx, redisson.HistoryKeyOf(a, "attack-warmup")).Val()
	t.Logf("history TTL (computed re-send window): %v", ttl)

	h, err := a.Lock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	regressOneConn(t, rdbA)
	fd.mu.Lock()
	fd.fail = 1
	fd.mu.Unlock()
	p.DropReplies(1)
	start := time.Now()
	err = h.Unlock(ctx)
	took := time.Since(start)
	p.DropReplies(0)
	fd.mu.Lock()
	refused := fd.seen
	fd.mu.Unlock()
	if refused != 1 {
		t.Fatalf("precondition: %d dials refused, want 1 (Unlock = %v after %v)", refused, err, took)
	}
	t.Logf("final Unlock (reply dropped, re-sent after %v) = %v", took, err)
	if err != nil {
		t.Errorf("final Unlock whose first run released the lock = %v (ErrNotHeld %v, ErrLockLost %v), want nil: "+
			"the re-send ran %v after the first run, after the history (kept %v) expired",
			err, errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost), took, ttl)
	}
	evMu.Lock()
	defer evMu.Unlock()
	for _, e := range lost {
		t.Errorf("EventLost emitted for a lock its Unlock released: %v", e)
	}
}

// TestAttack2AcquireRetryErrorReplyNotUndone: contend undoes an acquisition only when its error is not
// an error reply (isRedisReply: "the script failed and changed nothing"). But go-redis re-sends a
// command whose reply was lost, and it retries on some error replies too (READONLY, LOADING,
// MASTERDOWN, TRYAGAIN, CLUSTERDOWN, max clients...): when the first run was applied and its
// reply lost, and the re-send gets such a reply, go-redis returns that error reply although the
// first run took the lock. The acquisition reports ErrNotObtained ("leaves nothing held"), nothing
// undoes it (no undo, no background re-checks), and the lock is held by an owner that does not
// exist for a whole lease (30s): doc.go "An acquisition whose outcome is unknown ... is undone".
//
// Forcing: A's SET NX applies, its reply is dropped by the proxy and the re-send waits for a new
// connection; meanwhile the server is made a replica of an unreachable master (it keeps its data
// and answers writes with READONLY, which go-redis retries until MaxRetries). Then the server is
// made a master again. The lock must be free within the undo re-check schedule (250ms, 1s, 4s).
func TestAttack2AcquireRetryErrorReplyNotUndone(t *testing.T) {
	const name = "attack2-retry-reply"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p, func(o *redis.Options) {
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
	attackWarmUp(t, a)
	key := redisson.LockKeyOf(a, name)

	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	regressGo(&wg, func() {
		h, err := a.Lock(name).TryLock(ctx)
		if err == nil {
			_ = h.Unlock(ctx)
		}
		res <- err
	})
	regressWait(t, reached, 5*time.Second, "the re-send of the SET NX to open a new connection")
	p.DropReplies(0)
	if o, _ := a2Expiry(t, admin, key); o == "" {
		t.Fatalf("precondition: the first run of the SET NX did not take the lock")
	}
	// The server turns read-only (a replica of a master it cannot reach), keeping its data.
	if err := admin.Do(ctx, "REPLICAOF", "127.0.0.1", "1").Err(); err != nil {
		t.Fatalf("REPLICAOF: %v", err)
	}
	dialA.resumeDials()
	err := regressWait(t, res, 10*time.Second, "TryLock")
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
	owner, _ := a2Expiry(t, admin, key)
	if owner == "" {
		t.Fatalf("precondition: the data was not kept (lock key gone)")
	}
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		if o, _ := a2Expiry(t, admin, key); o == "" {
			if h, err := b.Lock(name).TryLock(ctx); err != nil {
				t.Errorf("B TryLock of the free lock: %v", err)
			} else {
				_ = h.Unlock(ctx)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, expiry := a2Expiry(t, admin, key)
	t.Errorf("TryLock reported ErrNotObtained (nothing held), but its applied SET NX was never undone: the lock "+
		"is held by owner %q, which does not exist, for %v more (checked 6s, past every undo re-check)",
		owner, time.Until(expiry).Round(time.Millisecond))
}

// TestAttack2HandOverAfterHeirLeaseLapsed: a final release that transfers the lock to the local heir
// (lock_release.lua: SET heir PX <heir's lease>, history "t") may have its reply lost; its re-send
// answers -2 from the history, however late it comes. releaseFinal then hands the lock over
// (handOver) without asking whether the heir's lease, which began when the first run executed, may
// have lapsed meanwhile: the heir's Lock returns success, with a live hold context, while another
// Client holds the lock (it took it when the heir's unrenewed lease ran out). Only afterwards does
// the scheduler, given a deadline already in the past, cancel the hold. doc.go: "at most one owner
// holds a lock at a time, and the owner is told (ErrLockLost) before its lease can lapse"; Lock's
// success promises a held lock, not one lost before it was returned.
//
// Forcing: G1 (Client A) holds; W (Client A, WithLease 400ms) is queued behind it. G1's final
// unlock transfers the lock to W; its reply is dropped and the re-send waits for a new connection
// (regressDialer) until W's transferred lease has expired and Client B has acquired the lock.
func TestAttack2HandOverAfterHeirLeaseLapsed(t *testing.T) {
	// Whether W's Lock sees the loss before it returns is a race between W's goroutine (woken by
	// the hand-over) and the scheduler goroutine (poked by the registration that follows it): W
	// usually wins. A few rounds make the failure reliable.
	const rounds = 5
	for i := range rounds {
		if msg := attack2HandOverRound(t, fmt.Sprintf("attack2-handover-lapsed-%d", i)); msg != "" {
			t.Errorf("round %d: %s", i+1, msg)
			return
		}
	}
}

// attack2HandOverRound runs the scenario of TestAttack2HandOverAfterHeirLeaseLapsed once and returns
// a description of the violation, or "".
func attack2HandOverRound(t *testing.T, name string) string {
	const heirLease = 400 * time.Millisecond
	srv := redistest.Start(t)
	admin := srv.Client(t)
	d := newRegressDriver(admin)
	p := redistest.NewProxy(t, srv.Addr())
	rdbA, dialA := regressProxied(t, srv, p, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	})
	a := newClient(t, rdbA)
	b := newClient(t, srv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	defer func() { dialA.resumeDials(); wg.Wait() }()
	regressWarmUp(t, ctx, d, a)

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
	regressGo(&wg, func() {
		var r wResult
		regressInLock(func() { r.h, r.err = a.Lock(name).Lock(ctx, redisson.WithLease(heirLease)) })
		r.at = time.Now()
		if r.err == nil {
			r.liveNow = r.h.Context().Err() == nil
		}
		wRes <- r
	})
	eventually(t, 5*time.Second, "W to queue behind G1 in Client A", func() bool { return regressParked() >= 1 })

	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	unlockRes := make(chan error, 1)
	regressGo(&wg, func() { unlockRes <- g1.Unlock(ctx) })
	regressWait(t, reached, 5*time.Second, "the re-send of G1's final unlock to open a new connection")
	p.DropReplies(0)
	if o, _ := a2Expiry(t, admin, redisson.LockKeyOf(a, name)); o == "" || o == redisson.OwnerOf(g1) {
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
	if err := regressWait(t, unlockRes, 5*time.Second, "G1's Unlock"); err != nil {
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
	r := regressWait(t, wRes, 5*time.Second, "W's Lock after B's release")
	if r.err != nil {
		t.Fatalf("W's Lock after B's release = %v", r.err)
	}
	_ = r.h.Unlock(ctx)
	return ""
}

// TestAttack2ZeroClientPanics: the package turns every other kind of bad input into
// ErrInvalidArgument (a nil *Client: "ErrInvalidArgument on a nil Client"; a zero Lock: "lock handle
// not created by Client.Lock"; a zero Hold: "nil or zero Hold"), but a zero Client (declared, not
// created by New, e.g. a struct field) panics with a nil pointer dereference in Lock, TryLock,
// ForceUnlock, Close and Stats.
func TestAttack2ZeroClientPanics(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func(c *redisson.Client) error
	}{
		{"Lock", func(c *redisson.Client) error { _, err := c.Lock("x").Lock(ctx); return err }},
		{"TryLock", func(c *redisson.Client) error { _, err := c.Lock("x").TryLock(ctx); return err }},
		{"ForceUnlock", func(c *redisson.Client) error { _, err := c.Lock("x").ForceUnlock(ctx); return err }},
		{"Close", func(c *redisson.Client) error { return c.Close() }},
		{"Stats", func(c *redisson.Client) error { _ = c.Stats(); return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s on a zero Client panicked: %v; want ErrInvalidArgument (or ErrClosed)", tc.name, r)
				}
			}()
			var c redisson.Client
			err := tc.call(&c)
			t.Logf("%s on a zero Client = %v", tc.name, err)
		})
	}
}

// TestAttack2UndoFreedFirstCopySkipsRechecks: change 3 repeats the undo of an acquisition with an
// unknown outcome (after 250ms, 1s, 4s) "unless it frees something first" (lock.go undo: returns
// when res != releaseNotHeld). But freeing one copy of the acquisition proves nothing about the
// others: go-redis re-sends a command whose reply was lost, so the first run may have been applied
// while the re-send is still travelling when the call gives up. The undo frees the first run's
// lock, skips every re-check, and the re-send lands afterwards and takes the lock for an owner that
// no longer exists: held by nobody for a whole lease (30s), although the request was delayed far
// less than the re-check schedule. doc.go: "As its request may still be travelling, the undo is
// repeated in the background after 250ms, 1s and 4s".
//
// Forcing: the first SET NX is applied and its reply dropped (proxy); go-redis' re-send waits for
// a new connection (regressDialer), which is then delayed 600ms by the proxy; TryLock's context
// ends at 300ms; the undo is sent with the delay off (hook), so it runs first.
func TestAttack2UndoFreedFirstCopySkipsRechecks(t *testing.T) {
	const name = "attack2-undo-first-copy"
	srv := redistest.Start(t)
	admin := srv.Client(t)
	p := redistest.NewProxy(t, srv.Addr())
	dialA := &regressDialer{proxy: p.Addr(), direct: srv.Addr(), resume: make(chan struct{})}
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
			return &a2WriteConn{Conn: c, onWrite: func(b []byte) {
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
	attackWarmUp(t, a)
	key = redisson.LockKeyOf(a, name)

	regressOneConn(t, rdbA)
	reached := dialA.holdNext()
	p.DropReplies(1)
	res := make(chan error, 1)
	start := time.Now()
	regressGo(&wg, func() {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		h, err := a.Lock(name).TryLock(ctx)
		if err == nil {
			_ = h.Unlock(t.Context())
		}
		res <- err
	})
	regressWait(t, reached, 5*time.Second, "the re-send of the SET NX to open a new connection")
	p.DropReplies(0)
	if o, _ := a2Expiry(t, admin, key); o == "" {
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
	err := regressWait(t, res, 5*time.Second, "TryLock")
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
		o, _ := a2Expiry(t, admin, key)
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
	if o, expiry := a2Expiry(t, admin, key); o != "" {
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

// a2WriteConn calls onWrite with every chunk written, before writing it.
type a2WriteConn struct {
	net.Conn
	onWrite func([]byte)
}

func (c *a2WriteConn) Write(b []byte) (int, error) {
	c.onWrite(b)
	return c.Conn.Write(b)
}
