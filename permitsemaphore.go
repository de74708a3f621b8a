package redisson

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/goredisson/redisson/internal/renew"
)

// PermitExpirableSemaphore is a Semaphore whose acquisitions are leased permits with ids, Redisson's
// RPermitExpirableSemaphore. Get one with Client.PermitExpirableSemaphore; it is a name plus a
// client, does no I/O, and is safe to share between goroutines. It is the same semaphore as
// Client.Semaphore(name) (same permits, same waiters, same policy): the two handles differ in how
// they take permits.
//
// An acquisition returns one id per permit. A permit is released by its id (Release), and a permit
// whose lease passes returns to the pool by itself: the next script that looks counts it back, and
// waiters sleep no longer than until the earliest lease ends, so they get it even if nobody
// publishes anything. Leases are kept in Redis server time. With WithLease a permit has that fixed
// lease; without, the Client's watchdog renews it (every third of WithWatchdogTimeout) until it is
// released or the Client is closed, so a permit outlives any fixed time while its holder lives and
// returns within the watchdog timeout of its holder's death (Redisson's permits without a lease never
// return: its #3046). A renewal extends only a permit whose lease has not passed: a permit back in
// the pool is never taken out of it again for its former holder.
//
// The loss signal: AcquireHeld returns the permits with a context that ends when the holder must
// stop, as a Hold's does: with a cause matching ErrLockLost when one of them is lost (a renewal found
// it gone, renewals failed until its lease may be about to lapse, its fixed lease is about to pass,
// a Release of it failed or was refused, or the Client was closed), a safety margin
// (WithLossMargin) before its lease can pass; with context.Canceled once all of them are released
// through this Client. A permit lost so is no longer renewed, and one whose renewals failed is given
// back to the pool in the background (a renewal still travelling could otherwise extend it for
// nobody). Stats counts these permits in Held while they last and in Lost when lost. There is no
// separate sentinel error for permits: ErrLockLost stands for any lost hold.
//
// In the Redisson-compatible mode (WithRedissonCompat) the permits are shared with Java Redisson's
// RPermitExpirableSemaphore under the same name, in its layout: the leases are the sorted set
// "{name}:timeout" of raw 16-byte permit ids scored by their expiry in ms, permit ids are given and
// taken as 32 hex digits (as Redisson's API does; another id fails with ErrInvalidArgument), and
// waiters of both languages wait on "redisson_sc:{name}" and until the earliest lease ends. This
// package scores its leases with the Redis server's clock, Java Redisson with its client's clock: a
// Java client's clock that is off by d makes its leases, and its view of this package's, end d
// early or late (keep the clocks NTP-synced). Permits taken here without WithLease are still
// watchdog-renewed leases (Java sees permits that expire unless renewed, and counts them back if
// this Client dies); a Java permit taken without a lease never ends (RemainingLease reports
// NeverExpires) until it is released by its id.
type PermitExpirableSemaphore struct {
	s *Semaphore
}

// PermitExpirableSemaphore returns the semaphore called name with leased permits (Redisson's
// RPermitExpirableSemaphore). It does no I/O; the handle is cheap and safe to share. A bad name is
// reported by the first call on the handle (ErrInvalidArgument).
func (c *Client) PermitExpirableSemaphore(name string) *PermitExpirableSemaphore {
	return &PermitExpirableSemaphore{s: c.Semaphore(name)}
}

// permitLayout is how the leased permits of a semaphore are named: one per stored format, chosen
// by Client.Semaphore. Ids are kept as stored inside this package (the scheduler renews them by
// those) and shown to callers as show makes them.
type permitLayout struct {
	// newIDs returns the stored ids of the n permits of acquisition id.
	newIDs func(id string, n int64) []string
	// show returns the id given to callers of a stored one.
	show func(stored string) string
	// parse returns the stored id of one given by a caller, or an ErrInvalidArgument error.
	parse func(shown string) (string, error)
}

// nativePermits is this package's layout: "<acquisition id>#<i>", shown as stored.
var nativePermits = permitLayout{
	newIDs: permitIDs,
	show:   func(stored string) string { return stored },
	parse:  func(shown string) (string, error) { return shown, nil },
}

