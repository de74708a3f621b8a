package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// The main flow: lock, work under the ownership context, unlock.
func ExampleLock_Lock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx := context.Background()
	mu := c.Lock("example:goods:1000")
	lctx, err := mu.Lock(ctx) // waits; the watchdog renews the lease until Unlock
	if err != nil {
		panic(err)
	}
	defer mu.Unlock(lctx)

	// Work with lctx: it is cancelled if the lock is lost.
	n, _ := mu.HoldCount(lctx)
	fmt.Println("held:", n, "lost:", context.Cause(lctx) != nil)
	// Output: held: 1 lost: false
}

// Re-entry is explicit: pass the ownership context again.
func ExampleLock_Lock_reentry() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	mu := c.Lock("example:reentry")
	lctx, _ := mu.Lock(context.Background())
	mu.Lock(lctx) // re-enters: hold count 2
	n, _ := mu.HoldCount(lctx)
	fmt.Println("after re-entry:", n)
	mu.Unlock(lctx)
	mu.Unlock(lctx) // the last unlock releases
	locked, _ := mu.IsLocked(context.Background())
	fmt.Println("locked after two unlocks:", locked)
	// Output:
	// after re-entry: 2
	// locked after two unlocks: false
}

// TryLock with a bounded wait and a fixed lease; failure matches ErrNotObtained.
func ExampleLock_TryLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()
	other, _ := redisson.New(rdb) // another process, as far as Redis can tell
	defer other.Close()

	ctx := context.Background()
	held, _ := other.Lock("example:report").Lock(ctx, redisson.WithLease(time.Minute))
	defer other.Lock("example:report").Unlock(held)

	_, err := c.Lock("example:report").TryLock(ctx,
		redisson.WithWait(50*time.Millisecond), redisson.WithLease(10*time.Second))
	fmt.Println("obtained:", err == nil, "not obtained:", errors.Is(err, redisson.ErrNotObtained))
	// Output: obtained: false not obtained: true
}

// The ownership context tells the holder when the lock is lost.
func ExampleLock_Lock_lost() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
	defer c.Close()

	mu := c.Lock("example:lost")
	lctx, _ := mu.Lock(context.Background())
	mu.ForceUnlock(context.Background()) // an operator deletes the lock

	<-lctx.Done() // the watchdog notices at its next renewal
	fmt.Println(errors.Is(context.Cause(lctx), redisson.ErrLockLost))
	fmt.Println(errors.Is(mu.Unlock(lctx), redisson.ErrNotHeld))
	// Output:
	// true
	// true
}
