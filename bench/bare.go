package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ---- bare: the queue design of DESIGN §12 in two plain scripts ----
//
// The yardstick of hand-over cost, not a lock anyone should use: no watchdog, no undo, no
// heartbeats, no owner check beyond the token. A lock is a string holding its owner's id; its
// waiters are a list. An acquisition that finds the lock held pushes the waiter onto the list
// (once) and waits for a message on its Client's channel; a release pops the head and, in the same
// script, makes it the owner and publishes its id. The woken waiter holds the lock without sending
// anything. A waiter not woken within barePoll tries again (a lost message delays, never strands).

// bareAcquire: KEYS[1] lock, KEYS[2] queue; ARGV[1] waiter id, ARGV[2] lease ms. 1: taken (or
// handed over already); 0: queued.
var bareAcquire = redis.NewScript(bareAcquireSrc)

const bareAcquireSrc = `
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('LREM', KEYS[2], 0, ARGV[1])
  return 1
end
if cur == ARGV[1] then return 1 end
if not redis.call('LPOS', KEYS[2], ARGV[1]) then redis.call('RPUSH', KEYS[2], ARGV[1]) end
return 0`

// bareRelease: KEYS[1] lock, KEYS[2] queue; ARGV[1] owner id, ARGV[2] lease ms, ARGV[3] channel
// prefix. 1: released (freed or handed over); 0: not the owner.
var bareRelease = redis.NewScript(bareReleaseSrc)

const bareReleaseSrc = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local head = redis.call('LPOP', KEYS[2])
if not head then
  redis.call('DEL', KEYS[1])
  return 1
end
redis.call('SET', KEYS[1], head, 'PX', ARGV[2])
local client = string.match(head, '^([^:]+):')
redis.call('PUBLISH', ARGV[3] .. client, head)
return 1`

const (
	barePoll   = 500 * time.Millisecond
	bareLease  = 30 * time.Second
	barePrefix = "bench:bare:wake:"
)

// bareLocker is one Client of the bare design: a go-redis client and one subscription on its own
// channel, whose messages it routes to the waiting handle named in them.
type bareLocker struct {
	rdb  *redis.Client
	ps   *redis.PubSub
	id   string
	mu   sync.Mutex
	wake map[string]chan struct{}
	seq  int
	done chan struct{}
}

func openBare(addr string, _ *config) (locker, error) {
	rdb := redis.NewClient(goRedisOptions(addr))
	b := &bareLocker{rdb: rdb, id: newToken(), wake: map[string]chan struct{}{}, done: make(chan struct{})}
	b.ps = rdb.Subscribe(context.Background(), barePrefix+b.id)
	if _, err := b.ps.Receive(context.Background()); err != nil { // the subscription's confirmation
		b.ps.Close()
		rdb.Close()
		return nil, fmt.Errorf("bare: subscribe: %w", err)
	}
	go b.route()
	return b, nil
}

func (b *bareLocker) route() {
	defer close(b.done)
	for msg := range b.ps.Channel() {
		b.mu.Lock()
		ch := b.wake[msg.Payload]
		b.mu.Unlock()
		if ch != nil {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

func (b *bareLocker) handle(key string) handle {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	id := fmt.Sprintf("%s:%d", b.id, b.seq)
	ch := make(chan struct{}, 1)
	b.wake[id] = ch
	return &bareHandle{b: b, keys: []string{key, key + ":q"}, id: id, wake: ch}
}

func (b *bareLocker) close() error {
	err := b.ps.Close()
	<-b.done
	return errors.Join(err, b.rdb.Close())
}

type bareHandle struct {
	b    *bareLocker
	keys []string
	id   string
	wake chan struct{}
	t    *time.Timer
}

func (h *bareHandle) lock(ctx context.Context) error {
	for {
		select { // a message of an earlier wait
		case <-h.wake:
		default:
		}
		n, err := bareAcquire.Run(ctx, h.b.rdb, h.keys, h.id, bareLease.Milliseconds()).Int()
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		if h.t == nil {
			h.t = time.NewTimer(barePoll)
		} else {
			h.t.Reset(barePoll)
		}
		select {
		case <-h.wake:
			h.t.Stop()
			return nil // handed over: the release made this handle the owner
		case <-h.t.C:
		case <-ctx.Done():
			h.t.Stop()
			// Leave the queue; if handed over meanwhile, pass the lock on.
			bg := context.Background()
			h.b.rdb.LRem(bg, h.keys[1], 0, h.id)
			_ = h.unlock()
			return ctx.Err()
		}
	}
}

func (h *bareHandle) unlock() error {
	_, err := bareRelease.Run(context.Background(), h.b.rdb, h.keys, h.id, bareLease.Milliseconds(), barePrefix).Int()
	return err
}
