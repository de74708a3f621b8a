package redisson

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goredisson/redisson/internal/renew"
)

// Hold is one level of a held lock: a successful acquisition (Lock.Lock, Lock.TryLock) or re-entry
// (Hold.Reenter) returns one, and its Unlock releases that level. The levels taken through one
// acquisition share an owner; the last one unlocked releases the lock.
//
//	h, err := mu.Lock(ctx)
//	if err != nil { ... }
//	defer h.Unlock(ctx)
//	work(h.Context()) // cancelled if the lock is lost
//
// A Hold is safe for concurrent use: the goroutines that share it act as its owner (as passing a held
// sync.Mutex does), and exactly one Unlock of it succeeds. A nil *Hold is invalid: its methods
// return ErrInvalidArgument.
type Hold struct {
	o        *owner      // a lock of this package: the owner of the level
	g        *groupLevel // or a MultiLock or RedLock: the parts' levels (multilock.go)
	level    string      // this level's id in Redis
	unlocked atomic.Bool
}

// owner is one owner's possession of a lock, from its fresh acquisition to its final release or loss,
// shared by the Holds of all its levels. Redis stores the owner id and its live level ids; the client
// counts the levels alive or being taken, so that the unlock that leaves none is the final release.
type owner struct {
	m       *mutex
	token   int64 // FencedLock: the fencing token of the acquisition
	id      string
	leaseMs int64 // set on re-entry and partial release: the watchdog lease, or 0 (fixed: keep the TTL)
	ctx     context.Context
	cancel  context.CancelCauseFunc
	entry   renew.Entry
	ready   chan struct{} // for an owner handed over to a waiting goroutine: closed once registered
	since   time.Time     // when the owner was made: the hold's start, for Event.Held
	handed  bool          // the lock was handed over to the owner by its releasing holder
	ev      eventGate     // orders its events: the acquisition first
	// resent: an acquisition of this owner was answered by a re-send, so a copy of it may land after
	// the final release and take the lock again: the release is followed by repeated undos.
	resent bool

	mu         sync.Mutex
	levels     int    // levels held or being taken
	seq        uint64 // last level id issued
	inflight   int    // re-entries and releases in flight
	finalizing bool   // the final release has begun: no new levels
	pending    error  // the key found gone while the final release was in flight (see lost)
	ended      bool
	endErr     error // why the owner ended without a release (matches ErrLockLost), or nil
}

// Unlock releases this level of the hold. The final unlock (the owner's last level) releases the
// lock: it deletes the key, or hands the lock straight to the next waiter, stops the watchdog and
// cancels the hold's context with cause context.Canceled. It blocks for one round trip (none when
// the hold already ended).
//
// Unlock always makes its attempt, and the release is carried out even if ctx ends (a release
// abandoned halfway would leave the lock held for a whole lease): Unlock waits for it while ctx lasts
// (and a few milliseconds longer); if ctx ends first, or has ended already and the release does not
// answer at once, Unlock returns an error matching ctx.Err() and the release goes on in the
// background (bounded by 5s; it ends the hold as its answer says). Only ctx's values are passed on.
//
// It returns nil if the level was released. It returns an error matching ErrNotHeld, changing
// nothing, if this Hold was already unlocked, or if the owner no longer holds the lock (then it also
// matches ErrLockLost). One exception changes something: a hold whose fixed lease (WithLease) passed
// its loss margin has ended (ErrLockLost), but Redis keeps the lock for the rest of the lease; Unlock
// then still releases it (only if this owner still holds it), waking or handing the lock to the
// waiters, and returns ErrNotHeld and ErrLockLost all the same. A final release whose reply was lost is sent again; if that copy finds the
// lock no longer the owner's, Unlock returns nil when the lease was in force as the first copy
// left and no loss was known: Redis keeps no record of releases, so a loss the Client could not
// see (another process's ForceUnlock, a failover that lost the key) is then reported as a release.
// (On a Client made WithRedissonCompat each release keeps a record, Redisson's unlock latch, which
// answers a re-sent copy: there, a copy re-sent while the lease was in force that finds the lock no
// longer the owner's reports the loss.) If Redis cannot be reached, the outcome is unknown: Unlock
// returns the error; a final unlock then stops renewing and ends the hold (its context is cancelled
// with ErrLockLost), so the lock is gone within its lease whether or not the release arrived.
func (h *Hold) Unlock(ctx context.Context) error {
	if err := h.check(ctx); err != nil {
		return opErr("unlock", h.Name(), err)
	}
	if !h.unlocked.CompareAndSwap(false, true) {
		return opErr("unlock", h.Name(), ErrNotHeld, errors.New("this hold was already unlocked"))
	}
	if h.g != nil {
		return h.g.unlock(ctx)
	}
	var err error
	if !h.o.m.c.cleanup(ctx, func(ctx context.Context) { err = h.o.release(ctx, h.level) }) {
		return opErr("unlock", h.Name(), ctx.Err(), errReleasing)
	}
	return err
}

