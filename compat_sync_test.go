package redisson_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/javadouble"
	"github.com/goredisson/redisson/redistest"
)

// The Redisson-compatible mode (WithRedissonCompat) of the synchronizers: a Semaphore and a
// CountDownLatch shared with Java Redisson clients, whose side is played here by raw commands as
// Redisson sends them (redisson-reference.md §9, §11): the values at the names themselves, the
// channels "redisson_sc:{name}" and "redisson_countdownlatch__channel__{name}", and their messages.

// compatSyncConformance is the suite of the compatible Semaphore and CountDownLatch, on every
// topology.
func compatSyncConformance() []conformanceCase {
	return []conformanceCase{
		{"latch both ways", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			java := topologyClient(t)
			ch := "redisson_countdownlatch__channel__{" + name + "}"
			// A Go latch waiter is let through by a Java count down (its re-poll is an hour away).
			l := newC(redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Hour)).CountDownLatch(name)
			if ok, err := l.TrySetCount(ctx, 1); !ok || err != nil {
				t.Fatalf("TrySetCount = %v, %v", ok, err)
			}
			if v, err := java.Get(ctx, name).Result(); err != nil || v != "1" {
				t.Fatalf("the count at %q = %q, %v; want \"1\" (Java's layout)", name, v, err)
			}
			done := make(chan error, 1)
			go func() { done <- l.Wait(ctx) }()
			awaitSubscribers(t, java, ch, 1)
			javaLatchCountDown(t, java, name, ch)
			if err := recvWithin(t, done, 10*time.Second, "the Go waiter let through by a Java count down"); err != nil {
				t.Fatalf("Wait = %v", err)
			}
			// A Java waiter is told of a Go set ("1") and of a Go count down to zero ("0").
			sub := javaSubscribe(t, java, ch)
			if ok, err := l.TrySetCount(ctx, 2); !ok || err != nil {
				t.Fatalf("TrySetCount = %v, %v", ok, err)
			}
			expectMessage(t, sub, ch, "1")
			for want := int64(1); want >= 0; want-- {
				if n, err := l.CountDown(ctx); n != want || err != nil {
					t.Fatalf("CountDown = %d, %v; want %d", n, err, want)
				}
			}
			expectMessage(t, sub, ch, "0")
			if n := java.Exists(ctx, name).Val(); n != 0 {
				t.Fatal("the count is still there at zero; Java Redisson deletes it")
			}
		}},
		{"semaphore both ways", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			java := topologyClient(t)
			ch := "redisson_sc:{" + name + "}"
			s := newC(redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Hour)).Semaphore(name)
			if ok, err := s.TrySetPermits(ctx, 1); !ok || err != nil {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			if v, err := java.Get(ctx, name).Result(); err != nil || v != "1" {
				t.Fatalf("the permits at %q = %q, %v; want \"1\" (Java's layout)", name, v, err)
			}
			// Java takes the permit; a Go waiter gets it back from a Java release.
			if !javaTryAcquire(t, java, name, 1) {
				t.Fatal("Java could not take the permit")
			}
			done := make(chan error, 1)
			go func() { done <- s.Acquire(ctx, 1) }()
			awaitSubscribers(t, java, ch, 1)
			javaRelease(t, java, name, ch, 1)
			if err := recvWithin(t, done, 10*time.Second, "the Go waiter served by a Java release"); err != nil {
				t.Fatalf("Acquire = %v", err)
			}
			if javaTryAcquire(t, java, name, 1) {
				t.Fatal("Java took a permit that the Go waiter holds: more holders than permits")
			}
			// A Java waiter is told of a Go release, with the permits now available.
			sub := javaSubscribe(t, java, ch)
			if err := s.Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
			expectMessage(t, sub, ch, "1")
			if !javaTryAcquire(t, java, name, 1) {
				t.Fatal("Java could not take the permit the Go side released")
			}
		}},
	}
}

