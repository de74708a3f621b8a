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
// directly) for a Lock, a FairLock, a SpinLock, a FencedLock, both sides of two ReadWriteLocks and
// a Semaphore of two permits
// (plain and leased permits: the PermitExpirableSemaphore of the same name), with random leases and
// waits. The Go Clients' watchdog timeouts are 1s, 3s and 10s, the Java clients' 1s
// (WithRedissonWatchdogTimeout tells the Go Clients); one of them, by the seed, is made
// WithAutoPipelining. Go readers of the second ReadWriteLock, on the
// Client with the longest watchdog, hold it longer than Java's timeout, with the watchdog's lease,
// while Java readers come and die holding it (their client closed: Redisson's read-lock watchdog,
// which set the hash's TTL to 1s, stops) and writers of both languages try to take it; Go readers'
// fixed leases of the first are at most the Java side's timeout (the documented limit). A checker in the test sees every critical section:
//
//   - two owners: a holder entering a lock's section while another is inside whose hold is not over
//     (a Java hold, or a Go hold whose context is not cancelled: a Go holder is told of a loss before
//     its lease may lapse), unless both are readers of the ReadWriteLock;
//   - tokens out of order: a live Go hold of the FencedLock entering with a token no greater than
//     one that entered before it (Java holds of the SpinLock and the FencedLock are the double's
//     RLock: the same hash and acquisition as RSpinLock's and RFencedLock's, which it lacks);
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
		watchdog = time.Second // the Java clients' lockWatchdogTimeout, and the shortest Go one
		permits  = 2
	)
	goWatchdogs := []time.Duration{watchdog, 3 * watchdog, 10 * watchdog}
	longest := goWatchdogs[len(goWatchdogs)-1]
	srv := redistest.Start(t)
	admin := srv.Client(t)
	// rwLong is a ReadWriteLock that Go readers hold for long reads (with the watchdog's lease), Java
	// readers die holding, and writers of both languages try to take.
	const lockName, fairName, rwName, rwLong = "cf:lock", "cf:fair", "cf:rw", "cf:rw-long"
	const spinName, fencedName = "cf:spin", "cf:fenced"
	locks := []string{lockName, fairName, spinName, fencedName, rwName, rwLong}
	const sem = "cf:sem"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	var goClients []*redisson.Client
	var proxies []*redistest.Proxy
	// One Go Client, by the seed, batches its workers' concurrent commands (WithAutoPipelining).
	piped := rand.New(rand.NewPCG(seed, 2)).IntN(len(goWatchdogs))
	for i, wd := range goWatchdogs {
		p, err := redistest.StartProxy(srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		rdb := redis.NewClient(modelRedisOptions(p.Addr()))
		t.Cleanup(func() { _ = rdb.Close() })
		c := newClient(t, rdb, redisson.WithRedissonCompat(), redisson.WithWatchdogTimeout(wd),
			redisson.WithRedissonWatchdogTimeout(watchdog), redisson.WithWaiterTimeout(watchdog),
			redisson.WithRepollInterval(200*time.Millisecond), redisson.WithLogger(slog.New(slog.DiscardHandler)),
			redisson.WithAutoPipelining(i == piped))
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
		who   string
		read  bool            // a reader of the ReadWriteLock
		hold  context.Context // a Go hold's context; nil for a Java hold
		token int64           // a Go hold's fencing token (the FencedLock)
	}
	var lastToken int64 // the greatest token of a Go hold that entered the FencedLock's section
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
		if h.token > 0 && h.hold.Err() == nil {
			if h.token <= lastToken {
				violate("tokens out of order: %s entered %s with token %d after token %d", h.who, name, h.token, lastToken)
			}
			lastToken = h.token
		}
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
	// A long read: longer than the Java side's watchdog timeout, so that a Java reader's watchdog
	// cuts the hash's TTL meanwhile.
	longPause := func(rng *rand.Rand) { time.Sleep(watchdog + time.Duration(500+rng.IntN(3000))*time.Millisecond) }
	for i, c := range goClients {
		for g := range 2 {
			who := fmt.Sprintf("go%d.%d", i, g)
			worker(who, rand.New(rand.NewPCG(seed, uint64(100+10*i+g))), func(rng *rand.Rand) {
				opts := []redisson.AcquireOption{redisson.WithWait(time.Duration(200+rng.IntN(800)) * time.Millisecond)}
				lease := time.Duration(0)
				if rng.IntN(3) == 0 {
					lease = time.Duration(300+rng.IntN(1500)) * time.Millisecond
				}
				withLease := func(max time.Duration) []redisson.AcquireOption {
					if lease == 0 {
						return opts
					}
					return append(opts, redisson.WithLease(min(lease, max)))
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
					h, err := p.AcquireHeld(ctx, 1, withLease(lease)...)
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
					h, err = c.Lock(name).TryLock(ctx, withLease(lease)...)
				case fairName:
					h, err = c.FairLock(name).TryLock(ctx, withLease(lease)...)
				case spinName:
					h, err = c.SpinLock(name).TryLock(ctx, withLease(lease)...)
				case fencedName:
					h, err = c.FencedLock(name).TryLock(ctx, withLease(lease)...)
				case rwLong:
					// Readers on the Client with the longest watchdog, one op in three: writers get
					// their chance between the long reads.
					if read = goWatchdogs[i] == longest && rng.IntN(3) == 0; read {
						h, err = c.ReadWriteLock(name).TryRLock(ctx, opts...) // the watchdog's lease
					} else {
						h, err = c.ReadWriteLock(name).TryLock(ctx, withLease(lease)...)
					}
				default:
					if read = rng.IntN(2) == 0; read {
						// A fixed lease longer than the Java side's timeout is not protected (a Java
						// reader that dies frees the hash that long after its last renewal).
						h, err = c.ReadWriteLock(name).TryRLock(ctx, withLease(watchdog)...)
					} else {
						h, err = c.ReadWriteLock(name).TryLock(ctx, withLease(lease)...)
					}
				}
				if err != nil {
					return
				}
				me := &holder{who: who, read: read, hold: h.Context(), token: h.Token()}
				enterLock(name, me)
				if read && name == rwLong {
					longPause(rng)
				} else {
					pause(rng)
				}
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
				case lockName, spinName, fencedName:
					l = j.Lock(name)
				case fairName:
					l = j.FairLock(name)
				case rwLong: // its Java readers are those that die holding it (below)
					l = j.ReadWriteLock(name).WriteLock()
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
	// Java readers that die holding rwLong: one Java client after another takes a read hold (the
	// watchdog's lease) and is closed while it holds it.
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 300))
		for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond) // the next Java service starts
			j := javadouble.New(srv.Client(t), javadouble.WatchdogTimeout(watchdog))
			ok, err := j.ReadWriteLock(rwLong).ReadLock().TryLock(ctx, 1, time.Duration(200+rng.IntN(800))*time.Millisecond, 0)
			if ok && err == nil {
				me := &holder{who: fmt.Sprintf("java-dying%d", i), read: true}
				enterLock(rwLong, me)
				time.Sleep(time.Duration(200+rng.IntN(1000)) * time.Millisecond)
				// It dies inside: its hold lasts until its lease passes, which no writer can enter before.
				leaveLock(rwLong, me)
			}
			j.Close()
		}
	}()
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
	t.Logf("Go Client %d pipelined %d commands", piped, redisson.Piped(goClients[piped]))

	// Nothing held once everyone is done: within the longest watchdog lease (a Go Unlock that failed
	// stops the renewals; the hold lapses), and the Semaphore's permits back.
	deadline := time.Now().Add(2*longest + time.Second)
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
	for deadline := time.Now().Add(3*time.Second + 2*longest); ; time.Sleep(100 * time.Millisecond) {
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
