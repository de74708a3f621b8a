package redisson

import (
	"context"
	"errors"
	"strconv"
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
// return: its #3046).
type PermitExpirableSemaphore struct {
	s *Semaphore
}

// PermitExpirableSemaphore returns the semaphore called name with leased permits (Redisson's
// RPermitExpirableSemaphore). It does no I/O; the handle is cheap and safe to share. A bad name is
// reported by the first call on the handle (ErrInvalidArgument).
func (c *Client) PermitExpirableSemaphore(name string) *PermitExpirableSemaphore {
	return &PermitExpirableSemaphore{s: c.Semaphore(name)}
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

// Acquire takes n permits (1 ≤ n ≤ 1000) and returns their ids, waiting until they are available, ctx ends,
// the optional WithWait bound passes, or the Client is closed. It blocks. WithLease gives each permit
// that fixed lease; without it the watchdog renews them. On failure nothing was taken; errors are
// those of Semaphore.Acquire.
func (p *PermitExpirableSemaphore) Acquire(ctx context.Context, n int64, opts ...AcquireOption) ([]string, error) {
	id, err := p.sem().acquire(ctx, "acquire", n, opts, true, true)
	if err != nil {
		return nil, err
	}
	return permitIDs(id, n), nil
}

// TryAcquire takes n permits (n ≥ 1) if they are available now, or, with WithWait, within that bound,
// and returns their ids; nil, nil if it did not get them. Otherwise it behaves as Acquire.
func (p *PermitExpirableSemaphore) TryAcquire(ctx context.Context, n int64, opts ...AcquireOption) ([]string, error) {
	id, err := p.sem().acquire(ctx, "try acquire", n, opts, false, true)
	if id == "" {
		return nil, err
	}
	return permitIDs(id, n), err
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

// watch registers the n permits of acquisition id, taken by a request sent at sent, with the
// watchdog. It reports false if the Client is closed.
func (s *Semaphore) watch(id string, n int64, sent time.Time) bool {
	c := s.c
	for _, pid := range permitIDs(id, n) {
		e := &renew.Entry{Kind: kindPermit, Key: s.key, Keys: []string{s.leases}, Owner: pid,
			Group: c.group(s.key), Lease: c.cfg.watchdog, Watchdog: true}
		k := s.leases + " " + pid
		e.OnLost = func(error) { c.permits.Delete(k) }
		c.permits.Store(k, e)
		if !c.sched.Add(e, sent) {
			c.permits.Delete(k)
			return false
		}
	}
	return true
}

// Release returns the permits ids (1 to 1000, none twice) to the pool, all or none, and wakes the waiters they let through.
// It blocks for one round trip. It fails with ErrNotHeld, changing nothing, if a permit is unknown,
// released already, or its lease passed; with ErrInvalidArgument if ids is empty; otherwise as
// Semaphore.Release. Once the call reaches Redis its permits are no longer renewed, whatever the
// answer: one whose release failed with an unknown outcome lapses within its lease unless Release is
// called again. Bad input (no ids, repeated ids) changes nothing.
func (p *PermitExpirableSemaphore) Release(ctx context.Context, ids ...string) error {
	s := p.sem()
	if err := s.check(ctx); err != nil {
		return opErr("release", s.Name(), err)
	}
	if err := checkIDs(ids); err != nil {
		return opErr("release", s.name, err)
	}
	v, ackErr, err := s.change(ctx, "x", 0, "", false, ids...)
	// Whatever the answer, the caller is done with these permits: stop renewing them (released, or,
	// if the outcome is unknown, left to lapse within their lease unless a retry releases them).
	for _, pid := range ids {
		if e, ok := s.c.permits.LoadAndDelete(s.leases + " " + pid); ok {
			s.c.sched.Remove(e.(*renew.Entry))
		}
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

// RemainingLease returns how long permit id stays leased unless renewed. It blocks for one round
// trip and fails with ErrNotHeld if the permit is not leased (unknown, released, or its lease
// passed).
func (p *PermitExpirableSemaphore) RemainingLease(ctx context.Context, id string) (time.Duration, error) {
	s := p.sem()
	if err := s.check(ctx); err != nil {
		return 0, opErr("remaining lease", s.Name(), err)
	}
	v, _, err := s.change(ctx, "q", 0, "", false, id)
	switch {
	case err != nil:
		return 0, opErr("remaining lease", s.name, err)
	case v < 0:
		return 0, opErr("remaining lease", s.name, ErrNotHeld)
	}
	return time.Duration(v) * time.Millisecond, nil
}

// SetLease sets the lease of each permit of ids to d from now (1ms ≤ d ≤ 30 days). It blocks for one
// round trip and fails with ErrNotHeld if a permit is not leased (the others are set). The watchdog
// never shortens a lease: a permit it renews keeps a longer lease set here until that passes, then
// gets the watchdog's lease again.
func (p *PermitExpirableSemaphore) SetLease(ctx context.Context, d time.Duration, ids ...string) error {
	s := p.sem()
	if err := s.check(ctx); err != nil {
		return opErr("set lease", s.Name(), err)
	}
	var ac acquireConfig
	if err := WithLease(d)(&ac); err != nil {
		return opErr("set lease", s.name, err)
	}
	if err := checkIDs(ids); err != nil {
		return opErr("set lease", s.name, err)
	}
	v, ackErr, err := s.change(ctx, "e", d.Milliseconds(), "", false, ids...)
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
