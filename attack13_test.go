package redisson_test

// Attack 13: the ReadWriteLock's counters nr/nww and the two fast paths that trust them (a new
// reader's acquisition in rw_acquire.lua, a reader's release among others in rw_release.lua), which
// skip rw_load and so skip both its sweep of lapsed fields and its check that the hash is ours. Each
// failing test states the scenario, the expected behaviour and what happens; tests marked PASSING are
// kept as regression tests of attacks the code withstood.

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

// a13Snapshot reads the hash at key and the server time (ms) atomically.
func a13Snapshot(t *testing.T, admin redis.Cmdable, key string) (map[string]string, int64) {
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

// a13Exp returns the number after the last "|" of a field's value (its expiry or deadline).
func a13Exp(v string) int64 {
	n, _ := strconv.ParseInt(v[strings.LastIndexByte(v, '|')+1:], 10, 64)
	return n
}

// a13Check returns what is wrong with the hash m at server time now: counters that differ from the
// field counts (absent counts as 0), or a live writer beside a live reader of another owner (no test
// here uses a vouched reader).
func a13Check(m map[string]string, now int64) string {
	var nr, nww int64
	writer := ""
	var liveReaders []string
	for f, v := range m {
		switch {
		case strings.HasPrefix(f, "r:"):
			nr++
			if a13Exp(v) > now {
				liveReaders = append(liveReaders, strings.TrimPrefix(f, "r:"))
			}
		case strings.HasPrefix(f, "ww:"):
			nww++
		case f == "w":
			if a13Exp(v) > now {
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

// Fixed (review 13; wwd, the latest waiting-writer deadline, sends the fast path to rw_load once
// every waiting writer lapsed). Was: a waiting writer whose process died keeps new readers' TryRLock out long after its waiter
// timeout, for as long as no script loads the hash (up to the fixed lease of the readers holding).
//
// Scenario: R1 (Client A) holds a read hold with a fixed lease of 30s (no renewals). A writer W
// queues behind it (rw_acquire "w", waiter timeout 300ms; done here with the script itself, as a
// client would) and its process dies: no heartbeat, no undo. Its registration lapses after 300ms.
// Then R3 (Client C) calls TryRLock.
//
// Expected: the ReadWriteLock doc: a waiter whose process died "stops blocking the others after the
// waiter timeout". No writer holds or waits; R3 is let in beside R1 (as before 9dd89da: rw_load swept
// the lapsed ww: field and rw_blocked found nobody in the way).
//
// Actual: the fast admission path of rw_acquire.lua reads nww (1: lapsed fields are counted) and
// answers "held" without loading the hash. Nothing else loads it (R1 renews nothing; the fast path
// sweeps nothing), so every TryRLock fails until R1's release 30s later. Only a script that loads the
// hash (here IsLocked's rw_state) sweeps the field and lets readers in.
// Fix: in the fast path treat nww > 0 as "maybe blocked" and fall back to rw_load (the full path)
// instead of answering blocked, or keep the earliest ww: deadline in the hash and fall back when it
// has passed.
func TestAttack13DeadWaitingWriterBlocksTryRLock(t *testing.T) {
	ctx := t.Context()
	const name = "a13-dead-writer"
	admin, c, key, deadline := a13BehindDeadWriter(t, name)
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
	m, now = a13Snapshot(t, admin, key)
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

// Fixed (review 13; the fast paths need valid counters nr/nww/wwd, which every hash of ours has).
// Was, for three of the five subtests: the fast admission path writes into a hash that is not a
// ReadWriteLock's when that hash happens to have a field "nww".
//
// Scenario: another program keeps a HASH at the lock's name, with its own fields and a field called
// "nww" (e.g. {"nww": "0", "data": "x"}). A reader calls TryRLock (or RLock with a wait).
//
// Expected: ErrWrongType, the hash left unchanged, as for any hash with a field of another shape
// (rw_load refuses it: "A hash field of another shape is an error (WRONGTYPE): not ours").
//
// Actual: rw_acquire.lua's fast path checks only w/nww/nr/seq and the owner's fields, never the rest
// of the hash: with nww "0" it adds r:<owner> and nr, changes the TTL, and reports the read hold as
// acquired; with nww "1" a waiting RLock adds wr:<owner> and seq; with nr "x" the HSET of r:<owner>
// lands and then HINCRBY fails: the hash is changed and the error is not ErrWrongType.
// Fix: take the fast path only when the hash is absent or carries a marker only this library writes
// (e.g. a format tag field such as "rwv"="1" written in every hash the scripts create, required by
// both fast paths), and have the fast path validate every value it reads or increments (nr, nww and
// seq decimal integers) before writing anything, falling back to rw_load otherwise.
func TestAttack13ForeignHashRefused(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	c := newClient(t, srv.Client(t), redisson.WithRepollInterval(50*time.Millisecond))
	ctx := t.Context()
	cases := []struct {
		name   string
		fields []any
		wait   bool
	}{
		{"only-unknown-fields", []any{"data", "x"}, false},                  // PASSING
		{"w-and-unknown-fields", []any{"w", "o:1|1|1", "data", "x"}, false}, // PASSING
		{"nww-0-and-unknown", []any{"nww", "0", "data", "x"}, false},
		{"nww-1-and-unknown-wait", []any{"nww", "1", "data", "x"}, true},
		{"nww-0-nr-not-integer", []any{"nww", "0", "nr", "x"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "a13-foreign-" + tc.name
			key := redisson.LockKeyOf(c, name)
			if err := admin.HSet(ctx, key, tc.fields...).Err(); err != nil {
				t.Fatal(err)
			}
			before := a12Fields(t, admin, key)
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
			after := a12Fields(t, admin, key)
			if fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the other program's hash was changed: %v -> %v", before, after)
			}
			if ttl := admin.PTTL(ctx, key).Val(); ttl != -1 {
				t.Errorf("the other program's hash got a TTL: %v", ttl)
			}
		})
	}
	t.Run("string", func(t *testing.T) { // PASSING
		key := redisson.LockKeyOf(c, "a13-foreign-string")
		admin.Set(ctx, key, "x", 0)
		for _, wait := range []bool{false, true} {
			var err error
			if wait {
				_, err = c.ReadWriteLock("a13-foreign-string").RLock(ctx, redisson.WithWait(200*time.Millisecond))
			} else {
				_, err = c.ReadWriteLock("a13-foreign-string").TryRLock(ctx)
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

// PASSING: the fast release skips the grant while another reader field that is counted in nr has
// lapsed; the waiting writer is let in by its next heartbeat (a third of the waiter timeout), not later.
//
// Scenario: R2 (owner of a dead process, fixed lease 400ms) and R1 (Client A, fixed lease 30s) hold
// read holds; W (Client B, waiter timeout 6s: heartbeat every 2s; re-poll 1h) waits to write. R2's
// hold lapses (its field stays: nothing loaded the hash). R1 releases: nr is 2, so the fast path
// deletes r:R1 and grants nothing although the lock is now free.
// Expected: W holds the lock within its heartbeat period plus slack (3.5s) of R1's release.
func TestAttack13FastReleaseOverLapsedReaderWriterWaitsPassing(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	a := newClient(t, srv.Client(t))
	b := newClient(t, srv.Client(t), redisson.WithWaiterTimeout(6*time.Second), redisson.WithRepollInterval(time.Hour))
	ctx := t.Context()
	const name = "a13-fast-release-lapsed"
	key := redisson.LockKeyOf(a, name)
	r1, err := a.ReadWriteLock(name).TryRLock(ctx, redisson.WithLease(30*time.Second))
	if err != nil {
		t.Fatalf("R1: %v", err)
	}
	res, err := scripts.RWAcquire.Run(ctx, admin, []string{key, key + ":a13-gone-history"},
		"a13gone:1", 400, "1", "f", "r", 5000, "").Int64Slice()
	if err != nil || res[0] != 1 {
		t.Fatalf("precondition: R2's acquisition = %v, %v", res, err)
	}
	got, cancel := lockAsync(ctx, b.ReadWriteLock(name))
	defer cancel()
	eventually(t, 5*time.Second, "W to queue", func() bool { return a12Waiter(t, admin, key, "ww:") != "" })
	m, _ := a13Snapshot(t, admin, key)
	r2exp := a13Exp(m["r:a13gone:1"])
	eventually(t, 5*time.Second, "R2's hold to lapse", func() bool {
		_, now := a13Snapshot(t, admin, key)
		return now > r2exp+2
	})
	released := time.Now()
	mustUnlock(t, r1)
	m, _ = a13Snapshot(t, admin, key)
	if _, ok := m["r:a13gone:1"]; !ok {
		t.Logf("the lapsed field was swept before R1's release (a heartbeat ran): the fast release was not exercised")
	} else if m["nr"] != "1" {
		t.Errorf("after the fast release nr = %q; want 1 (the lapsed field)", m["nr"])
	}
	if bad := a13Check(m, 0); strings.Contains(bad, "counters") {
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
		m, _ = a13Snapshot(t, admin, key)
		t.Fatalf("W still waits %v after R1's release freed the lock (heartbeat every 2s); hash %v", time.Since(released), m)
	}
}

// PASSING: re-sent copies of the fast paths count once. The fast acquisition of R2 is sent twice
// (the copy finds r:R2 and takes the full path: no second HINCRBY); R2's fast release is sent twice
// (the copy finds the field gone and answers 0 from the history); the acquisition's copy sent after
// the release answers -1. The counters equal the field counts after every step, and a writer gets the
// lock once R1 releases.
func TestAttack13ReplayedFastPathsCountOncePassing(t *testing.T) {
	srv, admin, hook, a, b := a11Setup(t)
	_ = srv
	ctx := t.Context()
	const name = "a13-replay"
	key := redisson.LockKeyOf(a, name)
	check := func(step string) {
		t.Helper()
		m, now := a13Snapshot(t, admin, key)
		if bad := a13Check(m, now); bad != "" {
			t.Errorf("%s: %s (%v)", step, bad, m)
		}
	}
	r1 := mustRLock(t, b.ReadWriteLock(name), ctx)
	hook.set(a11Acquire("", "", "r"), false)
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
	hook.set(func(args []string) bool { return a11Release(args, "ReadWriteLock", owner, "1") }, false)
	mustUnlock(t, r2)
	rel := hook.last(t)
	hook.release()
	check("R2's fast release")
	if n, err := admin.Do(ctx, rel...).Int64(); err != nil || n != 0 {
		t.Errorf("copy of R2's release = %v, %v; want 0", n, err)
	}
	check("copy of R2's release")
	if n, err := admin.Do(ctx, acq...).Int64Slice(); err != nil || n[0] != -1 {
		t.Errorf("copy of R2's acquisition after its release = %v, %v; want -1", n, err)
	}
	check("late copy of R2's acquisition")
	mustUnlock(t, r1)
	check("R1's release")
	w, err := b.ReadWriteLock(name).TryLock(ctx)
	if err != nil {
		t.Fatalf("writer after every reader released: %v (hash %v)", err, a12Fields(t, admin, key))
	}
	mustUnlock(t, w)
}

// PASSING: a random walk over the scripts themselves (rw_acquire, rw_release, rw_renew,
// rw_force_unlock, with re-sent copies), with leases of 1-20ms so that fields lapse between calls and
// lapsed fields meet the fast paths. After every call: the counters equal the field counts, no live
// writer beside a live reader of another owner, and a hash with fields has a TTL.
func TestAttack13CountersRandomWalkPassing(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	key := "{a13-walk}"
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
	hist := func(i int) string { return fmt.Sprintf("{a13-walk}h:%d", i) }
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
			s, keys, args = scripts.RWAcquire, []string{key, hist(i)}, []any{sl.owner, lease, strconv.Itoa(1 + rng.Intn(2)), mode, sl.side, 1 + rng.Intn(20), ""}
		case op < 7: // release: final, partial, or undo (no history)
			final, histMs := "1", 1000
			if rng.Intn(4) == 0 {
				final = "0"
			}
			if rng.Intn(4) == 0 {
				histMs = 0
			}
			s, keys, args = scripts.RWRelease, []string{key, hist(i)}, []any{sl.owner, strconv.Itoa(1 + rng.Intn(2)), final, sl.side, "PUBLISH", "{a13-walk}wake:", histMs, 1 + rng.Intn(20)}
			renewOwner = final == "1" && histMs > 0 && rng.Intn(2) == 0 // next acquisition: a fresh owner
		case op < 9: // renew
			what := []string{"r", "x", "ww", "wr"}[rng.Intn(4)]
			s, keys, args = scripts.RWRenew, []string{key}, []any{lease, what, sl.owner}
		default:
			if rng.Intn(3) == 0 {
				s, keys, args = scripts.RWForceUnlock, []string{key, fmt.Sprintf("{a13-walk}f:%d", ops)}, []any{"PUBLISH", "{a13-walk}wake:", 1000, 10}
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
		m, now := a13Snapshot(t, admin, key)
		if bad := a13Check(m, now); bad != "" {
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

// PASSING: a waiting RLock (as opposed to TryRLock) behind a dead writer's lapsed registration, which
// the fast path still counts in nww: the reader is queued (wr:) and its first heartbeat (a third of
// its 600ms waiter timeout; re-polls an hour apart) sweeps the field and lets it in, well within 2s.
func TestAttack13DeadWaitingWriterRLockWaiterPassing(t *testing.T) {
	ctx := t.Context()
	const name = "a13-dead-writer-waiter"
	admin, c, key, _ := a13BehindDeadWriter(t, name, redisson.WithWaiterTimeout(600*time.Millisecond), a10Slow)
	var m map[string]string
	start := time.Now()
	h, err := c.ReadWriteLock(name).RLock(ctx, redisson.WithWait(2*time.Second))
	if err != nil {
		m, _ = a13Snapshot(t, admin, key)
		t.Fatalf("RLock behind a dead writer's lapsed registration = %v after %v; hash %v", err, time.Since(start), m)
	}
	t.Logf("RLock got in after %v", time.Since(start))
	mustUnlock(t, h)
}

// PASSING: on a Cluster (SPUBLISH, keys in one slot) the fast paths: the third reader is admitted by
// the fast path (nww present), two readers leave by the fast release, the last one's full release
// grants the waiting writer by a sharded message (re-polls an hour apart); the counters are exact at
// every step.
func TestAttack13ClusterFastPathsPassing(t *testing.T) {
	cl := redistest.StartCluster(t)
	admin := cl.Client(t)
	a := newClient(t, cl.Client(t), a10Slow)
	b := newClient(t, cl.Client(t), a10Slow)
	ctx := t.Context()
	const name = "a13-cluster"
	key := redisson.LockKeyOf(a, name)
	check := func(step string) map[string]string {
		t.Helper()
		m, now := a13Snapshot(t, admin, key)
		if bad := a13Check(m, now); bad != "" {
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
	got := regressWait(t, w, 10*time.Second, "the writer, granted by the last reader's release")
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

// a13BehindDeadWriter starts a server where R1 (Client a) holds a read lock on name with a fixed 30s
// lease and a writer that died queued (one waiting attempt with a 300ms waiter timeout, then nothing)
// has lapsed; it returns an admin connection, Client c (with copts), the key and the writer's
// registration deadline (server ms).
func a13BehindDeadWriter(t *testing.T, name string, copts ...redisson.Option) (*redis.Client, *redisson.Client, string, int64) {
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
	res, err := scripts.RWAcquire.Run(ctx, admin, []string{key, key + ":a13-dead-history"},
		"a13dead:1", 30000, "1", "w", "x", 300, "").Int64Slice()
	if err != nil || res[0] > -3 || res[2] == 0 {
		t.Fatalf("precondition: the writer's waiting attempt = %v, %v; want blocked and queued", res, err)
	}
	m, _ := a13Snapshot(t, admin, key)
	deadline := a13Exp(m["ww:a13dead:1"])
	eventually(t, 5*time.Second, "the dead writer's registration to lapse", func() bool {
		_, now := a13Snapshot(t, admin, key)
		return now > deadline+5
	})
	return admin, c, key, deadline
}
