package redisson_test

import (
	"context"
	"errors"
	"fmt"
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
	r := regressWait(t, got, 10*time.Second, "B to get the RedLock")
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
