package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// The main flow: a Client over a go-redis client, a lock taken and released, the work done under the
// hold's context. README.md's Quick start shows the body of run.
func Example() {
	run := func(ctx context.Context, addr string) error {
		rdb := redis.NewUniversalClient(&redis.UniversalOptions{
			Addrs:                 []string{addr},
			ContextTimeoutEnabled: true, // lets context deadlines bound network waits
		})
		defer rdb.Close()
		c, err := redisson.New(rdb) // does no I/O; fails only for bad options
		if err != nil {
			return err
		}
		defer c.Close()

		mu := c.Lock("goods:1000")
		h, err := mu.Lock(ctx) // waits; the watchdog renews the lease until Unlock
		if err != nil {
			return err // matches redisson.ErrNotObtained (and ctx.Err() if ctx ended the wait)
		}
		defer h.Unlock(ctx)

		// Do the work with h.Context(): it is cancelled if the lock is lost,
		// and context.Cause(h.Context()) then matches redisson.ErrLockLost.
		n, err := h.HoldCount(h.Context())
		fmt.Println("held:", n, "lost:", context.Cause(h.Context()) != nil)
		return err
	}
	if err := run(context.Background(), exampleAddr); err != nil {
		fmt.Println(err)
	}
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
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	report := func(ctx context.Context) error {
		f, err := c.FairLock("report").Lock(ctx) // waiters are served in the order they arrived at Redis
		if err != nil {
			return err
		}
		defer f.Unlock(ctx)

		_, err = c.FairLock("report").TryLock(ctx) // one attempt: never queues
		fmt.Println("second taker obtained:", err == nil)
		return nil
	}
	if err := report(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: second taker obtained: false
}

// A FencedLock's token lets the resource refuse a write from a holder that lost the lock without
// noticing (paused past its lease): FencedSet accepts a write only if its token is not older than the
// last one accepted.
func ExampleFencedLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx := context.Background()
	stale, err := c.FencedLock("ledger").Lock(ctx)
	if err != nil {
		panic(err)
	}
	stale.Unlock(ctx) // say its holder was paused, and lost the lock meanwhile

	write := func(ctx context.Context) error {
		t, err := c.FencedLock("ledger").Lock(ctx)
		if err != nil {
			return err
		}
		defer t.Unlock(ctx)
		// t.Token() increases with every acquisition of "ledger". The resource refuses writes from a
		// holder that was paused past its lease and lost the lock to a newer one:
		ok, err := c.FencedSet(ctx, "ledger:balance", "42", t.Token()) // ok is false for an older token
		if err != nil {
			return err
		}
		fmt.Println("newer holder's write accepted:", ok)
		ok, err = c.FencedSet(ctx, "ledger:balance", "17", stale.Token()) // the paused holder resumes
		fmt.Println("older holder's write accepted:", ok)
		return err
	}
	if err := write(ctx); err != nil {
		fmt.Println(err)
	}
	// The value is a hash at the key as given (no key prefix): fields "value" and "token".
	balance, _ := rdb.HGet(ctx, "ledger:balance", "value").Result()
	fmt.Println("balance:", balance)
	// Output:
	// newer holder's write accepted: true
	// older holder's write accepted: false
	// balance: 42
}

// A ReadWriteLock lets many readers in at once, or one writer.
func ExampleReadWriteLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	rw := c.ReadWriteLock("catalog")
	read := func(ctx context.Context) error {
		r, err := rw.RLock(ctx) // many readers at once; a waiting writer makes newcomers wait behind it
		if err != nil {
			return err
		}
		defer r.Unlock(ctx)

		other, err := rw.TryRLock(ctx) // another reader gets in at once
		if err != nil {
			return err
		}
		defer other.Unlock(ctx)
		_, err = rw.TryLock(ctx) // a writer does not
		fmt.Println("two readers; writer obtained:", err == nil)
		return nil
	}
	write := func(ctx context.Context) error {
		w, err := rw.Lock(ctx) // one writer; readers waiting when it leaves enter before the next writer
		if err != nil {
			return err
		}
		defer w.Unlock(ctx)

		_, err = rw.TryRLock(ctx)
		fmt.Println("one writer; reader obtained:", err == nil)
		return nil
	}
	ctx := context.Background()
	if err := errors.Join(read(ctx), write(ctx)); err != nil {
		fmt.Println(err)
	}
	// Output:
	// two readers; writer obtained: false
	// one writer; reader obtained: false
}

