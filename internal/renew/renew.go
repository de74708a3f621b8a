// Package renew is the one renewal scheduler of a Client: it keeps every watchdog hold alive and
// ends every hold whose lease may be about to lapse, on time.
//
// Entries sit in a min-heap ordered by when they next need attention. A watchdog entry is renewed
// every lease/3. When one falls due, every entry due within half a period of it (its own) goes along,
// so entries that fall due close together share script calls (at most BatchSize entries of one Group
// per call). A renewal that fails is retried with backoff for as long as the lease cannot have
// lapsed; after that, and whenever Redis reports that the owner no longer holds the key, the entry is
// dropped and its OnLost callback runs. A fixed-lease entry is never renewed: when its lease is about
// to pass, OnLost runs.
//
// "The lease may have lapsed" is decided with a safety margin, a fraction of the lease: OnLost runs
// that much before the key can expire, counted from when the acquiring or renewing request was sent
// (which errs on the safe side), so that a holder that stops when told has stopped before a second
// owner can exist, as long as clock drift and the delivery of the signal take less than the margin.
//
// The scheduler goroutine never waits on the network: renewal calls run on goroutines of their own
// (at most Parallel at a time), and an entry whose renewal is still in flight at its deadline is
// declared lost at that deadline, so a hung call delays no other entry's loss, fixed-lease end or
// renewal.
//
// Registration (Add) happens before an acquisition is reported to the caller and Remove happens when
// the final unlock is confirmed, so a renewal can never outlive its hold; the renew script also checks
// the owner, so a renewal already in flight cannot extend a lock that has changed hands.
package renew

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// BatchSize is the largest number of locks renewed by one script call.
const BatchSize = 100

// Parallel is the largest number of renewal calls in flight at once.
const Parallel = 8

// ErrGone is passed to OnLost when Redis reports that the owner no longer holds the key.
var ErrGone = errors.New("lock no longer held by this owner")

// ErrLeaseEnded is passed to OnLost when a fixed lease is about to run out.
var ErrLeaseEnded = errors.New("fixed lease ended")

// ErrLapsing is passed to OnLost (wrapped with the last renewal error, if any) when renewals did not
// succeed before the lease may be about to lapse.
var ErrLapsing = errors.New("could not renew before the lease may lapse")

// ErrNoAnswer is why a call of the library's own (a renewal round, a wait's bound) failed when it
// ran out of time: Redis did not answer in time (see NoAnswer).
var ErrNoAnswer = errors.New("no answer from Redis in time")

// NoAnswer explains err, the failure of a call cut short by a deadline of the library's own: an
// error that matches ErrNoAnswer and says what the network said (a refused connection, an i/o
// timeout), but no longer matches context.DeadlineExceeded or context.Canceled, which a caller
// would take for the end of its own context. Other errors are returned as they are.
func NoAnswer(err error) error {
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return err
	}
	return noAnswer{besidesContext(err)}
}

type noAnswer struct{ net error } // what the network said, or nil

func (e noAnswer) Error() string {
	if e.net == nil {
		return ErrNoAnswer.Error()
	}
	return ErrNoAnswer.Error() + ": " + e.net.Error()
}

func (e noAnswer) Unwrap() []error {
	if e.net == nil {
		return []error{ErrNoAnswer}
	}
	return []error{ErrNoAnswer, e.net}
}

// besidesContext returns the first part of err that is not a context's error, or nil.
func besidesContext(err error) error {
	if err == nil || err == context.DeadlineExceeded || err == context.Canceled {
		return nil
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if r := besidesContext(e); r != nil {
				return r
			}
		}
		return nil
	case interface{ Unwrap() error }:
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return besidesContext(u.Unwrap())
		}
	}
	return err
}

