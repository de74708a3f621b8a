package redisson_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// The conformance suites: every primitive's basic contract, run on every topology (a standalone
// server, a Redis Cluster, a Sentinel-managed master). A primitive plugs in with one line in
// TestConformance; a case gets a fresh go-redis client per Client it needs and a name of its own.
// -short skips the Cluster and Sentinel (slow to start); make test runs them.

// topology is where a conformance case runs.
type topology struct {
	name string
	slow bool
	// rdb returns a new go-redis client (closed when the test ends) over the topology; a standalone
	// topology starts its server on the first call of each test.
	rdb func(t *testing.T) redis.UniversalClient
	// opts come before the case's own options in every Client of the topology.
	opts []redisson.Option
}

// shared holds the Cluster and the Sentinel set-up, started once per test binary on first use and
// closed by TestMain.
var shared struct {
	mu       sync.Mutex
	cluster  *redistest.Cluster
	sentinel *redistest.Sentinel
}

func sharedCluster(t *testing.T) *redistest.Cluster {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster == nil {
		c, err := redistest.StartClusterProcess()
		if err != nil {
			if errors.Is(err, redistest.ErrNoBinary) || errors.Is(err, redistest.ErrNoCLI) {
				t.Skip(err)
			}
			t.Fatal(err)
		}
		shared.cluster = c
	}
	return shared.cluster
}

func sharedSentinel(t *testing.T) *redistest.Sentinel {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.sentinel == nil {
		s, err := redistest.StartSentinelProcess()
		if err != nil {
			if errors.Is(err, redistest.ErrNoBinary) {
				t.Skip(err)
			}
			t.Fatal(err)
		}
		shared.sentinel = s
	}
	return shared.sentinel
}

// closeShared closes the shared topologies (TestMain, after the tests).
func closeShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster != nil {
		_ = shared.cluster.Close()
	}
	if shared.sentinel != nil {
		_ = shared.sentinel.Close()
	}
}

var topologies = []topology{
	{name: "standalone", rdb: func(t *testing.T) redis.UniversalClient {
		srv := standaloneFor(t)
		return srv.Client(t)
	}},
	{name: "cluster", slow: true, rdb: func(t *testing.T) redis.UniversalClient {
		return sharedCluster(t).Client(t)
	}},
	{name: "sentinel", slow: true, rdb: func(t *testing.T) redis.UniversalClient {
		return sharedSentinel(t).Client(t)
	}},
	// The replica-acknowledged mode, on the topologies that have replicas.
	{name: "cluster-acked", slow: true, rdb: func(t *testing.T) redis.UniversalClient {
		return sharedCluster(t).Client(t)
	}, opts: []redisson.Option{redisson.WithReplicaAcks(1, time.Second)}},
	{name: "sentinel-acked", slow: true, rdb: func(t *testing.T) redis.UniversalClient {
		return sharedSentinel(t).Client(t)
	}, opts: []redisson.Option{redisson.WithReplicaAcks(1, time.Second)}},
}

// standaloneFor returns the test's own standalone server, started on first use.
var standalones sync.Map // *testing.T → *redistest.Server

func standaloneFor(t *testing.T) *redistest.Server {
	if s, ok := standalones.Load(t); ok {
		return s.(*redistest.Server)
	}
	s := redistest.Start(t)
	standalones.Store(t, s)
	t.Cleanup(func() { standalones.Delete(t) })
	return s
}

// caseTopology is the topology each running conformance case runs on (see topologyClient).
var caseTopology sync.Map // *testing.T → topology

// topologyClient returns a new go-redis client (closed when the test ends) over the topology of the
// running conformance case t, for what is not a Client of this package (a Java Redisson double).
func topologyClient(t *testing.T) redis.UniversalClient {
	top, ok := caseTopology.Load(t)
	if !ok {
		t.Fatal("topologyClient outside a conformance case")
	}
	return top.(topology).rdb(t)
}

// conformanceCase is one case of a primitive's suite. newClient returns a new Client (over its own
// go-redis client) on the case's topology; name is unique to the case.
type conformanceCase struct {
	name string
	run  func(t *testing.T, newClient func(...redisson.Option) *redisson.Client, name string)
}

