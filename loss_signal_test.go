package redisson_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/javadouble"
	"github.com/goredisson/redisson/redistest"
)

// The immediate loss signal (WithLossTracking, on by default): a hold is told within 100ms of its
// key being deleted, flushed or expired, and within a second of its server coming back empty,
// with the default watchdog (whose renewals would tell only 10s later).

// signalHolds are the kinds that hold, by how a hold of each is taken.
var signalHolds = []struct {
	kind   string
	compat bool
	take   func(t *testing.T, c *redisson.Client, name string) context.Context
}{
	{"Lock", false, lockHold("Lock")},
	{"FairLock", false, lockHold("FairLock")},
	{"FencedLock", false, lockHold("FencedLock")},
	{"SpinLock", false, lockHold("SpinLock")},
	{"ReadWriteLock/write", false, lockHold("ReadWriteLock")},
	{"ReadWriteLock/read", false, readHold},
	{"MultiLock", false, lockHold("MultiLock")},
	{"PermitExpirableSemaphore", false, permitHold},
	{"CompatLock", true, lockHold("CompatLock")},
	{"CompatFairLock", true, lockHold("CompatFairLock")},
	{"CompatFencedLock", true, lockHold("CompatFencedLock")},
	{"CompatSpinLock", true, lockHold("CompatSpinLock")},
	{"CompatReadWriteLock/write", true, lockHold("CompatReadWriteLock")},
	{"CompatReadWriteLock/read", true, readHold},
}

func lockHold(kind string) func(t *testing.T, c *redisson.Client, name string) context.Context {
	return func(t *testing.T, c *redisson.Client, name string) context.Context {
		return mustLock(t, lockOf(c, kind, name), t.Context()).Context()
	}
}

func readHold(t *testing.T, c *redisson.Client, name string) context.Context {
	h, err := c.ReadWriteLock(name).RLock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return h.Context()
}