// compatObjectsConformance: an AtomicLong, a BitSet and a HyperLogLog are Redis's own formats at
// the names themselves, which is where Java Redisson's RAtomicLong, RBitSet and RHyperLogLog (with
// StringCodec elements) keep them: each side reads what the other wrote, with or without the mode.
func compatObjectsConformance() []conformanceCase {
	return []conformanceCase{
		{"data objects at the names Java uses", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			java := topologyClient(t)
			for _, c := range []*redisson.Client{newC(), newC(redisson.WithRedissonCompat())} {
				// {name} tags: the three objects of a round in one slot, so that one MULTI could
				// span them (not needed here, but a user's hash tag must keep its meaning).
				al, bs, hl := "{"+name+"}:al", "{"+name+"}:bs", "{"+name+"}:hll"
				if _, err := c.AtomicLong(al).Add(ctx, 5); err != nil {
					t.Fatal(err)
				}
				if v, err := java.IncrBy(ctx, al, 2).Result(); v != 7 || err != nil { // RAtomicLong.addAndGet
					t.Fatalf("Java INCRBY after a Go Add = %d, %v; want 7", v, err)
				}
				if v, err := c.AtomicLong(al).Load(ctx); v != 7 || err != nil {
					t.Fatalf("Go Load after Java's INCRBY = %d, %v; want 7", v, err)
				}
				if _, err := c.BitSet(bs).Set(ctx, 9); err != nil {
					t.Fatal(err)
				}
				if v, err := java.GetBit(ctx, bs, 9).Result(); v != 1 || err != nil { // RBitSet.get
					t.Fatalf("Java GETBIT 9 after a Go Set = %d, %v", v, err)
				}
				java.SetBit(ctx, bs, 3, 1) // RBitSet.set
				if v, err := c.BitSet(bs).Get(ctx, 3); !v || err != nil {
					t.Fatalf("Go Get(3) after Java's SETBIT = %v, %v", v, err)
				}
				if _, err := c.HyperLogLog(hl).Add(ctx, "ann"); err != nil {
					t.Fatal(err)
				}
				java.PFAdd(ctx, hl, "bob", "ann") // RHyperLogLog<String>.addAll with StringCodec
				if n, err := c.HyperLogLog(hl).Count(ctx); n != 2 || err != nil {
					t.Fatalf("Go Count after Java's PFADD = %d, %v; want 2", n, err)
				}
				java.Del(ctx, al, bs, hl)
			}
		}},
	}
}