// TestConformance runs every primitive's suite on every topology.
func TestConformance(t *testing.T) {
	t.Parallel()
	type suite struct {
		primitive string
		cases     []conformanceCase
	}
	var suites []suite
	for _, kind := range append(slices.Clip(lockKinds), "SpinLock", "ReadWriteLock", "MultiLock", "RedLock", "CompatLock", "CompatFairLock", "CompatFencedLock", "CompatSpinLock", "CompatReadWriteLock") {
		suites = append(suites, suite{kind, lockConformance(kind)}) // the lock family
	}
	suites = append(suites, suite{"Semaphore", semaphoreConformance()}, suite{"CountDownLatch", latchConformance()},
		suite{"PermitExpirableSemaphore", append(permitConformance(), permitSignalCase())}, suite{"AtomicLong", atomicConformance()},
		suite{"BitSet", bitsetConformance()}, suite{"BloomFilter", bloomConformance()},
		suite{"HyperLogLog", hllConformance()}, suite{"RedissonCompat", compatSyncConformance()},
		suite{"RedissonCompatJava", compatSyncWithJavaConformance()}, suite{"RedissonCompatObjects", compatObjectsConformance()},
		suite{"RedissonCompatBloom", compatBloomConformance()}, suite{"RedissonCompatPermitJava", compatPermitWithJavaConformance()})
	// A topology's cases run in parallel (go test -parallel bounds them): each case has its own names
	// and Clients, and a standalone case its own server. The topologies run one after the other.
	for _, top := range topologies {
		t.Run(top.name, func(t *testing.T) {
			if top.slow && testing.Short() {
				t.Skip("-short: slow topology")
			}
			for _, s := range suites {
				for _, cc := range s.cases {
					t.Run(s.primitive+"/"+cc.name, func(t *testing.T) {
						t.Parallel()
						newC := func(opts ...redisson.Option) *redisson.Client {
							if strings.HasPrefix(s.primitive, "Compat") { // a lock in Java Redisson's format
								opts = append(opts, redisson.WithRedissonCompat())
							}
							c := newClient(t, top.rdb(t), append(slices.Clip(top.opts), opts...)...)
							if s.primitive == "RedLock" {
								// Its other parts on two standalone servers of the test's own, with
								// the case's options but not the topology's (they have no replicas).
								withRedLockPeers(t, c, opts...)
							}
							return c
						}
						name := "conf:" + strings.ReplaceAll(t.Name(), "/", ":")
						caseTopology.Store(t, top)
						defer caseTopology.Delete(t)
						cc.run(t, newC, name)
					})
				}
			}
		})
	}
}