// redissonPermits is Java Redisson's layout (WithRedissonCompat): 16 random bytes, shown as 32
// lower-case hex digits.
var redissonPermits = permitLayout{
	newIDs: func(_ string, n int64) []string {
		ids := make([]string, n)
		for i := range ids {
			var b [16]byte
			_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+: it panics instead)
			ids[i] = string(b[:])
		}
		return ids
	},
	show: func(stored string) string { return hex.EncodeToString([]byte(stored)) },
	parse: func(shown string) (string, error) {
		b, err := hex.DecodeString(shown)
		if err != nil || len(b) != 16 {
			return "", invalidf("permit id %q: a Redisson permit id is 32 hex digits", shown)
		}
		return string(b), nil
	},
}

// parseIDs returns the stored ids of the permit ids given by a caller (1 to maxLeased, none twice).
func (l *permitLayout) parseIDs(ids []string) ([]string, error) {
	if err := checkIDs(ids); err != nil {
		return nil, err
	}
	out := make([]string, len(ids))
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		pid, err := l.parse(id)
		if err != nil {
			return nil, err
		}
		if seen[pid] {
			return nil, invalidf("permit id %q given twice", id)
		}
		seen[pid] = true
		out[i] = pid
	}
	return out, nil
}

// sem returns the underlying Semaphore (nil for a nil handle: its methods then report it).
func (p *PermitExpirableSemaphore) sem() *Semaphore {
	if p == nil {
		return nil
	}
	return p.s
}

// Name returns the name the semaphore was created with ("" for a nil handle).
func (p *PermitExpirableSemaphore) Name() string { return p.sem().Name() }

// Acquire takes n permits (0 ≤ n ≤ 1000) and returns their ids, waiting until they are available, ctx ends,
// the optional WithWait bound passes, or the Client is closed. It blocks. WithLease gives each permit
// that fixed lease; without it the watchdog renews them. On failure nothing was taken; errors are
// those of Semaphore.Acquire. With n = 0 it takes nothing and returns an empty (non-nil) list, sending
// nothing to Redis (there is nothing to release: Release refuses an empty list). Use AcquireHeld for
// a context that tells when the permits are lost.
func (p *PermitExpirableSemaphore) Acquire(ctx context.Context, n int64, opts ...AcquireOption) ([]string, error) {
	a, err := p.sem().acquire(ctx, "acquire", n, opts, true, true)
	if err != nil {
		return nil, err
	}
	return a.ids(), nil
}

// TryAcquire takes n permits (n ≥ 0) if they are available now, or, with WithWait, within that bound,
// and returns their ids; nil, nil if it did not get them. Otherwise it behaves as Acquire (n = 0:
// an empty, non-nil list at once).
func (p *PermitExpirableSemaphore) TryAcquire(ctx context.Context, n int64, opts ...AcquireOption) ([]string, error) {
	a, err := p.sem().acquire(ctx, "try acquire", n, opts, false, true)
	if a == nil {
		return nil, err
	}
	return a.ids(), err
}

// AcquireHeld is Acquire, returning the permits as a HeldPermits: their ids and the context of the
// work done with them. It blocks, waiting as Acquire does (with WithWait(0) it makes a single attempt
// and fails with ErrNotObtained if the permits are not available). On failure nothing was taken and
// the error is Acquire's. Release the permits with Release(ctx, h.IDs()...).
func (p *PermitExpirableSemaphore) AcquireHeld(ctx context.Context, n int64, opts ...AcquireOption) (*HeldPermits, error) {
	a, err := p.sem().acquire(ctx, "acquire", n, opts, true, true)
	if err != nil {
		return nil, err
	}
	return &HeldPermits{ids: a.ids(), set: a.set}, nil
}

// HeldPermits is the permits of one AcquireHeld in this Client: their ids and their context. It is
// safe for concurrent use; a nil *HeldPermits has no ids and an already cancelled context.
type HeldPermits struct {
	ids []string
	set *permitSet
}

// IDs returns the permits' ids (a copy), to release them (PermitExpirableSemaphore.Release) or to
// change their leases. It does no I/O.
func (h *HeldPermits) IDs() []string {
	if h == nil {
		return nil
	}
	return slices.Clone(h.ids) // nil for a zero HeldPermits
}

