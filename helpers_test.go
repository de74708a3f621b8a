package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// newClient returns a redisson Client over rdb, closed when the test ends (before rdb is closed:
// cleanups run last-in first-out).
//
// Its Clients keep no process record (redisson.WithoutProcessRecord) unless opts say
// redisson.KeepProcessRecord(): the record's writes (a SETEX just after the first acquisition, on a
// connection of the pool, then every 10s) would add commands, connections and dials to the tests
// that count them, drop their replies or hold their dials. The record's tests keep it, and so do
// the Clients made with redisson.New (examples, the model, benchmarks, cmd/redisson).
func newClient(tb testing.TB, rdb redis.UniversalClient, opts ...redisson.Option) *redisson.Client {
	tb.Helper()
	opts = append([]redisson.Option{redisson.WithoutProcessRecord()}, opts...)
	if _, ok := proxied.Load(rdb); ok || throughProxy(rdb) {
		opts = append([]redisson.Option{redisson.WithLossTracking(false)}, opts...)
	}
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
	case "CompatLock": // a Lock of a Client made WithRedissonCompat (Java Redisson's format)
		return c.Lock(name)
	case "CompatFairLock": // a FairLock of a Client made WithRedissonCompat (Java Redisson's format)
		return c.FairLock(name)
	case "CompatFencedLock": // a FencedLock of a Client made WithRedissonCompat (Java Redisson's RFencedLock)
		return c.FencedLock(name)
	case "CompatSpinLock": // a SpinLock of a Client made WithRedissonCompat (Java Redisson's RSpinLock)
		return c.SpinLock(name)
	case "CompatReadWriteLock": // its write side, on a Client made WithRedissonCompat
		return c.ReadWriteLock(name)
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

// ---- Forcing interleavings: dialers that hold or refuse connections, calls parked in the library,
// script warm-ups and lock inspection, shared by the tests of lost replies, the wait queue and
// Cluster behaviour. ----

// claimAfter is how long a waiter waits before it claims the lock (the library's starvation
// threshold): its next attempt after that claims it.
const claimAfter = 10 * time.Millisecond

// testMark marks the contexts of the test's own lock calls, so that cmdHook can let them
// through while it holds back the library's background commands (renewals).
type testMark struct{}

func testMarked(ctx context.Context) bool { return ctx.Value(testMark{}) != nil }

// heldDialer is the Dialer of a go-redis client whose command connections go through a
// redistest.Proxy. Pub/sub connections go straight to the server. The next command connection can
// be held until resumed, or refused.
type heldDialer struct {
	proxy, direct string

	mu      sync.Mutex
	next    int           // what happens to the next command connection: dial*
	reached chan struct{} // closed when a held dial starts waiting
	resume  chan struct{} // closed to let held dials go on
	resumed bool
	dials   int // command connections dialled or refused so far
}

// holdNext makes the next command connection wait, before it is dialled, until resumeDials. The
// returned channel is closed when it starts waiting.
func (d *heldDialer) holdNext() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next, d.reached = dialHold, make(chan struct{})
	return d.reached
}

// failNext makes the next command connection fail to dial, as if the network were down.
func (d *heldDialer) failNext() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = dialFail
}

// passNext cancels a pending holdNext or failNext.
func (d *heldDialer) passNext() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = dialPass
}

// dialed reports how many command connections were dialled (or refused) so far.
func (d *heldDialer) dialed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials
}

// resumeDials lets a held dial go on. It is idempotent.
func (d *heldDialer) resumeDials() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.resumed {
		d.resumed = true
		close(d.resume)
	}
}

func (d *heldDialer) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var nd net.Dialer
	if pubSubDial() {
		return nd.DialContext(ctx, network, d.direct)
	}
	d.mu.Lock()
	next, reached, resume := d.next, d.reached, d.resume
	d.next = dialPass
	d.dials++
	d.mu.Unlock()
	switch next {
	case dialHold:
		close(reached)
		select {
		case <-resume:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case dialFail:
		return nil, errors.New("connection refused (simulated network failure)")
	}
	return nd.DialContext(ctx, network, d.proxy)
}

const (
	dialPass = iota
	dialHold
	dialFail
)

// throughProxy reports whether rdb's connections go to a redistest Proxy.
func throughProxy(rdb redis.UniversalClient) bool {
	r, ok := rdb.(*redis.Client)
	return ok && redistest.IsProxy(r.Options().Addr)
}

