// Package renew is the one renewal scheduler of a Client: a single goroutine that keeps every watchdog
// hold alive and ends every fixed-lease hold on time.
//
// Entries sit in a min-heap ordered by due time. A watchdog entry is renewed every lease/3. When one
// falls due, every entry due within half a period of it (its own) goes along, so entries that fall due
// close together share script calls (at most BatchSize entries of one Group per call). A renewal that fails is
// retried with backoff for as long as the lease cannot have lapsed; after that, and whenever Redis
// reports that the owner no longer holds the key, the entry is dropped and its OnLost callback runs.
// A fixed-lease entry is never renewed: when its lease has passed, OnLost runs.
//
// "The lease may have lapsed" is decided with a safety margin, a fraction of the lease: OnLost runs
// that much before the key can expire, counted from when the acquiring or renewing request was sent
// (which errs on the safe side), so that a holder that stops when told has stopped before a second
// owner can exist, as long as clock drift and the delivery of the signal take less than the margin.
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
	"sync"
	"sync/atomic"
	"time"
)

// BatchSize is the largest number of locks renewed by one script call.
const BatchSize = 100

// ErrGone is passed to OnLost when Redis reports that the owner no longer holds the key.
var ErrGone = errors.New("lock no longer held by this owner")

// ErrLeaseEnded is passed to OnLost when a fixed lease has run out.
var ErrLeaseEnded = errors.New("fixed lease ended")

// Renewer renews one batch: all entries share a Group and there are at most BatchSize of them. It
// returns one bool per entry (true: renewed, false: the owner no longer holds the key) or an error,
// in which case the outcome of every entry is unknown.
type Renewer func(ctx context.Context, batch []*Entry) ([]bool, error)

// Entry is one hold known to the scheduler. The exported fields are set before Add and not changed after.
type Entry struct {
	Key      string        // Redis key of the lock
	Owner    string        // owner id expected to hold Key
	Group    int           // batches never mix groups (Cluster slot; 0 elsewhere)
	Lease    time.Duration // lease set on every renewal, or the fixed lease
	Watchdog bool          // renew periodically; false: fixed lease, only ends
	// OnLost runs once, on the scheduler goroutine, when the hold is lost or its fixed lease ends;
	// never after Remove returned true. It must not block or call back into the Scheduler.
	OnLost func(err error)

	due      time.Time // next action
	deadline time.Time // the lease may have lapsed from then on
	failures int
	index    int  // heap position, -1 when not queued
	active   bool // registered and not yet removed or lost
}

// Scheduler runs the renewal goroutine. Create it with New and stop it with Close.
type Scheduler struct {
	renew Renewer

	mu      sync.Mutex
	entries entryHeap
	count   int       // active entries, queued or in flight
	wakeAt  time.Time // when the goroutine's timer fires; an Add due earlier must wake it
	idle    time.Duration
	margin  float64
	closed  bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	calls   atomic.Uint64
	renewed atomic.Uint64
	lost    atomic.Uint64
}

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
	}
	go s.run()
	return s
}

// Add registers e. start is when the acquiring request was sent: the lease is counted from then,
// which errs on the safe side. It does not block on I/O. It returns false, registering nothing, after
// Close.
func (s *Scheduler) Add(e *Entry, start time.Time) bool {
	e.deadline = s.lapse(e, start)
	e.due = e.deadline
	if e.Watchdog {
		e.due = start.Add(period(e))
	}
	e.failures = 0
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	e.active = true
	s.count++
	heap.Push(&s.entries, e)
	early := e.due.Before(s.wakeAt)
	s.mu.Unlock()
	if early { // due before the goroutine's timer fires: move it up
		s.poke()
	}
	return true
}

// Remove unregisters e. It returns false if e was not active (already removed, lost or ended), in
// which case OnLost has run or is running. It does not block on I/O.
func (s *Scheduler) Remove(e *Entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !e.active {
		return false
	}
	e.active = false
	s.count--
	if e.index >= 0 {
		heap.Remove(&s.entries, e.index)
	}
	return true
}

// Len reports the number of active entries.
func (s *Scheduler) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Stats reports how many renew calls (round trips) were made, how many locks they renewed, and how
// many holds were lost or ended.
func (s *Scheduler) Stats() (calls, renewed, lost uint64) {
	return s.calls.Load(), s.renewed.Load(), s.lost.Load()
}

