package redisson_test

// A ReadWriteLock of a Client made WithRedissonCompat against Java Redisson 3.x RReadWriteLock
// clients (the internal/javadouble test double) on the same Redis.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/javadouble"
)

// rwNames are Redisson's read-acquisition key prefix tag and channel for name.
func rwNames(name string) (tag, channel string) {
	tag = "{" + name + "}"
	if strings.Contains(name, "{") {
		tag = name
	}
	return tag, "redisson_rwlock:" + tag
}

// readerFields are the reader fields of the hash at name, with their counts.
func readerFields(t *testing.T, rdb redis.UniversalClient, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for f, v := range rdb.HGetAll(t.Context(), name).Val() {
		if f != "mode" && !strings.HasSuffix(f, ":write") {
			out[f] = v
		}
	}
	return out
}

// The layout is Redisson's: the hash (mode, reader counts, "<owner>:write"), one key per read
// acquisition with its lease, Redisson's TTL rules, and the messages of the releases.
func TestCompatRWLockLayout(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"rw:1000", "{user:7}:rw"} {
		c, admin, _ := setup(t, redisson.WithRedissonCompat())
		ctx := t.Context()
		j := newJava(t, admin)
		tag, channel := rwNames(name)
		sub := admin.Subscribe(ctx, channel)
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		rw := c.ReadWriteLock(name)

		r := mustRLock(t, rw, ctx)
		readers := readerFields(t, admin, name)
		if mode := admin.HGet(ctx, name, "mode").Val(); mode != "read" || len(readers) != 1 {
			t.Fatalf("%s: mode %q, readers %v; want read, one reader", name, mode, readers)
		}
		var owner string
		for f, v := range readers {
			owner = f
			if v != "1" {
				t.Fatalf("%s: reader count %q; want 1", name, v)
			}
		}
		timeout := func(n string) string { return tag + ":" + owner + ":rwlock_timeout:" + n }
		for _, k := range []string{name, timeout("1")} {
			if ttl := admin.PTTL(ctx, k).Val(); ttl <= 20*time.Second || ttl > redisson.DefaultWatchdogTimeout {
				t.Fatalf("%s: TTL of %s %v; want the watchdog lease", name, k, ttl)
			}
		}
		r2, err := r.Reenter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v := admin.HGet(ctx, name, owner).Val(); v != "2" || admin.Exists(ctx, timeout("2")).Val() != 1 {
			t.Fatalf("%s: after a re-entry count %q, key %s exists %d; want 2 and 1", name, v, timeout("2"), admin.Exists(ctx, timeout("2")).Val())
		}
		jr := j.ReadWriteLock(name).ReadLock()
		if ok, err := jr.TryLock(ctx, 1, 0, 10*time.Second); !ok || err != nil {
			t.Fatalf("%s: Java reader beside a Go reader: %v, %v", name, ok, err)
		}
		if v := admin.HGet(ctx, name, j.Owner(1)).Val(); v != "1" {
			t.Fatalf("%s: Java reader's count %q", name, v)
		}
		mustUnlock(t, r2)
		if admin.Exists(ctx, timeout("2")).Val() != 0 || admin.HGet(ctx, name, owner).Val() != "1" {
			t.Fatalf("%s: a partial read release left %v", name, admin.HGetAll(ctx, name).Val())
		}
		mustUnlock(t, r)
		if admin.Exists(ctx, timeout("1")).Val() != 0 || admin.HExists(ctx, name, owner).Val() {
			t.Fatalf("%s: the final read release left %v", name, admin.HGetAll(ctx, name).Val())
		}
		if err := jr.Unlock(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "0" {
			t.Fatalf("%s: message %v, %v; want \"0\" for the read release that freed the lock", name, msg, err)
		}

		w := mustLock(t, rw, ctx)
		fields := admin.HGetAll(ctx, name).Val()
		var writer string
		for f, v := range fields {
			if strings.HasSuffix(f, ":write") {
				writer = strings.TrimSuffix(f, ":write")
				if v != "1" {
					t.Fatalf("%s: write count %q", name, v)
				}
			}
		}
		if fields["mode"] != "write" || len(fields) != 2 || writer == "" {
			t.Fatalf("%s: write hold %v; want mode write and <owner>:write 1", name, fields)
		}
		w2, err := w.Reenter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ttl := admin.PTTL(ctx, name).Val(); ttl <= redisson.DefaultWatchdogTimeout+20*time.Second {
			t.Fatalf("%s: TTL after a write re-entry %v; want PTTL + lease (about 60s)", name, ttl)
		}
		// Downgrade: the writer reads (its hold marks the context), then releases the write lock.
		dr := mustRLock(t, rw, redisson.ContextWithHold(ctx, w))
		if mode := admin.HGet(ctx, name, "mode").Val(); mode != "write" || len(readerFields(t, admin, name)) != 1 {
			t.Fatalf("%s: downgrade read: %v", name, admin.HGetAll(ctx, name).Val())
		}
		mustUnlock(t, w2)
		mustUnlock(t, w)
		if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "1" {
			t.Fatalf("%s: message %v, %v; want \"1\" for the write release", name, msg, err)
		}
		if fields := admin.HGetAll(ctx, name).Val(); fields["mode"] != "read" || len(fields) != 2 {
			t.Fatalf("%s: after the downgrade's write release %v; want mode read and the reader", name, fields)
		}
		if ok, err := j.ReadWriteLock(name).WriteLock().TryLock(ctx, 1, 0, 0); ok || err != nil {
			t.Fatalf("%s: Java writer while the downgraded reader reads: %v, %v", name, ok, err)
		}
		mustUnlock(t, dr)
		eventually(t, 5*time.Second, "no key left", func() bool { return len(dataKeysOf(t, ctx, admin)) == 0 })
	}
}