// proxied holds the go-redis clients made by proxiedClient: a Client over one of them, or over
// any client connected to a redistest Proxy (newClient), has no loss tracking unless its test
// turns it on, since the tracker's connection (its checks, a
// ROLE every 250ms) would go through the same proxy and dialer and take, at random, the faults a
// test aims at one command. TestModel and the loss-signal tests drive the tracker under faults.
var proxied sync.Map // *redis.Client → struct{}

// proxiedClient returns a go-redis client for srv whose command connections go through p.
func proxiedClient(t *testing.T, srv *redistest.Server, p *redistest.Proxy, mod ...func(*redis.Options)) (*redis.Client, *heldDialer) {
	t.Helper()
	d := &heldDialer{proxy: p.Addr(), direct: srv.Addr(), resume: make(chan struct{})}
	rdb := srv.Client(t, append([]func(*redis.Options){func(o *redis.Options) {
		o.Addr = p.Addr()
		o.Dialer = d.dial
	}}, mod...)...)
	t.Cleanup(d.resumeDials) // runs before rdb is closed
	proxied.Store(rdb, struct{}{})
	t.Cleanup(func() { proxied.Delete(rdb) })
	return rdb, d
}

// pubSubDial reports whether the calling dial opens a go-redis pub/sub connection.
func pubSubDial() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "(*PubSubPool).NewConn") {
			return true
		}
		if !more {
			return false
		}
	}
}

// oneIdleConn checks that rdb has exactly one connection, idle: a command whose reply is lost is
// then re-sent on a newly dialled connection (through heldDialer).
func oneIdleConn(t *testing.T, rdb *redis.Client) {
	t.Helper()
	// A clean-up in the background (a deleted unlock latch) may still be returning its connection.
	deadline := time.Now().Add(2 * time.Second)
	for s := rdb.PoolStats(); s.TotalConns != 1 || s.IdleConns != 1; s = rdb.PoolStats() {
		if time.Now().After(deadline) {
			t.Fatalf("precondition: the proxied client has %d connections (%d idle), want 1 idle", s.TotalConns, s.IdleConns)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// inLock runs fn, a call into the lock API, so that parkedInLock can find it.
//
//go:noinline
func inLock(fn func()) { fn() }

// parkedInLock counts the goroutines running a call through inLock that are parked inside the
// library (in a select, a channel receive or a condition variable): waiting for the lock, not
// sending or receiving a command.
func parkedInLock() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "redisson_test.inLock(") {
			continue
		}
		lines := strings.Split(g, "\n")
		i, j := strings.IndexByte(lines[0], '['), strings.IndexAny(lines[0], ",]")
		if i < 0 || j < i {
			continue
		}
		switch lines[0][i+1 : j] {
		case "select", "chan receive", "sync.Cond.Wait":
		default:
			continue
		}
		for _, l := range lines[1:] {
			if l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "runtime.") ||
				strings.HasPrefix(l, "sync.") || strings.HasPrefix(l, "internal/") {
				continue
			}
			if strings.HasPrefix(l, "github.com/goredisson/redisson.") || strings.HasPrefix(l, "github.com/goredisson/redisson/") {
				count++
			}
			break
		}
	}
	return count
}

// warmUpScripts loads the lock's scripts into the server through c (a lock, a re-entry and their
// unlocks, of lock "warmup-scripts"), so that later calls are single EVALSHA commands.
func warmUpScripts(t *testing.T, c *redisson.Client) {
	t.Helper()
	ctx := context.WithValue(t.Context(), testMark{}, true)
	h, err := c.Lock("warmup-scripts").Lock(ctx)
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	lvl, err := h.Reenter(ctx)
	if err != nil {
		t.Fatalf("warm-up Reenter: %v", err)
	}
	if err := lvl.Unlock(ctx); err != nil {
		t.Fatalf("warm-up Unlock: %v", err)
	}
	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("warm-up Unlock: %v", err)
	}
}