// Context returns the context of the work done with the permits. It does no I/O. It is cancelled with
// a cause matching ErrLockLost as soon as one of the permits is lost, a safety margin (WithLossMargin)
// before its lease can pass: this Client's renewal found it gone (released by another Client, or
// removed), its renewals failed until its lease may be about to lapse, its fixed lease (WithLease, or
// one set through this Client by SetLease) is about to pass, a Release of it failed or was refused,
// or the Client was closed (then the cause also matches ErrClosed). It is cancelled with
// context.Canceled once every one of the permits was released through this Client. It carries the
// values of the context given to AcquireHeld but not its cancellation. If the acquisition's reply
// came so late that a lease may be about to pass, it is already cancelled (ErrLockLost) when
// AcquireHeld returns. With n = 0 it is never cancelled: nothing is held, so nothing can be lost.
func (h *HeldPermits) Context() context.Context {
	if h == nil || h.set == nil {
		return canceledContext
	}
	return h.set.ctx
}

// acquired is what a successful acquisition took: n permits under request id, and, for leased
// permits, their ids as stored (pids, in the layout perm) and their local state.
type acquired struct {
	id   string
	n    int64
	pids []string
	perm *permitLayout
	set  *permitSet
}

// ids returns the permit ids of a leased acquisition as callers see them (an empty list for n = 0).
func (a *acquired) ids() []string {
	ids := make([]string, len(a.pids))
	for i, pid := range a.pids {
		ids[i] = a.perm.show(pid)
	}
	return ids
}

// permitSet is this Client's state of the leased permits of one acquisition: their shared context,
// cancelled by the first loss or once all of them are released.
type permitSet struct {
	s      *Semaphore
	ctx    context.Context
	cancel context.CancelCauseFunc
	mu     sync.Mutex // guards held and every leasedPermit's state below
	held   int        // permits not yet ended
	ev     eventGate  // orders its events: the acquisition first
}

// leasedPermit is one leased permit of this Client, in Client.permits from its acquisition until it
// is released or lost.
type leasedPermit struct {
	set *permitSet
	id  string
	key string // in Client.permits

	// Guarded by set.mu:
	entry     *renew.Entry // its registration with the scheduler
	until     time.Time    // a fixed lease's registration: when it ends (see followLease)
	releasing int          // Releases of it in flight
	pending   error        // its renewal found it gone while a Release was in flight
	ended     bool
}

// newPermitSet makes the state of n leased permits acquired with ctx.
func (s *Semaphore) newPermitSet(ctx context.Context, n int64) *permitSet {
	set := &permitSet{s: s, held: int(n)}
	set.ctx, set.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	return set
}

// checkIDs refuses an empty list of permit ids, one longer than maxLeased, and repeated ids.
func checkIDs(ids []string) error {
	if len(ids) == 0 || len(ids) > maxLeased {
		return invalidf("%d permit ids: must be 1 to %d", len(ids), maxLeased)
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return invalidf("permit id %q given twice", id)
		}
		seen[id] = true
	}
	return nil
}

// permitIDs returns the ids of the n permits of acquisition id (see sem_value.lua).
func permitIDs(id string, n int64) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = id + "#" + strconv.Itoa(i+1)
	}
	return ids
}

// permitKey is a permit's key in Client.permits.
func (s *Semaphore) permitKey(pid string) string { return s.leases + " " + pid }

// entry returns a scheduler entry for the permit: renewed by the watchdog (first is the lease in
// force when it is added, if shorter than the watchdog's), or, with fixed > 0, ending with that lease.
func (lp *leasedPermit) newEntry(fixed, first time.Duration) *renew.Entry {
	s := lp.set.s
	c := s.c
	e := &renew.Entry{Kind: kindPermit, Key: s.key, Keys: []string{s.leases}, Owner: lp.id, Group: c.group(s.key)}
	if fixed > 0 {
		e.Lease = fixed
	} else {
		e.Lease, e.Watchdog = c.cfg.watchdog, true
		if first > 0 && first < e.Lease {
			e.First = first
		}
	}
	e.OnLost = lp.lost
	return e
}

