package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// independent starts n redis-servers and one Client on each, quick to give up on a dead server and
// to use it again once restarted (a go-redis pool that saw PoolSize failed dials answers with the
// last dial error until a background dial succeeds, up to a second later).
func independent(t *testing.T, n int, opts ...redisson.Option) ([]*redistest.Server, []*redisson.Client) {
	var servers []*redistest.Server
	var clients []*redisson.Client
	for range n {
		s := redistest.Start(t)
		servers = append(servers, s)
		clients = append(clients, newClient(t, s.Client(t, func(o *redis.Options) {
			o.MaxRetries, o.DialTimeout, o.DialerRetries, o.PoolSize = 1, 200*time.Millisecond, 1, 1000
		}), opts...))
	}
	return servers, clients
}

// redLockOf is the RedLock over the lock called name on each Client.
func redLockOf(clients []*redisson.Client, name string) *redisson.RedLock {
	var parts []redisson.Locker
	for _, c := range clients {
		parts = append(parts, c.Lock(name))
	}
	return redisson.NewRedLock(parts...)
}

// RedLock over 5 independent servers, for each of the 32 subsets of stopped servers: an acquisition
// succeeds exactly when at least 3 are up, and then holds exactly the parts on the servers that are up.
func TestRedLockMajorityOfFive(t *testing.T) {
	servers, clients := independent(t, 5, redisson.WithWatchdogTimeout(2*time.Second))
	ctx := t.Context()
	for mask := range 32 {
		up := 0
		for i, s := range servers {
			if mask&(1<<i) != 0 {
				if err := s.Kill(); err != nil {
					t.Fatal(err)
				}
			} else {
				up++
			}
		}
		h, err := redLockOf(clients, fmt.Sprintf("red-%d", mask)).TryLock(ctx)
		switch {
		case up >= 3 && err != nil:
			t.Errorf("%05b stopped (%d up): %v; want acquired", mask, up, err)
		case up < 3 && err == nil:
			t.Errorf("%05b stopped (%d up): acquired; want ErrNotObtained", mask, up)
		case up < 3 && !errors.Is(err, redisson.ErrNotObtained):
			t.Errorf("%05b stopped (%d up): %v; want ErrNotObtained", mask, up, err)
		}
		if err == nil {
			for i, p := range h.Parts() {
				if (p != nil) != (mask&(1<<i) == 0) {
					t.Errorf("%05b stopped: part %d held: %v", mask, i, p != nil)
				}
			}
			if err := h.Unlock(ctx); err != nil {
				t.Errorf("%05b stopped: unlock: %v", mask, err)
			}
		}
		for i, s := range servers {
			if mask&(1<<i) != 0 {
				if err := s.Restart(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// RedLock: exclusion between two Clients per server, a waiter served after the release, and the loss
// signal once a majority of parts is gone (a minority lost keeps the hold).
func TestRedLockLossAndWait(t *testing.T) {
	servers, as := independent(t, 3, redisson.WithWatchdogTimeout(600*time.Millisecond))
	var bs []*redisson.Client
	for _, s := range servers {
		bs = append(bs, newClient(t, s.Client(t)))
	}
	ctx := t.Context()
	h, err := redLockOf(as, "red").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := redLockOf(bs, "red").TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a second RedLock while held: %v; want ErrNotObtained", err)
	}
	// One part lost: the majority stays, the hold too.
	if _, err := bs[0].Lock("red").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the part's loss", func() bool { return h.Parts()[0].Context().Err() != nil })
	if err := h.Context().Err(); err != nil {
		t.Fatalf("a RedLock lost with a majority of its parts held: %v", context.Cause(h.Context()))
	}
	// A second part lost: no majority.
	if _, err := bs[1].Lock("red").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a RedLock that lost its majority was not told")
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("cause %v; want ErrLockLost", cause)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("unlock of a lost RedLock: %v; want ErrNotHeld", err)
	}
	// A waiter is served once the lock is free again.
	h2, err := redLockOf(as, "red").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, cancel := lockAsync(ctx, redLockOf(bs, "red"))
	defer cancel()
	eventually(t, 5*time.Second, "B to wait", func() bool { return bs[0].Stats().Waiting == 1 })
	mustUnlock(t, h2)
	r := recvWithin(t, got, 10*time.Second, "B to get the RedLock")
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustUnlock(t, r.h)
}

// MultiLock across two servers: all or nothing (a held part makes the whole attempt fail and leaves
// the other part free), the loss of either part loses the group, tokens of FencedLock parts.
func TestMultiLockAcrossServers(t *testing.T) {
	_, cs := independent(t, 2, redisson.WithWatchdogTimeout(600*time.Millisecond))
	ctx := t.Context()
	m := redisson.NewMultiLock(cs[0].FencedLock("m"), cs[1].Lock("m"))
	other := mustLock(t, cs[1].Lock("m"), ctx)
	if _, err := m.TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock with a part held: %v; want ErrNotObtained", err)
	}
	if locked, err := cs[0].FencedLock("m").IsLocked(ctx); err != nil || locked {
		t.Fatalf("the free part was left locked (%v, %v): not all-or-nothing", locked, err)
	}
	mustUnlock(t, other)
	h, err := m.TryLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tok := h.Parts()[0].Token(); tok <= 0 {
		t.Fatalf("the FencedLock part's token %d; want > 0", tok)
	}
	if _, err := cs[1].Lock("m").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a MultiLock that lost a part was not told")
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("unlock after the loss: %v; want ErrNotHeld", err)
	}
	if locked, err := cs[0].FencedLock("m").IsLocked(ctx); err != nil || locked {
		t.Fatalf("the unlock of a lost MultiLock left its other part locked (%v, %v)", locked, err)
	}
}

// Bad input of the constructors: reported by the first call, nothing sent.
func TestGroupLockBadInput(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	var nilLock *redisson.Lock
	for name, l := range map[string]redisson.Locker{
		"no parts":       redisson.NewMultiLock(),
		"nil part":       redisson.NewMultiLock(c.Lock("a"), nil),
		"nil pointer":    redisson.NewMultiLock(c.Lock("a"), nilLock),
		"twice":          redisson.NewMultiLock(c.Lock("a"), c.Lock("a")),
		"even RedLock":   redisson.NewRedLock(c.Lock("a"), c.Lock("b")),
		"small RedLock":  redisson.NewRedLock(c.Lock("a")),
		"nil MultiLock":  (*redisson.MultiLock)(nil),
		"nil RedLock":    (*redisson.RedLock)(nil),
		"RedLock nil in": redisson.NewRedLock(c.Lock("a"), nil, c.Lock("b")),
	} {
		if _, err := l.Lock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) || !errors.Is(err, redisson.ErrNotObtained) {
			t.Errorf("%s: Lock = %v; want ErrInvalidArgument and ErrNotObtained", name, err)
		}
		if _, err := l.IsLocked(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("%s: IsLocked = %v; want ErrInvalidArgument", name, err)
		}
	}
}

