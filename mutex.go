package redisson

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/gate"
	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/internal/wait"
)

// The lock protocol: what every lock kind shares (Lock, FairLock, FencedLock, SpinLock, the two
// sides of a ReadWriteLock, and their Redisson-compatible kinds): acquisition (the local queue,
// the SET NX fast path, waiting, spinning, hand-over to a local heir), undo, release and force
// unlock; hold.go has the holds. How the lock is stored is its kind's layout (layout.go).

// mutex is one lock of one kind: its keys and channels (laid out by its layout), its local queue,
// and its Client; kind says what the kind does differently.
type mutex struct {
	c    *Client
	name string
	kind *lockKind
	key  string // lock key
	// keys are the keys of the kind's scripts: the lock key, and for a lock string its queue, queue
	// deadlines and fencing counter (lock_acquire.lua, lock_release.lua, lock_force_unlock.lua)
	keys        []string
	wakePrefix  string // waiters are woken on wakePrefix + client id
	wakeArg     any    // wakePrefix as a script argument, boxed once (stringLayout)
	wakeChannel string // this Client's
	gateName    string // this lock's local queue: kind and key
	ctxKey      any    // key under which ContextWithHold marks a context, boxed once
	otherKey    any    // a ReadWriteLock side: the other side's ctxKey (vouching writer, refused upgrade)
	err         error  // invalid name
}

// vouch is, for a ReadWriteLock's read side, the writer whose hold marks ctx (ContextWithHold): the
// writer may read too (see rw_acquire.lua); "" otherwise.
func (m *mutex) vouch(ctx context.Context) string {
	if w, _ := ctx.Value(m.otherKey).(*owner); w != nil && m.kind.side == "r" {
		return w.id
	}
	return ""
}

func (m *mutex) check(ctx context.Context) error {
	if m.c == nil && m.err == nil {
		return invalidf("lock handle not created by a Client")
	}
	if m.err != nil {
		return m.err
	}
	return m.c.checkCall(ctx)
}

func (m *mutex) acquire(ctx context.Context, opts []AcquireOption, wait bool) (*Hold, error) {
	start := time.Now()
	op := "lock"
	if !wait {
		op = "try lock"
	}
	if err := m.check(ctx); err != nil {
		return nil, opErr(op, m.name, ErrNotObtained, err)
	}
	ac, err := parseAcquire(opts)
	if err != nil {
		return nil, opErr(op, m.name, ErrNotObtained, err)
	}
	if o, _ := ctx.Value(m.ctxKey).(*owner); o != nil {
		return o.reenter(ctx)
	}
	if r, _ := ctx.Value(m.otherKey).(*owner); m.kind.side == "x" && r != nil && !r.done() {
		return nil, opErr(op, m.name, ErrNotObtained, errUpgrade)
	}
	var tries int
	h, err := m.obtain(ctx, op, ac, wait, start, &tries)
	if err != nil {
		m.c.emit(Event{Kind: EventNotObtained, Object: m.kind.object, Name: m.name, Ctx: ctx, Wait: time.Since(start),
			Attempts: tries, Err: err})
	}
	return h, err
}

// obtain is acquire's fresh acquisition (no re-entry) from start, counting the acquire scripts it runs
// in tries. It reports a success (EventAcquired, through the owner's eventGate, which holds back its
// end until then), and leaves a failure to acquire.
func (m *mutex) obtain(ctx context.Context, op string, ac acquireConfig, wait bool, start time.Time, tries *int) (*Hold, error) {
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
	if m.kind.fenced {
		// Tokens from a counter that may be evicted are worth nothing (see servers.go).
		fctx, cancel := m.c.boundedAttempt(ctx, waitCtx)
		policy, all := m.c.evictsAll(fctx, m.key)
		cancel()
		if all {
			return nil, opErr(op, m.name, ErrNotObtained, fmt.Errorf("%w: maxmemory-policy %s", ErrEvicting, policy))
		}
	}

	// Take this process's turn for the lock: only the head of the local queue contends in Redis. A
	// releasing holder may transfer the lock to the head waiter directly (see releaseFinal).
	id := m.c.newIDAt(start) // in compat mode "<UUID>:<decimal>": never a writer's "<owner>:write"
	if m.kind.local {
		if wait {
			want := &heir{ctx: ctx, owner: id, lease: ac.lease}
			o, handed, err := m.c.gates.Enter(waitCtx, m.gateName, want)
			if err != nil {
				return nil, opErr(op, m.name, ErrNotObtained, m.waitEnded(ctx, waitCtx, err, errHeldOrAwaited))
			}
			if handed {
				<-o.ready                            // registered (or ended) by handOver
				if err := o.endedErr(); err != nil { // handed over as the Client closed
					return nil, opErr(op, m.name, ErrNotObtained, err) // its end is not reported
				}
				o.ev.announce(m.c, Event{Kind: EventAcquired, Object: m.kind.object, Name: m.name, Ctx: ctx, Wait: time.Since(start),
					HandedOver: true})
				return &Hold{o: o, level: "1"}, nil
			}
		} else if !m.c.gates.TryEnter(m.gateName) {
			return nil, opErr(op, m.name, ErrNotObtained, errHeldOrAwaited)
		}
	}
	o, err := m.contend(ctx, waitCtx, id, ac.lease, ac.wait, wait, tries)
	if err != nil {
		m.leaveTurn()
		return nil, opErr(op, m.name, ErrNotObtained, err)
	}
	o.ev.announce(m.c, Event{Kind: EventAcquired, Object: m.kind.object, Name: m.name, Ctx: ctx, Wait: time.Since(start),
		Attempts: *tries, HandedOver: o.handed})
	return &Hold{o: o, level: "1"}, nil
}

