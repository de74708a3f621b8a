package redisson

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// MultiLock holds several locks as one, the equivalent of Redisson's RedissonMultiLock: all of them
// or none. The parts may be of any kind of this package (Lock, FairLock, FencedLock, SpinLock) and
// come from different Clients, hence different Redis servers. Create one with NewMultiLock; it is a
// list of handles, does no I/O, and is safe to share.
//
// Acquisition goes in rounds, taking the parts in the order given. The first part, taken while
// holding nothing, waits for as long as the wait allows (a FairLock keeps its place in the queue);
// every later part gets one attempt, without waiting: if it is held, the round releases the parts it
// took and the next round starts after a short random pause (up to 1ms after the first failed round,
// doubling with each failed round in a row up to 50ms), until the wait ends. Nothing is ever waited
// for while parts are held, so two MultiLocks over the same locks in different orders neither
// deadlock nor stall each other; they retry, and the random pauses let each through in turn. The
// price: a part after the first that is busy costs a round, and a FairLock part after the first
// does not queue (a waiter of that FairLock alone goes first), nor does the first part keep its place
// once a round fails. A part lost while the round took the others fails the round. The wait also
// ends, with ErrClosed, when a part's Client is closed. Parts must not be MultiLocks or RedLocks
// (give their parts instead). Options (WithLease, WithWait) apply to every part; with WithLease each
// part's lease runs from its own acquisition, so the group's ends with the first part's.
//
// The returned Hold stands for all parts: Unlock releases every part (concurrently), Reenter
// re-enters every part, Context is cancelled, with a cause matching ErrLockLost, as soon as any part
// is lost, and Parts gives the parts' holds (their fencing tokens). Re-entry through ContextWithHold
// is not supported: use Hold.Reenter. A lock must not appear twice (NewMultiLock refuses the same
// Client and name twice; two Clients over the same server cannot be told apart, and a group with
// both fails every round until its wait ends: its later part is always found held by its first).
//
// A lost group lets go of everything at once: when a part is lost, the Context is cancelled and then
// every level of the other parts is released in the background (on a goroutine of one of the parts'
// Clients, whose Close waits for it), whether or not Unlock is ever called. Unlock of a lost group's
// Hold changes nothing: it waits for that release to finish and returns an error matching ErrNotHeld
// and ErrLockLost, as a lost Lock's does. An Unlock that itself finds a part gone (a loss not yet
// reported) releases the other parts and returns an error matching ErrLockLost but not ErrNotHeld.
// A Reenter that was in flight when the loss was reported gives back what it took and fails.
type MultiLock struct{ group }

// RedLock holds a majority of N independent locks, the Redlock algorithm: N odd, at least 3, each
// part a lock on its own Redis master (through its own Client). Create one with NewRedLock.
//
// An attempt tries every part at once (one attempt each, bounded by a tenth of the lease, at most 1s)
// and succeeds if no part refused as misused (ErrWrongType, ErrInvalidArgument, errors.ErrUnsupported:
// the attempt fails at once), at least N/2+1 were acquired and the validity left, lease − elapsed − drift (drift
// = lease/100 + 2ms), is positive; otherwise it releases what it took, everywhere, and a waiting
// acquisition tries again after a random pause. The lease is the WithLease value, or, for the
// watchdog, the smallest watchdog timeout of the parts' Clients: the watchdog of each part's Client
// renews it, and the hold is lost (Context cancelled, cause matching ErrLockLost) when fewer than a
// majority of parts are still held; the parts still held are then released at once, in the
// background, and Unlock changes nothing and returns an error matching ErrNotHeld and ErrLockLost
// (see MultiLock). Otherwise Unlock releases every part held.
//
// NewRedLock refuses parts that share a server, as far as it can tell without I/O: the same Client
// twice, or two Clients whose go-redis clients have the same address (a plain client's Addr, any of
// a Cluster client's seed addresses). Addresses are compared as written, so two names of one server
// ("localhost:6379" and "127.0.0.1:6379", a proxy in front of it) pass, and failover (Sentinel)
// clients and other client types are not compared at all: independence is the caller's to ensure.
//
// What Redlock does not guarantee: it assumes bounded clock drift and bounded process pauses. A
// holder paused (GC, SIGSTOP) past its lease, or a server whose clock jumps forward, lets a second
// owner in, and a restarted server that lost its data (no fsync) can grant a part again. The loss
// signal comes after the fact. For a resource that must never see two writers, protect it with a
// fencing token checked by the resource itself (FencedLock, and Parts for a group's tokens).
type RedLock struct{ group }

