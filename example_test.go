package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// The main flow: lock, work under the hold's context, unlock.
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
	h, err := mu.Lock(ctx) // waits; the watchdog renews the lease until Unlock
	if err != nil {
		panic(err)
	}
	defer h.Unlock(ctx)

	// Work with h.Context(): it is cancelled if the lock is lost.
	n, _ := h.HoldCount(ctx)
	fmt.Println("held:", n, "lost:", context.Cause(h.Context()) != nil)
	// Output: held: 1 lost: false
}

// Re-entry is explicit: through the Hold, and each level is unlocked on its own.
func ExampleHold_Reenter() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	mu := c.Lock("example:reentry")
	h, _ := mu.Lock(ctx)
	inner, _ := h.Reenter(ctx) // hold count 2
	n, _ := h.HoldCount(ctx)
	fmt.Println("after re-entry:", n)
	inner.Unlock(ctx)
	h.Unlock(ctx) // the last level releases
	locked, _ := mu.IsLocked(ctx)
	fmt.Println("locked after both unlocks:", locked)
	fmt.Println("unlock twice:", errors.Is(h.Unlock(ctx), redisson.ErrNotHeld))
	// Output:
	// after re-entry: 2
	// locked after both unlocks: false
	// unlock twice: true
}

// Nested code that locks by name re-enters when its caller marked the context with its Hold.
func ExampleContextWithHold() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	mu := c.Lock("example:account:7")
	debit := func(ctx context.Context) error {
		h, err := mu.Lock(ctx) // re-enters if ctx is marked, else waits for the lock
		if err != nil {
			return err
		}
		defer h.Unlock(ctx)
		n, _ := h.HoldCount(ctx)
		fmt.Println("levels inside debit:", n)
		return nil
	}

	ctx := context.Background()
	h, _ := mu.Lock(ctx)
	defer h.Unlock(ctx)
	_ = debit(redisson.ContextWithHold(ctx, h))
	// Output: levels inside debit: 2
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
	defer held.Unlock(ctx)

	_, err := c.Lock("example:report").TryLock(ctx,
		redisson.WithWait(50*time.Millisecond), redisson.WithLease(10*time.Second))
	fmt.Println("obtained:", err == nil, "not obtained:", errors.Is(err, redisson.ErrNotObtained))
	// Output: obtained: false not obtained: true
}

// The hold's context tells the holder when the lock is lost.
func ExampleHold_Context() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
	defer c.Close()

	ctx := context.Background()
	mu := c.Lock("example:lost")
	h, _ := mu.Lock(ctx)
	mu.ForceUnlock(ctx) // an operator deletes the lock

	<-h.Context().Done() // the watchdog notices at its next renewal
	fmt.Println(errors.Is(context.Cause(h.Context()), redisson.ErrLockLost))
	fmt.Println(errors.Is(h.Unlock(ctx), redisson.ErrNotHeld))
	// Output:
	// true
	// true
}

// A FairLock serves its waiters first come, first served, across processes.
func ExampleFairLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	mu := c.FairLock("example:fair")
	h, err := mu.Lock(ctx) // waits its turn in a queue kept in Redis
	if err != nil {
		panic(err)
	}
	_, err = mu.TryLock(ctx) // one attempt: never queues
	fmt.Println("second taker obtained:", err == nil)
	h.Unlock(ctx)
	// Output: second taker obtained: false
}

// A FencedLock's token lets the resource refuse a write from a holder that lost the lock without
// noticing (paused past its lease): FencedSet accepts a write only if its token is not older than the
// last one accepted.
func ExampleFencedLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	mu := c.FencedLock("example:fenced")
	first, _ := mu.Lock(ctx)
	first.Unlock(ctx) // say the first holder was paused, and lost the lock meanwhile
	second, _ := mu.Lock(ctx)
	defer second.Unlock(ctx)

	ok, _ := c.FencedSet(ctx, "example:report", "written by the second holder", second.Token())
	fmt.Println("newer holder's write accepted:", ok)
	ok, _ = c.FencedSet(ctx, "example:report", "written late by the first holder", first.Token())
	fmt.Println("older holder's write accepted:", ok)
	value, _, _ := c.FencedGet(ctx, "example:report")
	fmt.Println(value)
	// Output:
	// newer holder's write accepted: true
	// older holder's write accepted: false
	// written by the second holder
}

// A MultiLock holds several locks as one: all or none, released together.
func ExampleNewMultiLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	from, to := c.Lock("example:account:1"), c.Lock("example:account:2")
	h, err := redisson.NewMultiLock(from, to).Lock(ctx)
	if err != nil {
		panic(err)
	}
	a, _ := from.IsLocked(ctx)
	b, _ := to.IsLocked(ctx)
	fmt.Println("both held:", a && b, "parts:", len(h.Parts()))
	h.Unlock(ctx) // releases every part
	a, _ = from.IsLocked(ctx)
	fmt.Println("released:", !a)
	// Output:
	// both held: true parts: 2
	// released: true
}

// A SpinLock waits by polling with backoff: for deployments without pub/sub.
func ExampleClient_SpinLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb, redisson.WithSpinBackoff(time.Millisecond, 50*time.Millisecond))
	defer c.Close()

	ctx := context.Background()
	mu := c.SpinLock("example:batch")
	h, _ := mu.Lock(ctx)
	_, err := mu.TryLock(ctx, redisson.WithWait(20*time.Millisecond)) // polls for 20ms, then gives up
	fmt.Println("second acquisition:", errors.Is(err, redisson.ErrNotObtained))
	h.Unlock(ctx)
	// Output: second acquisition: true
}