// Renewer renews batches: each holds entries of one Kind and one Group, at most BatchSize of them.
// It sends them as it likes (the Client pipelines them: one round trip per Redis node) and calls
// report exactly once per batch, concurrently if it likes, as each completes: one bool per entry
// (true: renewed, false: the owner no longer holds the key), or an error, in which case the outcome
// of every entry of that batch is unknown. After every report it returns the number of round trips
// it made. It must return when ctx ends.
type Renewer func(ctx context.Context, batches [][]*Entry, report func(i int, alive []bool, err error)) int

// PerBatch adapts a function that renews one batch per call into a Renewer that renews the batches
// concurrently, a call each.
func PerBatch(renew func(ctx context.Context, batch []*Entry) ([]bool, error)) Renewer {
	return func(ctx context.Context, batches [][]*Entry, report func(int, []bool, error)) int {
		var wg sync.WaitGroup
		for i, b := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				alive, err := renew(ctx, b)
				report(i, alive, err)
			}()
		}
		wg.Wait()
		return len(batches)
	}
}

// RoundBatches is the largest number of batches handed to the Renewer at once.
const RoundBatches = 256

// SplitBy makes rounds never mix entries that nodeOf tells apart (the Redis node that serves an
// entry's key, on a Cluster), and gives each node its own Parallel rounds in flight: a slow or hung
// node then delays the renewals of its own entries only. Call it before the first Add.
func (s *Scheduler) SplitBy(nodeOf func(*Entry) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodeOf = nodeOf
}

// SetHorizon makes watchdog entries of kind count on no more than d of their lease after the request
// that set it was sent: someone else may cut the key's TTL down to d (a Java Redisson reader's
// watchdog sets a read/write lock's hash TTL to its own timeout, whatever the other readers' leases).
// Such an entry is renewed every third of min(Lease, d) and declared lost (ErrLapsing) when
// min(Lease, d), less the margin, may have passed since its last renewal or acquisition; renewals
// still set Lease. Fixed-lease entries are not affected. Call it before anything else uses the
// Scheduler (the horizons are read without a lock from then on).
func (s *Scheduler) SetHorizon(kind int, d time.Duration) {
	s.horizon[kind] = d
}

// counted is how much of lease e may count on (see SetHorizon).
func (s *Scheduler) counted(e *Entry, lease time.Duration) time.Duration {
	if h := s.horizon[e.Kind]; e.Watchdog && h > 0 && h < lease {
		return h
	}
	return lease
}

// Entry is one hold known to the scheduler. The exported fields are set before Add and not changed after.
type Entry struct {
	Kind     int           // what is renewed (a lock, a queued waiter, ...), < Kinds: batches never mix kinds
	Key      string        // Redis key of the lock (or the waiter's queue)
	Keys     []string      // every key the renewal needs, if more than Key (nil: Key alone)
	Owner    string        // owner id expected to hold Key (or the waiter's id)
	Group    int           // batches never mix groups (Cluster slot; 0 elsewhere)
	Lease    time.Duration // lease set on every renewal, or the fixed lease
	Watchdog bool          // renew periodically; false: fixed lease, only ends
	// First, if set, is the lease in force when the entry is added (a lock handed over with a
	// shorter reservation): its deadline and first renewal are counted from it; renewals set Lease.
	First time.Duration
	// OnLost runs once, on the scheduler goroutine or a renewal goroutine, when the hold is lost or
	// its fixed lease ends; never after Remove returned true. It must not block or call back into
	// the Scheduler, except Remove.
	OnLost func(err error)

	span     time.Duration // the part of Lease counted on after a renewal: Lease, or less (see SetHorizon)
	due      time.Time     // next action: renewal, retry, or (while renewing) the deadline check
	deadline time.Time     // the lease may be about to lapse from then on
	sent     time.Time     // when the request that set the lease in force was sent
	failures int
	lastErr  error  // last renewal error, for the loss report
	index    int    // heap position, -1 when not queued
	active   bool   // registered and not yet removed or lost
	renewing bool   // a renewal call for it is in flight
	gen      uint64 // registrations so far
}