// group is what MultiLock and RedLock share.
type group struct {
	name   string
	locks  []Locker
	quorum int  // parts to acquire and keep held: all (MultiLock), a majority (RedLock)
	red    bool // RedLock: parallel single attempts with a validity check
	err    error
}

var (
	_ Locker = (*MultiLock)(nil)
	_ Locker = (*RedLock)(nil)
)

// groupPart is what a group knows of the locks of this package, beyond Locker.
type groupPart interface {
	identity() any
	watchdogLease() time.Duration
	client() *Client
	// refused is why the part's Client does not offer its kind (errors.ErrUnsupported), or nil.
	refused() error
}

// NewMultiLock returns a MultiLock over locks (at least one). It does no I/O. Nil locks, or the same
// lock (same Client and name) twice, are reported by the first call on the result
// (ErrInvalidArgument).
func NewMultiLock(locks ...Locker) *MultiLock {
	return &MultiLock{newGroup("multi", locks, len(locks), false)}
}

// NewRedLock returns a RedLock over locks: an odd number, at least 3, each on its own Redis master.
// It does no I/O. Bad input is reported by the first call on the result (ErrInvalidArgument): nil
// locks, the same lock twice, and parts that share a server (the same Client, or Clients over the
// same address; see RedLock).
func NewRedLock(locks ...Locker) *RedLock {
	g := newGroup("redlock", locks, len(locks)/2+1, true)
	if g.err == nil && (len(locks) < 3 || len(locks)%2 == 0) {
		g.err = invalidf("a RedLock needs an odd number of locks, at least 3; got %d", len(locks))
	}
	return &RedLock{g}
}

func newGroup(kind string, locks []Locker, quorum int, red bool) group {
	g := group{locks: slices.Clone(locks), quorum: quorum, red: red}
	names := make([]string, len(locks))
	seen := map[any]bool{}
	for i, l := range locks {
		if isNilLocker(l) {
			g.err = invalidf("lock %d is nil", i)
			break
		}
		names[i] = l.Name()
		switch l.(type) {
		case *MultiLock, *RedLock:
			// Its parts could repeat one of this group's, which no check here would see.
			g.err = invalidf("lock %d is a MultiLock or RedLock: give its parts instead", i)
		}
		if p, ok := l.(groupPart); ok {
			if err := p.refused(); err != nil && g.err == nil {
				g.err = fmt.Errorf("lock %q: %w", names[i], err) // before any part is taken
			}
			if id := p.identity(); seen[id] {
				g.err = invalidf("lock %q appears twice", names[i])
			} else {
				seen[id] = true
			}
		}
	}
	if len(locks) == 0 && g.err == nil {
		g.err = invalidf("no locks")
	}
	if red && g.err == nil {
		g.err = distinctServers(locks)
	}
	g.name = kind + "(" + strings.Join(names, ",") + ")"
	return g
}

// distinctServers checks that no two of a RedLock's parts are on the same Redis server, as far as
// can be told without I/O: the same Client, or two Clients whose go-redis clients name the same
// address (a plain client's Addr, any of a Cluster client's seed Addrs). Addresses are compared as
// written: two names of one server ("localhost:6379", "127.0.0.1:6379", a proxy) are not caught, nor
// are failover (Sentinel) clients, whose master is only known by asking their Sentinels, and other
// client types.
func distinctServers(locks []Locker) error {
	clients := map[*Client]int{}
	addrs := map[string]int{}
	for i, l := range locks {
		p, ok := l.(groupPart)
		if !ok || !p.client().valid() {
			continue // not of this package, or a zero handle that its own calls report
		}
		c := p.client()
		if j, ok := clients[c]; ok {
			return invalidf("RedLock parts %d and %d are on one Client: Redlock needs each part on its own Redis master", j, i)
		}
		clients[c] = i
		for _, a := range serverAddrs(c.rdb) {
			if j, ok := addrs[a]; ok && j != i {
				return invalidf("RedLock parts %d and %d are on one Redis server (%s): Redlock needs each part on its own Redis master", j, i, a)
			}
			addrs[a] = i
		}
	}
	return nil
}