func permitHold(t *testing.T, c *redisson.Client, name string) context.Context {
	s := c.PermitExpirableSemaphore(name)
	if _, err := s.TrySetPermits(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	h, err := s.AcquireHeld(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return h.Context()
}

// keysOf returns every key of the object name on rdb.
func keysOf(t *testing.T, rdb redis.UniversalClient, name string) []string {
	t.Helper()
	keys, err := rdb.Keys(t.Context(), "*"+name+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys of %q: %v %v", name, keys, err)
	}
	return keys
}

// toldWithin waits for ctx (a hold's) to end, and fails the test unless it ended within bound of
// since, with a cause matching ErrLockLost that names want. It returns the latency.
func toldWithin(t *testing.T, ctx context.Context, since time.Time, bound time.Duration, want string) time.Duration {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(bound + 5*time.Second): // far past the bound: report it, don't hang
	}
	took := time.Since(since)
	cause := context.Cause(ctx)
	if ctx.Err() == nil {
		t.Fatalf("not told within %v", bound+5*time.Second)
	}
	if took > bound {
		t.Errorf("told after %v; the bound is %v (cause %v)", took, bound, cause)
	}
	if !errors.Is(cause, redisson.ErrLockLost) || !strings.Contains(cause.Error(), want) {
		t.Errorf("cause %v; want ErrLockLost saying %q", cause, want)
	}
	return took
}

// TestLossSignalledAtOnce covers every kind that holds × every way its key can disappear, on
// standalone: each row takes a hold with the default watchdog, waits until the tracker has checked
// it (so the signal comes from an invalidation, not the first check), makes the key disappear,
// and measures the time from the event's reply to the hold's context ending.
func TestLossSignalledAtOnce(t *testing.T) {
	events := []struct {
		name  string
		bound time.Duration
		want  string
		do    func(t *testing.T, srv *redistest.Server, admin *redis.Client, other *redisson.Client, kind, name string)
	}{
		{"ForceUnlock", 100 * time.Millisecond, "client tracking", func(t *testing.T, _ *redistest.Server, _ *redis.Client, other *redisson.Client, kind, name string) {
			forceUnlock(t, other, kind, name)
		}},
		{"DEL", 100 * time.Millisecond, "client tracking", func(t *testing.T, _ *redistest.Server, admin *redis.Client, _ *redisson.Client, _, name string) {
			mustDo(t, "DEL", admin.Del(t.Context(), keysOf(t, admin, name)...).Err())
		}},
		{"UNLINK", 100 * time.Millisecond, "client tracking", func(t *testing.T, _ *redistest.Server, admin *redis.Client, _ *redisson.Client, _, name string) {
			mustDo(t, "UNLINK", admin.Unlink(t.Context(), keysOf(t, admin, name)...).Err())
		}},
		// The PEXPIRE changes the key (an invalidation); the check after it sees the time left and
		// reads the key again when it is up, which expires it.
		{"expiry", 100 * time.Millisecond, "client tracking", func(t *testing.T, _ *redistest.Server, admin *redis.Client, _ *redisson.Client, _, name string) {
			for _, k := range keysOf(t, admin, name) {
				mustDo(t, "PEXPIRE", admin.PExpire(t.Context(), k, time.Millisecond).Err())
			}
		}},
		{"eviction", 100 * time.Millisecond, "client tracking", func(t *testing.T, _ *redistest.Server, admin *redis.Client, _ *redisson.Client, _, name string) {
			ctx := t.Context()
			mustDo(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory-policy", "allkeys-random").Err())
			mustDo(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory", "1").Err())
			_ = admin.Set(ctx, "evict-trigger", "x", 0).Err() // refused (OOM) once everything is evicted
			mustDo(t, "CONFIG SET", admin.ConfigSet(ctx, "maxmemory", "0").Err())
			if n, _ := admin.Exists(ctx, name).Result(); n != 0 {
				t.Fatalf("key %q not evicted", name)
			}
		}},
		// Among many keys that expire, Redis's expiry cycle may find the key seconds late (it samples
		// 20 of them at a time): the check after the PEXPIRE saw its time left and reads it again then.
		{"expiry among 100,000 expiring keys", 100 * time.Millisecond, "client tracking", func(t *testing.T, _ *redistest.Server, admin *redis.Client, _ *redisson.Client, _, name string) {
			mustDo(t, "populate", admin.Eval(t.Context(), `for i = 1, 100000 do redis.call('SET', 'pop:' .. i, 'x', 'PX', 3600000) end return 1`, nil).Err())
			for _, k := range keysOf(t, admin, name) {
				mustDo(t, "PEXPIRE", admin.PExpire(t.Context(), k, time.Millisecond).Err())
			}
		}},
		{"FLUSHDB", 100 * time.Millisecond, "flushed", func(t *testing.T, _ *redistest.Server, admin *redis.Client, _ *redisson.Client, _, _ string) {
			mustDo(t, "FLUSHDB", admin.FlushDB(t.Context()).Err())
		}},
		{"FLUSHALL", 100 * time.Millisecond, "flushed", func(t *testing.T, _ *redistest.Server, admin *redis.Client, _ *redisson.Client, _, _ string) {
			mustDo(t, "FLUSHALL", admin.FlushAll(t.Context()).Err())
		}},
		{"restart", time.Second, "was open again", func(t *testing.T, srv *redistest.Server, _ *redis.Client, _ *redisson.Client, _, _ string) {
			mustDo(t, "kill", srv.Kill())
			mustDo(t, "restart", srv.Restart())
		}},
	}
	for _, k := range signalHolds {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			opts := []redisson.Option{redisson.WithLossTracking(true)}
			if k.compat {
				opts = append(opts, redisson.WithRedissonCompat())
			}
			c, admin, srv := setup(t, opts...)
			other := newClient(t, srv.Client(t), opts...)
			for _, ev := range events {
				if ev.name == "ForceUnlock" && k.kind == "PermitExpirableSemaphore" {
					continue // a semaphore has no force unlock
				}
				name := "sig-" + strings.ReplaceAll(k.kind, "/", "-") + "-" + ev.name
				before := redisson.TrackerChecks(c)
				ctx := k.take(t, c, name)
				eventually(t, 5*time.Second, "the hold checked", func() bool { return redisson.TrackerChecks(c) > before })
				// From the event's reply (a restart's: the server accepts connections again): the
				// change was made by then, and a first call's own set-up (another Client's first
				// FencedLock call checks the server's eviction policy) is not the signal's time.
				ev.do(t, srv, admin, other, k.kind, name)
				start := time.Now()
				took := toldWithin(t, ctx, start, ev.bound, ev.want)
				t.Logf("%s: told after %v", ev.name, took.Round(10*time.Microsecond))
			}
		})
	}
}

// forceUnlock force-unlocks the object name of kind through c.
func forceUnlock(t *testing.T, c *redisson.Client, kind, name string) {
	t.Helper()
	var err error
	switch {
	case strings.HasSuffix(kind, "/read") || strings.HasSuffix(kind, "/write"):
		_, err = c.ReadWriteLock(name).ForceUnlock(t.Context())
	default:
		_, err = lockOf(c, kind, name).ForceUnlock(t.Context())
	}
	mustDo(t, "ForceUnlock", err)
}

// TestLossTrackingOffTellsAtRenewal: with WithLossTracking(false) nothing is tracked, and a deleted
// key is found by the next renewal.
func TestLossTrackingOffTellsAtRenewal(t *testing.T) {
	c, admin, _ := setup(t, redisson.WithLossTracking(false), redisson.WithWatchdogTimeout(time.Second))
	h := mustLock(t, c.Lock("sig-off"), t.Context())
	mustDo(t, "DEL", admin.Del(t.Context(), "sig-off").Err())
	<-h.Context().Done()
	if cause := context.Cause(h.Context()); strings.Contains(cause.Error(), "client tracking") {
		t.Fatalf("cause %v: tracked though off", cause)
	}
	if redisson.TrackerChecks(c) != 0 {
		t.Fatal("a Client without tracking checked holds")
	}
}

// lossSignalCases are the loss signal's conformance cases for a lock kind (lockConformance), run
// on every topology with the default watchdog: a hold (each side of a ReadWriteLock) is told
// within 100ms of a force unlock from another Client, of a DEL of its keys and of
// their expiry; a RedLock's part is told of its own loss, and the group once a majority is gone.
func lossSignalCases(kind string) []conformanceCase {
	type side struct {
		name string
		take func(t *testing.T, c *redisson.Client, name string) context.Context
	}
	sides := []side{{"", lockHold(kind)}}
	if strings.HasSuffix(kind, "ReadWriteLock") {
		sides = append(sides, side{"read", readHold})
	}
	tracked := func(t *testing.T, c *redisson.Client, take func(*testing.T, *redisson.Client, string) context.Context, name string) context.Context {
		before := redisson.TrackerChecks(c)
		ctx := take(t, c, name)
		eventually(t, 5*time.Second, "the hold checked", func() bool { return redisson.TrackerChecks(c) > before })
		return ctx
	}
	cases := []conformanceCase{{"told at once of a force unlock", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
		a, b := newC(), newC()
		for _, s := range sides {
			ctx := tracked(t, a, s.take, name)
			fk := kind
			if s.name != "" {
				fk += "/" + s.name
			}
			forceUnlock(t, b, fk, name)
			t.Logf("%s: told after %v", cmp.Or(s.name, "lock"), toldWithin(t, ctx, time.Now(), 100*time.Millisecond, "client tracking"))
		}
	}}}
	if strings.HasPrefix(kind, "Compat") {
		cases = append(cases, conformanceCase{"told at once of a Java forceUnlock", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			c := newC()
			j := javadouble.New(topologyClient(t))
			defer j.Close()
			for _, s := range sides {
				ctx := tracked(t, c, s.take, name)
				var l *javadouble.Lock
				switch {
				case kind == "CompatFairLock":
					l = j.FairLock(name)
				case s.name == "read":
					l = j.ReadWriteLock(name).ReadLock()
				case kind == "CompatReadWriteLock":
					l = j.ReadWriteLock(name).WriteLock()
				default:
					l = j.Lock(name)
				}
				if ok, err := l.ForceUnlock(t.Context()); err != nil || !ok {
					t.Fatalf("Java forceUnlock = %v, %v", ok, err)
				}
				t.Logf("%s: told after %v", cmp.Or(s.name, "lock"), toldWithin(t, ctx, time.Now(), 100*time.Millisecond, "client tracking"))
			}
		}})
	}
	if kind == "RedLock" {
		return append(cases, conformanceCase{"told at once of a part lost", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			h := mustLock(t, lockOf(newC(), kind, name), t.Context())
			servers, _ := redLockServers.Load(t)
			parts := h.Parts()
			for i, srv := range servers.([2]*redistest.Server) {
				part := parts[i+1]
				vanish(t, srv.Client(t), partName(name, strconv.Itoa(i+2)), false)
				start := time.Now()
				t.Logf("part %d told after %v", i+2, toldWithin(t, part.Context(), start, 100*time.Millisecond, "client tracking"))
				if i == 0 {
					if h.Context().Err() != nil { // two of three parts are held: the group holds
						t.Fatalf("one part of three lost ended the group: %v", context.Cause(h.Context()))
					}
					continue
				}
				t.Logf("the group told after %v", toldWithin(t, h.Context(), start, 100*time.Millisecond, "client tracking"))
			}
		}})
	}
	return append(cases, conformanceCase{"told at once of a deletion or expiry", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
		c, rdb := newC(), topologyClient(t)
		for _, s := range sides {
			for _, expire := range []bool{false, true} {
				n := fmt.Sprintf("%s:%s:%v", name, s.name, expire)
				ctx := tracked(t, c, s.take, n)
				vanish(t, rdb, n, expire)
				t.Logf("%s expire=%v: told after %v", s.name, expire, toldWithin(t, ctx, time.Now(), 100*time.Millisecond, "client tracking"))
			}
		}
	}})
}

