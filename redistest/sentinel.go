package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sentinel set-up settings.
const (
	sentinelConfFile   = "sentinel.conf"
	sentinelMasterName = "mymaster"
	sentinelDownAfter  = time.Second // down-after-milliseconds: how soon a dead master is noticed
	sentinelReadyWait  = 30 * time.Second
)

// Sentinel is a Sentinel-managed set-up on 127.0.0.1: a master with two replicas, watched by three
// sentinels (quorum 2) under the name [Sentinel.MasterName]. Its methods are safe for concurrent use.
type Sentinel struct {
	// Data are the three data nodes: Data[0] was started as the master, but failovers change roles
	// (see Master).
	Data []*Server
	// Sentinels are the three sentinel processes.
	Sentinels []*Server
	// Links are the replication links of Data[1] and Data[2] to the first master, each through an
	// in-process proxy: Blackhole or CloseConns on one cuts that replica off (a SIGSTOPped replica
	// would still receive its master's writes on resume). After a failover the sentinels point the
	// replicas at the new master directly.
	Links []*Proxy

	closer
}

// StartSentinel starts a Sentinel set-up for the test (see [StartSentinelProcess]) and registers a
// tb.Cleanup that closes it. If redis-server cannot be found it skips the test, or fails it if
// REDISTEST_REQUIRE=1; any other failure fails the test. It must be called from the test's goroutine.
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	s, err := StartSentinelProcess()
	mustStart(tb, err)
	closeAtEnd(tb, s.Close, append(append([]*Server(nil), s.Data...), s.Sentinels...)...)
	return s
}

// StartSentinelProcess starts a master, two replicas of it, and three sentinels (redis-server
// --sentinel) monitoring it with quorum 2, and blocks until every sentinel names the master and sees
// both replicas and the two other sentinels, and both replicas are in sync (bounded: 30 s). On error
// nothing is left running. On success the caller must call [Sentinel.Close].
func StartSentinelProcess() (*Sentinel, error) {
	s := &Sentinel{}
	fail := func(err error) (*Sentinel, error) {
		return nil, errors.Join(fmt.Errorf("redistest: starting a sentinel set-up: %w", err), s.Close())
	}
	master, err := StartProcess()
	if err != nil {
		return fail(err)
	}
	s.Data = append(s.Data, master)
	for range 2 {
		link, err := StartProxy(master.Addr())
		if err != nil {
			return fail(err)
		}
		s.Links = append(s.Links, link)
		_, port, _ := strings.Cut(link.Addr(), ":")
		r, err := StartProcess(WithArgs("--replicaof", loopback, port))
		if err != nil {
			return fail(err)
		}
		s.Data = append(s.Data, r)
	}
	conf := fmt.Sprintf("sentinel monitor %s %s %d 2\n"+
		"sentinel down-after-milliseconds %[1]s %[4]d\n"+
		"sentinel failover-timeout %[1]s %[5]d\n"+
		"sentinel parallel-syncs %[1]s 2\n",
		sentinelMasterName, loopback, master.Port(), sentinelDownAfter.Milliseconds(), (10 * time.Second).Milliseconds())
	for range 3 {
		sn, err := StartProcess(func(c *config) { c.sentinelConf = conf })
		if err != nil {
			return fail(err)
		}
		s.Sentinels = append(s.Sentinels, sn)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sentinelReadyWait)
	defer cancel()
	if _, err := s.WaitMaster(ctx, ""); err != nil {
		return fail(err)
	}
	return s, nil
}

// MasterName is the name the sentinels monitor the master under.
func (s *Sentinel) MasterName() string { return sentinelMasterName }

// SentinelAddrs returns the sentinels' addresses. It never blocks.
func (s *Sentinel) SentinelAddrs() []string {
	var addrs []string
	for _, n := range s.Sentinels {
		addrs = append(addrs, n.Addr())
	}
	return addrs
}

// Options returns new go-redis failover options for the set-up: the master name, the sentinels, and
// ContextTimeoutEnabled true. Each call returns a fresh value the caller may modify.
func (s *Sentinel) Options() *redis.FailoverOptions {
	return &redis.FailoverOptions{
		MasterName:            sentinelMasterName,
		SentinelAddrs:         s.SentinelAddrs(),
		ContextTimeoutEnabled: true,
	}
}

// Client returns a new go-redis failover client (it follows the master the sentinels name), built
// from [Sentinel.Options] after applying each mod, and registers a tb.Cleanup that closes it. It does
// not block.
func (s *Sentinel) Client(tb testing.TB, mod ...func(*redis.FailoverOptions)) *redis.Client {
	tb.Helper()
	opt := s.Options()
	for _, m := range mod {
		m(opt)
	}
	c := redis.NewFailoverClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Master returns the data node the sentinels currently name as master, or nil.
func (s *Sentinel) Master(ctx context.Context) *Server {
	for _, sn := range s.Sentinels {
		if sn.PID() == 0 {
			continue
		}
		rdb := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), MaxRetries: -1})
		addr, err := rdb.GetMasterAddrByName(ctx, sentinelMasterName).Result()
		rdb.Close()
		if err == nil && len(addr) == 2 {
			for _, d := range s.Data {
				if d.Addr() == loopback+":"+addr[1] {
					return d
				}
			}
		}
	}
	return nil
}

