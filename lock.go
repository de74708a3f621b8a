package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/gate"
	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/internal/scripts"
)

// Lock is a reentrant distributed mutex, the equivalent of Redisson's RLock. Get one with
// Client.Lock; it is a name plus a client, does no I/O, and is safe to share between goroutines.
//
// Ownership is not tied to a goroutine or to the handle: each successful fresh acquisition creates a
// new owner and returns an ownership context carrying it. Two acquisitions without that context
// exclude each other even through the same handle, like sync.Mutex. Passing the ownership context (or
// a context derived from it) to Lock or TryLock re-enters, incrementing the hold count kept in Redis;
// passing it to Unlock decrements it, and the unlock that brings it to zero deletes the key and wakes
// one waiter. The ownership context may be handed to other goroutines, which then act as the owner.
//
// The ownership context is derived from the context passed to the acquisition and is cancelled when:
//   - the final Unlock succeeds (cause context.Canceled);
//   - the lock is lost: the watchdog found it gone (expired, force-unlocked) or could not renew it
//     before its lease may have lapsed, or a fixed lease ran out, or the Client was closed (cause
//     matching ErrLockLost; read it with context.Cause);
//   - the parent context ends. This does NOT release the lock: it stays held, and renewed, until
//     Unlock. Unlock works with a cancelled ownership context.
//
// Within a process, goroutines waiting for the same lock through one Client queue first come first
// served and only the head of the queue contends in Redis, so a goroutine that unlocks and at once
// locks again goes behind those already waiting. Between processes the lock is not FIFO: on each
// release the head waiter of every process races for it, and a waiter that has waited 10ms claims
// the lock so that the next release hands it over (see the package documentation).
type Lock struct {
	c           *Client
	name        string
	key         string   // lock key
	releaseKeys []string // lock key, wake-up channel, release record (see lock_release.lua)
	ctxKey      any      // holdKey of this lock, boxed once
	err         error    // invalid name
}

// starvationThreshold is how long a waiter waits before it claims the lock (see contend).
const starvationThreshold = 10 * time.Millisecond

// holdKey is the context key under which an ownership context carries its hold.
type holdKey struct {
	c   *Client
	key string
}

// hold is one owner's possession of a lock, from fresh acquisition to final unlock or loss.
type hold struct {
	l               *Lock
	owner           string
	leaseMs         int64 // TTL reset on re-entry and partial unlock; 0 for fixed-lease holds (never extended)
	ownerArg        any   // owner and leaseMs boxed once, for script arguments
	leaseArg        any
	context.Context // the ownership context: cancelled with the hold's end; Value adds the hold
	cancel          context.CancelCauseFunc
	entry           renew.Entry

	mu          sync.Mutex
	count       int64  // the hold count as last seen in Redis, and the last request applied: what the
	lastReq     string // lock's value should be, to free it without parsing (a hint, checked by Redis)
	unlocking   int    // Unlock calls in flight
	pendingLoss error  // loss reported while an Unlock was in flight
	ended       bool
	endErr      error // why the hold ended without an unlock (matches ErrLockLost), or nil
}

// Name returns the name the lock was created with ("" for a nil handle).
func (l *Lock) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Lock acquires the lock, blocking until it is acquired, ctx ends, the optional WithWait bound
// passes, or the Client is closed. Without WithLease the watchdog keeps the lock alive until Unlock;
// with WithLease(d) it expires after d. If ctx already carries ownership of this lock, Lock re-enters
// at once (one round trip) and returns ctx; options are then ignored (a re-entered hold keeps the
// lease mode of its first acquisition, and a fixed lease is not extended).
//
// On success it returns the ownership context (see Lock). On failure nothing is held and the error
// matches ErrNotObtained; it also matches ctx.Err() if ctx ended the wait, ErrClosed if the Client was
// closed, ErrWrongType if the name holds another type of value, ErrInvalidArgument for bad input,
// and ErrLockLost when re-entering a hold that was lost.
func (l *Lock) Lock(ctx context.Context, opts ...AcquireOption) (context.Context, error) {
	return l.acquire(ctx, opts, true)
}

