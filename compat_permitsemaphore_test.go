package redisson_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/javadouble"
	"github.com/goredisson/redisson/redistest"
)

// The Redisson-compatible mode (WithRedissonCompat) of the PermitExpirableSemaphore: permits shared
// with Java Redisson's RPermitExpirableSemaphore (redisson-reference.md §10), whose side is played
// by internal/javadouble: the permits at the name, the leases in "{name}:timeout" (raw 16-byte ids,
// expiry scores in ms), the channel "redisson_sc:{name}".

// serverMs returns the Redis server's time in ms.
func serverMs(t *testing.T, rdb redis.UniversalClient) int64 {
	t.Helper()
	tm, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMilli()
}

// compatPermitWithJavaConformance is the suite of the compatible PermitExpirableSemaphore with Java
// clients, on every topology.
func compatPermitWithJavaConformance() []conformanceCase {
	return []conformanceCase{
		{"permit bound with Go and Java clients", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
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
					if ok, err := c.PermitExpirableSemaphore(name).TrySetPermits(ctx, permits); !ok || err != nil {
						t.Fatalf("TrySetPermits = %v, %v", ok, err)
					}
				}
				spawn(&wg, func() {
					p := c.PermitExpirableSemaphore(name)
					for r := range rounds {
						var opts []redisson.AcquireOption
						if r%2 == 0 {
							opts = append(opts, redisson.WithLease(time.Minute))
						}
						ids, err := p.Acquire(ctx, 1, opts...)
						if err != nil {
							errs <- fmt.Errorf("Go Acquire: %w", err)
							return
						}
						enter()
						if err := p.Release(ctx, ids...); err != nil {
							errs <- fmt.Errorf("Go Release: %w", err)
							return
						}
					}
				})
				spawn(&wg, func() {
					p := j.PermitExpirableSemaphore(name)
					for r := range rounds {
						lease := time.Duration(0)
						if r%2 == 0 {
							lease = time.Minute
						}
						id, err := p.Acquire(ctx, lease)
						if err != nil {
							errs <- fmt.Errorf("Java acquire: %w", err)
							return
						}
						enter()
						if err := p.Release(ctx, id); err != nil {
							errs <- fmt.Errorf("Java release: %w", err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if m := most.Load(); m > permits {
				t.Fatalf("%d holders at once with %d permits", m, permits)
			}
			if n, err := newC(redisson.WithRedissonCompat()).PermitExpirableSemaphore(name).AvailablePermits(ctx); n != permits || err != nil {
				t.Fatalf("AvailablePermits after all = %d, %v; want %d", n, err, permits)
			}
		}},
		{"permit of Java seen by Go and back after its lease", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			p := newC(redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Hour)).PermitExpirableSemaphore(name)
			j := javadouble.New(topologyClient(t))
			t.Cleanup(j.Close)
			jp := j.PermitExpirableSemaphore(name)
			if ok, err := jp.TrySetPermits(ctx, 1); !ok || err != nil {
				t.Fatalf("Java TrySetPermits = %v, %v", ok, err)
			}
			if _, err := jp.Acquire(ctx, 500*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if n, err := p.AvailablePermits(ctx); n != 0 || err != nil {
				t.Fatalf("Go AvailablePermits with Java's permit leased = %d, %v; want 0", n, err)
			}
			if ids, err := p.TryAcquire(ctx, 1); ids != nil || err != nil {
				t.Fatalf("Go TryAcquire with Java's permit leased = %v, %v; want nil, nil", ids, err)
			}
			// No message comes: the Go waiter sleeps until Java's lease ends, then takes the permit.
			ids, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute))
			if err != nil || len(ids) != 1 {
				t.Fatalf("Go Acquire after Java's lease = %v, %v", ids, err)
			}
			if err := p.Release(ctx, ids...); err != nil {
				t.Fatal(err)
			}
			// A Java permit without a lease never ends; any client may release it by its id.
			jid, err := jp.Acquire(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d, err := p.RemainingLease(ctx, jid); d != redisson.NeverExpires || err != nil {
				t.Fatalf("Go RemainingLease of Java's permit without a lease = %v, %v; want NeverExpires", d, err)
			}
			if err := p.Release(ctx, jid); err != nil {
				t.Fatalf("Go Release of Java's permit id %s = %v", jid, err)
			}
			if ok, err := jp.TryRelease(ctx, jid); ok || err != nil {
				t.Fatalf("Java TryRelease after Go released it = %v, %v; want false", ok, err)
			}
			if n, err := jp.AvailablePermits(ctx); n != 1 || err != nil {
				t.Fatalf("Java AvailablePermits = %d, %v; want 1", n, err)
			}
		}},
		{"Java waiter woken by Go release and by Go lease end", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			p := newC(redisson.WithRedissonCompat()).PermitExpirableSemaphore(name)
			j := javadouble.New(topologyClient(t))
			t.Cleanup(j.Close)
			jp := j.PermitExpirableSemaphore(name)
			if ok, err := p.TrySetPermits(ctx, 1); !ok || err != nil {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			ids, err := p.Acquire(ctx, 1) // watchdog-renewed: no expiry to sleep until but ~30s
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() {
				_, err := jp.Acquire(ctx, time.Minute)
				got <- err
			}()
			awaitSubscribers(t, topologyClient(t), "redisson_sc:{"+name+"}", 1)
			if err := p.Release(ctx, ids...); err != nil {
				t.Fatal(err)
			}
			if err := recvWithin(t, got, 10*time.Second, "the Java acquire woken by the Go release"); err != nil {
				t.Fatalf("Java Acquire = %v", err)
			}
			// The permit is Java's for a minute; Go takes it back through AddPermits, then leases
			// it briefly: the Java waiter gets it when that lease ends, with no message.
			if _, err := p.AddPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Acquire(ctx, 1, redisson.WithLease(500*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			go func() {
				_, err := jp.Acquire(ctx, time.Minute)
				got <- err
			}()
			if err := recvWithin(t, got, 10*time.Second, "the Java acquire after the Go lease ended"); err != nil {
				t.Fatalf("Java Acquire = %v", err)
			}
		}},
	}
}

// The exact layout: a Go permit is a raw 16-byte member of "{name}:timeout" whose id is its hex,
// scored by the server's time plus its lease (the watchdog's without WithLease); a release
// publishes the count on "redisson_sc:{name}"; a malformed id is refused, changing nothing.
func TestCompatPermitLayout(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat(), redisson.WithWatchdogTimeout(10*time.Second))
	ctx := t.Context()
	const name = "pes"
	leases := "{pes}:timeout"
	p := c.PermitExpirableSemaphore(name)
	if ok, err := p.TrySetPermits(ctx, 3); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	before := serverMs(t, admin)
	fixed, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	dog, err := p.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	after := serverMs(t, admin)
	for _, tc := range []struct {
		id    string
		lease int64
	}{{fixed[0], 60_000}, {dog[0], 10_000}} {
		raw, err := hex.DecodeString(tc.id)
		if err != nil || len(raw) != 16 {
			t.Fatalf("permit id %q: want 32 hex digits", tc.id)
		}
		score, err := admin.ZScore(ctx, leases, string(raw)).Result()
		if err != nil {
			t.Fatalf("ZSCORE %s <raw id %s>: %v", leases, tc.id, err)
		}
		if s := int64(score); s < before+tc.lease || s > after+tc.lease {
			t.Fatalf("score of %s = %d; want server time + %d in [%d, %d]", tc.id, s, tc.lease, before+tc.lease, after+tc.lease)
		}
	}
	if n := admin.ZCard(ctx, leases).Val(); n != 2 {
		t.Fatalf("ZCARD %s = %d; want 2", leases, n)
	}
	if v := admin.Get(ctx, name).Val(); v != "1" {
		t.Fatalf("GET %s = %q; want 1", name, v)
	}
	if keys := admin.Keys(ctx, "*~sl*").Val(); len(keys) != 0 {
		t.Fatalf("native lease keys %v written in the compatible mode", keys)
	}
	for _, bad := range []string{"xyz", fixed[0][:30], fixed[0] + "00", dog[0] + "#1"} {
		if err := p.Release(ctx, fixed[0], bad); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Fatalf("Release with id %q = %v; want ErrInvalidArgument", bad, err)
		}
		if _, err := p.RemainingLease(ctx, bad); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Fatalf("RemainingLease(%q) = %v; want ErrInvalidArgument", bad, err)
		}
	}
	if n := admin.ZCard(ctx, leases).Val(); n != 2 {
		t.Fatalf("ZCARD %s after refused releases = %d; want 2", leases, n)
	}
	// SetLease re-scores the raw member with the server's time.
	before = serverMs(t, admin)
	if err := p.SetLease(ctx, 2*time.Minute, fixed...); err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(fixed[0])
	if s := int64(admin.ZScore(ctx, leases, string(raw)).Val()); s < before+120_000 || s > serverMs(t, admin)+120_000 {
		t.Fatalf("score after SetLease(2m) = %d; want server time + 120000 (from %d)", s, before+120_000)
	}
	sub := javaSubscribe(t, admin, "redisson_sc:{pes}")
	if err := p.Release(ctx, fixed...); err != nil {
		t.Fatal(err)
	}
	expectMessage(t, sub, "redisson_sc:{pes}", "2")
	if d, err := p.RemainingLease(ctx, dog[0]); err != nil || d <= 0 || d > 10*time.Second {
		t.Fatalf("RemainingLease of the watchdog permit = %v, %v", d, err)
	}
}