// errBusy is why a single attempt failed, or a wait ended: the lock is another owner's;
// errHeldOrAwaited, why a single attempt did not even try: a goroutine of this Client holds or
// awaits the lock. Both match ErrBusy.
var (
	errBusy          = busyErr("held by another owner")
	errHeldOrAwaited = busyErr("held or awaited by another owner in this process")
)

// errWaitBound is why a wait ended at its WithWait bound.
var errWaitBound = errors.New("wait bound passed")

// errUpgrade is why a write acquisition by a reader fails at once instead of waiting for itself.
var errUpgrade = errors.New("a read hold cannot be upgraded to the write lock: release it first")

// parseAcquire applies opts.
func parseAcquire(opts []AcquireOption) (acquireConfig, error) {
	if len(opts) == 0 {
		return acquireConfig{}, nil // not moved to the heap for the options' calls, as ac is
	}
	var ac acquireConfig
	for _, o := range opts {
		if o == nil {
			return ac, invalidf("nil acquire option")
		}
		if err := o(&ac); err != nil {
			return ac, err
		}
	}
	return ac, nil
}

// identity is what makes two handles the same lock: the Client and the key (see NewMultiLock).
func (m *mutex) identity() any { return [2]any{m.c, m.key} }

// refused is why the lock's Client does not offer its kind (see lockKind.compat), or nil.
func (m *mutex) refused() error {
	if errors.Is(m.err, errors.ErrUnsupported) {
		return m.err
	}
	return nil
}

// client is the lock's Client (see group.acquire).
func (m *mutex) client() *Client { return m.c }

// watchdogLease is the lease of an acquisition without WithLease (see NewRedLock).
func (m *mutex) watchdogLease() time.Duration {
	if !m.c.valid() {
		return DefaultWatchdogTimeout
	}
	return m.c.cfg.watchdog
}