// Readers of both languages share the lock; a writer of either language excludes readers and
// writers of the other, and waits for the other language's readers; each release wakes the other
// side's waiters (the Go side's re-poll is an hour away, a Java waiter sleeps up to the 30s lease).
func TestCompatRWLockAcrossLanguages(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		c := compatClient(t, rdb(), redisson.WithRepollInterval(time.Hour))
		j := newJava(t, rdb())
		rw := c.ReadWriteLock(name)
		jrw := j.ReadWriteLock(name)
		rlockAsync := func() <-chan lockResult {
			got := make(chan lockResult, 1)
			go func() {
				h, err := rw.RLock(ctx)
				got <- lockResult{h, err}
			}()
			return got
		}
		javaAsync := func(l *javadouble.Lock, tid int64) <-chan error {
			got := make(chan error, 1)
			go func() { got <- l.Lock(ctx, tid, 0) }()
			return got
		}
		_, channel := rwNames(name)

		// Go reader + Java reader share, both ways round.
		r := mustRLock(t, rw, ctx)
		if ok, err := jrw.ReadLock().TryLock(ctx, 1, 0, 0); !ok || err != nil {
			t.Fatalf("Java reader beside a Go reader: %v, %v", ok, err)
		}
		mustUnlock(t, r)
		r = mustRLock(t, rw, ctx) // beside the Java reader
		if err := jrw.ReadLock().Unlock(ctx, 1); err != nil {
			t.Fatal(err)
		}

		// A Java writer waits for the Go reader, woken by its release.
		jw := javaAsync(jrw.WriteLock(), 2)
		awaitSubscribers(t, rdb(), channel, 1)
		mustUnlock(t, r)
		if err := recvWithin(t, jw, 10*time.Second, "the Java writer after the Go read release"); err != nil {
			t.Fatal(err)
		}
		// The Java writer excludes Go readers and writers; a Go reader waits, woken by its release.
		if _, err := rw.TryRLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
			t.Fatalf("Go TryRLock while Java writes: %v", err)
		}
		if _, err := rw.TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
			t.Fatalf("Go TryLock while Java writes: %v", err)
		}
		gr := rlockAsync()
		eventually(t, 10*time.Second, "the Go reader to wait", func() bool { return c.Stats().Waiting == 1 })
		if err := jrw.WriteLock().Unlock(ctx, 2); err != nil {
			t.Fatal(err)
		}
		res := recvWithin(t, gr, 10*time.Second, "the Go reader after the Java write release")
		if res.err != nil {
			t.Fatal(res.err)
		}

		// A Java reader in, the Go reader out; a Go writer waits for the Java reader.
		if ok, err := jrw.ReadLock().TryLock(ctx, 3, 0, 0); !ok || err != nil {
			t.Fatalf("Java reader beside a Go reader: %v, %v", ok, err)
		}
		mustUnlock(t, res.h)
		gw, cancelW := lockAsync(ctx, rw)
		defer cancelW()
		eventually(t, 10*time.Second, "the Go writer to wait", func() bool { return c.Stats().Waiting == 1 })
		if err := jrw.ReadLock().Unlock(ctx, 3); err != nil {
			t.Fatal(err)
		}
		res = recvWithin(t, gw, 10*time.Second, "the Go writer after the Java read release")
		if res.err != nil {
			t.Fatal(res.err)
		}
		// The Go writer excludes Java readers and writers; a Java reader waits, woken by its release.
		if ok, err := jrw.ReadLock().TryLock(ctx, 4, 0, 0); ok || err != nil {
			t.Fatalf("Java reader while Go writes: %v, %v", ok, err)
		}
		if ok, err := jrw.WriteLock().TryLock(ctx, 4, 0, 0); ok || err != nil {
			t.Fatalf("Java writer while Go writes: %v, %v", ok, err)
		}
		jr := javaAsync(jrw.ReadLock(), 5)
		// The write release wakes the Java readers waiting then (Redisson's READ_UNLOCK_MESSAGE).
		eventually(t, 10*time.Second, "the Java reader to wait", func() bool { return j.Waiting(channel) == 1 })
		mustUnlock(t, res.h)
		if err := recvWithin(t, jr, 10*time.Second, "the Java reader after the Go write release"); err != nil {
			t.Fatal(err)
		}
		if err := jrw.ReadLock().Unlock(ctx, 5); err != nil {
			t.Fatal(err)
		}
	})
}