// Scheduler runs the renewal goroutine. Create it with New and stop it with Close.
type Scheduler struct {
	renew Renewer

	mu      sync.Mutex
	entries entryHeap
	count   int        // active entries
	byKind  [Kinds]int // active entries per kind
	wakeAt  time.Time  // when the goroutine's timer fires; an Add due earlier must wake it
	idle    time.Duration
	margin  float64
	closed  bool

	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	callCtx  context.Context // parent of every renewal call; cancelled by Close
	abort    context.CancelFunc
	calls    sync.WaitGroup           // renewal goroutines
	slots    map[string]chan struct{} // Parallel tokens per node (see SplitBy); guarded by mu
	nodeOf   func(*Entry) string      // see SplitBy
	horizon  [Kinds]time.Duration     // see SetHorizon: set before any use, then read-only
	onAdd    func(*Entry, uint64)     // see OnAdd: set before any use, then read-only
	onRemove func(*Entry, uint64)     // see OnRemove: likewise

	nCalls  atomic.Uint64
	renewed [Kinds]atomic.Uint64
	failed  [Kinds]atomic.Uint64
	lost    atomic.Uint64
}

// Kinds bounds Entry.Kind.
const Kinds = 16

// New starts the scheduler goroutine. While it has nothing to do it still wakes every idle, so that
// registering an entry due later than that never has to wake it (keep idle below the shortest renewal
// period for that). margin, in [0, 1), is the fraction of a lease by which losses are signalled early.
// It does not block.
func New(renew Renewer, idle time.Duration, margin float64) *Scheduler {
	s := &Scheduler{
		renew:  renew,
		idle:   idle,
		margin: margin,
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		slots:  map[string]chan struct{}{},
	}
	s.callCtx, s.abort = context.WithCancel(context.Background())
	go s.run()
	return s
}

// Add registers e. start is when the acquiring request was sent: the lease is counted from then,
// which errs on the safe side. It does not block on I/O. It returns false, registering nothing, after
// Close.
func (s *Scheduler) Add(e *Entry, start time.Time) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	deadline := s.Lapse(e, start)
	due := deadline
	if e.Watchdog {
		due = start.Add(s.counted(e, first(e)) / 3)
	}
	e.span = s.counted(e, e.Lease)
	// e may be added again after it ended, while a renewal call of its previous registration is
	// still out: the new generation tells that call's outcome apart.
	e.gen++
	e.deadline, e.due, e.sent = deadline, due, start
	e.failures, e.lastErr, e.renewing = 0, nil, false
	e.active = true
	s.count++
	s.byKind[e.Kind]++
	heap.Push(&s.entries, e)
	early := e.due.Before(s.wakeAt)
	gen := e.gen
	s.mu.Unlock()
	if early { // due before the goroutine's timer fires: move it up
		s.poke()
	}
	if s.onAdd != nil {
		s.onAdd(e, gen)
	}
	return true
}

// Remove unregisters e. It returns false if e was not active (already removed, lost or ended), in
// which case OnLost has run or is running. It does not block on I/O.
func (s *Scheduler) Remove(e *Entry) bool {
	s.mu.Lock()
	if !e.active {
		s.mu.Unlock()
		return false
	}
	s.deactivate(e)
	gen := e.gen
	s.mu.Unlock()
	if s.onRemove != nil {
		s.onRemove(e, gen)
	}
	return true
}

// deactivate takes an active entry out. Called with s.mu held.
func (s *Scheduler) deactivate(e *Entry) {
	e.active = false
	s.count--
	s.byKind[e.Kind]--
	if e.index >= 0 {
		heap.Remove(&s.entries, e.index)
	}
}

// Gen reports whether e is registered (as Active) and, if so, its registration's generation: a
// verdict on a registration that has ended since is not a verdict on the next (see Lost).
func (s *Scheduler) Gen(e *Entry) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return e.gen, e.active
}

