package redisson

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/wait"
)

// Semaphore is a distributed counting semaphore, Redisson's RSemaphore, shaped like
// golang.org/x/sync/semaphore.Weighted across processes: permits are counted in Redis and owned by
// nobody, so any process may release what another acquired. Get one with Client.Semaphore; it is a
// name plus a client, does no I/O, and is safe to share between goroutines.
//
// The permits start unset, which counts as 0: set them once with TrySetPermits (only if unset, so
// every process may call it at start), or change them with AddPermits and Release.
//
// Waiting: acquisitions are served first come, first served, with reservations, as x/sync's are: an
// acquisition of n succeeds when the permits left after what every earlier waiter wants are at least
// n, so a large request is never passed by smaller ones. Waiters register in Redis and are kept alive
// by heartbeats (one whose process died stops holding up the others after the waiter timeout,
// WithWaiterTimeout). A release (or AddPermits, TrySetPermits) wakes, in order, just the waiters
// whose wants fit in what is then available, each on its own Client's channel; waiters also re-poll
// (WithRepollInterval), so a lost message delays a waiter by at most the re-poll interval, and a
// heartbeat that finds a waiter's wants fit wakes it at once.
//
// In the Redisson-compatible mode (WithRedissonCompat) the permits are shared with Java Redisson's
// RSemaphore under the same name: every change that makes permits available publishes the count on
// Redisson's channel "redisson_sc:{name}", as a Java release does, and waiters of both languages
// wait on that channel. Java's waiters queue nowhere, so neither do this package's in that mode: the
// order is not first come, first served (as in Redisson, a large request can be passed by smaller
// ones), and a lost message costs a waiter the re-poll interval.
//
// A wait that ends (its context, the WithWait bound, Close) leaves the semaphore as it was: permits an
// attempt took as the wait ended are given back. No change is applied twice: a request whose
// outcome the state cannot tell (the permits are a counter) has an id, and its outcome is kept in
// Redis for the waiter timeout (WithWaiterTimeout), and at least 10 seconds, or twice the go-redis
// ReadTimeout if longer, as its re-sent copies and an acquisition's undo need; a copy re-sent
// after a lost reply is answered from
// that record, or, finding none (the first copy never ran, is still travelling, or ran longer ago
// than the record lives), applies nothing, and the call returns an error matching
// ErrOutcomeUnknown (an acquisition is then undone). Leased permits answer for their acquisition by
// their ids.
//
// A copy that lands late takes nothing: an acquisition that failed or was undone leaves a record
// that makes every copy of it landing later take nothing, and one that succeeded a record that
// makes such a copy answer for it; kept for the waiter timeout, or, once a copy may still be
// travelling (an outcome was unknown, or a request was re-sent after a lost reply), for 20 minutes,
// longer than Linux retransmits a TCP connection's data by default. An undo that cannot reach Redis
// is retried in the background until Redis answers, the 20 minutes pass, or the Client is closed.
// What remains: a copy that reaches Redis later than that (held by a proxy, say), or after an undo
// that never ran (the Client closed, or the process died, before it reached Redis), takes permits
// for nobody; plain permits have no lease and stay taken, as a crashed holder's do (leased permits
// come back when their lease ends). An undo of plain permits that reaches Redis more than 10 seconds
// (or the waiter timeout, or twice the go-redis ReadTimeout, if longer) after the copy that took them
// ran (Redis unreachable from this Client for about that long, but not from the copy; or, with no
// ReadTimeout, a lost reply waited for until the call's context ended) finds no record of them and
// gives nothing back; it is logged.
//
// In the replica-acknowledged mode (WithReplicaAcks) every change waits for the replicas; an
// acquisition they did not acknowledge is given back and fails (ErrNotObtained, ErrNotReplicated); a
// release, AddPermits, DrainPermits or TrySetPermits they did not acknowledge happened on the master
// and is reported with ErrNotReplicated (a failover now could lose it, and with it the permits).
type Semaphore struct {
	c           *Client
	name, key   string
	waiters     string              // the waiters hash (sem_value.lua)
	leases      string              // the leased permits (sem_value.lua)
	aux         func(string) string // auxiliary names (keys.go)
	wakePrefix  string
	wakeChannel string // this Client's
	// redisson is Java Redisson's channel of the semaphore in the Redisson-compatible mode
	// (WithRedissonCompat), "" otherwise: changes announce the permits there, and waiters wait on it
	// and register in no queue.
	redisson string
	// perm is the layout of the leased permits (PermitExpirableSemaphore): this package's, or Java
	// Redisson's in the Redisson-compatible mode (permitsemaphore.go).
	perm *permitLayout
	err  error
}

