package javadouble

import (
	"context"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/pes_acquire.lua
	pesAcquireSrc string
	pesAcquire    = redis.NewScript(pesAcquireSrc)

	//go:embed lua/pes_release.lua
	pesReleaseSrc string
	pesRelease    = redis.NewScript(pesReleaseSrc)

	//go:embed lua/pes_available.lua
	pesAvailableSrc string
	pesAvailable    = redis.NewScript(pesAvailableSrc)
)

// nonExpiring is the expiry score of permits taken without a lease.
const nonExpiring = 922337203685477

// PermitExpirableSemaphore is Redisson's RPermitExpirableSemaphore: STRING name with the available
// permits, ZSET {name}:timeout of held permits (member = raw 16-byte id, score = expiry in ms on the
// acquiring client's clock, 922337203685477 for no lease), channel redisson_sc:{name}. Expired
// permits are reclaimed by the next acquire or AvailablePermits.
type PermitExpirableSemaphore struct {
	c    *Client
	name string
}

// PermitExpirableSemaphore returns the semaphore name (Redisson getPermitExpirableSemaphore). It
// does not touch Redis.
func (c *Client) PermitExpirableSemaphore(name string) *PermitExpirableSemaphore {
	return &PermitExpirableSemaphore{c: c, name: name}
}

func (p *PermitExpirableSemaphore) keys() []string {
	return []string{p.name, suffixName(p.name, "timeout"), prefixName("redisson_sc", p.name)}
}

// tryOnce is one acquire attempt: the id (hex) if taken, else the earliest expiry (ms, 0 if none).
func (p *PermitExpirableSemaphore) tryOnce(ctx context.Context, lease time.Duration) (id string, expiry int64, err error) {
	raw := newID()
	now := nowMs()
	score := int64(nonExpiring)
	if lease > 0 {
		score = now + ms(lease)
	}
	v, err := p.c.run(ctx, pesAcquire, p.keys(), 1, score, now, p.c.pubCmd, string(raw))
	if err != nil || v == nil {
		return "", 0, err
	}
	s, _ := v.(string)
	if s == "OK" {
		return hex.EncodeToString(raw), 0, nil
	}
	if strings.HasPrefix(s, ":") {
		f, perr := strconv.ParseFloat(s[1:], 64)
		if perr == nil {
			return "", int64(f), nil
		}
	}
	return "", 0, fmt.Errorf("javadouble: unexpected acquire reply %q", s)
}

// waitFor is the sleep before the next attempt: until the earliest expiry (if any) or remaining.
func waitFor(expiry int64, remaining time.Duration) time.Duration {
	if expiry > 0 {
		d := time.Duration(expiry-nowMs()) * time.Millisecond
		if d < 0 {
			d = 0
		}
		if remaining < 0 || d < remaining {
			return d
		}
	}
	return remaining
}

// Acquire blocks until one permit is taken with the given lease (lease <= 0: never expires) and
// returns its id as 32 hex chars. Between attempts it sleeps until a message or the earliest
// permit expiry. Errors: ctx.Err(), ErrClosed, Redis errors.
func (p *PermitExpirableSemaphore) Acquire(ctx context.Context, lease time.Duration) (string, error) {
	id, _, err := p.tryOnce(ctx, lease)
	if err != nil || id != "" {
		return id, err
	}
	e, err := p.c.subscribe(ctx, p.keys()[2], semEntry)
	if err != nil {
		return "", err
	}
	defer p.c.unsubscribe(e)
	for {
		id, expiry, err := p.tryOnce(ctx, lease)
		if err != nil || id != "" {
			return id, err
		}
		if err := e.acquire(ctx, waitFor(expiry, -1)); err != nil {
			return "", err
		}
	}
}

// TryAcquire tries to take one permit within wait (wait <= 0: one attempt); ok is false on timeout.
func (p *PermitExpirableSemaphore) TryAcquire(ctx context.Context, wait, lease time.Duration) (id string, ok bool, err error) {
	deadline := time.Now().Add(wait)
	id, _, err = p.tryOnce(ctx, lease)
	if err != nil || id != "" {
		return id, id != "", err
	}
	if time.Until(deadline) <= 0 {
		return "", false, nil
	}
	sctx, cancel := context.WithDeadline(ctx, deadline)
	e, err := p.c.subscribe(sctx, p.keys()[2], semEntry)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return "", false, nil
		}
		return "", false, err
	}
	defer p.c.unsubscribe(e)
	for {
		if time.Until(deadline) <= 0 {
			return "", false, nil
		}
		id, expiry, err := p.tryOnce(ctx, lease)
		if err != nil || id != "" {
			return id, id != "", err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return "", false, nil
		}
		if err := e.acquire(ctx, waitFor(expiry, remaining)); err != nil {
			return "", false, err
		}
	}
}

// TryRelease returns permit id (hex) to the pool, publishing the new count; it reports false when
// there was no such permit, or when it had expired (it is returned all the same). An id that is not
// 32 hex chars is an error wrapping ErrIllegalArgument.
func (p *PermitExpirableSemaphore) TryRelease(ctx context.Context, id string) (bool, error) {
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw) != 16 {
		return false, fmt.Errorf("%w: permit id %q is not 32 hex chars", ErrIllegalArgument, id)
	}
	n, _, err := p.c.runInt(ctx, pesRelease, p.keys(), string(raw), nowMs(), p.c.pubCmd)
	return n == 1, err
}

// Release is TryRelease that fails (ErrIllegalArgument, as Java's "Permit with id ... has already
// been released or doesn't exist") when TryRelease would report false.
func (p *PermitExpirableSemaphore) Release(ctx context.Context, id string) error {
	ok, err := p.TryRelease(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: Permit with id %s has already been released or doesn't exist", ErrIllegalArgument, id)
	}
	return nil
}

// AvailablePermits reclaims expired permits, then returns the available count (0 if absent).
func (p *PermitExpirableSemaphore) AvailablePermits(ctx context.Context) (int64, error) {
	n, _, err := p.c.runInt(ctx, pesAvailable, p.keys(), nowMs(), p.c.pubCmd)
	return n, err
}

// TrySetPermits sets the available permits to n if the key is absent (publishing n).
func (p *PermitExpirableSemaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	if err := checkPermits(n); err != nil {
		return false, err
	}
	k := p.keys()
	r, _, err := p.c.runInt(ctx, semTrySet, []string{k[0], k[2]}, n, p.c.pubCmd)
	return r == 1, err
}

// AddPermits adds n (may be negative) to the available count, publishing it only if positive.
func (p *PermitExpirableSemaphore) AddPermits(ctx context.Context, n int64) error {
	k := p.keys()
	_, _, err := p.c.runInt(ctx, semAdd, []string{k[0], k[2]}, n, p.c.pubCmd, "1")
	return err
}
