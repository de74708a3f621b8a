//go:build go1.25

package renew

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeRedis is a Renewer whose answers the test controls; time is synctest's fake clock.
type fakeRedis struct {
	mu     sync.Mutex
	calls  []int           // batch sizes
	gone   map[string]bool // keys that no longer have their owner
	failOn func() error    // error to return, if any
}

func (f *fakeRedis) renew(_ context.Context, batch []*Entry) ([]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, len(batch))
	if f.failOn != nil {
		if err := f.failOn(); err != nil {
			return nil, err
		}
	}
	alive := make([]bool, len(batch))
	for i, e := range batch {
		alive[i] = !f.gone[e.Key]
	}
	return alive, nil
}

func (f *fakeRedis) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func watchdog(key string, lease time.Duration, lost func(error)) *Entry {
	return &Entry{Key: key, Owner: "o", Lease: lease, Watchdog: true, OnLost: lost}
}

func TestRenewsEveryThirdOfLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{gone: map[string]bool{}}
		s := New(PerBatch(f.renew), time.Minute, 0)
		defer s.Close()
		s.Add(watchdog("k", 3*time.Second, func(err error) { t.Errorf("lost: %v", err) }), time.Now())

		time.Sleep(10*time.Second + 500*time.Millisecond)
		synctest.Wait()
		// Due at 1s, 2s, …: renewed 10 times in 10.5s (early by at most half a period).
		if n := f.callCount(); n < 10 || n > 11 {
			t.Fatalf("renew calls in 10.5s = %d; want 10 or 11", n)
		}
	})
}

func TestBatchesManyLocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{gone: map[string]bool{}}
		s := New(PerBatch(f.renew), time.Minute, 0)
		defer s.Close()
		const n = 10_000
		// Acquired over one second, as a burst of acquisitions would be.
		for i := range n {
			s.Add(watchdog(fmt.Sprint("k", i), 30*time.Second, nil), time.Now())
			if i%100 == 99 {
				time.Sleep(10 * time.Millisecond)
			}
		}
		start := f.callCount()
		time.Sleep(100 * time.Second) // ten renewal intervals
		synctest.Wait()
		perInterval := float64(f.callCount()-start) / 10
		if perInterval > 200 {
			t.Fatalf("%.0f renew calls per interval for %d locks; want ≤ 200", perInterval, n)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, size := range f.calls {
			if size > BatchSize {
				t.Fatalf("batch of %d; want ≤ %d", size, BatchSize)
			}
		}
		calls, renewed, _ := s.Stats()
		if renewed < 10*n-n/10 {
			t.Fatalf("renewed %d locks in %d calls over ten intervals; want ≈ %d", renewed, calls, 10*n)
		}
	})
}

func TestGroupsAreNotMixed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var mixed bool
		s := New(PerBatch(func(_ context.Context, batch []*Entry) ([]bool, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range batch {
				mixed = mixed || e.Group != batch[0].Group || e.Kind != batch[0].Kind
			}
			return make([]bool, len(batch)), nil // all gone: one pass is enough
		}), time.Minute, 0)
		defer s.Close()
		for i := range 10 {
			e := watchdog(fmt.Sprint("k", i), 3*time.Second, func(error) {})
			e.Group = i % 3
			e.Kind = i % 2
			s.Add(e, time.Now())
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if mixed {
			t.Fatal("a batch mixed groups or kinds")
		}
		if s.Len() != 0 {
			t.Fatalf("Len() = %d; want 0", s.Len())
		}
	})
}

func TestGoneIsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{gone: map[string]bool{"k": true}}
		s := New(PerBatch(f.renew), time.Minute, 0)
		defer s.Close()
		var got error
		s.Add(watchdog("k", 3*time.Second, func(err error) { got = err }), time.Now())
		time.Sleep(time.Second)
		synctest.Wait()
		if !errors.Is(got, ErrGone) {
			t.Fatalf("OnLost(%v); want ErrGone", got)
		}
		if s.Len() != 0 {
			t.Fatalf("Len() = %d; want 0", s.Len())
		}
	})
}