// serverAddrs returns the addresses rdb was given: a plain client's, a Cluster client's seeds; none
// for a failover client (go-redis names its address "FailoverClient") or another client type.
func serverAddrs(rdb redis.UniversalClient) []string {
	switch r := rdb.(type) {
	case *redis.Client:
		if a := r.Options().Addr; a != "FailoverClient" {
			return []string{a}
		}
	case *redis.ClusterClient:
		return r.Options().Addrs
	}
	return nil
}

// isNilLocker reports whether l is nil or a nil pointer of a kind of this package.
func isNilLocker(l Locker) bool {
	switch v := l.(type) {
	case nil:
		return true
	case *Lock:
		return v == nil
	case *FairLock:
		return v == nil
	case *FencedLock:
		return v == nil
	case *SpinLock:
		return v == nil
	case *ReadWriteLock:
		return v == nil
	case *MultiLock:
		return v == nil
	case *RedLock:
		return v == nil
	}
	return false
}

// Name returns "multi(<names>)" ("" for a nil handle).
func (l *MultiLock) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Lock acquires every part, waiting until it succeeds, ctx ends, the optional WithWait bound passes,
// or a part's Client is closed (see MultiLock). It blocks. On failure nothing is held and the error
// matches ErrNotObtained, and what the failing part's error matches (ErrBusy for contention; see
// Lock.Lock), and ctx.Err() when ctx ended the wait.
func (l *MultiLock) Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	return l.groupOf().lock(ctx, opts...)
}

// TryLock makes one attempt on each part, or, with WithWait, keeps trying for up to that long;
// otherwise it behaves as Lock.
func (l *MultiLock) TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	return l.groupOf().tryLock(ctx, opts...)
}

// ForceUnlock force-unlocks every part (concurrently) and reports whether any had a lock to delete.
// It blocks for the slowest part's round trip; the parts' errors are joined.
func (l *MultiLock) ForceUnlock(ctx context.Context) (bool, error) {
	return l.groupOf().forceUnlock(ctx)
}

// IsLocked reports whether any part is held, asking every part concurrently. It fails only if no
// part answered that it is held and some could not answer.
func (l *MultiLock) IsLocked(ctx context.Context) (bool, error) { return l.groupOf().isLocked(ctx) }

// RemainingTTL returns the shortest remaining TTL of the parts (0 if one is not held), asking every
// part concurrently.
func (l *MultiLock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	return l.groupOf().remainingTTL(ctx)
}

func (l *MultiLock) groupOf() *group {
	if l == nil {
		return &group{err: errNilHandle}
	}
	return &l.group
}

// Name returns "redlock(<names>)" ("" for a nil handle).
func (l *RedLock) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Lock acquires a majority of the parts, trying again after random pauses until it succeeds, ctx
// ends, the optional WithWait bound passes, or a part's Client is closed (see RedLock). It blocks. On
// failure nothing is held and the error matches ErrNotObtained (and ctx.Err() when ctx ended the
// wait; ErrBusy when the parts were held by other owners).
func (l *RedLock) Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	return l.groupOf().lock(ctx, opts...)
}

// TryLock makes one attempt (one on each part, at once), or, with WithWait, keeps trying for up to
// that long; otherwise it behaves as Lock.
func (l *RedLock) TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	return l.groupOf().tryLock(ctx, opts...)
}

// ForceUnlock force-unlocks every part (concurrently) and reports whether any had a lock to delete.
// It blocks for the slowest part's round trip; the parts' errors are joined.
func (l *RedLock) ForceUnlock(ctx context.Context) (bool, error) { return l.groupOf().forceUnlock(ctx) }

// IsLocked reports whether a majority cannot be acquired now: more than N − (N/2+1) parts are held.
// It asks every part concurrently and fails only if the parts that answered cannot decide.
func (l *RedLock) IsLocked(ctx context.Context) (bool, error) { return l.groupOf().isLocked(ctx) }

// RemainingTTL returns the (N/2+1)-th longest remaining TTL of the parts: how long a majority stays
// held unless renewed (0 if no majority is held). It asks every part concurrently.
func (l *RedLock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	return l.groupOf().remainingTTL(ctx)
}

func (l *RedLock) groupOf() *group {
	if l == nil {
		return &group{err: errNilHandle}
	}
	return &l.group
}

func (g *group) lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	return g.acquire(ctx, opts, true)
}

func (g *group) tryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	return g.acquire(ctx, opts, false)
}