// permitSignalCase is the loss signal's conformance case of a leased permit (permitConformance).
func permitSignalCase() conformanceCase {
	return conformanceCase{"told at once of a deletion", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
		c := newC()
		before := redisson.TrackerChecks(c)
		ctx := permitHold(t, c, name)
		eventually(t, 5*time.Second, "the hold checked", func() bool { return redisson.TrackerChecks(c) > before })
		vanish(t, topologyClient(t), name, false)
		t.Logf("told after %v", toldWithin(t, ctx, time.Now(), 100*time.Millisecond, "client tracking"))
	}}
}

// vanish deletes (or expires in 1ms) every key of the object name on rdb, node by node on a
// Cluster. It fails the test if there is none.
func vanish(t *testing.T, rdb redis.UniversalClient, name string, expire bool) {
	t.Helper()
	var mu sync.Mutex
	found := 0
	each := func(ctx context.Context, c *redis.Client) error {
		keys, err := c.Keys(ctx, "*"+name+"*").Result()
		if err != nil {
			return err
		}
		for _, k := range keys {
			if expire {
				err = c.PExpire(ctx, k, time.Millisecond).Err()
			} else {
				err = c.Del(ctx, k).Err()
			}
			if err != nil {
				return err
			}
		}
		mu.Lock()
		found += len(keys)
		mu.Unlock()
		return nil
	}
	var err error
	switch r := rdb.(type) {
	case *redis.ClusterClient:
		err = r.ForEachMaster(t.Context(), each)
	case *redis.Client:
		err = each(t.Context(), r)
	default:
		t.Fatalf("vanish: a %T", rdb)
	}
	if err != nil || found == 0 {
		t.Fatalf("vanish %q: %d keys, %v", name, found, err)
	}
}

