package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis Cluster settings of the nodes StartCluster starts.
const (
	clusterBusOffset   = 10000           // a node's cluster bus listens on its port + 10000
	clusterNodeTimeout = 2 * time.Second // --cluster-node-timeout: how soon a failed master is replaced
	clusterReadyWait   = 30 * time.Second
)

// ErrNoCLI is returned, wrapped, by [StartClusterProcess] when the redis-cli binary, which creates
// the cluster, cannot be found: $REDIS_CLI_BIN names a missing file, or it is unset and "redis-cli"
// is not in $PATH. Test with errors.Is.
var ErrNoCLI = errors.New("redis-cli binary not found")

// Cluster is a Redis Cluster of 3 masters with one replica each, every node a [Server] on 127.0.0.1
// with its own directory. Its methods are safe for concurrent use.
type Cluster struct {
	// Nodes are the six nodes, in the order they were created: redis-cli made the first three
	// masters and the others their replicas, but failovers change roles (see Masters).
	Nodes []*Server

	closer
}

// StartCluster starts a Redis Cluster for the test (see [StartClusterProcess]) and registers a
// tb.Cleanup that closes it. If redis-server or redis-cli cannot be found it skips the test, or
// fails it if REDISTEST_REQUIRE=1; any other failure fails the test. It blocks until the cluster is
// ready. It must be called from the test's goroutine.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	c, err := StartClusterProcess()
	mustStart(tb, err)
	closeAtEnd(tb, c.Close, c.Nodes...)
	return c
}

// StartClusterProcess starts six cluster-enabled redis-server nodes, joins them with
// `redis-cli --cluster create` (3 masters, 1 replica each, all 16384 slots assigned), and blocks
// until every node reports cluster_state:ok, agrees on the slot map, and every replica is in sync
// with its master (bounded: 30 s). On error nothing is left running. On success the caller must call
// [Cluster.Close].
func StartClusterProcess() (*Cluster, error) {
	cli, err := cliBinary()
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	c := &Cluster{}
	fail := func(err error) (*Cluster, error) {
		return nil, errors.Join(fmt.Errorf("redistest: starting a cluster: %w", err), c.Close())
	}
	for range 6 {
		s, err := StartProcess(func(cfg *config) { cfg.clusterNode = true })
		if err != nil {
			return fail(err)
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyWait)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out))
	}
	if err := c.WaitReady(ctx); err != nil {
		return fail(err)
	}
	return c, nil
}

// cliBinary returns the path of redis-cli, or an error wrapping ErrNoCLI.
func cliBinary() (string, error) {
	name := "redis-cli"
	if p := os.Getenv("REDIS_CLI_BIN"); p != "" {
		name = p
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w (%s): %v; install it (e.g. apt-get install redis-tools) or set REDIS_CLI_BIN", ErrNoCLI, name, err)
	}
	return path, nil
}

// Addrs returns the addresses of all nodes. It never blocks.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	return addrs
}

// Options returns new go-redis cluster options for the cluster: every node as a seed address and
// ContextTimeoutEnabled true. Each call returns a fresh value the caller may modify.
func (c *Cluster) Options() *redis.ClusterOptions {
	return &redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true}
}

// Client returns a new go-redis cluster client, built from [Cluster.Options] after applying each mod,
// and registers a tb.Cleanup that closes it. It does not block.
func (c *Cluster) Client(tb testing.TB, mod ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	tb.Helper()
	opt := c.Options()
	for _, m := range mod {
		m(opt)
	}
	cc := redis.NewClusterClient(opt)
	tb.Cleanup(func() { _ = cc.Close() })
	return cc
}

// nodeInfo is one line of CLUSTER NODES as seen by one node.
type nodeInfo struct {
	id, addr, master string // master: the master's id for a replica, "" for a master
	isMaster, failed bool
	slots            int
	ranges           [][2]int // the slots it serves
}

// clusterNodes asks the node at addr for CLUSTER NODES.
func clusterNodes(ctx context.Context, addr string) ([]nodeInfo, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	out, err := rdb.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	var nodes []nodeInfo
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		n := nodeInfo{id: f[0], addr: strings.SplitN(f[1], "@", 2)[0]}
		n.isMaster = strings.Contains(f[2], "master")
		n.failed = strings.Contains(f[2], "fail") && !strings.Contains(f[2], "fail?")
		if f[3] != "-" {
			n.master = f[3]
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being migrated
			}
			var lo, hi int
			if k, _ := fmt.Sscanf(r, "%d-%d", &lo, &hi); k == 2 {
				n.slots += hi - lo + 1
				n.ranges = append(n.ranges, [2]int{lo, hi})
			} else if k == 1 {
				n.slots++
				n.ranges = append(n.ranges, [2]int{lo, lo})
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// Masters returns the addresses of the running nodes that are masters with slots, as the first
// running node that answers sees them. It blocks for a round trip per node tried.
func (c *Cluster) Masters(ctx context.Context) ([]string, error) {
	var lastErr error
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		nodes, err := clusterNodes(ctx, n.Addr())
		if err != nil {
			lastErr = err
			continue
		}
		var masters []string
		for _, ni := range nodes {
			if ni.isMaster && !ni.failed && ni.slots > 0 {
				masters = append(masters, ni.addr)
			}
		}
		return masters, nil
	}
	return nil, fmt.Errorf("redistest: no cluster node answers: %v", lastErr)
}

// Node returns the node listening on addr, or nil.
func (c *Cluster) Node(addr string) *Server {
	for _, n := range c.Nodes {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// WaitReady blocks until every running node reports cluster_state:ok, every running node sees
// the same masters owning all 16384 slots between them, and every replica has its replication
// link up, or ctx ends.
func (c *Cluster) WaitReady(ctx context.Context) error {
	var why string
	for {
		why = c.notReady(ctx)
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: cluster not ready: %s", why)
		case <-time.After(50 * time.Millisecond): // polling the nodes' view
		}
	}
}

// notReady returns why the cluster is not ready, or "".
func (c *Cluster) notReady(ctx context.Context) string {
	view := ""
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1})
		info, err := rdb.ClusterInfo(ctx).Result()
		repl, err2 := rdb.Info(ctx, "replication").Result()
		rdb.Close()
		if err != nil || err2 != nil {
			return fmt.Sprintf("%s: %v %v", n.Addr(), err, err2)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return n.Addr() + ": cluster_state not ok"
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return n.Addr() + ": replica not in sync"
		}
		nodes, err := clusterNodes(ctx, n.Addr())
		if err != nil {
			return err.Error()
		}
		var masters []string
		slots := 0
		for _, ni := range nodes {
			if ni.isMaster && !ni.failed && ni.slots > 0 {
				masters = append(masters, ni.addr)
				slots += ni.slots
			}
		}
		if slots != 16384 {
			return fmt.Sprintf("%s sees %d slots assigned", n.Addr(), slots)
		}
		slices.Sort(masters)
		v := strings.Join(masters, ",")
		if view != "" && v != view {
			return fmt.Sprintf("nodes disagree on the masters: %s vs %s", view, v)
		}
		view = v
	}
	return ""
}