// contend acquires the lock for owner id: one attempt, or, if wait, attempts through the waiting
// engine (internal/wait) until one succeeds or the wait ends. A waiting attempt that fails queues the
// owner in the lock's wait queue in Redis; a release then hands the lock to it directly and wakes it,
// and its next attempt confirms. If the wait ends otherwise, the owner leaves the queue and releases
// what it may have been handed meanwhile.
//
// The first attempt is made whatever the WithWait bound (waitCtx), so that even a bound shorter
// than a round trip makes one attempt (see boundedAttempt); later waiting ends with waitCtx. What
// follows a wait that ended (the undo) goes on in the background after waitCtx (see Client.cleanup):
// the call returns within the bound, whatever Redis does.
//
// A waiting attempt whose grant is answered too late to vouch for its lease gives the lock back
// (see giveBack): the owner keeps its place at the head of the queue, so it is handed the lock again,
// unless its previous give-back kept it already (a lease too short for the round trip must not hold
// the queue for ever: the owner then queues again at the back). It tries again after a randomized
// pause that doubles with every give-back, from 1ms up to giveBackPauseMax.
//
// In Java Redisson's fair queue (layoutRedissonFair) a waiting attempt queues the owner with the
// threadWaitTime bound (the WithWait bound, else fairThreadWait); an attempt that finds the lock
// free but another waiter's turn tries again after a pause that doubles from 1ms up to
// giveBackPauseMax (Redisson's Java waiters retry at once).
func (m *mutex) contend(ctx, waitCtx context.Context, id string, lease, bound time.Duration, waiting bool, tries *int) (*owner, error) {
	c := m.c
	leaseMs := m.leaseMs(lease)
	mode := modeTry
	if waiting {
		mode = modeWait
	}
	threadWait := c.fairThreadWait()
	if bound > 0 {
		threadWait = bound
	}
	var o *owner
	queued := false
	enqueued := false           // a waiting attempt may have left the owner in a queue in Redis
	var turnPause time.Duration // the latest pause while it was another waiter's turn
	var place int64             // the owner's ticket in the queue, from its latest queued attempt (0: none)
	kept := false               // the latest give-back kept the owner's place
	var pause time.Duration     // the latest pause after a give-back
	resent := false             // an attempt was answered by a re-send: a copy may still land (see acquireRes)
	found := errBusy            // what the latest attempt that failed without an error found (see waitEnded)
	attempt := func(ctx context.Context, woken wait.Woken) (wait.Outcome, error) {
		found = errBusy
		if lease == 0 && woken.Message != "" && !c.acks.on() && m.kind.layout.queues() {
			if cand, err := m.takeHanded(ctx, id, woken, resent); err != nil || cand != nil {
				o = cand
				return wait.Outcome{Acquired: err == nil}, err
			}
		}
		sent := time.Now()
		// A free Lock is taken with one SET NX, unless the lock looks contended: then the script,
		// which queues the waiter, is all that can help.
		fast := m.kind.setNX && !queued && !c.recentlyContended(m.gateName, sent)
		*tries++
		res, err := m.runAcquire(ctx, acquireReq{owner: id, level: "1", mode: mode, leaseMs: leaseMs, fast: fast, sent: sent,
			waitMs: threadWait.Milliseconds()})
		n, token, ticket, ackErr := res.n, res.token, res.ticket, res.ackErr
		resent = resent || res.resent
		// A waiting attempt in Redisson's fair queue may have queued the owner, whatever its answer.
		enqueued = enqueued || waiting && m.kind.layout.enqueuesWaiters()
		if err != nil {
			if !noEffect(err) {
				m.undo(ctx, id, true) // the outcome is unknown
			}
			return wait.Outcome{}, redisErr(err)
		}
		if ackErr != nil {
			// Granted on the master only: a failover could grant it again. A copy of the request
			// may still be travelling (a WAIT that failed on the network): undo again later too.
			m.undo(ctx, id, true)
			return wait.Outcome{}, ackErr
		}
		if n < 1 {
			c.markContended(m.gateName, sent)
			queued = queued || waiting && m.kind.layout.queues()
			if ticket > 0 {
				place = ticket
			}
			if !waiting {
				if resent { // a copy still travelling may take the lock for this owner later
					m.undo(ctx, id, true)
				}
				return wait.Outcome{}, errBusy
			}
			if !m.kind.layout.queues() {
				// In no queue of this package: woken by the holder's release (any message on the
				// lock's channel, or the waiter's own in Redisson's fair queue), or, should it be
				// lost, when the holder's lease would end (the re-poll at the latest).
				if res.otherTurn {
					turnPause = min(max(2*turnPause, time.Millisecond), giveBackPauseMax)
					return wait.Outcome{Retry: turnPause}, nil
				}
				turnPause = 0
				return wait.Outcome{Retry: res.retry}, nil
			}
			// Woken when handed the lock (a ReadWriteLock: when a release frees a side; the
			// attempt registered the waiter).
			return wait.Outcome{Queued: true, Ticket: ticket, Retry: -1}, nil
		}
		cand := m.makeOwner(ctx, id, lease, token)
		cand.resent = resent
		switch err := m.register(cand, sent); {
		case err == nil:
			o = cand
			return wait.Outcome{Acquired: true}, nil
		case errors.Is(err, ErrClosed) || !waiting:
			// Closed meanwhile (nothing would renew or end the hold), or answered too late to vouch
			// for the lease: give the lock back.
			m.undo(ctx, id, resent)
			return wait.Outcome{}, err
		default: // answered too late: give the lock back, keeping the owner's place, and try again
			kept = !kept && m.kind.layout.queues()
			m.giveBack(ctx, id, place, kept)
			if kept {
				queued = true
			} else {
				place = 0
			}
			pause = min(max(2*pause, time.Millisecond), giveBackPauseMax)
			found = errTooLate
			return wait.Outcome{Queued: queued, Retry: pause/2 + rand.N(pause/2+1)}, nil
		}
	}
	if !waiting {
		if _, err := attempt(waitCtx, wait.Woken{}); err != nil {
			return nil, err
		}
		return o, nil
	}
	if m.kind.spins {
		return m.spin(ctx, waitCtx, id, lease, tries)
	}
	w := &wait.Waiter{Channel: m.wakeChannel, ID: id, Beat: renew.Entry{
		Kind: m.kind.waiter, Key: m.key, Owner: id, Group: c.group(m.key), Lease: c.cfg.waiterTimeout,
	}}
	if !m.kind.layout.waiter(m, w) {
		c.unqueued.Add(1)
		defer c.unqueued.Add(-1)
	}
	var failed error // the latest attempt's error: it ended the wait
	err := c.engine.Wait(waitCtx, w, func(_ context.Context, woken wait.Woken) (wait.Outcome, error) {
		actx, cancel := c.boundedAttempt(ctx, waitCtx) // the first is made whatever the bound
		defer cancel()
		out, err := attempt(actx, woken)
		failed = err
		return out, err
	})
	if err == nil {
		return o, nil
	}
	if queued || enqueued || resent {
		// Leave the queue and release what may have been handed over meanwhile; again later, for a
		// copy of a queued (or re-sent) attempt still travelling would queue the owner, or take the
		// lock for it, again.
		m.undo(waitCtx, id, true)
	}
	if errors.Is(err, wait.ErrClosed) {
		return nil, ErrClosed
	}
	if failed != nil {
		return nil, m.waitEnded(ctx, waitCtx, failed, nil)
	}
	return nil, m.waitEnded(ctx, waitCtx, err, found)
}