// A MultiLock over a ReadWriteLock's write side and a FairLock, and a RedLock over FairLocks: the
// parts allow it, so the groups work: while held, readers and the parts' other users are kept out.
func TestGroupsOverOtherKinds(t *testing.T) {
	_, cs := independent(t, 3)
	ctx := t.Context()
	m, err := redisson.NewMultiLock(cs[0].ReadWriteLock("g-rw"), cs[1].FairLock("g-fair")).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs[0].ReadWriteLock("g-rw").TryRLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a reader while a MultiLock holds the write side: %v; want ErrNotObtained", err)
	}
	mustUnlock(t, m)
	r := mustRLock(t, cs[0].ReadWriteLock("g-rw"), ctx) // free again
	mustUnlock(t, r)

	var fair []redisson.Locker
	for _, c := range cs {
		fair = append(fair, c.FairLock("g-red"))
	}
	h, err := redisson.NewRedLock(fair...).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs[2].FairLock("g-red").TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a part of a held RedLock: %v; want ErrNotObtained", err)
	}
	mustUnlock(t, h)
	for i, c := range cs {
		if locked, err := c.FairLock("g-red").IsLocked(ctx); err != nil || locked {
			t.Fatalf("part %d still locked after the RedLock's Unlock (%v, %v)", i, locked, err)
		}
	}
}

