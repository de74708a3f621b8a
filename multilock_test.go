package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// groupLost waits (at most 5s) for the group hold h to be told of its loss, and checks the loss: its
// Context's cause matches ErrLockLost and its Unlock reports ErrNotHeld.
func groupLost(t *testing.T, ctx context.Context, h *redisson.Hold, what string) {
	t.Helper()
	faultWaitDone(t, h.Context(), 5*time.Second, what+" to be told of the loss")
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("%s: cause %v; want ErrLockLost", what, cause)
	}
	if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("%s: Unlock = %v; want ErrNotHeld", what, err)
	}
}

// proxiedServers starts n redis-servers, each behind a Proxy, and returns a Client over each proxy
// (its go-redis options also changed by mod), with the lock's scripts loaded (warmUpScripts), an
// admin client of each server (not proxied) and the proxies.
func proxiedServers(t *testing.T, n int, mod ...func(*redis.Options)) ([]*redisson.Client, []*redis.Client, []*redistest.Proxy) {
	t.Helper()
	var clients []*redisson.Client
	var admins []*redis.Client
	var proxies []*redistest.Proxy
	for range n {
		s := redistest.Start(t)
		p := redistest.NewProxy(t, s.Addr())
		proxies = append(proxies, p)
		admins = append(admins, s.Client(t))
		opts := append([]func(*redis.Options){func(o *redis.Options) { o.Addr = p.Addr() }}, mod...)
		clients = append(clients, newClient(t, s.Client(t, opts...)))
	}
	for _, c := range clients {
		warmUpScripts(t, c)
	}
	return clients, admins, proxies
}