// Go and Java readers and writers take the lock in turns with a shared state: never a writer beside
// anyone.
func TestCompatRWLockMutualExclusion(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		var readers, writers, bad atomic.Int32
		section := func(write bool) {
			if write {
				if writers.Add(1) > 1 || readers.Load() > 0 {
					bad.Add(1)
				}
			} else if readers.Add(1); writers.Load() > 0 {
				bad.Add(1)
			}
			time.Sleep(time.Millisecond)
			if write {
				writers.Add(-1)
			} else {
				readers.Add(-1)
			}
		}
		const rounds = 8
		var wg sync.WaitGroup
		for range 2 {
			c := compatClient(t, rdb())
			j := newJava(t, rdb())
			for i := range 2 {
				write := i == 0
				spawn(&wg, func() {
					rw := c.ReadWriteLock(name)
					for range rounds {
						var h *redisson.Hold
						var err error
						if write {
							h, err = rw.Lock(ctx)
						} else {
							h, err = rw.RLock(ctx)
						}
						if err != nil {
							t.Error(err)
							return
						}
						section(write)
						if err := h.Unlock(ctx); err != nil {
							t.Error(err)
							return
						}
					}
				})
				spawn(&wg, func() {
					tid := int64(10 + i)
					for range rounds {
						l := j.ReadWriteLock(name).ReadLock()
						if write {
							l = j.ReadWriteLock(name).WriteLock()
						}
						if err := l.Lock(ctx, tid, 0); err != nil {
							t.Error(err)
							return
						}
						section(write)
						if err := l.Unlock(ctx, tid); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
		}
		wg.Wait()
		if bad.Load() != 0 {
			t.Fatalf("%d sections with a writer beside someone", bad.Load())
		}
	})
}

// A Go ForceUnlock frees a Java writer's lock and wakes a Java reader; a Java forceUnlock frees a Go
// writer's (which is told: ErrLockLost) and wakes a Go reader.
func TestCompatRWLockForceUnlockAcrossSides(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx := t.Context()
		holder := compatClient(t, rdb(), redisson.WithWatchdogTimeout(time.Second))
		waiter := compatClient(t, rdb(), redisson.WithRepollInterval(time.Hour))
		j1, j2 := newJava(t, rdb()), newJava(t, rdb())
		_, channel := rwNames(name)

		if err := j1.ReadWriteLock(name).WriteLock().Lock(ctx, 1, 0); err != nil {
			t.Fatal(err)
		}
		jdone := make(chan error, 1)
		go func() { jdone <- j2.ReadWriteLock(name).ReadLock().Lock(ctx, 1, 0) }()
		// The force-unlock wakes the Java readers waiting then (Redisson's READ_UNLOCK_MESSAGE).
		eventually(t, 10*time.Second, "the Java reader to wait", func() bool { return j2.Waiting(channel) == 1 })
		if ok, err := waiter.ReadWriteLock(name).ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("Go ForceUnlock of a Java write hold = %v, %v", ok, err)
		}
		if err := recvWithin(t, jdone, 10*time.Second, "the Java reader after the Go ForceUnlock"); err != nil {
			t.Fatal(err)
		}
		if ok, err := j2.ReadWriteLock(name).ReadLock().ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("clean-up: %v, %v", ok, err)
		}

		h := mustLock(t, holder.ReadWriteLock(name), ctx)
		got := make(chan lockResult, 1)
		go func() {
			h, err := waiter.ReadWriteLock(name).RLock(ctx)
			got <- lockResult{h, err}
		}()
		eventually(t, 10*time.Second, "the Go reader to wait", func() bool { return waiter.Stats().Waiting == 1 })
		if ok, err := j1.ReadWriteLock(name).WriteLock().ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("Java forceUnlock of a Go write hold = %v, %v", ok, err)
		}
		servedAfterJavaForceUnlock(t, got, h, "the Go reader after the Java forceUnlock")
	})
}

