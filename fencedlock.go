package redisson

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
)

// FencedLock is a reentrant distributed mutex whose every fresh acquisition comes with a fencing
// token, the equivalent of Redisson's RFencedLock. Get one with Client.FencedLock. It waits, queues
// and is renewed as a Lock does (see Lock and Hold); Hold.Token returns the token.
//
// The token is a number that strictly increases, for a name, with every fresh acquisition and every
// hand-over, across holders, Client restarts and crashes; re-entry keeps the holder's token. It
// comes from a counter in Redis ("{<prefix><name>}:~fence", never deleted by this package), so it can
// go back only if Redis loses that counter: a restart without persistence, or a failover to a replica
// that had not received it. Run Redis with appendonly yes (and appendfsync always for no loss at all)
// where tokens must never repeat.
//
// What a token is for: a lock cannot stop a holder that was paused longer than its lease (GC, a
// stopped VM) from resuming and writing after another owner took over. The resource it protects can:
// it remembers the highest token it has accepted and refuses writes that carry a lower one. FencedSet
// does this for a value kept in Redis.
//
// A name is either a Lock, a FairLock or a FencedLock: using it as another kind fails with
// ErrWrongType.
type FencedLock struct{ mutex }

// FencedLock returns the fenced lock called name (Redisson's RFencedLock). It does no I/O; the handle
// is cheap and safe to share. A bad name is reported by the first call on the handle
// (ErrInvalidArgument).
// On a Client made WithRedissonCompat it is Java Redisson's RFencedLock, in its layout: see "Sharing
// locks with Java services" in the package documentation.
func (c *Client) FencedLock(name string) *FencedLock {
	return &FencedLock{c.newMutex(name, kindFenced)}
}

// Name returns the name the lock was created with ("" for a nil handle).
func (l *FencedLock) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Lock acquires the lock as Lock.Lock does; the returned Hold's Token is the acquisition's fencing
// token.
func (l *FencedLock) Lock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("lock", "", ErrNotObtained, errNilHandle)
	}
	return l.acquire(ctx, opts, true)
}

// TryLock acquires the lock as Lock.TryLock does; the returned Hold's Token is the acquisition's
// fencing token.
func (l *FencedLock) TryLock(ctx context.Context, opts ...AcquireOption) (*Hold, error) {
	if l == nil {
		return nil, opErr("try lock", "", ErrNotObtained, errNilHandle)
	}
	return l.acquire(ctx, opts, false)
}

// ForceUnlock deletes the lock whoever holds it; see Lock.ForceUnlock. The next holder gets a new
// token.
func (l *FencedLock) ForceUnlock(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("force unlock", "", errNilHandle)
	}
	return l.forceUnlock(ctx)
}

// IsLocked reports whether anyone holds the lock. It blocks for one round trip.
func (l *FencedLock) IsLocked(ctx context.Context) (bool, error) {
	if l == nil {
		return false, opErr("is locked", "", errNilHandle)
	}
	return l.isLocked(ctx)
}

// RemainingTTL returns how long the lock will live unless renewed: 0 if it is not held. It blocks for
// one round trip.
func (l *FencedLock) RemainingTTL(ctx context.Context) (time.Duration, error) {
	if l == nil {
		return 0, opErr("remaining ttl", "", errNilHandle)
	}
	return l.remainingTTL(ctx)
}

// FencedSet is the resource side of fencing for a value kept in Redis: it writes value at key (a hash
// with fields "value" and "token") only if token is not older than the token of the last write
// accepted there, and reports whether it wrote. A holder paused past its lease, whose lock has since
// been acquired by another with a newer token, therefore cannot overwrite the newer holder's data. It
// blocks for one round trip. key is used as given (no key prefix). It returns ErrWrongType if key
// holds another type of value, ErrInvalidArgument for a negative token or an empty key, ErrClosed
// after Close.
func (c *Client) FencedSet(ctx context.Context, key string, value string, token int64) (bool, error) {
	switch {
	case !c.valid():
		return false, opErr("fenced set", key, c.checkValid())
	case key == "":
		return false, opErr("fenced set", key, invalidf("empty key"))
	case token < 0:
		return false, opErr("fenced set", key, invalidf("negative token %d", token))
	}
	if err := c.checkCall(ctx); err != nil {
		return false, opErr("fenced set", key, err)
	}
	n, err := c.run(ctx, scripts.FencedSet, []string{key}, value, token).Int64()
	if err != nil {
		return false, opErr("fenced set", key, redisErr(err))
	}
	return n == 1, nil
}

// FencedGet reads a value written by FencedSet and the token that wrote it ("" and 0 if there is
// none). It blocks for one round trip. It returns ErrClosed after Close.
func (c *Client) FencedGet(ctx context.Context, key string) (value string, token int64, err error) {
	if err := c.checkCall(ctx); err != nil {
		return "", 0, opErr("fenced get", key, err)
	}
	var get *redis.SliceCmd
	_ = c.read(ctx, key, func(p redis.Pipeliner) { get = p.HMGet(ctx, key, "value", "token") })
	vals, err := get.Result()
	if err != nil {
		return "", 0, opErr("fenced get", key, redisErr(err))
	}
	if s, ok := vals[0].(string); ok {
		value = s
	}
	if s, ok := vals[1].(string); ok {
		if token, err = strconv.ParseInt(s, 10, 64); err != nil {
			return "", 0, opErr("fenced get", key, ErrWrongType, err)
		}
	}
	return value, token, nil
}
