package redisson_test

// The ReadWriteLock's counters (nr, nww, wwd) and the two fast paths that trust them: a new reader's
// acquisition in rw_acquire.lua and a reader's release among others in rw_release.lua, which skip
// rw_load's sweep of lapsed fields and its check that the hash is the lock's.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/redistest"
)

// rwSnapshot reads the hash at key and the server time (ms) atomically.
func rwSnapshot(t *testing.T, admin redis.Cmdable, key string) (map[string]string, int64) {
	t.Helper()
	res, err := admin.Eval(context.Background(),
		"local t = redis.call('TIME') return {t[1], t[2], redis.call('HGETALL', KEYS[1])}", []string{key}).Slice()
	if err != nil {
		t.Fatalf("snapshot of %s: %v", key, err)
	}
	sec, _ := strconv.ParseInt(res[0].(string), 10, 64)
	usec, _ := strconv.ParseInt(res[1].(string), 10, 64)
	flat := res[2].([]any)
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		m[flat[i].(string)] = flat[i+1].(string)
	}
	return m, sec*1000 + usec/1000
}

// fieldDeadline returns the number after the last "|" of a field's value (its expiry or deadline).
func fieldDeadline(v string) int64 {
	n, _ := strconv.ParseInt(v[strings.LastIndexByte(v, '|')+1:], 10, 64)
	return n
}

// rwCountersCheck returns what is wrong with the hash m at server time now: counters that differ from the
// field counts (absent counts as 0), or a live writer beside a live reader of another owner (no test
// here uses a vouched reader).
func rwCountersCheck(m map[string]string, now int64) string {
	var nr, nww int64
	writer := ""
	var liveReaders []string
	for f, v := range m {
		switch {
		case strings.HasPrefix(f, "r:"):
			nr++
			if fieldDeadline(v) > now {
				liveReaders = append(liveReaders, strings.TrimPrefix(f, "r:"))
			}
		case strings.HasPrefix(f, "ww:"):
			nww++
		case f == "w":
			if fieldDeadline(v) > now {
				writer = v[:strings.IndexByte(v, '|')]
			}
		}
	}
	cnt := func(f string) int64 {
		n, _ := strconv.ParseInt(m[f], 10, 64)
		return n
	}
	var bad []string
	if cnt("nr") != nr || cnt("nww") != nww {
		bad = append(bad, fmt.Sprintf("counters nr=%q nww=%q but %d r: and %d ww: fields", m["nr"], m["nww"], nr, nww))
	}
	if writer != "" {
		for _, r := range liveReaders {
			if r != writer {
				bad = append(bad, fmt.Sprintf("live writer %s beside live reader %s", writer, r))
			}
		}
	}
	return strings.Join(bad, "; ")
}

