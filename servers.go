package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// What the Client knows of the masters it uses, from INFO: how many replicas each has (the
// replica-acknowledged mode, replicas.go) and its maxmemory-policy.
//
// Eviction. A lock lives in a key with a TTL, and under a volatile-* policy those are exactly the
// keys Redis evicts first when memory runs out: an evicted lock is free, so a second owner can take
// it while the first still works. Under an allkeys-* policy any key may go, the fencing counter of a
// FencedLock (which has no TTL) included: its tokens then start again from 1, and a resource that
// trusts them accepts an older holder's writes. With noeviction (Redis's default) a full server
// refuses writes instead, which fails acquisitions loudly and keeps every guarantee. So:
//   - the Client checks the policy of a master with its first command to it and again every
//     serverSweepEvery (a failover may bring a master configured otherwise), logs a warning for an
//     evicting one and reports it in Stats.Evicting; CheckEviction asks every master now;
//   - a FencedLock refuses to be acquired (ErrNotObtained, ErrEvicting) on a master known to run an
//     allkeys-* policy: its tokens would not be worth their name. The other locks are not refused
//     (Redisson's are not either): the warning says what the risk is.

// serverCheckEvery is how long what INFO said of a master is trusted.
const serverCheckEvery = 10 * time.Second

// serverSweepEvery is how often the Client checks a master's eviction policy (see checkServer).
const serverSweepEvery = time.Minute

// serverInfo is what INFO said of one master.
type serverInfo struct {
	replicas int    // connected_slaves (-1 if unknown)
	policy   string // maxmemory_policy ("" if unknown)
	failed   bool   // INFO failed: nothing is known (asked again after serverCheckEvery)
	checked  time.Time
}

// servers is the Client's cache of serverInfo, by address ("" outside a Cluster: the one master,
// wherever a failover moves it).
type servers struct {
	mu       sync.Mutex
	byAddr   map[string]serverInfo
	evicting atomic.Int32    // masters last seen with an evicting policy (Stats.Evicting)
	asking   map[string]bool // the masters a checkServer is asking now
}

// evicts reports whether policy lets Redis evict keys.
func evicts(policy string) bool { return policy != "" && policy != "noeviction" }

// server returns what INFO says of the master at addr (node is its client), asking it if the cached
// answer is older than serverCheckEvery; info.failed if it could not be asked (a failure is cached
// too, so that a server refusing INFO is not asked on every call).
func (c *Client) server(ctx context.Context, node redis.Cmdable, addr string) serverInfo {
	s := &c.servers
	s.mu.Lock()
	last, known := s.byAddr[addr]
	s.mu.Unlock()
	if known && time.Since(last.checked) < serverCheckEvery {
		return last
	}
	info := serverInfo{replicas: -1, failed: true}
	if text, err := node.Info(ctx, "replication", "memory").Result(); err == nil {
		info = parseServerInfo(text)
	}
	info.checked = time.Now()
	s.mu.Lock()
	if s.byAddr == nil {
		s.byAddr = map[string]serverInfo{}
	}
	s.byAddr[addr] = info
	var n int32
	for _, i := range s.byAddr {
		if evicts(i.policy) {
			n++
		}
	}
	s.evicting.Store(n)
	s.mu.Unlock()
	if evicts(info.policy) && (!known || last.policy != info.policy) {
		c.cfg.logger.Warn("redisson: the master evicts keys when memory runs out: a lock evicted is free to a second owner"+
			" (volatile-* policies evict keys with a TTL, locks first), and under allkeys-* a FencedLock's counter can go"+
			" (its tokens restart); set maxmemory-policy noeviction", "master", addr, "maxmemory-policy", info.policy)
	}
	if c.acks.timeout > 0 && c.acks.need == 0 && info.replicas == 0 && (!known || last.replicas != 0) {
		c.cfg.logger.Warn("redisson: replica-acknowledged mode: the master has no replicas; its mutations are not acknowledged",
			"master", addr)
	}
	return info
}

