package javadouble

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redisson defaults (reference §13) that the double reproduces.
const (
	defaultWatchdog     = 30 * time.Second
	defaultFairLockWait = 5 * time.Minute
	// subscriptionTimeout bounds the subscription of a blocking Lock (Redisson's subscriptionTimeout).
	subscriptionTimeout = 7500 * time.Millisecond
	// responseTimeout and retryAttempts give the unlock latch TTL (timeout + retryDelay) × attempts.
	responseTimeout = 3000 * time.Millisecond
	retryAttempts   = 4
	// batchSize is lockWatchdogBatchSize: locks renewed per EVAL.
	batchSize = 100
)

// Messages published on the channels (reference §0.6).
const (
	msgUnlock     = "0" // lock: wake one waiter per client
	msgReadUnlock = "1" // lock channel: wake all waiters of the client (write unlock of a rwlock)
	msgZeroCount  = "0" // latch: open
	msgNewCount   = "1" // latch: close
)

// ErrIllegalMonitorState is returned (wrapped, with Redisson's message) by Unlock when the caller's
// thread does not hold the lock: Java's IllegalMonitorStateException.
var ErrIllegalMonitorState = errors.New("IllegalMonitorStateException")

// ErrIllegalArgument is returned (wrapped) for arguments Redisson rejects with
// IllegalArgumentException (negative permits, an unknown permit id); nothing is sent to Redis.
var ErrIllegalArgument = errors.New("IllegalArgumentException")

// ErrClosed is returned by calls that would need the Client's pub/sub or timers after Close.
var ErrClosed = errors.New("javadouble: client closed")

// Option configures a Client (the Redisson Config settings the double honours).
type Option func(*Client)

// WatchdogTimeout sets lockWatchdogTimeout (default 30 s): the lease of locks taken without one, and
// three times the renewal period.
func WatchdogTimeout(d time.Duration) Option { return func(c *Client) { c.watchdog = d } }

// FairLockWaitTimeout sets fairLockWaitTimeout (default 5 min): a fair-lock waiter's stale timeout
// when no tryLock wait time is given.
func FairLockWaitTimeout(d time.Duration) Option { return func(c *Client) { c.fairWait = d } }

// Client is one simulated Java Redisson client (one JVM): one random UUID, one watchdog per task
// kind, one refcounted subscription per channel. Its methods are safe for concurrent use; Java
// threads are explicit int64 thread ids.
type Client struct {
	rdb      redis.UniversalClient
	cluster  *redis.ClusterClient // non-nil: sharded pub/sub (SSUBSCRIBE/SPUBLISH)
	id       string
	watchdog time.Duration
	fairWait time.Duration
	pubCmd   string

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	subs   map[string]*entry // by channel

	lockTask *renewTask
	readTask *renewTask
}

// New returns a Client on rdb. On a *redis.ClusterClient it uses sharded pub/sub (SSUBSCRIBE,
// SPUBLISH), as Redisson's shardedSubscriptionMode AUTO does on Redis 7; otherwise SUBSCRIBE/PUBLISH.
// It does not block and opens no connection itself. The caller must call Close; rdb stays the caller's.
func New(rdb redis.UniversalClient, opts ...Option) *Client {
	c := &Client{rdb: rdb, id: newUUID(), watchdog: defaultWatchdog, fairWait: defaultFairLockWait,
		pubCmd: "publish", subs: map[string]*entry{}}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		c.cluster = cc
		c.pubCmd = "spublish"
	}
	for _, o := range opts {
		o(c)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.lockTask = &renewTask{c: c, entries: map[string]*renewEntry{}}
	c.readTask = &renewTask{c: c, read: true, entries: map[string]*renewEntry{}}
	return c
}

// ID returns the client's UUID, the first part of every owner string "<uuid>:<threadId>".
func (c *Client) ID() string { return c.id }

// Owner returns the lock owner string of thread tid: "<uuid>:<tid>".
func (c *Client) Owner(tid int64) string { return c.id + ":" + strconv.FormatInt(tid, 10) }

// Close stops the watchdogs (locks stop being renewed and then expire) and all subscriptions,
// wakes blocked callers (they return ErrClosed), and waits for the Client's goroutines. It blocks
// for at most one in-flight renewal EVAL. Safe to call twice.
func (c *Client) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	subs := c.subs
	c.subs = map[string]*entry{}
	c.mu.Unlock()
	c.cancel()
	for _, e := range subs {
		e.shutdown()
	}
	c.wg.Wait()
}

// goroutine starts f as a Client goroutine unless the Client is closed; it reports whether it did.
func (c *Client) goroutine(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// tagged is the name inside a hash tag: {name}, or name itself when it carries a '{' already.
func tagged(name string) string {
	if strings.Contains(name, "{") {
		return name
	}
	return "{" + name + "}"
}

// suffixName is Redisson's suffixName: {name}:sfx (name:sfx if name has a '{').
func suffixName(name, sfx string) string { return tagged(name) + ":" + sfx }

// prefixName is Redisson's prefixName: prefix:{name} (prefix:name if name has a '{').
func prefixName(prefix, name string) string { return prefix + ":" + tagged(name) }

// newUUID returns a random (version 4) UUID string, as java.util.UUID.randomUUID().toString().
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newID returns 16 random bytes (Redisson's generateId; rendered as 32 hex chars where a string is needed).
func newID() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return b
}

// unlockLatchTTL is the unlock latch's PX: (timeout + retryDelay) × retryAttempts, retryDelay drawn
// from EqualJitter(1 s, 2 s).
func unlockLatchTTL() int64 {
	delay := time.Second + time.Duration(mrand.Int64N(int64(time.Second)))
	return ((responseTimeout + delay) * retryAttempts).Milliseconds()
}

// nowMs is the client clock in ms (System.currentTimeMillis()).
func nowMs() int64 { return time.Now().UnixMilli() }

// ms is d in whole ms.
func ms(d time.Duration) int64 { return d.Milliseconds() }

// run evaluates s; a nil reply is returned as (nil, nil).
func (c *Client) run(ctx context.Context, s *redis.Script, keys []string, args ...any) (any, error) {
	v, err := s.Run(ctx, c.rdb, keys, args...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}

// runInt evaluates s and returns its integer reply; ok is false for a nil reply.
func (c *Client) runInt(ctx context.Context, s *redis.Script, keys []string, args ...any) (n int64, ok bool, err error) {
	v, err := c.run(ctx, s, keys, args...)
	if err != nil || v == nil {
		return 0, false, err
	}
	n, isInt := v.(int64)
	if !isInt {
		return 0, false, fmt.Errorf("javadouble: unexpected reply %T %v", v, v)
	}
	return n, true, nil
}
