package redisson_test

// Cluster slot migration, failover and MOVED behaviour.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/goredisson/redisson"
)

// On a Cluster, adds and lookups in plain and replica-acknowledged mode; then the filter's slot
// migrates to another master, and Clients with the old slot map add: the refusal (MOVED, or the
// refusal of a queued command in a transaction) is followed, the slot map reloaded and the
// transaction sent again, and the element is found.
func TestBloomFilterAddFollowsSlotMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	cl := sharedCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	admin := cl.Client(t)
	plain := newClient(t, cl.Client(t))
	acked := newClient(t, cl.Client(t), redisson.WithReplicaAcks(1, 2*time.Second))
	name := fmt.Sprintf("moved%d", rand.N(1<<30))
	for i, c := range []*redisson.Client{plain, acked} {
		f := c.BloomFilter(name)
		if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
			t.Fatal(err)
		}
		if _, err := f.AddMany(ctx, []string{"p" + strconv.Itoa(i), "q" + strconv.Itoa(i)}); err != nil {
			t.Fatalf("client %d AddMany = %v", i, err)
		}
		if ok, err := f.Contains(ctx, "p"+strconv.Itoa(i)); err != nil || !ok {
			t.Fatalf("client %d Contains = %v, %v", i, ok, err)
		}
	}
	src, slot := a7SlotMaster(t, ctx, admin, "{"+name+"}")
	masters, err := cl.Masters(ctx)
	mustDo(t, "masters", err)
	var dst string
	for _, m := range masters {
		if m != src {
			dst = m
			break
		}
	}
	mustDo(t, "migrate", cl.MigrateSlot(ctx, int(slot), dst))
	t.Cleanup(func() { _ = cl.MigrateSlot(context.Background(), int(slot), src) })
	for i, c := range []*redisson.Client{plain, acked} {
		f := c.BloomFilter(name)
		el := "after" + strconv.Itoa(i)
		if _, err := f.Add(ctx, el); err != nil {
			t.Errorf("client %d (acked=%v) Add after its slot moved = %v", i, i == 1, err)
			continue
		}
		if ok, err := f.Contains(ctx, el); err != nil || !ok {
			t.Errorf("client %d Contains after move = %v, %v", i, ok, err)
		}
	}
}