func TestFailuresRetriedUntilLeaseMayHaveLapsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := errors.New("connection refused")
		f := &fakeRedis{gone: map[string]bool{}, failOn: func() error { return down }}
		s := New(PerBatch(f.renew), time.Minute, 0)
		defer s.Close()
		start := time.Now()
		var lostAt time.Time
		var got error
		s.Add(watchdog("k", 3*time.Second, func(err error) { got, lostAt = err, time.Now() }), start)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if !errors.Is(got, down) {
			t.Fatalf("OnLost(%v); want the renewal error", got)
		}
		// Told before the lease could lapse, and not much earlier than that.
		if d := lostAt.Sub(start); d > 3*time.Second || d < 2*time.Second {
			t.Fatalf("lost after %v; want within the last third of the 3s lease", d)
		}
		if n := f.callCount(); n < 4 {
			t.Fatalf("%d attempts before giving up; want retries", n)
		}
	})
}

func TestRecoversAfterTransientFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fails := 2
		f := &fakeRedis{gone: map[string]bool{}}
		f.failOn = func() error {
			if fails > 0 {
				fails--
				return errors.New("timeout")
			}
			return nil
		}
		s := New(PerBatch(f.renew), time.Minute, 0)
		defer s.Close()
		s.Add(watchdog("k", 3*time.Second, func(err error) { t.Errorf("lost: %v", err) }), time.Now())
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if _, renewed, _ := s.Stats(); renewed < 8 {
			t.Fatalf("renewed %d times; want the schedule to resume", renewed)
		}
	})
}

func TestNoRenewalOrLossAfterRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{gone: map[string]bool{}}
		s := New(PerBatch(f.renew), time.Minute, 0)
		defer s.Close()
		e := watchdog("k", 3*time.Second, func(err error) { t.Errorf("OnLost after Remove: %v", err) })
		s.Add(e, time.Now())
		time.Sleep(1500 * time.Millisecond)
		if !s.Remove(e) {
			t.Fatal("Remove() = false for an active entry")
		}
		if s.Remove(e) {
			t.Fatal("second Remove() = true")
		}
		calls := f.callCount()
		f.mu.Lock()
		f.gone["k"] = true
		f.mu.Unlock()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := f.callCount(); n != calls {
			t.Fatalf("%d renewals after Remove; want 0", n-calls)
		}
	})
}

func TestFixedLeaseEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{gone: map[string]bool{}}
		s := New(PerBatch(f.renew), time.Minute, 0)
		defer s.Close()
		start := time.Now()
		var endedAt time.Time
		var got error
		s.Add(&Entry{Key: "k", Lease: 2 * time.Second, OnLost: func(err error) { got, endedAt = err, time.Now() }}, start)
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if !errors.Is(got, ErrLeaseEnded) || endedAt.Sub(start) != 2*time.Second {
			t.Fatalf("OnLost(%v) after %v; want ErrLeaseEnded after 2s", got, endedAt.Sub(start))
		}
		if f.callCount() != 0 {
			t.Fatal("a fixed lease was renewed")
		}
	})
}

func TestCloseReturnsActiveEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{gone: map[string]bool{}}
		s := New(PerBatch(f.renew), time.Minute, 0)
		a := watchdog("a", 3*time.Second, nil)
		b := watchdog("b", 3*time.Second, nil)
		s.Add(a, time.Now())
		s.Add(b, time.Now())
		s.Remove(b)
		left := s.Close()
		if len(left) != 1 || left[0] != a {
			t.Fatalf("Close() = %v; want [a]", left)
		}
		if s.Remove(a) {
			t.Fatal("Remove() after Close = true")
		}
		if s.Add(watchdog("c", 3*time.Second, nil), time.Now()) {
			t.Fatal("Add() after Close = true")
		}
	})
}

// A loss is signalled the margin before the lease may lapse, not at the moment it may.
func TestLossSignalledWithMargin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{gone: map[string]bool{}, failOn: func() error { return errors.New("timeout") }}
		s := New(PerBatch(f.renew), time.Minute, 0.25)
		defer s.Close()
		start := time.Now()
		var lostAt time.Time
		s.Add(watchdog("k", 4*time.Second, func(error) { lostAt = time.Now() }), start)
		fixed := &Entry{Key: "f", Owner: "o", Lease: 4 * time.Second, OnLost: func(error) {}}
		var fixedAt time.Time
		fixed.OnLost = func(error) { fixedAt = time.Now() }
		s.Add(fixed, start)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if d := lostAt.Sub(start); lostAt.IsZero() || d > 3*time.Second {
			t.Errorf("watchdog entry lost after %v; want by 3s (4s lease, 25%% margin)", d)
		}
		if d := fixedAt.Sub(start); d != 3*time.Second {
			t.Errorf("fixed lease ended after %v; want 3s (4s lease, 25%% margin)", d)
		}
	})
}