// The per-side queries and forced unlocks act on their own mode across languages, as Redisson's
// readLock() and writeLock() do: a Go ForceWriteUnlock leaves Java readers alone and a Go
// ForceReadUnlock frees them (the waiting Java writer gets in), and the reverse for a Java writer;
// Java's readLock().forceUnlock() leaves a Go writer (and its own read hold) alone and
// writeLock().forceUnlock() frees it, while readLock().forceUnlock() frees a Go reader: the Go
// holders are told (ErrLockLost). Each side's isLocked agrees with the other language's.
func TestCompatRWLockSidesAcrossLanguages(t *testing.T) {
	t.Parallel()
	compatTopologies(t, func(t *testing.T, rdb func() redis.UniversalClient, name string) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		holder := compatClient(t, rdb(), redisson.WithWatchdogTimeout(time.Second))
		c := compatClient(t, rdb(), redisson.WithRepollInterval(time.Hour))
		j1, j2 := newJava(t, rdb()), newJava(t, rdb())
		rw, grw := c.ReadWriteLock(name), holder.ReadWriteLock(name)
		jr, jw := j1.ReadWriteLock(name).ReadLock(), j1.ReadWriteLock(name).WriteLock()
		_, channel := rwNames(name)
		goSides := func(what string, read, write bool) {
			t.Helper()
			r, err := rw.IsReadLocked(ctx)
			w, err2 := rw.IsWriteLocked(ctx)
			if err != nil || err2 != nil || r != read || w != write {
				t.Fatalf("%s: Go IsReadLocked %v, IsWriteLocked %v (%v, %v); want %v, %v", what, r, w, err, err2, read, write)
			}
			jrl, err := jr.IsLocked(ctx)
			jwl, err2 := jw.IsLocked(ctx)
			if err != nil || err2 != nil || jrl != read || jwl != write {
				t.Fatalf("%s: Java readLock().isLocked %v, writeLock().isLocked %v (%v, %v); want %v, %v", what, jrl, jwl, err, err2, read, write)
			}
		}
		force := func(what string, f func(context.Context) (bool, error), want bool) {
			t.Helper()
			mustForce(t, ctx, what, f, want)
		}

		// Go's per-side calls on Java holds.
		if err := jr.Lock(ctx, 1, 0); err != nil {
			t.Fatal(err)
		}
		goSides("a Java reader", true, false)
		force("Go ForceWriteUnlock of a Java read hold", rw.ForceWriteUnlock, false)
		if held, err := jr.IsHeldByThread(ctx, 1); err != nil || !held {
			t.Fatalf("after a Go ForceWriteUnlock the Java reader holds: %v, %v; want true", held, err)
		}
		jdone := make(chan error, 1)
		go func() { jdone <- j2.ReadWriteLock(name).WriteLock().Lock(ctx, 2, 0) }()
		eventually(t, 10*time.Second, "the Java writer to wait", func() bool { return j2.Waiting(channel) == 1 })
		force("Go ForceReadUnlock of a Java read hold", rw.ForceReadUnlock, true)
		if err := recvWithin(t, jdone, 10*time.Second, "the Java writer after the Go ForceReadUnlock"); err != nil {
			t.Fatal(err)
		}
		goSides("a Java writer", false, true)
		force("Go ForceReadUnlock of a Java write hold", rw.ForceReadUnlock, false)
		if held, err := j2.ReadWriteLock(name).WriteLock().IsHeldByThread(ctx, 2); err != nil || !held {
			t.Fatalf("after a Go ForceReadUnlock the Java writer holds: %v, %v; want true", held, err)
		}
		got, rcancel := rLockAsync(ctx, rw)
		defer rcancel()
		eventually(t, 10*time.Second, "the Go reader to wait", func() bool { return c.Stats().Waiting == 1 })
		forceServes(t, ctx, "Go ForceWriteUnlock of a Java write hold", rw.ForceWriteUnlock, got) // Java holders are not told

		// Java's per-side calls on Go holds.
		gr := mustRLock(t, grw, ctx)
		goSides("a Go reader", true, false)
		force("Java writeLock().forceUnlock() of a Go read hold", jw.ForceUnlock, false)
		mustLive(t, "Java writeLock().forceUnlock() of a Go read hold", gr)
		got, wcancel := lockAsync(ctx, rw)
		defer wcancel()
		eventually(t, 10*time.Second, "the Go writer to wait", func() bool { return c.Stats().Waiting == 1 })
		forceServes(t, ctx, "Java readLock().forceUnlock() of a Go read hold", jr.ForceUnlock, got, gr)

		gw := mustLock(t, grw, ctx)
		dr := mustRLock(t, grw, redisson.ContextWithHold(ctx, gw)) // the writer reads too
		goSides("a Go writer with its read hold", true, true)
		force("Java readLock().forceUnlock() of a Go write hold", jr.ForceUnlock, false)
		mustLive(t, "Java readLock().forceUnlock() of a Go write hold", gw, dr)
		got, r2cancel := rLockAsync(ctx, rw)
		defer r2cancel()
		eventually(t, 10*time.Second, "the Go reader to wait", func() bool { return c.Stats().Waiting == 1 })
		forceServes(t, ctx, "Java writeLock().forceUnlock() of a Go write hold", jw.ForceUnlock, got, gw, dr)
	})
}