// hold registers the permits pids (as stored), taken by a request sent at sent with a fixed lease
// (0: the watchdog's), with the scheduler, before they are reported: a permit whose lease may already
// be about to lapse is ended at once instead (its context is cancelled). It returns their set, or
// false if the Client is closed (the caller must give the permits back).
func (s *Semaphore) hold(ctx context.Context, pids []string, lease time.Duration, sent time.Time) (*permitSet, bool) {
	c := s.c
	set := s.newPermitSet(ctx, int64(len(pids)))
	var afters []func()
	defer func() {
		for _, f := range afters {
			f()
		}
	}()
	for _, pid := range pids {
		lp := &leasedPermit{set: set, id: pid, key: s.permitKey(pid)}
		e := lp.newEntry(lease, 0)
		set.mu.Lock()
		lp.entry, lp.until = e, c.sched.Lapse(e, sent)
		c.permits.Store(lp.key, lp)
		if !time.Now().Before(lp.until) {
			afters = append(afters, lp.endLocked(because(ErrLockLost, errTooLate)))
			set.mu.Unlock()
			continue
		}
		set.mu.Unlock()
		if !c.sched.Add(e, sent) {
			// Closed meanwhile: Close ends those already added (their OnLost); forget this one.
			c.permits.CompareAndDelete(lp.key, lp)
			set.cancel(because(ErrLockLost, ErrClosed))
			return nil, false
		}
	}
	return set, true
}

// lost is the scheduler's OnLost: the permit is gone, its renewals failed until its lease may be
// about to lapse, its fixed lease is about to pass, or the Client was closed. A renewal that finds
// it gone while a Release of it is in flight has most likely run after that release, whose answer
// then decides.
func (lp *leasedPermit) lost(reason error) {
	if !errors.Is(reason, ErrLockLost) {
		reason = because(ErrLockLost, reason)
	}
	set := lp.set
	set.mu.Lock()
	if lp.releasing > 0 && errors.Is(reason, renew.ErrGone) {
		if trackerVerdict(reason) { // most likely the release's own doing: its answer decides
			set.mu.Unlock()
			return
		}
		if lp.pending == nil {
			lp.pending = reason
		}
		set.mu.Unlock()
		return
	}
	ending := !lp.ended
	after := lp.endLocked(reason)
	set.mu.Unlock()
	after()
	if ending && errors.Is(reason, renew.ErrLapsing) {
		// The renewals failed, but the permit may still be leased, and a renewal still travelling may
		// extend it by a whole lease when it lands: give it back, so that nobody waits for a permit
		// its holder was told it lost.
		set.s.releaseLost(lp.id)
	}
}

// endLocked ends the permit once: reason is nil for a release, else why it was lost. Call it with
// set.mu held and run the result after unlocking: it forgets the permit, stops its renewal and, on a
// loss or the set's last release, cancels the set's context.
func (lp *leasedPermit) endLocked(reason error) func() {
	if lp.ended {
		return func() {}
	}
	lp.ended = true
	set := lp.set
	set.held--
	last := set.held == 0
	c := set.s.c
	c.permits.CompareAndDelete(lp.key, lp)
	e := lp.entry
	return func() {
		c.sched.Remove(e)
		if reason == nil {
			if last {
				set.cancel(context.Canceled)
			}
			return
		}
		c.lostHolds.Add(1) // before the cancellation: whoever sees the context end sees it counted
		set.cancel(reason)
		set.ev.end(c, Event{Kind: EventLost, Object: ObjectPermitSemaphore, Name: set.s.name, Ctx: set.ctx, Permits: 1, Err: reason})
		level := slog.LevelWarn
		if errors.Is(reason, renew.ErrLeaseEnded) {
			level = slog.LevelInfo // a fixed lease running out is what it is for
		}
		c.cfg.logger.Log(context.Background(), level, "redisson: permit lost", "semaphore", set.s.name, "permit", set.s.perm.show(lp.id), "err", reason)
	}
}

// releaseLost gives back permit pid, lost because its renewals failed, in the background: at once,
// then after 250ms, 1s and 4s until Redis answers (released, or not leased any more). A renewal
// landing after the release finds nothing to extend.
func (s *Semaphore) releaseLost(pid string) {
	pauses := append([]time.Duration{0}, undoRechecks...)
	tries := 0
	s.c.repeat(pauses, func(ctx context.Context) bool {
		_, _, err := s.change(ctx, "x", 0, "", false, pid)
		if tries++; err != nil && tries == len(pauses) {
			s.c.cleanupFailed("could not give back a lost permit; it returns when its lease ends", s.name, err)
		}
		return err == nil
	})
}