// Close during a round that renews several groups returns the entries of every group the round had
// not reached, whatever their group numbers (entries of a lower group number later in the round included: none
// is dropped, neither returned nor reported lost).
func TestCloseMidRoundReturnsUnreachedGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s *Scheduler
		var left []*Entry
		closed := make(chan struct{})
		renewer := func(_ context.Context, batch []*Entry) ([]bool, error) {
			if batch[0].Group == 5 && left == nil {
				go func() {
					left = s.Close()
					close(closed)
				}()
				<-s.stop // Close has begun: the round must stop after this call
			}
			ok := make([]bool, len(batch))
			for i := range ok {
				ok[i] = true
			}
			return ok, nil
		}
		s = New(PerBatch(renewer), time.Minute, 0)
		first := watchdog("high", 3*time.Second, nil)
		first.Group = 5
		second := watchdog("low", 3*time.Second, nil)
		second.Group = 1
		now := time.Now()
		s.Add(first, now)
		s.Add(second, now.Add(time.Millisecond)) // same round, later in it
		<-closed
		got := map[string]bool{}
		for _, e := range left {
			got[e.Key] = true
		}
		if !got["high"] || !got["low"] || len(left) != 2 {
			t.Fatalf("Close() returned %d entries %v; want both \"high\" (renewed) and \"low\" (not reached)", len(left), got)
		}
	})
}

// A renewal call that hangs delays nothing else: a fixed lease still ends on time, another lock is
// still renewed, and the hung entry itself is declared lost at its deadline, while its call is still
// in flight (were one goroutine both to renew and to end leases, a hung call would hold back the end
// of every fixed lease).
func TestHungRenewalDelaysNothingElse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		renewedOther := 0
		renewer := func(ctx context.Context, batch []*Entry) ([]bool, error) {
			for _, e := range batch {
				if e.Key == "hung" {
					<-ctx.Done() // the call only ends when it is abandoned
					return nil, ctx.Err()
				}
			}
			mu.Lock()
			renewedOther++
			mu.Unlock()
			ok := make([]bool, len(batch))
			for i := range ok {
				ok[i] = true
			}
			return ok, nil
		}
		s := New(PerBatch(renewer), time.Minute, 0)
		defer s.Close()
		start := time.Now()
		var hungLost, fixedEnded time.Time
		s.Add(watchdog("hung", 3*time.Second, func(error) { hungLost = time.Now() }), start)
		other := watchdog("other", 600*time.Millisecond, func(err error) { t.Errorf("other lost: %v", err) })
		other.Group = 1
		s.Add(other, start)
		time.Sleep(1100 * time.Millisecond) // the hung call started at 1s
		synctest.Wait()
		fixed := &Entry{Key: "fixed", Owner: "o", Lease: 300 * time.Millisecond}
		fixed.OnLost = func(error) { fixedEnded = time.Now() }
		s.Add(fixed, time.Now())
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if d := fixedEnded.Sub(start); fixedEnded.IsZero() || d != 1400*time.Millisecond {
			t.Errorf("fixed lease ended at %v; want 1.4s (added at 1.1s with a 300ms lease)", d)
		}
		if d := hungLost.Sub(start); hungLost.IsZero() || d > 3*time.Second {
			t.Errorf("the hung entry was declared lost at %v; want by its 3s deadline", d)
		}
		mu.Lock()
		defer mu.Unlock()
		if renewedOther < 10 {
			t.Errorf("the other lock was renewed %d times in 4.1s; want every 200ms", renewedOther)
		}
	})
}

