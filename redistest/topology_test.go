package redistest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/goredisson/redisson/redistest"
)

// A cluster serves keys of every slot, survives a coordinated failover of one master (the replica
// takes over, the data is there), and Close leaves nothing running.
func TestCluster(t *testing.T) {
	c := redistest.StartCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	rdb := c.Client(t)
	for i := range 100 {
		if err := rdb.Set(ctx, fmt.Sprint("k", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	masters, err := c.Masters(ctx)
	if err != nil || len(masters) != 3 {
		t.Fatalf("masters = %v, %v; want 3", masters, err)
	}
	node, err := rdb.MasterForKey(ctx, "k7")
	if err != nil {
		t.Fatal(err)
	}
	owner := node.Options().Addr
	promoted, err := c.Failover(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if now, _ := c.Masters(ctx); len(now) != 3 || promoted == owner {
		t.Fatalf("after the failover of %s: masters %v, promoted %s", owner, now, promoted)
	}
	if v, err := rdb.Get(ctx, "k7").Result(); err != nil || v != "7" {
		t.Fatalf("k7 after the failover = %q, %v", v, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		if n.PID() != 0 {
			t.Errorf("node %s still running after Close", n.Addr())
		}
	}
}

// A Sentinel set-up: the failover client writes to the master; after SENTINEL FAILOVER and after the
// master is killed, the sentinels name a new master, and the client writes to it.
func TestSentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	rdb := s.Client(t)
	if err := rdb.Set(ctx, "a", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	first := s.Master(ctx)
	second, err := s.Failover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("master %s after a failover from %s", second.Addr(), first.Addr())
	}
	if err := second.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	third, err := s.WaitMaster(ctx, second.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a new master %s %v after the master was killed", third.Addr(), time.Since(killed).Round(time.Millisecond))
	var werr error
	for time.Now().Before(killed.Add(30 * time.Second)) { // the client reconnects to the new master
		if werr = rdb.Set(ctx, "b", "2", 0).Err(); werr == nil {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling: the client has no readiness event to wait on
	}
	if werr != nil {
		t.Fatalf("write after the failover: %v", werr)
	}
}