// No read-to-write upgrade (a context marked with a read hold fails at once); an RLock's hash,
// another type, or a malformed read/write hash is refused with ErrWrongType and left unchanged.
func TestCompatRWLockUpgradeAndWrongType(t *testing.T) {
	t.Parallel()
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	ctx := t.Context()
	rw := c.ReadWriteLock("up")
	r := mustRLock(t, rw, ctx)
	if _, err := rw.Lock(redisson.ContextWithHold(ctx, r)); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("upgrade: %v; want refused", err)
	}
	mustUnlock(t, r)
	// Its unlock latch is deleted in the background: not while the keyspace is compared below.
	awaitUnlockLatchesGone(t, admin)

	mustDo(t, "SET", admin.Set(ctx, "str", "x", 0).Err())
	mustDo(t, "HSET", admin.HSet(ctx, "nomode", "a:1", "1").Err())
	mustDo(t, "HSET", admin.HSet(ctx, "badmode", "mode", "x", "a:1", "1").Err())
	mustDo(t, "HSET", admin.HSet(ctx, "writenowriter", "mode", "write", "a:1", "1").Err())
	lh := mustLock(t, c.Lock("rlock"), ctx)
	defer mustUnlock(t, lh)
	for _, name := range []string{"str", "nomode", "badmode", "writenowriter", "rlock"} {
		before := serverSnapshot(t, admin)
		l := c.ReadWriteLock(name)
		for what, err := range map[string]error{
			"TryRLock":     errOnly(l.TryRLock(ctx)),
			"TryLock":      errOnly(l.TryLock(ctx)),
			"IsLocked":     errOnly(l.IsLocked(ctx)),
			"RemainingTTL": errOnly(l.RemainingTTL(ctx)),
			"ForceUnlock":  errOnly(l.ForceUnlock(ctx)),
		} {
			if !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s on %q: %v; want ErrWrongType", what, name, err)
			}
		}
		if d := snapshotDiff(before, serverSnapshot(t, admin)); d != "" {
			t.Errorf("%q: changed %s", name, d)
		}
	}
	wh := mustLock(t, c.ReadWriteLock("rwmine"), ctx)
	defer mustUnlock(t, wh)
	if _, err := c.Lock("rwmine").TryLock(ctx); !errors.Is(err, redisson.ErrWrongType) {
		t.Fatalf("a compat Lock on a compat ReadWriteLock: %v; want ErrWrongType", err)
	}
}

