package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/goredisson/redisson"
)

// impl is one lock implementation under test.
type impl struct {
	name     string
	settings string // the options used, for the report
	// scriptCmds are the commands this implementation only ever calls from inside its Lua scripts
	// (read from its source). "Top-level" command counts are all counted commands minus these.
	scriptCmds []string
	// open connects to addr. poll is the retry sleep used by the polling implementations.
	open func(addr string, cfg *config) (locker, error)
	// optIn implementations run only when named in -only.
	optIn bool
	// contendedOnly implementations skip the uncontended scenario (the in-process mutex: one for all).
	contendedOnly bool
}

// locker is an opened implementation: a factory of per-goroutine handles plus its clients.
type locker interface {
	handle(key string) handle
	close() error
}

// handle is used by one goroutine at a time: Lock, then Unlock, repeatedly.
type handle interface {
	lock(ctx context.Context) error
	unlock() error
}

// goRedisOptions are the go-redis options of every go-redis based implementation: defaults plus
// ContextTimeoutEnabled, which this library asks for (and which costs the others nothing).
func goRedisOptions(addr string) *redis.Options {
	return &redis.Options{Addr: addr, ContextTimeoutEnabled: true}
}

func allImpls() []impl {
	return []impl{
		{
			name:     "redisson",
			settings: "redisson.New(rdb) defaults (watchdog 30s, repoll 500ms, pub/sub wake-ups); go-redis v9 ContextTimeoutEnabled=true; h, _ := Lock(ctx); h.Unlock(ctx)",
			// SET is both the fast path (top-level) and, for re-entry or a waiter's mark, called
			// inside the scripts; it is counted as top-level.
			scriptCmds: []string{"get", "pttl", "pexpire", "del", "publish"},
			open:       openRedisson,
		},
		{
			// The same Client with its loss tracking off (WithLossTracking(false)): the cost of the
			// immediate loss signal, on by default, is the difference between "redisson" and this row.
			name:       "redisson-notrack",
			settings:   "as redisson, with WithLossTracking(false): holds are told of a loss only at their next renewal",
			scriptCmds: []string{"get", "pttl", "pexpire", "del", "publish"},
			open:       openRedissonWith(redisson.WithLossTracking(false)),
		},
		{
			// WithAutoPipelining: the commands of the Client's goroutines batched when several are
			// out at once (go-redis's AsyncAutoPipeline). A Client per goroutine (the contended-<n>c
			// scenarios) has nothing to batch.
			name:       "redisson-ap",
			settings:   "as redisson, with WithAutoPipelining(true): a command sent while another is out goes through go-redis's AsyncAutoPipeline",
			scriptCmds: []string{"get", "pttl", "pexpire", "del", "publish"},
			open:       openRedissonWith(redisson.WithAutoPipelining(true)),
		},
		{
			name:       "redisson-fair",
			settings:   "as redisson, with c.FairLock(name): every acquisition queues in Redis, first come first served",
			scriptCmds: []string{"get", "pttl", "pexpire", "del", "publish", "time", "zadd", "zrem", "zrange", "zrangebyscore", "zscore", "exists"},
			open:       openRedissonKind("fair"),
		},
		{
			name:       "redisson-spin",
			settings:   "as redisson, with c.SpinLock(name): waiters poll with backoff 1ms doubling to 128ms plus jitter, no pub/sub",
			scriptCmds: []string{"get", "pttl", "pexpire", "del", "publish"},
			open:       openRedissonKind("spin"),
		},
		{
			name:          "mutex",
			settings:      "an in-process sync.Mutex around the same critical section: the ceiling, not a distributed lock",
			open:          openMutex,
			contendedOnly: true,
		},
		{
			name:       "redsync",
			settings:   "redsync v4 + goredis/v9 pool, one pool; defaults (expiry 8s, retry delay rand 50-250ms) except WithTries(MaxInt32): waits until ctx ends",
			scriptCmds: []string{"get", "del"},
			open:       openRedsync,
		},
		{
			name:       "redislock",
			settings:   "bsm/redislock, ttl 30s, RetryStrategy LinearBackoff(-poll)",
			scriptCmds: []string{"set", "getrange", "get", "del", "pexpire", "pttl"},
			open:       openRedislock,
		},
		{
			name:       "rueidislock",
			settings:   "rueidislock defaults (KeyMajority 2 => 3 keys per lock, KeyValidity 5s, ExtendInterval 2.5s, TryNextAfter 20ms, client-side caching wake-ups); ClientOption{InitAddress}; WithContext / cancel",
			scriptCmds: []string{"set", "get", "pexpireat", "del"},
			open:       func(addr string, cfg *config) (locker, error) { return openRueidislock(addr, 0) },
		},
		{
			name:       "rueidislock-km1",
			settings:   "as rueidislock but KeyMajority=1 (1 key per lock): rueidislock tuned for one server; client-side caching wake-ups as by default",
			scriptCmds: []string{"set", "get", "pexpireat", "del"},
			open:       func(addr string, cfg *config) (locker, error) { return openRueidislock(addr, 1) },
		},
		{
			name:       "bare",
			settings:   "the bare queue design (DESIGN §12) in two scripts: a held lock's waiters RPUSH themselves on a list; the release pops the head, makes it the owner and PUBLISHes to its Client in the same script; no watchdog, undo or heartbeats (the yardstick of hand-over cost, not a peer)",
			scriptCmds: []string{"get", "set", "lrem", "lpos", "rpush", "lpop", "del", "publish"},
			open:       openBare,
		},
		{
			name:       "floor",
			settings:   "SET key token NX PX 30000, retry sleep -poll; release: compare-and-delete Lua via go-redis Script.Run (EVALSHA)",
			scriptCmds: []string{"get", "del"},
			open:       openFloor,
		},
		{
			name:       "floor-ap",
			optIn:      true,
			settings:   "as floor, its commands sent through go-redis's automatic pipeliner (rdb.AsyncAutoPipeline, default options): what go-redis's batching does for the floor",
			scriptCmds: []string{"get", "del"},
			open:       openFloorAP,
		},
	}
}