// independent starts n redis-servers and one Client on each, quick to give up on a dead server and
// to use it again once restarted (a go-redis pool that saw PoolSize failed dials answers with the
// last dial error until a background dial succeeds, up to a second later).
func independent(t *testing.T, n int, opts ...redisson.Option) ([]*redistest.Server, []*redisson.Client) {
	var servers []*redistest.Server
	var clients []*redisson.Client
	for range n {
		s := redistest.Start(t)
		servers = append(servers, s)
		clients = append(clients, newClient(t, s.Client(t, quickToGiveUp), opts...))
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
	long(t)
	t.Parallel()
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
	long(t)
	t.Parallel()
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
	groupLost(t, ctx, h, "a RedLock that lost its majority")
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
	long(t)
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
	faultWaitDone(t, h.Context(), 5*time.Second, "a MultiLock that lost a part to be told")
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
	n, err := rdb.Exists(t.Context(), name).Result()
	if err != nil {
		t.Fatalf("EXISTS {%s}: %v", name, err)
	}
	return n == 1
}

// A MultiLock that loses a part releases its other parts at once, every level of them, without
// waiting for Unlock: another Client can take them; the group's Unlock then reports ErrNotHeld and
// ErrLockLost and changes nothing (the part another Client took stays its).
func TestMultiLockLostReleasesOtherParts(t *testing.T) {
	long(t)
	t.Parallel()
	servers, cs := independent(t, 3, redisson.WithWatchdogTimeout(600*time.Millisecond))
	ctx := t.Context()
	m := redisson.NewMultiLock(cs[0].Lock("ml-lost-a"), cs[1].FairLock("ml-lost-b"), cs[2].FencedLock("ml-lost-c"))
	h := mustLock(t, m, ctx)
	inner, err := h.Reenter(ctx) // two levels of every part
	if err != nil {
		t.Fatal(err)
	}
	// Part a lost: its key deleted behind the holder's back.
	if err := servers[0].Client(t).Del(ctx, "ml-lost-a").Err(); err != nil {
		t.Fatal(err)
	}
	faultWaitDone(t, h.Context(), 10*time.Second, "a MultiLock that lost a part to be told")
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
	long(t)
	t.Parallel()
	servers, as := independent(t, 3, redisson.WithWatchdogTimeout(600*time.Millisecond))
	ctx := t.Context()
	h := mustLock(t, redLockOf(as, "rl-lost"), ctx)
	for i := range 2 {
		if err := servers[i].Client(t).Del(ctx, "rl-lost").Err(); err != nil {
			t.Fatal(err)
		}
	}
	faultWaitDone(t, h.Context(), 10*time.Second, "a RedLock that lost its majority to be told")
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
		if err := ra.Del(ctx, name).Err(); err != nil {
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
	long(t)
	t.Parallel()
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
	if err := srvA.Client(t).Del(ctx, "ml-inflight").Err(); err != nil {
		t.Fatal(err)
	}
	faultWaitDone(t, h.Context(), 10*time.Second, "the loss to be reported")
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
	long(t)
	t.Parallel()
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

// noPanic runs f and turns a panic into a test error (so that one panicking call does not take
// the whole test binary down).
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// quickToGiveUp tunes go-redis to give up quickly on a silent server (one retry, a 200ms dial
// timeout, one dial attempt) and to keep a large pool.
func quickToGiveUp(o *redis.Options) {
	o.MaxRetries, o.DialTimeout, o.DialerRetries, o.PoolSize = 1, 200*time.Millisecond, 1, 1000
}

// A group acquisition ends with ErrClosed as soon as a part's Client is closed, instead of retrying
// rounds until its context ends (MultiLock.Lock and RedLock.Lock wait "until it succeeds, ctx ends,
// the optional WithWait bound passes, or a part's Client is closed").
//
// Cases: a MultiLock whose part's Client is closed before Lock; a MultiLock waiting for a part held
// by another owner, whose Client is closed during the wait; a RedLock with two of its three part
// Clients closed (no majority can ever be acquired). Each Lock must fail with ErrClosed well before
// its 3s context ends.
func TestGroupLockFailsAtOnceWhenPartClientClosed(t *testing.T) {
	srv := redistest.Start(t)
	const bound = 3 * time.Second
	check := func(t *testing.T, what string, lock func(ctx context.Context) (*redisson.Hold, error)) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), bound)
		defer cancel()
		start := time.Now()
		h, err := lock(ctx)
		took := time.Since(start)
		if err == nil {
			_ = h.Unlock(t.Context())
			t.Errorf("%s: acquired with a closed part Client", what)
			return
		}
		if !errors.Is(err, redisson.ErrClosed) || took > bound/2 {
			t.Errorf("%s: Lock returned after %v with %v; want ErrClosed at once (a part's Client was closed)",
				what, took.Round(time.Millisecond), err)
		}
	}

	t.Run("MultiLockClosedBefore", func(t *testing.T) {
		a := newClient(t, srv.Client(t))
		b := newClient(t, srv.Client(t))
		ml := redisson.NewMultiLock(a.Lock("grp-closed-1a"), b.Lock("grp-closed-1b"))
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		check(t, "MultiLock, part Client closed before Lock", func(ctx context.Context) (*redisson.Hold, error) {
			return ml.Lock(ctx)
		})
	})
	t.Run("MultiLockClosedWhileWaiting", func(t *testing.T) {
		a := newClient(t, srv.Client(t))
		b := newClient(t, srv.Client(t))
		other := newClient(t, srv.Client(t))
		held := mustLock(t, other.Lock("grp-closed-2b"), t.Context())
		defer func() { _ = held.Unlock(t.Context()) }()
		// B's part first: a group waits only for its first part (the others get one attempt).
		ml := redisson.NewMultiLock(b.Lock("grp-closed-2b"), a.Lock("grp-closed-2a"))
		eventuallyClosed := make(chan struct{})
		go func() {
			defer close(eventuallyClosed)
			deadline := time.Now().Add(2 * time.Second)
			for b.Stats().Waiting == 0 && time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
			}
			_ = b.Close()
		}()
		check(t, "MultiLock, part Client closed while waiting", func(ctx context.Context) (*redisson.Hold, error) {
			return ml.Lock(ctx)
		})
		<-eventuallyClosed
	})
	t.Run("RedLockClosedMajority", func(t *testing.T) {
		_, cs := independent(t, 3) // a RedLock's parts are on distinct servers
		a, b, c := cs[0], cs[1], cs[2]
		rl := redisson.NewRedLock(a.Lock("grp-closed-3"), b.Lock("grp-closed-3"), c.Lock("grp-closed-3"))
		_ = b.Close()
		_ = c.Close()
		check(t, "RedLock, 2 of 3 part Clients closed", func(ctx context.Context) (*redisson.Hold, error) {
			return rl.Lock(ctx)
		})
	})
}