// TestLossSignalledAfterClusterFailover: a failover to a replica that lacks the keys (the replica
// was flushed on its own, made writable for it) tells every kind of hold within a second of the
// cluster agreeing on the new master, with the default watchdog.
//
// The replica is flushed only once it has applied every write of the holds: replication is
// asynchronous, and under load the writes can still be on their way (the replica's processed
// offset 0 against the master's 1868, measured) when FLUSHALL runs. They then land after it, the
// coordinated failover waits for them, and the new master has every lock: nothing is lost, and the
// library rightly tells nothing (the test then failed with "not told within 6s"). That the new
// master lacks the keys is checked after the failover.
func TestLossSignalledAfterClusterFailover(t *testing.T) {
	long(t)
	t.Parallel()
	ctx := t.Context()
	cl := redistest.StartCluster(t)
	admin := cl.Client(t)
	c := newClient(t, cl.Client(t))
	before := redisson.TrackerChecks(c)
	held := map[string]context.Context{}
	for _, k := range signalHolds {
		if !k.compat { // names "{lf}…": one slot, so one master and one failover for all
			held[k.kind] = k.take(t, c, "{lf}"+strings.ReplaceAll(k.kind, "/", "-"))
		}
	}
	eventually(t, 5*time.Second, "the holds checked", func() bool { return redisson.TrackerChecks(c) >= before+uint64(len(held)) })
	node, err := admin.MasterForKey(ctx, "lf")
	if err != nil {
		t.Fatal(err)
	}
	master := node.Options().Addr
	replica := replicaOf(t, cl, master)
	mrdb := redis.NewClient(&redis.Options{Addr: master})
	t.Cleanup(func() { _ = mrdb.Close() })
	written := replOffset(t, mrdb, "master_repl_offset") // every write of the holds is in it
	if applied := replOffset(t, replica, "slave_repl_offset"); applied < written {
		since := time.Now()
		eventually(t, 10*time.Second, "the replica to apply the holds' writes", func() bool {
			return replOffset(t, replica, "slave_repl_offset") >= written
		})
		t.Logf("the replica had applied %d of the master's %d bytes; caught up %v later", applied, written, time.Since(since))
	}
	mustDo(t, "CONFIG SET", replica.ConfigSet(ctx, "replica-read-only", "no").Err())
	mustDo(t, "FLUSHALL on the replica", replica.FlushAll(ctx).Err())
	promoted, err := cl.Failover(ctx, master)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if promoted != replica.Options().Addr {
		t.Fatalf("failover to %s, not to the flushed replica %s", promoted, replica.Options().Addr)
	}
	if keys, err := replica.Keys(ctx, "*{lf}*").Result(); err != nil || len(keys) > 0 {
		t.Fatalf("the new master has the holds' keys %v (%v): the failover lost nothing to tell", keys, err)
	}
	for kind, hctx := range held {
		t.Logf("%s: told after %v", kind, toldWithin(t, hctx, start, time.Second, "was open again"))
	}
}

