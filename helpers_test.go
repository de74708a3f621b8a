package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
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

// serverSnapshot returns every key of the server with its type and DUMP, for "nothing changed" checks.
func serverSnapshot(t *testing.T, admin *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := admin.Keys(ctx, "*").Result()
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
