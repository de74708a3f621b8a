package javadouble

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/goredisson/redisson/redistest"
)

var (
	standaloneAddr string

	clusterOnce sync.Once
	cluster     *redistest.Cluster
	clusterErr  error
)

func TestMain(m *testing.M) {
	srv, err := redistest.StartProcess()
	if err != nil {
		fmt.Fprintln(os.Stderr, "javadouble tests:", err)
		if os.Getenv("REDISTEST_REQUIRE") == "1" {
			os.Exit(1)
		}
	} else {
		standaloneAddr = srv.Addr()
	}
	code := m.Run()
	if cluster != nil {
		_ = cluster.Close()
	}
	if srv != nil {
		_ = srv.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// topology is a way to reach Redis: a standalone server or a Redis Cluster (shared by the tests).
type topology struct {
	name string
	rdb  func(t *testing.T) redis.UniversalClient
}

var (
	standalone = topology{"standalone", func(t *testing.T) redis.UniversalClient {
		t.Helper()
		if standaloneAddr == "" {
			t.Skip("no redis-server")
		}
		rdb := redis.NewClient(&redis.Options{Addr: standaloneAddr})
		t.Cleanup(func() { _ = rdb.Close() })
		return rdb
	}}
	clustered = topology{"cluster", func(t *testing.T) redis.UniversalClient {
		t.Helper()
		clusterOnce.Do(func() { cluster, clusterErr = redistest.StartClusterProcess() })
		if clusterErr != nil {
			if os.Getenv("REDISTEST_REQUIRE") == "1" {
				t.Fatal(clusterErr)
			}
			t.Skip(clusterErr)
		}
		return cluster.Client(t)
	}}
	both = []topology{standalone, clustered}
)

// forTopologies runs f as a subtest on each topology.
func forTopologies(t *testing.T, tops []topology, f func(t *testing.T, rdb redis.UniversalClient)) {
	for _, top := range tops {
		t.Run(top.name, func(t *testing.T) { f(t, top.rdb(t)) })
	}
}

// newDouble returns a double Client on rdb, closed at the end of the test.
func newDouble(t *testing.T, rdb redis.UniversalClient, opts ...Option) *Client {
	t.Helper()
	c := New(rdb, opts...)
	t.Cleanup(c.Close)
	return c
}

// keyName is a key name unique to the test.
func keyName(t *testing.T, sfx string) string {
	return strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + "-" + sfx
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond every 10ms until it holds, failing the test after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// subscribers counts the subscribers of channel: PUBSUB NUMSUB on a standalone server, PUBSUB
// SHARDNUMSUB summed over the masters of a Cluster (so a count > 0 there proves an SSUBSCRIBE).
func subscribers(t *testing.T, rdb redis.UniversalClient, channel string) int64 {
	t.Helper()
	ctx := ctxFor(t, 5*time.Second)
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		var n int64
		err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			m, err := node.PubSubShardNumSub(ctx, channel).Result()
			mu.Lock()
			n += m[channel]
			mu.Unlock()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	m, err := rdb.PubSubNumSub(ctx, channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[channel]
}

// waiting is how many of c's callers wait on channel's entry.
func waiting(c *Client, channel string) int {
	c.mu.Lock()
	e := c.subs[channel]
	c.mu.Unlock()
	if e == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.waiting
}