func (g *group) forceUnlock(ctx context.Context) (bool, error) {
	if err := g.check(ctx); err != nil {
		return false, opErr("force unlock", g.name, err)
	}
	res := eachPart(g.locks, func(l Locker) (bool, error) { return l.ForceUnlock(ctx) })
	deleted := false
	var errs []error
	for _, r := range res {
		deleted = deleted || r.v
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if len(errs) > 0 {
		return deleted, opErr("force unlock", g.name, errs...)
	}
	return deleted, nil
}

// isLocked reports whether an acquisition would find the group taken: more than N − quorum parts
// held.
func (g *group) isLocked(ctx context.Context) (bool, error) {
	if err := g.check(ctx); err != nil {
		return false, opErr("is locked", g.name, err)
	}
	res := eachPart(g.locks, func(l Locker) (bool, error) { return l.IsLocked(ctx) })
	locked, failed := 0, 0
	var errs []error
	for _, r := range res {
		switch {
		case r.err != nil:
			failed++
			errs = append(errs, r.err)
		case r.v:
			locked++
		}
	}
	spare := len(g.locks) - g.quorum // parts that may be held by others while the group is free
	switch {
	case locked > spare:
		return true, nil
	case locked+failed <= spare:
		return false, nil
	}
	return false, opErr("is locked", g.name, errs...)
}

// remainingTTL is the quorum-th longest remaining TTL of the parts.
func (g *group) remainingTTL(ctx context.Context) (time.Duration, error) {
	if err := g.check(ctx); err != nil {
		return 0, opErr("remaining ttl", g.name, err)
	}
	res := eachPart(g.locks, func(l Locker) (time.Duration, error) { return l.RemainingTTL(ctx) })
	var ttls []time.Duration
	var errs []error
	for _, r := range res {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		ttls = append(ttls, r.v)
	}
	if len(ttls) < g.quorum {
		return 0, opErr("remaining ttl", g.name, errs...)
	}
	slices.SortFunc(ttls, func(a, b time.Duration) int { return int(b - a) }) // longest first
	return ttls[g.quorum-1], nil
}

func (g *group) check(ctx context.Context) error {
	if g.err != nil {
		return g.err
	}
	if len(g.locks) == 0 || g.quorum < 1 {
		return invalidf("a MultiLock or RedLock not made by NewMultiLock or NewRedLock")
	}
	return checkCtx(ctx)
}

// result is one part's answer.
type result[T any] struct {
	v   T
	err error
}

// eachPart calls f for every item (a lock, a part's hold) concurrently and returns the answers in
// order.
func eachPart[E, T any](items []E, f func(E) (T, error)) []result[T] {
	res := make([]result[T], len(items))
	var wg sync.WaitGroup
	for i, l := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].v, res[i].err = f(l)
		}()
	}
	wg.Wait()
	return res
}

// Pauses between the rounds of a group acquisition.
const (
	// A MultiLock's pause after its n-th failed round in a row is random, between a quarter of and
	// multiPauseMin·2ⁿ⁻¹, at most multiPauseMax: short, since the round that failed made one attempt
	// and left at once, and random, so that two groups that failed each other (taking the same
	// parts in different orders) do not meet again in step.
	multiPauseMin = time.Millisecond
	multiPauseMax = 50 * time.Millisecond
	groupPauseMax = 100 * time.Millisecond // a RedLock's pauses are random, up to this long
)

// multiPause is a MultiLock's pause after its failed-th failed round in a row (failed ≥ 1).
func multiPause(failed int) time.Duration {
	ceiling := multiPauseMax
	if failed <= 6 { // 1ms·2⁶ > 50ms
		ceiling = min(multiPauseMin<<(failed-1), multiPauseMax)
	}
	return ceiling/4 + rand.N(ceiling-ceiling/4+1)
}

