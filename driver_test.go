package redisson_test

// The seam between the lock API and the API-independent tests (the model-checked fault test and
// the lost-reply tests of lock_lostreply_test.go). Each API generation has one implementation:
// driver_held_test.go adapts the held-value API.

import (
	"context"
	"time"

	"github.com/goredisson/redisson"
)

// lockDriver drives locks of one API generation.
type lockDriver interface {
	// Name describes the API generation.
	Name() string
	// Lock acquires lock name through c, trying for up to wait (0: a single attempt), with a fixed
	// lease (0: the watchdog renews it). ctx bounds the call; the caller never cancels it while the
	// hold lives.
	Lock(ctx context.Context, c *redisson.Client, name string, wait, lease time.Duration) (driverHold, error)
	// ForceUnlock deletes lock name whoever holds it.
	ForceUnlock(ctx context.Context, c *redisson.Client, name string) (bool, error)
	// Key is the Redis key of lock name (Clients without a key prefix).
	Key(name string) string
	// Decode returns the owner and hold count stored in a value of a lock key; ok is false if the
	// value is not a lock value.
	Decode(value string) (owner string, count int, ok bool)
	// Leftover reports whether key may remain in Redis after every lock has been released and has
	// expired: bookkeeping that expires on its own (it must have a TTL).
	Leftover(key string) bool
}

// driverHold is one owner's hold, from its acquisition to its final unlock or loss.
type driverHold interface {
	driverLevel // the level taken by the acquisition
	// Owner is the owner id stored in Redis ("" if it could not be read: the hold is already lost).
	Owner() string
	// Context is cancelled when the hold ends: released, or lost (cause matches ErrLockLost).
	Context() context.Context
	// Reenter takes one more level of the hold.
	Reenter(ctx context.Context) (driverLevel, error)
	// HoldCount is the owner's hold count as stored in Redis (0 if it does not hold the lock).
	HoldCount(ctx context.Context) (int, error)
}

// driverLevel is one level of a hold: one successful acquisition or re-entry.
type driverLevel interface {
	// Unlock releases this level; the last level's unlock releases the lock.
	Unlock(ctx context.Context) error
}