// spin acquires a SpinLock by polling, first for owner id: attempts that never queue, with growing
// pauses in between (see SpinLock), until one succeeds or the wait ends. An attempt whose grant is
// answered too late gives the lock back, and the attempts after it are made for a fresh owner id.
func (m *mutex) spin(ctx, waitCtx context.Context, id string, lease time.Duration, tries *int) (*owner, error) {
	c := m.c
	leaseMs := m.leaseMs(lease)
	pause := c.cfg.spinMin
	c.unqueued.Add(1)
	defer c.unqueued.Add(-1)
	resent := false // an attempt was answered by a re-send: a copy may still land (see acquireRes)
	for attempt := 0; ; attempt++ {
		found := errBusy // what the attempt found (see waitEnded)
		sent := time.Now()
		// The first attempt takes a free lock with one SET NX; later ones find it held: the script.
		// The first is made whatever the WithWait bound (see boundedAttempt); the wait ends with
		// waitCtx.
		actx, cancel := c.boundedAttempt(ctx, waitCtx)
		*tries++
		res, err := m.runAcquire(actx, acquireReq{owner: id, level: "1", mode: modeTry, leaseMs: leaseMs, fast: attempt == 0, sent: sent})
		cancel()
		n, token, ackErr := res.n, res.token, res.ackErr
		resent = resent || res.resent
		switch {
		case err != nil:
			if !noEffect(err) {
				m.undo(waitCtx, id, true) // the outcome is unknown
			}
			return nil, m.waitEnded(ctx, waitCtx, redisErr(err), nil)
		case ackErr != nil:
			m.undo(waitCtx, id, true)
			return nil, ackErr
		case n >= 1:
			o := m.makeOwner(ctx, id, lease, token)
			o.resent = resent
			err := m.register(o, sent)
			if err == nil {
				return o, nil
			}
			m.undo(waitCtx, id, resent)
			if errors.Is(err, ErrClosed) {
				return nil, err
			}
			// Answered too late to vouch for the lease: try again after the pause, as after a
			// failed attempt (a lease shorter than a round trip must not make it spin), as a new
			// owner. The given-back owner is finished: its undo may be repeated later (a copy of
			// its acquisition may still land, see undo), and would free a lock taken under its id.
			id, resent, found = c.newID(), false, errTooLate
		}
		t := time.NewTimer(pause + rand.N(pause/2+1))
		select {
		case <-waitCtx.Done():
			t.Stop()
			if resent {
				m.undo(waitCtx, id, true)
			}
			return nil, m.waitEnded(ctx, waitCtx, waitCtx.Err(), found)
		case <-c.done:
			t.Stop()
			if resent {
				m.undo(waitCtx, id, true)
			}
			return nil, ErrClosed
		case <-t.C:
		}
		pause = min(2*pause, c.cfg.spinMax)
	}
}

