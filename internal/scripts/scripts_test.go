package scripts_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/leakcheck"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/redistest"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }

// Every script loads, and its file opens with the contract header.
func TestLoadAndHeaders(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for name, s := range scripts.All {
		if err := s.Load(t.Context(), rdb).Err(); err != nil {
			t.Errorf("%s: SCRIPT LOAD: %v", name, err)
		}
		src, err := os.ReadFile(name + ".lua")
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{"-- " + name + ".lua", "KEYS[1", "ARGV[1]", "returns", "twice"} {
			if !strings.Contains(string(src), part) {
				t.Errorf("%s.lua header lacks %q", name, part)
			}
		}
	}
}

func TestAcquireReleaseContract(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	keys := []string{"L", "{L}:ch", "{L}:rel"}
	acquire := func(owner, req, reenter string) string {
		v, err := scripts.LockAcquire.Run(ctx, rdb, keys[:1], owner, 1000, req, reenter).Int64()
		if err != nil {
			t.Fatalf("acquire(%s, %s): %v", owner, req, err)
		}
		return fmt.Sprint(v)
	}
	release := func(owner, req, undo string) string {
		v, err := scripts.LockRelease.Run(ctx, rdb, keys, owner, 1000, req, "", 2000, "PUBLISH", undo).Int64()
		if err != nil {
			t.Fatalf("release(%s, %s): %v", owner, req, err)
		}
		return fmt.Sprint(v)
	}
	// Acquire: hold count, or -3-PTTL when not acquired ("-" prefix: negative); release: remaining
	// count, 0 when fully released, -1 when not held.
	steps := []struct{ got, want string }{
		{acquire("a", "r1", "0"), "1"},
		{acquire("a", "r1", "0"), "1"}, // repeat: not counted twice
		{acquire("a", "r2", "1"), "2"},
		{acquire("b", "r3", "0")[:1], "-"}, // held by a: -3-PTTL
		{acquire("b", "r4", "1")[:1], "-"}, // re-enter only, not the owner
		{release("b", "r5", ""), "-1"},     // not the owner
		{release("a", "r6", ""), "1"},
		{release("a", "r6", ""), "1"},    // repeat of a partial release
		{release("a", "r7", "r2"), "-1"}, // undo of r2: not the last applied request
		{release("a", "r8", ""), "0"},
		{release("a", "r8", ""), "0"},    // repeat of the final release: release record
		{release("a", "r9", ""), "0"},    // any release by a released owner: the client sends none
		{acquire("b", "r10", "1"), "-1"}, // re-enter only: never takes a free lock (PTTL -2)
		{acquire("b", "r11", "0"), "1"},
		{release("a", "r8", ""), "0"}, // a's repeat, recognised while b holds: the record stays until b's release
		{release("b", "r12", ""), "0"},
		{release("b", "r12", ""), "0"},
	}
	for i, s := range steps {
		if s.got != s.want {
			t.Errorf("step %d = %s; want %s", i, s.got, s.want)
		}
	}
	if n := rdb.Exists(ctx, "L").Val(); n != 0 {
		t.Fatal("lock key left after the final release")
	}
	if v := rdb.Get(ctx, "{L}:rel").Val(); !strings.HasPrefix(v, "b|") {
		t.Fatalf("release record = %q; want b's last value", v)
	}
	if ttl := rdb.PTTL(ctx, "{L}:rel").Val(); ttl <= 0 || ttl > time.Second {
		t.Fatalf("release record TTL = %v; want the lock's remaining lease", ttl)
	}
}