// A read acquisition whose reply is lost is re-sent and counted once (one acquisition key); a final
// read unlock whose reply is lost, re-sent after Java readers came and went, reports the release.
func TestCompatRWLockLostReplies(t *testing.T) {
	t.Parallel()
	const name = "compat-rw-resent"
	r := newCompatLostReplyRig(t, func(ctx context.Context, c *redisson.Client) {
		mustUnlock(t, mustRLock(t, c.ReadWriteLock("warmup-rw"), ctx)) // loads the scripts
	})
	j := newJava(t, r.admin)
	ctx := t.Context()

	oneIdleConn(t, r.rdb)
	r.p.DropReplies(1)
	h, err := r.c.ReadWriteLock(name).TryRLock(ctx)
	r.p.DropReplies(0)
	if err != nil {
		t.Fatalf("TryRLock (reply lost, re-sent) = %v", err)
	}
	if n, err := h.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("HoldCount = %d, %v; want 1", n, err)
	}
	if keys := r.admin.Keys(ctx, "*rwlock_timeout*").Val(); len(keys) != 1 {
		t.Fatalf("acquisition keys %v; want one", keys)
	}
	r.finalUnlockReleasedDespiteJava(t, h, 20, func(ctx context.Context) error {
		l := j.ReadWriteLock(name).ReadLock()
		if ok, err := l.TryLock(ctx, 1, 0, 0); !ok || err != nil {
			return errors.Join(errors.New("Java tryLock failed"), err)
		}
		return l.Unlock(ctx, 1)
	})
	eventually(t, 5*time.Second, "no key left", func() bool { return len(dataKeysOf(t, ctx, r.admin)) == 0 })
}

// A ReadWriteLock's final write Unlock re-sent after a Java writer took the lock reports the loss (see
// resentFinalUnlockAfterJavaTookIt).
func TestCompatRWLockResentFinalUnlockReportsLossToJava(t *testing.T) {
	t.Parallel()
	const name = "rw-resent-final-lost"
	var j *javadouble.Client
	resentFinalUnlockAfterJavaTookIt(t,
		func(c *redisson.Client) (*redisson.Hold, error) { return c.ReadWriteLock(name).TryLock(t.Context()) },
		func(ctx context.Context, admin *redis.Client) error {
			j = newJava(t, admin)
			if ok, err := j.ReadWriteLock(name).WriteLock().ForceUnlock(ctx); !ok || err != nil {
				return errors.Join(errors.New("forceUnlock found nothing"), err)
			}
			if ok, err := j.ReadWriteLock(name).WriteLock().TryLock(ctx, 1, 0, 0); !ok || err != nil {
				return errors.Join(errors.New("tryLock failed"), err)
			}
			return nil
		},
		func(ctx context.Context, _ *redis.Client) bool {
			ok, err := j.ReadWriteLock(name).WriteLock().IsHeldByThread(ctx, 1)
			return ok && err == nil
		})
}

