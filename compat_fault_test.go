package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
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

// TestCompatFaults is the randomized fault test of the Redisson-compatible mode: Go Clients made
// WithRedissonCompat, each behind a proxy that drops replies, delays, blackholes or cuts its
// connections at random, contend with Java Redisson clients (internal/javadouble, connected
// directly) for a Lock, a FairLock, both sides of a ReadWriteLock and a Semaphore of two permits
// (plain and leased permits: the PermitExpirableSemaphore of the same name), with random leases and
// waits. A checker in the test sees every critical section:
//
//   - two owners: a holder entering a lock's section while another is inside whose hold is not over
//     (a Java hold, or a Go hold whose context is not cancelled: a Go holder is told of a loss before
//     its lease may lapse), unless both are readers of the ReadWriteLock;
//   - too many permits: more holders of the Semaphore than it has permits, not counting Go holders of
//     leased permits whose context is cancelled (told of a loss before the lease may pass); Java
//     leases (1s and more) outlive the sections (15ms at most);
//   - held after its owner is done: once the faults stop and every worker has finished, the locks
//     must be gone within the lease, and the Semaphore must have its permits back unless a Go call
//     on it failed with an unknown outcome (then it may have fewer, never more).
//
// The seed is printed; GOREDISSON_COMPAT_SEED=<seed> replays the same choices (the interleaving
// still depends on the scheduler).
func TestCompatFaults(t *testing.T) {
	long(t)
	t.Parallel()
	seed := rand.Uint64()
	if s := os.Getenv("GOREDISSON_COMPAT_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("GOREDISSON_COMPAT_SEED: %v", err)
		}
	}
	t.Logf("seed %d (GOREDISSON_COMPAT_SEED=%d replays it)", seed, seed)
	const (
		runFor   = 8 * time.Second
		watchdog = time.Second
		permits  = 2
	)
	srv := redistest.Start(t)
	admin := srv.Client(t)
	const lockName, fairName, rwName = "cf:lock", "cf:fair", "cf:rw"
	locks := []string{lockName, fairName, rwName}
	const sem = "cf:sem"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	var goClients []*redisson.Client
	var proxies []*redistest.Proxy
	for range 3 {
		p, err := redistest.StartProxy(srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		rdb := redis.NewClient(modelRedisOptions(p.Addr()))
		t.Cleanup(func() { _ = rdb.Close() })
		c := newClient(t, rdb, redisson.WithRedissonCompat(), redisson.WithWatchdogTimeout(watchdog),
			redisson.WithWaiterTimeout(watchdog), redisson.WithRepollInterval(200*time.Millisecond),
			redisson.WithLogger(slog.New(slog.DiscardHandler)))
		goClients, proxies = append(goClients, c), append(proxies, p)
	}
	var javas []*javadouble.Client
	for range 2 {
		j := javadouble.New(srv.Client(t), javadouble.WatchdogTimeout(watchdog))
		t.Cleanup(j.Close)
		javas = append(javas, j)
	}
	if ok, err := goClients[0].Semaphore(sem).TrySetPermits(ctx, permits); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}

	// The checker.
	type holder struct {
		who  string
		read bool            // a reader of the ReadWriteLock
		hold context.Context // a Go hold's context; nil for a Java hold
	}
	var mu sync.Mutex
	inside := map[string][]*holder{}
	var semInside []context.Context // one per permit holder: nil, or a Go leased permit's context
	var violations []string
	violate := func(format string, args ...any) {
		violations = append(violations, fmt.Sprintf(format, args...))
	}
	enterLock := func(name string, h *holder) {
		mu.Lock()
		defer mu.Unlock()
		for _, cur := range inside[name] {
			if (cur.hold == nil || cur.hold.Err() == nil) && !(cur.read && h.read) {
				violate("two owners of %s: %s entered while %s was inside with its hold not over", name, h.who, cur.who)
			}
		}
		inside[name] = append(inside[name], h)
	}
	leaveLock := func(name string, h *holder) {
		mu.Lock()
		defer mu.Unlock()
		inside[name] = slices.DeleteFunc(inside[name], func(x *holder) bool { return x == h })
	}
	enterSem := func(who string, hold context.Context) func() {
		mu.Lock()
		defer mu.Unlock()
		semInside = append(semInside, hold)
		live := 0
		for _, h := range semInside {
			if h == nil || h.Err() == nil {
				live++
			}
		}
		if live > permits {
			violate("too many permits: %s made %d live holders of %d permits", who, live, permits)
		}
		return func() {
			mu.Lock()
			defer mu.Unlock()
			for i, h := range semInside {
				if h == hold {
					semInside = slices.Delete(semInside, i, i+1)
					break
				}
			}
		}
	}
	var semUnknown atomic.Int64 // Go Semaphore calls whose outcome is unknown: permits may be gone

	end := time.Now().Add(runFor)
	var wg sync.WaitGroup
	worker := func(who string, rng *rand.Rand, op func(rng *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && ctx.Err() == nil {
				op(rng)
			}
		}()
	}
	pause := func(rng *rand.Rand) { time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond) } // the section's work
	for i, c := range goClients {
		for g := range 2 {
			who := fmt.Sprintf("go%d.%d", i, g)
			worker(who, rand.New(rand.NewPCG(seed, uint64(100+10*i+g))), func(rng *rand.Rand) {
				opts := []redisson.AcquireOption{redisson.WithWait(time.Duration(200+rng.IntN(800)) * time.Millisecond)}
				if rng.IntN(3) == 0 {
					opts = append(opts, redisson.WithLease(time.Duration(300+rng.IntN(1500))*time.Millisecond))
				}
				switch rng.IntN(8) {
				case 0, 1: // a plain permit
					ok, err := c.Semaphore(sem).TryAcquire(ctx, 1, opts[0])
					if err != nil && !errors.Is(err, redisson.ErrNotObtained) {
						semUnknown.Add(1)
					}
					if !ok || err != nil {
						return
					}
					leave := enterSem(who, nil)
					pause(rng)
					leave()
					if err := c.Semaphore(sem).Release(ctx, 1); err != nil {
						semUnknown.Add(1)
					}
					return
				case 2: // a leased permit (WithLease, or the watchdog's)
					p := c.PermitExpirableSemaphore(sem)
					h, err := p.AcquireHeld(ctx, 1, opts...)
					if err != nil {
						if !errors.Is(err, redisson.ErrNotObtained) {
							semUnknown.Add(1)
						}
						return
					}
					leave := enterSem(who, h.Context())
					pause(rng)
					leave()
					_ = p.Release(ctx, h.IDs()...) // a lost leased permit comes back with its lease
					return
				}
				name, read := locks[rng.IntN(len(locks))], false
				var h *redisson.Hold
				var err error
				switch name {
				case lockName:
					h, err = c.Lock(name).TryLock(ctx, opts...)
				case fairName:
					h, err = c.FairLock(name).TryLock(ctx, opts...)
				default:
					if read = rng.IntN(2) == 0; read {
						h, err = c.ReadWriteLock(name).TryRLock(ctx, opts...)
					} else {
						h, err = c.ReadWriteLock(name).TryLock(ctx, opts...)
					}
				}
				if err != nil {
					return
				}
				me := &holder{who: who, read: read, hold: h.Context()}
				enterLock(name, me)
				pause(rng)
				leaveLock(name, me)
				_ = h.Unlock(ctx)
			})
		}
	}
	for i, j := range javas {
		for tid := range int64(2) {
			who := fmt.Sprintf("java%d.%d", i, tid)
			worker(who, rand.New(rand.NewPCG(seed, uint64(200+10*i+int(tid)))), func(rng *rand.Rand) {
				wait := time.Duration(200+rng.IntN(800)) * time.Millisecond
				switch rng.IntN(8) {
				case 0, 1: // a plain permit
					s := j.Semaphore(sem)
					ok, err := s.TryAcquire(ctx, 1, wait)
					if !ok || err != nil {
						return
					}
					leave := enterSem(who, nil)
					pause(rng)
					leave()
					if err := s.Release(ctx, 1); err != nil {
						t.Errorf("%s: Java release: %v", who, err) // direct connection: no fault
					}
					return
				case 2: // a leased permit, 1-3s
					p := j.PermitExpirableSemaphore(sem)
					id, ok, err := p.TryAcquire(ctx, wait, time.Duration(1000+rng.IntN(2000))*time.Millisecond)
					if !ok || err != nil {
						return
					}
					leave := enterSem(who, nil)
					pause(rng)
					leave()
					_, _ = p.TryRelease(ctx, id) // false if a Go reclaim took it back after its lease
					return
				}
				name, read := locks[rng.IntN(len(locks))], false
				var l *javadouble.Lock
				switch name {
				case lockName:
					l = j.Lock(name)
				case fairName:
					l = j.FairLock(name)
				default:
					if read = rng.IntN(2) == 0; read {
						l = j.ReadWriteLock(name).ReadLock()
					} else {
						l = j.ReadWriteLock(name).WriteLock()
					}
				}
				ok, err := l.TryLock(ctx, tid, wait, 0) // the watchdog's lease: Java is never told of a loss
				if !ok || err != nil {
					return
				}
				me := &holder{who: who, read: read}
				enterLock(name, me)
				pause(rng)
				leaveLock(name, me)
				if err := l.Unlock(ctx, tid); err != nil {
					mu.Lock()
					violate("%s: Java unlock of %s: %v (its hold was taken from it)", who, name, err)
					mu.Unlock()
				}
			})
		}
	}
	// The faults, on the Go Clients' connections only.
	frng := rand.New(rand.NewPCG(seed, 1))
	for time.Now().Before(end) {
		p := proxies[frng.IntN(len(proxies))]
		switch frng.IntN(4) {
		case 0:
			p.DropReplies(1 + frng.IntN(2))
		case 1:
			p.Delay(time.Duration(50+frng.IntN(250)) * time.Millisecond)
			time.Sleep(time.Duration(200+frng.IntN(500)) * time.Millisecond)
			p.Delay(0)
		case 2:
			p.Blackhole(true)
			time.Sleep(time.Duration(200+frng.IntN(1300)) * time.Millisecond)
			p.Blackhole(false)
		case 3:
			p.CloseConns()
		}
		time.Sleep(time.Duration(100+frng.IntN(300)) * time.Millisecond)
	}
	for _, p := range proxies {
		p.DropReplies(0)
		p.Delay(0)
		p.Blackhole(false)
	}
	wg.Wait()

	// Nothing held once everyone is done: within the watchdog lease (a Go Unlock that failed stops
	// the renewals; the hold lapses), and the Semaphore's permits back.
	deadline := time.Now().Add(2*watchdog + time.Second)
	for _, name := range locks {
		for admin.Exists(ctx, name).Val() != 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if admin.Exists(ctx, name).Val() != 0 {
			mu.Lock()
			violate("%s still held (%v, TTL %v) after every owner was done", name, admin.HGetAll(ctx, name).Val(), admin.PTTL(ctx, name).Val())
			mu.Unlock()
		}
	}
	// Leased permits come back once their leases pass (Java's: 3s at most; Go's: the watchdog's),
	// counted back by the next script that looks (AvailablePermits).
	var avail int64
	var err error
	for deadline := time.Now().Add(3*time.Second + 2*watchdog); ; time.Sleep(100 * time.Millisecond) {
		avail, err = goClients[0].Semaphore(sem).AvailablePermits(ctx)
		if err != nil || avail >= permits || time.Now().After(deadline) {
			break
		}
	}
	switch {
	case err != nil:
		t.Fatalf("AvailablePermits of %s: %v", sem, err)
	case avail > permits:
		violate("the Semaphore has %d permits available of %d: some were released twice", avail, permits)
	case avail < permits && semUnknown.Load() == 0:
		violate("the Semaphore has %d permits available of %d, and no Go call on it had an unknown outcome", avail, permits)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, v := range violations {
		t.Errorf("seed %d: %s", seed, v)
	}
}