// Semaphore returns the semaphore called name (Redisson's RSemaphore). It does no I/O; the handle is
// cheap and safe to share. A bad name is reported by the first call on the handle
// (ErrInvalidArgument). The name is a STRING of permits: using it as another kind of object fails
// with ErrWrongType.
func (c *Client) Semaphore(name string) *Semaphore {
	s := &Semaphore{c: c, name: name}
	if s.err = c.checkValid(); s.err != nil {
		return s
	}
	s.key, s.aux, s.err = objectKeys(c.cfg.prefix, name)
	if s.err != nil {
		return s
	}
	s.waiters, s.leases = s.aux(sfxWaiters), s.aux(sfxLeases)
	s.wakePrefix = s.aux(sfxWake)
	s.wakeChannel = s.wakePrefix + c.id
	s.perm = &nativePermits
	if c.cfg.compat {
		s.redisson = redissonPrefixed("redisson_sc", s.key)
		s.wakeChannel = s.redisson
		s.perm = &redissonPermits
		s.leases = redissonSuffixed(s.key, "timeout")
	}
	return s
}

// Name returns the name the semaphore was created with ("" for a nil handle).
func (s *Semaphore) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

func (s *Semaphore) check(ctx context.Context) error {
	switch {
	case s == nil:
		return invalidf("nil semaphore handle")
	case s.c == nil && s.err == nil:
		return invalidf("semaphore handle not created by a Client")
	case s.err != nil:
		return s.err
	}
	return s.c.checkCall(ctx)
}

// Acquire takes n permits (n ≥ 0), waiting until they are available, ctx ends, the optional
// WithWait bound passes, or the Client is closed. It blocks, at most until the earlier of ctx's
// deadline and the bound (plus its grace: see WithWait) whatever Redis does. On failure nothing was
// taken, and the error matches ErrNotObtained, with ErrBusy (too few permits until the wait ended),
// ctx's error, ErrClosed, ErrInvalidArgument (n < 0, WithLease: permits have no lease),
// ErrWrongType, ErrNotReplicated or the Redis error. Acquiring 0 permits
// succeeds at once, sending nothing to Redis (as Redisson's acquire(0); unlike x/sync's, it does not
// wait behind the waiters): it fails only for bad input, a closed Client or a ctx already done.
func (s *Semaphore) Acquire(ctx context.Context, n int64, opts ...AcquireOption) error {
	_, err := s.acquire(ctx, "acquire", n, opts, true, false)
	return err
}

// TryAcquire takes n permits (n ≥ 0) if they are available now, or, with WithWait, within that
// bound; it reports whether it took them. It blocks for one round trip, or up to the bound. Errors
// are those of Acquire; not getting the permits in time because they were taken is (false, nil),
// but a bound that passed while an attempt was unanswered (Redis paused or unreachable) is an error
// ("no answer from Redis in time"): false, nil always means contention. TryAcquire of 0 permits
// reports true at once, sending nothing to Redis (see Acquire).
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, opts ...AcquireOption) (bool, error) {
	a, err := s.acquire(ctx, "try acquire", n, opts, false, false)
	return a != nil, err
}

// maxPermits bounds every count of permits: the scripts' numbers hold integers exactly up to it.
const maxPermits = 1<<53 - 1

// maxLeased bounds the leased permits of one acquisition, and the permit ids of one call: a script
// passes each to one command (Lua's unpack holds a few thousand values).
const maxLeased = 1000

// errNotNow ends a single attempt that found too few permits (it matches ErrBusy).
var errNotNow = busyErr("too few permits")