// Release returns the permits ids (1 to 1000, none twice) to the pool, all or none, and wakes the
// waiters they let through. It blocks for one round trip. It fails with ErrNotHeld, changing
// nothing in Redis, if a permit is unknown, released already, or its lease passed; with
// ErrInvalidArgument if ids is empty, repeats an id, or has one that is not a permit id
// (WithRedissonCompat: 32 hex digits); otherwise as Semaphore.Release. Once the call reaches Redis
// the permits this Client holds among ids are no longer renewed and have ended, whatever the
// answer: released, their context (HeldPermits.Context) is cancelled with context.Canceled once all
// of its permits are; refused or with an unknown outcome, with ErrLockLost, and a permit whose
// release failed with an unknown outcome lapses within its lease unless Release is called again.
// Bad input changes nothing.
func (p *PermitExpirableSemaphore) Release(ctx context.Context, ids ...string) error {
	s := p.sem()
	if err := s.check(ctx); err != nil {
		return opErr("release", s.Name(), err)
	}
	ids, err := s.perm.parseIDs(ids)
	if err != nil {
		return opErr("release", s.name, err)
	}
	var mine []*leasedPermit
	for _, pid := range ids {
		if v, ok := s.c.permits.Load(s.permitKey(pid)); ok {
			lp := v.(*leasedPermit)
			lp.set.mu.Lock()
			if !lp.ended {
				lp.releasing++
				mine = append(mine, lp)
			}
			lp.set.mu.Unlock()
		}
	}
	v, ackErr, err := s.change(ctx, "x", 0, "", false, ids...)
	// Whatever the answer, the caller is done with these permits: they end (released, or, if
	// refused or the outcome is unknown, left to lapse within their lease unless a retry releases
	// them), and are no longer renewed.
	for _, lp := range mine {
		lp.set.mu.Lock()
		lp.releasing--
		var reason error
		switch {
		case err != nil:
			reason = because(ErrLockLost, errors.New("release failed, left to lapse"), err)
		case v < 0 && lp.pending != nil:
			reason = lp.pending
		case v < 0:
			reason = because(ErrLockLost, errors.New("release refused (a permit was not leased), left to lapse"))
		}
		after := lp.endLocked(reason)
		lp.set.mu.Unlock()
		after()
	}
	switch {
	case err != nil:
		return opErr("release", s.name, err)
	case v < 0:
		return opErr("release", s.name, ErrNotHeld, errors.New("a permit is not leased (unknown, released, or its lease passed)"))
	}
	if ackErr != nil {
		return opErr("release", s.name, ackErr)
	}
	return nil
}

// NeverExpires is what RemainingLease reports for a permit whose lease never ends: one a Java
// Redisson client took without a lease (WithRedissonCompat).
const NeverExpires = time.Duration(1<<63 - 1)

// RemainingLease returns how long permit id stays leased unless renewed (NeverExpires: its lease
// never ends). It blocks for one round trip and fails with ErrNotHeld if the permit is not leased
// (unknown, released, or its lease passed), with ErrInvalidArgument if id is not a permit id of the
// layout (WithRedissonCompat: 32 hex digits).
func (p *PermitExpirableSemaphore) RemainingLease(ctx context.Context, id string) (time.Duration, error) {
	s := p.sem()
	if err := s.check(ctx); err != nil {
		return 0, opErr("remaining lease", s.Name(), err)
	}
	pid, err := s.perm.parse(id)
	if err != nil {
		return 0, opErr("remaining lease", s.name, err)
	}
	v, _, err := s.change(ctx, "q", 0, "", false, pid)
	switch {
	case err != nil:
		return 0, opErr("remaining lease", s.name, err)
	case v == -2:
		return NeverExpires, nil
	case v < 0:
		return 0, opErr("remaining lease", s.name, ErrNotHeld)
	}
	return time.Duration(v) * time.Millisecond, nil
}