func (g *group) acquire(ctx context.Context, opts []AcquireOption, wait bool) (*Hold, error) {
	op := "lock"
	if !wait {
		op = "try lock"
	}
	if err := g.check(ctx); err != nil {
		return nil, opErr(op, g.name, ErrNotObtained, err)
	}
	ac, err := parseAcquire(opts)
	if err != nil {
		return nil, opErr(op, g.name, ErrNotObtained, err)
	}
	waitCtx := ctx
	if ac.waitSet {
		wait = ac.wait > 0
		if wait {
			var cancel context.CancelFunc
			waitCtx, cancel = context.WithTimeout(ctx, ac.wait)
			defer cancel()
		}
	}
	if wait && g.red {
		// A RedLock's waiter queues nowhere: count it as its Clients' waiter while it waits.
		seen := map[*Client]bool{}
		for _, l := range g.locks {
			if p, ok := l.(groupPart); ok && p.client().valid() && !seen[p.client()] {
				seen[p.client()] = true
				p.client().unqueued.Add(1)
				defer p.client().unqueued.Add(-1)
			}
		}
	}
	var partOpts []AcquireOption
	if ac.lease > 0 {
		partOpts = append(partOpts, WithLease(ac.lease))
	}
	for round := 0; ; round++ {
		var parts []*Hold
		if g.red {
			parts, err = g.redRound(ctx, waitCtx, ac.lease, partOpts)
		} else {
			parts, err = g.multiRound(ctx, waitCtx, wait, partOpts)
		}
		if err == nil {
			// A part lost while the round took the others (its watchdog said so) is no part held.
			if lost := lostPart(parts); lost != nil {
				releaseParts(waitCtx, parts) // in the background once the bound has passed
				err = fmt.Errorf("part %q lost while the others were taken: %w", lost.Name(), context.Cause(lost.Context()))
			} else {
				return g.hold(ctx, parts), nil
			}
		}
		if !wait || waitCtx.Err() != nil || misuse(err) || errors.Is(err, ErrClosed) {
			if cerr := ctx.Err(); cerr != nil {
				return nil, opErr(op, g.name, ErrNotObtained, cerr, err)
			}
			return nil, opErr(op, g.name, ErrNotObtained, err)
		}
		pause := rand.N(groupPauseMax) + time.Millisecond
		if !g.red {
			pause = multiPause(round + 1)
		}
		t := time.NewTimer(pause)
		select {
		case <-waitCtx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// multiRound takes every part in order: the first waiting as long as the wait allows (if wait), the
// others one attempt each; on the first failure it releases what it took.
func (g *group) multiRound(ctx, waitCtx context.Context, wait bool, partOpts []AcquireOption) ([]*Hold, error) {
	parts := make([]*Hold, 0, len(g.locks))
	for i, l := range g.locks {
		var opts []AcquireOption
		if wait && i == 0 {
			// Holding nothing yet, the first part can wait as long as the wait allows (and keep
			// its place in a FairLock's queue): only waiting while holding parts can deadlock, or
			// stall a group that takes the same parts in another order for as long as it waits.
			opts = append(slices.Clip(partOpts), WithWait(remaining(waitCtx)))
		} else {
			opts = append(slices.Clip(partOpts), WithWait(0))
		}
		h, err := l.TryLock(waitCtx, opts...)
		if err != nil {
			releaseParts(waitCtx, parts) // in the background once the bound has passed
			return nil, fmt.Errorf("part %q: %w", l.Name(), err)
		}
		parts = append(parts, h)
	}
	return parts, nil
}

// redRound makes one attempt on every part at once and keeps it if a majority was acquired with
// validity left; otherwise it releases what it took (in the background once waitCtx, the wait's
// bound, has passed). The attempts end by the bound (plus the parts' grace, see WithWait) too. The
// error matches ErrBusy only if the parts held by others alone denied the majority: parts that
// failed or did not answer are no contention.
func (g *group) redRound(ctx, waitCtx context.Context, lease time.Duration, partOpts []AcquireOption) ([]*Hold, error) {
	if lease == 0 {
		lease = DefaultWatchdogTimeout
		for i, l := range g.locks {
			if p, ok := l.(groupPart); ok && (i == 0 || p.watchdogLease() < lease) {
				lease = p.watchdogLease()
			}
		}
	}
	start := time.Now()
	bound := min(max(lease/10, 10*time.Millisecond), time.Second)
	if dl, ok := waitCtx.Deadline(); ok && waitCtx != ctx {
		bound = min(bound, max(time.Until(dl), 0)+g.attemptGrace())
	}
	actx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	opts := append(slices.Clip(partOpts), WithWait(0))
	answers := make(chan partAnswer, len(g.locks)) // buffered: a late part never blocks
	for i, l := range g.locks {
		go func() {
			h, err := l.TryLock(actx, opts...)
			answers <- partAnswer{i, h, err}
		}()
	}
	// A part that has not answered by the bound (a silent server: its TryLock may then spend seconds
	// cleaning up) counts as failed; what it took, if anything, is released when it answers.
	late := time.NewTimer(bound + 20*time.Millisecond)
	defer late.Stop()
	parts := make([]*Hold, len(g.locks))
	held, answered, busy, misused := 0, 0, 0, false
	var errs []error
collect:
	for answered < len(g.locks) {
		select {
		case a := <-answers:
			answered++
			if a.err != nil {
				errs = append(errs, fmt.Errorf("part %q: %w", g.locks[a.i].Name(), a.err))
				misused = misused || misuse(a.err)
				if errors.Is(a.err, ErrBusy) {
					busy++
				}
				continue
			}
			parts[a.i] = a.h
			held++
		case <-late.C:
			errs = append(errs, fmt.Errorf("%d parts did not answer within %v", len(g.locks)-answered, bound))
			g.releaseLate(ctx, answers, len(g.locks)-answered)
			break collect
		}
	}
	if misused { // a part used as another kind, or a bad one: no majority makes that right
		releaseParts(waitCtx, parts)
		return nil, errors.Join(errs...)
	}
	validity := lease - time.Since(start) - (lease/100 + 2*time.Millisecond)
	if held >= g.quorum && validity > 0 {
		return parts, nil
	}
	releaseParts(waitCtx, parts)
	if held >= g.quorum {
		return nil, fmt.Errorf("a majority was acquired too late: no validity left of the %v lease", lease)
	}
	if len(g.locks)-busy >= g.quorum {
		// The parts that failed or were silent denied the majority, not contention: say what the
		// busy parts said without matching ErrBusy.
		for i, e := range errs {
			if errors.Is(e, ErrBusy) {
				errs[i] = errors.New(e.Error())
			}
		}
	}
	return nil, fmt.Errorf("%d of %d parts acquired, %d needed: %w", held, len(g.locks), g.quorum, errors.Join(errs...))
}

// attemptGrace is the longest grace of the parts' Clients (see Client.attemptGrace).
func (g *group) attemptGrace() time.Duration {
	grace := cleanupGrace
	for _, l := range g.locks {
		if p, ok := l.(groupPart); ok && p.client().valid() {
			grace = max(grace, p.client().attemptGrace())
		}
	}
	return grace
}

// partAnswer is a part's answer to one RedLock attempt.
type partAnswer struct {
	i   int
	h   *Hold
	err error
}

// releaseLate waits, in the background, for the n answers still to come on answers and releases
// what they acquired. The goroutine belongs to the first open Client among the parts' (its Close
// waits for it, and ends the wait early: each part's own cleanup then frees what it took), or is
// on its own if none is open.
func (g *group) releaseLate(ctx context.Context, answers <-chan partAnswer, n int) {
	f := func(stop <-chan struct{}) {
		for range n {
			select {
			case a := <-answers:
				if a.h != nil {
					releaseParts(context.WithoutCancel(ctx), []*Hold{a.h})
				}
			case <-stop:
				return
			}
		}
	}
	var clients []*Client
	for _, l := range g.locks {
		if p, ok := l.(groupPart); ok && p.client().valid() {
			clients = append(clients, p.client())
		}
	}
	runOwned(clients, f)
}

// remaining is how long ctx has left, or a week if it has no deadline.
func remaining(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return 7 * 24 * time.Hour
}

// lostPart returns a part whose hold has already ended, or nil.
func lostPart(parts []*Hold) *Hold {
	for _, p := range parts {
		if p != nil && p.Context().Err() != nil {
			return p
		}
	}
	return nil
}

// releaseParts unlocks the parts taken (nil entries skipped), concurrently. Each release is carried
// out even if ctx has ended; releaseParts waits for them while ctx lasts (see Hold.Unlock).
func releaseParts(ctx context.Context, parts []*Hold) {
	var wg sync.WaitGroup
	for _, h := range parts {
		if h == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = h.Unlock(ctx)
		}()
	}
	wg.Wait()
}

// groupOwner is one acquisition of a group, shared by the levels it is re-entered with.
type groupOwner struct {
	name    string
	quorum  int
	clients []*Client // the parts' Clients: the first open one runs the release after a loss
	ctx     context.Context
	cancel  context.CancelCauseFunc

	mu     sync.Mutex
	alive  int                      // parts held and not lost
	levels int                      // levels not unlocked, and re-entries in flight
	held   map[*groupLevel]struct{} // levels not unlocked
	ended  bool                     // released, or lost
	lost   bool                     // ended by a loss: the loss released the parts of every level held
	// released is closed once the release that followed a loss has finished.
	released chan struct{}
	stops    []func() bool
}

// groupLevel is one level of a group's hold: a level of each part held.
type groupLevel struct {
	owner *groupOwner
	parts []*Hold
}

// hold makes the group's hold of parts just acquired: its context, with the values of the
// acquisition's, ends when too few parts remain.
func (g *group) hold(ctx context.Context, parts []*Hold) *Hold {
	o := &groupOwner{name: g.name, quorum: g.quorum, levels: 1, released: make(chan struct{})}
	o.ctx, o.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	seen := map[*Client]bool{}
	for _, l := range g.locks {
		if p, ok := l.(groupPart); ok && p.client().valid() && !seen[p.client()] {
			seen[p.client()] = true
			o.clients = append(o.clients, p.client())
		}
	}
	level := &groupLevel{owner: o, parts: parts}
	o.held = map[*groupLevel]struct{}{level: {}}
	o.mu.Lock()
	for _, p := range parts {
		if p == nil {
			continue
		}
		o.alive++
		o.stops = append(o.stops, context.AfterFunc(p.Context(), func() { o.partEnded(p) }))
	}
	o.mu.Unlock()
	return &Hold{g: level}
}

// partEnded counts a part's hold that ended before the group's final unlock (lost, or released by an
// unlock of a level that held it alone): fewer parts than the quorum lose the group, and the parts
// still held are released at once, every level of them, in the background: nothing may stay held,
// let alone renewed, for a holder that was told its hold is over.
func (o *groupOwner) partEnded(p *Hold) {
	cause := context.Cause(p.Context())
	if !errors.Is(cause, ErrLockLost) {
		cause = because(ErrLockLost, errors.New("released by an unlock of one level"))
	}
	o.mu.Lock()
	if o.ended {
		o.mu.Unlock()
		return // the group's final unlock released it
	}
	o.alive--
	if o.alive >= o.quorum {
		o.mu.Unlock()
		return
	}
	o.ended, o.lost = true, true
	var parts []*Hold
	for l := range o.held {
		parts = append(parts, nonNil(l.parts)...)
	}
	o.held = nil
	for _, stop := range o.stops {
		stop()
	}
	o.mu.Unlock()
	// Told first, released next: the holder stops before others can take the parts.
	o.cancel(because(ErrLockLost, fmt.Errorf("part %q: %w", p.Name(), cause)))
	done := o.released
	runOwned(o.clients, func(<-chan struct{}) {
		defer close(done)
		// The lost part's holds answer at once (already ended); the others take a round trip each.
		releaseParts(context.WithoutCancel(o.ctx), parts)
	})
}

// runOwned runs f on a goroutine owned by the first open Client of clients (whose Close waits for it,
// see Client.background), or on a goroutine of its own if none is open.
func runOwned(clients []*Client, f func(stop <-chan struct{})) {
	for _, c := range clients {
		if c.background(f) {
			return
		}
	}
	go f(nil)
}

// unlock releases the level: every part's level, concurrently. The final level ends the group's hold.
// After a loss it changes nothing: the loss released the parts (Unlock waits until it has, while
// ctx lasts).
func (l *groupLevel) unlock(ctx context.Context) error {
	o := l.owner
	o.mu.Lock()
	if o.lost {
		o.mu.Unlock()
		select { // the parts' release, under way in the background; ctx bounds the wait
		case <-o.released:
		case <-ctx.Done():
		}
		return opErr("unlock", o.name, ErrNotHeld, context.Cause(o.ctx))
	}
	delete(o.held, l)
	o.levels--
	final := o.levels == 0
	if final {
		o.ended = true
		for _, stop := range o.stops {
			stop()
		}
	}
	o.mu.Unlock()
	res := make([]error, len(l.parts))
	var wg sync.WaitGroup
	for i, p := range l.parts {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = p.Unlock(ctx)
		}()
	}
	wg.Wait()
	notHeld := 0
	for _, err := range res {
		if errors.Is(err, ErrNotHeld) {
			notHeld++
		}
	}
	// Found fewer parts held than the quorum: the group was lost, noticed or not yet. This unlock
	// released the parts it still held, so its error must not match ErrNotHeld ("changing nothing").
	lostNow := len(nonNil(l.parts))-notHeld < o.quorum
	var errs []error
	for i, err := range res {
		switch {
		case err == nil:
			continue
		case errors.Is(err, ErrNotHeld) && !lostNow && o.quorum < len(l.parts):
			// A RedLock keeps its hold through the loss of a minority of parts: their unlock has
			// nothing to release.
			continue
		case errors.Is(err, ErrNotHeld):
			errs = append(errs, fmt.Errorf("part %q: %s", l.parts[i].Name(), describe(err)))
		default:
			errs = append(errs, fmt.Errorf("part %q: %w", l.parts[i].Name(), err))
		}
	}
	if lostNow {
		reason := because(ErrLockLost, fmt.Errorf("found lost at the unlock, which released the other parts: %w", errors.Join(errs...)))
		if final {
			o.cancel(reason) // a non-final unlock's loss is reported through the part's context
		}
		return opErr("unlock", o.name, reason)
	}
	if final {
		o.cancel(context.Canceled)
	}
	if len(errs) > 0 {
		return opErr("unlock", o.name, errs...)
	}
	return nil
}

// reenter re-enters every part of the level (all, or for a RedLock at least the quorum); on failure,
// or if the group was lost meanwhile, it releases the re-entries made.
func (l *groupLevel) reenter(ctx context.Context) (*Hold, error) {
	o := l.owner
	o.mu.Lock()
	if o.ended {
		err := context.Cause(o.ctx)
		o.mu.Unlock()
		return nil, opErr("reenter", o.name, ErrNotObtained, ErrNotHeld, err)
	}
	o.levels++ // counted now, so that no final unlock ends the owner meanwhile
	o.mu.Unlock()
	// Every live part, or none: levels that differ between parts would let an unlock release some
	// parts of a level the group still counts. A part already lost is left out.
	res := eachPart(l.parts, func(p *Hold) (*Hold, error) {
		if p == nil || p.Context().Err() != nil {
			return nil, nil
		}
		return p.Reenter(ctx)
	})
	parts := make([]*Hold, len(l.parts))
	held := 0
	var errs []error
	for i, r := range res {
		if l.parts[i] == nil || (r.v == nil && r.err == nil) {
			continue
		}
		if r.err != nil {
			errs = append(errs, fmt.Errorf("part %q: %w", l.parts[i].Name(), r.err))
			continue
		}
		parts[i] = r.v
		held++
	}
	o.mu.Lock()
	if held < o.quorum && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%d parts held, %d needed", held, o.quorum))
	}
	if held >= o.quorum && len(errs) == 0 && !o.ended {
		level := &groupLevel{owner: o, parts: parts}
		o.held[level] = struct{}{}
		o.mu.Unlock()
		return &Hold{g: level}, nil
	}
	// Failed, or lost meanwhile (the loss released the levels it knew of, not this one): give back
	// the re-entries made, and the level counted above.
	o.levels--
	final := o.levels == 0 && !o.ended
	if final {
		// Every other level was unlocked while this re-entry was in flight: its release is the
		// group's final one.
		o.ended = true
		for _, stop := range o.stops {
			stop()
		}
	}
	lost := o.lost
	o.mu.Unlock()
	releaseParts(ctx, parts)
	if final {
		o.cancel(context.Canceled)
	}
	if lost {
		return nil, opErr("reenter", o.name, ErrNotObtained, ErrNotHeld, context.Cause(o.ctx))
	}
	return nil, opErr("reenter", o.name, append([]error{ErrNotObtained}, errs...)...)
}

// holdCount is the number of levels held on enough parts: the smallest count (MultiLock), or the
// quorum-th largest (RedLock).
func (l *groupLevel) holdCount(ctx context.Context) (int, error) {
	res := eachPart(l.parts, func(p *Hold) (int, error) {
		if p == nil {
			return 0, nil
		}
		return p.HoldCount(ctx)
	})
	var counts []int
	var errs []error
	for i, r := range res {
		if l.parts[i] == nil {
			continue
		}
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		counts = append(counts, r.v)
	}
	if len(counts) < l.owner.quorum {
		return 0, opErr("hold count", l.owner.name, errs...)
	}
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	return counts[l.owner.quorum-1], nil
}

// nonNil returns the parts held (a RedLock's missing parts are nil).
func nonNil(parts []*Hold) []*Hold {
	var out []*Hold
	for _, p := range parts {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// misuse reports whether a part's error says that trying again cannot help: the name holds another
// type, bad input, or a kind the Client does not offer (WithRedissonCompat).
func misuse(err error) bool {
	return errors.Is(err, ErrWrongType) || errors.Is(err, ErrInvalidArgument) || errors.Is(err, errors.ErrUnsupported)
}