// parseServerInfo reads connected_slaves and maxmemory_policy from INFO's text.
func parseServerInfo(text string) serverInfo {
	var info serverInfo
	info.replicas = -1
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "connected_slaves:"); ok {
			info.replicas, _ = strconv.Atoi(v)
		} else if v, ok := strings.CutPrefix(line, "maxmemory_policy:"); ok {
			info.policy = v
		}
	}
	return info
}

// eachMaster calls f for every master: the one server, or each master of a Cluster (concurrently),
// with its address ("" outside a Cluster). It returns the errors joined, each naming its master.
func (c *Client) eachMaster(ctx context.Context, f func(ctx context.Context, node redis.UniversalClient, addr string) error) error {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return f(ctx, c.rdb, "")
	}
	var mu sync.Mutex
	var err error
	ferr := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		addr := n.Options().Addr
		if e := f(ctx, n, addr); e != nil {
			mu.Lock()
			err = errors.Join(err, fmt.Errorf("master %s: %w", addr, e))
			mu.Unlock()
		}
		return nil
	})
	return errors.Join(err, ferr)
}

// checkServer asks the master serving key for its INFO (see server) if the Client has not in the
// last serverSweepEvery (serverCheckEvery after a failed ask): a Client's first command to a master
// does, so the warning comes with its first use of the master (a new master after a failover
// included), then one command a minute. It runs on the caller's goroutine and context, in sequence
// with the command (so it needs no connection of its own), and only on the master the command goes
// to: a master that does not answer delays only its own commands. Only one caller at a time asks a
// given master; the others carry on.
func (c *Client) checkServer(ctx context.Context, key string) {
	node, addr, err := c.node(ctx, key)
	if err != nil {
		return
	}
	s := &c.servers
	s.mu.Lock()
	last, known := s.byAddr[addr]
	due := !known || time.Since(last.checked) >= serverSweepEvery || (last.failed && time.Since(last.checked) >= serverCheckEvery)
	if !due || s.asking[addr] {
		s.mu.Unlock()
		return
	}
	if s.asking == nil {
		s.asking = map[string]bool{}
	}
	s.asking[addr] = true
	s.mu.Unlock()
	c.server(ctx, node, addr)
	s.mu.Lock()
	delete(s.asking, addr)
	s.mu.Unlock()
}

// CheckEviction asks every master (one, or each master of a Cluster) for its maxmemory-policy. It
// blocks for one round trip per master. It returns nil if no master evicts keys; an error matching
// ErrEvicting, naming each master that does and its policy, otherwise; a wrapped Redis error for a
// master that cannot be asked. See ErrEvicting for what eviction costs the guarantees.
func (c *Client) CheckEviction(ctx context.Context) error {
	if err := c.checkCall(ctx); err != nil {
		return opErr("check eviction", "", err)
	}
	err := c.eachMaster(ctx, func(ctx context.Context, node redis.UniversalClient, addr string) error {
		text, err := node.Info(ctx, "memory").Result()
		if err != nil {
			return redisErr(err)
		}
		if p := parseServerInfo(text).policy; evicts(p) {
			return fmt.Errorf("%w: maxmemory-policy %s", ErrEvicting, p)
		}
		return nil
	})
	if err != nil {
		return opErr("check eviction", "", err)
	}
	return nil
}

// evictsAll reports whether the master serving key is known to run an allkeys-* policy, asking it
// if the Client's answer is old (see server); a master that cannot be asked counts as not evicting
// (the acquisition then fails on its own if it is down).
func (c *Client) evictsAll(ctx context.Context, key string) (string, bool) {
	node, addr, err := c.node(ctx, key)
	if err != nil {
		return "", false
	}
	info := c.server(ctx, node, addr)
	return info.policy, strings.HasPrefix(info.policy, "allkeys-")
}