// warmUpDriver loads the lock's scripts into the server through c and the lock driver d (a
// re-entry and a partial and a final unlock), so that a reply dropped later is a script's reply and
// not a NOSCRIPT error.
func warmUpDriver(t *testing.T, ctx context.Context, d lockDriver, c *redisson.Client) {
	t.Helper()
	h, err := d.Lock(ctx, c, "warmup-driver", 0, 0)
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	lvl, err := h.Reenter(ctx)
	if err != nil {
		t.Fatalf("warm-up Reenter: %v", err)
	}
	if err := lvl.Unlock(ctx); err != nil {
		t.Fatalf("warm-up partial Unlock: %v", err)
	}
	if err := h.Unlock(ctx); err != nil {
		t.Fatalf("warm-up final Unlock: %v", err)
	}
}

// driverHolder returns the owner and hold count stored in lock name ("" if it is free), read and
// decoded through the lock driver d.
func driverHolder(t *testing.T, admin *redis.Client, d lockDriver, name string) (string, int) {
	t.Helper()
	v, err := admin.Get(context.Background(), d.Key(name)).Result()
	if errors.Is(err, redis.Nil) {
		return "", 0
	}
	if err != nil {
		t.Fatalf("GET %s: %v", d.Key(name), err)
	}
	owner, count, ok := d.Decode(v)
	if !ok {
		t.Fatalf("GET %s = %q: not a lock value", d.Key(name), v)
	}
	return owner, count
}

// lockHolder returns the owner holding lock key on rdb and when the key expires ("" if it is free;
// a zero time if it has no expiry). It fails the test if the key holds something other than a lock.
func lockHolder(t *testing.T, rdb *redis.Client, key string) (string, time.Time) {
	t.Helper()
	ctx := context.Background()
	v, err := rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", time.Time{}
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	ttl := rdb.PTTL(ctx, key).Val()
	owner, _, ok := redisson.DecodeLockValue(v)
	if !ok {
		t.Fatalf("GET %s = %q: not a lock", key, v)
	}
	if ttl <= 0 {
		return owner, time.Time{}
	}
	return owner, time.Now().Add(ttl)
}

// lockOwner returns the owner holding lock key on rdb ("" if it is free); see lockHolder.
func lockOwner(t *testing.T, rdb *redis.Client, key string) string {
	t.Helper()
	owner, _ := lockHolder(t, rdb, key)
	return owner
}

// recvWithin receives from ch, failing the test after timeout.
func recvWithin[T any](t *testing.T, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
		panic("unreachable")
	}
}

// awaitClosed waits until ch is closed, ctx ends, or d passes.
func awaitClosed(ctx context.Context, ch <-chan struct{}, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-timer.C:
	}
}

// driverAcq is the outcome of a Lock or Reenter call made through the lock driver on another
// goroutine.
type driverAcq struct {
	h   driverHold
	lvl driverLevel
	err error
}

// awaitQueuedAsleep waits until c's wake-up channel of lock name has a subscriber and q holds n
// waiters, then gives the waiter a moment to go to sleep on its channel.
func awaitQueuedAsleep(t *testing.T, admin *redis.Client, c *redisson.Client, name, q string, n int64) {
	t.Helper()
	ctx := t.Context()
	ch := redisson.ChannelOf(c, name)
	eventually(t, 5*time.Second, "the waiter queued and subscribed", func() bool {
		return admin.ZCount(ctx, q, "-inf", "(+inf").Val() == n && admin.PubSubNumSub(ctx, ch).Val()[ch] == 1
	})
	// The subscription is confirmed on the server; give the hub a moment to read the confirmation
	// and the waiter to go to sleep on its channel (nothing observable marks that moment).
	time.Sleep(100 * time.Millisecond)
}

// awaitQueueLen waits until q holds n waiters. Waiters are the members scored below +inf: q also
// holds its end marker (see wait_queue.lua).
func awaitQueueLen(t *testing.T, admin *redis.Client, q string, n int64, what string) {
	t.Helper()
	eventually(t, 5*time.Second, what, func() bool { return admin.ZCount(t.Context(), q, "-inf", "(+inf").Val() == n })
}

// queuedClientAt is the client id (the qt member) of the waiter at index i of q.
func queuedClientAt(t *testing.T, admin *redis.Client, q string, i int64) string {
	t.Helper()
	m := admin.ZRange(t.Context(), q, i, i).Val()
	if len(m) != 1 {
		t.Fatalf("no waiter at %d in %s", i, q)
	}
	_, c := queuedWaiter(m[0])
	return c
}