// replOffset returns the integer field (master_repl_offset, slave_repl_offset: what a replica has
// applied) of rdb's INFO replication.
func replOffset(t *testing.T, rdb *redis.Client, field string) int64 {
	t.Helper()
	info, err := rdb.Info(t.Context(), "replication").Result()
	if err != nil {
		t.Fatalf("INFO replication on %s: %v", rdb.Options().Addr, err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO replication on %s: %s", rdb.Options().Addr, l)
			}
			return n
		}
	}
	t.Fatalf("INFO replication on %s has no %s", rdb.Options().Addr, field)
	return 0
}

// replicaOf returns a client (closed when the test ends) of a replica of the Cluster master at addr.
func replicaOf(t *testing.T, cl *redistest.Cluster, addr string) *redis.Client {
	t.Helper()
	_, port, _ := strings.Cut(addr, ":")
	for _, n := range cl.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr()})
		t.Cleanup(func() { _ = rdb.Close() })
		info, err := rdb.Info(t.Context(), "replication").Result()
		if err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_port:"+port+"\r\n") {
			return rdb
		}
	}
	t.Fatalf("no replica of %s", addr)
	return nil
}

// TestLossTrackerBlackholed: the tracker's connection goes silent (a black hole: no FIN, no
// answer) while one hold is deleted and another is not. The silence is no loss; the connection is
// given up after its ping's timeout, and once the network heals the deleted hold is told within a
// second and the other is checked and kept.
func TestLossTrackerBlackholed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	admin := srv.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	c := newClient(t, rdb, redisson.WithLossTracking(true)) // through the proxy on purpose
	kept := mustLock(t, c.Lock("bh-kept"), t.Context())
	gone := mustLock(t, c.Lock("bh-gone"), t.Context())
	eventually(t, 5*time.Second, "both holds checked", func() bool { return redisson.TrackerChecks(c) >= 2 })
	p.Blackhole(true)
	mustDo(t, "DEL", admin.Del(t.Context(), "bh-gone").Err()) // its invalidation goes into the hole
	eventually(t, 10*time.Second, "the silent connection given up", func() bool { return redisson.TrackerConns(c) == 0 })
	if kept.Context().Err() != nil || gone.Context().Err() != nil {
		t.Fatalf("told of a loss by silence: %v / %v", context.Cause(kept.Context()), context.Cause(gone.Context()))
	}
	checks := redisson.TrackerChecks(c)
	p.Blackhole(false)
	start := time.Now()
	t.Logf("told after the heal: %v", toldWithin(t, gone.Context(), start, time.Second, "was open again"))
	eventually(t, 5*time.Second, "the kept hold checked again", func() bool { return redisson.TrackerChecks(c) >= checks+2 })
	if err := kept.Context().Err(); err != nil {
		t.Fatalf("the kept hold ended: %v", context.Cause(kept.Context()))
	}
	mustUnlock(t, kept)
}