// takeHanded accepts a hand-over announced by a message naming the waiter (woken): the release has
// set the lock to the waiter's owner, reserved for the time the message gives, counted from when the
// release ran, which is after the waiter's attempt that returned the ticket the message carries ran.
// A watchdog waiter whose latest queued attempt returned that ticket can therefore take the lock
// without a round trip, counting the reservation from that attempt's send time (woken.Since); its
// first renewal, a third of the reservation in, sets the watchdog lease. It returns nil, nil when the
// message is not for the waiter's latest place in the queue (a late message: the waiter was served,
// then queued again) or too little of the reservation is left to rely on, and the attempt then
// confirms with the acquire script; ErrClosed after Close. resent: an earlier attempt of the waiter
// was answered by a re-send (see acquireRes), so the owner's end must be followed by undos.
func (m *mutex) takeHanded(ctx context.Context, id string, woken wait.Woken, resent bool) (*owner, error) {
	h, ok := parseHandOver(woken.Message)
	if !ok || h.owner != id || h.ticket != woken.Ticket || woken.Ticket == 0 || woken.Since.IsZero() ||
		m.kind.fenced != (h.token > 0) {
		return nil, nil
	}
	if time.Until(woken.Since.Add(h.reserve*2/3)) <= 0 {
		return nil, nil
	}
	o := m.makeOwner(ctx, id, 0, h.token)
	o.handed = true
	o.resent = resent // a copy of an earlier attempt may still land, even after the owner ends
	// Never more than the watchdog lease: a re-entry or partial unlock sets that lease from its own
	// send time, which must not end before the deadline the scheduler keeps.
	o.entry.First = min(h.reserve, m.c.cfg.watchdog)
	if err := m.register(o, woken.Since); err != nil {
		if errors.Is(err, ErrClosed) {
			m.undo(ctx, id, resent)
			return nil, err
		}
		return nil, nil
	}
	return o, nil
}

// handOverMsg is a decoded hand-over message: "<owner>|<ticket>|<reserve ms>[|<token>]" (see
// lock_hand_over in internal/scripts/lock_value.lua).
type handOverMsg struct {
	owner   string
	ticket  int64
	reserve time.Duration
	token   int64 // FencedLock; 0 otherwise
}

// parseHandOver is the one Go decoder of a hand-over message; ok is false if s is not one.
func parseHandOver(s string) (h handOverMsg, ok bool) {
	parts := strings.Split(s, "|")
	if len(parts) != 3 && len(parts) != 4 {
		return h, false
	}
	h.owner = parts[0]
	ticket, err1 := strconv.ParseInt(parts[1], 10, 64)
	reserve, err2 := strconv.ParseInt(parts[2], 10, 64)
	if h.owner == "" || err1 != nil || err2 != nil || ticket <= 0 || reserve <= 0 {
		return h, false
	}
	h.ticket, h.reserve = ticket, time.Duration(reserve)*time.Millisecond
	if len(parts) == 4 {
		token, err := strconv.ParseInt(parts[3], 10, 64)
		if err != nil || token <= 0 {
			return h, false
		}
		h.token = token
	}
	return h, true
}

// waitEnded explains why a wait on waitCtx (the WithWait bound on ctx, the caller's) ended with err:
// Close, the caller's context, the bound, or a failed attempt. found is what the latest attempt
// found: the lock another's (errBusy, errHeldOrAwaited: contention), or granted too late to rely
// on and given back (errTooLate); or nil if an attempt failed (err): cut short by the end of the
// wait, its outcome is unknown, and the error says so rather than blame another owner.
func (m *mutex) waitEnded(ctx, waitCtx context.Context, err, found error) error {
	return endedWait(m.c, ctx, waitCtx, err, found)
}

// endedWait is waitEnded for any kind of wait on c (see mutex.waitEnded; Semaphore.acquire).
func endedWait(c *Client, ctx, waitCtx context.Context, err, found error) error {
	cerr := ctx.Err()
	switch {
	case c.closed():
		return ErrClosed
	case cerr != nil && found != nil:
		return because(cerr, found)
	case cerr != nil && !errors.Is(err, cerr):
		return because(cerr, err)
	case cerr != nil:
		return err
	case waitCtx.Err() == nil:
		return err // an attempt failed on its own: a Redis error, say
	case found != nil:
		return because(errWaitBound, found)
	}
	return because(errWaitBound, renew.NoAnswer(err)) // an attempt was then in flight, unanswered
}