// A Go permit of a Client that dies without releasing it comes back to Java within the watchdog
// timeout (Redisson's permits without a lease never would).
func TestCompatPermitOfDeadGoHolderReturnsToJava(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t), redisson.WithRedissonCompat(), redisson.WithWatchdogTimeout(time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p := c.PermitExpirableSemaphore("dead")
	if ok, err := p.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := p.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	j := javadouble.New(srv.Client(t))
	t.Cleanup(j.Close)
	_ = c.Close() // no release: its permit lapses within the watchdog timeout
	if _, err := j.PermitExpirableSemaphore("dead").Acquire(ctx, time.Minute); err != nil {
		t.Fatalf("Java Acquire after the Go holder died = %v", err)
	}
}

// A compatible acquisition or release whose reply is lost (the script ran, the copy is re-sent)
// is applied once: the acquisition's first permit id in the lease set answers the re-sent acquire,
// the release's record answers the re-sent release.
func TestCompatPermitLostRepliesAppliedOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	px := redistest.NewProxy(t, srv.Addr())
	rdb, _ := proxiedClient(t, srv, px)
	c := newClient(t, rdb, redisson.WithRedissonCompat())
	admin := srv.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p := c.PermitExpirableSemaphore("lost")
	if ok, err := p.TrySetPermits(ctx, 3); !ok || err != nil { // also loads the scripts
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	warm, err := p.TryAcquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil || len(warm) != 1 {
		t.Fatalf("warm-up TryAcquire = %v, %v", warm, err)
	}
	if err := p.Release(ctx, warm...); err != nil {
		t.Fatal(err)
	}
	px.DropReplies(1)
	ids, err := p.TryAcquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil || len(ids) != 1 {
		t.Fatalf("TryAcquire, its reply lost = %v, %v; want one permit", ids, err)
	}
	if n, v := admin.ZCard(ctx, "{lost}:timeout").Val(), admin.Get(ctx, "lost").Val(); n != 1 || v != "2" {
		t.Fatalf("after an acquisition whose reply was lost: %d leases, %s available; want 1 and 2", n, v)
	}
	px.DropReplies(1)
	if err := p.Release(ctx, ids...); err != nil {
		t.Fatalf("Release, its reply lost = %v", err)
	}
	if n, v := admin.ZCard(ctx, "{lost}:timeout").Val(), admin.Get(ctx, "lost").Val(); n != 0 || v != "3" {
		t.Fatalf("after a release whose reply was lost: %d leases, %s available; want 0 and 3", n, v)
	}
}