// TestLossTrackingIdleAfterHoldsEnd: once every hold of a Client has ended, its tracker has nothing
// left to watch: its connection asks for the node's role at the idle rate (every 2s), not every
// 250ms as while it tracks holds. A ReadWriteLock in Java Redisson's layout is tracked under its
// hash and its tag "{hash}", a key nothing writes: its ended hold must not stay tracked there.
func TestLossTrackingIdleAfterHoldsEnd(t *testing.T) {
	for _, k := range []struct {
		kind   string
		compat bool
	}{{"ReadWriteLock/read", false}, {"CompatReadWriteLock/read", true}, {"CompatReadWriteLock/write", true}} {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			opts := []redisson.Option{redisson.WithLossTracking(true)}
			if k.compat {
				opts = append(opts, redisson.WithRedissonCompat())
			}
			c, admin, _ := setup(t, opts...)
			before := redisson.TrackerChecks(c)
			rw := c.ReadWriteLock("sig-idle")
			var h *redisson.Hold
			var err error
			if strings.HasSuffix(k.kind, "/read") {
				h, err = rw.RLock(t.Context())
			} else {
				h, err = rw.Lock(t.Context())
			}
			mustDo(t, "lock", err)
			eventually(t, 5*time.Second, "the hold checked", func() bool { return redisson.TrackerChecks(c) > before })
			mustDo(t, "unlock", h.Unlock(t.Context()))
			// The ended hold forgotten: at its release's invalidation, or (a key nothing writes) by
			// the sweep.
			eventually(t, 5*time.Second, "the ended hold no longer tracked", func() bool { return redisson.TrackerTracked(c) == 0 })
			r0 := roleCalls(t, admin)
			time.Sleep(4 * time.Second) // the window the ping rate is measured over
			if n := roleCalls(t, admin) - r0; n > 4 {
				t.Errorf("%d ROLE pings in 4s with no hold left; at the idle rate (every 2s) 2, and at most 4", n)
			}
		})
	}
}

// roleCalls returns how many ROLE commands the server has run.
func roleCalls(t *testing.T, admin *redis.Client) int {
	t.Helper()
	s, err := admin.Info(t.Context(), "commandstats").Result()
	mustDo(t, "INFO commandstats", err)
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "cmdstat_role:calls="); ok {
			n, _ := strconv.Atoi(v[:strings.IndexByte(v, ',')])
			return n
		}
	}
	return 0
}

// TestLossTrackingNoFalseLossAfterSentinelFailover: after a Sentinel failover the Client works on
// the new master; the old one may still say it is a master for seconds (Sentinel turns it into a
// replica only once it sees it again). A hold taken on the new master meanwhile is held there, and
// must not be declared lost because the tracker's connection, opened before the failover, reads
// its key on the old master.
func TestLossTrackingNoFalseLossAfterSentinelFailover(t *testing.T) {
	long(t)
	t.Parallel()
	s := redistest.StartSentinel(t)
	c := newClient(t, s.Client(t, fastFailover), redisson.WithLossTracking(true))
	ctx := t.Context()
	before := redisson.TrackerChecks(c)
	h0 := mustLock(t, c.Lock("sig-failover-0"), ctx) // the tracker connects to the first master
	eventually(t, 5*time.Second, "the hold checked", func() bool { return redisson.TrackerChecks(c) > before })
	old := s.Master(ctx)
	sn := redis.NewSentinelClient(&redis.Options{Addr: s.SentinelAddrs()[0]})
	defer sn.Close()
	mustDo(t, "SENTINEL FAILOVER", sn.Failover(ctx, s.MasterName()).Err())
	// A new hold, as soon as the Client's commands reach the new master (before the sentinels
	// have turned the old master into a replica).
	var h *redisson.Hold
	var err error
	var m *redistest.Server
	eventually(t, 20*time.Second, "a lock taken on the new master", func() bool {
		if m = s.Master(ctx); m == nil || m == old {
			return false
		}
		if h != nil {
			_ = h.Unlock(ctx)
		}
		h, err = c.Lock("sig-failover-1").TryLock(ctx)
		return err == nil && m.Client(t).Exists(ctx, "sig-failover-1").Val() == 1
	})
	newAdmin := m.Client(t)
	t.Logf("failover %s -> %s", old.Addr(), m.Addr())
	oldRole, _ := old.Client(t).Do(ctx, "ROLE").Slice()
	checks := redisson.TrackerChecks(c)
	time.Sleep(time.Second) // the window in which a false verdict would come (20ms in, before the fix)
	held := newAdmin.Exists(ctx, "sig-failover-1").Val() == 1
	if h.Context().Err() != nil && held {
		t.Fatalf("a hold the new master still has was declared lost (old master's role then: %v, checks %d -> %d): %v",
			oldRole[0], checks, redisson.TrackerChecks(c), context.Cause(h.Context()))
	}
	_ = h.Unlock(ctx)
	_ = h0.Unlock(ctx)
}