// A waiting writer whose process died stops keeping new readers out after its waiter timeout, even
// when no script loads the hash: ReadWriteLock promises that a waiter whose process died "stops
// blocking the others after the waiter timeout", so the fast admission path must not trust a count
// of waiting writers whose registrations have all lapsed (wwd, the latest waiting-writer deadline,
// sends it to rw_load, which sweeps them).
//
// Scenario: R1 holds a read hold with a fixed lease of 30s (no renewals); a writer queues behind it
// with a 300ms waiter timeout and dies (no heartbeat, no undo). Once its registration has lapsed,
// TryRLock of another Client succeeds within a second.
func TestReadWriteLockDeadWaitingWriterStopsBlockingTryRLock(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const name = "rw-dead-writer"
	admin, c, key, deadline := rwBehindDeadWriter(t, name)
	var m map[string]string
	var now int64

	// Give R3 a generous second, many attempts: one should do.
	var lastErr error
	var got *redisson.Hold
	limit := time.Now().Add(time.Second)
	for attempts := 0; time.Now().Before(limit); attempts++ {
		got, lastErr = c.ReadWriteLock(name).TryRLock(ctx)
		if lastErr == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != nil {
		_ = got.Unlock(ctx)
		return
	}
	m, now = rwSnapshot(t, admin, key)
	t.Errorf("TryRLock refused (%v) %dms after the only waiting writer's registration lapsed, with only readers holding; hash %v",
		lastErr, now-deadline, m)
	// The mechanism: a script that loads the hash sweeps the field, and readers get in.
	if _, err := c.ReadWriteLock(name).IsLocked(ctx); err != nil {
		t.Fatalf("IsLocked: %v", err)
	}
	if h, err := c.ReadWriteLock(name).TryRLock(ctx); err != nil {
		t.Logf("even after a sweep TryRLock = %v", err)
	} else {
		t.Logf("after IsLocked (rw_state swept the lapsed ww: field) TryRLock succeeds")
		_ = h.Unlock(ctx)
	}
}

// TryRLock (with or without a wait) on another program's HASH at the lock's name fails with
// ErrWrongType and leaves the hash unchanged and without a TTL, also when the hash has fields named
// as the lock's counters ("nww", "nr"): the fast admission path must not write into a hash that is
// not a ReadWriteLock's (rw_load refuses any field of another shape). A STRING at the name is
// refused the same way.
func TestReadWriteLockForeignHashRefused(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t), redisson.WithRepollInterval(50*time.Millisecond))
	ctx := t.Context()
	cases := []struct {
		name   string
		fields []any
		wait   bool
	}{
		{"only-unknown-fields", []any{"data", "x"}, false},
		{"w-and-unknown-fields", []any{"w", "o:1|1|1", "data", "x"}, false},
		{"nww-0-and-unknown", []any{"nww", "0", "data", "x"}, false},
		{"nww-1-and-unknown-wait", []any{"nww", "1", "data", "x"}, true},
		{"nww-0-nr-not-integer", []any{"nww", "0", "nr", "x"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "rw-foreign-" + tc.name
			key := redisson.LockKeyOf(c, name)
			if err := admin.HSet(ctx, key, tc.fields...).Err(); err != nil {
				t.Fatal(err)
			}
			before := rwFields(t, admin, key)
			var h *redisson.Hold
			var err error
			if tc.wait {
				h, err = c.ReadWriteLock(name).TryRLock(ctx, redisson.WithWait(300*time.Millisecond))
			} else {
				h, err = c.ReadWriteLock(name).TryRLock(ctx)
			}
			if h != nil {
				t.Errorf("a read hold acquired on another program's hash %v", before)
				_ = h.Unlock(ctx)
			}
			if !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("TryRLock on %v = %v; want ErrWrongType", before, err)
			}
			after := rwFields(t, admin, key)
			if fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the other program's hash was changed: %v -> %v", before, after)
			}
			if ttl := admin.PTTL(ctx, key).Val(); ttl != -1 {
				t.Errorf("the other program's hash got a TTL: %v", ttl)
			}
		})
	}
	t.Run("string", func(t *testing.T) {
		key := redisson.LockKeyOf(c, "rw-foreign-string")
		admin.Set(ctx, key, "x", 0)
		for _, wait := range []bool{false, true} {
			var err error
			if wait {
				_, err = c.ReadWriteLock("rw-foreign-string").RLock(ctx, redisson.WithWait(200*time.Millisecond))
			} else {
				_, err = c.ReadWriteLock("rw-foreign-string").TryRLock(ctx)
			}
			if !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("RLock (wait %v) on a string = %v; want ErrWrongType", wait, err)
			}
		}
		if v := admin.Get(ctx, key).Val(); v != "x" || admin.PTTL(ctx, key).Val() != -1 {
			t.Errorf("the string was changed: %q", v)
		}
	})
}