// A Go waiter behind a Java permit taken without a lease (score 922337203685477: it never ends)
// waits for a message, not for that score, and takes the permit Java releases; meanwhile it makes
// a bounded number of attempts (it does not spin on a bogus retry time).
func TestCompatPermitGoWaiterBehindJavaPermitWithoutLease(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	hook := newScriptHook()
	rdb.AddHook(hook)
	c := newClient(t, rdb, redisson.WithRedissonCompat(), redisson.WithRepollInterval(time.Hour))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	j := javadouble.New(srv.Client(t))
	t.Cleanup(j.Close)
	jp := j.PermitExpirableSemaphore("forever")
	if ok, err := jp.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("Java TrySetPermits = %v, %v", ok, err)
	}
	jid, err := jp.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int64
	hook.setAround(func(a []string, next func()) {
		if semAcquireCall("", "c")(a) {
			attempts.Add(1)
		}
		next()
	})
	got := make(chan error, 1)
	go func() {
		_, err := c.PermitExpirableSemaphore("forever").Acquire(ctx, 1, redisson.WithLease(time.Minute))
		got <- err
	}()
	awaitSubscribers(t, srv.Client(t), "redisson_sc:{forever}", 1)
	eventually(t, 10*time.Second, "the Go waiter's first attempt", func() bool { return attempts.Load() >= 1 })
	select {
	case err := <-got:
		t.Fatalf("Go Acquire ended while Java holds the only permit: %v", err)
	case <-time.After(300 * time.Millisecond): // a window in which a spinning waiter makes many attempts
	}
	if n := attempts.Load(); n > 3 {
		t.Fatalf("the Go waiter made %d attempts behind a permit that never expires; want a few", n)
	}
	if err := jp.Release(ctx, jid); err != nil {
		t.Fatal(err)
	}
	if err := recvWithin(t, got, 10*time.Second, "the Go waiter woken by Java's release"); err != nil {
		t.Fatalf("Go Acquire = %v", err)
	}
}

// As TestPermitLateCopyOfWaitingAttemptTakesNothing, in the Redisson-compatible layout: a waiting
// attempt (which records that it ran and took nothing, the trace its re-send looks for) whose first
// copy lands after its re-send took the permits, and after the holder released one of them, takes
// nothing.
func TestCompatPermitLateCopyOfWaitingAttemptTakesNothing(t *testing.T) {
	t.Parallel()
	lateCopyOfWaitingAttemptTakesNothing(t, "c", []redisson.Option{redisson.WithRedissonCompat()}, func(admin *redis.Client, name string) int64 {
		return admin.ZCard(context.Background(), "{"+name+"}:timeout").Val()
	})
}