// SetLease sets the lease of each permit of ids (1 to 1000, none twice) to d from now (1ms ≤ d ≤ 30
// days). It blocks for one round trip and fails with ErrNotHeld if a permit is not leased (the others
// are set). The watchdog never shortens a lease: a permit it renews keeps a longer lease set here
// until that passes, then gets the watchdog's lease again; one given a shorter lease here is renewed
// within a third of it. The permits this Client holds follow the new lease: a fixed-lease permit's
// context (HeldPermits.Context) now ends a margin before d passes, and a watchdog permit's ends so
// if its renewals fail. A lease shortened by another Client is noticed by this one's next renewal
// only (within a third of the watchdog timeout), or, for a fixed lease, not at all.
func (p *PermitExpirableSemaphore) SetLease(ctx context.Context, d time.Duration, ids ...string) error {
	s := p.sem()
	if err := s.check(ctx); err != nil {
		return opErr("set lease", s.Name(), err)
	}
	var ac acquireConfig
	if err := WithLease(d)(&ac); err != nil {
		return opErr("set lease", s.name, err)
	}
	ids, err := s.perm.parseIDs(ids)
	if err != nil {
		return opErr("set lease", s.name, err)
	}
	sent := time.Now()
	v, ackErr, err := s.change(ctx, "e", d.Milliseconds(), "", false, ids...)
	s.followLease(ids, d.Truncate(time.Millisecond), sent, err == nil && v == int64(len(ids)))
	switch {
	case err != nil:
		return opErr("set lease", s.name, err)
	case v < int64(len(ids)):
		return opErr("set lease", s.name, ErrNotHeld, errors.New("a permit is not leased"))
	case ackErr != nil:
		return opErr("set lease", s.name, ackErr)
	}
	return nil
}

// errShortLease is why a permit ends when SetLease gave it a lease too short to vouch for.
var errShortLease = errors.New("the lease set may be about to pass")

// followLease registers again, with the lease d set by a request sent at sent (certainly on every
// one of them if certain), the permits of ids this Client holds, so that their loss is signalled
// before that lease can pass: a watchdog permit given a lease shorter than the watchdog's is renewed
// and watched as if acquired with it; a fixed-lease permit ends with the new lease, or, if the new
// lease may not be in force, with whichever of the two ends first.
func (s *Semaphore) followLease(ids []string, d time.Duration, sent time.Time, certain bool) {
	c := s.c
	var afters []func()
	for _, pid := range ids {
		v, ok := c.permits.Load(s.permitKey(pid))
		if !ok {
			continue
		}
		lp := v.(*leasedPermit)
		lp.set.mu.Lock()
		old := lp.entry
		skip := lp.ended || lp.releasing > 0 || (old.Watchdog && d >= old.Lease)
		var e *renew.Entry
		var until time.Time
		if !skip {
			if old.Watchdog {
				e = lp.newEntry(0, d)
			} else {
				e = lp.newEntry(d, 0)
			}
			until = c.sched.Lapse(e, sent)
			skip = !old.Watchdog && !certain && !until.Before(lp.until)
		}
		if skip || !c.sched.Remove(old) { // not removed: its loss is being reported
			lp.set.mu.Unlock()
			continue
		}
		lp.entry, lp.until = e, until
		switch {
		case !time.Now().Before(until):
			afters = append(afters, lp.endLocked(because(ErrLockLost, errShortLease)))
		case !c.sched.Add(e, sent):
			afters = append(afters, lp.endLocked(because(ErrLockLost, ErrClosed)))
		}
		lp.set.mu.Unlock()
	}
	for _, f := range afters {
		f()
	}
}

// TrySetPermits is Semaphore.TrySetPermits.
func (p *PermitExpirableSemaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	return p.sem().TrySetPermits(ctx, n)
}

// AddPermits is Semaphore.AddPermits.
func (p *PermitExpirableSemaphore) AddPermits(ctx context.Context, n int64) (int64, error) {
	return p.sem().AddPermits(ctx, n)
}

// AvailablePermits is Semaphore.AvailablePermits (leases that passed are counted back).
func (p *PermitExpirableSemaphore) AvailablePermits(ctx context.Context) (int64, error) {
	return p.sem().AvailablePermits(ctx)
}

// DrainPermits is Semaphore.DrainPermits (expired leases come back first).
func (p *PermitExpirableSemaphore) DrainPermits(ctx context.Context) (int64, error) {
	return p.sem().DrainPermits(ctx)
}