// A MultiLock holds several locks as one: all or none, released together.
func ExampleNewMultiLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	transfer := func(ctx context.Context) error {
		// All of several locks, from one or more Clients (servers), or none:
		m, err := redisson.NewMultiLock(c.Lock("account:1"), c.Lock("account:2")).Lock(ctx)
		if err != nil {
			return err
		}
		defer m.Unlock(ctx) // releases every part; m.Context() ends if any part is lost

		held, err := c.Lock("account:2").IsLocked(ctx)
		fmt.Println("parts:", len(m.Parts()), "account:2 held:", held)
		return err
	}
	ctx := context.Background()
	if err := transfer(ctx); err != nil {
		fmt.Println(err)
	}
	held, _ := c.Lock("account:2").IsLocked(ctx)
	fmt.Println("after Unlock:", held)
	// Output:
	// parts: 2 account:2 held: true
	// after Unlock: false
}

// A RedLock holds a lock on a majority of independent Redis masters.
func ExampleNewRedLock() {
	// Three independent masters: the examples' server and two throwaway ones.
	addrs := []string{exampleAddr}
	for range 2 {
		srv, err := redistest.StartProcess()
		if err != nil {
			panic(err)
		}
		defer srv.Close()
		addrs = append(addrs, srv.Addr())
	}
	var cs []*redisson.Client
	for _, addr := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		defer rdb.Close()
		c, err := redisson.New(rdb)
		if err != nil {
			panic(err)
		}
		defer c.Close()
		cs = append(cs, c)
	}
	c1, c2, c3 := cs[0], cs[1], cs[2]

	job := func(ctx context.Context) error {
		// A majority of N independent masters (the Redlock algorithm), N odd >= 3:
		r, err := redisson.NewRedLock(c1.Lock("job"), c2.Lock("job"), c3.Lock("job")).Lock(ctx)
		if err != nil {
			return err
		}
		defer r.Unlock(ctx) // r.Context() ends when fewer than a majority of parts remain held

		fmt.Println("parts held:", len(r.Parts()))
		return nil
	}
	if err := job(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: parts held: 3
}

// A SpinLock waits by polling with backoff: for deployments without pub/sub.
func ExampleClient_SpinLock() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	batch := func(ctx context.Context) error {
		s, err := c.SpinLock("batch").Lock(ctx) // waiters poll (1ms doubling to 128ms, WithSpinBackoff): no pub/sub
		if err != nil {
			return err
		}
		defer s.Unlock(ctx)

		_, err = c.SpinLock("batch").TryLock(ctx, redisson.WithWait(20*time.Millisecond)) // polls for 20ms
		fmt.Println("second acquisition:", errors.Is(err, redisson.ErrNotObtained))
		return nil
	}
	if err := batch(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: second acquisition: true
}

// A counting semaphore across processes: set the permits once, acquire and release any number.
func ExampleSemaphore() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	query := func(ctx context.Context) error {
		s := c.Semaphore("db-connections")
		// Sets the permits only if never set: every process may call it at start.
		if _, err := s.TrySetPermits(ctx, 10); err != nil {
			return err
		}
		// Waits; first come, first served (a big request is not passed by small ones).
		if err := s.Acquire(ctx, 2); err != nil {
			return err
		}
		defer s.Release(ctx, 2) // no owners: any process may release

		left, err := s.AvailablePermits(ctx)
		fmt.Println("available while held:", left)
		return err
	}
	ctx := context.Background()
	if err := query(ctx); err != nil {
		fmt.Println(err)
	}
	left, _ := c.Semaphore("db-connections").AvailablePermits(ctx)
	fmt.Println("after release:", left)
	// Output:
	// available while held: 8
	// after release: 10
}

