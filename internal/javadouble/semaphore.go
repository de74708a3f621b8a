package javadouble

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/sem_try_acquire.lua
	semTryAcquireSrc string
	semTryAcquire    = redis.NewScript(semTryAcquireSrc)

	//go:embed lua/sem_release.lua
	semReleaseSrc string
	semRelease    = redis.NewScript(semReleaseSrc)

	//go:embed lua/sem_try_set.lua
	semTrySetSrc string
	semTrySet    = redis.NewScript(semTrySetSrc)

	//go:embed lua/sem_add.lua
	semAddSrc string
	semAdd    = redis.NewScript(semAddSrc)

	//go:embed lua/sem_drain.lua
	semDrainSrc string
	semDrain    = redis.NewScript(semDrainSrc)
)

// Semaphore is Redisson's RSemaphore: STRING name holding the available permits (no ownership; a
// missing key has no permits), channel redisson_sc:{name} carrying the new count after increases.
type Semaphore struct {
	c    *Client
	name string
}

// Semaphore returns the semaphore name (Redisson getSemaphore). It does not touch Redis.
func (c *Client) Semaphore(name string) *Semaphore { return &Semaphore{c: c, name: name} }

func (s *Semaphore) channel() string { return prefixName("redisson_sc", s.name) }

func checkPermits(n int64) error {
	if n < 0 {
		return fmt.Errorf("%w: permits amount can't be negative", ErrIllegalArgument)
	}
	return nil
}

// TrySetPermits sets the permits to n if the key is absent (publishing n); it reports whether it did.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	if err := checkPermits(n); err != nil {
		return false, err
	}
	r, _, err := s.c.runInt(ctx, semTrySet, []string{s.name, s.channel()}, n, s.c.pubCmd)
	return r == 1, err
}

func (s *Semaphore) tryOnce(ctx context.Context, n int64) (bool, error) {
	if n == 0 {
		return true, nil
	}
	r, _, err := s.c.runInt(ctx, semTryAcquire, []string{s.name}, n)
	return r == 1, err
}

// Acquire blocks until n permits are taken (Redisson acquire(n)): an attempt, a subscription, then
// attempts each followed by an unbounded wait for a message (no fallback poll, as in Redisson). It
// returns an error wrapping ErrIllegalArgument for n < 0, ctx.Err(), ErrClosed or a Redis error.
func (s *Semaphore) Acquire(ctx context.Context, n int64) error {
	if err := checkPermits(n); err != nil {
		return err
	}
	if ok, err := s.tryOnce(ctx, n); err != nil || ok {
		return err
	}
	e, err := s.c.subscribe(ctx, s.channel(), semEntry)
	if err != nil {
		return err
	}
	defer s.c.unsubscribe(e)
	for {
		if ok, err := s.tryOnce(ctx, n); err != nil || ok {
			return err
		}
		if err := e.acquire(ctx, -1); err != nil {
			return err
		}
	}
}

// TryAcquire tries to take n permits within wait (Redisson tryAcquire(n, wait)); wait <= 0 is one
// attempt. It returns false, nil on timeout, and errors as Acquire.
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) (bool, error) {
	if err := checkPermits(n); err != nil {
		return false, err
	}
	remaining := wait
	start := time.Now()
	if ok, err := s.tryOnce(ctx, n); err != nil || ok {
		return ok, err
	}
	remaining -= time.Since(start)
	if remaining <= 0 {
		return false, nil
	}
	start = time.Now()
	sctx, cancel := context.WithTimeout(ctx, remaining)
	e, err := s.c.subscribe(sctx, s.channel(), semEntry)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return false, nil
		}
		return false, err
	}
	defer s.c.unsubscribe(e)
	remaining -= time.Since(start)
	if remaining <= 0 {
		return false, nil
	}
	for {
		start = time.Now()
		if ok, err := s.tryOnce(ctx, n); err != nil || ok {
			return ok, err
		}
		remaining -= time.Since(start)
		if remaining <= 0 {
			return false, nil
		}
		start = time.Now()
		if err := e.acquire(ctx, remaining); err != nil {
			return false, err
		}
		remaining -= time.Since(start)
		if remaining <= 0 {
			return false, nil
		}
	}
}

// Release adds n permits (INCRBY, creating the key) and publishes the new count. n = 0 does nothing.
func (s *Semaphore) Release(ctx context.Context, n int64) error {
	if err := checkPermits(n); err != nil || n == 0 {
		return err
	}
	_, _, err := s.c.runInt(ctx, semRelease, []string{s.name, s.channel()}, n, s.c.pubCmd)
	return err
}

// AddPermits adds n (may be negative) to the count, creating it, and publishes the new count.
func (s *Semaphore) AddPermits(ctx context.Context, n int64) error {
	_, _, err := s.c.runInt(ctx, semAdd, []string{s.name, s.channel()}, n, s.c.pubCmd, "0")
	return err
}

// AvailablePermits returns the count (GET; 0 if absent).
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	n, err := s.c.rdb.Get(ctx, s.name).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// DrainPermits sets the count to 0 and returns what it was (0 and no write if absent).
func (s *Semaphore) DrainPermits(ctx context.Context) (int64, error) {
	n, _, err := s.c.runInt(ctx, semDrain, []string{s.name})
	return n, err
}
