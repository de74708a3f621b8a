package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// The library's reads reach the master whatever read routing the user's go-redis client has: a
// replica may lag behind, and what the reads find decides what the library guarantees (a latch let
// through while its count is 3, a lock reported free, an element missing from a BloomFilter). The
// user keeps the routing for their own commands.

// readCommands are the read-only commands the library sends as plain commands: a data-read on a
// replica is one of these. PFCOUNT is not counted: it is also replicated (when it updates the cached
// cardinality), so a replica's count of it includes its master's.
var readCommands = []string{"get", "mget", "hmget", "hget", "hgetall", "pttl", "ttl", "exists", "getbit",
	"bitcount", "strlen", "bitfield_ro", "zscore", "zrange"}

// replicaReads sums the calls of readCommands on servers (INFO commandstats).
func replicaReads(t *testing.T, servers []*redistest.Server) int {
	t.Helper()
	total := 0
	for _, s := range servers {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
		info, err := rdb.Info(t.Context(), "commandstats").Result()
		_ = rdb.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			for _, cmd := range readCommands {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
					n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
					total += n
				}
			}
		}
	}
	return total
}

// everyRead runs each read of the library once on c, against objects it sets up first, checking
// what each returns.
func everyRead(t *testing.T, c *redisson.Client) {
	t.Helper()
	ctx := t.Context()
	n := "routing-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	h := mustLock(t, c.Lock(n+":lock"), ctx)
	if locked, err := c.Lock(n + ":lock").IsLocked(ctx); err != nil || !locked {
		t.Errorf("IsLocked = %v, %v; want true", locked, err)
	}
	if ttl, err := c.Lock(n + ":lock").RemainingTTL(ctx); err != nil || ttl <= 0 {
		t.Errorf("RemainingTTL = %v, %v; want > 0", ttl, err)
	}
	if cnt, err := h.HoldCount(ctx); err != nil || cnt != 1 {
		t.Errorf("HoldCount = %v, %v; want 1", cnt, err)
	}
	// Inspect's snapshot, then its read of the holder's process record (on another slot).
	awaitRecord(t, c)
	if in, err := c.Inspect(ctx, n+":lock"); err != nil || len(in.Holders) != 1 || in.Holders[0].Process == nil {
		t.Errorf("Inspect = %+v, %v; want the holder and its process", in, err)
	}
	mustUnlock(t, h)
	if _, err := c.FencedSet(ctx, "{"+n+"}:fenced", "v", 3); err != nil {
		t.Fatal(err)
	}
	if v, tok, err := c.FencedGet(ctx, "{"+n+"}:fenced"); err != nil || v != "v" || tok != 3 {
		t.Errorf("FencedGet = %q, %d, %v; want v, 3", v, tok, err)
	}
	a := c.AtomicLong(n + ":counter")
	if _, err := a.Add(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Load(ctx); err != nil || v != 7 {
		t.Errorf("AtomicLong.Load after Add(7) = %v, %v", v, err)
	}
	l := c.CountDownLatch(n + ":latch")
	if _, err := l.TrySetCount(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if cnt, err := l.Count(ctx); err != nil || cnt != 3 {
		t.Errorf("CountDownLatch.Count = %v, %v; want 3", cnt, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	if err := l.Wait(wctx); err == nil {
		t.Error("CountDownLatch.Wait returned while the count was 3")
	}
	cancel()
	b := c.BitSet(n + ":bits")
	if _, err := b.Set(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Get(ctx, 9); err != nil || !v {
		t.Errorf("BitSet.Get = %v, %v; want true", v, err)
	}
	if v, err := b.Cardinality(ctx); err != nil || v != 1 {
		t.Errorf("BitSet.Cardinality = %v, %v; want 1", v, err)
	}
	if v, err := b.Size(ctx); err != nil || v != 16 {
		t.Errorf("BitSet.Size = %v, %v; want 16", v, err)
	}
	if v, err := b.Bytes(ctx); err != nil || len(v) != 2 {
		t.Errorf("BitSet.Bytes = %v, %v; want 2 bytes", v, err)
	}
	if v, err := b.GetField(ctx, redisson.Uint8, 8); err != nil || v != 64 {
		t.Errorf("BitSet.GetField = %v, %v; want 64", v, err)
	}
	f := c.BloomFilter(n + ":bloom")
	if _, err := f.TryInit(ctx, 100, 0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if v, err := f.Contains(ctx, "x"); err != nil || !v {
		t.Errorf("BloomFilter.Contains after Add = %v, %v; want true", v, err)
	}
	hll := c.HyperLogLog(n + ":hll")
	if _, err := hll.Add(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if v, err := hll.Count(ctx); err != nil || v != 1 {
		t.Errorf("HyperLogLog.Count = %v, %v; want 1", v, err)
	}
}

// The replicas of a Cluster whose client routes reads to replicas (ReadOnly; RouteRandomly) serve
// none of the library's reads. (RouteByLatency routes as RouteRandomly does, by the same ReadOnly
// flag; go-redis v9.22's latency probes race with its dials under -race, so it is not run here.)
func TestReadsReachTheMasterWhateverTheReadRouting(t *testing.T) {
	long(t)
	cl := sharedCluster(t)
	masters, err := cl.Masters(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var replicas []*redistest.Server
	for _, s := range cl.Nodes {
		if !slices.Contains(masters, s.Addr()) {
			replicas = append(replicas, s)
		}
	}
	for name, mod := range map[string]func(*redis.ClusterOptions){
		"ReadOnly":      func(o *redis.ClusterOptions) { o.ReadOnly = true },
		"RouteRandomly": func(o *redis.ClusterOptions) { o.RouteRandomly = true },
	} {
		t.Run(name, func(t *testing.T) {
			rdb := cl.Client(t, mod)
			c := newClient(t, rdb, redisson.KeepProcessRecord())
			// A new Cluster lists its replicas once they have synced: wait until the client knows them.
			eventually(t, 30*time.Second, "the client to know the replicas", func() bool {
				rdb.ReloadState(t.Context())
				r, err := rdb.SlaveForKey(t.Context(), "routing-probe")
				m, merr := rdb.MasterForKey(t.Context(), "routing-probe")
				return err == nil && merr == nil && r.Options().Addr != m.Options().Addr
			})
			// The client does route plain reads to replicas: the test can fail.
			before := replicaReads(t, replicas)
			for i := range 40 {
				_ = rdb.Get(t.Context(), "routing-probe-"+strconv.Itoa(i)).Err()
			}
			if replicaReads(t, replicas) == before {
				t.Fatalf("the %s client sent no read to a replica: the check below proves nothing", name)
			}
			before = replicaReads(t, replicas)
			everyRead(t, c)
			if got := replicaReads(t, replicas) - before; got != 0 {
				t.Fatalf("replicas served %d of the library's reads through a %s client; want 0", got, name)
			}
		})
	}
}

// The library's reads answer the same through a client that routes reads to replicas (sent as
// MULTI/EXEC) as through one that does not, on a missing key (a zero value, no error) and on a key
// holding another type (ErrWrongType): a nil or an error reply inside EXEC is decoded as a lone
// command's.
func TestReadsDecodeMissingAndWrongTypeKeysWhateverTheReadRouting(t *testing.T) {
	long(t)
	cl := sharedCluster(t)
	plain := newClient(t, cl.Client(t))
	routed := newClient(t, cl.Client(t, func(o *redis.ClusterOptions) { o.ReadOnly = true }))
	admin := cl.Client(t)
	ctx := t.Context()
	n := "decode-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	reads := map[string]func(c *redisson.Client, name string) (any, error){
		"AtomicLong.Load": func(c *redisson.Client, name string) (any, error) { return c.AtomicLong(name).Load(ctx) },
		"BitSet.Get":      func(c *redisson.Client, name string) (any, error) { return c.BitSet(name).Get(ctx, 3) },
		"BitSet.Bytes":    func(c *redisson.Client, name string) (any, error) { return c.BitSet(name).Bytes(ctx) },
		"BitSet.Size":     func(c *redisson.Client, name string) (any, error) { return c.BitSet(name).Size(ctx) },
		"BitSet.Cardinality": func(c *redisson.Client, name string) (any, error) {
			return c.BitSet(name).Cardinality(ctx)
		},
		"BitSet.GetField": func(c *redisson.Client, name string) (any, error) {
			return c.BitSet(name).GetField(ctx, redisson.Uint8, 0)
		},
		"CountDownLatch.Count": func(c *redisson.Client, name string) (any, error) { return c.CountDownLatch(name).Count(ctx) },
		"Lock.IsLocked":        func(c *redisson.Client, name string) (any, error) { return c.Lock(name).IsLocked(ctx) },
		"Lock.RemainingTTL":    func(c *redisson.Client, name string) (any, error) { return c.Lock(name).RemainingTTL(ctx) },
		"HyperLogLog.Count":    func(c *redisson.Client, name string) (any, error) { return c.HyperLogLog(name).Count(ctx) },
		"BloomFilter.Contains": func(c *redisson.Client, name string) (any, error) { return c.BloomFilter(name).Contains(ctx, "x") },
	}
	for what, read := range reads {
		for _, state := range []string{"missing", "hash"} {
			name := n + "-" + what + "-" + state
			if state == "hash" {
				// The object key of each kind (keys.go): found through a lock of the name.
				key := redisson.LockKeyOf(plain, name)
				if strings.HasPrefix(what, "Lock.") {
					if err := admin.HSet(ctx, key, "f", "v").Err(); err != nil {
						t.Fatal(err)
					}
				} else {
					// Data objects: a hash under the object key (every kind's is the name's).
					_ = admin.HSet(ctx, key, "f", "v").Err()
				}
			}
			pv, perr := read(plain, name)
			rv, rerr := read(routed, name)
			if fmt.Sprint(pv) != fmt.Sprint(rv) || errors.Is(perr, redisson.ErrWrongType) != errors.Is(rerr, redisson.ErrWrongType) ||
				errors.Is(perr, redisson.ErrNotInitialized) != errors.Is(rerr, redisson.ErrNotInitialized) || (perr == nil) != (rerr == nil) {
				t.Errorf("%s on a %s key: %v, %v without read routing; %v, %v with ReadOnly", what, state, pv, perr, rv, rerr)
			}
			if state == "hash" && !errors.Is(rerr, redisson.ErrWrongType) {
				t.Errorf("%s on a hash with ReadOnly: %v, %v; want ErrWrongType", what, rv, rerr)
			}
		}
	}
}