// A zero-value MultiLock or RedLock (a struct field left unset, not made by NewMultiLock or
// NewRedLock) fails every call with ErrInvalidArgument, as a zero Lock does, and nothing panics: a
// group over no lock must never report an acquisition (mutual exclusion silently lost), and
// RemainingTTL or the HoldCount of a hold must not index an empty quorum.
func TestGroupLockZeroValueRefused(t *testing.T) {
	ctx := t.Context()
	var zl redisson.Lock
	if _, err := zl.Lock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("control: zero Lock.Lock = %v; want ErrInvalidArgument", err)
	}
	groups := map[string]redisson.Locker{"MultiLock": &redisson.MultiLock{}, "RedLock": &redisson.RedLock{}}
	for _, kind := range []string{"MultiLock", "RedLock"} {
		l := groups[kind]
		noPanic(t, "zero "+kind+".Lock", func() {
			h, err := l.Lock(ctx)
			if err == nil {
				t.Errorf("zero %s.Lock succeeded (a hold over no lock at all); want ErrInvalidArgument", kind)
				noPanic(t, "HoldCount of a zero "+kind+"'s hold", func() {
					if _, err := h.HoldCount(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
						t.Errorf("HoldCount of a zero %s's hold = %v; want an error", kind, err)
					}
				})
				_ = h.Unlock(ctx)
			} else if !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Errorf("zero %s.Lock = %v; want ErrInvalidArgument", kind, err)
			}
		})
		noPanic(t, "zero "+kind+".TryLock", func() {
			h, err := l.TryLock(ctx)
			if err == nil {
				t.Errorf("zero %s.TryLock succeeded; want ErrInvalidArgument", kind)
				_ = h.Unlock(ctx)
			}
		})
		noPanic(t, "zero "+kind+".RemainingTTL", func() {
			if _, err := l.RemainingTTL(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Errorf("zero %s.RemainingTTL = %v; want ErrInvalidArgument", kind, err)
			}
		})
	}
}

// The same lock given twice to a MultiLock, once directly and once inside a nested group, is
// refused at once with ErrInvalidArgument, as a duplicate among the top-level parts is
// (NewMultiLock: "the same lock (same Client and name) twice ... reported by the first call"). Left
// unnoticed, the inner group would wait for the lock its own outer round holds until the context
// ends.
func TestMultiLockRefusesLockRepeatedInNestedGroup(t *testing.T) {
	c, _, _ := setup(t)
	a := c.Lock("grp-nested")
	ml := redisson.NewMultiLock(a, redisson.NewMultiLock(a))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	start := time.Now()
	h, err := ml.Lock(ctx)
	if err == nil {
		_ = h.Unlock(t.Context())
		t.Fatal("a MultiLock holding the same lock twice (once nested) was acquired")
	}
	if !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("Lock after %v = %v; want ErrInvalidArgument at once (lock %q appears twice)",
			time.Since(start).Round(time.Millisecond), err, a.Name())
	}
}

