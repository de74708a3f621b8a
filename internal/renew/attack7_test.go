//go:build go1.25

package renew

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// a7Nodes is a Renewer over two fake nodes, one per batch Group, pipelined per node as the Client
// does: Group 2 (node B) answers after slow (or fails with ctx's error when ctx ends first), Group 1
// (node A) answers at once. Every entry is alive.
func a7Nodes(slow time.Duration) Renewer {
	return a7Renewer(func(group int) int { return group }, map[int]time.Duration{2: slow})
}

// a7Renewer is a Renewer over fake nodes (nodeOf maps a batch's Group to its node), pipelined per
// node as the Client does: a node answers after its delay in delays (none: at once; < 0: never, it
// fails with ctx's error when ctx ends), every entry alive.
func a7Renewer(nodeOf func(group int) int, delays map[int]time.Duration) Renewer {
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

// A mixed round imposes the shortest period of any entry in it on every batch of the round.
//
// Interleaving: a watchdog lock (lease 3s: renewed every 1s, its renewal call allowed up to a period,
// 1s) lives on node B, which answers in 200ms: alone it is renewed every time (checked below). A queued
// waiter of the same Client (waiter timeout 300ms: heartbeat every 100ms) lives on node A, which is
// fast. The waiter's heartbeat step runs every 100ms, and the lock is eligible from half a period before
// it is due, so the lock always rides in a waiter's round; renewRound gives the whole round one ctx,
// ending at min over the round of (sent + period) = sent + 100ms. Node B's pipeline is cut at 100ms,
// the lock's renewal fails, its retry (50ms backoff) rides in the next waiter round with the same
// 100ms cap, and so on until its deadline (2.7s): the lock is declared lost (ErrLapsing) although
// its node answers every renewal in a fifth of the lock's period. Before the change each batch had
// its own ctx (its own period). Broken guarantee: a mixed round of waiter heartbeats and locks must
// not starve or mis-time either kind; a healthy (if slower) node's locks must not be declared lost
// because another batch of the round has a shorter period.
func TestAttack7MixedRoundWaiterPeriodStarvesLocks(t *testing.T) {
	run := func(t *testing.T, withWaiter bool) (renewed uint64, lost error) {
		synctest.Test(t, func(t *testing.T) {
			s := New(a7Nodes(200*time.Millisecond), 50*time.Millisecond, 0.1)
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
			_, renewed = s.KindStats(0)
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

// A round holds its Parallel slot until its slowest node answers, and every round of a Cluster with
// many locks has batches on every node: one hung node stalls every round, and the rounds queued
// behind the Parallel slots wait past the deadlines of the healthy nodes' locks.
//
// Interleaving: 6,000 watchdog locks (lease 3s, period 1s, margin 0.1: deadline 2.7s after the last
// renewal was sent) with a Group (Cluster slot) each, on three nodes (Group % 3); node 0 hangs (its
// pipeline returns only when ctx ends), nodes 1 and 2 answer at once. They fall due together:
// dispatch makes 24 rounds of 256 batches, each with batches on all three nodes. Rounds 1-8 take the
// 8 slots; node 1 and 2 answer at once, but each round keeps its slot until node 0's pipeline is cut
// at the round's ctx deadline, sent + 1s. Rounds 9-16 run from 1s to 2s and rounds 17-24 would start
// at 3s: their locks, two thirds of them on healthy nodes, are declared lost (ErrLapsing) at 2.7s
// without a single renewal having been sent for them. (Fixed: with SplitBy, which the Client sets on
// a Cluster, rounds never mix nodes and each node has its own slots.) The renewBatches doc says "the nodes of a
// Cluster in parallel, so that a slow node delays only its own batches". Broken guarantee: a healthy
// node's locks must not be declared lost because another node is hung.
func TestAttack7HungNodeHoldsSlotsHealthyNodesLocksLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		renewer := a7Renewer(func(group int) int { return group % 3 }, map[int]time.Duration{0: -1}) // node 0 hung
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