// TestLossTrackerOneRereadPerHold: a hold whose lease someone shortened is read again when its
// time is up, once, however often it is checked meanwhile: a leased permit whose semaphore another
// Client keeps acquiring from and releasing to (each changes the leases, and each change checks
// the permit) costs one pending re-read, not one per check.
func TestLossTrackerOneRereadPerHold(t *testing.T) {
	t.Parallel()
	c, admin, srv := setup(t)
	other := newClient(t, srv.Client(t))
	ctx := t.Context()
	before := redisson.TrackerChecks(c)
	s := c.PermitExpirableSemaphore("sig-reread")
	if _, err := s.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	h, err := s.AcquireHeld(ctx, 1)
	mustDo(t, "AcquireHeld", err)
	eventually(t, 5*time.Second, "the permit checked", func() bool { return redisson.TrackerChecks(c) > before })
	// Its lease shortened to 10s, below half the 30s it is renewed to: a re-read is due then.
	now, err := admin.Time(ctx).Result()
	mustDo(t, "TIME", err)
	n := 0
	for _, k := range keysOf(t, admin, "sig-reread") {
		if admin.Type(ctx, k).Val() == "zset" {
			n++
			mustDo(t, "ZADD", admin.ZAddXX(ctx, k, redis.Z{Score: float64(now.Add(10 * time.Second).UnixMilli()), Member: h.IDs()[0]}).Err())
		}
	}
	if n != 1 {
		t.Fatalf("%d leases keys", n)
	}
	base := redisson.TrackerPending(c)
	o := other.PermitExpirableSemaphore("sig-reread")
	for range 100 {
		checks := redisson.TrackerChecks(c)
		ids, err := o.Acquire(ctx, 1, redisson.WithLease(time.Minute))
		mustDo(t, "Acquire", err)
		mustDo(t, "Release", o.Release(ctx, ids...))
		eventually(t, 5*time.Second, "the permit checked again", func() bool { return redisson.TrackerChecks(c) > checks })
	}
	if n := redisson.TrackerPending(c) - base; n > 2 {
		t.Fatalf("%d re-reads pending after 100 checks of one permit ending soon; want one", n)
	}
	if h.Context().Err() != nil {
		t.Fatalf("the permit ended: %v", context.Cause(h.Context()))
	}
	mustDo(t, "Release", s.Release(ctx, h.IDs()...))
}

// TestLossTrackingReReadsBounded: a hold ending sooner than its renewals allow (here a read hold
// of a fixed lease, past half of it) is read again when its time is up. One pending re-read per
// hold is all it keeps, however often a change of its key (another reader taking and releasing
// the same ReadWriteLock) checks it again: no goroutine per check, none kept per hold released.
func TestLossTrackingReReadsBounded(t *testing.T) {
	t.Parallel()
	c, _, srv := setup(t, redisson.WithLossTracking(true))
	other := newClient(t, srv.Client(t))
	ctx := t.Context()
	h, err := c.ReadWriteLock("sig-reread").RLock(ctx, redisson.WithLease(4*time.Second))
	mustDo(t, "RLock", err)
	time.Sleep(2100 * time.Millisecond) // past half its lease: each check now parks a re-read
	before := redisson.TrackerPending(c)
	orw := other.ReadWriteLock("sig-reread")
	churns := 0
	for start := time.Now(); time.Since(start) < time.Second; churns++ {
		oh, err := orw.RLock(ctx)
		mustDo(t, "other RLock", err)
		mustDo(t, "other Unlock", oh.Unlock(ctx))
	}
	eventually(t, 5*time.Second, "a re-read pending", func() bool { return redisson.TrackerPending(c) >= 1 })
	pending := redisson.TrackerPending(c) - before
	mustDo(t, "Unlock", h.Unlock(ctx))
	if pending > 2 {
		t.Errorf("%d goroutines parked for re-reads of 1 hold after %d changes of its key; one pending re-read per hold is enough", pending, churns)
	}
}