// An entry added again after it was declared lost (a waiter's heartbeat entry is, each time the
// waiter queues again) is not touched by the outcome of a renewal call of its previous registration
// that comes back late (that call's "gone" must not end the new registration).
func TestLateOutcomeOfPreviousRegistrationIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan bool) // the answer of each call, sent when the test lets it return
		stop := make(chan struct{})
		renewer := func(_ context.Context, batch []*Entry) ([]bool, error) {
			var alive bool
			select { // a call that ignores its context, as go-redis may
			case alive = <-release:
			case <-stop:
				return nil, errors.New("stopped")
			}
			out := make([]bool, len(batch))
			for i := range out {
				out[i] = alive
			}
			return out, nil
		}
		s := New(PerBatch(renewer), time.Minute, 0)
		defer s.Close()
		defer close(stop)
		losses := 0
		e := watchdog("k", 3*time.Second, func(error) { losses++ })
		s.Add(e, time.Now())
		time.Sleep(3100 * time.Millisecond) // first call at 1s hangs; lost at the 3s deadline
		synctest.Wait()
		if losses != 1 || s.Active(e) {
			t.Fatalf("after its deadline: %d losses, active %v; want lost", losses, s.Active(e))
		}
		s.Add(e, time.Now())
		time.Sleep(1100 * time.Millisecond) // the new registration's first call is out too
		synctest.Wait()
		release <- false // the old call answers "gone", about the previous registration
		synctest.Wait()
		if losses != 1 || !s.Active(e) {
			t.Errorf("after the old call's late answer: %d losses, active %v; want the new registration untouched", losses, s.Active(e))
		}
		release <- true // the new registration's call
		synctest.Wait()
		if !s.Active(e) {
			t.Errorf("the new registration was not renewed")
		}
	})
}

// twoNodes is a Renewer over two fake nodes, one per batch Group, pipelined per node as the Client
// does: Group 2 (node B) answers after slow (or fails with ctx's error when ctx ends first), Group 1
// (node A) answers at once. Every entry is alive.
func twoNodes(slow time.Duration) Renewer {
	return nodesRenewer(func(group int) int { return group }, map[int]time.Duration{2: slow})
}

// nodesRenewer is a Renewer over fake nodes (nodeOf maps a batch's Group to its node), pipelined per
// node as the Client does: a node answers after its delay in delays (none: at once; < 0: never, it
// fails with ctx's error when ctx ends), every entry alive.
func nodesRenewer(nodeOf func(group int) int, delays map[int]time.Duration) Renewer {
	return func(ctx context.Context, batches [][]*Entry, report func(int, []bool, error)) int {
		byNode := map[int][]int{}
		for i, b := range batches {
			byNode[nodeOf(b[0].Group)] = append(byNode[nodeOf(b[0].Group)], i)
		}
		var wg sync.WaitGroup
		for node, idx := range byNode {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if d, ok := delays[node]; ok {
					var after <-chan time.Time // nil: hung
					if d >= 0 {
						after = time.After(d)
					}
					select {
					case <-after:
					case <-ctx.Done():
						for _, i := range idx {
							report(i, nil, ctx.Err())
						}
						return
					}
				}
				for _, i := range idx {
					alive := make([]bool, len(batches[i]))
					for k := range alive {
						alive[k] = true
					}
					report(i, alive, nil)
				}
			}()
		}
		wg.Wait()
		return len(byNode)
	}
}