// A Java reader's watchdog (Redisson's ReadLockTask) sets the hash's TTL to its lockWatchdogTimeout,
// whatever the other readers' leases. A Go reader on a Client whose watchdog timeout is forty times
// as long keeps the read lock after that Java client dies (its watchdog stops): told the Java side's
// timeout (WithRedissonWatchdogTimeout), it renews at least every third of it, so the hash outlives
// the Java reader's last renewal, and writers of either language stay out.
func TestCompatRWLockGoReaderOutlivesJavaReaderWatchdog(t *testing.T) {
	t.Parallel()
	const javaWatchdog = 1500 * time.Millisecond
	c, admin, _ := setup(t, redisson.WithRedissonCompat(), redisson.WithWatchdogTimeout(time.Minute),
		redisson.WithRedissonWatchdogTimeout(javaWatchdog))
	ctx := t.Context()
	const name = "rw-java-watchdog"
	tag, _ := rwNames(name)
	j := javadouble.New(admin, javadouble.WatchdogTimeout(javaWatchdog))
	defer j.Close()
	jr := j.ReadWriteLock(name).ReadLock()
	if err := jr.Lock(ctx, 1, 0); err != nil { // the watchdog's lease, renewed every 500ms
		t.Fatal(err)
	}
	jkey := tag + ":" + j.Owner(1) + ":rwlock_timeout:1"
	r := mustRLock(t, c.ReadWriteLock(name), ctx)
	// Java's watchdog renews its reader after the Go reader came in, cutting the hash's TTL to 1.5s.
	prev := admin.PTTL(ctx, jkey).Val()
	eventually(t, 10*time.Second, "a Java renewal after the Go reader came in", func() bool {
		ttl := admin.PTTL(ctx, jkey).Val()
		renewed := ttl > prev+50*time.Millisecond // the key's TTL went up: renewed since the last look
		prev = ttl
		return renewed
	})
	j.Close() // the Java client dies: nothing renews its reader any more
	eventually(t, 10*time.Second, "the dead Java reader's lease to lapse", func() bool {
		return admin.Exists(ctx, jkey).Val() == 0
	})
	// The hash the Java watchdog cut expired with that key, unless the Go reader renewed it since.
	if admin.Exists(ctx, name).Val() == 0 {
		t.Fatalf("the read lock vanished %v after the Java reader's last renewal while the Go reader held it (its context live: %v)",
			javaWatchdog, r.Context().Err() == nil)
	}
	if r.Context().Err() != nil {
		t.Fatalf("the Go reader's hold ended: %v", context.Cause(r.Context()))
	}
	j2 := newJava(t, admin)
	if ok, err := j2.ReadWriteLock(name).WriteLock().TryLock(ctx, 1, 0, 0); ok || err != nil {
		t.Fatalf("a Java writer while the Go reader holds: %v, %v; want refused", ok, err)
	}
	if h, err := c.ReadWriteLock(name).TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		if err == nil {
			mustUnlock(t, h)
		}
		t.Fatalf("a Go writer while the Go reader holds: %v; want ErrNotObtained", err)
	}
	mustUnlock(t, r)
}

// WithRedissonWatchdogTimeout is the Java side's setting: refused without WithRedissonCompat, and
// out of range.
func TestCompatRedissonWatchdogTimeoutOption(t *testing.T) {
	t.Parallel()
	_, admin, _ := setup(t)
	for what, opts := range map[string][]redisson.Option{
		"without WithRedissonCompat": {redisson.WithRedissonWatchdogTimeout(10 * time.Second)},
		"too short":                  {redisson.WithRedissonCompat(), redisson.WithRedissonWatchdogTimeout(time.Millisecond)},
		"too long":                   {redisson.WithRedissonCompat(), redisson.WithRedissonWatchdogTimeout(365 * 24 * time.Hour)},
	} {
		if c, err := redisson.New(admin, opts...); !errors.Is(err, redisson.ErrInvalidArgument) {
			if err == nil {
				_ = c.Close()
			}
			t.Errorf("%s: New = %v; want ErrInvalidArgument", what, err)
		}
	}
}