// lockKeyExists reports whether the key of the lock called name exists on rdb (default key prefix).
func lockKeyExists(t *testing.T, rdb *redis.Client, name string) bool {
	t.Helper()
	n, err := rdb.Exists(t.Context(), "{"+name+"}").Result()
	if err != nil {
		t.Fatalf("EXISTS {%s}: %v", name, err)
	}
	return n == 1
}

// A MultiLock that loses a part releases its other parts at once, every level of them, without
// waiting for Unlock: another Client can take them; the group's Unlock then reports ErrNotHeld and
// ErrLockLost and changes nothing (the part another Client took stays its).
func TestMultiLockLostReleasesOtherParts(t *testing.T) {
	servers, cs := independent(t, 3, redisson.WithWatchdogTimeout(600*time.Millisecond))
	ctx := t.Context()
	m := redisson.NewMultiLock(cs[0].Lock("ml-lost-a"), cs[1].FairLock("ml-lost-b"), cs[2].FencedLock("ml-lost-c"))
	h := mustLock(t, m, ctx)
	inner, err := h.Reenter(ctx) // two levels of every part
	if err != nil {
		t.Fatal(err)
	}
	// Part a lost: its key deleted behind the holder's back.
	if err := servers[0].Client(t).Del(ctx, "{ml-lost-a}").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a MultiLock that lost a part was not told")
	}
	rb, rc := servers[1].Client(t), servers[2].Client(t)
	eventually(t, 5*time.Second, "the surviving parts' keys to be released", func() bool {
		return !lockKeyExists(t, rb, "ml-lost-b") && !lockKeyExists(t, rc, "ml-lost-c")
	})
	other := newClient(t, servers[1].Client(t))
	taken, err := other.FairLock("ml-lost-b").TryLock(ctx)
	if err != nil {
		t.Fatalf("another Client after the loss: %v; want the part free", err)
	}
	for _, l := range []*redisson.Hold{inner, h} {
		err := l.Unlock(ctx)
		if !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
			t.Fatalf("unlock of a lost MultiLock: %v; want ErrNotHeld and ErrLockLost", err)
		}
	}
	if err := taken.Context().Err(); err != nil {
		t.Fatalf("the unlock of the lost group ended another Client's hold: %v", context.Cause(taken.Context()))
	}
	if n, err := taken.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("another Client's hold after the lost group's unlock: count %d, %v; want 1", n, err)
	}
	mustUnlock(t, taken)
}

// A RedLock that falls below a majority releases the parts it still holds at once: another Client
// can take them; its Unlock then reports ErrNotHeld and ErrLockLost and changes nothing.
func TestRedLockLostMajorityReleasesRest(t *testing.T) {
	servers, as := independent(t, 3, redisson.WithWatchdogTimeout(600*time.Millisecond))
	ctx := t.Context()
	h := mustLock(t, redLockOf(as, "rl-lost"), ctx)
	for i := range 2 {
		if err := servers[i].Client(t).Del(ctx, "{rl-lost}").Err(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-h.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a RedLock that lost its majority was not told")
	}
	r2 := servers[2].Client(t)
	eventually(t, 5*time.Second, "the remaining part's key to be released", func() bool {
		return !lockKeyExists(t, r2, "rl-lost")
	})
	other := newClient(t, servers[2].Client(t))
	taken, err := other.Lock("rl-lost").TryLock(ctx)
	if err != nil {
		t.Fatalf("another Client after the loss: %v; want the part free", err)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("unlock of a lost RedLock: %v; want ErrNotHeld and ErrLockLost", err)
	}
	if n, err := taken.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("another Client's hold after the lost group's unlock: count %d, %v; want 1", n, err)
	}
	mustUnlock(t, taken)
}