// The fast release skips the grant while another reader's field counted in nr has lapsed; the
// waiting writer is then let in by its next heartbeat (a third of the waiter timeout), not later.
//
// Scenario: R2 (the owner of a dead process, fixed lease 400ms) and R1 (Client A, fixed lease 30s)
// hold read holds; W (Client B, waiter timeout 6s: a heartbeat every 2s; re-polls an hour apart)
// waits to write. R2's hold lapses (its field stays: nothing loaded the hash). R1 releases: nr is
// 2, so the fast path deletes R1's field and grants nothing although the lock is now free. W holds
// the lock within 3.5s of R1's release.
func TestReadWriteLockFastReleaseOverLapsedReaderWakesWriter(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	a := newClient(t, srv.Client(t))
	b := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(6*time.Second), redisson.WithRepollInterval(time.Hour))
	ctx := t.Context()
	const name = "rw-fast-release-lapsed"
	key := redisson.LockKeyOf(a, name)
	r1, err := a.ReadWriteLock(name).TryRLock(ctx, redisson.WithLease(30*time.Second))
	if err != nil {
		t.Fatalf("R1: %v", err)
	}
	res, err := scripts.RWAcquire.Run(ctx, admin, []string{key},
		"gone:1", 400, "1", "f", "r", 5000, "").Int64Slice()
	if err != nil || res[0] != 1 {
		t.Fatalf("precondition: R2's acquisition = %v, %v", res, err)
	}
	got, cancel := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancel()
	eventually(t, 5*time.Second, "W to queue", func() bool { return rwWaiter(t, admin, key, "ww:") != "" })
	m, _ := rwSnapshot(t, admin, key)
	r2exp := fieldDeadline(m["r:gone:1"])
	eventually(t, 5*time.Second, "R2's hold to lapse", func() bool {
		_, now := rwSnapshot(t, admin, key)
		return now > r2exp+2
	})
	released := time.Now()
	mustUnlock(t, r1)
	m, _ = rwSnapshot(t, admin, key)
	if _, ok := m["r:gone:1"]; !ok {
		t.Logf("the lapsed field was swept before R1's release (a heartbeat ran): the fast release was not exercised")
	} else if m["nr"] != "1" {
		t.Errorf("after the fast release nr = %q; want 1 (the lapsed field)", m["nr"])
	}
	if bad := rwCountersCheck(m, 0); strings.Contains(bad, "counters") {
		t.Errorf("after R1's release: %s (%v)", bad, m)
	}
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("W = %v", r.err)
		}
		t.Logf("W got the lock %v after R1's release", time.Since(released))
		mustUnlock(t, r.h)
	case <-time.After(3500 * time.Millisecond):
		m, _ = rwSnapshot(t, admin, key)
		t.Fatalf("W still waits %v after R1's release freed the lock (heartbeat every 2s); hash %v", time.Since(released), m)
	}
}

// Re-sent copies of the fast paths count once. The fast acquisition of R2 is sent twice (the copy
// finds R2's field and takes the full path: no second increment); R2's fast release is sent twice
// (the copy finds the field gone and answers -1, which the client reads as released when it answers
// a re-send: see releaseFinal in hold.go). The counters equal the field counts after every step, and a writer gets
// the lock once R1 releases.
func TestReadWriteLockReplayedFastPathsCountOnce(t *testing.T) {
	srv, admin, hook, a, b := hookedSetup(t)
	_ = srv
	ctx := t.Context()
	const name = "rw-replay"
	key := redisson.LockKeyOf(a, name)
	check := func(step string) {
		t.Helper()
		m, now := rwSnapshot(t, admin, key)
		if bad := rwCountersCheck(m, now); bad != "" {
			t.Errorf("%s: %s (%v)", step, bad, m)
		}
	}
	r1 := mustRLock(t, b.ReadWriteLock(name), ctx)
	hook.set(rwAcquireCall("", "", "r"), false)
	r2, err := a.ReadWriteLock(name).TryRLock(ctx)
	if err != nil {
		t.Fatalf("R2: %v", err)
	}
	acq := hook.last(t)
	hook.release()
	check("R2 admitted")
	if n, err := admin.Do(ctx, acq...).Int64Slice(); err != nil || n[0] != 1 {
		t.Errorf("copy of R2's acquisition = %v, %v; want 1 (its hold, one level)", n, err)
	}
	check("copy of R2's acquisition")
	owner := redisson.OwnerOf(r2)
	hook.set(func(args []string) bool { return releaseCall(args, "ReadWriteLock", owner, "1") }, false)
	mustUnlock(t, r2)
	rel := hook.last(t)
	hook.release()
	check("R2's fast release")
	if n, err := admin.Do(ctx, rel...).Int64(); err != nil || n != -1 {
		t.Errorf("copy of R2's release = %v, %v; want -1 (the owner is gone)", n, err)
	}
	check("copy of R2's release")
	mustUnlock(t, r1)
	check("R1's release")
	w, err := b.ReadWriteLock(name).TryLock(ctx)
	if err != nil {
		t.Fatalf("writer after every reader released: %v (hash %v)", err, rwFields(t, admin, key))
	}
	mustUnlock(t, w)
}