// TryLock makes one attempt to acquire the lock, or keeps trying for up to the WithWait duration, and
// otherwise behaves as Lock. It does not wait for goroutines of this process that are queued for the
// same lock when no wait is given: the lock is then reported as not obtained.
func (l *Lock) TryLock(ctx context.Context, opts ...AcquireOption) (context.Context, error) {
	return l.acquire(ctx, opts, false)
}

func (l *Lock) check(ctx context.Context) error {
	if l == nil || (l.c == nil && l.err == nil) {
		return invalidf("lock handle not created by Client.Lock")
	}
	if l.err != nil {
		return l.err
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if l.c.closed() {
		return ErrClosed
	}
	return nil
}

// holdOf returns the hold of this lock carried by ctx, if any.
func (l *Lock) holdOf(ctx context.Context) *hold {
	h, _ := ctx.Value(l.ctxKey).(*hold)
	return h
}

func (l *Lock) acquire(ctx context.Context, opts []AcquireOption, wait bool) (context.Context, error) {
	start := time.Now()
	if err := l.check(ctx); err != nil {
		return nil, notObtained(l.Name(), err)
	}
	var ac acquireConfig
	for _, o := range opts {
		if o == nil {
			return nil, notObtained(l.name, invalidf("nil acquire option"))
		}
		if err := o(&ac); err != nil {
			return nil, notObtained(l.name, err)
		}
	}
	if h := l.holdOf(ctx); h != nil {
		return l.reenter(ctx, h)
	}

	waitCtx := ctx
	if ac.waitSet {
		if ac.wait == 0 {
			wait = false
		} else {
			var cancel context.CancelFunc
			waitCtx, cancel = context.WithTimeout(ctx, ac.wait)
			defer cancel()
			wait = true
		}
	}

	// Take this process's turn for the lock: only the head of the local queue contends in Redis. A
	// releasing holder may transfer the lock to the head waiter directly (see Unlock).
	owner := l.c.newID()
	if wait {
		want := &heir{ctx: ctx, owner: owner, lease: ac.lease, start: start}
		payload, err := l.c.gates.Enter(waitCtx, l.key, want)
		if err != nil {
			return nil, l.waitEnded(ctx)
		}
		if h, ok := payload.(*hold); ok {
			return h, nil
		}
	} else if !l.c.gates.TryEnter(l.key) {
		return nil, notObtained(l.name, errors.New("held or awaited by another owner in this process"))
	}
	h, err := l.contend(ctx, waitCtx, owner, ac.lease, wait, start)
	if err != nil {
		l.c.gates.Leave(l.key)
		return nil, err
	}
	l.c.emit(Event{Kind: EventAcquired, Name: l.name, Wait: time.Since(start)})
	return h, nil
}

// contend runs the acquire script until it succeeds or the wait ends, sleeping between attempts until
// a wake-up message, the holder's remaining TTL or the re-poll interval, whichever comes first.
//
// A waiter that has waited for starvationThreshold claims the lock (one claim at a time): the holder's
// final release then hands the lock to it instead of freeing it, so that goroutines of other
// processes that unlock and lock again cannot keep beating it. A claimer that gives up withdraws its
// claim (or releases what it was handed).
func (l *Lock) contend(ctx, waitCtx context.Context, owner string, lease time.Duration, wait bool, start time.Time) (_ *hold, err error) {
	c := l.c
	leaseMs := c.cfg.watchdog.Milliseconds()
	if lease > 0 {
		leaseMs = lease.Milliseconds()
	}
	var sub *pubsub.Waiter
	var timer *time.Timer // created at the first wait: most acquisitions never wait
	claimed := false
	defer func() {
		if sub != nil {
			sub.Close()
		}
		if timer != nil {
			timer.Stop()
		}
		if err != nil && claimed {
			l.undo(ctx, owner, "")
		}
	}()

	for {
		if c.closed() {
			return nil, notObtained(l.name, ErrClosed)
		}
		starving := wait && time.Since(start) >= starvationThreshold
		claimed = claimed || starving
		sent, req := time.Now(), c.newID()
		ok, pttl, err := l.runAcquire(waitCtx, owner, req, leaseMs, false, starving)
		if err != nil {
			if waitCtx.Err() != nil {
				err = l.waitEnded(ctx)
			}
			return nil, err
		}
		if ok {
			if h := l.newHold(ctx, owner, req, lease, sent); h != nil {
				return h, nil
			}
			// Closed meanwhile: nothing would renew or end the hold, so give the lock back.
			l.undo(ctx, owner, "")
			return nil, notObtained(l.name, ErrClosed)
		}
		if !wait {
			return nil, notObtained(l.name, errors.New("held by another owner"))
		}

		// Sleep until a wake-up, the holder's TTL, or the re-poll interval.
		sleep := c.cfg.repoll
		if pttl >= 0 && time.Duration(pttl)*time.Millisecond < sleep {
			sleep = time.Duration(pttl) * time.Millisecond
		}
		var wake <-chan struct{}
		if sub == nil {
			if sub, err = c.hub.Subscribe(waitCtx, l.releaseKeys[1]); err != nil {
				return nil, notObtained(l.name, ErrClosed)
			}
			// Try again as soon as the subscription is confirmed: a release between the failed
			// attempt and the confirmation would otherwise go unnoticed until the timer.
			wake = sub.Ready()
		} else {
			wake = sub.C
		}
		if timer == nil {
			timer = time.NewTimer(sleep)
		} else {
			timer.Reset(sleep)
		}
		select {
		case <-wake:
		case <-timer.C:
		case <-waitCtx.Done():
			return nil, l.waitEnded(ctx)
		case <-c.done:
			return nil, notObtained(l.name, ErrClosed)
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// waitEnded explains why a wait ended: the caller's context, the WithWait bound, or Close.
func (l *Lock) waitEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return notObtained(l.name, err)
	}
	if l.c.closed() {
		return notObtained(l.name, ErrClosed)
	}
	return notObtained(l.name, errors.New("wait bound passed while held by another owner"))
}

// runAcquire makes one acquisition attempt. A fresh attempt first sends a plain SET NX PX, which takes
// a free lock in one cheap command; when that finds the key, the acquire script decides (held by
// another, or a SET whose reply was lost and re-sent). An error means the outcome is unknown; it has
// already been undone (best effort) so that nothing is held.
func (l *Lock) runAcquire(ctx context.Context, owner, req string, leaseMs int64, reenter, starving bool) (ok bool, val int64, err error) {
	// Trailing script arguments are sent only when they differ from their defaults: every argument
	// costs the server a Lua string.
	args := []any{owner, leaseMs, req}
	switch {
	case reenter:
		args = append(args, "1")
	case starving:
		args = append(args, "0", "1")
	}
	if !reenter {
		set, err := l.c.rdb.SetNX(ctx, l.key, owner+"|1|"+req+"|", time.Duration(leaseMs)*time.Millisecond).Result()
		if err != nil && !isRedisReply(err) {
			l.undo(ctx, owner, req)
		}
		if err != nil {
			return false, 0, notObtained(l.name, redisErr("acquire", l.name, err))
		}
		if set {
			return true, 1, nil
		}
	}
	v, err := scripts.LockAcquire.Run(ctx, l.c.rdb, l.releaseKeys[:1], args...).Int64()
	if err != nil {
		if !isRedisReply(err) {
			l.undo(ctx, owner, req)
		}
		return false, 0, notObtained(l.name, redisErr("acquire", l.name, err))
	}
	if v >= 1 {
		return true, v, nil
	}
	return false, -3 - v, nil // the holder's PTTL, encoded as in lock_acquire.lua
}

// isRedisReply reports whether err is an error reply from the server (the script failed and changed
// nothing), as opposed to a network or context error after which the outcome is unknown.
func isRedisReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// undo reverts acquisition request req of owner if Redis applied it (req "": releases the owner's
// fresh hold outright), on a detached context.
func (l *Lock) undo(ctx context.Context, owner, req string) {
	ctx, cancel := detached(ctx)
	defer cancel()
	if _, err := l.runRelease(ctx, owner, 0, l.c.newID(), "", req, ""); err != nil { // rare: boxing is fine here
		l.c.cfg.logger.Warn("redisson: could not undo an acquisition with an unknown outcome; it expires with its lease",
			"lock", l.name, "err", err)
	}
}

// Results of the release script (see lock_release.lua).
const (
	releaseNotHeld     = -1 // the owner does not hold the lock
	releaseTransferred = -2 // released and transferred to the heir
)

// runRelease runs the release script as request req. expected, if not "", is what the owner believes
// the lock's value is when this is its final hold: if so, the script frees it without parsing. With
// undo != "" it releases only if acquisition request undo was the last one applied; with heir != "" a
// final release transfers the lock to that owner if no other process is waiting. It returns the hold
// count left (0: released), releaseNotHeld or releaseTransferred.
func (l *Lock) runRelease(ctx context.Context, owner, leaseMs any, req, expected, undo, heir string) (int64, error) {
	// Trailing arguments only when they differ from their defaults: every one costs a Lua string.
	args := []any{owner, leaseMs, req, expected, l.c.reserveArg}
	if l.c.publish != "PUBLISH" || undo != "" || heir != "" {
		args = append(args, l.c.publish, undo, heir)
	}
	v, err := scripts.LockRelease.Run(ctx, l.c.rdb, l.releaseKeys, args...).Int64()
	if err != nil {
		return 0, redisErr("release", l.name, err)
	}
	return v, nil
}

// heir is what a goroutine queued for the lock in this process wants; a releasing holder may transfer
// the lock to it in the same round trip as the release.
type heir struct {
	ctx   context.Context // parent of the ownership context
	owner string
	lease time.Duration // 0: watchdog (only watchdog holds are transferred)
	start time.Time
}

// handOver gives the lock, just transferred to w's owner in Redis, to the waiting goroutine w. If w
// gave up meanwhile, it releases the lock again and frees the turn.
func (l *Lock) handOver(w *gate.Waiter, want *heir, req string, sent time.Time) {
	nh := l.newHold(want.ctx, want.owner, req, 0, sent)
	if nh != nil && l.c.gates.HandTo(l.key, w, nh) {
		l.c.emit(Event{Kind: EventAcquired, Name: l.name, Wait: time.Since(want.start)})
		return
	}
	if nh != nil {
		l.c.sched.Remove(&nh.entry)
		nh.end(nil, false)
	}
	l.undo(want.ctx, want.owner, "")
	l.c.gates.Leave(l.key)
}

// newHold records a fresh acquisition and registers it with the scheduler before anyone can see it,
// so no unlock can come before the registration. It returns nil if the Client was closed.
func (l *Lock) newHold(parent context.Context, owner, req string, lease time.Duration, sent time.Time) *hold {
	c := l.c
	h := &hold{l: l, owner: owner, ownerArg: owner, count: 1, lastReq: req}
	h.Context, h.cancel = context.WithCancelCause(parent)
	h.entry = renew.Entry{Key: l.key, Owner: owner, Group: c.group(l.key), OnLost: h.lost}
	if lease > 0 {
		h.entry.Lease = lease
	} else {
		h.entry.Lease = c.cfg.watchdog
		h.entry.Watchdog = true
		h.leaseMs = c.cfg.watchdog.Milliseconds()
	}
	h.leaseArg = h.leaseMs
	if !c.sched.Add(&h.entry, sent) {
		return nil
	}
	return h
}

// reenter increments the hold count of an existing hold.
func (l *Lock) reenter(ctx context.Context, h *hold) (context.Context, error) {
	if err := h.err(); err != nil {
		return nil, notObtained(l.name, err)
	}
	req := l.c.newID()
	ok, count, err := l.runAcquire(ctx, h.owner, req, h.leaseMs, true, false)
	if err != nil {
		return nil, err
	}
	if ok {
		h.applied(count, req)
	} else {
		err := fmt.Errorf("%w: %q is no longer held by this owner", ErrLockLost, l.name)
		l.c.sched.Remove(&h.entry)
		h.lost(err)
		return nil, notObtained(l.name, err)
	}
	return ctx, nil
}

// Unlock releases one hold of the lock owned through ctx, which must be the ownership context
// returned by an acquisition (or derived from it). The final unlock deletes the lock, wakes one
// waiter, stops the watchdog and cancels the ownership context. It blocks for one round trip. ctx
// only identifies the owner: its cancellation and deadline are ignored, so a deferred Unlock works
// after a loss or a cancelled parent context; the go-redis client's read and write timeouts bound
// the call instead.
//
// If ctx carries no ownership of this lock, or the owner no longer holds it in Redis, Unlock returns an
// error matching ErrNotHeld (and ErrLockLost when the hold had been lost) and changes nothing. If Redis
// cannot be reached (after go-redis' own retries) the outcome is unknown: Unlock returns the error,
// stops renewing and ends the hold (its context is cancelled with ErrLockLost), so the lock is gone
// within its lease whether or not the release arrived.
func (l *Lock) Unlock(ctx context.Context) error {
	if l == nil || (l.c == nil && l.err == nil) {
		return invalidf("lock handle not created by Client.Lock")
	}
	if l.err != nil {
		return l.err
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	h := l.holdOf(ctx)
	if h == nil {
		return fmt.Errorf("%w: %q: context carries no ownership of this lock", ErrNotHeld, l.name)
	}
	if l.c.closed() {
		return ErrClosed
	}
	h.mu.Lock()
	if h.ended && h.endErr == nil {
		h.mu.Unlock()
		return fmt.Errorf("%w: %q was already unlocked by this owner", ErrNotHeld, l.name)
	}
	h.unlocking++
	// A watchdog hold that still has this process's turn may pass the lock to the next local waiter.
	var next *gate.Waiter
	var want *heir
	heirOwner := ""
	if !h.ended && h.entry.Watchdog {
		if next = l.c.gates.Head(l.key); next != nil {
			if w, _ := next.Data.(*heir); w != nil && w.lease == 0 {
				want, heirOwner = w, w.owner
			}
		}
	}
	expected := "" // the fast path, for a final release that transfers nothing
	if h.count == 1 && heirOwner == "" {
		expected = h.owner + "|1|" + h.lastReq + "|"
	}
	h.mu.Unlock()

	// ctx only names the owner: a release must not be cut short because the work's context ended.
	// The go-redis client's own read and write timeouts bound it.
	sent, req := time.Now(), l.c.newID()
	res, err := l.runRelease(context.WithoutCancel(ctx), h.ownerArg, h.leaseArg, req, expected, "", heirOwner)

	h.mu.Lock()
	h.unlocking--
	pending := h.pendingLoss
	if h.unlocking == 0 {
		h.pendingLoss = nil
	}
	h.mu.Unlock()
	switch {
	case err != nil:
		// Outcome unknown. Stop renewing so that, released or not, the lock is gone within its lease,
		// rather than renewed for an owner that meant to let it go.
		l.c.sched.Remove(&h.entry)
		if pending == nil {
			pending = fmt.Errorf("%w: %q: unlock failed, left to expire: %w", ErrLockLost, l.name, err)
		}
		h.lost(pending)
		return err
	case res == 0 || (res == releaseTransferred && want == nil):
		// (A repeat of a hand-over to a claiming waiter answers "transferred" too.)
		l.c.sched.Remove(&h.entry)
		if h.end(nil, true) {
			l.c.emit(Event{Kind: EventReleased, Name: l.name})
		}
		return nil
	case res == releaseTransferred:
		l.c.sched.Remove(&h.entry)
		h.end(nil, false) // the turn goes with the lock
		l.c.emit(Event{Kind: EventReleased, Name: l.name})
		l.handOver(next, want, req, sent)
		return nil
	case res > 0:
		h.applied(res, req)
		return nil
	}
	// releaseNotHeld: the owner no longer holds the lock in Redis.
	l.c.sched.Remove(&h.entry)
	lostErr := h.err()
	if lostErr == nil {
		lostErr = fmt.Errorf("%w: %q is no longer held by this owner", ErrLockLost, l.name)
		h.lost(lostErr)
	}
	return fmt.Errorf("%w: %q: %w", ErrNotHeld, l.name, lostErr)
}

// applied records a hold count and request id that Redis confirmed.
func (h *hold) applied(count int64, req string) {
	h.mu.Lock()
	h.count, h.lastReq = count, req
	h.mu.Unlock()
}

// Value makes the hold, used as the ownership context, carry itself under its lock's key.
func (h *hold) Value(key any) any {
	if key == h.l.ctxKey {
		return h
	}
	return h.Context.Value(key)
}

// lost ends the hold because it was lost. If an Unlock is in flight, its outcome decides instead: a
// renewal that finds the key gone may simply have run after the final unlock.
func (h *hold) lost(reason error) {
	if !errors.Is(reason, ErrLockLost) {
		reason = fmt.Errorf("%w: %q: %w", ErrLockLost, h.l.name, reason)
	}
	h.mu.Lock()
	if h.unlocking > 0 {
		h.pendingLoss = reason
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	if h.end(reason, true) {
		h.l.c.cfg.logger.Warn("redisson: lock lost", "lock", h.l.name, "err", reason)
		h.l.c.emit(Event{Kind: EventLost, Name: h.l.name, Err: reason})
	}
}

// end finishes the hold once: cancels the ownership context and, if leave, gives this process's turn
// to the next local waiter. reason is nil for an unlock. It reports whether this call ended it.
func (h *hold) end(reason error, leave bool) bool {
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		return false
	}
	h.ended, h.endErr = true, reason
	h.mu.Unlock()
	// Give up the turn first: whoever sees the context end may lock again at once.
	if leave {
		h.l.c.gates.Leave(h.l.key)
	}
	if reason == nil {
		h.cancel(context.Canceled)
	} else {
		h.cancel(reason)
	}
	return true
}

// err returns why the hold ended without an unlock, or nil.
func (h *hold) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended && h.endErr == nil {
		return fmt.Errorf("%w: %q was already unlocked", ErrNotHeld, h.l.name)
	}
	return h.endErr
}

// ForceUnlock deletes the lock whoever holds it and wakes one waiter; it reports whether there was a
// lock to delete. A holder in another process learns of it at its next renewal (ErrLockLost). It
// blocks for one round trip; on error nothing was deleted or the outcome is unknown.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := l.check(ctx); err != nil {
		return false, err
	}
	n, err := scripts.LockForceUnlock.Run(ctx, l.c.rdb, l.releaseKeys[:2], l.c.publish).Int64()
	if err != nil {
		return false, redisErr("force unlock", l.name, err)
	}
	return n == 1, nil
}