// Leased permits with ids: renewed while held, released by id, or back in the pool when a fixed lease
// ends.
func ExamplePermitExpirableSemaphore() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	export := func(ctx context.Context) error { // the work done with the permit
		fmt.Println("exporting; permit lost:", context.Cause(ctx) != nil)
		return nil
	}
	exportAll := func(ctx context.Context) error {
		p := c.PermitExpirableSemaphore("exports")
		if _, err := p.TrySetPermits(ctx, 1); err != nil {
			return err
		}
		h, err := p.AcquireHeld(ctx, 1) // leased permits with ids; renewed by the watchdog while this process lives
		if err != nil {
			return err
		}
		defer p.Release(ctx, h.IDs()...) // or WithLease(d): back in the pool by itself when the lease ends
		return export(h.Context())       // cancelled if a permit is lost: context.Cause matches ErrLockLost
	}
	ctx := context.Background()
	if err := exportAll(ctx); err != nil {
		fmt.Println(err)
	}

	// A permit taken with a fixed lease that nobody releases: a waiter gets it when the lease ends.
	p := c.PermitExpirableSemaphore("exports")
	ids, err := p.Acquire(ctx, 1, redisson.WithLease(200*time.Millisecond))
	if err != nil {
		panic(err)
	}
	again, err := p.Acquire(ctx, 1, redisson.WithWait(5*time.Second))
	fmt.Println("taken again after the lease:", err == nil)
	fmt.Println("release of the expired one:", errors.Is(p.Release(ctx, ids...), redisson.ErrNotHeld))
	p.Release(ctx, again...)
	// Output:
	// exporting; permit lost: false
	// taken again after the lease: true
	// release of the expired one: true
}

// A latch: waiters anywhere are released together when the count reaches zero.
func ExampleCountDownLatch() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	warmUp := func(ctx context.Context) error {
		l := c.CountDownLatch("warmup")
		if _, err := l.TrySetCount(ctx, 3); err != nil { // only if zero; re-armable once it reaches zero
			return err
		}
		done := make(chan error, 3)
		for range 3 {
			go func() { // a worker, in this process or another, counts down when it is ready
				_, err := l.CountDown(ctx)
				done <- err
			}()
		}
		if err := l.Wait(ctx); err != nil { // anywhere: released by one message when the count reaches zero
			return err
		}
		return errors.Join(<-done, <-done, <-done)
	}
	ctx := context.Background()
	fmt.Println("warmed up:", warmUp(ctx) == nil)
	n, _ := c.CountDownLatch("warmup").Count(ctx)
	fmt.Println("count:", n)
	// Output:
	// warmed up: true
	// count: 0
}

// A stock counter shared by every process. The value is an integer string at "goods:1000:stock".
func ExampleAtomicLong() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	sell := func(ctx context.Context) error {
		stock := c.AtomicLong("goods:1000:stock") // an int64 in Redis: sync/atomic.Int64's vocabulary
		if err := stock.Store(ctx, 100); err != nil {
			return err
		}
		n, err := stock.Add(ctx, -1) // INCRBY: one round trip
		if err != nil {
			return err
		}
		// Atomic in Redis; also SetIfGreater, SetIfLess, Swap, GetAndDelete.
		ok, err := stock.CompareAndSwap(ctx, n, n-1)
		if err != nil {
			return err
		}
		stored, err := rdb.Get(ctx, "goods:1000:stock").Result() // where the value is in Redis
		fmt.Println("after Add:", n, "swapped:", ok, "stored:", stored)
		return err
	}
	ctx := context.Background()
	if err := sell(ctx); err != nil {
		fmt.Println(err)
	}
	_, _ = c.AtomicLong("goods:1000:stock").GetAndDelete(ctx)
	// Output: after Add: 99 swapped: true stored: 98
}