// TestMixedRoundKeepsEachBatchPeriod checks that a renewal round mixing waiter heartbeats and locks
// does not impose the shortest period of any entry in it on every batch of the round: a mixed round
// must not starve or mis-time either kind, and a healthy (if slower) node's locks must not be
// declared lost because another batch of the round has a shorter period.
//
// Interleaving: a watchdog lock (lease 3s: renewed every 1s, its renewal call allowed up to a period,
// 1s) lives on node B, which answers in 200ms: alone it is renewed every time (the control run). A
// queued waiter of the same Client (waiter timeout 300ms: heartbeat every 100ms) lives on node A,
// which is fast. The waiter's heartbeat step runs every 100ms, and the lock is eligible from half a
// period before it is due, so the lock always rides in a waiter's round; its renewal must still be
// allowed its own period, so that it is renewed at least 8 times in 10s and never declared lost.
func TestMixedRoundKeepsEachBatchPeriod(t *testing.T) {
	run := func(t *testing.T, withWaiter bool) (renewed uint64, lost error) {
		synctest.Test(t, func(t *testing.T) {
			s := New(twoNodes(200*time.Millisecond), 50*time.Millisecond, 0.1)
			defer s.Close()
			var lostErr atomic.Value
			lock := &Entry{Kind: 0, Key: "lock", Owner: "o", Group: 2, Lease: 3 * time.Second, Watchdog: true,
				OnLost: func(err error) { lostErr.Store(err) }}
			s.Add(lock, time.Now())
			if withWaiter {
				waiter := &Entry{Kind: 1, Key: "q", Owner: "w", Group: 1, Lease: 300 * time.Millisecond, Watchdog: true,
					OnLost: func(err error) { t.Errorf("waiter lost: %v", err) }}
				s.Add(waiter, time.Now())
			}
			time.Sleep(10 * time.Second)
			synctest.Wait()
			if v := lostErr.Load(); v != nil {
				lost = v.(error)
			}
			_, renewed, _ = s.KindStats(0)
		})
		return renewed, lost
	}
	// Control: the lock alone on node B is renewed every period.
	if renewed, lost := run(t, false); lost != nil || renewed < 8 {
		t.Fatalf("control (no waiter): lost=%v renewed=%d; want nil and ≥ 8", lost, renewed)
	}
	renewed, lost := run(t, true)
	if lost != nil || renewed < 8 {
		t.Fatalf("lock on a node answering in 200ms, next to a queued waiter (heartbeat every 100ms) on another node: "+
			"lost=%v, %d renewals in 10s; want not lost and ≥ 8 renewals (its own period is 1s)", lost, renewed)
	}
}

// TestHungNodeSparesHealthyNodesLocks checks that a hung node delays only its own batches (the
// renewBatches doc: "the nodes of a Cluster in parallel, so that a slow node delays only its own
// batches"): a healthy node's locks must not be declared lost because another node is hung.
//
// Interleaving: 6,000 watchdog locks (lease 3s, period 1s, margin 0.1: deadline 2.7s after the last
// renewal was sent) with a Group (Cluster slot) each, on three nodes (Group % 3); node 0 hangs (its
// pipeline returns only when ctx ends), nodes 1 and 2 answer at once. They fall due together, in
// many rounds of 256 batches. With SplitBy, which the Client sets on a Cluster, rounds never mix
// nodes and each node has its own parallel slots: none of the healthy nodes' locks may be declared
// lost within 2.9s.
func TestHungNodeSparesHealthyNodesLocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		renewer := nodesRenewer(func(group int) int { return group % 3 }, map[int]time.Duration{0: -1}) // node 0 hung
		s := New(renewer, 500*time.Millisecond, 0.1)
		defer s.Close()
		s.SplitBy(func(e *Entry) string { return fmt.Sprint(e.Group % 3) }) // as the Client does on a Cluster
		const n = 6000
		var healthyLost, hungLost atomic.Int64
		for i := range n {
			e := watchdog(fmt.Sprint("k", i), 3*time.Second, nil)
			e.Group = i
			e.OnLost = func(error) {
				if i%3 == 0 {
					hungLost.Add(1)
				} else {
					healthyLost.Add(1)
				}
			}
			s.Add(e, time.Now())
		}
		time.Sleep(2900 * time.Millisecond) // past the first deadline (2.7s)
		synctest.Wait()
		if l := healthyLost.Load(); l != 0 {
			t.Fatalf("%d of the %d locks on the two healthy nodes declared lost within 2.9s (and %d of the %d on the hung node); "+
				"want 0: their nodes answer at once", l, n-n/3, hungLost.Load(), n/3)
		}
	})
}