// newToken returns 16 random bytes, hex encoded.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ---- this library ----

type redissonLocker struct {
	rdb  *redis.Client
	c    *redisson.Client
	kind string // "" Lock, "fair" FairLock, "spin" SpinLock
}

func openRedisson(addr string, cfg *config) (locker, error) { return openRedissonWith()(addr, cfg) }

// openRedissonWith is openRedisson with the Client's options opts.
func openRedissonWith(opts ...redisson.Option) func(string, *config) (locker, error) {
	return func(addr string, _ *config) (locker, error) {
		rdb := redis.NewClient(goRedisOptions(addr))
		c, err := redisson.New(rdb, opts...)
		if err != nil {
			rdb.Close()
			return nil, err
		}
		return &redissonLocker{rdb: rdb, c: c}, nil
	}
}

func (r *redissonLocker) handle(key string) handle {
	switch r.kind {
	case "fair":
		return &redissonHandle{l: r.c.FairLock(key)}
	case "spin":
		return &redissonHandle{l: r.c.SpinLock(key)}
	}
	return &redissonHandle{l: r.c.Lock(key)}
}

func (r *redissonLocker) close() error {
	return errors.Join(r.c.Close(), r.rdb.Close())
}

// openRedissonKind is openRedisson, handing out locks of kind (see redissonLocker).
func openRedissonKind(kind string) func(string, *config) (locker, error) {
	return func(addr string, cfg *config) (locker, error) {
		lk, err := openRedisson(addr, cfg)
		if err != nil {
			return nil, err
		}
		lk.(*redissonLocker).kind = kind
		return lk, nil
	}
}

// ---- the ceiling: an in-process sync.Mutex ----

// benchMutex is shared by every opened "mutex" implementation, so that the goroutines of the
// per-Client scenarios exclude each other too.
var benchMutex sync.Mutex

type mutexLocker struct{}

func openMutex(string, *config) (locker, error) { return mutexLocker{}, nil }

func (mutexLocker) handle(string) handle { return mutexHandle{} }
func (mutexLocker) close() error         { return nil }

type mutexHandle struct{}

func (mutexHandle) lock(context.Context) error { benchMutex.Lock(); return nil }
func (mutexHandle) unlock() error              { benchMutex.Unlock(); return nil }

type redissonHandle struct {
	l redisson.Locker
	h *redisson.Hold
}

func (h *redissonHandle) lock(ctx context.Context) error {
	held, err := h.l.Lock(ctx)
	if err != nil {
		return err
	}
	h.h = held
	return nil
}

// unlock releases the hold; Unlock is not cut short by a cancelled context, so Background is as good
// as any.
func (h *redissonHandle) unlock() error {
	err := h.h.Unlock(context.Background())
	h.h = nil
	return err
}

// ---- redsync ----

type redsyncLocker struct {
	rdb *redis.Client
	rs  *redsync.Redsync
}

func openRedsync(addr string, _ *config) (locker, error) {
	rdb := redis.NewClient(goRedisOptions(addr))
	return &redsyncLocker{rdb: rdb, rs: redsync.New(redsyncgoredis.NewPool(rdb))}, nil
}

func (r *redsyncLocker) handle(key string) handle {
	return &redsyncHandle{m: r.rs.NewMutex(key, redsync.WithTries(math.MaxInt32))}
}

func (r *redsyncLocker) close() error { return r.rdb.Close() }