// compatSyncWithJavaConformance runs Go Clients beside Java Redisson clients (the javadouble test
// double) on every topology: the semaphore's bound holds across both, and each side's release or
// count down wakes the other side's waiters (the Go side's re-poll is an hour away, the Java side has
// no fallback at all: a wake-up that is not sent hangs the case).
func compatSyncWithJavaConformance() []conformanceCase {
	return []conformanceCase{
		{"semaphore bound and wake-ups with Java clients", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			const permits, rounds = 2, 8
			var inside, most atomic.Int64
			enter := func() {
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond) // the section: long enough for the others to queue
				inside.Add(-1)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 2 {
				c := newC(redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Hour))
				j := javadouble.New(topologyClient(t))
				t.Cleanup(j.Close)
				if i == 0 {
					if ok, err := c.Semaphore(name).TrySetPermits(ctx, permits); !ok || err != nil {
						t.Fatalf("TrySetPermits = %v, %v", ok, err)
					}
				}
				for tid := range int64(2) {
					wg.Add(2)
					go func() {
						defer wg.Done()
						s := c.Semaphore(name)
						for range rounds {
							if err := s.Acquire(ctx, 1); err != nil {
								errs <- fmt.Errorf("Go Acquire: %w", err)
								return
							}
							enter()
							if err := s.Release(ctx, 1); err != nil {
								errs <- fmt.Errorf("Go Release: %w", err)
								return
							}
						}
					}()
					go func() {
						defer wg.Done()
						s := j.Semaphore(name)
						for range rounds {
							if err := s.Acquire(ctx, 1); err != nil {
								errs <- fmt.Errorf("Java acquire (thread %d): %w", tid, err)
								return
							}
							enter()
							if err := s.Release(ctx, 1); err != nil {
								errs <- fmt.Errorf("Java release: %w", err)
								return
							}
						}
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if m := most.Load(); m > permits {
				t.Fatalf("%d holders at once with %d permits", m, permits)
			}
			if n, err := newC(redisson.WithRedissonCompat()).Semaphore(name).AvailablePermits(ctx); n != permits || err != nil {
				t.Fatalf("AvailablePermits after all = %d, %v; want %d", n, err, permits)
			}
		}},
		{"latch released both ways with Java clients", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			g := newC(redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Hour)).CountDownLatch(name)
			j := javadouble.New(topologyClient(t))
			t.Cleanup(j.Close)
			jl := j.CountDownLatch(name)
			for round, goCounts := range []bool{true, false} {
				if ok, err := jl.TrySetCount(ctx, 2); !ok || err != nil {
					t.Fatalf("round %d: Java TrySetCount = %v, %v", round, ok, err)
				}
				goDone, javaDone := make(chan error, 1), make(chan error, 1)
				go func() { goDone <- g.Wait(ctx) }()
				go func() { javaDone <- jl.Await(ctx) }()
				awaitSubscribers(t, topologyClient(t), "redisson_countdownlatch__channel__{"+name+"}", 2)
				for range 2 {
					var err error
					if goCounts {
						_, err = g.CountDown(ctx)
					} else {
						err = jl.CountDown(ctx)
					}
					if err != nil {
						t.Fatalf("round %d: CountDown: %v", round, err)
					}
				}
				if err := recvWithin(t, goDone, 20*time.Second, "the Go waiter"); err != nil {
					t.Fatalf("round %d: Go Wait = %v", round, err)
				}
				if err := recvWithin(t, javaDone, 20*time.Second, "the Java waiter"); err != nil {
					t.Fatalf("round %d: Java Await = %v", round, err)
				}
			}
		}},
	}
}