// errReleasing is why an Unlock returned before its release answered: its context ended.
var errReleasing = errors.New("the release goes on in the background")

// Reenter takes one more level of the lock for the same owner, as locking a reentrant mutex again
// does, and returns it; each level must be unlocked. It does not wait: the owner holds the lock. It
// blocks for one round trip, which resets the watchdog lease (a fixed lease is not extended).
//
// On failure nothing more is held and the error matches ErrNotObtained: with ErrNotHeld if this Hold
// was unlocked or the owner released or lost the lock (and ErrLockLost if lost), or the Redis error.
func (h *Hold) Reenter(ctx context.Context) (*Hold, error) {
	if err := h.check(ctx); err != nil {
		return nil, opErr("reenter", h.Name(), ErrNotObtained, err)
	}
	if h.unlocked.Load() {
		return nil, opErr("reenter", h.Name(), ErrNotObtained, ErrNotHeld, errors.New("this hold was unlocked"))
	}
	if h.g != nil {
		return h.g.reenter(ctx)
	}
	return h.o.reenter(ctx)
}

// Context returns the hold's context, the one to do the protected work with. It is cancelled when
// the owner's final unlock succeeds (cause context.Canceled) or when the lock is lost (cause matching
// ErrLockLost: the watchdog found it gone or could not renew it before its lease may have lapsed, a
// fixed lease is about to run out, an unlock failed, or the Client was closed). It carries the
// values of the context given to the acquisition but not its cancellation: cancelling a wait never
// cancels work done under a lock.
//
// It does not carry the ownership: locking again with it (or a context derived from it) waits like
// any other acquisition. Re-enter with Reenter, or mark a context with ContextWithHold.
func (h *Hold) Context() context.Context {
	switch {
	case h == nil:
		return canceledContext
	case h.g != nil:
		return h.g.owner.ctx
	case h.o == nil:
		return canceledContext
	}
	return h.o.ctx
}

// Name returns the name of the held lock ("" for an invalid Hold).
func (h *Hold) Name() string {
	switch {
	case h == nil:
		return ""
	case h.g != nil:
		return h.g.owner.name
	case h.o == nil:
		return ""
	}
	return h.o.m.name
}

// Token returns the fencing token of a FencedLock's acquisition (the same for every level of one
// owner), or 0 for the other kinds of lock and for a MultiLock or RedLock (see Parts for the tokens
// of their parts). It does no I/O. See FencedLock.
func (h *Hold) Token() int64 {
	if h == nil || h.o == nil {
		return 0
	}
	return h.o.token
}

// Parts returns, for a MultiLock's or RedLock's hold, the holds of its parts, in the order of the
// locks given to NewMultiLock or NewRedLock, nil for a part a RedLock did not acquire; nil for any
// other hold. Use them to read the parts' tokens or contexts; unlock the group's hold, not the parts.
func (h *Hold) Parts() []*Hold {
	if h == nil || h.g == nil {
		return nil
	}
	return append([]*Hold(nil), h.g.parts...)
}