// acquire takes n permits: one attempt, or, if waiting (or WithWait), attempts through the waiting
// engine. It returns what it took, or nil when it took nothing: with nil when a single attempt or the
// WithWait bound found too few permits (Acquire makes that an error), else the error. With leased
// (PermitExpirableSemaphore), each permit is leased (WithLease, else the watchdog's lease, renewed
// while the Client lives), its id is made by the layout (s.perm), and it is registered with the
// scheduler before it is reported. n = 0 takes nothing, at once, without I/O.
func (s *Semaphore) acquire(ctx context.Context, op string, n int64, opts []AcquireOption, waiting, leased bool) (a *acquired, err error) {
	start := time.Now()
	if err := s.check(ctx); err != nil {
		return nil, opErr(op, s.Name(), ErrNotObtained, err)
	}
	ac, err := parseAcquire(opts)
	switch {
	case err != nil:
		return nil, opErr(op, s.name, ErrNotObtained, err)
	case n < 0 || n > maxPermits:
		return nil, opErr(op, s.name, ErrNotObtained, invalidf("%d permits: must be in [0, 2^53-1]", n))
	case ac.lease != 0 && !leased:
		return nil, opErr(op, s.name, ErrNotObtained, invalidf("semaphore permits have no lease (WithLease)"))
	case leased && n > maxLeased:
		return nil, opErr(op, s.name, ErrNotObtained, invalidf("%d leased permits at once: at most %d", n, maxLeased))
	case n == 0:
		if err := ctx.Err(); err != nil {
			return nil, opErr(op, s.name, ErrNotObtained, err)
		}
		a := &acquired{}
		if leased {
			a.set = s.newPermitSet(ctx, 0)
		}
		s.report(ctx, leased, 0, start, 0, false, a, nil) // an acquisition all the same
		return a, nil
	}
	bounded := ac.waitSet && ac.wait > 0
	tries := 0
	defer func() { s.report(ctx, leased, n, start, tries, bounded, a, err) }()
	waitCtx := ctx
	if ac.waitSet {
		waiting = bounded
		if waiting {
			var cancel context.CancelFunc
			waitCtx, cancel = context.WithTimeout(ctx, ac.wait)
			defer cancel()
		}
	}
	c := s.c
	id := c.newID()
	keys := []string{s.key, s.waiters, s.aux(sfxRequest + id), s.leases}
	mode := "f"
	switch {
	case waiting && s.redisson != "":
		mode = "c"
	case waiting:
		mode = "w"
	}
	var leaseMs int64
	var fixed time.Duration // a fixed lease, as Redis has it
	var pids []string       // the permit ids, as stored
	if leased {
		pids = s.perm.newIDs(id, n)
		leaseMs = c.cfg.watchdog.Milliseconds()
		if ac.lease > 0 {
			leaseMs = ac.lease.Milliseconds()
			fixed = time.Duration(leaseMs) * time.Millisecond
		}
	}
	reached := false // an attempt may have reached Redis: its registration or permits need an undo
	var at time.Time // when the attempt that took the permits was sent
	var left int64   // leased permits: ms left of their lease when the attempt's answer was made
	unknown := false // the latest attempt's outcome is unknown (no reply, or ErrOutcomeUnknown)
	attempt := func(_ context.Context, _ wait.Woken) (wait.Outcome, error) {
		// The first attempt is made whatever the WithWait bound (see boundedAttempt).
		ctx, cancel := c.boundedAttempt(ctx, waitCtx)
		defer cancel()
		tries++
		at = time.Now()
		args := []any{id, n, mode, c.waiterArg, lateCopyMs, leaseMs, c.publish, s.wakePrefix, resentArg{}, s.redisson, c.takenArg}
		for _, p := range pids {
			args = append(args, p)
		}
		cmd, ackErr := c.evalRecorded(ctx, scripts.SemAcquire, keys, args...)
		r, err := cmd.Int64Slice()
		// Judged per attempt: the last one may never have been sent (its context ended first)
		// while an earlier one registered the waiter, or, its reply lost, took the permits.
		reached = reached || !noEffect(err)
		if err == nil && len(r) != 3 {
			err = errors.New("redisson: unexpected reply to a semaphore acquisition")
		}
		unknown = err != nil && !isReply(err) && !noEffect(err)
		switch {
		case err != nil:
			return wait.Outcome{}, redisErr(err)
		case r[0] == 1 && ackErr != nil:
			return wait.Outcome{}, ackErr
		case r[0] == 1:
			left = r[2]
			return wait.Outcome{Acquired: true}, nil
		case r[0] < 0 && !waiting:
			// A re-sent copy of this single attempt, after its first run found too few permits.
			return wait.Outcome{}, errNotNow
		case r[0] < 0:
			return wait.Outcome{}, errors.New("redisson: the acquisition was undone")
		case r[1] > 0 || mode == "c":
			// Queued (in the Redisson-compatible mode, waiting in no queue); a leased permit coming
			// back wakes nobody: try again when the first lease ends.
			return wait.Outcome{Queued: r[1] > 0, Ticket: r[1], Retry: time.Duration(r[2]) * time.Millisecond}, nil
		}
		return wait.Outcome{}, errNotNow
	}
	var busy error // the latest attempt found too few permits (errNotNow); nil: it failed
	if !waiting {
		_, err = attempt(waitCtx, wait.Woken{})
		if errors.Is(err, errNotNow) {
			busy = errNotNow
		}
	} else {
		busy = errNotNow
		err = c.engine.Wait(waitCtx, &wait.Waiter{Channel: s.wakeChannel, ID: id, Every: s.redisson != "", Beat: renew.Entry{
			Kind: kindSemWaiter, Key: s.key, Keys: []string{s.key, s.waiters, s.leases}, Owner: id,
			Group: c.group(s.key), Lease: c.cfg.waiterTimeout,
		}}, func(actx context.Context, woken wait.Woken) (wait.Outcome, error) {
			out, err := attempt(actx, woken)
			if busy = errNotNow; err != nil {
				busy = nil
			}
			return out, err
		})
	}
	if err == nil {
		a := &acquired{id: id, n: n, pids: pids, perm: s.perm}
		if leased {
			var ok bool
			// An answer for an earlier copy (a late copy of an earlier attempt of a waiting
			// acquisition took the permits) may find their lease partly, or wholly, gone: it is
			// counted from as long before this attempt as it has run.
			start := at
			if left < leaseMs {
				start = at.Add(-time.Duration(leaseMs-left) * time.Millisecond)
			}
			if a.set, ok = s.hold(ctx, pids, fixed, start); !ok {
				s.undo(ctx, id, n, pids, time.Time{}) // closed meanwhile: nothing would renew or watch them
				return nil, opErr(op, s.name, ErrNotObtained, ErrClosed)
			}
		}
		return a, nil
	}
	if reached && !errors.Is(err, errNotNow) {
		// The wait ended, or an attempt's outcome is unknown: give back what it may have taken and
		// leave the waiters. The request's record makes a copy still travelling take nothing.
		var late time.Time
		if unknown {
			late = at.Add(c.taken) // the record of what the attempt took is gone then
		}
		s.undo(waitCtx, id, n, pids, late) // in the background once the bound has passed
	}
	if errors.Is(err, wait.ErrClosed) {
		return nil, opErr(op, s.name, ErrNotObtained, ErrClosed)
	}
	why := endedWait(c, ctx, waitCtx, err, busy)
	if op == "try acquire" && busy != nil && ctx.Err() == nil && !c.closed() {
		return nil, nil // too few permits in time: (false, nil), as x/sync's TryAcquire
	}
	return nil, opErr(op, s.name, ErrNotObtained, why)
}

