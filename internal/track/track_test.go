package track

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/redistest"
)

// existsConfig is a tracker Config whose check of a hold is EXISTS over every key of its entry
// (held: the first key exists), with registrations told by active.
func existsConfig(opt *redis.Options, active *atomic.Bool) Config {
	return Config{
		Master: func(context.Context, string) (*redis.Options, error) { return opt, nil },
		Check: func(items []*renew.Entry) (cmds [][]any, of [][]int) {
			for i, e := range items {
				cmd := []any{"EXISTS"}
				for _, k := range keysOf(e) {
					cmd = append(cmd, k)
				}
				cmds = append(cmds, cmd)
				of = append(of, []int{i})
			}
			return cmds, of
		},
		Decode: func(reply any) ([]time.Duration, error) {
			if n, _ := reply.(int64); n >= 1 {
				return []time.Duration{NoExpiry}, nil
			}
			return []time.Duration{Gone}, nil
		},
		Load:   func([]any) []any { return nil },
		Active: func(*renew.Entry) (uint64, bool) { return 1, active.Load() },
		Gone:   func(*renew.Entry, uint64, error) {},
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// tracked returns how many items the node of addr keeps tracked, over all keys.
func tracked(tr *Tracker, addr string) (items int, keys map[string]int) {
	tr.mu.Lock()
	n := tr.nodes[addr]
	tr.mu.Unlock()
	keys = map[string]int{}
	if n == nil {
		return 0, keys
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, its := range n.keys {
		keys[k] = len(its)
		items += len(its)
	}
	return items, keys
}

// A hold of more than one key (a ReadWriteLock in Java Redisson's layout: the hash and its tag
// "{hash}", hold.go makeOwner) is tracked under each. An invalidation of one of them (a renewal of
// the hash, which every watchdog period makes) must not leave the hold tracked twice under the
// others, and once the hold has ended and its key is gone, nothing of it may stay tracked: a key
// that nothing ever writes (the tag) would keep it, and its Client's whole owner, for the life of
// the connection, and keep the node pinging as if busy.
func TestMultiKeyHoldNotKeptAfterItEnds(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	var active atomic.Bool
	active.Store(true)
	tr := New(existsConfig(rdb.Options(), &active))
	defer tr.Close()
	if err := rdb.HSet(ctx, "rw", "f", "0").Err(); err != nil {
		t.Fatal(err)
	}
	e := &renew.Entry{Key: "rw", Keys: []string{"rw", "{rw}"}, Owner: "o"}
	tr.Add(e, 1)
	waitChecks := func(n uint64) {
		t.Helper()
		waitFor(t, 5*time.Second, fmt.Sprintf("%d checks", n), func() bool { return tr.Checked() >= n })
	}
	waitChecks(1)
	const renewals = 5
	for i := range renewals { // a watchdog renewal writes the hash each period
		if err := rdb.HSet(ctx, "rw", "f", i+1).Err(); err != nil {
			t.Fatal(err)
		}
		waitChecks(uint64(i + 2))
	}
	if n, keys := tracked(tr, rdb.Options().Addr); n != len(e.Keys) {
		t.Errorf("one live hold of 2 keys is tracked %d times: %v; want once under each key", n, keys)
	}
	// The hold ends (released), and its release deletes the hash.
	active.Store(false)
	if err := rdb.Del(ctx, "rw").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the invalidation of the hash comes and is handled
	if n, keys := tracked(tr, rdb.Options().Addr); n != 0 {
		t.Errorf("the ended hold is still tracked %d times: %v", n, keys)
	}
}

// A Client that holds one lock at a time, briefly (a process taking its turn at a contended lock),
// must not have its tracker's timer fire for holds that ended before they were due: each firing is a
// wake-up of an otherwise idle process, one per acquisition, which on a small machine delayed every
// hand-over by about 30µs. A hold that ends as the latest added is forgotten at once; any other is
// skipped when its time comes, which asks whether it is still registered.
func TestEndedHoldNeverWakesTheTracker(t *testing.T) {
	var active atomic.Bool
	cfg := existsConfig(&redis.Options{Addr: "127.0.0.1:1"}, &active) // never dialled: nothing is due
	var asked atomic.Int64
	cfg.Active = func(*renew.Entry) (uint64, bool) { asked.Add(1); return 1, active.Load() }
	tr := New(cfg)
	defer tr.Close()

	for i := range 20 {
		e := &renew.Entry{Key: "k", Owner: "o"}
		tr.Add(e, uint64(i))
		tr.Ended(e, uint64(i))
	}
	time.Sleep(3 * Delay) // the window in which a firing would have asked
	if n := asked.Load(); n != 0 {
		t.Fatalf("holds ended as the latest added were looked at %d times when due; want 0", n)
	}

	// Ended names another registration, or a hold that is not the latest: left for the timer.
	a, b := &renew.Entry{Key: "a", Owner: "o"}, &renew.Entry{Key: "b", Owner: "o"}
	tr.Add(a, 1)
	tr.Ended(a, 2)
	tr.Add(b, 1)
	tr.Ended(a, 1)
	deadline := time.Now().Add(5 * time.Second)
	for asked.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("looked at %d of the 2 holds left to the timer", asked.Load())
		}
		time.Sleep(Delay)
	}
}

// A node left with nothing to track (its holds ended, or moved to another master after a failover)
// is not dialled again and again once its connection is lost: a tracker kept dialling a dead or
// demoted master ten times a second for the life of its Client. Holds queued for it later have it
// dial again.
func TestNodeWithNothingToTrackIsNotRedialled(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	opt := *rdb.Options()
	var dials atomic.Int64
	opt.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	var active atomic.Bool
	active.Store(true)
	tr := New(existsConfig(&opt, &active))
	defer tr.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitChecks := func(n uint64) {
		t.Helper()
		waitFor(t, 10*time.Second, fmt.Sprintf("%d checks", n), func() bool { return tr.Checked() >= n })
	}
	tr.Add(&renew.Entry{Key: "k", Owner: "o"}, 1)
	waitChecks(1)
	active.Store(false) // the hold ends; then its master dies
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the connection to the killed server to close", func() bool { return tr.Conns() == 0 })
	before := dials.Load()
	time.Sleep(20 * redialEvery) // a window in which a node that redials would dial 20 times
	if n := dials.Load() - before; n > 1 {
		t.Fatalf("%d dials of a node with nothing to track in %v", n, 20*redialEvery)
	}

	// A hold queued for it later: the node dials again, and checks it.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "k2", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	active.Store(true)
	checked := tr.Checked()
	tr.Add(&renew.Entry{Key: "k2", Owner: "o"}, 1) // gen 1: what existsConfig's Active answers
	waitChecks(checked + 1)
}

// holdsConfig is existsConfig with a registration per entry (held while in the set), and every
// declared loss sent on lost.
type holdsConfig struct {
	mu   sync.Mutex
	live map[*renew.Entry]bool
	lost chan error
}

func newHoldsConfig(opt *redis.Options) (*holdsConfig, Config) {
	h := &holdsConfig{live: map[*renew.Entry]bool{}, lost: make(chan error, 16)}
	cfg := existsConfig(opt, nil)
	cfg.Active = func(e *renew.Entry) (uint64, bool) {
		h.mu.Lock()
		defer h.mu.Unlock()
		return 1, h.live[e]
	}
	cfg.Gone = func(e *renew.Entry, _ uint64, why error) {
		h.set(e, false)
		h.lost <- why
	}
	return h, cfg
}

func (h *holdsConfig) set(e *renew.Entry, on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.live[e] = on
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A hold whose standalone master restarts empty between the hold's taking and its first check is
// lost "when the tracker's connection to its master was open again" (ErrReconnected): the package
// doc says a first check reports so "if the node's connection was lost (or could not be opened)
// after the hold was taken". A node that had nothing to track once its last connection was lost
// now opens none until a hold is queued, so it never sees the restart, and its first check
// reports the loss as a change seen at once by client tracking (ErrChanged), which it was not.
// Before the node stopped redialling, it was connected again and saw the restart break it.
func TestHoldLostToARestartBeforeItsFirstCheckOnAnIdleNodeSaysReconnected(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	h, cfg := newHoldsConfig(rdb.Options())
	var blocking atomic.Bool
	placing := make(chan struct{}, 1)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	master := cfg.Master
	cfg.Master = func(ctx context.Context, key string) (*redis.Options, error) {
		if blocking.Load() { // the hold is due: its placement waits (Master may block on the network)
			select {
			case placing <- struct{}{}:
			default:
			}
			<-release
		}
		return master(ctx, key)
	}
	tr := New(cfg)
	defer tr.Close()

	// A first hold connects the node, then ends; its master restarts: the node's connection is
	// lost with nothing left to track.
	e1 := &renew.Entry{Key: "k1", Owner: "o"}
	if err := rdb.Set(ctx, "k1", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	h.set(e1, true)
	tr.Add(e1, 1)
	waitFor(t, 5*time.Second, "the first hold checked", func() bool { return tr.Checked() >= 1 })
	h.set(e1, false)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the connection lost", func() bool { return tr.Conns() == 0 })
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * redialEvery) // the master is back, with nothing of ours on it

	// A second hold is taken; before its first check its master restarts empty.
	e2 := &renew.Entry{Key: "k2", Owner: "o"}
	if err := rdb.Set(ctx, "k2", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	blocking.Store(true)
	h.set(e2, true)
	tr.Add(e2, 1)
	select {
	case <-placing:
	case <-time.After(5 * time.Second):
		t.Fatal("the second hold was never placed")
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	unblock()
	select {
	case why := <-h.lost:
		if !errors.Is(why, ErrReconnected) {
			t.Fatalf("a hold lost to a restart of its master before its first check was told %q; want ErrReconnected", why)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the hold lost to the restart was never told")
	}
}

// A node whose last connection's verdicts the Client's commands contradicted waits backoff (up to
// maxBackoff) before its next connection. Once the disagreeing hold has ended and the node's
// connection is lost while it has nothing to track, the node now opens no connection until a hold
// is queued, and then first sleeps that stale backoff: a hold taken seconds later is not checked
// (nor tracked) for up to 5s, so a restart or failover that loses it meanwhile is not told within
// the second the package promises. Before, the node had reconnected right after the backoff and a
// new hold was checked within Delay and a round trip.
func TestHoldOnANodeIdleSinceADisagreementIsCheckedWithinASecond(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	h, cfg := newHoldsConfig(rdb.Options())
	e1 := &renew.Entry{Key: "k1", Owner: "o"} // no key on the tracker's connection: found gone there…
	cfg.Confirm = func(_ context.Context, entries []*renew.Entry) ([]bool, error) {
		alive := make([]bool, len(entries)) // …and held by the Client's commands
		for i, e := range entries {
			alive[i] = e == e1
		}
		return alive, nil
	}
	tr := New(cfg)
	defer tr.Close()
	backoff := func() time.Duration {
		tr.mu.Lock()
		n := tr.nodes[rdb.Options().Addr]
		tr.mu.Unlock()
		if n == nil {
			return 0
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.backoff
	}
	h.set(e1, true)
	tr.Add(e1, 1)
	waitFor(t, 10*time.Second, "the backoff to grow to 1.6s", func() bool { return backoff() >= 1600*time.Millisecond })
	h.set(e1, false) // the disagreeing hold ends
	wait := backoff()
	// The node reconnects after its backoff, finds nothing left to check, and its connection is
	// then lost (a restart) while it tracks nothing.
	waitFor(t, wait+5*time.Second, "the node connected again", func() bool { return tr.Conns() == 1 })
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the connection lost", func() bool { return tr.Conns() == 0 })
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait + 500*time.Millisecond) // longer ago than the backoff

	e2 := &renew.Entry{Key: "k2", Owner: "o"}
	if err := rdb.Set(ctx, "k2", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	checked := tr.Checked()
	start := time.Now()
	h.set(e2, true)
	tr.Add(e2, 1)
	waitFor(t, 10*time.Second, "the new hold checked", func() bool { return tr.Checked() > checked })
	if took := time.Since(start); took > time.Second {
		t.Fatalf("a hold taken %v after the node's last disagreement was first checked %v after it was taken (its stale backoff: %v); want within a second", wait+500*time.Millisecond, took, wait)
	}
}