// A part lost while Unlocks and Reenters of the group's hold run concurrently: whatever the
// interleaving (a re-entry in flight when the loss is seen, an unlock racing the loss's release),
// every part ends released, by an Unlock or by the loss, and an Unlock called after the loss was
// reported says ErrNotHeld.
func TestMultiLockLossRacesUnlockAndReenter(t *testing.T) {
	servers, cs := independent(t, 2, redisson.WithWatchdogTimeout(300*time.Millisecond))
	ctx := t.Context()
	ra, rb := servers[0].Client(t), servers[1].Client(t)
	for round := range 4 {
		name := fmt.Sprintf("ml-race-%d", round)
		h := mustLock(t, redisson.NewMultiLock(cs[0].Lock(name), cs[1].Lock(name)), ctx)
		var wg sync.WaitGroup
		var mu sync.Mutex
		levels := []*redisson.Hold{h}
		var afterLoss []error // Unlocks called once the loss was reported
		for g := range 4 {
			spawn(&wg, func() {
				// Until the loss is reported, and a few calls more.
				for j := 0; j < 10000 && (h.Context().Err() == nil || j%50 != 0); j++ {
					if g%2 == 0 {
						if l, err := h.Reenter(ctx); err == nil {
							mu.Lock()
							levels = append(levels, l)
							mu.Unlock()
						}
						continue
					}
					mu.Lock()
					var l *redisson.Hold
					if len(levels) > 1 {
						l = levels[len(levels)-1]
						levels = levels[:len(levels)-1]
					}
					mu.Unlock()
					if l != nil {
						seen := h.Context().Err() != nil
						err := l.Unlock(ctx)
						if seen {
							mu.Lock()
							afterLoss = append(afterLoss, err)
							mu.Unlock()
						}
					}
				}
			})
		}
		if err := ra.Del(ctx, "{"+name+"}").Err(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if h.Context().Err() == nil {
			t.Fatalf("round %d: the loss was not reported", round)
		}
		for _, l := range levels {
			if err := l.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
				t.Fatalf("round %d: unlock after the loss: %v; want ErrNotHeld and ErrLockLost", round, err)
			}
		}
		for _, err := range afterLoss {
			if !errors.Is(err, redisson.ErrNotHeld) {
				t.Fatalf("round %d: unlock after the loss was reported: %v; want ErrNotHeld", round, err)
			}
		}
		eventually(t, 5*time.Second, "the surviving part to be released", func() bool {
			return !lockKeyExists(t, rb, name)
		})
		t.Logf("round %d: %d unlocks after the loss was reported, %d levels left", round, len(afterLoss), len(levels)-1)
	}
}

// A part lost while a Reenter of the group is in flight: the re-entry, whose other part answers
// after the loss was reported, fails (ErrNotHeld, ErrLockLost) and gives back what it took, so that
// the surviving part ends released: the loss's release freed the levels it knew of, the re-entry
// its own.
func TestMultiLockReenterInFlightWhenLost(t *testing.T) {
	srvA, srvB := redistest.Start(t), redistest.Start(t)
	p := redistest.NewProxy(t, srvB.Addr())
	a := newClient(t, srvA.Client(t), redisson.WithWatchdogTimeout(300*time.Millisecond))
	b := newClient(t, srvB.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	ctx := t.Context()
	h := mustLock(t, redisson.NewMultiLock(a.Lock("ml-inflight"), b.Lock("ml-inflight")), ctx)
	p.Delay(time.Second) // the part on B answers late from now on
	got := make(chan error, 1)
	go func() {
		l, err := h.Reenter(ctx)
		if err == nil {
			_ = l.Unlock(ctx)
		}
		got <- err
	}()
	// The part on A re-entered: the re-entry is in flight on B.
	eventually(t, 5*time.Second, "the re-entry of the part on A", func() bool {
		n, err := h.Parts()[0].HoldCount(ctx)
		return err == nil && n == 2
	})
	if err := srvA.Client(t).Del(ctx, "{ml-inflight}").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the loss was not reported")
	}
	select {
	case err := <-got:
		if !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
			t.Fatalf("a re-entry that completed after the loss: %v; want ErrNotHeld and ErrLockLost", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the re-entry did not return")
	}
	p.Delay(0)
	rb := srvB.Client(t)
	eventually(t, 10*time.Second, "the part on B to be released", func() bool {
		return !lockKeyExists(t, rb, "ml-inflight")
	})
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) || !errors.Is(err, redisson.ErrLockLost) {
		t.Fatalf("unlock of the lost group: %v; want ErrNotHeld and ErrLockLost", err)
	}
}