// HoldCount returns how many levels the owner holds according to Redis: the levels taken and not
// unlocked, or 0 if it no longer holds the lock. It blocks for one round trip; after Close it returns
// ErrClosed.
func (h *Hold) HoldCount(ctx context.Context) (int, error) {
	if err := h.check(ctx); err != nil {
		return 0, opErr("hold count", h.Name(), err)
	}
	if h.g != nil {
		return h.g.holdCount(ctx)
	}
	if h.o.m.c.closed() {
		return 0, opErr("hold count", h.Name(), ErrClosed)
	}
	return h.o.m.levelsOf(ctx, h.o.id)
}

func (h *Hold) check(ctx context.Context) error {
	if h == nil || (h.o == nil && h.g == nil) {
		return invalidf("nil or zero Hold")
	}
	return checkCtx(ctx)
}

// ContextWithHold returns a copy of ctx marked with h's ownership: acquiring h's lock with it (through
// the same Client) re-enters h's owner at once, as Hold.Reenter does, instead of waiting. This is for
// nested code that locks the same lock by name:
//
//	func transfer(ctx context.Context, mu *redisson.Lock) error {
//		h, err := mu.Lock(ctx) // re-enters if ctx is marked, else acquires
//		if err != nil { return err }
//		defer h.Unlock(ctx)
//		...
//	}
//
// The mark stands for h's owner, not for h itself: it re-enters as long as the owner holds the lock
// (any of its levels). Every context derived from the result carries the mark too: hand it only to
// code that acts as the owner. A nil h, or a MultiLock's or RedLock's (re-enter those with Reenter),
// returns ctx unchanged.
func ContextWithHold(ctx context.Context, h *Hold) context.Context {
	if h == nil || h.o == nil || ctx == nil {
		return ctx
	}
	return context.WithValue(ctx, h.o.m.ctxKey, h.o)
}

// canceledContext is what an invalid Hold returns as its context.
var canceledContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// errUnlockFailed is why a hold whose final unlock failed ended: the lock is left to expire.
var errUnlockFailed = errors.New("unlock failed, left to expire")

// errTooLate is why an acquisition is not reported: its answer came so late that the lease it took
// may already be about to lapse.
var errTooLate = errors.New("the acquisition's reply came too late to vouch for its lease")

// register registers o, acquired by a request sent at sent, with the scheduler before anyone can see
// it, so no unlock can come before the registration. It returns ErrClosed after Close, or errTooLate
// if the lease counted from sent may already be about to lapse (a reply delayed that long must not
// be reported as a held lock); either way the caller must undo the acquisition.
func (l *mutex) register(o *owner, sent time.Time) error {
	if !time.Now().Before(l.c.sched.Lapse(&o.entry, sent)) {
		return errTooLate
	}
	if !l.c.sched.Add(&o.entry, sent) {
		return ErrClosed
	}
	return nil
}

// makeOwner builds an owner, with its fencing token, without registering it.
func (l *mutex) makeOwner(parent context.Context, id string, lease time.Duration, token int64) *owner {
	c := l.c
	o := &owner{m: l, id: id, levels: 1, seq: 1, token: token, since: time.Now()}
	o.ctx, o.cancel = context.WithCancelCause(context.WithoutCancel(parent))
	o.entry = renew.Entry{Kind: l.kind.hold, Key: l.key, Owner: id, Group: c.group(l.key), OnLost: o.lost}
	o.entry.Keys = l.kind.layout.renewKeys(l)
	if lease > 0 {
		o.entry.Lease = lease
	} else {
		o.entry.Lease = c.cfg.watchdog
		o.entry.Watchdog = true
		o.leaseMs = c.cfg.watchdog.Milliseconds()
	}
	return o
}

