package redisson

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/gate"
	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/internal/scripts"
)

// Lock is a reentrant distributed mutex, the equivalent of Redisson's RLock. Get one with
// Client.Lock; it is a name plus a client, does no I/O, and is safe to share between goroutines.
//
// Each successful acquisition creates a new owner and returns a *Hold that owns it: two acquisitions
// exclude each other even through the same handle, as with sync.Mutex, and only the Hold can release
// what it acquired. Re-entry is explicit: Hold.Reenter, or an acquisition with a context marked by
// ContextWithHold. The owner's levels are kept in Redis; the unlock of the last one releases the
// lock.
//
// Within a process, goroutines waiting for the same lock through one Client queue first come first
// served and only the head of the queue contends in Redis, so a goroutine that unlocks and at once
// locks again goes behind those already waiting; when a watchdog holder unlocks while another
// goroutine of its Client waits and no other process does, the release hands the lock to that
// goroutine in the same round trip. Between processes the lock is not FIFO: on each release the head
// waiter of every process races for it, and a waiter that has waited 10ms claims the lock so that the
// next release hands it over (see the package documentation).
type Lock struct {
	c           *Client
	name        string
	key         string   // lock key
	releaseKeys []string // lock key, wake-up channel, this Client's release history (lock_release.lua)
	ctxKey      any      // key under which ContextWithHold marks a context, boxed once
	err         error    // invalid name
}

// starvationThreshold is how long a waiter waits before it claims the lock (see contend).
const starvationThreshold = 10 * time.Millisecond

// markKey is the context key of ContextWithHold: one per Client and lock key.
type markKey struct {
	c   *Client
	key string
}

// Name returns the name the lock was created with ("" for a nil handle).
func (l *Lock) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Lock acquires the lock, blocking until it is acquired, ctx ends, the optional WithWait bound
// passes, or the Client is closed. Without WithLease the watchdog keeps the lock alive until the
// final Unlock; with WithLease(d) it expires after d. If ctx was marked with a Hold of this lock
// (ContextWithHold), Lock re-enters that owner at once instead, as Hold.Reenter does; options are
// then ignored.
//
// On success it returns the Hold of the new owner (see Hold). On failure nothing is held and the
// error matches ErrNotObtained; it also matches ctx.Err() if ctx ended the wait, ErrClosed if the
// Client was closed, ErrWrongType if the name holds another type of value, ErrInvalidArgument for bad
// input.
func (l *Lock) Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	return l.acquire(ctx, opts, true)
}

// TryLock makes one attempt to acquire the lock, or keeps trying for up to the WithWait duration, and
// otherwise behaves as Lock. It does not wait for goroutines of this process that are queued for the
// same lock when no wait is given: the lock is then reported as not obtained.
func (l *Lock) TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
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