// lockConformance is the suite of a lock kind: exclusion across Clients, hand-over to a waiter of
// another Client, re-entry, a fixed lease that runs out, force unlock, the loss signal, bad input;
// and a ReadWriteLock's per-side queries and forced unlocks (rwSides).
func lockConformance(kind string) []conformanceCase {
	cases := []conformanceCase{
		{"exclusion", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			var inside, overlaps, done int32
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 3 {
				c := newC()
				for range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 15 {
							h, err := lockOf(c, kind, name).Lock(ctx)
							if err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							inside++
							if inside > 1 {
								overlaps++
							}
							mu.Unlock()
							time.Sleep(time.Millisecond) // the critical section
							mu.Lock()
							inside--
							done++
							mu.Unlock()
							if err := h.Unlock(ctx); err != nil {
								t.Error(err)
								return
							}
						}
					}()
				}
			}
			wg.Wait()
			if overlaps != 0 || done != 90 {
				t.Fatalf("%d overlaps, %d of 90 critical sections", overlaps, done)
			}
		}},
		{"hand-over", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			a, b := newC(), newC()
			h := mustLock(t, lockOf(a, kind, name), ctx)
			got, cancel := lockAsync(ctx, lockOf(b, kind, name))
			defer cancel()
			eventually(t, 10*time.Second, "B to wait", func() bool { return b.Stats().Waiting == 1 })
			mustUnlock(t, h)
			r := recvWithin(t, got, 10*time.Second, "B to be handed the lock")
			if r.err != nil {
				t.Fatal(r.err)
			}
			mustUnlock(t, r.h)
		}},
		{"reentry", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			h := mustLock(t, lockOf(c, kind, name), ctx)
			inner, err := h.Reenter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := h.HoldCount(ctx); err != nil || n != 2 {
				t.Fatalf("hold count %d, %v; want 2", n, err)
			}
			mustUnlock(t, inner)
			if ok, err := lockOf(c, kind, name).IsLocked(ctx); err != nil || !ok {
				t.Fatalf("after the inner unlock: locked %v, %v; want held", ok, err)
			}
			mustUnlock(t, h)
			if ok, err := lockOf(c, kind, name).IsLocked(ctx); err != nil || ok {
				t.Fatalf("after the last unlock: locked %v, %v; want free", ok, err)
			}
		}},
		{"lease", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			a, b := newC(), newC()
			h := mustLock(t, lockOf(a, kind, name), ctx, redisson.WithLease(300*time.Millisecond))
			select {
			case <-h.Context().Done():
			case <-time.After(5 * time.Second):
				t.Fatal("a fixed lease did not end the hold")
			}
			if !errors.Is(context.Cause(h.Context()), redisson.ErrLockLost) {
				t.Fatalf("cause %v; want ErrLockLost", context.Cause(h.Context()))
			}
			mustUnlock(t, mustLock(t, lockOf(b, kind, name), ctx)) // the lock expired
		}},
		{"force unlock and loss", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			a, b := newC(redisson.WithWatchdogTimeout(600*time.Millisecond)), newC()
			h := mustLock(t, lockOf(a, kind, name), ctx)
			if ok, err := lockOf(b, kind, name).ForceUnlock(ctx); err != nil || !ok {
				t.Fatalf("force unlock = %v, %v", ok, err)
			}
			select { // the next renewal finds the lock gone
			case <-h.Context().Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the holder was not told of the loss")
			}
			if !errors.Is(context.Cause(h.Context()), redisson.ErrLockLost) {
				t.Fatalf("cause %v; want ErrLockLost", context.Cause(h.Context()))
			}
			if err := h.Unlock(ctx); !errors.Is(err, redisson.ErrNotHeld) && !errors.Is(err, redisson.ErrLockLost) {
				t.Fatalf("unlock after the loss: %v; want not held", err)
			}
		}},
		{"bounded and cancelled waits", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			a, b, c := newC(), newC(), newC()
			h := mustLock(t, lockOf(a, kind, name), ctx)
			if _, err := lockOf(b, kind, name).TryLock(ctx, redisson.WithWait(200*time.Millisecond)); !errors.Is(err, redisson.ErrNotObtained) {
				t.Fatalf("TryLock with a 200ms wait on a held lock: %v; want ErrNotObtained", err)
			}
			// B waits and gives up; C, queued behind it, is handed the lock at A's release.
			bctx, cancelB := context.WithCancel(ctx)
			bgot, _ := lockAsync(bctx, lockOf(b, kind, name))
			eventually(t, 10*time.Second, "B to wait", func() bool { return b.Stats().Waiting == 1 })
			cgot, cancelC := lockAsync(ctx, lockOf(c, kind, name))
			defer cancelC()
			eventually(t, 10*time.Second, "C to wait", func() bool { return c.Stats().Waiting == 1 })
			cancelB()
			if r := recvWithin(t, bgot, 10*time.Second, "B's cancelled wait"); !errors.Is(r.err, context.Canceled) {
				t.Fatalf("B's cancelled wait: %v; want context.Canceled", r.err)
			}
			mustUnlock(t, h)
			r := recvWithin(t, cgot, 10*time.Second, "C to be handed the lock")
			if r.err != nil {
				t.Fatal(r.err)
			}
			mustUnlock(t, r.h)
		}},
		{"bad input", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			c := newC()
			if _, err := lockOf(c, kind, "").Lock(ctx); !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Fatalf("empty name: %v; want ErrInvalidArgument", err)
			}
			if _, err := lockOf(c, kind, name).Lock(ctx, redisson.WithLease(-time.Second)); !errors.Is(err, redisson.ErrInvalidArgument) {
				t.Fatalf("negative lease: %v; want ErrInvalidArgument", err)
			}
			if strings.HasPrefix(kind, "Compat") { // in Java Redisson's format: another type of value
				v := c.AtomicLong(name)
				if err := v.Store(ctx, 1); err != nil {
					t.Fatal(err)
				}
				if _, err := lockOf(c, kind, name).TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
					t.Fatalf("a %s on a name holding an AtomicLong: %v; want ErrWrongType", kind, err)
				}
				_, _ = v.GetAndDelete(ctx)
				return
			}
			other, target := "Lock", name
			switch kind {
			case "Lock":
				other = "FairLock"
			case "MultiLock", "RedLock": // their first part is a Lock
				other, target = "FairLock", partName(name, map[string]string{"MultiLock": "a", "RedLock": "1"}[kind])
			}
			h := mustLock(t, lockOf(c, other, target), ctx)
			if _, err := lockOf(c, kind, name).TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
				t.Fatalf("a %s on a name held as a %s: %v; want ErrWrongType", kind, other, err)
			}
			mustUnlock(t, h)
		}},
	}
	if kind == "ReadWriteLock" || kind == "CompatReadWriteLock" {
		cases = append(cases, conformanceCase{"sides", rwSides})
	}
	return append(cases, lossSignalCases(kind)...)
}