// publishCmd is the publish command a Java Redisson client uses on rdb: SPUBLISH on a Redis 7
// Cluster (shardedSubscriptionMode AUTO), else PUBLISH.
func publishCmd(rdb redis.UniversalClient) string {
	if _, ok := rdb.(*redis.ClusterClient); ok {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

// javaLatchCountDown counts latch name down as Java Redisson does: DECR; at or below zero DEL; at
// zero publish "0".
func javaLatchCountDown(t *testing.T, rdb redis.UniversalClient, name, ch string) {
	t.Helper()
	script := redis.NewScript(`local v = redis.call('decr', KEYS[1])
if v <= 0 then redis.call('del', KEYS[1]) end
if v == 0 then redis.call(ARGV[1], ARGV[2], '0') end
return v`)
	if err := script.Run(context.Background(), rdb, []string{name}, publishCmd(rdb), ch).Err(); err != nil {
		t.Fatalf("Java count down: %v", err)
	}
}

// javaTryAcquire takes n permits of semaphore name as Java Redisson's tryAcquire does: only if at
// least n are available.
func javaTryAcquire(t *testing.T, rdb redis.UniversalClient, name string, n int64) bool {
	t.Helper()
	script := redis.NewScript(`local v = tonumber(redis.call('get', KEYS[1]) or '0')
if v >= tonumber(ARGV[1]) then redis.call('decrby', KEYS[1], ARGV[1]) return 1 end
return 0`)
	r, err := script.Run(context.Background(), rdb, []string{name}, n).Int64()
	if err != nil {
		t.Fatalf("Java tryAcquire: %v", err)
	}
	return r == 1
}

// javaRelease releases n permits of semaphore name as Java Redisson does: INCRBY, then publish the
// permits now available.
func javaRelease(t *testing.T, rdb redis.UniversalClient, name, ch string, n int64) {
	t.Helper()
	script := redis.NewScript(`local v = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], ARGV[3], v)
return v`)
	if err := script.Run(context.Background(), rdb, []string{name}, n, publishCmd(rdb), ch).Err(); err != nil {
		t.Fatalf("Java release: %v", err)
	}
}

// javaSubscribe subscribes to ch as a Java Redisson client does (SSUBSCRIBE on a Cluster), and
// returns once the subscription is confirmed.
func javaSubscribe(t *testing.T, rdb redis.UniversalClient, ch string) *redis.PubSub {
	t.Helper()
	var ps *redis.PubSub
	if _, ok := rdb.(*redis.ClusterClient); ok {
		ps = rdb.SSubscribe(context.Background(), ch)
	} else {
		ps = rdb.Subscribe(context.Background(), ch)
	}
	t.Cleanup(func() { _ = ps.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatalf("subscribe %s: %v", ch, err)
	}
	return ps
}

// expectMessage waits up to 10s for the next message on sub, which must be want on ch.
func expectMessage(t *testing.T, sub *redis.PubSub, ch, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatalf("no message on %s: %v", ch, err)
	}
	if msg.Channel != ch || msg.Payload != want {
		t.Fatalf("message %q on %s; want %q on %s", msg.Payload, msg.Channel, want, ch)
	}
}

// awaitSubscribers waits until at least n clients subscribe to ch (see channelSubscribers).
func awaitSubscribers(t *testing.T, rdb redis.UniversalClient, ch string, n int64) {
	t.Helper()
	eventually(t, 10*time.Second, strconv.FormatInt(n, 10)+" subscribers of "+ch, func() bool {
		return channelSubscribers(context.Background(), rdb, ch) >= n
	})
}

// A compatible Semaphore's waiting Acquire whose attempt found too few permits, and whose reply was
// lost (the script ran; the re-sent copy runs again), keeps waiting, as it does outside the mode
// (where the first copy's registration in the queue tells the re-send that it ran), and takes the
// permit released later: an attempt that took nothing is no unknown outcome.
func TestCompatSemaphoreWaitKeepsWaitingAfterLostReply(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, _ := proxiedClient(t, srv, p)
	c := newClient(t, rdb, redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Hour))
	other := newClient(t, srv.Client(t), redisson.WithRedissonCompat())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const name = "compat-lost-wait"
	// Load the scripts: a dropped NOSCRIPT reply is not a lost reply of a script that ran.
	warm := c.Semaphore("compat-lost-wait-warm")
	if _, err := warm.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := warm.TryAcquire(ctx, 1); !ok || err != nil {
		t.Fatalf("warm-up TryAcquire = %v, %v", ok, err)
	}
	if ok, err := other.Semaphore(name).TrySetPermits(ctx, 0); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	p.DropReplies(1) // the first attempt's reply (it found no permit)
	done := make(chan error, 1)
	go func() { done <- c.Semaphore(name).Acquire(ctx, 1) }()
	admin := srv.Client(t)
	eventually(t, 10*time.Second, "the Acquire waiting on Redisson's channel", func() bool {
		select {
		case err := <-done:
			t.Fatalf("Acquire ended before any permit was released: %v", err)
		default:
		}
		return admin.PubSubNumSub(ctx, "redisson_sc:{"+name+"}").Val()["redisson_sc:{"+name+"}"] == 1
	})
	p.DropReplies(0)
	if err := other.Semaphore(name).Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := recvWithin(t, done, 10*time.Second, "the Acquire woken by the release"); err != nil {
		t.Fatalf("Acquire (its first attempt's reply lost) = %v; want the released permit", err)
	}
	if n, err := other.Semaphore(name).AvailablePermits(ctx); n != 0 || err != nil {
		t.Fatalf("AvailablePermits = %d, %v; want 0 (the waiter holds the one permit)", n, err)
	}
}