func (l *Lock) acquire(ctx context.Context, opts []AcquireOption, wait bool) (*Hold, error) {
	start := time.Now()
	op := "lock"
	if !wait {
		op = "try lock"
	}
	if err := l.check(ctx); err != nil {
		return nil, opErr(op, l.Name(), ErrNotObtained, err)
	}
	var ac acquireConfig
	for _, o := range opts {
		if o == nil {
			return nil, opErr(op, l.name, ErrNotObtained, invalidf("nil acquire option"))
		}
		if err := o(&ac); err != nil {
			return nil, opErr(op, l.name, ErrNotObtained, err)
		}
	}
	if o, _ := ctx.Value(l.ctxKey).(*owner); o != nil {
		return o.reenter(ctx)
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
	// releasing holder may transfer the lock to the head waiter directly (see releaseFinal).
	id := l.c.newID()
	if wait {
		want := &heir{ctx: ctx, owner: id, lease: ac.lease, start: start}
		payload, err := l.c.gates.Enter(waitCtx, l.key, want)
		if err != nil {
			return nil, opErr(op, l.name, ErrNotObtained, l.waitEnded(ctx))
		}
		if o, ok := payload.(*owner); ok {
			<-o.ready                            // registered (or ended) by handOver
			if err := o.endedErr(); err != nil { // handed over as the Client closed
				return nil, opErr(op, l.name, ErrNotObtained, err)
			}
			return &Hold{o: o, level: "1"}, nil
		}
	} else if !l.c.gates.TryEnter(l.key) {
		return nil, opErr(op, l.name, ErrNotObtained, errors.New("held or awaited by another owner in this process"))
	}
	o, err := l.contend(ctx, waitCtx, id, ac.lease, wait, start)
	if err != nil {
		l.c.gates.Leave(l.key)
		return nil, opErr(op, l.name, ErrNotObtained, err)
	}
	l.c.emit(Event{Kind: EventAcquired, Name: l.name, Wait: time.Since(start)})
	return &Hold{o: o, level: "1"}, nil
}

// contend runs the acquire script until it succeeds or the wait ends, sleeping between attempts until
// a wake-up message, the holder's remaining TTL or the re-poll interval, whichever comes first.
//
// A waiter that has waited for starvationThreshold claims the lock (one claim at a time): the holder's
// final release then hands the lock to it instead of freeing it, so that goroutines of other
// processes that unlock and lock again cannot keep beating it. A claimer that gives up withdraws its
// claim (or releases what it was handed).
func (l *Lock) contend(ctx, waitCtx context.Context, id string, lease time.Duration, wait bool, start time.Time) (_ *owner, err error) {
	c := l.c
	leaseMs := l.leaseMs(lease)
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
			l.undo(ctx, id, false)
		}
	}()

	for {
		if c.closed() {
			return nil, ErrClosed
		}
		mode := modeFresh
		if wait && time.Since(start) >= starvationThreshold {
			mode, claimed = modeClaim, true
		}
		sent := time.Now()
		n, err := l.runAcquire(waitCtx, id, leaseMs, "1", mode)
		if err != nil {
			if !noEffect(err) {
				l.undo(ctx, id, true) // the outcome is unknown
			}
			if waitCtx.Err() != nil {
				return nil, l.waitEnded(ctx)
			}
			return nil, redisErr(err)
		}
		if n >= 1 {
			o := l.makeOwner(ctx, id, lease)
			err := l.register(o, sent)
			if err == nil {
				return o, nil
			}
			// Closed meanwhile (nothing would renew or end the hold), or answered too late to vouch
			// for the lease: give the lock back; in the second case, try again.
			l.undo(ctx, id, false)
			if errors.Is(err, ErrClosed) || !wait {
				return nil, err
			}
			continue
		}
		if !wait {
			return nil, errors.New("held by another owner")
		}

		// Sleep until a wake-up, the holder's TTL, or the re-poll interval.
		pttl := -3 - n
		sleep := c.cfg.repoll
		if pttl >= 0 && time.Duration(pttl)*time.Millisecond < sleep {
			sleep = time.Duration(pttl) * time.Millisecond
		}
		var wake <-chan struct{}
		if sub == nil {
			if sub, err = c.hub.Subscribe(waitCtx, l.releaseKeys[1]); err != nil {
				return nil, ErrClosed
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
			return nil, ErrClosed
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
		return err
	}
	if l.c.closed() {
		return ErrClosed
	}
	return errors.New("wait bound passed while held by another owner")
}

// leaseMs is the script argument for an acquisition with lease (0: the watchdog's).
func (l *Lock) leaseMs(lease time.Duration) int64 {
	if lease > 0 {
		return lease.Milliseconds()
	}
	return l.c.cfg.watchdog.Milliseconds()
}

// Modes of lock_acquire.lua.
const (
	modeFresh   = "f"
	modeClaim   = "s"
	modeReenter = "r"
)

// runAcquire makes one attempt to add level for owner (mode: see lock_acquire.lua). A fresh attempt
// first sends a plain SET NX PX, which takes a free lock in one cheap command; when that finds the
// key, the script decides (held by another, handed over, or a SET whose reply was lost and re-sent).
// It returns the owner's level count (≥ 1: acquired) or the script's negative answer. On an error
// other than a Redis reply the outcome is unknown: the caller must undo.
func (l *Lock) runAcquire(ctx context.Context, owner string, leaseMs int64, level, mode string) (int64, error) {
	if mode != modeReenter {
		set, err := l.c.rdb.SetNX(ctx, l.key, encodeLockValue(owner, level), time.Duration(leaseMs)*time.Millisecond).Result()
		if err != nil {
			return 0, err
		}
		if set {
			return 1, nil
		}
	}
	return scripts.LockAcquire.Run(ctx, l.c.rdb, l.releaseKeys[:1], owner, leaseMs, level, mode).Int64()
}

// noEffect reports whether err proves that the command changed nothing: a WRONGTYPE reply, by which
// the scripts refuse a key before any write. Any other error leaves the outcome unknown: besides
// network and context errors, go-redis returns the error reply of a re-send (READONLY, LOADING,
// TRYAGAIN, ...) when the first run, whose reply was lost, may have been applied.
func noEffect(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.Contains(err.Error(), "WRONGTYPE")
}

// undo releases whatever owner id may hold (a lock applied by a request whose reply was lost, a lock
// handed over, a claim, a lease re-armed after a loss), on a detached context. If a request of the
// owner may still be travelling (inFlight: its outcome is unknown, or go-redis may still re-send
// it), what the undo finds proves nothing about what lands later: the undo is repeated in the
// background (see undoLater).
func (l *Lock) undo(ctx context.Context, id string, inFlight bool) {
	ctx, cancel := detached(ctx)
	_, err := l.runUndo(ctx, id)
	cancel()
	if err != nil {
		l.c.cfg.logger.Warn("redisson: could not undo an acquisition with an unknown outcome; it expires with its lease",
			"lock", l.name, "err", err)
	}
	if inFlight {
		l.undoLater(id, false)
	}
}

// undoLater runs the undo of owner id in the background after 250ms, 1s and 4s (all three: freeing
// one copy of a request proves nothing about a re-sent copy still travelling), and first at once if
// now is set. A request delayed longer than that leaves the lock held until its lease ends.
func (l *Lock) undoLater(id string, now bool) {
	pauses := undoRechecks
	if now {
		pauses = append([]time.Duration{0}, pauses...)
	}
	l.c.background(func(stop <-chan struct{}) {
		for _, d := range pauses {
			t := time.NewTimer(d)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			_, _ = l.runUndo(ctx, id)
			cancel()
		}
	})
}

// undoRechecks are the pauses before each repeat of an undo (see undoLater).
var undoRechecks = []time.Duration{250 * time.Millisecond, 750 * time.Millisecond, 3 * time.Second}

// Results of the release script (see lock_release.lua).
const (
	releaseDone        = 0  // the owner's hold is released
	releasePartial     = 1  // the level is gone; the owner still holds the lock
	releaseNotHeld     = -1 // the owner does not hold the lock
	releaseTransferred = -2 // released and transferred to the heir
)

// runRelease runs the release script for level of owner (see lock_release.lua): final frees the lock
// whatever levels are left; expected enables the fast path; heir, if not "", is transferred the lock
// (with lease leaseArg) when the final release finds nobody else waiting.
func (l *Lock) runRelease(ctx context.Context, owner, level string, final bool, expected string, leaseMs int64, heir string) (int64, error) {
	return l.release(ctx, owner, level, final, expected, leaseMs, heir, l.c.historyArg)
}

// runUndo releases whatever owner id holds, writing no release history: an undo may run while
// another owner of this Client is releasing the lock, whose history entry it must not overwrite.
func (l *Lock) runUndo(ctx context.Context, id string) (int64, error) {
	return l.release(ctx, id, "1", true, "", l.c.cfg.watchdog.Milliseconds(), "", int64(0))
}

func (l *Lock) release(ctx context.Context, owner, level string, final bool, expected string, leaseMs int64, heir string, historyArg any) (int64, error) {
	f := "0"
	if final {
		f = "1"
	}
	c := l.c
	args := []any{owner, level, f, expected, leaseMs, historyArg, c.reserveArg, c.publish}
	if heir != "" {
		args = append(args, heir)
	}
	return scripts.LockRelease.Run(ctx, c.rdb, l.releaseKeys, args...).Int64()
}

// heir is what a goroutine queued for the lock in this process wants; a releasing holder may transfer
// the lock to it in the same round trip as the release.
type heir struct {
	ctx   context.Context // gives the hold's context its values
	owner string
	lease time.Duration // 0: watchdog
	start time.Time
}

// nextHeir returns the goroutine of this process first in line for the lock, if any.
func (l *Lock) nextHeir() (*gate.Waiter, *heir) {
	w := l.c.gates.Head(l.key)
	if w == nil {
		return nil, nil
	}
	want, _ := w.Data.(*heir)
	if want == nil {
		return nil, nil
	}
	return w, want
}

// handOver gives the lock, just transferred in Redis to want's owner by a request sent at sent, to the
// waiting goroutine w, with the turn. If w gave up meanwhile, it releases the lock and frees the turn.
//
// The owner is registered with the scheduler only once it has the turn, so that nothing (a loss, a
// fixed lease ending at once) can end it, and give up the turn, before it has it; and the waiter
// uses it only once it is registered, so that no unlock can come before the registration.
//
// A transfer whose answer came too late to vouch for the heir's lease (a re-send long after the
// first run) is undone instead, and the heir contends as any waiter.
func (l *Lock) handOver(w *gate.Waiter, want *heir, sent time.Time) {
	o := l.makeOwner(want.ctx, want.owner, want.lease)
	o.ready = make(chan struct{}) // the waiter uses the owner only once it is registered
	defer close(o.ready)
	late := !time.Now().Before(l.c.sched.Lapse(&o.entry, sent))
	if late || l.c.closed() || !l.c.gates.HandTo(l.key, w, o) {
		l.undo(want.ctx, want.owner, false)
		l.c.gates.Leave(l.key)
		return
	}
	if err := l.register(o, sent); err != nil {
		// Closed (or too late) since: the waiter finds its owner ended (see acquire).
		o.lost(err)
		l.undo(want.ctx, want.owner, false)
		return
	}
	l.c.emit(Event{Kind: EventAcquired, Name: l.name, Wait: time.Since(want.start)})
}

// ForceUnlock deletes the lock whoever holds it and wakes a waiter; it reports whether there was a
// lock to delete. The holder learns of it at its next renewal or operation (ErrLockLost). It blocks
// for one round trip; on error nothing was deleted or the outcome is unknown. A go-redis re-send of it
// answers as the first run did, without deleting a lock acquired since (the outcome is kept, under
// the request's own key, for the re-send window).
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := l.check(ctx); err != nil {
		return false, opErr("force unlock", l.Name(), err)
	}
	req := l.c.newID()
	keys := []string{l.key, l.releaseKeys[1], l.key + ":fu:" + req}
	n, err := scripts.LockForceUnlock.Run(ctx, l.c.rdb, keys, l.c.publish, req, l.c.historyArg).Int64()
	if err != nil {
		return false, opErr("force unlock", l.name, redisErr(err))
	}
	return n == 1, nil
}