// A counting semaphore across processes: set the permits once, acquire and release any number.
func ExampleSemaphore() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	s := c.Semaphore("example:connections")
	set, _ := s.TrySetPermits(ctx, 3) // only if never set
	if err := s.Acquire(ctx, 2); err != nil {
		panic(err)
	}
	ok, _ := s.TryAcquire(ctx, 2) // only 1 left
	left, _ := s.AvailablePermits(ctx)
	fmt.Println("set:", set, "second TryAcquire(2):", ok, "left:", left)
	s.Release(ctx, 2)
	left, _ = s.AvailablePermits(ctx)
	fmt.Println("after release:", left)
	// Output:
	// set: true second TryAcquire(2): false left: 1
	// after release: 3
}

// Leased permits with ids: released by id, or back in the pool when the lease ends.
func ExamplePermitExpirableSemaphore() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	p := c.PermitExpirableSemaphore("example:exports")
	p.TrySetPermits(ctx, 1)
	ids, err := p.Acquire(ctx, 1, redisson.WithLease(200*time.Millisecond))
	if err != nil {
		panic(err)
	}
	fmt.Println("permits:", len(ids))
	// Nobody releases it: a waiter gets it when the lease ends.
	again, err := p.Acquire(ctx, 1, redisson.WithWait(5*time.Second))
	fmt.Println("taken again after the lease:", err == nil)
	fmt.Println("release of the expired one:", errors.Is(p.Release(ctx, ids...), redisson.ErrNotHeld))
	p.Release(ctx, again...)
	// Output:
	// permits: 1
	// taken again after the lease: true
	// release of the expired one: true
}

// A latch: waiters anywhere are released together when the count reaches zero.
func ExampleCountDownLatch() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	l := c.CountDownLatch("example:warmup")
	l.TrySetCount(ctx, 2)
	done := make(chan error)
	go func() { done <- l.Wait(ctx) }()
	l.CountDown(ctx)
	l.CountDown(ctx) // zero: the waiter is released
	fmt.Println("released:", <-done == nil)
	n, _ := l.Count(ctx)
	fmt.Println("count:", n)
	// Output:
	// released: true
	// count: 0
}

// A stock counter shared by every process: decrement only while stock remains, with a
// compare-and-swap loop, so the sale never oversells.
func ExampleAtomicLong() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	stock := c.AtomicLong("example:stock")
	_ = stock.Store(ctx, 2)
	sell := func() bool {
		for {
			n, err := stock.Load(ctx)
			if err != nil || n == 0 {
				return false
			}
			if ok, err := stock.CompareAndSwap(ctx, n, n-1); err != nil {
				return false // outcome unknown: a real sale would check before retrying
			} else if ok {
				return true
			}
		}
	}
	fmt.Println(sell(), sell(), sell())
	views, _ := c.AtomicLong("example:views").Add(ctx, 10)
	fmt.Println("views:", views)
	_, _ = c.AtomicLong("example:views").GetAndDelete(ctx)
	// Output:
	// true true false
	// views: 10
}

// A Bloom filter sized once, then used by every process: no false negatives, about 1% false
// positives.
func ExampleBloomFilter() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	seen := c.BloomFilter("example:seen-emails")
	defer seen.Delete(ctx)
	if _, err := seen.TryInit(ctx, 100000, 0.01); err != nil {
		panic(err)
	}
	added, _ := seen.AddMany(ctx, []string{"ann@example.com", "bob@example.com"})
	in, _ := seen.Contains(ctx, "ann@example.com")
	cfg, _ := seen.Config(ctx)
	fmt.Println("added:", added, "contains ann:", in)
	fmt.Println("bits:", cfg.Bits, "hashes:", cfg.Hashes)
	_, err := seen.TryInit(ctx, 5000, 0.01)
	fmt.Println("init again with other parameters:", errors.Is(err, redisson.ErrConfigMismatch))
	// Output:
	// added: 2 contains ann: true
	// bits: 958506 hashes: 7
	// init again with other parameters: true
}

// A BitSet of daily active users, by user number, and a typed counter field.
func ExampleBitSet() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	mon, tue := c.BitSet("{example:active}:mon"), c.BitSet("{example:active}:tue")
	defer mon.Delete(ctx)
	defer tue.Delete(ctx)
	for _, user := range []int64{3, 7, 9} {
		_, _ = mon.Set(ctx, user)
	}
	_, _ = tue.Set(ctx, 7)
	_ = mon.And(ctx, "{example:active}:tue") // names sharing a {hash tag}: one Cluster slot
	both, _ := mon.Cardinality(ctx)
	p, _ := mon.Bytes(ctx)
	fmt.Printf("active both days: %d, bytes %08b\n", both, p)
	v, _ := tue.AddField(ctx, redisson.Uint16, 16, 300)
	fmt.Println("u16 field at bit 16:", v)
	// Output:
	// active both days: 1, bytes [00000001 00000000]
	// u16 field at bit 16: 300
}

// Distinct visitors, estimated in a few KiB, per day and over two days.
func ExampleHyperLogLog() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, _ := redisson.New(rdb)
	defer c.Close()

	ctx := context.Background()
	mon, tue := c.HyperLogLog("{example:visitors}:mon"), c.HyperLogLog("{example:visitors}:tue")
	defer mon.Delete(ctx)
	defer tue.Delete(ctx)
	_, _ = mon.AddMany(ctx, []string{"ann", "bob", "cy"})
	_, _ = tue.AddMany(ctx, []string{"bob", "dee"})
	n, _ := mon.Count(ctx)
	both, _ := mon.CountWith(ctx, "{example:visitors}:tue")
	fmt.Println("monday:", n, "over both days:", both)
	// Output: monday: 3 over both days: 4
}