// Close stops the goroutine, waits for it, and returns the entries that were still active; they are
// deactivated and their OnLost is not called (the caller decides what to tell their holders).
func (s *Scheduler) Close() []*Entry {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
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
	return left
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// lapse is when e, acquired or renewed by a request sent at sent, must be considered lost.
func (s *Scheduler) lapse(e *Entry, sent time.Time) time.Time {
	return sent.Add(e.Lease - time.Duration(float64(e.Lease)*s.margin))
}

// period is the renewal interval of a watchdog entry.
func period(e *Entry) time.Duration { return e.Lease / 3 }

// earliest is when e may join a batch that is going out anyway: watchdog entries up to half a period
// before they are due.
func earliest(e *Entry) time.Time {
	if e.Watchdog {
		return e.due.Add(-period(e) / 2)
	}
	return e.due
}

func (s *Scheduler) run() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		batch, wait := s.takeDue(time.Now())
		if len(batch) > 0 {
			s.process(batch)
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

// takeDue returns nothing and how long to sleep until an entry is due (recording the wake-up time);
// then it pops that entry and every following one that may go early, so that entries due close
// together share calls.
func (s *Scheduler) takeDue(now time.Time) ([]*Entry, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) == 0 || s.entries[0].due.After(now) {
		s.wakeAt = now.Add(s.idle)
		if len(s.entries) > 0 && s.entries[0].due.Before(s.wakeAt) {
			s.wakeAt = s.entries[0].due
		}
		return nil, s.wakeAt.Sub(now)
	}
	var batch []*Entry
	for len(s.entries) > 0 && !earliest(s.entries[0]).After(now) {
		batch = append(batch, heap.Pop(&s.entries).(*Entry))
	}
	s.wakeAt = now // busy: an Add must wake the goroutine if due before its next sleep is computed
	return batch, 0
}

func (s *Scheduler) process(batch []*Entry) {
	groups := map[int][]*Entry{}
	var order []int
	var ended []*Entry
	for _, e := range batch {
		if !e.Watchdog {
			ended = append(ended, e)
			continue
		}
		if _, ok := groups[e.Group]; !ok {
			order = append(order, e.Group)
		}
		groups[e.Group] = append(groups[e.Group], e)
	}
	s.finish(ended, ErrLeaseEnded)
	for i, g := range order {
		entries := groups[g]
		for len(entries) > 0 {
			n := min(len(entries), BatchSize)
			s.renewChunk(entries[:n])
			entries = entries[n:]
			select {
			case <-s.stop:
				// Put back what this round did not reach, so that Close returns it.
				s.requeue(entries)
				for _, later := range order[i+1:] {
					s.requeue(groups[later])
				}
				return
			default:
			}
		}
	}
}

func (s *Scheduler) requeue(entries []*Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		if e.active {
			heap.Push(&s.entries, e)
		}
	}
}

func (s *Scheduler) renewChunk(chunk []*Entry) {
	sent := time.Now()
	limit := sent.Add(period(chunk[0]))
	for _, e := range chunk {
		if e.deadline.Before(limit) {
			limit = e.deadline
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), limit)
	alive, err := s.renew(ctx, chunk)
	cancel()
	s.calls.Add(1)
	if err == nil && len(alive) != len(chunk) {
		err = fmt.Errorf("renew returned %d results for %d locks", len(alive), len(chunk))
	}

	now := time.Now()
	var lost []*Entry
	var lostErr error
	s.mu.Lock()
	for i, e := range chunk {
		if !e.active {
			continue
		}
		switch {
		case err == nil && alive[i]:
			e.failures = 0
			e.deadline = s.lapse(e, sent)
			e.due = sent.Add(period(e))
			heap.Push(&s.entries, e)
			s.renewed.Add(1)
		case err == nil:
			lost = append(lost, e)
		default:
			e.failures++
			retry := now.Add(backoff(e))
			if !retry.Before(e.deadline) {
				lost = append(lost, e)
				continue
			}
			e.due = retry
			heap.Push(&s.entries, e)
		}
	}
	s.mu.Unlock()
	if err != nil {
		lostErr = fmt.Errorf("could not renew before the lease may have lapsed: %w", err)
	} else {
		lostErr = ErrGone
	}
	s.finish(lost, lostErr)
}

// finish deactivates entries and tells their owners, outside the lock.
func (s *Scheduler) finish(entries []*Entry, err error) {
	var told []*Entry
	s.mu.Lock()
	for _, e := range entries {
		if e.active {
			e.active = false
			s.count--
			told = append(told, e)
		}
	}
	s.mu.Unlock()
	for _, e := range told {
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