// boundedAttempt returns the context of an attempt of a wait on waitCtx, and its cancel: ctx, ended
// attemptGrace after the WithWait bound of waitCtx (if waitCtx has one of its own), so that even a
// bound shorter than a round trip makes an attempt, an attempt in flight at the bound can still
// answer (busy, or granted: see contend), and a server that does not answer keeps the call only a
// little past the bound.
func (c *Client) boundedAttempt(ctx, waitCtx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := waitCtx.Deadline()
	if waitCtx == ctx || !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, dl.Add(c.attemptGrace()))
}

// leaseMs is the script argument for an acquisition with lease (0: the watchdog's).
func (m *mutex) leaseMs(lease time.Duration) int64 {
	if lease > 0 {
		return lease.Milliseconds()
	}
	return m.c.cfg.watchdog.Milliseconds()
}

// Modes of lock_acquire.lua.
const (
	modeTry     = "f"
	modeWait    = "w"
	modeReenter = "r"
)

// runAcquire makes one attempt to add level for owner (mode: see lock_acquire.lua). With fast, it
// first sends a plain SET NX PX, which takes a free Lock in one cheap command; when that finds the
// key, the script decides (held by another, handed over, or a SET whose reply was lost and re-sent).
// It returns the owner's level count (≥ 1: acquired) or the script's negative answer, the fencing
// token (FencedLock), and the owner's ticket if the attempt queued it. On an error other than
// WRONGTYPE the outcome is unknown: the caller must undo. ackErr (replica-acknowledged mode) is set
// when the level was added but too few replicas acknowledged it: the caller must undo it and fail.
func (m *mutex) runAcquire(ctx context.Context, q acquireReq) (acquireRes, error) {
	return m.kind.layout.acquire(ctx, m, q)
}

// acquireReq is one attempt of runAcquire: add level for owner, in mode (see lock_acquire.lua),
// with a lease of leaseMs; fast sends a plain SET NX first; sent is when the attempt started.
type acquireReq struct {
	owner, level, mode string
	leaseMs            int64
	fast               bool
	sent               time.Time
	waitMs             int64 // Java Redisson's fair queue: the waiter's threadWaitTime
}

// acquireRes is what an attempt answered: the owner's level count (≥ 1: acquired) or the script's
// negative answer, the fencing token (FencedLock), the owner's ticket if the attempt queued it, and
// ackErr if the level was added but too few replicas acknowledged it (the caller must undo it).
type acquireRes struct {
	n, token, ticket int64
	// retry: not acquired (Java Redisson's format), the holder's remaining TTL, which bounds the
	// waiter's sleep (-1: unknown, no expiry)
	retry time.Duration
	// otherTurn: not acquired (Java Redisson's fair queue), the lock is free but another waiter
	// heads the queue
	otherTurn bool
	ackErr    error
	// resent: the reply answers a re-send after an unknown outcome (see send), so an earlier copy
	// may still be travelling and land later, even after the owner's release: whatever ends the
	// owner must be repeated later (undoLater).
	resent bool
}

// undo releases whatever owner id may hold (a lock applied by a request whose reply was lost, a lock
// handed over, a lease re-armed after a loss) and takes it out of the wait queue, as a clean-up:
// even if ctx has ended, without making the caller overstay it (see Client.cleanup). If a request of
// the owner may still be travelling (inFlight: its outcome is unknown, or a re-send of it may still
// land), what the undo finds proves nothing about what lands later: the undo is repeated in the
// background (see undoLater): owner id is then finished, and no acquisition may use it again (a
// repeat would free what it took).
func (m *mutex) undo(ctx context.Context, id string, inFlight bool) {
	m.c.cleanup(ctx, func(ctx context.Context) {
		if _, err := m.runUndo(ctx, id); err != nil {
			m.c.cleanupFailed("could not give back what an ended acquisition may hold; it expires with its lease", m.name, err)
		}
	})
	if inFlight {
		m.undoLater(id, false)
	}
}

