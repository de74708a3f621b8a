package javadouble

import (
	"context"
	_ "embed"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/latch_try_set.lua
	latchTrySetSrc string
	latchTrySet    = redis.NewScript(latchTrySetSrc)

	//go:embed lua/latch_count_down.lua
	latchCountDownSrc string
	latchCountDown    = redis.NewScript(latchCountDownSrc)

	//go:embed lua/latch_delete.lua
	latchDeleteSrc string
	latchDelete    = redis.NewScript(latchDeleteSrc)
)

// CountDownLatch is Redisson's RCountDownLatch: STRING name with the remaining count (absent = 0),
// channel redisson_countdownlatch__channel__{name} (always braces): 0 when the count reaches zero,
// 1 when a count is set or the latch deleted.
type CountDownLatch struct {
	c    *Client
	name string
}

// CountDownLatch returns the latch name (Redisson getCountDownLatch). It does not touch Redis.
func (c *Client) CountDownLatch(name string) *CountDownLatch {
	return &CountDownLatch{c: c, name: name}
}

func (l *CountDownLatch) keys() []string {
	return []string{l.name, "redisson_countdownlatch__channel__{" + l.name + "}"}
}

// TrySetCount sets the count if none is set (publishing 1); it reports whether it did.
func (l *CountDownLatch) TrySetCount(ctx context.Context, count int64) (bool, error) {
	n, _, err := l.c.runInt(ctx, latchTrySet, l.keys(), msgNewCount, count, l.c.pubCmd)
	return n == 1, err
}

// CountDown decrements the count (DECR; at <= 0 the key is deleted; exactly 0 publishes 0).
func (l *CountDownLatch) CountDown(ctx context.Context) error {
	_, _, err := l.c.runInt(ctx, latchCountDown, l.keys(), msgZeroCount, l.c.pubCmd)
	return err
}

// GetCount returns the count (0 if absent).
func (l *CountDownLatch) GetCount(ctx context.Context) (int64, error) {
	n, err := l.c.rdb.Get(ctx, l.name).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// Delete deletes the count; if there was one it publishes 1 and reports true.
func (l *CountDownLatch) Delete(ctx context.Context) (bool, error) {
	n, _, err := l.c.runInt(ctx, latchDelete, l.keys(), msgNewCount, l.c.pubCmd)
	return n == 1, err
}

// Await blocks until the count is 0 (Redisson await()): GET, subscribe, then GET again before each
// wait on the gate that message 0 opens and 1 closes; no poll fallback. It returns ctx.Err(),
// ErrClosed or a Redis error.
func (l *CountDownLatch) Await(ctx context.Context) error {
	_, err := l.await(ctx, -1)
	return err
}

// AwaitTimeout is Redisson await(d): as Await, bounded by d; it reports whether the count reached 0.
func (l *CountDownLatch) AwaitTimeout(ctx context.Context, d time.Duration) (bool, error) {
	return l.await(ctx, d)
}

func (l *CountDownLatch) await(ctx context.Context, d time.Duration) (bool, error) {
	deadline := time.Now().Add(d)
	remaining := func() time.Duration {
		if d < 0 {
			return -1
		}
		return max(0, time.Until(deadline))
	}
	if n, err := l.GetCount(ctx); err != nil || n == 0 {
		return err == nil, err
	}
	sctx := ctx
	if d >= 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	e, err := l.c.subscribe(sctx, l.keys()[1], latchEntry)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return false, nil
		}
		return false, err
	}
	defer l.c.unsubscribe(e)
	for {
		n, err := l.GetCount(ctx)
		if err != nil || n == 0 {
			return err == nil, err
		}
		r := remaining()
		if r == 0 {
			return false, nil
		}
		if err := e.awaitOpen(ctx, r); err != nil {
			return false, err
		}
	}
}