// Lost declares the registration gen of e lost, with err (to wrap ErrGone), as a renewal that found
// the owner gone would: it unregisters e and runs OnLost. It does nothing, returning false, if that
// registration has ended (removed, lost, or added again since). It does not block on I/O.
func (s *Scheduler) Lost(e *Entry, gen uint64, err error) bool {
	s.mu.Lock()
	if !e.active || e.gen != gen {
		s.mu.Unlock()
		return false
	}
	s.deactivate(e)
	s.mu.Unlock()
	s.tell([]*Entry{e}, err)
	return true
}

// OnAdd makes every later Add call fn with the entry and its generation, after registering it (on
// the caller's goroutine; fn must not block or call back into the Scheduler). Call it before the
// Scheduler is used.
func (s *Scheduler) OnAdd(fn func(e *Entry, gen uint64)) { s.onAdd = fn }

// OnRemove makes every later Remove that unregisters an entry call fn with the entry and the
// generation it ended, after unregistering it (on the caller's goroutine; fn must not block or call
// back into the Scheduler). Call it before the Scheduler is used.
func (s *Scheduler) OnRemove(fn func(e *Entry, gen uint64)) { s.onRemove = fn }

// Active reports whether e is registered: added, and not yet removed, lost or ended.
func (s *Scheduler) Active(e *Entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return e.active
}

// Len reports the number of active entries.
func (s *Scheduler) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Stats reports how many renew calls (round trips) were made, how many entries they renewed, and
// how many entries were lost or ended, of every kind.
func (s *Scheduler) Stats() (calls, renewed, lost uint64) {
	for k := range Kinds {
		renewed += s.renewed[k].Load()
	}
	return s.nCalls.Load(), renewed, s.lost.Load()
}

// KindStats reports, for entries of one kind, how many are active, how many renewals were made, and
// how many failed (no answer, or an error: each is retried while the lease lasts).
func (s *Scheduler) KindStats(kind int) (active int, renewed, failed uint64) {
	s.mu.Lock()
	active = s.byKind[kind]
	s.mu.Unlock()
	return active, s.renewed[kind].Load(), s.failed[kind].Load()
}

// Close stops the goroutine, aborts the renewal calls in flight and waits for all of them, and
// returns the entries that were still active; they are deactivated and their OnLost is not called
// (the caller decides what to tell their holders).
func (s *Scheduler) Close() []*Entry {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	s.abort()
	s.calls.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var left []*Entry
	for _, e := range s.entries {
		e.active = false
		e.index = -1
		left = append(left, e)
	}
	s.entries = nil
	s.count = 0
	s.byKind = [Kinds]int{}
	return left
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Deadline is when e's lease in force may be about to lapse (from its acquisition or its latest
// renewal, less the margin), and whether e is active; the zero time if it is not. It does not block.
func (s *Scheduler) Deadline(e *Entry) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !e.active {
		return time.Time{}, false
	}
	return e.deadline, true
}

// Lapse is when e, acquired by a request sent at sent, must be considered lost: its first lease
// (First, else Lease; no more than SetHorizon's) less the margin. It does not block.
func (s *Scheduler) Lapse(e *Entry, sent time.Time) time.Time {
	d := s.counted(e, first(e))
	return sent.Add(d - time.Duration(float64(d)*s.margin))
}

// first is the lease in force when e is added: First, else Lease.
func first(e *Entry) time.Duration {
	if e.First > 0 {
		return e.First
	}
	return e.Lease
}

// lapse is when e, renewed by a request sent at sent, must be considered lost.
func (s *Scheduler) lapse(e *Entry, sent time.Time) time.Time {
	return sent.Add(e.span - time.Duration(float64(e.span)*s.margin))
}

// period is the renewal interval of a watchdog entry (once added).
func period(e *Entry) time.Duration { return e.span / 3 }

