package pubsub_test

import (
	"context"
	"fmt"
	"log/slog"
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
