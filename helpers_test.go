package redisson_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// newClient returns a redisson Client over rdb, closed when the test ends (before rdb is closed:
// cleanups run last-in first-out).
func newClient(tb testing.TB, rdb redis.UniversalClient, opts ...redisson.Option) *redisson.Client {
	tb.Helper()
	c, err := redisson.New(rdb, opts...)
	if err != nil {
		tb.Fatalf("redisson.New: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// setup starts a fresh redis-server and a Client over it; both are closed when the test ends.
func setup(t *testing.T, opts ...redisson.Option) (*redisson.Client, *redis.Client, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	return newClient(t, rdb, opts...), rdb, srv
}

// mustLock acquires l or fails the test.
func mustLock(t *testing.T, l redisson.Locker, ctx context.Context, opts ...redisson.AcquireOption) *redisson.Hold {
	t.Helper()
	h, err := l.Lock(ctx, opts...)
	if err != nil {
		t.Fatalf("Lock(%q) = %v", l.Name(), err)
	}
	return h
}

// eventually polls cond every few milliseconds until it returns true, failing the test if it has
// not within timeout. It is a bounded wait for a condition, not a timing assertion.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// spawn runs f in a goroutine counted by wg (sync.WaitGroup.Go needs Go 1.25; the module supports 1.24).
func spawn(wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		f()
	}()
}

// Lock kinds, for tests that run over every kind.
var lockKinds = []string{"Lock", "FairLock", "FencedLock"}

// lockOf returns the lock of kind called name from c.
func lockOf(c *redisson.Client, kind, name string) redisson.Locker {
	switch kind {
	case "FairLock":
		return c.FairLock(name)
	case "FencedLock":
		return c.FencedLock(name)
	case "SpinLock":
		return c.SpinLock(name)
	case "ReadWriteLock": // its write side
		return c.ReadWriteLock(name)
	case "MultiLock": // parts of two kinds
		return redisson.NewMultiLock(c.Lock(partName(name, "a")), c.FairLock(partName(name, "b")))
	case "RedLock": // three parts on three servers: c's, and its peers' (withRedLockPeers)
		parts := []redisson.Locker{c.Lock(partName(name, "1"))}
		if peers, ok := redLockPeers.Load(c); ok {
			for i, pc := range peers.([2]*redisson.Client) {
				parts = append(parts, pc.Lock(partName(name, strconv.Itoa(i+2))))
			}
		} else { // no peers registered: a RedLock on one Client, which its first call refuses
			parts = append(parts, c.Lock(partName(name, "2")), c.Lock(partName(name, "3")))
		}
		return redisson.NewRedLock(parts...)
	}
	return c.Lock(name)
}

// redLockPeers maps a Client to the two Clients, on two other servers, through which the RedLocks
// lockOf builds with it take their second and third parts: a RedLock refuses parts on one server.
var redLockPeers sync.Map // *redisson.Client → [2]*redisson.Client

// redLockServers holds each test's two RedLock servers (see withRedLockPeers).
var redLockServers sync.Map // *testing.T → [2]*redistest.Server

// withRedLockPeers registers c's RedLock peers (see lockOf): two new Clients with opts over the
// test's two RedLock servers, started on its first call and shared by all the Clients of the test,
// so that they all lock the same RedLocks. It returns c.
func withRedLockPeers(t *testing.T, c *redisson.Client, opts ...redisson.Option) *redisson.Client {
	t.Helper()
	var servers [2]*redistest.Server
	if s, ok := redLockServers.Load(t); ok {
		servers = s.([2]*redistest.Server)
	} else {
		servers = [2]*redistest.Server{redistest.Start(t), redistest.Start(t)}
		redLockServers.Store(t, servers)
		t.Cleanup(func() { redLockServers.Delete(t) })
	}
	var peers [2]*redisson.Client
	for i, s := range servers {
		peers[i] = newClient(t, s.Client(t), opts...)
	}
	redLockPeers.Store(c, peers)
	t.Cleanup(func() { redLockPeers.Delete(c) })
	return c
}

// partName names a part of a group lock called name ("" stays "": a bad name).
func partName(name, part string) string {
	if name == "" {
		return ""
	}
	return name + "-" + part
}

// lockResult is what a Lock call made on another goroutine returned.
type lockResult struct {
	h   *redisson.Hold
	err error
}

// lockAsync calls l.Lock on another goroutine with a context derived from ctx, cancelled by the
// returned function; the result arrives on the channel.
func lockAsync(ctx context.Context, l redisson.Locker) (<-chan lockResult, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	got := make(chan lockResult, 1)
	go func() {
		h, err := l.Lock(ctx)
		got <- lockResult{h, err}
	}()
	return got, cancel
}

// queueMember is waiter id's member of a wait queue's order set (see internal/scripts/wait_queue.lua).
func queueMember(id string, waiterTimeout time.Duration) string {
	return id + "/" + strconv.FormatInt(waiterTimeout.Milliseconds(), 10)
}

// queuedWaiter decodes a member of a wait queue's order set: the waiter's id and its client's, under
// which its liveness deadline is kept.
func queuedWaiter(member string) (id, client string) {
	id, _, _ = strings.Cut(member, "/")
	return id, id[:max(0, strings.LastIndexByte(id, ':'))]
}