// A random walk over the scripts themselves (rw_acquire, rw_release, rw_renew, rw_force_unlock, and
// re-sent copies), with leases of 1-20ms so that fields lapse between calls and lapsed fields meet
// the fast paths. After every call: the counters equal the field counts, no live writer is beside a
// live reader of another owner, and a hash with fields has a TTL.
func TestReadWriteLockCountersRandomWalk(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	key := "rw-walk"
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	type slot struct {
		owner, side string
		gen         int
	}
	slots := make([]*slot, 8)
	for i := range slots {
		side := "r"
		if i%3 == 2 {
			side = "x"
		}
		slots[i] = &slot{side: side}
		slots[i].owner = fmt.Sprintf("c%d:%d", i, 0)
	}
	var last struct {
		s    *redis.Script
		keys []string
		args []any
	}
	deadline := time.Now().Add(4 * time.Second)
	ops := 0
	for ; ops < 4000 && time.Now().Before(deadline); ops++ {
		i := rng.Intn(len(slots))
		sl := slots[i]
		var s *redis.Script
		var keys []string
		var args []any
		renewOwner := false
		lease := 1 + rng.Intn(20)
		switch op := rng.Intn(10); {
		case op < 4: // acquire
			mode := []string{"f", "w", "r"}[rng.Intn(3)]
			s, keys, args = scripts.RWAcquire, []string{key}, []any{sl.owner, lease, strconv.Itoa(1 + rng.Intn(2)), mode, sl.side, 1 + rng.Intn(20), ""}
		case op < 7: // release: final (or undo), or partial
			final := "1"
			if rng.Intn(4) == 0 {
				final = "0"
			}
			s, keys, args = scripts.RWRelease, []string{key}, []any{sl.owner, strconv.Itoa(1 + rng.Intn(2)), final, sl.side, "PUBLISH", "{rw-walk}wake:", 1 + rng.Intn(20)}
			renewOwner = final == "1" && rng.Intn(2) == 0 // next acquisition: a fresh owner
		case op < 9: // renew
			what := []string{"r", "x", "ww", "wr"}[rng.Intn(4)]
			s, keys, args = scripts.RWRenew, []string{key}, []any{lease, what, sl.owner}
		default:
			if rng.Intn(3) == 0 {
				s, keys, args = scripts.RWForceUnlock, []string{key}, []any{"PUBLISH", "{rw-walk}wake:", 10}
			} else if last.s != nil { // a re-sent copy of the previous call
				s, keys, args = last.s, last.keys, last.args
			} else {
				continue
			}
		}
		if err := s.Run(ctx, admin, keys, args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("op %d: %v %v: %v", ops, keys, args, err)
		}
		last.s, last.keys, last.args = s, keys, args
		if renewOwner {
			sl.gen++
			sl.owner = fmt.Sprintf("c%d:%d", i, sl.gen)
		}
		m, now := rwSnapshot(t, admin, key)
		if bad := rwCountersCheck(m, now); bad != "" {
			t.Fatalf("op %d (%v %v): %s; hash %v", ops, keys, args, bad, m)
		}
		if len(m) > 0 {
			if ttl := admin.PTTL(ctx, key).Val(); ttl == -1 {
				t.Fatalf("op %d (%v): the hash %v has no TTL", ops, args, m)
			}
		}
	}
	t.Logf("%d calls", ops)
}

// A waiting RLock (rather than TryRLock) behind a dead writer's lapsed registration, which the fast
// path still counts in nww: the reader is queued, and its first heartbeat (a third of its 600ms
// waiter timeout; re-polls an hour apart) sweeps the field and lets it in, well within 2s.
func TestReadWriteLockRLockWaiterBehindDeadWriterEnters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const name = "rw-dead-writer-waiter"
	admin, c, key, _ := rwBehindDeadWriter(t, name, redisson.WithWaiterTimeout(600*time.Millisecond), wakeOnlyByMessages)
	var m map[string]string
	start := time.Now()
	h, err := c.ReadWriteLock(name).RLock(ctx, redisson.WithWait(2*time.Second))
	if err != nil {
		m, _ = rwSnapshot(t, admin, key)
		t.Fatalf("RLock behind a dead writer's lapsed registration = %v after %v; hash %v", err, time.Since(start), m)
	}
	t.Logf("RLock got in after %v", time.Since(start))
	mustUnlock(t, h)
}