// A RedLock re-entry never leaves a hold alive over a minority of its parts. Scenario: three
// servers (watchdog 3s), part 2 behind a proxy that delays it by 300ms while h1.Reenter runs with a
// 150ms context.
//
// Either the re-entry fails as a whole (ErrNotObtained; every part back to one level; the group
// still held), or, if it returned a level without part 2, that level counts the parts it lost or
// that an unlock released: after h1's unlock frees part 2 and another Client force-unlocks part 0,
// only part 1 is held, so h2's Context must end (ErrLockLost), and no other RedLock over the same
// locks may be acquired while it is alive.
func TestRedLockReenterNeverKeepsMinority(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "grp-red-reenter"
	var as, bs []*redisson.Client
	var proxy *redistest.Proxy
	for i := range 3 {
		s := redistest.Start(t)
		var rdb *redis.Client
		if i == 2 {
			proxy = redistest.NewProxy(t, s.Addr())
			rdb = s.Client(t, func(o *redis.Options) { o.Addr = proxy.Addr() })
		} else {
			rdb = s.Client(t)
		}
		as = append(as, newClient(t, rdb, redisson.WithWatchdogTimeout(3*time.Second)))
		bs = append(bs, newClient(t, s.Client(t)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	h1, err := redLockOf(as, name).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proxy.Delay(300 * time.Millisecond)
	rctx, rcancel := context.WithTimeout(ctx, 150*time.Millisecond)
	h2, err := h1.Reenter(rctx)
	rcancel()
	proxy.Delay(0)
	if err != nil {
		// A group re-enters every live part or none, so no level can lack a part that the others
		// have. The failed re-entry took back what it took: every part holds one level.
		if !errors.Is(err, redisson.ErrNotObtained) {
			t.Fatalf("a failed re-entry: %v; want ErrNotObtained", err)
		}
		for i, p := range h1.Parts() {
			eventually(t, 5*time.Second, fmt.Sprintf("part %d back to one level", i), func() bool {
				n, err := p.HoldCount(ctx)
				return err == nil && n == 1
			})
		}
		if err := h1.Context().Err(); err != nil {
			t.Fatalf("the group was ended by a failed re-entry: %v", context.Cause(h1.Context()))
		}
		mustUnlock(t, h1)
		return
	}
	if p := h2.Parts(); p[2] != nil || p[0] == nil || p[1] == nil {
		t.Fatalf("the re-entry's parts: %v; want parts 0 and 1 only", p)
	}
	if err := h1.Unlock(ctx); err != nil {
		t.Fatalf("unlock of level 1: %v", err)
	}
	eventually(t, 5*time.Second, "part 2 to be free (its only level was released)", func() bool {
		locked, err := bs[2].Lock(name).IsLocked(ctx)
		return err == nil && !locked
	})
	if _, err := bs[0].Lock(name).ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "part 0's loss to be noticed", func() bool {
		return h2.Parts()[0].Context().Err() != nil
	})
	// Only part 1 is held now.
	select {
	case <-h2.Context().Done():
		return // told: fine
	case <-time.After(2 * time.Second):
	}
	t.Errorf("h2's Context alive with 1 of 3 parts held (part 0 lost, part 2 released by h1's unlock)")
	h3, err := redLockOf(bs, name).TryLock(ctx)
	if err == nil {
		if h2.Context().Err() == nil {
			t.Errorf("two owners: another RedLock acquired parts %v while h2's Context is alive", partsHeld(h3))
		}
		_ = h3.Unlock(ctx)
	}
	_ = h2.Unlock(ctx)
}

// partsHeld lists the indexes of the parts a group hold holds.
func partsHeld(h *redisson.Hold) []int {
	var idx []int
	for i, p := range h.Parts() {
		if p != nil {
			idx = append(idx, i)
		}
	}
	return idx
}

// A RedLock is acquired while a minority of its servers is silent (a black-holed network: the
// failure Redlock is meant to tolerate). An attempt tries every part at once, each bounded by a
// tenth of the lease (at most 1s), and the undo of the silent part's unknown outcome must not hold
// the round up: with one of three servers black-holed, TryLock(WithLease(3s)) succeeds within 1.5s.
// Were the undo waited for, the round would outlast the lease and give the healthy parts back.
func TestRedLockAcquiredWithSilentMinority(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "grp-red-silent"
	var clients []*redisson.Client
	var proxy *redistest.Proxy
	for i := range 3 {
		s := redistest.Start(t)
		var rdb *redis.Client
		if i == 0 {
			proxy = redistest.NewProxy(t, s.Addr())
			rdb = s.Client(t, quickToGiveUp, func(o *redis.Options) { o.Addr = proxy.Addr() })
		} else {
			rdb = s.Client(t, quickToGiveUp)
		}
		clients = append(clients, newClient(t, rdb))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	warmUpScripts(t, clients[0])
	proxy.Blackhole(true)
	defer proxy.Blackhole(false)
	start := time.Now()
	h, err := redLockOf(clients, name).TryLock(ctx, redisson.WithLease(3*time.Second))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("TryLock with 2 of 3 servers healthy failed after %v: %v", took.Round(time.Millisecond), err)
	}
	defer func() { _ = h.Unlock(ctx) }()
	if took > 1500*time.Millisecond {
		t.Errorf("TryLock took %v; want about lease/10 (300ms) at most", took.Round(time.Millisecond))
	}
}

// The final Unlock of a MultiLock whose part was force-unlocked by another Client (before the
// watchdog noticed) releases the other part and reports ErrLockLost (not ErrNotHeld: it did release
// something), and the group's Context ends with a cause matching ErrLockLost, so that work watching
// the Context learns that it ran without the lock (Hold.Context). A single Lock in the same
// situation is checked first, as a control.
func TestMultiLockUnlockAfterUnnoticedLossReportsLoss(t *testing.T) {
	a, _, srv := setup(t)
	b := newClient(t, srv.Client(t))
	ctx := t.Context()

	// Control: a single Lock.
	single := mustLock(t, a.Lock("grp-unnoticed-single"), ctx)
	if _, err := b.Lock("grp-unnoticed-single").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := single.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) {
		t.Fatalf("control: unlock of a force-unlocked Lock = %v; want ErrNotHeld", err)
	}
	if cause := context.Cause(single.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Fatalf("control: single Lock's cause %v; want ErrLockLost", cause)
	}

	ml := redisson.NewMultiLock(a.Lock("grp-unnoticed-0"), a.Lock("grp-unnoticed-1"))
	h := mustLock(t, ml, ctx)
	if _, err := b.Lock("grp-unnoticed-0").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	// ErrLockLost, not ErrNotHeld: the Unlock released the other part, so it did change something
	// (ErrNotHeld means "changing nothing", as after a loss already reported).
	err := h.Unlock(ctx)
	if !errors.Is(err, redisson.ErrLockLost) || errors.Is(err, redisson.ErrNotHeld) {
		t.Errorf("unlock of a MultiLock with a part force-unlocked = %v; want ErrLockLost, not ErrNotHeld", err)
	}
	if h.Context().Err() == nil {
		t.Fatal("the group's Context is alive after its final Unlock")
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, redisson.ErrLockLost) {
		t.Errorf("the group's Context cause after an Unlock that reported %q is %v; want ErrLockLost", err, cause)
	}
	if locked, err := a.Lock("grp-unnoticed-1").IsLocked(ctx); err != nil || locked {
		t.Errorf("the other part was left locked (%v, %v)", locked, err)
	}
}

// A MultiLock waiting for a FairLock part keeps its place in the FairLock's queue across its
// rounds: queued before a plain FairLock waiter of another Client, it is served first when the
// holder releases after 2.5s, longer than a round (FairLock: first come, first served; MultiLock:
// each part waited for in turn).
func TestMultiLockFairPartKeepsItsPlace(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "grp-fair-place"
	hc, _, srv := setup(t)
	mc := newClient(t, srv.Client(t))
	wc := newClient(t, srv.Client(t))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	held := mustLock(t, hc.FairLock(name), ctx)

	var order []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	take := func(who string, l redisson.Locker) {
		h, err := l.Lock(ctx)
		if err != nil {
			t.Errorf("%s: %v", who, err)
			return
		}
		mu.Lock()
		order = append(order, who)
		mu.Unlock()
		time.Sleep(100 * time.Millisecond) // the critical section
		_ = h.Unlock(ctx)
	}
	spawn(&wg, func() { take("multi", redisson.NewMultiLock(mc.FairLock(name))) })
	eventually(t, 5*time.Second, "the MultiLock to queue", func() bool { return mc.Stats().Waiting == 1 })
	spawn(&wg, func() { take("single", wc.FairLock(name)) })
	eventually(t, 5*time.Second, "the FairLock waiter to queue", func() bool { return wc.Stats().Waiting == 1 })
	time.Sleep(2500 * time.Millisecond) // H's critical section: longer than a MultiLock round
	mustUnlock(t, held)
	wg.Wait()
	if len(order) != 2 || order[0] != "multi" {
		t.Errorf("service order %v; want [multi single] (the MultiLock queued first)", order)
	}
}

// A RedLock attempt whose parts all answer later than its bound (every server behind a proxy
// delaying 700ms each way, attempts bounded by 1s) fails, and its background undos leave no part
// held on any server once the delayed requests have landed, well before the 20s lease would free
// them.
func TestRedLockSlowPartsLeaveNothingHeld(t *testing.T) {
	long(t)
	t.Parallel()
	const name = "grp-red-slow"
	clients, admins, proxies := proxiedServers(t, 3)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	for _, p := range proxies {
		p.Delay(700 * time.Millisecond)
	}
	_, err := redLockOf(clients, name).TryLock(ctx, redisson.WithLease(20*time.Second)) // attempts bounded by 1s
	if err == nil {
		t.Fatal("acquired through a 1.4s round trip with attempts bounded by 1s? (test setup)")
	}
	for _, p := range proxies {
		p.Delay(0)
	}
	key := redisson.LockKeyOf(clients[0], name)
	// The undo is retried in the background (250ms, 1s, 4s after): within 6s nothing may be held.
	eventually(t, 6*time.Second, "every part to be free", func() bool {
		for _, a := range admins {
			if n, err := a.Exists(ctx, key).Result(); err != nil || n != 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(time.Second) // nothing lands later
	for i, a := range admins {
		if v, err := a.Get(ctx, key).Result(); !errors.Is(err, redis.Nil) {
			t.Errorf("server %d: %s = %q (%v) after the failed attempt: a part left held", i, key, v, err)
		}
	}
}

// Closing a part's Client while a MultiLock is held loses the group: its Context ends with a cause
// matching ErrLockLost, its Unlock reports ErrNotHeld, and the other part is released.
func TestMultiLockHeldPartClientClosedLosesGroup(t *testing.T) {
	a, _, srv := setup(t)
	b := newClient(t, srv.Client(t))
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	ml := redisson.NewMultiLock(a.Lock("grp-pcc-a"), b.SpinLock("grp-pcc-b"))
	h := mustLock(t, ml, ctx)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	groupLost(t, ctx, h, "a group whose part's Client closed")
	if locked, err := c.Lock("grp-pcc-a").IsLocked(ctx); err != nil || locked {
		t.Errorf("part a left locked (%v, %v)", locked, err)
	}
}

// Concurrent Unlock and Reenter of one MultiLock or RedLock hold from 16 goroutines: exactly one
// Unlock succeeds, every re-entered level can be unlocked, and afterwards nothing is held and the
// Context has ended.
func TestGroupHoldConcurrentUnlockAndReenter(t *testing.T) {
	c, _, srv := setup(t)
	other := newClient(t, srv.Client(t))
	withRedLockPeers(t, c)
	withRedLockPeers(t, other)
	ctx := t.Context()
	for _, kind := range []string{"MultiLock", "RedLock"} {
		t.Run(kind, func(t *testing.T) {
			name := "grp-conc-" + kind
			h := mustLock(t, lockOf(c, kind, name), ctx)
			var ok atomic.Int32
			var levels sync.Map
			var wg sync.WaitGroup
			for i := range 16 {
				spawn(&wg, func() {
					if i%2 == 0 {
						if err := h.Unlock(ctx); err == nil {
							ok.Add(1)
						}
						return
					}
					if l, err := h.Reenter(ctx); err == nil {
						levels.Store(i, l)
					}
				})
			}
			wg.Wait()
			if ok.Load() != 1 {
				t.Errorf("%d concurrent Unlocks succeeded; want 1", ok.Load())
			}
			levels.Range(func(_, v any) bool {
				if err := v.(*redisson.Hold).Unlock(ctx); err != nil {
					t.Errorf("unlock of a re-entered level: %v", err)
				}
				return true
			})
			if h.Context().Err() == nil {
				t.Error("Context alive after every level was unlocked")
			}
			if locked, err := lockOf(other, kind, name).IsLocked(ctx); err != nil || locked {
				t.Errorf("left locked (%v, %v)", locked, err)
			}
		})
	}
}

// MultiLock.Lock never reports success with a part it lost during its round ("all of them or
// none"). Scenario: the round takes part a while its attempt on part b (through a proxy delaying
// replies by 1s) is in flight; meanwhile another Client force-unlocks a and takes it, and the
// holder's watchdog (600ms) finds a lost. When b's attempt returns, Lock must fail or go on waiting
// (bounded here by WithWait(6s)); it must not return a hold while a is held by the other owner.
func TestMultiLockNeverReturnsLostPart(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	a := newClient(t, srv.Client(t), redisson.WithWatchdogTimeout(600*time.Millisecond))
	slow := newClient(t, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() }))
	x := newClient(t, srv.Client(t))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	mustUnlock(t, mustLock(t, slow.Lock("grp-lostpart-b"), ctx)) // a connection, scripts loaded
	p.Delay(time.Second)                                         // pb's attempt takes 2s from now on
	got := make(chan lockResult, 1)
	go func() {
		// Bounded: going on waiting (pa stays held by X) is a correct outcome too.
		h, err := redisson.NewMultiLock(a.Lock("grp-lostpart-a"), slow.Lock("grp-lostpart-b")).Lock(ctx, redisson.WithWait(6*time.Second))
		got <- lockResult{h, err}
	}()
	eventually(t, 5*time.Second, "the round to take pa", func() bool {
		locked, err := x.Lock("grp-lostpart-a").IsLocked(ctx)
		return err == nil && locked
	})
	if _, err := x.Lock("grp-lostpart-a").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	heldA := mustLock(t, x.Lock("grp-lostpart-a"), ctx)
	defer func() { _ = heldA.Unlock(t.Context()) }()
	eventually(t, 5*time.Second, "A's watchdog to find pa lost", func() bool { return a.Stats().Lost >= 1 })
	r := recvWithin(t, got, 20*time.Second, "the MultiLock's Lock")
	p.Delay(0)
	if r.err != nil {
		// Not obtained is acceptable; so is a later success once pa is free again.
		return
	}
	defer func() { _ = r.h.Unlock(t.Context()) }()
	if heldA.Context().Err() == nil {
		t.Errorf("MultiLock.Lock returned success (Context err %v) while part %q is held by another owner",
			r.h.Context().Err(), "grp-lostpart-a")
	}
}

// RedLock attempts whose parts' replies are lost (the acquisition ran, its reply never came,
// go-redis sent it again), for each combination of parts: each part ends held or free, and after
// the group's Unlock (or the failed attempt) no part is left held on any server.
func TestRedLockLostRepliesLeaveNothingHeld(t *testing.T) {
	long(t)
	const name = "grp-red-drop"
	clients, admins, proxies := proxiedServers(t, 3, func(o *redis.Options) {
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	})
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	key := redisson.LockKeyOf(clients[0], name)
	free := func() bool {
		for _, a := range admins {
			if n, err := a.Exists(ctx, key).Result(); err != nil || n != 0 {
				return false
			}
		}
		return true
	}
	for round := range 6 {
		for i, p := range proxies {
			if (round>>i)&1 == 1 || round == 5 {
				p.DropReplies(1)
			}
		}
		h, err := redLockOf(clients, name).TryLock(ctx, redisson.WithLease(20*time.Second))
		for _, p := range proxies {
			p.DropReplies(0)
		}
		if err == nil {
			if err := h.Unlock(ctx); err != nil {
				t.Errorf("round %d: unlock: %v", round, err)
			}
		}
		eventually(t, 6*time.Second, fmt.Sprintf("round %d: every part free", round), free)
	}
}

// A RedLock wait keeps its WithWait bound while a minority of its servers is silent: TryLock with
// WithWait(200ms), on a context with no deadline, of a RedLock whose first server is black-holed and
// whose two other parts are held by another owner. Each round waits for every part's answer up to a
// tenth of the lease (at most 1s, here 1s: the watchdog lease is 30s), whatever the WithWait bound
// left, so the call returns a second after it began instead of within the bound ("It returns within
// the earlier of ctx's deadline and the WithWait bound (plus its grace...), whatever Redis
// does").
func TestRedLockWaitKeepsItsBoundWithSilentMinority(t *testing.T) {
	t.Parallel()
	const (
		name  = "grp-red-bound"
		bound = 200 * time.Millisecond
	)
	var clients []*redisson.Client
	var proxy *redistest.Proxy
	for i := range 3 {
		s := redistest.Start(t)
		var rdb *redis.Client
		if i == 0 {
			proxy = redistest.NewProxy(t, s.Addr())
			rdb = s.Client(t, quickToGiveUp, func(o *redis.Options) { o.Addr = proxy.Addr() })
		} else {
			rdb = s.Client(t, quickToGiveUp)
			// Another owner holds this part: no majority can be had.
			mustLock(t, newClient(t, s.Client(t)).Lock(name), t.Context())
		}
		clients = append(clients, newClient(t, rdb))
	}
	// Every Client warmed up: one that has had no answer yet counts a round trip as 100ms in its
	// attempts' grace (see doc.go), which this bound's slack does not allow for.
	for _, c := range clients {
		warmUpScripts(t, c)
	}
	proxy.Blackhole(true)
	defer proxy.Blackhole(false)
	start := time.Now()
	h, err := redLockOf(clients, name).TryLock(context.Background(), redisson.WithWait(bound))
	took := time.Since(start)
	if err == nil {
		_ = h.Unlock(t.Context())
		t.Fatal("TryLock got a majority of parts, two of which another owner holds")
	}
	if took > bound+deadlineSlack {
		t.Errorf("TryLock(WithWait(%v)) with one server silent and two parts held returned after %v: %v", bound, took.Round(time.Millisecond), err)
	}
}

// A MultiLock wait keeps its WithWait bound when the release of a round's parts goes unanswered: the
// first part is taken (through a proxy), the second is held by another owner, and the proxy goes
// silent as the second part's attempt is made, so that the round's release of the first part gets no
// answer. The round releases with the caller's context (here context.Background, no deadline), and
// waits for the release up to its clean-up bound (5s), far past the 300ms WithWait bound.
func TestMultiLockWaitKeepsItsBoundWhenRoundReleaseUnanswered(t *testing.T) {
	t.Parallel()
	const bound = 300 * time.Millisecond
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	a := newClient(t, srv.Client(t, quickToGiveUp, func(o *redis.Options) { o.Addr = p.Addr() }))
	warmUpScripts(t, a)
	hook := &aroundHook{}
	rdb := srv.Client(t)
	rdb.AddHook(hook)
	b := newClient(t, rdb)
	warmUpScripts(t, b)
	mustLock(t, newClient(t, srv.Client(t)).Lock("grp-bound-round-b"), t.Context()) // the second part is another's
	var silenced atomic.Bool
	hook.setCmd(func(ctx context.Context, _ []string, _ redis.Cmder, next func() error) error {
		if !silenced.Swap(true) {
			p.Blackhole(true) // the first part is held: its release will get no answer
		}
		return next()
	})
	defer p.Blackhole(false)
	ml := redisson.NewMultiLock(a.Lock("grp-bound-round-a"), b.Lock("grp-bound-round-b"))
	start := time.Now()
	h, err := ml.TryLock(context.Background(), redisson.WithWait(bound))
	took := time.Since(start)
	if err == nil {
		_ = h.Unlock(t.Context())
		t.Fatal("TryLock took a part another owner holds")
	}
	if !silenced.Load() {
		t.Fatal("the second part was never tried: the interleaving did not happen")
	}
	if took > bound+deadlineSlack {
		t.Errorf("TryLock(WithWait(%v)) whose round release got no answer returned after %v: %v", bound, took.Round(time.Millisecond), err)
	}
}

// A RedLock that fails for want of answers from a majority of its servers (two of three black-holed)
// failed because Redis did not answer, not for contention, and not because the caller's context
// ended (context.Background here): its error must match neither ErrBusy nor
// context.DeadlineExceeded, nor say "context deadline exceeded" (the deadline is the round's own, a
// tenth of the lease). The third
// part, held by another owner, answers "busy": that alone would not have kept a majority from the
// RedLock (two free parts of three would be).
func TestRedLockSilentMajorityIsNotBusyNorDeadline(t *testing.T) {
	t.Parallel()
	const name = "grp-red-silent-majority"
	var clients []*redisson.Client
	var proxies []*redistest.Proxy
	for i := range 3 {
		s := redistest.Start(t)
		if i < 2 {
			p := redistest.NewProxy(t, s.Addr())
			proxies = append(proxies, p)
			c := newClient(t, s.Client(t, quickToGiveUp, func(o *redis.Options) { o.Addr = p.Addr() }))
			warmUpScripts(t, c)
			clients = append(clients, c)
			continue
		}
		mustLock(t, newClient(t, s.Client(t)).Lock(name), t.Context())
		clients = append(clients, newClient(t, s.Client(t, quickToGiveUp)))
	}
	for _, p := range proxies {
		p.Blackhole(true)
		defer p.Blackhole(false)
	}
	h, err := redLockOf(clients, name).TryLock(context.Background(), redisson.WithLease(2*time.Second))
	if err == nil {
		_ = h.Unlock(t.Context())
		t.Fatal("TryLock got a majority with two of three servers silent")
	}
	if errors.Is(err, redisson.ErrBusy) {
		t.Errorf("TryLock failed for want of answers, yet matches ErrBusy: %q", err)
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("TryLock on context.Background says its context's deadline passed: %v", err)
	}
}