// reenter adds a level for the owner.
func (o *owner) reenter(ctx context.Context) (*Hold, error) {
	l := o.m
	o.mu.Lock()
	if o.ended || o.finalizing {
		err := o.notHeldLocked()
		o.mu.Unlock()
		return nil, opErr("reenter", l.name, ErrNotObtained, err)
	}
	o.levels++
	o.inflight++
	o.seq++
	level := strconv.FormatUint(o.seq, 36)
	o.mu.Unlock()

	res, err := l.runAcquire(ctx, acquireReq{owner: o.id, level: level, mode: modeReenter, leaseMs: o.leaseMs})
	n, ackErr := res.n, res.ackErr
	if ackErr != nil {
		// Added on the master only: take the level back and fail, as if it had not been added.
		err = ackErr
		n = 0
	}
	if err != nil && !noEffect(err) {
		// The outcome is unknown: remove the level if it was added (keeping the TTL). If that fails
		// too, the level stays in Redis, and goes with the owner's final release, which frees the
		// lock whatever levels are left.
		l.c.cleanup(ctx, func(ctx context.Context) { _, _, _ = l.release(ctx, releaseReq{owner: o.id, level: level, undo: true}) })
	}

	o.mu.Lock()
	if lostErr := o.endErr; lostErr != nil {
		// Lost while the re-entry was in flight, which may have set the lease again: free the lock,
		// or it could stay for a whole lease with nobody to renew or release it.
		o.inflight--
		o.levels--
		o.mu.Unlock()
		l.undo(ctx, o.id, err != nil)
		return nil, opErr("reenter", l.name, ErrNotObtained, ErrNotHeld, lostErr)
	}
	if err == nil && n >= 1 {
		o.inflight--
		o.mu.Unlock()
		return &Hold{o: o, level: level}, nil
	}
	o.levels--
	if err == nil { // Redis says the owner holds nothing
		reason := because(ErrLockLost, errNoLongerHeld)
		o.inflight--
		after := o.endLocked(reason)
		o.mu.Unlock()
		after()
		return nil, opErr("reenter", l.name, ErrNotObtained, ErrNotHeld, reason)
	}
	if o.levels == 0 && !o.ended {
		// Every other level was unlocked while this re-entry was in flight, and those unlocks left
		// the final release to it.
		o.finalizing = true
		o.mu.Unlock()
		l.c.cleanup(ctx, func(ctx context.Context) { _ = o.releaseFinal(ctx, level) })
	} else {
		o.inflight--
		o.mu.Unlock()
	}
	return nil, opErr("reenter", l.name, ErrNotObtained, redisErr(err))
}

var errNoLongerHeld = errors.New("no longer held by this owner")

// release releases one level; ctx is a clean-up's (see Client.cleanup), not the caller's.
func (o *owner) release(ctx context.Context, level string) error {
	o.mu.Lock()
	if o.ended {
		err := o.notHeldLocked()
		// A fixed lease past its loss margin ended the owner, but Redis holds the lock for the rest
		// of the lease: free it for the waiters (owner-checked: it touches only this owner's hold).
		leftover := errors.Is(o.endErr, renew.ErrLeaseEnded)
		o.mu.Unlock()
		if leftover {
			if _, rerr := o.m.runUndo(ctx, o.id); rerr != nil {
				o.m.c.cleanupFailed("could not release a lock whose fixed lease passed its margin; it expires with its lease", o.m.name, rerr)
			}
		}
		return opErr("unlock", o.m.name, err)
	}
	o.levels--
	o.inflight++
	final := o.levels == 0
	if final {
		o.finalizing = true
	}
	o.mu.Unlock()
	if final {
		return o.releaseFinal(ctx, level)
	}

	l := o.m
	res, _, err := l.release(ctx, releaseReq{owner: o.id, level: level, leaseMs: o.leaseMs})
	o.mu.Lock()
	o.inflight--
	var ret error
	after := func() {}
	rearmed := false
	switch {
	case o.endErr != nil:
		// Lost while this release was in flight, which may have set the lease again: free the lock.
		rearmed = true
		if err != nil {
			ret = opErr("unlock", l.name, redisErr(err))
		}
	case err != nil:
		// Outcome unknown. The level may stay in Redis; the final release frees it anyway.
		ret = opErr("unlock", l.name, redisErr(err))
	case res == releaseNotHeld && (o.ended || o.finalizing):
		// The owner's final release ran first (and this Client may have released the lock again
		// since, replacing the record this release looked for): the level is gone. If the final
		// release has not answered yet, its answer tells whether the hold was lost.
	case res == releaseNotHeld:
		reason := o.notHeldReason()
		ret = opErr("unlock", l.name, ErrNotHeld, reason)
		after = o.endLocked(reason)
	}
	// releaseDone, releaseTransferred: the owner's final release overtook this one; the level is gone.
	o.mu.Unlock()
	after()
	if rearmed {
		l.undo(ctx, o.id, err != nil)
	}
	return ret
}