// earliest is when e may join a batch that is going out anyway: watchdog entries up to half a period
// before they are due; an entry being renewed or ended only at its due time.
func earliest(e *Entry) time.Time {
	if e.Watchdog && !e.renewing {
		return e.due.Add(-period(e) / 2)
	}
	return e.due
}

func (s *Scheduler) run() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := s.step(time.Now())
		if wait == 0 {
			continue
		}
		timer.Reset(wait)
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

// step handles every entry that needs attention at now: ends fixed leases, declares lost the entries
// whose renewal did not succeed in time, and starts renewal calls. It returns how long to sleep, 0 if
// it should run again at once.
func (s *Scheduler) step(now time.Time) time.Duration {
	var ended, lapsed, renew []*Entry
	s.mu.Lock()
	if len(s.entries) == 0 || s.entries[0].due.After(now) {
		s.wakeAt = now.Add(s.idle)
		if len(s.entries) > 0 && s.entries[0].due.Before(s.wakeAt) {
			s.wakeAt = s.entries[0].due
		}
		s.mu.Unlock()
		return max(s.wakeAt.Sub(now), time.Nanosecond)
	}
	// Something is due: handle it, and every entry that may go early along with it.
	for len(s.entries) > 0 && !earliest(s.entries[0]).After(now) {
		e := s.entries[0]
		switch {
		case !e.Watchdog:
			ended = append(ended, e)
			s.deactivate(e)
		case e.renewing || !now.Before(e.deadline):
			lapsed = append(lapsed, e)
			s.deactivate(e)
		default:
			// Renew it; meanwhile it stays in the heap, to be checked at its deadline.
			e.renewing = true
			e.due = e.deadline
			heap.Fix(&s.entries, 0)
			renew = append(renew, e)
		}
	}
	s.wakeAt = now // busy: an Add must wake the goroutine if due before its next sleep is computed
	s.mu.Unlock()

	s.tell(ended, ErrLeaseEnded)
	for _, e := range lapsed {
		err := ErrLapsing
		if e.lastErr != nil {
			err = fmt.Errorf("%w: %w", ErrLapsing, e.lastErr)
		}
		s.tell([]*Entry{e}, err)
	}
	s.dispatch(renew)
	return 0
}

// dispatch groups entries into batches (one kind and group each) and starts renewal rounds of up to
// RoundBatches batches.
func (s *Scheduler) dispatch(entries []*Entry) {
	type group struct{ kind, group int }
	groups := map[group][]*Entry{}
	var order []group
	for _, e := range entries {
		g := group{e.Kind, e.Group}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], e)
	}
	s.mu.Lock()
	nodeOf := s.nodeOf
	s.mu.Unlock()
	byNode := map[string][][]*Entry{}
	var nodes []string
	for _, g := range order {
		node := ""
		if nodeOf != nil {
			node = nodeOf(groups[g][0]) // a group is one slot: one node
		}
		if _, ok := byNode[node]; !ok {
			nodes = append(nodes, node)
		}
		for batch := groups[g]; len(batch) > 0; {
			n := min(len(batch), BatchSize)
			byNode[node] = append(byNode[node], batch[:n:n])
			batch = batch[n:]
		}
	}
	for _, node := range nodes {
		for chunks := byNode[node]; len(chunks) > 0; {
			n := min(len(chunks), RoundBatches)
			round := chunks[:n:n]
			chunks = chunks[n:]
			s.calls.Add(1)
			go func() {
				defer s.calls.Done()
				s.renewRound(node, round)
			}()
		}
	}
}

// slotsOf returns node's round tokens.
func (s *Scheduler) slotsOf(node string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.slots[node]
	if ch == nil {
		ch = make(chan struct{}, Parallel)
		s.slots[node] = ch
	}
	return ch
}