// giveBack gives back the lock granted to waiting owner id by an attempt answered too late to vouch
// for its lease (see contend), as a clean-up (see Client.cleanup). With keep, the owner rejoins the queue at its
// place (place, its ticket; 0 if it took the lock without queueing: ahead of every waiter) before the
// lock is handed over, so it is handed back to the owner (lock_release.lua, rw_release.lua);
// otherwise it is undone as any acquisition.
func (m *mutex) giveBack(ctx context.Context, id string, place int64, keep bool) {
	if !keep {
		m.undo(ctx, id, false)
		return
	}
	m.c.cleanup(ctx, func(ctx context.Context) {
		_, _, err := m.release(ctx, releaseReq{owner: id, level: "1", final: true, leaseMs: m.c.cfg.watchdog.Milliseconds(),
			rejoin: strconv.FormatInt(place, 10), undo: true})
		if err != nil {
			m.c.cleanupFailed("could not give back a lock granted too late; it expires with its lease", m.name, err)
		}
	})
}

// giveBackPauseMax bounds the pause before an attempt that follows a give-back (see contend).
const giveBackPauseMax = 128 * time.Millisecond

// undoLater runs the undo of owner id in the background after 250ms, 1s and 4s (all three: freeing
// one copy of a request proves nothing about a re-sent copy still travelling), and first at once if
// now is set. A request delayed longer than that leaves the lock held until its lease ends.
func (m *mutex) undoLater(id string, now bool) {
	pauses := undoRechecks
	if now {
		pauses = append([]time.Duration{0}, pauses...)
	}
	m.c.repeat(pauses, func(ctx context.Context) bool {
		_, _ = m.runUndo(ctx, id)
		return false // every repeat: each copy of a request that lands later must be undone
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

// releaseReq is one run of the release script (lock_release.lua; rw_release.lua for a ReadWriteLock
// side): release level of owner, or with final the owner's whole hold whatever levels are left.
type releaseReq struct {
	owner, level string
	final        bool
	expected     string // for a final release naming no heir, the lock string: enables the fast path
	leaseMs      int64  // the lease a partial release sets (0 keeps the TTL); for a transfer, the heir's
	heir         string // a local waiter's owner id: transferred the lock if nobody queues
	rejoin       string // a give-back: the owner's ticket, so that it rejoins the queue at its place
	// undo: an undo or give-back, which waits for no replica.
	undo bool
	// repeat, if set, is told whether the answer is that of a re-send after an unknown outcome
	// (sendOpts.repeat): a final release's "not held" may then be the first copy's doing.
	repeat *bool
	// resentAt, if set, is told when the last copy was sent after an unknown outcome (zero: none).
	resentAt *time.Time
}

// release runs the release script for q and returns its answer (see the release* constants) and, in
// the replica-acknowledged mode, ackErr if too few replicas acknowledged it (see send): a transfer
// to the heir then must not be relied on.
func (m *mutex) release(ctx context.Context, q releaseReq) (res int64, ackErr, err error) {
	c := m.c
	script, keys, args, record := m.kind.layout.releaseCall(m, q)
	opts := sendOpts{resend: true, acked: !q.undo, repeat: q.repeat}
	if q.resentAt != nil {
		opts.onResend = func() { *q.resentAt = time.Now() }
	}
	cmd, ackErr := c.evalOpts(ctx, opts, script, keys, args...)
	n, err := cmd.Int64()
	if record != "" && err == nil {
		// Answered: no copy is re-sent any more. Deleted in the background, as Redisson does (it
		// expires with the waiter timeout otherwise).
		c.repeat([]time.Duration{0}, func(ctx context.Context) bool {
			_, _ = send(ctx, c, record, nil, func() *redis.IntCmd { return redis.NewIntCmd(ctx, "del", record) }, sendOpts{resend: true})
			return true
		})
	}
	return n, ackErr, err
}

// unlockLatchMs is how long a release's record (Redisson's unlock latch) lives: the waiter timeout,
// and never less than twice the longest a release goes on re-sending (cleanupTimeout), so that a
// re-send finds the record of a first copy that ran (see layout.recordsReleases).
func (c *Client) unlockLatchMs() int64 {
	return max(c.cfg.waiterTimeout, 2*cleanupTimeout).Milliseconds()
}

// runUndo releases whatever owner id holds and takes it out of the wait queue (see releaseReq.undo).
func (m *mutex) runUndo(ctx context.Context, id string) (int64, error) {
	n, _, err := m.release(ctx, releaseReq{owner: id, level: "1", final: true, leaseMs: m.c.cfg.watchdog.Milliseconds(), undo: true})
	return n, err
}

// heir is what a goroutine queued for the lock in this process wants; a releasing holder may transfer
// the lock to it in the same round trip as the release.
type heir struct {
	ctx   context.Context // gives the hold's context its values
	owner string
	lease time.Duration // 0: watchdog
}

// leaveTurn gives up this process's turn for the lock, if the kind has local turns.
func (m *mutex) leaveTurn() {
	if m.kind.local {
		m.c.gates.Leave(m.gateName)
	}
}

// lockGates are the local queues of the locks of a Client.
type lockGates = gate.Gates[*heir, *owner]

// nextHeir returns the goroutine of this process first in line for the lock, if any. Only a Lock
// transfers to it: a FairLock has no local queue, and a FencedLock's heir would need its new token.
func (m *mutex) nextHeir() (*gate.Waiter[*heir, *owner], *heir) {
	if !m.kind.heirs {
		return nil, nil
	}
	w := m.c.gates.Head(m.gateName)
	if w == nil {
		return nil, nil
	}
	return w, w.Data
}

// handOver gives the lock, just transferred in Redis to want's owner by a request sent at sent, to the
// waiting goroutine w, with the turn. If w gave up meanwhile, it releases
// the lock and frees the turn.
//
// The owner is registered with the scheduler only once it has the turn, so that nothing (a loss, a
// fixed lease ending at once) can end it, and give up the turn, before it has it; and the waiter
// uses it only once it is registered, so that no unlock can come before the registration.
//
// A transfer whose answer came too late to vouch for the heir's lease (a re-send long after the
// first run) is undone instead, and the heir contends as any waiter.
func (m *mutex) handOver(w *gate.Waiter[*heir, *owner], want *heir, sent time.Time) {
	o := m.makeOwner(want.ctx, want.owner, want.lease, 0)
	o.handed = true
	o.ready = make(chan struct{}) // the waiter uses the owner only once it is registered
	defer close(o.ready)
	late := !time.Now().Before(m.c.sched.Lapse(&o.entry, sent))
	if late || m.c.closed() || !m.c.gates.HandTo(m.gateName, w, o) {
		m.undo(want.ctx, want.owner, false)
		m.leaveTurn()
		return
	}
	if err := m.register(o, sent); err != nil {
		// Closed (or too late) since: the waiter finds its owner ended (see acquire).
		o.lost(err)
		m.undo(want.ctx, want.owner, false)
	}
	// The waiter reports the acquisition, once it has the owner (see acquire).
}

func (m *mutex) forceUnlock(ctx context.Context) (bool, error) { return m.forceUnlockSide(ctx, false) }

// forceUnlockSide deletes the lock whoever holds it, or, with bySide, a ReadWriteLock's holds only
// while m's side holds it (see ReadWriteLock.ForceReadUnlock).
func (m *mutex) forceUnlockSide(ctx context.Context, bySide bool) (bool, error) {
	if err := m.check(ctx); err != nil {
		return false, opErr("force unlock", m.name, err)
	}
	side := "" // the scripts' side argument: "" the whole lock
	if bySide {
		side = m.kind.side
	}
	// Not safe to run twice, and nothing in Redis records it: sent once after an unknown outcome (no
	// re-send after a lost reply), whose error is the caller's (see the scripts' headers).
	once := sendOpts{acked: true}
	script, args := m.kind.layout.forceUnlockCall(m, side)
	cmd, _ := m.c.evalOpts(ctx, once, script, m.keys, args...)
	n, err := cmd.Int64()
	if err != nil {
		return false, opErr("force unlock", m.name, redisErr(err))
	}
	return n == 1, nil
}

func (m *mutex) isLocked(ctx context.Context) (bool, error) {
	if err := m.check(ctx); err != nil {
		return false, opErr("is locked", m.name, err)
	}
	return m.kind.layout.isLocked(ctx, m)
}

func (m *mutex) remainingTTL(ctx context.Context) (time.Duration, error) {
	if err := m.check(ctx); err != nil {
		return 0, opErr("remaining ttl", m.name, err)
	}
	return m.kind.layout.remainingTTL(ctx, m)
}

// levelsOf returns how many levels owner holds according to Redis (0 if it no longer holds the lock).
func (m *mutex) levelsOf(ctx context.Context, owner string) (int, error) {
	return m.kind.layout.levelsOf(ctx, m, owner)
}