// report emits the outcome of an acquisition of n permits from start, made of tries attempts: a, or
// err (neither: a single attempt, or the WithWait bound if bounded, found too few permits).
func (s *Semaphore) report(ctx context.Context, leased bool, n int64, start time.Time, tries int, bounded bool, a *acquired, err error) {
	e := Event{Kind: EventAcquired, Object: ObjectSemaphore, Name: s.name, Ctx: ctx, Wait: time.Since(start), Attempts: tries, Permits: n}
	if leased {
		e.Object = ObjectPermitSemaphore
	}
	switch {
	case a == nil:
		e.Kind, e.Err = EventNotObtained, err
		if err == nil && bounded {
			e.Err = opErr("try acquire", s.name, ErrNotObtained, errWaitBound, errNotNow)
		}
	case a.set != nil:
		a.set.ev.announce(s.c, e) // then its permits' losses reported meanwhile
		return
	}
	s.c.emit(e)
}

// undo gives back the permits acquisition id may have taken (leased permits: pids; nil: plain
// permits) and takes it out of the waiters, as a clean-up (see Client.cleanup); late is zero, or,
// after an attempt whose outcome is unknown, when the record of what it took is gone (takenRecord
// from the attempt). The undo leaves a record, "u", that makes every copy of the
// acquisition landing later take nothing: for the waiter timeout, or, after an unknown outcome (the
// first copy may still be travelling) or once a re-sent copy ran (see sem_acquire.lua), for
// lateCopyBound. An undo that fails (Redis unreachable longer than the clean-up's context) is
// retried in the background until it reaches Redis, lateCopyBound has passed, or the Client is
// closed (see undoRetries). Plain permits come back only while the acquisition's record lives (at
// least takenRecord from the copy that took them): an undo of an unknown outcome that gives nothing
// back after late may have missed the record, and is logged as a failure.
func (s *Semaphore) undo(ctx context.Context, id string, n int64, pids []string, late time.Time) {
	leased := pids != nil
	keep := s.c.waiterArg
	if !late.IsZero() {
		keep = lateCopyMs
	}
	tries := 0
	run := func(ctx context.Context) bool {
		back, _, err := s.changeKept(ctx, "u", n, id, leased, keep, pids...)
		if tries++; err != nil && tries == 1 {
			s.c.cleanupFailed("could not give back the permits of an ended semaphore wait (retried in the background)", s.name, err)
		}
		if err == nil && !leased && back == 0 && !late.IsZero() && time.Now().After(late) {
			s.c.cleanupFailed("could not give back the permits of an ended semaphore wait", s.name,
				errors.New("the acquisition's record may have expired before the undo ran"))
		}
		return err == nil
	}
	s.c.cleanup(ctx, func(ctx context.Context) {
		if !run(ctx) {
			s.c.repeat(undoRetries, run)
		}
	})
}

