package javadouble

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// entryKind says how an entry reacts to a message (reference §0.6).
type entryKind int

const (
	lockEntry  entryKind = iota // LockPubSub: 0 wakes one local waiter, 1 wakes all
	semEntry                    // SemaphorePubSub: N wakes min(subscribers, N)
	latchEntry                  // CountDownLatchPubSub: 0 opens, 1 closes
)

// entry is one refcounted subscription of a Client to a channel (RedissonLockEntry): a counting
// semaphore of wake-up permits (a message that finds nobody waiting stays as a permit), or, for a
// latch, a re-closable gate. Each entry has its own go-redis PubSub connection, so that on a
// Cluster every SSUBSCRIBE goes to the master of its channel's slot.
type entry struct {
	c       *Client
	channel string
	kind    entryKind
	refs    int // guarded by c.mu

	ready chan struct{} // closed once the subscription is confirmed or failed
	err   error         // set before ready is closed

	mu      sync.Mutex
	ps      *redis.PubSub
	closed  bool
	permits int
	waiting int
	open    bool
	signal  chan struct{} // closed and replaced on every change of permits/open
}

// subscribe returns the Client's entry for channel, subscribing first if it has none; it blocks
// until the subscription is confirmed (then an acquire attempt must follow) or ctx ends.
func (c *Client) subscribe(ctx context.Context, channel string, kind entryKind) (*entry, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	e := c.subs[channel]
	if e == nil {
		e = &entry{c: c, channel: channel, kind: kind, ready: make(chan struct{}), signal: make(chan struct{})}
		c.subs[channel] = e
		c.wg.Add(1)
		go e.connect()
	}
	e.refs++
	c.mu.Unlock()
	select {
	case <-e.ready:
		if e.err != nil {
			c.unsubscribe(e)
			return nil, e.err
		}
		return e, nil
	case <-ctx.Done():
		c.unsubscribe(e)
		return nil, ctx.Err()
	}
}

// unsubscribe drops one reference; the last one closes the subscription.
func (c *Client) unsubscribe(e *entry) {
	c.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last && c.subs[e.channel] == e {
		delete(c.subs, e.channel)
	}
	c.mu.Unlock()
	if last {
		e.shutdown()
	}
}

// connect subscribes (bounded by subscriptionTimeout), then reads messages until shutdown.
func (e *entry) connect() {
	defer e.c.wg.Done()
	ctx, cancel := context.WithTimeout(e.c.ctx, subscriptionTimeout)
	var ps *redis.PubSub
	if e.c.cluster != nil {
		ps = e.c.cluster.SSubscribe(ctx, e.channel)
	} else {
		ps = e.c.rdb.Subscribe(ctx, e.channel)
	}
	_, err := ps.ReceiveTimeout(ctx, subscriptionTimeout)
	cancel()
	if err != nil {
		_ = ps.Close()
		e.err = fmt.Errorf("javadouble: unable to subscribe to %s: %w", e.channel, err)
		e.c.mu.Lock()
		if e.c.subs[e.channel] == e {
			delete(e.c.subs, e.channel)
		}
		e.c.mu.Unlock()
		close(e.ready)
		return
	}
	e.mu.Lock()
	e.ps = ps
	stop := e.closed
	e.mu.Unlock()
	close(e.ready)
	if stop {
		_ = ps.Close()
		return
	}
	for {
		msg, err := ps.Receive(context.Background())
		if err != nil {
			e.mu.Lock()
			stop := e.closed
			e.mu.Unlock()
			if stop || errors.Is(err, redis.ErrClosed) {
				return
			}
			// go-redis reconnects and resubscribes on the next Receive; Redisson wakes nobody then.
			select {
			case <-e.c.ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if m, ok := msg.(*redis.Message); ok {
			e.deliver(m.Payload)
		}
	}
}

// shutdown closes the subscription (UNSUBSCRIBE by closing its connection).
func (e *entry) shutdown() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	ps := e.ps
	e.mu.Unlock()
	if ps != nil {
		_ = ps.Close()
	}
}

// deliver applies one message as Redisson's PubSub classes do.
func (e *entry) deliver(payload string) {
	n, err := strconv.ParseInt(payload, 10, 64)
	if err != nil {
		return
	}
	refs := 0
	if e.kind == semEntry {
		e.c.mu.Lock()
		refs = e.refs
		e.c.mu.Unlock()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch e.kind {
	case lockEntry:
		switch payload {
		case msgUnlock:
			e.releaseLocked(1)
		case msgReadUnlock:
			e.releaseLocked(e.waiting)
		}
	case semEntry:
		if k := min(int64(refs), n); k > 0 {
			e.releaseLocked(int(k))
		}
	case latchEntry:
		switch payload {
		case msgZeroCount:
			e.open = true
			e.wakeLocked()
		case msgNewCount:
			e.open = false
		}
	}
}

func (e *entry) releaseLocked(k int) {
	if k <= 0 {
		return
	}
	e.permits += k
	e.wakeLocked()
}

func (e *entry) wakeLocked() {
	close(e.signal)
	e.signal = make(chan struct{})
}

// acquire takes one wake-up permit, waiting at most d (d < 0: without bound). A timeout is not an
// error (the caller retries, as Redisson does after latch.tryAcquire); it returns ctx.Err() when
// ctx ends and ErrClosed when the Client is closed.
func (e *entry) acquire(ctx context.Context, d time.Duration) error {
	return e.await(ctx, d, func() bool {
		if e.permits > 0 {
			e.permits--
			return true
		}
		return false
	})
}

// awaitOpen waits until the latch gate is open, at most d (d < 0: without bound); as acquire.
func (e *entry) awaitOpen(ctx context.Context, d time.Duration) error {
	return e.await(ctx, d, func() bool { return e.open })
}

// await waits until cond (called under e.mu) holds, for at most d.
func (e *entry) await(ctx context.Context, d time.Duration, cond func() bool) error {
	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	e.mu.Lock()
	e.waiting++
	defer func() {
		e.waiting--
		e.mu.Unlock()
	}()
	for !cond() {
		sig := e.signal
		e.mu.Unlock()
		select {
		case <-sig:
			e.mu.Lock()
		case <-timeout:
			e.mu.Lock()
			return nil
		case <-ctx.Done():
			e.mu.Lock()
			return ctx.Err()
		case <-e.c.ctx.Done():
			e.mu.Lock()
			return ErrClosed
		}
	}
	return nil
}

// Waiting returns how many of the Client's acquisitions wait on channel for a wake-up now (in
// Redisson, the latch's queue length). Tests wait for it before a release whose message wakes only
// the waiters already waiting (Redisson's READ_UNLOCK_MESSAGE releases getQueueLength() permits: a
// Java waiter between its attempt and its wait misses it, and sleeps until the holder's TTL).
func (c *Client) Waiting(channel string) int {
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