func TestRenewAndForceUnlock(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	rdb.Set(ctx, "x", "o1|1|r|", 0)
	rdb.Set(ctx, "y", "o9|1|r|w", 0)
	rdb.HSet(ctx, "h", "o3", 1)
	got, err := scripts.LockRenew.Run(ctx, rdb, []string{"x", "y", "z", "h"}, 5000, "o1", "o2", "o3", "o3").Int64Slice()
	if err != nil || fmt.Sprint(got) != "[1 0 0 0]" {
		t.Fatalf("renew = %v, %v; want [1 0 0 0]", got, err)
	}
	if ttl := rdb.PTTL(ctx, "x").Val().Milliseconds(); ttl <= 4000 {
		t.Fatalf("PTTL(x) = %dms; want ≈5000", ttl)
	}
	if rdb.PTTL(ctx, "y").Val() != -1 {
		t.Fatal("renewed a lock held by another owner")
	}
	for i, want := range []int64{1, 0} {
		n, err := scripts.LockForceUnlock.Run(ctx, rdb, []string{"x", "{x}:ch"}, "PUBLISH").Int64()
		if err != nil || n != want {
			t.Fatalf("force unlock #%d = %d, %v; want %d", i, n, err, want)
		}
	}
	rdb.Set(ctx, "s", "v", 0) // a string that is not a lock
	if err := scripts.LockForceUnlock.Run(ctx, rdb, []string{"s", "{s}:ch"}, "PUBLISH").Err(); err == nil ||
		!strings.Contains(err.Error(), "WRONGTYPE") || rdb.Get(ctx, "s").Val() != "v" {
		t.Fatalf("force unlock of a string = %v; want WRONGTYPE and the value kept", err)
	}
}

// The final release publishes a wake-up only if someone failed to take the lock during the hold.
func TestReleasePublishesOnlyAfterAWaiter(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	ps := rdb.Subscribe(ctx, "{P}:ch")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // subscription confirmed
		t.Fatal(err)
	}
	keys := []string{"P", "{P}:ch", "{P}:rel"}
	run := func(s string, args ...any) {
		t.Helper()
		var err error
		if s == "acquire" {
			err = scripts.LockAcquire.Run(ctx, rdb, keys[:1], args...).Err()
		} else {
			err = scripts.LockRelease.Run(ctx, rdb, keys, args...).Err()
		}
		if err != nil {
			t.Fatalf("%s%v: %v", s, args, err)
		}
	}
	published := func() bool {
		msg, err := ps.ReceiveTimeout(ctx, 200*time.Millisecond)
		return err == nil && msg != nil
	}
	run("acquire", "a", 5000, "r1", "0")
	run("release", "a", 5000, "r2", "", 2000)
	if published() {
		t.Fatal("uncontended release published a wake-up")
	}
	run("acquire", "a", 5000, "r3", "0")
	run("acquire", "b", 5000, "r4", "0") // fails: b now waits
	run("acquire", "a", 5000, "r5", "1") // re-entry keeps the waiter mark
	run("release", "a", 5000, "r6", "", 2000)
	if published() {
		t.Fatal("partial release published a wake-up")
	}
	run("release", "a", 5000, "r7", "", 2000)
	if !published() {
		t.Fatal("final release after a failed attempt published nothing")
	}
}