// The fast paths on a Cluster (SPUBLISH, keys in one slot): the third reader is admitted by the
// fast path (nww present), two readers leave by the fast release, and the last one's full release
// grants the waiting writer by a sharded message (re-polls an hour apart); the counters are exact
// at every step, and no reader gets in beside the writer.
func TestReadWriteLockClusterFastPaths(t *testing.T) {
	long(t)
	t.Parallel()
	cl := redistest.StartCluster(t)
	admin := cl.Client(t)
	a := newClient(t, cl.Client(t), wakeOnlyByMessages)
	b := newClient(t, cl.Client(t), wakeOnlyByMessages)
	ctx := t.Context()
	const name = "rw-cluster"
	key := redisson.LockKeyOf(a, name)
	check := func(step string) map[string]string {
		t.Helper()
		m, now := rwSnapshot(t, admin, key)
		if bad := rwCountersCheck(m, now); bad != "" {
			t.Errorf("%s: %s (%v)", step, bad, m)
		}
		return m
	}
	r1 := mustRLock(t, a.ReadWriteLock(name), ctx)
	r2 := mustRLock(t, b.ReadWriteLock(name), ctx)
	if m := check("two readers"); m["nww"] == "" {
		t.Fatalf("precondition: no nww after the second reader: %v", m)
	}
	r3 := mustRLock(t, a.ReadWriteLock(name), ctx)
	check("three readers")
	w, cancelW := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancelW()
	eventually(t, 10*time.Second, "the writer to wait", func() bool { return b.Stats().Waiting == 1 })
	check("writer waiting")
	mustUnlock(t, r1)
	mustUnlock(t, r2)
	if m := check("two fast releases"); m["nr"] != "1" {
		t.Errorf("nr after two releases = %q; want 1 (%v)", m["nr"], m)
	}
	mustUnlock(t, r3)
	got := recvWithin(t, w, 10*time.Second, "the writer, granted by the last reader's release")
	if got.err != nil {
		t.Fatal(got.err)
	}
	check("writer holds")
	if h, err := a.ReadWriteLock(name).TryRLock(ctx); err == nil {
		_ = h.Unlock(ctx)
		t.Errorf("a reader got in beside the writer")
	}
	mustUnlock(t, got.h)
}

// rwBehindDeadWriter starts a server where R1 (Client a) holds a read lock on name with a fixed 30s
// lease and a writer that died queued (one waiting attempt with a 300ms waiter timeout, then nothing)
// has lapsed; it returns an admin connection, Client c (with copts), the key and the writer's
// registration deadline (server ms).
func rwBehindDeadWriter(t *testing.T, name string, copts ...redisson.Option) (*redis.Client, *redisson.Client, string, int64) {
	t.Helper()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	a := newClient(t, srv.Client(t))
	c := newClient(t, srv.Client(t), copts...)
	ctx := t.Context()
	key := redisson.LockKeyOf(a, name)
	r1, err := a.ReadWriteLock(name).TryRLock(ctx, redisson.WithLease(30*time.Second))
	if err != nil {
		t.Fatalf("R1 TryRLock: %v", err)
	}
	t.Cleanup(func() { _ = r1.Unlock(context.Background()) })
	// The dead writer: one waiting attempt (as lock.go sends it), then nothing.
	res, err := scripts.RWAcquire.Run(ctx, admin, []string{key},
		"dead:1", 30000, "1", "w", "x", 300, "").Int64Slice()
	if err != nil || res[0] > -3 || res[2] == 0 {
		t.Fatalf("precondition: the writer's waiting attempt = %v, %v; want blocked and queued", res, err)
	}
	m, _ := rwSnapshot(t, admin, key)
	deadline := fieldDeadline(m["ww:dead:1"])
	eventually(t, 5*time.Second, "the dead writer's registration to lapse", func() bool {
		_, now := rwSnapshot(t, admin, key)
		return now > deadline+5
	})
	return admin, c, key, deadline
}