// WaitMaster blocks until every running sentinel names the same master, other than not (an address;
// "" for any), and sees as many replicas in sync and other sentinels as are running, or ctx ends. It
// returns the master.
func (s *Sentinel) WaitMaster(ctx context.Context, not string) (*Server, error) {
	var why string
	for {
		var m *Server
		m, why = s.agreed(ctx, not)
		if why == "" {
			return m, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("redistest: sentinels not settled: %s", why)
		case <-time.After(50 * time.Millisecond): // polling the sentinels' view
		}
	}
}

// agreed returns the master every sentinel names, or why they do not agree yet.
func (s *Sentinel) agreed(ctx context.Context, not string) (*Server, string) {
	running := func(nodes []*Server) (n int) {
		for _, x := range nodes {
			if x.PID() != 0 {
				n++
			}
		}
		return n
	}
	var master *Server
	for _, sn := range s.Sentinels {
		if sn.PID() == 0 {
			continue
		}
		rdb := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), MaxRetries: -1})
		info, err := rdb.Master(ctx, sentinelMasterName).Result()
		rdb.Close()
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", sn.Addr(), err)
		}
		addr := info["ip"] + ":" + info["port"]
		if addr == not || strings.Contains(info["flags"], "down") || strings.Contains(info["flags"], "failover") {
			return nil, fmt.Sprintf("%s: master %s (%s)", sn.Addr(), addr, info["flags"])
		}
		if master != nil && master.Addr() != addr {
			return nil, fmt.Sprintf("sentinels disagree: %s vs %s", master.Addr(), addr)
		}
		for _, d := range s.Data {
			if d.Addr() == addr {
				master = d
			}
		}
		if master == nil {
			return nil, "unknown master " + addr
		}
		// Counted as known, not as up: a killed node stays listed.
		if n, _ := strconv.Atoi(info["num-other-sentinels"]); n < running(s.Sentinels)-1 {
			return nil, fmt.Sprintf("%s sees %d other sentinels", sn.Addr(), n)
		}
		if n, _ := strconv.Atoi(info["num-slaves"]); n < running(s.Data)-1 {
			return nil, fmt.Sprintf("%s sees %d replicas", sn.Addr(), n)
		}
	}
	if master == nil {
		return nil, "no sentinel answers"
	}
	for _, d := range s.Data {
		if d == master || d.PID() == 0 {
			continue
		}
		rdb := redis.NewClient(&redis.Options{Addr: d.Addr(), MaxRetries: -1})
		repl, err := rdb.Info(ctx, "replication").Result()
		rdb.Close()
		if err != nil || !s.replicates(repl, master) || !strings.Contains(repl, "master_link_status:up") {
			return nil, d.Addr() + ": replica not in sync with " + master.Addr()
		}
	}
	return master, ""
}

// replicates reports whether a replica's INFO replication shows it replicating master, directly or
// through one of the Links.
func (s *Sentinel) replicates(info string, master *Server) bool {
	if strings.Contains(info, fmt.Sprintf("master_port:%d\r", master.Port())) {
		return true
	}
	for _, l := range s.Links {
		_, port, _ := strings.Cut(l.Addr(), ":")
		if l.target == master.Addr() && strings.Contains(info, "master_port:"+port+"\r") {
			return true
		}
	}
	return false
}

// Failover asks a sentinel for a failover (SENTINEL FAILOVER: no agreement needed, the master need
// not be down) and blocks until every sentinel names a new master with the others in sync, or ctx
// ends. It returns the new master.
func (s *Sentinel) Failover(ctx context.Context) (*Server, error) {
	old := s.Master(ctx)
	if old == nil {
		return nil, errors.New("redistest: failover: no master")
	}
	var err error
	for _, sn := range s.Sentinels {
		if sn.PID() == 0 {
			continue
		}
		rdb := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), MaxRetries: -1})
		err = rdb.Failover(ctx, sentinelMasterName).Err()
		rdb.Close()
		if err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("redistest: SENTINEL FAILOVER: %w", err)
	}
	return s.WaitMaster(ctx, old.Addr())
}

// Close closes every sentinel and data node (see [Server.Close]). It is idempotent.
func (s *Sentinel) Close() error {
	err := s.closeAll(append(append([]*Server(nil), s.Sentinels...), s.Data...))
	for _, l := range s.Links {
		err = errors.Join(err, l.Close())
	}
	return err
}
