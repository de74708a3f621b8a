package pubsub_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/redistest"
)

// router routes with a go-redis ClusterClient's slot map, as the Client does.
type router struct{ cc *redis.ClusterClient }

func (r router) Master(ctx context.Context, channel string) (*redis.Options, error) {
	n, err := r.cc.MasterForKey(ctx, channel)
	if err != nil {
		return nil, err
	}
	return n.Options(), nil
}

func (r router) Reload() { r.cc.ReloadState(context.Background()) }

// shardedHub starts a Cluster and a sharded hub over it; 24 channels, in 24 slots spread over the
// masters, each with one waiter whose subscription is confirmed.
func shardedHub(t *testing.T) (*redistest.Cluster, *redis.ClusterClient, *pubsub.Hub, map[string]*pubsub.Waiter) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	cl := redistest.StartCluster(t)
	cc := cl.Client(t)
	h := pubsub.NewSharded(router{cc}, slog.New(slog.DiscardHandler))
	t.Cleanup(h.Close)
	ws := map[string]*pubsub.Waiter{}
	for i := range 24 {
		name := fmt.Sprintf("{ch%d}:w:client", i)
		w, err := h.Subscribe(t.Context(), name, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		ws[name] = w
	}
	for name, w := range ws {
		select {
		case <-w.Ready():
		case <-time.After(10 * time.Second):
			t.Fatalf("subscription of %s not confirmed", name)
		}
	}
	return cl, cc, h, ws
}

// everyChannelDelivers publishes on every channel with SPUBLISH and checks that each waiter is woken.
func everyChannelDelivers(t *testing.T, cc *redis.ClusterClient, ws map[string]*pubsub.Waiter, what string) {
	t.Helper()
	for name, w := range ws {
		drain(w)
		deadline := time.Now().Add(10 * time.Second)
		for {
			// Until resubscribed (after a fault) a message may reach nobody: publish again.
			if err := cc.SPublish(t.Context(), name, "0").Err(); err != nil {
				t.Logf("%s: SPUBLISH %s: %v", what, name, err)
			}
			if received(w, 100*time.Millisecond) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: SPUBLISH on %s woke nobody within 10s", what, name)
			}
		}
	}
}

func drain(w *pubsub.Waiter) {
	select {
	case <-w.C:
	default:
	}
}

// The sharded hub on one Cluster, through one fault after another.
func TestSharded(t *testing.T) {
	cl, cc, h, ws := shardedHub(t)
	for _, step := range []struct {
		name string
		run  func(*testing.T, *redistest.Cluster, *redis.ClusterClient, *pubsub.Hub, map[string]*pubsub.Waiter)
	}{
		{"one connection per master", oneConnectionPerMaster},
		{"connections killed", connectionsKilled},
		{"slot migration", slotMigration},
		{"failover", failover},
	} {
		if !t.Run(step.name, func(t *testing.T) { step.run(t, cl, cc, h, ws) }) {
			return
		}
	}
}