// cancelLock cancels a background Lock call (lockAsync) and releases what it got, if anything.
func cancelLock(t *testing.T, got <-chan lockResult, cancel context.CancelFunc) {
	t.Helper()
	cancel()
	if r := recvWithin(t, got, 10*time.Second, "a cancelled Lock to return"); r.err == nil {
		_ = r.h.Unlock(context.WithoutCancel(t.Context()))
	}
}

// slotMaster returns the address of the master serving key's slot, as the cluster sees it, and
// the slot.
func slotMaster(t *testing.T, ctx context.Context, admin *redis.ClusterClient, key string) (string, int64) {
	t.Helper()
	slot := admin.ClusterKeySlot(ctx, key).Val()
	for _, sh := range admin.ClusterShards(ctx).Val() {
		for _, r := range sh.Slots {
			if int64(r.Start) > slot || slot > int64(r.End) {
				continue
			}
			for _, n := range sh.Nodes {
				if n.Role == "master" && n.Health == "online" {
					return fmt.Sprintf("%s:%d", n.IP, n.Port), slot
				}
			}
		}
	}
	t.Fatalf("no master for slot %d", slot)
	return "", 0
}

// ---------------------------------------------------------------------------------------------
// Command hooks and gates, and server snapshots, shared by the tests of several subjects.
// ---------------------------------------------------------------------------------------------

// scriptHook is a go-redis hook that, for the script commands whose arguments match, records the
// arguments (to replay them later as a late copy) and can hold the command back until released.
type scriptHook struct {
	mu       sync.Mutex
	match    func(args []string) bool // nil: nothing matches
	block    bool                     // hold matching commands back until release
	reached  chan struct{}            // closed when a matching command is held back
	released chan struct{}
	captured [][]any
	around   func(a []string, next func()) // nil: none; else runs every command (next sends it)
}

// setAround makes f run every command: f calls next to send it and get its reply.
func (h *scriptHook) setAround(f func(a []string, next func())) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.around = f
}

// set makes commands matching m be recorded, and held back if block.
func (h *scriptHook) set(m func(args []string) bool, block bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.match, h.block = m, block
	h.reached, h.released = make(chan struct{}), make(chan struct{})
}

// release lets a held command go (idempotent) and stops matching.
func (h *scriptHook) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.match = nil
	select {
	case <-h.released:
	default:
		close(h.released)
	}
}

// last returns the arguments of the last matching command recorded.
func (h *scriptHook) last(t *testing.T) []any {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.captured) == 0 {
		t.Fatal("no matching command was recorded")
	}
	return h.captured[len(h.captured)-1]
}

func (h *scriptHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		strs := make([]string, len(args))
		for i, a := range args {
			strs[i] = fmt.Sprint(a)
		}
		h.mu.Lock()
		m, around := h.match, h.around
		var wait chan struct{}
		if m != nil && m(strs) {
			h.captured = append(h.captured, append([]any(nil), args...))
			if h.block {
				wait = h.released
				select {
				case <-h.reached:
				default:
					close(h.reached)
				}
			}
		}
		h.mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
			case <-ctx.Done():
				cmd.SetErr(ctx.Err())
				return ctx.Err()
			}
		}
		if around != nil {
			var err error
			around(strs, func() { err = next(ctx, cmd) })
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *scriptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// newScriptHook returns a scriptHook that matches nothing yet.
func newScriptHook() *scriptHook {
	return &scriptHook{reached: make(chan struct{}), released: make(chan struct{})}
}

// hookedSetup starts a server and returns an admin connection, a hook, Client a (with the hook) and
// Client b (without).
func hookedSetup(t *testing.T) (srv *redistest.Server, admin *redis.Client, hook *scriptHook, a, b *redisson.Client) {
	t.Helper()
	srv = redistest.Start(t)
	hook = newScriptHook()
	return srv, srv.Client(t), hook, hookedClient(t, srv, hook), newClient(t, srv.Client(t))
}

// hookedClient returns a Client over a fresh connection to srv with hook installed.
func hookedClient(t *testing.T, srv *redistest.Server, hook redis.Hook, opts ...redisson.Option) *redisson.Client {
	t.Helper()
	rdb := srv.Client(t)
	if hook != nil {
		rdb.AddHook(hook)
	}
	return newClient(t, rdb, opts...)
}

// waitClosed waits for ch to be closed, at most 10s (a hook must never block forever).
func waitClosed(ch <-chan struct{}) {
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
	}
}