// IsLocked reports whether anyone holds the lock. It blocks for one round trip.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	if err := l.check(ctx); err != nil {
		return false, opErr("is locked", l.Name(), err)
	}
	owner, _, err := l.read(ctx)
	return owner != "", err
}

// RemainingTTL returns how long the lock will live unless renewed: 0 if it is not held, -1 if it has
// no expiry (never set by this package). It blocks for one round trip.
func (l *Lock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	if err := l.check(ctx); err != nil {
		return 0, opErr("remaining ttl", l.Name(), err)
	}
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	_, err := l.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, l.key)
		pttl = p.PTTL(ctx, l.key)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, opErr("remaining ttl", l.name, redisErr(err))
	}
	if owner, _, err := l.decode(get.Val(), get.Err(), "remaining ttl"); err != nil || owner == "" {
		return 0, err
	}
	return pttl.Val(), nil
}

// read returns the current holder of the lock ("" if none) and its level count.
func (l *Lock) read(ctx context.Context) (owner string, levels int, err error) {
	v, err := l.c.rdb.Get(ctx, l.key).Result()
	return l.decode(v, err, "read")
}

// decode decodes the lock key's value as read with err; a missing key is a free lock, not an error.
func (l *Lock) decode(v string, err error, op string) (owner string, levels int, _ error) {
	if errors.Is(err, redis.Nil) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, opErr(op, l.name, redisErr(err))
	}
	owner, levels, ok := decodeLockValue(v)
	if !ok {
		return "", 0, opErr(op, l.name, ErrWrongType, errors.New("the key holds a string that is not a lock"))
	}
	return owner, levels, nil
}

// encodeLockValue is the lock string of owner holding the one level id: the format is defined, and
// decoded on the server, by internal/scripts/lock_value.lua.
func encodeLockValue(owner, level string) string { return owner + "|" + level + "|" }

// decodeLockValue is the one Go decoder of the lock string "<owner>|<levels>|<mark>" (see
// internal/scripts/lock_value.lua): the owner and its number of levels, or ok false if v is not a
// lock string.
func decodeLockValue(v string) (owner string, levels int, ok bool) {
	owner, rest, ok1 := strings.Cut(v, "|")
	ids, mark, ok2 := strings.Cut(rest, "|")
	if !ok1 || !ok2 || owner == "" || strings.ContainsAny(owner, ",@=;") || strings.Contains(mark, "|") {
		return "", 0, false
	}
	if mark != "" && mark != "w" {
		claimer, found := strings.CutSuffix(mark, "@")
		if !found || claimer == "" || strings.ContainsAny(claimer, "|,@=;") {
			return "", 0, false
		}
	}
	if ids == "" {
		return owner, 0, true
	}
	for _, id := range strings.Split(ids, ",") {
		if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
			return "", 0, false
		}
		levels++
	}
	return owner, levels, true
}