// takenRecord is how long at least the record of an acquisition that took plain permits lives, for
// a waiter timeout wt and a go-redis ReadTimeout rt (0: none, or unknown): wt, never less than twice
// the longest a request or an undo goes on re-sending (cleanupTimeout), nor than twice rt. Plain
// permits are a counter: a re-sent copy of the acquisition answers for the copy that took them, and
// its undo gives them back, only if it finds that record (sem_acquire.lua, sem_release.lua). Both
// reach Redis once the copy's reply has been waited for: a reply lost on a connection that stays
// open is waited for the ReadTimeout (or until the call's context ends, if it has none), then the
// copy is re-sent, or the wait has ended and the undo is sent, and an undo whose own first copies
// were lost is re-sent after the ReadTimeout too: later than a short waiter timeout (it may be
// 100ms, and is lowered to the watchdog timeout), and than 10s with a ReadTimeout of 10s or more,
// even when Redis was reachable all along. A Release, AddPermits, DrainPermits or TrySetPermits keeps
// its record as long (see change), and so does a CountDownLatch's request: its copy re-sent after the
// ReadTimeout answers from it, rather than finding none and reporting ErrOutcomeUnknown for a change
// applied once. (A leased permit answers for its acquisition by its id.)
func takenRecord(wt, rt time.Duration) time.Duration { return max(wt, 2*cleanupTimeout, 2*rt) }

// lateCopyBound is the longest a copy of a request is taken to travel to Redis: longer than Linux
// lets TCP retransmit a connection's data by default (tcp_retries2 = 15: about 15.5 minutes; the
// data of a connection the client closed is retransmitted for less, tcp_orphan_retries). A
// semaphore acquisition whose copies may still be travelling keeps its record for that long, so that
// a copy landing after the acquisition ended takes nothing (sem_acquire.lua). A copy held longer (by
// a proxy, say) is not recognised.
const lateCopyBound = 20 * time.Minute

// lateCopyMs is lateCopyBound in ms, boxed once.
var lateCopyMs any = lateCopyBound.Milliseconds()

// undoRetries are the pauses before each retry of a semaphore undo that failed (see
// Semaphore.undo): 250ms doubling to 30s, then every 30s, until lateCopyBound has passed (a copy
// of the acquisition landing later is not recognised anyway).
var undoRetries = func() []time.Duration {
	var pauses []time.Duration
	for d, sum := 250*time.Millisecond, time.Duration(0); sum < lateCopyBound; sum += d {
		pauses = append(pauses, d)
		d = min(2*d, 30*time.Second)
	}
	return pauses
}()

// change runs sem_release.lua: what (see its header) with n, as request id (a new one if ""), the
// undo's leased flag, and permit ids.
func (s *Semaphore) change(ctx context.Context, what string, n int64, id string, leased bool, pids ...string) (int64, error, error) {
	return s.changeKept(ctx, what, n, id, leased, s.c.takenArg, pids...)
}