// notHeldReason explains a release's answer that the owner does not hold the lock: a loss reported
// meanwhile, or simply "no longer held".
func (o *owner) notHeldReason() error {
	if o.pending != nil {
		return o.pending
	}
	return because(ErrLockLost, errNoLongerHeld)
}

// releaseFinal releases the owner's hold; the caller has counted it in flight and set finalizing.
// ctx is a clean-up's (see Client.cleanup), not the caller's.
// If the next goroutine of this process waiting for the lock wants it, the release may transfer the
// lock to it in the same round trip.
func (o *owner) releaseFinal(ctx context.Context, level string) error {
	l := o.m
	next, want := l.nextHeir()
	heirID, expected := "", ""
	leaseMs := o.leaseMs
	if want != nil {
		heirID = want.owner
		leaseMs = l.leaseMs(want.lease)
	} else {
		expected = encodeLockValue(o.id, level, l.kind)
	}
	sent := time.Now()
	lapse, active := l.c.sched.Deadline(&o.entry)
	fresh := active && sent.Before(lapse) // the lease was in force when the first copy was sent
	var repeat bool
	var resentAt time.Time
	res, ackErr, err := l.release(ctx, releaseReq{owner: o.id, level: level, final: true, expected: expected, leaseMs: leaseMs,
		heir: heirID, repeat: &repeat, resentAt: &resentAt})
	// Java Redisson's formats record a release's answer for its re-sends: a re-send sent while the
	// lease was in force that finds neither the record nor the owner proves that the first copy had
	// not run and the owner had lost the lock meanwhile (a Java forceUnlock, say).
	recorded := l.kind.layout.recordsReleases() && active && resentAt.Before(lapse)

	o.mu.Lock()
	o.inflight--
	var after func()
	var ret error
	transferred := false
	switch {
	case err != nil:
		// Outcome unknown: stop renewing, so that released or not the lock is gone within its lease,
		// rather than renewed for an owner that meant to let it go.
		ret = opErr("unlock", l.name, redisErr(err))
		after = o.endLocked(because(ErrLockLost, errUnlockFailed, err))
	case res == releaseTransferred:
		transferred = want != nil
		after = o.endLocked(nil)
	case res == releaseDone:
		after = o.endLocked(nil)
	case repeat && fresh && o.endErr == nil && o.pending == nil && !recorded:
		// "Not held", answering a re-send after an unknown outcome (Redis keeps no record of
		// releases): the first copy released the lock, or the lock was gone already. Reported as
		// released: the caller's critical section ended before the first copy was sent, and at
		// that moment the lease was still in force (fresh) and nothing had told the client of a
		// loss (no renewal found the key gone, no loss signalled since): the work was protected
		// for as long as it ran, whichever copy, or expiry, removed the lock afterwards. (A loss
		// the client could not see before the first copy was sent, such as a ForceUnlock by
		// another process or a failover that lost the key, is then reported as a release: without
		// a record, the repeat cannot tell it from the first copy's doing. Java Redisson's formats
		// keep one, the unlock latch, which answers a repeat of a first copy that ran: there, a
		// repeat's "not held" is the owner's loss, as a first run's, unless the repeat was sent
		// when the lease may have lapsed.)
		after = o.endLocked(nil)
	default: // releaseNotHeld
		reason := o.notHeldReason()
		ret = opErr("unlock", l.name, ErrNotHeld, reason)
		after = o.endLocked(reason)
	}
	o.mu.Unlock()
	after()
	// The final release decides what becomes of this process's turn for the lock, even if a loss
	// ended the owner while it was in flight: it goes with the lock to the heir, or to the next waiter.
	switch {
	case transferred && ackErr != nil:
		// Transferred on the master only (replica-acknowledged mode): take it back; the heir, first
		// in line, contends for the lock as any waiter.
		l.undo(want.ctx, want.owner, false)
		l.leaveTurn()
	case transferred:
		l.handOver(next, want, sent)
	default:
		l.leaveTurn()
	}
	return ret
}