// renewRound makes one renewal round for node, when one of its slots is free, and applies each
// batch's outcome as it is reported. The round may take as long as the entry allowed the most time
// (its period, or its deadline if sooner): an entry whose own limit passes meanwhile is declared lost
// by the deadline check and its late outcome ignored, and the others are not cut short by it.
func (s *Scheduler) renewRound(node string, round [][]*Entry) {
	slots := s.slotsOf(node)
	select {
	case slots <- struct{}{}:
		defer func() { <-slots }()
	case <-s.callCtx.Done():
		return // Close: the entries stay in the heap and are returned by Close
	}
	sent := time.Now()
	var live [][]*Entry
	var gens [][]uint64
	var limit time.Time
	s.mu.Lock()
	for _, chunk := range round {
		var l []*Entry
		var g []uint64
		for _, e := range chunk {
			if !e.active || !e.renewing {
				continue // removed, or declared lost at its deadline, while waiting for a slot
			}
			l = append(l, e)
			g = append(g, e.gen)
			own := sent.Add(period(e))
			if e.deadline.Before(own) {
				own = e.deadline
			}
			if own.After(limit) {
				limit = own
			}
		}
		if len(l) > 0 {
			live, gens = append(live, l), append(gens, g)
		}
	}
	s.mu.Unlock()
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithDeadline(s.callCtx, limit)
	defer cancel()
	trips := s.renew(ctx, live, func(i int, alive []bool, err error) {
		if err == nil && len(alive) != len(live[i]) {
			err = fmt.Errorf("renew returned %d results for %d locks", len(alive), len(live[i]))
		}
		s.apply(live[i], gens[i], sent, alive, err)
	})
	s.nCalls.Add(uint64(trips))
}

// apply records the outcome of one batch's renewal, sent at sent.
func (s *Scheduler) apply(chunk []*Entry, gens []uint64, sent time.Time, alive []bool, err error) {
	if s.callCtx.Err() != nil {
		return // Close
	}
	now := time.Now()
	var gone []*Entry
	s.mu.Lock()
	for i, e := range chunk {
		if !e.active || !e.renewing || e.gen != gens[i] {
			continue // removed, or already declared lost at its deadline (and maybe added again)
		}
		e.renewing = false
		switch {
		case err == nil && alive[i]:
			e.failures, e.lastErr = 0, nil
			e.sent = sent
			e.deadline = s.lapse(e, sent)
			e.due = sent.Add(period(e))
			s.renewed[e.Kind].Add(1)
		case err == nil:
			gone = append(gone, e)
			s.deactivate(e)
			continue
		default:
			e.failures++
			s.failed[e.Kind].Add(1)
			// A round cut short by its own deadline (or its socket's, set from it) says nothing new: keep the reason of an
			// earlier failure (ErrNotReplicated, a Redis error) for the loss report. The
			// deadline is the scheduler's, not the holder's: the reason says so (NoAnswer).
			var ne net.Error
			timedOut := errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
			if e.lastErr == nil || !timedOut {
				e.lastErr = NoAnswer(err)
			}
			// Retry with backoff; the deadline check declares it lost if that comes too late.
			e.due = now.Add(backoff(e))
			if e.due.After(e.deadline) {
				e.due = e.deadline
			}
		}
		heap.Fix(&s.entries, e.index)
	}
	early := len(s.entries) > 0 && s.entries[0].due.Before(s.wakeAt)
	s.mu.Unlock()
	if early { // a retry due before the goroutine's timer fires
		s.poke()
	}
	s.tell(gone, ErrGone)
}

// tell reports entries already deactivated as lost, outside the lock.
func (s *Scheduler) tell(entries []*Entry, err error) {
	for _, e := range entries {
		s.lost.Add(1)
		if e.OnLost != nil {
			e.OnLost(err)
		}
	}
}

// backoff is the wait before retrying a failed renewal: doubling from 50 ms, capped at half a
// period, with up to 20% jitter.
func backoff(e *Entry) time.Duration {
	d := 50 * time.Millisecond << min(e.failures-1, 10)
	d = min(d, period(e)/2)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

type entryHeap []*Entry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *entryHeap) Push(x any) {
	e := x.(*Entry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}