// A final release with an heir and no other waiter transfers the lock; a repeat is recognised; an
// awaited lock is freed (and published) instead.
func TestReleaseTransfer(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	keys := []string{"T", "{T}:ch", "{T}:rel"}
	release := func(owner, req, heir string) int64 {
		v, err := scripts.LockRelease.Run(ctx, rdb, keys, owner, 5000, req, "", 2000, "PUBLISH", "", heir).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	scripts.LockAcquire.Run(ctx, rdb, keys[:1], "a", 5000, "r1", "0")
	if v := release("a", "r2", "b"); v != -2 {
		t.Fatalf("release with heir = %d; want -2 (transferred)", v)
	}
	if v := rdb.Get(ctx, "T").Val(); v != "b|1|r2|" {
		t.Fatalf("lock = %q; want held by b", v)
	}
	if v := release("a", "r2", "b"); v != -2 {
		t.Fatalf("repeat of the transfer = %d; want -2", v)
	}
	if v := release("a", "r3", ""); v != -1 {
		t.Fatalf("a new release by a = %d; want -1 (not held)", v)
	}
	scripts.LockAcquire.Run(ctx, rdb, keys[:1], "c", 5000, "r4", "0") // c fails: the lock is awaited
	if v := release("b", "r5", "d"); v != 0 {
		t.Fatalf("release of an awaited lock with heir = %d; want 0 (freed, not transferred)", v)
	}
	if n := rdb.Exists(ctx, "T").Val(); n != 0 {
		t.Fatal("awaited lock was not freed")
	}
}

// A waiter that claims the lock is handed it by the final release; a claimer that gives up withdraws.
func TestClaimHandOver(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	keys := []string{"C", "{C}:ch", "{C}:rel"}
	acquire := func(owner, req, starving string) int64 {
		v, err := scripts.LockAcquire.Run(ctx, rdb, keys[:1], owner, 30000, req, "0", starving).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	release := func(owner, req string) int64 {
		v, err := scripts.LockRelease.Run(ctx, rdb, keys, owner, 30000, req, "", 2000).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	acquire("a", "r1", "0")
	if v := acquire("b", "r2", "1"); v > -3 {
		t.Fatalf("claiming acquire = %d; want not acquired", v)
	}
	acquire("c", "r3", "1") // a second claim does not replace the first
	if v := rdb.Get(ctx, "C").Val(); v != "a|1|r1|b@" {
		t.Fatalf("lock = %q; want b's claim", v)
	}
	if v := release("a", "r4"); v != 0 {
		t.Fatalf("final release = %d; want 0", v)
	}
	if v, ttl := rdb.Get(ctx, "C").Val(), rdb.PTTL(ctx, "C").Val(); v != "b|1|r4|w" || ttl > 2*time.Second {
		t.Fatalf("after release: %q (ttl %v); want handed to b, reserved ≤ 2s", v, ttl)
	}
	if v := acquire("c", "r5", "1"); v > -3 {
		t.Fatal("another waiter took a lock handed to the claimer")
	}
	if v := acquire("b", "r6", "1"); v != 1 {
		t.Fatalf("claimer's acquire = %d; want 1", v)
	}
	if v, ttl := rdb.Get(ctx, "C").Val(), rdb.PTTL(ctx, "C").Val(); v != "b|1|r6|c@" || ttl < 20*time.Second {
		t.Fatalf("after the claimer took it: %q (ttl %v); want b's hold with its own lease, c's claim", v, ttl)
	}
	// c gives up: its claim is withdrawn, leaving the waiter mark.
	if v := release("c", "r7"); v != -1 {
		t.Fatalf("withdraw = %d; want -1", v)
	}
	if v := rdb.Get(ctx, "C").Val(); v != "b|1|r6|w" {
		t.Fatalf("after withdrawal: %q; want the claim replaced by the waiter mark", v)
	}
}

// The fast path frees the lock when the owner's expectation matches, and only then.
func TestReleaseFastPath(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	keys := []string{"F", "{F}:ch", "{F}:rel"}
	release := func(req, expected string) int64 {
		v, err := scripts.LockRelease.Run(ctx, rdb, keys, "a", 5000, req, expected, 2000).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	scripts.LockAcquire.Run(ctx, rdb, keys[:1], "a", 5000, "r1")
	scripts.LockAcquire.Run(ctx, rdb, keys[:1], "a", 5000, "r2", "1") // count 2
	if v := release("r3", "a|1|r1|"); v != 1 {                        // stale expectation: full script
		t.Fatalf("release with a stale expectation = %d; want 1 (count left)", v)
	}
	if v := release("r4", "a|1|r3|"); v != 0 {
		t.Fatalf("release with a matching expectation = %d; want 0", v)
	}
	if v := release("r4", "a|1|r3|"); v != 0 {
		t.Fatalf("repeat of the fast release = %d; want 0", v)
	}
	if n := rdb.Exists(ctx, "F").Val(); n != 0 {
		t.Fatal("lock not freed")
	}
}