// IsLocked reports whether anyone holds the lock. It blocks for one round trip.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	if err := l.check(ctx); err != nil {
		return false, err
	}
	owner, _, err := l.read(ctx)
	return owner != "", err
}

// HoldCount returns how many times the owner carried by ctx holds the lock: 0 if ctx carries no
// ownership of it or the owner no longer holds it. It blocks for one round trip, which runs even if
// ctx is an ownership context already cancelled (by unlock or loss), bounded by 5s then.
func (l *Lock) HoldCount(ctx context.Context) (int, error) {
	if err := l.check(ctx); err != nil {
		return 0, err
	}
	ctx, cancel := ioContext(ctx)
	defer cancel()
	owner, count, err := l.read(ctx)
	if err != nil || owner == "" {
		return 0, err
	}
	if h := l.holdOf(ctx); h == nil || h.owner != owner {
		return 0, nil
	}
	return count, nil
}

// RemainingTTL returns how long the lock will live unless renewed: 0 if it is not held, -1 if it has
// no expiry (never set by this package). It blocks for one round trip.
func (l *Lock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	if err := l.check(ctx); err != nil {
		return 0, err
	}
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	_, err := l.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, l.key)
		pttl = p.PTTL(ctx, l.key)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, redisErr("remaining ttl", l.name, err)
	}
	if owner, _, err := l.parse(get.Val(), get.Err()); err != nil || owner == "" {
		return 0, err
	}
	return pttl.Val(), nil
}

// read returns the current holder of the lock ("" if none) and its hold count.
func (l *Lock) read(ctx context.Context) (owner string, count int, err error) {
	v, err := l.c.rdb.Get(ctx, l.key).Result()
	return l.parse(v, err)
}

// parse decodes the lock key's value "<owner>|<count>|<req>|<w>" (see lock_acquire.lua) as read
// with err; a missing key is a free lock, not an error.
func (l *Lock) parse(v string, err error) (owner string, count int, _ error) {
	if errors.Is(err, redis.Nil) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, redisErr("read", l.name, err)
	}
	f := strings.Split(v, "|")
	if len(f) == 4 && f[0] != "" {
		if count, err = strconv.Atoi(f[1]); err == nil {
			return f[0], count, nil
		}
	}
	return "", 0, fmt.Errorf("%w: %q holds a string that is not a lock", ErrWrongType, l.name)
}