// One connection per master, however many slots the channels span; SPUBLISH reaches each waiter.
func oneConnectionPerMaster(t *testing.T, cl *redistest.Cluster, cc *redis.ClusterClient, h *pubsub.Hub, ws map[string]*pubsub.Waiter) {
	masters, err := cl.Masters(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := h.Conns(); n != len(masters) {
		t.Fatalf("%d pub/sub connections for 24 channels over %d masters; want one per master", n, len(masters))
	}
	everyChannelDelivers(t, cc, ws, "steady")
}

// Killed connections: every waiter is woken, every channel is subscribed again, and delivers.
func connectionsKilled(t *testing.T, cl *redistest.Cluster, cc *redis.ClusterClient, h *pubsub.Hub, ws map[string]*pubsub.Waiter) {
	_, before := h.Stats()
	masters, _ := cl.Masters(t.Context())
	for _, m := range masters {
		if err := cl.Node(m).Client(t).Do(t.Context(), "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for name, w := range ws {
		if !received(w, 10*time.Second) {
			t.Fatalf("waiter of %s not woken after its connection was killed", name)
		}
	}
	everyChannelDelivers(t, cc, ws, "after CLIENT KILL")
	if _, reconnects := h.Stats(); reconnects < before+len(ws) {
		t.Fatalf("%d resubscriptions seen; want at least %d", reconnects, len(ws))
	}
}

// A slot migration ends the subscriptions of its channels on the old master (SUNSUBSCRIBE from the
// server): they are subscribed on the new one and deliver again; the waiter is woken.
func slotMigration(t *testing.T, cl *redistest.Cluster, cc *redis.ClusterClient, _ *pubsub.Hub, ws map[string]*pubsub.Waiter) {
	ctx := t.Context()
	name := "{ch0}:w:client"
	src, err := cc.MasterForKey(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	masters, _ := cl.Masters(ctx)
	dst := ""
	for _, m := range masters {
		if m != src.Options().Addr {
			dst = m
			break
		}
	}
	slot := int(cc.ClusterKeySlot(ctx, name).Val())
	drain(ws[name])
	if err := cl.MigrateSlot(ctx, slot, dst); err != nil {
		t.Fatal(err)
	}
	if !received(ws[name], 10*time.Second) {
		t.Fatal("the waiter was not woken when its slot moved")
	}
	everyChannelDelivers(t, cc, ws, "after the migration")
	n := cl.Node(dst).Client(t).Do(ctx, "PUBSUB", "SHARDNUMSUB", name).Val()
	if got, _ := n.([]any); len(got) != 2 || got[1] != int64(1) {
		t.Fatalf("PUBSUB SHARDNUMSUB %s on the new master: %v; want 1 subscriber", name, n)
	}
}

// A failover of a master: every channel keeps delivering.
func failover(t *testing.T, cl *redistest.Cluster, cc *redis.ClusterClient, _ *pubsub.Hub, ws map[string]*pubsub.Waiter) {
	ctx := t.Context()
	n, err := cc.MasterForKey(ctx, "{ch0}:w:client")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Failover(ctx, n.Options().Addr); err != nil {
		t.Fatal(err)
	}
	everyChannelDelivers(t, cc, ws, "after the failover")
}

// staleRouter routes with a ClusterClient's slot map, except that while frozen it keeps answering
// with the masters it saw when frozen: the slot map of a Client whose reload is throttled (the
// Client reloads at most once a second) or was answered by a node that did not know of the move yet.
type staleRouter struct {
	cc *redis.ClusterClient

	mu      sync.Mutex
	frozen  map[string]*redis.Options
	reloads int
}

func (r *staleRouter) Master(ctx context.Context, channel string) (*redis.Options, error) {
	r.mu.Lock()
	o := r.frozen[channel]
	r.mu.Unlock()
	if o != nil {
		return o, nil
	}
	n, err := r.cc.MasterForKey(ctx, channel)
	if err != nil {
		return nil, err
	}
	return n.Options(), nil
}

func (r *staleRouter) Reload() {
	r.mu.Lock()
	r.reloads++
	r.mu.Unlock()
	r.cc.ReloadState(context.Background())
}

// freeze keeps the current routes of names until thaw.
func (r *staleRouter) freeze(t *testing.T, names []string) {
	t.Helper()
	m := map[string]*redis.Options{}
	for _, n := range names {
		node, err := r.cc.MasterForKey(t.Context(), n)
		if err != nil {
			t.Fatal(err)
		}
		m[n] = node.Options()
	}
	r.mu.Lock()
	r.frozen = m
	r.mu.Unlock()
}

func (r *staleRouter) thaw() {
	r.mu.Lock()
	r.frozen = nil
	r.mu.Unlock()
}

// ssubscribeCalls returns the calls and rejected calls of SSUBSCRIBE on rdb (INFO commandstats).
func ssubscribeCalls(t *testing.T, rdb *redis.Client) string {
	for _, l := range strings.Split(rdb.Info(context.Background(), "commandstats").Val(), "\n") {
		if strings.HasPrefix(l, "cmdstat_ssubscribe:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "cmdstat_ssubscribe:"))
		}
	}
	return ""
}

// TestShardedRefusedChannelResentWithoutStorm checks that a sharded hub whose SSUBSCRIBE is refused
// (-MOVED: its slot map is stale after a slot migration) re-sends only the unconfirmed channels of
// the slot the reply names, to the address it names, after a pause (retryEvery), and wakes nobody
// who lost nothing; and that a channel the hub let go is not left subscribed on the old master. A
// refusal that re-sent every channel of the connection at once, in a loop, would flood the master
// with SSUBSCRIBE and wake every waiter (each of which, in a Client, runs an acquisition script)
// as often, for as long as the map is stale.
//
// Scenario: a sharded hub has 8 channels on master S, each with a waiter whose subscription is
// confirmed, and one more, X, whose waiter left (lingering, to be swept after Linger). The slot of
// channel C0 migrates to master D (Cluster.MigrateSlot): S ends C0's subscription (server-sent
// SUNSUBSCRIBE) and the hub asks for a reload; for one second the slot map it routes with is still
// the old one (a throttled or stale reload, simulated by staleRouter). Over that second the hub may
// resubscribe at most a few times per waiter; afterwards C0 must be subscribed on D, and X, swept,
// no longer subscribed on S.
func TestShardedRefusedChannelResentWithoutStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: slow topology")
	}
	cl := redistest.StartCluster(t)
	cc := cl.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	r := &staleRouter{cc: cc}
	h := pubsub.NewSharded(r, slog.New(slog.DiscardHandler))
	t.Cleanup(h.Close)

	first, err := cc.MasterForKey(ctx, "{refused0}:w:c")
	if err != nil {
		t.Fatal(err)
	}
	src := first.Options().Addr
	var names []string
	for i := 0; len(names) < 9; i++ {
		n := fmt.Sprintf("{refused%d}:w:c", i)
		node, err := cc.MasterForKey(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if node.Options().Addr == src {
			names = append(names, n)
		}
	}
	ws := map[string]*pubsub.Waiter{}
	for _, n := range names {
		w, err := h.Subscribe(ctx, n, "")
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.Ready():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not confirmed", n)
		}
		ws[n] = w
	}
	idle := names[8]
	ws[idle].Close() // X: lingering, swept 2s from now
	delete(ws, idle)
	t.Cleanup(func() {
		for _, w := range ws {
			w.Close()
		}
	})

	masters, err := cl.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dst := masters[0]
	if dst == src {
		dst = masters[1]
	}
	srcNode := cl.Node(src).Client(t)
	slot := int(cc.ClusterKeySlot(ctx, names[0]).Val())
	_, before := h.Stats()
	callsBefore := ssubscribeCalls(t, srcNode)

	r.freeze(t, names)
	if err := cl.MigrateSlot(ctx, slot, dst); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the stale second (also covering sweeps of X): what is measured
	_, during := h.Stats()
	callsDuring := ssubscribeCalls(t, srcNode)
	r.thaw()
	r.Reload()

	// Settle: C0 subscribed on the new master, X swept.
	dstNode := cl.Node(dst).Client(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := dstNode.Do(ctx, "PUBSUB", "SHARDNUMSUB", names[0]).Val()
		if got, _ := n.([]any); len(got) == 2 && got[1] == int64(1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not subscribed on its new master %s within 10s", names[0], dst)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(pubsub.Linger + 1500*time.Millisecond) // X swept for sure
	leaked := false
	if n, _ := srcNode.Do(ctx, "PUBSUB", "SHARDNUMSUB", idle).Val().([]any); len(n) == 2 && n[1] == int64(1) {
		leaked = true
	}
	channels, _ := h.Stats()
	t.Logf("stale second after the migration: resubscriptions %d -> %d; SSUBSCRIBE on %s: %s -> %s; reload requests %d; "+
		"hub channels now %d; idle channel %s still subscribed on %s: %v",
		before, during, src, callsBefore, callsDuring, r.reloads, channels, idle, src, leaked)
	if storm := during - before; storm > 4*len(ws) {
		t.Errorf("one moved channel made the hub re-send its connection's channels and wake their waiters %d times in one second "+
			"(%d waiters: about %d wake-ups each); want a few", storm, len(ws), storm/len(ws))
	}
	if leaked {
		t.Errorf("channel %s, let go by the hub, is still subscribed on %s: its SUNSUBSCRIBE was never sent", idle, src)
	}
}