// cmdGate holds back the first command matching match once armed, and reports every later matching
// command on seen (non-blocking). Install it with scriptHook.setAround.
type cmdGate struct {
	mu      sync.Mutex
	match   func(a []string) bool
	armed   bool
	held    bool
	reached chan struct{}
	release chan struct{}
	seen    chan struct{}
}

func (g *cmdGate) arm() {
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
}

func (g *cmdGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.release:
	default:
		close(g.release)
	}
}

func (g *cmdGate) around(a []string, next func()) {
	g.mu.Lock()
	m := g.match(a)
	hold := m && g.armed && !g.held
	if hold {
		g.held = true
		close(g.reached)
	}
	g.mu.Unlock()
	if hold {
		waitClosed(g.release)
	}
	next()
	if m && !hold {
		select {
		case g.seen <- struct{}{}:
		default:
		}
	}
}

// newCmdGate returns a cmdGate for the commands matching match, not armed yet.
func newCmdGate(match func(a []string) bool) *cmdGate {
	return &cmdGate{match: match, reached: make(chan struct{}), release: make(chan struct{}), seen: make(chan struct{}, 64)}
}

// aroundHook runs f around every command and pipeline (f calls next to send it; its return is the
// command's error). nil f: pass-through.
type aroundHook struct {
	mu   sync.Mutex
	cmd  func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error
	pipe func(ctx context.Context, cmds []redis.Cmder, next func() error) error
}

func (h *aroundHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *aroundHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		f := h.cmd
		h.mu.Unlock()
		if f == nil {
			return next(ctx, cmd)
		}
		return f(ctx, cmdArgs(cmd), cmd, func() error { return next(ctx, cmd) })
	}
}

func (h *aroundHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		f, c := h.pipe, h.cmd
		h.mu.Unlock()
		if f == nil && c != nil && len(cmds) > 0 {
			// A pipeline (CountDownLatch.Wait reads its round, then its count) is seen as its last
			// command.
			last := cmds[len(cmds)-1]
			return c(ctx, cmdArgs(last), last, func() error { return next(ctx, cmds) })
		}
		if f == nil {
			return next(ctx, cmds)
		}
		return f(ctx, cmds, func() error { return next(ctx, cmds) })
	}
}

func (h *aroundHook) setCmd(f func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error) {
	h.mu.Lock()
	h.cmd = f
	h.mu.Unlock()
}

func (h *aroundHook) setPipe(f func(ctx context.Context, cmds []redis.Cmder, next func() error) error) {
	h.mu.Lock()
	h.pipe = f
	h.mu.Unlock()
}

// cmdArgs returns cmd's arguments as strings.
func cmdArgs(cmd redis.Cmder) []string {
	args := cmd.Args()
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = fmt.Sprint(a)
	}
	return s
}

// mustDo fails the test on err.
func mustDo(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// dataKeys returns the server's keys (KEYS *: a test server) but the Clients' process records,
// which a Client writes in the background after its first acquisition (see
// redisson.WithoutProcessRecord): the keys of the objects.
func dataKeys(ctx context.Context, admin *redis.Client) ([]string, error) {
	keys, err := admin.Keys(ctx, "*").Result()
	return slices.DeleteFunc(keys, redisson.IsProcessRecordKey), err
}

// dataKeysOf is dataKeys, failing the test on an error.
func dataKeysOf(t *testing.T, ctx context.Context, admin *redis.Client) []string {
	t.Helper()
	keys, err := dataKeys(ctx, admin)
	mustDo(t, "KEYS", err)
	return keys
}

// serverSnapshot returns every key of the server (but the process records: see dataKeys) with its
// type and DUMP, for "nothing changed" checks.
func serverSnapshot(t *testing.T, admin *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := dataKeys(ctx, admin)
	mustDo(t, "KEYS", err)
	out := map[string]string{}
	for _, k := range keys {
		d, err := admin.Dump(ctx, k).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		mustDo(t, "DUMP "+k, err)
		ttl, _ := admin.PTTL(ctx, k).Result()
		out[k] = d + fmt.Sprintf("|ttl>0:%v", ttl > 0)
	}
	return out
}

// snapshotDiff lists the keys removed, changed and added from snapshot a to snapshot b ("" if
// none).
func snapshotDiff(a, b map[string]string) string {
	var diffs []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			diffs = append(diffs, "removed "+k)
		} else if v != w {
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, "added "+k)
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, ", ")
}