// lost ends the owner because the lock was lost or its lease may be about to lapse: at once, even
// with operations in flight, since the holder must stop before another owner can exist. The one
// exception: a renewal that finds the key gone while the final release is in flight has most likely
// run after that release, whose answer then decides.
func (o *owner) lost(reason error) {
	if !errors.Is(reason, ErrLockLost) {
		reason = because(ErrLockLost, reason)
	}
	o.mu.Lock()
	if o.finalizing && errors.Is(reason, renew.ErrGone) {
		if trackerVerdict(reason) {
			// The final release changes the key itself: what the tracker saw is most likely this
			// release's own doing, and the release's answer decides.
			o.mu.Unlock()
			return
		}
		if o.pending == nil {
			o.pending = reason
		}
		o.mu.Unlock()
		return
	}
	after := o.endLocked(reason)
	o.mu.Unlock()
	after()
	if errors.Is(reason, renew.ErrLapsing) {
		// The renewals failed, but the key may still be there, and a renewal still travelling may
		// set a whole new lease when it lands: free the lock (in the background: this runs on the
		// scheduler), so that nobody waits for a lease its holder was told it lost.
		o.m.undoLater(o.id, true)
	}
}

// endLocked ends the owner once: reason is nil for a release, else why it was lost. Call it with o.mu
// held and run the result after unlocking: it stops the renewal, gives up this process's turn for the
// lock (unless the final release is in flight: then its outcome decides where the turn goes), cancels
// the hold's context and reports the event. Ending twice does nothing.
func (o *owner) endLocked(reason error) func() {
	if o.ended {
		return func() {}
	}
	o.ended, o.endErr = true, reason
	leave := !o.finalizing
	return func() {
		l := o.m
		l.c.sched.Remove(&o.entry)
		if o.resent {
			// A copy of the acquisition still travelling would take the lock again for this
			// owner, which nobody would renew or release: undo it if it lands within the undos.
			l.undoLater(o.id, false)
		}
		// Give up the turn first: whoever sees the context end may lock again at once.
		if leave {
			l.leaveTurn()
		}
		if reason == nil {
			o.cancel(context.Canceled)
			o.ev.end(l.c, Event{Kind: EventReleased, Object: l.kind.object, Name: l.name, Ctx: o.ctx, Held: time.Since(o.since)})
			return
		}
		l.c.lostHolds.Add(1) // before the cancellation: whoever sees the context end sees it counted
		o.cancel(reason)
		l.c.cfg.logger.Warn("redisson: lock lost", "lock", l.name, "err", reason)
		o.ev.end(l.c, Event{Kind: EventLost, Object: l.kind.object, Name: l.name, Ctx: o.ctx, Held: time.Since(o.since), Err: reason})
	}
}

// done reports whether the owner has ended (released or lost).
func (o *owner) done() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ended
}

// endedErr returns why the owner ended without a release, or nil.
func (o *owner) endedErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.endErr
}

// notHeldLocked explains why the owner can take no new level: released, lost, or releasing.
func (o *owner) notHeldLocked() error {
	switch {
	case o.endErr != nil:
		return because(ErrNotHeld, o.endErr)
	case o.ended:
		return because(ErrNotHeld, errors.New("already released"))
	}
	return because(ErrNotHeld, errors.New("being released"))
}