// A Bloom filter sized once, then used by every process: no false negatives, about 1% false
// positives.
func ExampleBloomFilter() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	emails := []string{"ann@example.com", "bob@example.com"}
	check := func(ctx context.Context) error {
		seen := c.BloomFilter("seen-emails")
		if _, err := seen.TryInit(ctx, 1_000_000, 0.01); err != nil { // sized once; other parameters later: ErrConfigMismatch
			return err
		}
		added, err := seen.AddMany(ctx, emails) // one round trip per batch; returns how many were new
		if err != nil {
			return err
		}
		in, err := seen.Contains(ctx, "ann@example.com") // false: never added; true: added, or a ~1% false positive
		if err != nil {
			return err
		}
		cfg, err := seen.Config(ctx)
		fmt.Println("added:", added, "contains ann:", in, "bits:", cfg.Bits, "hashes:", cfg.Hashes)
		return err
	}
	ctx := context.Background()
	defer c.BloomFilter("seen-emails").Delete(ctx)
	if err := check(ctx); err != nil {
		fmt.Println(err)
	}
	_, err = c.BloomFilter("seen-emails").TryInit(ctx, 5000, 0.01)
	fmt.Println("init again with other parameters:", errors.Is(err, redisson.ErrConfigMismatch))
	// Output:
	// added: 2 contains ann: true bits: 9585059 hashes: 7
	// init again with other parameters: true
}

// A BitSet of daily active users, by user number, and a typed counter field.
func ExampleBitSet() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx := context.Background()
	yesterday := c.BitSet("{active}:2026-11-25")
	defer yesterday.Delete(ctx)
	for _, user := range []int64{3, 9} {
		_, _ = yesterday.Set(ctx, user)
	}
	activeBoth := func(ctx context.Context, userID int64) error {
		active := c.BitSet("{active}:2026-11-26") // bits by user number
		if _, err := active.Set(ctx, userID); err != nil {
			return err
		}
		if err := active.And(ctx, "{active}:2026-11-25"); err != nil { // names sharing the {active} tag: one Cluster slot
			return err
		}
		n, err := active.Cardinality(ctx) // active on both days
		if err != nil {
			return err
		}
		p, err := active.Bytes(ctx)
		fmt.Printf("active both days: %d, bytes %08b\n", n, p)
		return err
	}
	defer c.BitSet("{active}:2026-11-26").Delete(ctx)
	if err := activeBoth(ctx, 9); err != nil {
		fmt.Println(err)
	}
	v, _ := yesterday.AddField(ctx, redisson.Uint16, 16, 300)
	fmt.Println("u16 field at bit 16:", v)
	// Output:
	// active both days: 1, bytes [00000000 01000000]
	// u16 field at bit 16: 300
}

// Distinct visitors, estimated in a few KiB, per day and over two days.
func ExampleHyperLogLog() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx := context.Background()
	yesterday := c.HyperLogLog("{visitors}:2026-11-25")
	defer yesterday.Delete(ctx)
	_, _ = yesterday.AddMany(ctx, []string{"bob", "dee"})
	count := func(ctx context.Context) error {
		visitors := c.HyperLogLog("{visitors}:2026-11-26") // a distinct count in 12 KiB
		if _, err := visitors.AddMany(ctx, []string{"ann", "bob", "cy"}); err != nil {
			return err
		}
		today, err := visitors.Count(ctx)
		if err != nil {
			return err
		}
		both, err := visitors.CountWith(ctx, "{visitors}:2026-11-25") // distinct over both days
		fmt.Println("today:", today, "over both days:", both)
		return err
	}
	defer c.HyperLogLog("{visitors}:2026-11-26").Delete(ctx)
	if err := count(ctx); err != nil {
		fmt.Println(err)
	}
	// Output: today: 3 over both days: 4
}

// A Go service sharing a lock with Java services that use Redisson: under WithRedissonCompat the
// lock is Redisson's RLock hash at the name, and a Java unlock wakes Go waiters (and the reverse).
func ExampleWithRedissonCompat() {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	run := func(ctx context.Context) error {
		c, err := redisson.New(rdb, redisson.WithRedissonCompat())
		if err != nil {
			return err
		}
		defer c.Close()
		// The same RLock a Java service takes with redisson.getLock("goods:1000").
		g, err := c.Lock("goods:1000").Lock(ctx)
		if err != nil {
			return err
		}
		defer g.Unlock(ctx)
		kind, err := rdb.Type(ctx, "goods:1000").Result() // what Java's RLock keeps there
		fmt.Println("held:", kind)
		return err
	}
	if err := run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: held: hash
}