// objectOp is a call named name on the object called n of Client c.
type objectOp struct {
	name string
	run  func(ctx context.Context, c *redisson.Client, name string) error
}

// errOnly returns the error of a call's results.
func errOnly[T any](_ T, err error) error { return err }

// long skips the test in the fast tier (go test -short, make check): it takes seconds (timers,
// several servers, child processes, a Cluster). make test runs it.
func long(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a long test (make test runs it)")
	}
}

// otherMaster returns the address of a master of cl other than addr (the first one listed).
func otherMaster(t *testing.T, ctx context.Context, cl *redistest.Cluster, addr string) string {
	t.Helper()
	masters, err := cl.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range masters {
		if m != addr {
			return m
		}
	}
	t.Fatalf("no master other than %s", addr)
	return ""
}

// migrateSlotAway migrates the slot of key (keys moved with MIGRATE, then CLUSTER SETSLOT NODE on
// every master, as redis-cli --cluster reshard does) from its master src to another master dst.
func migrateSlotAway(t *testing.T, ctx context.Context, cl *redistest.Cluster, admin *redis.ClusterClient, key string) (src, dst string, slot int64) {
	t.Helper()
	src, slot = slotMaster(t, ctx, admin, key)
	dst = otherMaster(t, ctx, cl, src)
	if err := cl.MigrateSlot(ctx, int(slot), dst); err != nil {
		t.Fatalf("migrating slot %d from %s to %s: %v", slot, src, dst, err)
	}
	return src, dst, slot
}

// refusableProxyClient returns a go-redis client of srv whose connections go through the proxy p,
// and a switch: while it is on, dials fail as a refused connection would (the server unreachable),
// while connections already open keep working. opts adjust the client's options.
func refusableProxyClient(t *testing.T, srv *redistest.Server, p *redistest.Proxy, opts ...func(*redis.Options)) (*redis.Client, *atomic.Bool) {
	var down atomic.Bool
	rdb := srv.Client(t, append(slices.Clip(opts), func(o *redis.Options) {
		o.Addr = p.Addr()
		o.DialerRetries = 1
		o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			if down.Load() {
				return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused (simulated)")}
			}
			var nd net.Dialer
			return nd.DialContext(ctx, network, p.Addr())
		}
	})...)
	return rdb, &down
}

// replyLostForReadTimeout, in a hook, runs the command on Redis (next) and then stands for its reply
// never arriving: it waits until rt after the command was sent (or ctx ends) and fails it with the
// read deadline error go-redis gives then.
func replyLostForReadTimeout(ctx context.Context, cmd redis.Cmder, next func() error, rt time.Duration) error {
	sent := time.Now()
	if err := next(); err != nil {
		return err
	}
	timer := time.NewTimer(time.Until(sent.Add(rt)))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	err := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	cmd.SetErr(err)
	return err
}

// hookedReadTimeoutClient starts a server and returns it with a Client (opts) over a go-redis
// client of its own with ReadTimeout rt and hook added.
func hookedReadTimeoutClient(t *testing.T, rt time.Duration, opts ...redisson.Option) (*redistest.Server, *redisson.Client, *aroundHook) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.ReadTimeout = rt })
	hook := &aroundHook{}
	rdb.AddHook(hook)
	return srv, newClient(t, rdb, opts...), hook
}

// loseFirstReplyForReadTimeout makes hook run the first command that match accepts on Redis and
// lose its reply for rt (see replyLostForReadTimeout); every other command goes as usual. The
// hook is cleared when the test ends.
func loseFirstReplyForReadTimeout(t *testing.T, hook *aroundHook, match func(a []string) bool, rt time.Duration) {
	var once sync.Once
	hook.setCmd(func(ctx context.Context, a []string, cmd redis.Cmder, next func() error) error {
		first := false
		if match(a) {
			once.Do(func() { first = true })
		}
		if !first {
			return next()
		}
		return replyLostForReadTimeout(ctx, cmd, next, rt)
	})
	t.Cleanup(func() { hook.setCmd(nil) })
}