// Failover promotes a replica of the master at addr with CLUSTER FAILOVER (a coordinated failover:
// no write is lost) and blocks until the cluster is ready again with that replica as master, or ctx
// ends. It returns the new master's address.
func (c *Cluster) Failover(ctx context.Context, master string) (string, error) {
	nodes, err := clusterNodes(ctx, master)
	if err != nil {
		return "", fmt.Errorf("redistest: failover: %w", err)
	}
	var masterID, replica string
	for _, n := range nodes {
		if n.addr == master {
			masterID = n.id
		}
	}
	for _, n := range nodes {
		if masterID != "" && n.master == masterID && !n.failed {
			replica = n.addr
		}
	}
	if replica == "" {
		return "", fmt.Errorf("redistest: failover: no replica of %s", master)
	}
	rdb := redis.NewClient(&redis.Options{Addr: replica, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.ClusterFailover(ctx).Err(); err != nil {
		return "", fmt.Errorf("redistest: CLUSTER FAILOVER on %s: %w", replica, err)
	}
	for {
		masters, err := c.Masters(ctx)
		if err == nil && slices.Contains(masters, replica) && !slices.Contains(masters, master) && c.notReady(ctx) == "" {
			return replica, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("redistest: failover of %s to %s did not complete: %w", master, replica, ctx.Err())
		case <-time.After(50 * time.Millisecond): // polling the nodes' view
		}
	}
}

// MigrateSlot moves slot to the master at to as `redis-cli --cluster reshard` does: CLUSTER SETSLOT
// IMPORTING on the destination and MIGRATING on the source, MIGRATE of every key in the slot (TTLs
// kept), then CLUSTER SETSLOT NODE on every master. Clients see ASK while keys move and MOVED after.
// It blocks until done or ctx ends.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, to string) error {
	masters, err := c.Masters(ctx)
	if err != nil {
		return err
	}
	nodes, err := clusterNodes(ctx, to)
	if err != nil {
		return fmt.Errorf("redistest: migrate: %w", err)
	}
	var from, fromID, toID string
	for _, n := range nodes {
		if n.addr == to {
			toID = n.id
		}
		for _, r := range n.ranges {
			if n.isMaster && !n.failed && r[0] <= slot && slot <= r[1] {
				from, fromID = n.addr, n.id
			}
		}
	}
	if from == "" || toID == "" || from == to {
		return fmt.Errorf("redistest: migrate slot %d from %q to %q: no such move", slot, from, to)
	}
	src := redis.NewClient(&redis.Options{Addr: from, MaxRetries: -1})
	defer src.Close()
	dst := redis.NewClient(&redis.Options{Addr: to, MaxRetries: -1})
	defer dst.Close()
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromID).Err(); err != nil {
		return fmt.Errorf("redistest: migrate: %w", err)
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", toID).Err(); err != nil {
		return fmt.Errorf("redistest: migrate: %w", err)
	}
	host, port, _ := strings.Cut(to, ":")
	for {
		keys, err := src.Do(ctx, "CLUSTER", "GETKEYSINSLOT", slot, 1000).StringSlice()
		if err != nil {
			return fmt.Errorf("redistest: migrate: %w", err)
		}
		if len(keys) == 0 {
			break
		}
		for _, k := range keys {
			if err := src.Migrate(ctx, host, port, k, 0, 5*time.Second).Err(); err != nil && !errors.Is(err, redis.Nil) {
				return fmt.Errorf("redistest: migrate %q: %w", k, err)
			}
		}
	}
	for _, m := range masters {
		rdb := redis.NewClient(&redis.Options{Addr: m, MaxRetries: -1})
		err := rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", toID).Err()
		rdb.Close()
		if err != nil {
			return fmt.Errorf("redistest: migrate: %w", err)
		}
	}
	return c.WaitReady(ctx)
}

// Close closes every node (see [Server.Close]). It is idempotent.
func (c *Cluster) Close() error { return c.closeAll(c.Nodes) }

// closer closes a set of servers once.
type closer struct {
	once sync.Once
	err  error
}

// closeAll closes every server the first time it is called, and returns that outcome every time.
func (c *closer) closeAll(servers []*Server) error {
	c.once.Do(func() {
		var errs []error
		for _, n := range servers {
			errs = append(errs, n.Close())
		}
		c.err = errors.Join(errs...)
	})
	return c.err
}