// TestLossTrackingNoReconnectStorm: when the tracker's connection and the Client's command path
// disagree for long (here a go-redis OnConnect that selects the database, which the tracker's
// own connection does not run: its check reads database 0 and finds the hold gone, while the
// Client's commands find it held), the hold is never taken for lost, and the tracker's next
// connection after each disagreement waits a pause that doubles (100ms to 5s): a few connections
// a second at most, not one per round trip.
func TestLossTrackingNoReconnectStorm(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.Select(ctx, 2).Err() }})
	t.Cleanup(func() { _ = rdb.Close() })
	c := newClient(t, rdb, redisson.WithLossTracking(true))
	h := mustLock(t, c.Lock("sig-storm"), t.Context())
	// Checked: found gone on the tracker's connection, held by the Client's.
	eventually(t, 5*time.Second, "the hold checked", func() bool { return redisson.TrackerChecks(c) > 0 })
	conns := func() int {
		s, err := admin.Info(t.Context(), "stats").Result()
		mustDo(t, "INFO stats", err)
		for _, l := range strings.Split(s, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_connections_received:"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatal("no total_connections_received")
		return 0
	}
	c0 := conns()
	time.Sleep(time.Second) // the window the connection rate is measured over
	n := conns() - c0
	if err := h.Context().Err(); err != nil {
		t.Fatalf("the hold, still held, was told lost: %v", context.Cause(h.Context()))
	}
	mustUnlock(t, h)
	// A redial every redialEvery (100ms) would be 10; allow twice that.
	if n > 20 {
		t.Errorf("%d connections opened in 1s while one hold was tracked", n)
	}
}

// TestLossTrackingFixedLeaseShortenedExpiry: a hold of a fixed lease (4s) whose key someone cuts to
// expire at 2.5s (not under half the lease, the re-read threshold, but 1.1s before the lease ends)
// among many keys that expire: the key's expiry is a loss, to be told within 100ms of it.
func TestLossTrackingFixedLeaseShortenedExpiry(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithLossTracking(true))
	ctx := t.Context()
	mustDo(t, "populate", admin.Eval(ctx, `for i = 1, 100000 do redis.call('SET', 'pop:' .. i, 'x', 'PX', 3600000) end return 1`, nil).Err())
	before := redisson.TrackerChecks(c)
	h := mustLock(t, c.Lock("sig-fixed-cut"), ctx, redisson.WithLease(4*time.Second))
	eventually(t, 5*time.Second, "the hold checked", func() bool { return redisson.TrackerChecks(c) > before })
	mustDo(t, "PEXPIRE", admin.PExpire(ctx, "sig-fixed-cut", 2500*time.Millisecond).Err())
	expires := time.Now().Add(2500 * time.Millisecond)
	took := toldWithin(t, h.Context(), expires, 100*time.Millisecond, "client tracking")
	t.Logf("told %v after the key's expiry", took)
}

// trackerDial reports whether the calling dial opens the loss tracker's own connection.
func trackerDial() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "internal/track.dial") {
			return true
		}
		if !more {
			return false
		}
	}
}

// TestLossTrackingConfirmDoesNotStallOthers: the confirmation of one loss through the Client's
// command path is stuck (its request lost on a stale connection of the pool: a NAT that dropped an
// idle connection), while the tracker's own connection is fine. Another hold, deleted meanwhile,
// is told within 100ms: confirmations run off the node's goroutine, and the second takes another
// connection of the pool.
func TestLossTrackingConfirmDoesNotStallOthers(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	admin := srv.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			if trackerDial() { // the tracker's connection goes straight to the server
				return d.DialContext(ctx, network, srv.Addr())
			}
			return d.DialContext(ctx, network, p.Addr())
		}})
	t.Cleanup(func() { _ = rdb.Close() })
	c := newClient(t, rdb, redisson.WithLossTracking(true))
	ctx := t.Context()
	a := mustLock(t, c.Lock("sig-stall-a"), ctx)
	b := mustLock(t, c.Lock("sig-stall-b"), ctx)
	eventually(t, 5*time.Second, "both holds checked", func() bool { return redisson.TrackerChecks(c) >= 2 })
	p.HoldRequests(1) // the next request on the command path: a's confirmation
	t.Cleanup(p.ReleaseHeld)
	mustDo(t, "DEL a", admin.Del(ctx, "sig-stall-a").Err())
	eventually(t, time.Second, "a's confirmation sent", func() bool { return p.Held() == 1 })
	mustDo(t, "DEL b", admin.Del(ctx, "sig-stall-b").Err())
	took := toldWithin(t, b.Context(), time.Now(), 100*time.Millisecond, "client tracking")
	t.Logf("b told after %v; a: %v", took, context.Cause(a.Context()))
}
