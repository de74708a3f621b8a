package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// Settings of the replica-acknowledged characterization.
const (
	replicaAckTimeout = 200 * time.Millisecond // WithReplicaAcks(1, replicaAckTimeout)
	replicaAckTrials  = 50
	replicaAckJitter  = 3 * time.Millisecond // the cut comes up to this long before or after TryLock starts
)

// The failover hazard the replica-acknowledged mode (WithReplicaAcks) is for, on a master with one
// replica whose replication link the test cuts (redistest.Replicated): Client A locks on the master,
// the replica is promoted (as a failover would, with whatever it had), and Client B locks the same
// name on it.
//
//   - without-mode: with the link cut before A locks, B is granted the lock A holds: the double grant
//     is reproduced (the test fails if it is not, since the set-up would then prove nothing).
//   - with-mode/cut: A's acquisition across a cut link fails with ErrNotObtained and ErrNotReplicated
//     and leaves nothing held on the master.
//   - with-mode/trials: over 50 trials that cut the link at a random moment around A's TryLock, A and
//     B are never both granted the lock (-short skips them).
func TestReplicaAckCharacterization(t *testing.T) {
	long(t)
	t.Parallel()
	t.Run("without-mode", func(t *testing.T) {
		r := redistest.StartReplicated(t)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		a := newClient(t, r.Master.Client(t))
		b := newClient(t, r.Replica.Client(t))

		r.Cut()
		ha, err := a.Lock("x").TryLock(ctx)
		if err != nil {
			t.Fatalf("A: TryLock(x) on the master across the cut link = %v; want it held (no mode)", err)
		}
		if err := r.Promote(ctx); err != nil {
			t.Fatal(err)
		}
		hb, err := b.Lock("x").TryLock(ctx)
		if err != nil {
			t.Fatalf("B: TryLock(x) on the promoted replica = %v; want the double grant the mode is for "+
				"(the harness did not lose A's acquisition)", err)
		}
		t.Logf("double grant reproduced: A holds %q on the master %s, B holds it on the promoted replica %s",
			ha.Name(), r.Master.Addr(), r.Replica.Addr())
		mustUnlock(t, hb)
		mustUnlock(t, ha)
	})

	t.Run("with-mode", func(t *testing.T) {
		r := redistest.StartReplicated(t)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Second)
		defer cancel()
		a := newClient(t, r.Master.Client(t), redisson.WithReplicaAcks(1, replicaAckTimeout))
		b := newClient(t, r.Replica.Client(t))
		other := newClient(t, r.Master.Client(t)) // a third Client on the master, without the mode

		// The mode grants when the replica acknowledges: with the link up, A locks.
		warm := mustLock(t, a.Lock("warm"), ctx)
		mustUnlock(t, warm)

		// Across a cut link: not obtained, not replicated, and undone on the master.
		t.Run("cut", func(t *testing.T) {
			r.Cut()
			h, err := a.Lock("x").TryLock(ctx)
			if err == nil {
				_ = h.Unlock(ctx)
				t.Fatal("A: TryLock(x) across the cut link succeeded; want ErrNotObtained and ErrNotReplicated")
			}
			if !errors.Is(err, redisson.ErrNotObtained) || !errors.Is(err, redisson.ErrNotReplicated) {
				t.Fatalf("A: TryLock(x) across the cut link = %v; want ErrNotObtained and ErrNotReplicated", err)
			}
			t.Logf("across the cut link: %v", err)
			if locked, err := other.Lock("x").IsLocked(ctx); err != nil || locked {
				t.Fatalf("IsLocked(x) on the master after A's failed TryLock = %v, %v; want false (undone)", locked, err)
			}
			hc, err := other.Lock("x").TryLock(ctx)
			if err != nil {
				t.Fatalf("another Client's TryLock(x) on the master after A's failed TryLock = %v; want it free", err)
			}
			mustUnlock(t, hc)
		})

		// The cut at a random moment around A's acquisition, then a failover.
		t.Run("trials", func(t *testing.T) {
			if testing.Short() {
				t.Skip("-short: 50 cut-and-promote trials take several seconds")
			}
			if err := r.Rejoin(ctx); err != nil {
				t.Fatal(err)
			}
			seed := rand.Uint64()
			rng := rand.New(rand.NewPCG(seed, 0))
			var aOK, aFailed, doubles int
			started := time.Now()
			for i := range replicaAckTrials {
				got, double := replicaAckTrial(t, ctx, r, a, b, fmt.Sprintf("trial:%d", i), rng)
				if got {
					aOK++
				} else {
					aFailed++
				}
				if double {
					doubles++
				}
				if t.Failed() { // the harness, not the mode: stop
					break
				}
			}
			t.Logf("%d trials in %v (seed %#x): A obtained %d, failed %d; double grants %d",
				aOK+aFailed, time.Since(started).Round(time.Millisecond), seed, aOK, aFailed, doubles)
			if doubles != 0 {
				t.Errorf("%d of %d trials granted the lock both to A on the master and to B on the promoted replica; want 0",
					doubles, aOK+aFailed)
			}
			if aOK == 0 && !t.Failed() {
				t.Errorf("A obtained the lock in none of %d trials: the trials prove nothing", aFailed)
			}
		})
	})
}

// replicaAckTrial runs one trial of the with-mode characterization on a set-up in sync and leaves it
// in sync: A tries name on the master while the link is cut at a random moment within replicaAckJitter
// of the start of the attempt; the replica is promoted, and B tries name on it. It reports whether A
// obtained the lock, and whether B did too. It fails the test if B was refused although the promoted
// replica does not hold the lock (B's attempt then proves nothing).
func replicaAckTrial(t *testing.T, ctx context.Context, r *redistest.Replicated, a, b *redisson.Client, name string, rng *rand.Rand) (aGot, double bool) {
	t.Helper()
	offset := time.Duration(rng.Int64N(int64(2*replicaAckJitter)+1)) - replicaAckJitter
	cutAfter, lockAfter := max(offset, 0), max(-offset, 0)
	cut := make(chan struct{})
	go func() {
		defer close(cut)
		time.Sleep(cutAfter) // the random moment of the fault, not a synchronisation
		r.Cut()
	}()
	time.Sleep(lockAfter) // ditto
	ha, errA := a.Lock(name).TryLock(ctx)
	<-cut
	if errA != nil && !errors.Is(errA, redisson.ErrNotObtained) {
		t.Errorf("%s: A's TryLock = %v; want success or ErrNotObtained", name, errA)
	}
	if err := r.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	hb, errB := b.Lock(name).TryLock(ctx)
	if errB == nil {
		if err := hb.Unlock(ctx); err != nil { // while the replica is still a master
			t.Errorf("%s: B's Unlock on the promoted replica = %v", name, err)
		}
	} else if locked, err := b.Lock(name).IsLocked(ctx); err != nil || !locked {
		t.Errorf("%s: B's TryLock on the promoted replica = %v, yet IsLocked = %v, %v: refused for another reason than A's lock",
			name, errB, locked, err)
	}
	if err := r.Rejoin(ctx); err != nil {
		t.Fatal(err)
	}
	if errA == nil {
		if err := ha.Unlock(ctx); err != nil { // with the link up again: acknowledged at once
			t.Errorf("%s: A's Unlock after the replica rejoined = %v", name, err)
		}
	}
	if errA == nil && errB == nil {
		when := fmt.Sprintf("%v after", offset)
		if offset < 0 {
			when = fmt.Sprintf("%v before", -offset)
		}
		t.Logf("%s: double grant (the link cut %s A's TryLock started)", name, when)
	}
	return errA == nil, errA == nil && errB == nil
}
