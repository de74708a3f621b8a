package redistest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/redistest"
)

// mustGet fails the test unless key on c holds want ("" for no key).
func mustGet(t *testing.T, ctx context.Context, c *redis.Client, key, want string) {
	t.Helper()
	got, err := c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		got, err = "", nil
	}
	if err != nil || got != want {
		t.Fatalf("GET %s on %s = %q, %v; want %q", key, c.Options().Addr, got, err, want)
	}
}

// role returns the role a server reports in INFO replication ("master" or "slave").
func role(t *testing.T, ctx context.Context, c *redis.Client) string {
	t.Helper()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(info, "role:")
	r, _, _ := strings.Cut(rest, "\r")
	return r
}

// wantRole fails the test unless c's server has the replication role want ("master" or "slave")
// after what happened (when).
func wantRole(t *testing.T, ctx context.Context, c *redis.Client, want, when string) {
	t.Helper()
	if got := role(t, ctx, c); got != want {
		t.Fatalf("replica role %q after %s, want %s", got, when, want)
	}
}

// setSynced sets key to val through m, a client of r's master, and waits until the replica has it.
func setSynced(t *testing.T, ctx context.Context, r *redistest.Replicated, m *redis.Client, key, val string) {
	t.Helper()
	if err := m.Set(ctx, key, val, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
}

// fullSyncs returns the master's count of full resynchronisations (INFO stats sync_full).
func fullSyncs(t *testing.T, ctx context.Context, m *redis.Client) string {
	t.Helper()
	info, err := m.Info(ctx, "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(info, "sync_full:")
	if !ok {
		t.Fatalf("no sync_full in INFO stats:\n%s", info)
	}
	n, _, _ := strings.Cut(rest, "\r")
	return n
}

// A replicated set-up: a write on the master reaches the replica; after Cut it does not (and the
// master gets no acknowledgement); after Promote the replica is a writable master that still lacks
// it; after Rejoin the replica has the master's data again, what was written on it while promoted
// is gone, and replication works. Rejoin also heals a cut without a promotion (the replica must not
// go on from the gap the black hole left), and is a no-op on a set-up in sync. Close leaves nothing
// running.
func TestReplicated(t *testing.T) {
	t.Parallel()
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	m, rep := r.Master.Client(t), r.Replica.Client(t)
	wantRole(t, ctx, rep, "slave", "start")

	setSynced(t, ctx, r, m, "a", "1")
	mustGet(t, ctx, rep, "a", "1")

	r.Cut()
	var wait *redis.Cmd
	if _, err := m.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "b", "2", 0)
		wait = p.Do(ctx, "WAIT", 1, 200) // ms: the replica would have acknowledged by then
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if acked, err := wait.Int64(); err != nil || acked != 0 {
		t.Fatalf("WAIT 1 200 after a write across the cut link = %d, %v; want 0", acked, err)
	}
	mustGet(t, ctx, rep, "b", "")
	if err := r.WaitSynced(shortCtx(t, 300*time.Millisecond)); err == nil {
		t.Fatal("WaitSynced succeeded across the cut link")
	}

	if err := r.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	wantRole(t, ctx, rep, "master", "Promote")
	mustGet(t, ctx, rep, "a", "1")
	mustGet(t, ctx, rep, "b", "")
	if err := rep.Set(ctx, "c", "3", 0).Err(); err != nil {
		t.Fatalf("write on the promoted replica: %v", err)
	}

	if err := r.Rejoin(ctx); err != nil {
		t.Fatal(err)
	}
	wantRole(t, ctx, rep, "slave", "Rejoin")
	mustGet(t, ctx, rep, "a", "1")
	mustGet(t, ctx, rep, "b", "2")
	mustGet(t, ctx, rep, "c", "") // the master's data replaced the promoted replica's
	setSynced(t, ctx, r, m, "d", "4")
	mustGet(t, ctx, rep, "d", "4")

	// A cut healed without a promotion: the writes the black hole swallowed arrive, and the ones
	// after them too.
	r.Cut()
	for _, kv := range [][2]string{{"e", "5"}, {"f", "6"}} {
		if err := m.Set(ctx, kv[0], kv[1], 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	mustGet(t, ctx, rep, "e", "")
	if err := r.Rejoin(ctx); err != nil {
		t.Fatal(err)
	}
	setSynced(t, ctx, r, m, "g", "7")
	for _, kv := range [][2]string{{"a", "1"}, {"d", "4"}, {"e", "5"}, {"f", "6"}, {"g", "7"}} {
		mustGet(t, ctx, rep, kv[0], kv[1])
	}
	if n, err := rep.DBSize(ctx).Result(); err != nil || n != 6 {
		t.Fatalf("DBSIZE on the replica = %d, %v; want 6 (a b d e f g)", n, err)
	}

	// In sync: Rejoin changes nothing (no new full resynchronisation).
	before := fullSyncs(t, ctx, m)
	if err := r.Rejoin(ctx); err != nil {
		t.Fatal(err)
	}
	if after := fullSyncs(t, ctx, m); after != before {
		t.Fatalf("Rejoin of a set-up in sync: full resynchronisations %s -> %s", before, after)
	}
	mustGet(t, ctx, rep, "g", "7")

	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r.Master.PID() != 0 || r.Replica.PID() != 0 || r.Link.Conns() != 0 {
		t.Fatalf("after Close: master pid %d, replica pid %d, %d proxied connections; want 0, 0, 0",
			r.Master.PID(), r.Replica.PID(), r.Link.Conns())
	}
}