// Two MultiLocks over the same two locks (on two servers) in opposite orders, each through Clients
// of its own as two processes would be, both make progress and never hold at once: contending all
// along, each reaches its count of acquisitions well within a generous bound.
func TestMultiLockOppositeOrdersProgress(t *testing.T) {
	servers, a := independent(t, 2)
	b := []*redisson.Client{newClient(t, servers[0].Client(t)), newClient(t, servers[1].Client(t))}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const want = 200
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	var counts [2]atomic.Int32
	errs := make([]error, 2)
	for i, m := range []*redisson.MultiLock{
		redisson.NewMultiLock(a[0].Lock("ml-order-x"), a[1].Lock("ml-order-y")),
		redisson.NewMultiLock(b[1].Lock("ml-order-y"), b[0].Lock("ml-order-x")),
	} {
		spawn(&wg, func() {
			// Both keep going until both have their count: the contention lasts.
			for min(counts[0].Load(), counts[1].Load()) < want {
				h, err := m.Lock(ctx)
				if err != nil {
					errs[i] = err
					return
				}
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				time.Sleep(time.Millisecond) // the critical section
				inside.Add(-1)
				if err := h.Unlock(ctx); err != nil {
					errs[i] = err
					return
				}
				counts[i].Add(1)
			}
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d overlaps of the two groups", n)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("group %d after %d acquisitions (the other %d; %d wanted of each): %v", i, counts[i].Load(), counts[1-i].Load(), want, err)
		}
	}
}

// A RedLock's parts must be on distinct servers: the same Client twice, or two Clients over the same
// address, are refused by the first call, which sends nothing.
func TestRedLockRefusesSharedServer(t *testing.T) {
	c, rdb, srv := setup(t)
	c2 := newClient(t, srv.Client(t))
	_, others := independent(t, 2)
	ctx := t.Context()
	cluster := func(addrs ...string) *redisson.Client {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = cc.Close() })
		return newClient(t, cc)
	}
	for name, l := range map[string]*redisson.RedLock{
		"one Client":               redisson.NewRedLock(c.Lock("rs-1"), c.Lock("rs-2"), c.Lock("rs-3")),
		"one Client twice":         redisson.NewRedLock(c.Lock("rs"), others[0].Lock("rs"), c.Lock("rs-2")),
		"two Clients, one address": redisson.NewRedLock(c.Lock("rs"), others[0].Lock("rs"), c2.Lock("rs")),
		"one Cluster, two Clients": redisson.NewRedLock(cluster("127.0.0.1:1", "127.0.0.1:2").Lock("rs"),
			others[0].Lock("rs"), cluster("127.0.0.1:3", "127.0.0.1:2").Lock("rs")),
	} {
		for op, acquire := range map[string]func(context.Context, ...redisson.AcquireOption) (*redisson.Hold, error){
			"Lock": l.Lock, "TryLock": l.TryLock,
		} {
			h, err := acquire(ctx, redisson.WithWait(time.Second))
			if err == nil {
				_ = h.Unlock(ctx)
			}
			if !errors.Is(err, redisson.ErrInvalidArgument) || !errors.Is(err, redisson.ErrNotObtained) {
				t.Errorf("%s: %s = %v; want ErrInvalidArgument and ErrNotObtained", name, op, err)
			}
		}
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("refused RedLocks left %d keys (%v); want none", n, err)
	}
	// Three Clients over three servers are fine.
	h := mustLock(t, redisson.NewRedLock(c.Lock("rs"), others[0].Lock("rs"), others[1].Lock("rs")), ctx)
	mustUnlock(t, h)
}