type redsyncHandle struct{ m *redsync.Mutex }

func (h *redsyncHandle) lock(ctx context.Context) error { return h.m.LockContext(ctx) }

func (h *redsyncHandle) unlock() error {
	ok, err := h.m.UnlockContext(context.Background())
	if err == nil && !ok {
		err = errors.New("redsync: unlock returned false")
	}
	return err
}

// ---- bsm/redislock ----

type redislockLocker struct {
	rdb *redis.Client
	c   *redislock.Client
	opt *redislock.Options
}

func openRedislock(addr string, cfg *config) (locker, error) {
	rdb := redis.NewClient(goRedisOptions(addr))
	return &redislockLocker{
		rdb: rdb,
		c:   redislock.New(rdb),
		opt: &redislock.Options{RetryStrategy: redislock.LinearBackoff(cfg.poll)},
	}, nil
}

func (r *redislockLocker) handle(key string) handle { return &redislockHandle{r: r, key: key} }

func (r *redislockLocker) close() error { return r.rdb.Close() }

type redislockHandle struct {
	r   *redislockLocker
	key string
	l   *redislock.Lock
}

func (h *redislockHandle) lock(ctx context.Context) error {
	l, err := h.r.c.Obtain(ctx, h.key, 30*time.Second, h.r.opt)
	if err != nil {
		return err
	}
	h.l = l
	return nil
}

func (h *redislockHandle) unlock() error {
	err := h.l.Release(context.Background())
	h.l = nil
	return err
}

// ---- rueidislock ----

type rueidisLocker struct{ l rueidislock.Locker }

// openRueidislock uses rueidislock's defaults; majority 0 keeps the default KeyMajority (2).
func openRueidislock(addr string, majority int32) (locker, error) {
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: []string{addr}},
		KeyMajority:  majority,
	})
	if err != nil {
		return nil, err
	}
	return &rueidisLocker{l: l}, nil
}

func (r *rueidisLocker) handle(key string) handle { return &rueidisHandle{r: r, key: key} }

func (r *rueidisLocker) close() error { r.l.Close(); return nil }

type rueidisHandle struct {
	r      *rueidisLocker
	key    string
	cancel context.CancelFunc
}

func (h *rueidisHandle) lock(ctx context.Context) error {
	_, cancel, err := h.r.l.WithContext(ctx, h.key)
	if err != nil {
		return err
	}
	h.cancel = cancel
	return nil
}

// unlock cancels the lock context; rueidislock's cancel blocks until its keys are deleted. It
// reports no error.
func (h *rueidisHandle) unlock() error {
	h.cancel()
	h.cancel = nil
	return nil
}

// ---- floor: SET NX PX + compare-and-delete ----

var floorRelease = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

type floorLocker struct {
	rdb  *redis.Client
	cmd  redis.Cmdable // rdb, or its automatic pipeliner (floor-ap)
	poll time.Duration
}

func openFloor(addr string, cfg *config) (locker, error) {
	rdb := redis.NewClient(goRedisOptions(addr))
	return &floorLocker{rdb: rdb, cmd: rdb, poll: cfg.poll}, nil
}

// openFloorAP is the floor with its commands sent through go-redis's automatic pipeliner.
func openFloorAP(addr string, cfg *config) (locker, error) {
	rdb := redis.NewClient(goRedisOptions(addr))
	ap, err := rdb.AsyncAutoPipeline()
	if err != nil {
		rdb.Close()
		return nil, err
	}
	return &floorLocker{rdb: rdb, cmd: ap, poll: cfg.poll}, nil
}

func (f *floorLocker) handle(key string) handle { return &floorHandle{f: f, key: key} }

func (f *floorLocker) close() error { return f.rdb.Close() }

type floorHandle struct {
	f     *floorLocker
	key   string
	token string
	timer *time.Timer
}

func (h *floorHandle) lock(ctx context.Context) error {
	token := newToken()
	for {
		ok, err := h.f.cmd.SetNX(ctx, h.key, token, 30*time.Second).Result()
		if err != nil {
			return err
		}
		if ok {
			h.token = token
			return nil
		}
		if h.timer == nil {
			h.timer = time.NewTimer(h.f.poll)
		} else {
			h.timer.Reset(h.f.poll)
		}
		select {
		case <-ctx.Done():
			h.timer.Stop()
			return ctx.Err()
		case <-h.timer.C:
		}
	}
}

func (h *floorHandle) unlock() error {
	n, err := floorRelease.Run(context.Background(), h.f.cmd.(redis.Scripter), []string{h.key}, h.token).Int64()
	if err == nil && n != 1 {
		err = fmt.Errorf("floor: lock %q was not held at release", h.key)
	}
	return err
}