// changeKept is change, keeping the request's record for keep ms (boxed) rather than takenRecord.
func (s *Semaphore) changeKept(ctx context.Context, what string, n int64, id string, leased bool, keep any, pids ...string) (int64, error, error) {
	req := id
	if req == "" {
		req = s.c.newID()
	}
	c := s.c
	args := []any{what, n, c.publish, s.wakePrefix, keep, id, "0", resentArg{}, s.redisson}
	if leased {
		args[6] = "1"
	}
	for _, p := range pids {
		args = append(args, p)
	}
	cmd, ackErr := c.evalRecorded(ctx, scripts.SemRelease, []string{s.key, s.waiters, s.aux(sfxRequest + req), s.leases}, args...)
	v, err := cmd.Int64()
	if err != nil && strings.Contains(err.Error(), "permits out of range") {
		return 0, nil, because(ErrInvalidArgument, err) // nothing changed (sem_bound)
	}
	return v, ackErr, redisErr(err)
}

// mutate runs change for the exported operations: it checks the call, and reports a change the
// replicas did not acknowledge with ErrNotReplicated.
func (s *Semaphore) mutate(ctx context.Context, op, what string, n int64) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, opErr(op, s.Name(), err)
	}
	v, ackErr, err := s.change(ctx, what, n, "", false)
	if err != nil {
		return 0, opErr(op, s.name, err)
	}
	if ackErr != nil {
		return v, opErr(op, s.name, ackErr)
	}
	return v, nil
}

// Release gives back n permits (n ≥ 0) and wakes the waiters they let through. It blocks for one
// round trip. Nothing checks that they were acquired: a Semaphore has no owners. On failure the
// error is ErrInvalidArgument (nothing changed), ErrWrongType, ErrNotReplicated (released on the
// master only), or a Redis error (the outcome is unknown: a re-sent release is applied once).
// Releasing 0 permits does nothing and sends nothing to Redis: it fails only for bad input, a closed
// Client or a ctx already done.
func (s *Semaphore) Release(ctx context.Context, n int64) error {
	if err := s.check(ctx); err != nil {
		return opErr("release", s.Name(), err)
	}
	switch {
	case n < 0 || n > maxPermits:
		return opErr("release", s.name, invalidf("%d permits: must be in [0, 2^53-1]", n))
	case n == 0:
		if err := ctx.Err(); err != nil {
			return opErr("release", s.name, err)
		}
		return nil
	}
	_, err := s.mutate(ctx, "release", "r", n)
	return err
}

// AddPermits adds n permits (negative n takes them away; the count may then go below 0 until
// releases bring it back) and wakes the waiters they let through. It blocks for one round trip and
// returns the permits available after it. Errors are those of Release (n = 0 is ErrInvalidArgument).
func (s *Semaphore) AddPermits(ctx context.Context, n int64) (int64, error) {
	if (n == 0 || n > maxPermits || n < -maxPermits) && s.check(ctx) == nil {
		return 0, opErr("add permits", s.name, invalidf("%d permits: must be non-zero, within ±(2^53-1)", n))
	}
	return s.mutate(ctx, "add permits", "a", n)
}

// TrySetPermits sets the permits to n (n ≥ 0) if they were never set (or were deleted), and reports
// whether it did; it wakes the waiters they let through. It blocks for one round trip. Errors are
// those of Release.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	if (n < 0 || n > maxPermits) && s.check(ctx) == nil {
		return false, opErr("try set permits", s.name, invalidf("%d permits: must be in [0, 2^53-1]", n))
	}
	v, err := s.mutate(ctx, "try set permits", "s", n)
	return v == 1, err
}

// DrainPermits takes every available permit and returns how many it took (0 if none, or the count is
// below 0). It blocks for one round trip. Errors are those of Release.
func (s *Semaphore) DrainPermits(ctx context.Context) (int64, error) {
	return s.mutate(ctx, "drain permits", "d", 0)
}

// AvailablePermits returns the permits available now (0 if never set; below 0 after a negative
// AddPermits), counting back leased permits whose lease passed. It blocks for one round trip; waiters
// may take them at any moment. It fails with ErrWrongType if the name holds another kind of object.
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, opErr("available permits", s.Name(), err)
	}
	v, _, err := s.change(ctx, "q", 0, "", false)
	if err != nil {
		return 0, opErr("available permits", s.name, err)
	}
	return v, nil
}