// NoAnswer tells a call cut short by the library's own deadline in its own words: it no longer
// matches the context's error, keeps what the network said, and leaves other errors alone.
func TestNoAnswer(t *testing.T) {
	netErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		in       error
		want     string
		matchNet bool
	}{
		{context.DeadlineExceeded, "no answer from Redis in time", false},
		{fmt.Errorf("%w: %w", context.DeadlineExceeded, netErr), "no answer from Redis in time: dial tcp: connection refused", true},
		{fmt.Errorf("%w: %w", context.Canceled, netErr), "no answer from Redis in time: dial tcp: connection refused", true},
	} {
		got := NoAnswer(tc.in)
		if !errors.Is(got, ErrNoAnswer) || errors.Is(got, context.DeadlineExceeded) || errors.Is(got, context.Canceled) {
			t.Errorf("NoAnswer(%v) = %v; want ErrNoAnswer, and no context error", tc.in, got)
		}
		if got.Error() != tc.want || errors.Is(got, netErr) != tc.matchNet {
			t.Errorf("NoAnswer(%v) = %q (matches the network's error: %t); want %q (%t)", tc.in, got, errors.Is(got, netErr), tc.want, tc.matchNet)
		}
	}
	if other := errors.New("READONLY"); NoAnswer(other) != other || NoAnswer(nil) != nil {
		t.Error("NoAnswer changed an error that is not a context's")
	}
}

// A kind with a horizon shorter than its lease (SetHorizon: someone else may cut the key's TTL to
// it) is renewed every third of the horizon and declared lost before the horizon, less the margin,
// may have passed since its last renewal; a fixed lease of that kind keeps its own lease.
func TestHorizonBoundsPeriodAndLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var failing atomic.Bool
		var lastOK time.Time // when the latest successful renewal was sent (under f.mu)
		down := errors.New("timeout")
		f := &fakeRedis{gone: map[string]bool{}, failOn: func() error {
			if failing.Load() {
				return down
			}
			lastOK = time.Now()
			return nil
		}}
		s := New(PerBatch(f.renew), time.Minute, 0.1)
		defer s.Close()
		s.SetHorizon(1, 3*time.Second)
		start := time.Now()
		var lostAt, fixedAt time.Time
		var lostErr error
		capped := watchdog("capped", 30*time.Second, func(err error) { lostErr, lostAt = err, time.Now() })
		capped.Kind = 1
		if got := s.Lapse(capped, start).Sub(start); got != 2700*time.Millisecond {
			t.Fatalf("Lapse = start + %v; want the horizon less the margin, 2.7s", got)
		}
		s.Add(capped, start)
		fixed := &Entry{Kind: 1, Key: "fixed", Owner: "o", Lease: 6 * time.Second, OnLost: func(error) { fixedAt = time.Now() }}
		s.Add(fixed, start)

		time.Sleep(10*time.Second + 500*time.Millisecond)
		synctest.Wait()
		// Due at 1s, 2s, …: renewed 10 times in 10.5s, not once (a third of the 30s lease).
		if n := f.callCount(); n < 10 || n > 11 {
			t.Fatalf("renew calls in 10.5s = %d; want 10 or 11 (every third of the 3s horizon)", n)
		}
		if d := fixedAt.Sub(start); d != 5400*time.Millisecond {
			t.Errorf("the fixed lease of the kind ended after %v; want 5.4s (its own 6s lease, 10%% margin)", d)
		}
		failing.Store(true)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if !errors.Is(lostErr, down) {
			t.Fatalf("OnLost(%v); want the renewal error", lostErr)
		}
		f.mu.Lock()
		last := lastOK
		f.mu.Unlock()
		if d := lostAt.Sub(last); d > 2700*time.Millisecond || d < 2*time.Second {
			t.Fatalf("lost %v after the last successful renewal; want in the last third of the 2.7s the horizon allows", d)
		}
	})
}

// OnRemove is told of each registration that Remove ends, with its generation, once: not of a
// Remove that finds the entry already ended.
func TestOnRemoveToldOncePerRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{gone: map[string]bool{}}
		s := New(PerBatch(f.renew), time.Minute, 0)
		defer s.Close()
		var added, removed []uint64
		s.OnAdd(func(_ *Entry, gen uint64) { added = append(added, gen) })
		s.OnRemove(func(_ *Entry, gen uint64) { removed = append(removed, gen) })
		e := watchdog("k", 3*time.Second, func(err error) { t.Errorf("lost: %v", err) })
		for range 2 {
			s.Add(e, time.Now())
			if !s.Remove(e) || s.Remove(e) {
				t.Fatal("Remove: want true, then false")
			}
		}
		if len(removed) != 2 || removed[0] != added[0] || removed[1] != added[1] || added[0] == added[1] {
			t.Fatalf("added generations %v, removed %v; want each registration removed once", added, removed)
		}
	})
}
