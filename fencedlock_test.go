package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// faultHelperFencedLoop (child role "fencedloop"): takes FencedLock name GOREDISSON_FAULT_ITERS times,
// each time appending its token to the list GOREDISSON_FAULT_LOG while holding the lock.
func faultHelperFencedLoop(t *testing.T, ctx context.Context, addr, name string) {
	rdb := faultHelperRedis(t, addr)
	l := newClient(t, rdb).FencedLock(name)
	for range faultHelperInt(t, "GOREDISSON_FAULT_ITERS") {
		h, err := l.Lock(ctx)
		if err != nil {
			t.Fatalf("Lock: %v", err)
		}
		if err := rdb.RPush(ctx, os.Getenv("GOREDISSON_FAULT_LOG"), h.Token()).Err(); err != nil {
			t.Fatalf("RPUSH: %v", err)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatalf("Unlock: %v", err)
		}
	}
	fmt.Println("FAULT-DONE")
}

// faultHelperFencedHolder (child role "fencedholder"): takes FencedLock name with the watchdog timeout
// GOREDISSON_FAULT_WATCHDOG_MS, reports its token, and, when told "write" on stdin, writes "stale"
// at GOREDISSON_FAULT_KEY with FencedSet and, without fencing, at GOREDISSON_FAULT_PLAIN, reporting
// whether the fenced write was accepted.
func faultHelperFencedHolder(t *testing.T, ctx context.Context, addr, name string, stdin *bufio.Reader) {
	wd := time.Duration(faultHelperInt(t, "GOREDISSON_FAULT_WATCHDOG_MS")) * time.Millisecond
	rdb := faultHelperRedis(t, addr)
	c := newClient(t, rdb, redisson.WithWatchdogTimeout(wd))
	h, err := c.FencedLock(name).Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	fmt.Printf("FAULT-TOKEN %d\n", h.Token())
	if line, err := stdin.ReadString('\n'); err != nil || strings.TrimSpace(line) != "write" {
		t.Fatalf("waiting for the write order: %q, %v", line, err)
	}
	// The holder does not look at its hold's context, as a careless or paused process would not.
	ok, err := c.FencedSet(ctx, os.Getenv("GOREDISSON_FAULT_KEY"), "stale", h.Token())
	if err != nil {
		t.Fatalf("FencedSet: %v", err)
	}
	if err := rdb.Set(ctx, os.Getenv("GOREDISSON_FAULT_PLAIN"), "stale", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	fmt.Printf("FAULT-WROTE %v\n", ok)
}

// Tokens strictly increase over 1,000 acquisitions shared by two processes, in the order the
// holders held the lock.
func TestFencedLockTokensIncrease(t *testing.T) {
	long(t)
	t.Parallel()
	const (
		name   = "fenced-tokens"
		logKey = "fenced-tokens-log"
		each   = 500
	)
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	var children []*faultChild
	for range 2 {
		children = append(children, faultStartChild(t, "fencedloop",
			"GOREDISSON_FAULT_ADDR="+srv.Addr(), "GOREDISSON_FAULT_LOCK="+name,
			"GOREDISSON_FAULT_LOG="+logKey, "GOREDISSON_FAULT_ITERS="+strconv.Itoa(each)))
	}
	for _, ch := range children {
		ch.expect(t, "FAULT-DONE", 60*time.Second)
		ch.wait(t, 30*time.Second)
	}
	tokens, err := admin.LRange(ctx, logKey, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 2*each {
		t.Fatalf("%d acquisitions logged; want %d", len(tokens), 2*each)
	}
	prev := int64(0)
	for i, s := range tokens {
		tok, err := strconv.ParseInt(s, 10, 64)
		if err != nil || tok <= prev {
			t.Fatalf("token %d = %q after %d: not strictly increasing", i, s, prev)
		}
		prev = tok
	}
}

// A holder stopped (SIGSTOP) past its lease loses the lock to another process, which writes with a
// newer token; when it resumes, its write, made without noticing the loss, is refused by the fenced
// resource. The same write to an unfenced key shows what would have been lost.
func TestFencedLockStaleHolderRefused(t *testing.T) {
	long(t)
	t.Parallel()
	const (
		name     = "fenced-pause"
		fenced   = "fenced-pause-value"
		plain    = "fenced-pause-plain"
		watchdog = 600 * time.Millisecond
	)
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	child := faultStartChild(t, "fencedholder",
		"GOREDISSON_FAULT_ADDR="+srv.Addr(), "GOREDISSON_FAULT_LOCK="+name,
		"GOREDISSON_FAULT_KEY="+fenced, "GOREDISSON_FAULT_PLAIN="+plain,
		"GOREDISSON_FAULT_WATCHDOG_MS="+strconv.Itoa(int(watchdog.Milliseconds())))
	staleToken, _ := strconv.ParseInt(strings.Fields(child.expect(t, "FAULT-TOKEN", 30*time.Second))[1], 10, 64)

	if err := syscall.Kill(child.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP: %v", err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = syscall.Kill(child.cmd.Process.Pid, syscall.SIGCONT)
		}
	})
	// Its lease runs out while it is stopped; this process takes the lock and writes.
	c := newClient(t, srv.Client(t))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	h, err := c.FencedLock(name).Lock(wctx)
	if err != nil {
		t.Fatalf("Lock after the holder was stopped: %v", err)
	}
	if h.Token() <= staleToken {
		t.Fatalf("new token %d is not newer than the stopped holder's %d", h.Token(), staleToken)
	}
	if ok, err := c.FencedSet(ctx, fenced, "fresh", h.Token()); err != nil || !ok {
		t.Fatalf("FencedSet by the new holder = %v, %v", ok, err)
	}
	if err := admin.Set(ctx, plain, "fresh", 0).Err(); err != nil {
		t.Fatal(err)
	}

	// The stopped holder resumes and writes as if it still held the lock.
	if err := syscall.Kill(child.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT: %v", err)
	}
	resumed = true
	if _, err := io.WriteString(child.stdin, "write\n"); err != nil {
		t.Fatal(err)
	}
	if line := child.expect(t, "FAULT-WROTE", 30*time.Second); line != "FAULT-WROTE false" {
		t.Fatalf("the stale holder's fenced write: %q; want refused", line)
	}
	child.wait(t, 30*time.Second)
	value, token, err := c.FencedGet(ctx, fenced)
	if err != nil || value != "fresh" || token != h.Token() {
		t.Fatalf("fenced value = %q (token %d), %v; want the new holder's %q (token %d)", value, token, err, "fresh", h.Token())
	}
	lost := admin.Get(ctx, plain).Val()
	t.Logf("without the token the stale holder (token %d) would have overwritten the new holder's write "+
		"(token %d): the unfenced key now holds %q", staleToken, h.Token(), lost)
	if lost != "stale" {
		t.Fatalf("control: the unfenced key holds %q; want the stale write there (the test would prove nothing)", lost)
	}
	mustUnlock(t, h)
}

// FencedSet: bad input, wrong type, and writes with older tokens refused.
func TestFencedSet(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	for range 2 { // the same token twice (a re-send) is accepted both times
		if ok, err := c.FencedSet(ctx, "res", "v", 5); err != nil || !ok {
			t.Fatalf("FencedSet(token 5) = %v, %v; want accepted", ok, err)
		}
	}
	if ok, err := c.FencedSet(ctx, "res", "older", 4); err != nil || ok {
		t.Fatalf("FencedSet with an older token = %v, %v; want refused", ok, err)
	}
	if ok, err := c.FencedSet(ctx, "res", "newer", 9); err != nil || !ok {
		t.Fatalf("FencedSet with a newer token = %v, %v; want accepted", ok, err)
	}
	if v, tok, err := c.FencedGet(ctx, "res"); err != nil || v != "newer" || tok != 9 {
		t.Fatalf("FencedGet = %q, %d, %v; want newer, 9", v, tok, err)
	}
	if _, err := c.FencedSet(ctx, "res", "v", -1); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("negative token: %v; want ErrInvalidArgument", err)
	}
	if _, err := c.FencedSet(ctx, "", "v", 1); !errors.Is(err, redisson.ErrInvalidArgument) {
		t.Fatalf("empty key: %v; want ErrInvalidArgument", err)
	}
	rdb.Set(ctx, "str", "x", 0)
	if _, err := c.FencedSet(ctx, "str", "v", 1); !errors.Is(err, redisson.ErrWrongType) || rdb.Get(ctx, "str").Val() != "x" {
		t.Fatalf("FencedSet on a string = %v; want ErrWrongType and the string untouched", err)
	}
	if v, tok, err := c.FencedGet(ctx, "absent"); err != nil || v != "" || tok != 0 {
		t.Fatalf("FencedGet of nothing = %q, %d, %v", v, tok, err)
	}
}

// A re-entry keeps the holder's token; every fresh acquisition gets a newer one.
func TestFencedLockReentryKeepsToken(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	l := c.FencedLock("fenced-reentry")
	h := mustLock(t, l, ctx)
	inner, err := h.Reenter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Token() == 0 || inner.Token() != h.Token() {
		t.Fatalf("tokens %d and %d; want one non-zero token for both levels", h.Token(), inner.Token())
	}
	marked, err := l.TryLock(redisson.ContextWithHold(ctx, h))
	if err != nil || marked.Token() != h.Token() {
		t.Fatalf("re-entry through a marked context: %v, token %d; want %d", err, marked.Token(), h.Token())
	}
	mustUnlock(t, marked)
	mustUnlock(t, inner)
	mustUnlock(t, h)
	h2 := mustLock(t, l, ctx)
	if h2.Token() <= h.Token() {
		t.Fatalf("next acquisition's token %d; want more than %d", h2.Token(), h.Token())
	}
	mustUnlock(t, h2)
	if plain := mustLock(t, c.Lock("plain-token"), ctx); plain.Token() != 0 {
		t.Fatalf("a Lock's token = %d; want 0", plain.Token())
	} else {
		mustUnlock(t, plain)
	}
}

// A master that may evict any key (allkeys-*) could evict the fencing counter, after which tokens
// start again from 1: a FencedLock refuses to be acquired there (ErrNotObtained, ErrEvicting), the
// Client reports the master in Stats and CheckEviction; under noeviction all is well again. A plain
// Lock is not refused (the warning and CheckEviction say what the risk is).
func TestFencedLockRefusedOnEvictingServer(t *testing.T) {
	c, rdb, _ := setup(t)
	ctx := t.Context()
	if err := c.CheckEviction(ctx); err != nil {
		t.Fatalf("CheckEviction under noeviction = %v; want nil", err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckEviction(ctx); !errors.Is(err, redisson.ErrEvicting) || !strings.Contains(err.Error(), "allkeys-lru") {
		t.Fatalf("CheckEviction under allkeys-lru = %v; want ErrEvicting naming the policy", err)
	}
	// A new Client learns the policy when it is created (its background check) or at the first
	// FencedLock acquisition, whichever comes first.
	c2 := newClient(t, rdb)
	_, err := c2.FencedLock("evicted-tokens").TryLock(ctx)
	if !errors.Is(err, redisson.ErrNotObtained) || !errors.Is(err, redisson.ErrEvicting) {
		t.Fatalf("FencedLock.TryLock on an allkeys-lru master = %v; want ErrNotObtained and ErrEvicting", err)
	}
	if s := c2.Stats(); s.Evicting != 1 {
		t.Fatalf("Stats.Evicting = %d; want 1", s.Evicting)
	}
	h, err := c2.Lock("evicted-tokens-plain").TryLock(ctx)
	if err != nil {
		t.Fatalf("Lock.TryLock on an allkeys-lru master = %v; want it held (not refused)", err)
	}
	mustUnlock(t, h)
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckEviction(ctx); !errors.Is(err, redisson.ErrEvicting) {
		t.Fatalf("CheckEviction under volatile-lru = %v; want ErrEvicting", err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	c3 := newClient(t, rdb)
	h, err = c3.FencedLock("evicted-tokens").TryLock(ctx)
	if err != nil {
		t.Fatalf("FencedLock.TryLock under noeviction = %v", err)
	}
	mustUnlock(t, h)
}

// TestFencedSetAfterCloseReturnsErrClosed checks Client.Close's "Every later call returns
// ErrClosed." for FencedSet and FencedGet: after Close they must neither write nor read through
// rdb (a service that closes its Client on shutdown must not go on writing fenced values).
func TestFencedSetAfterCloseReturnsErrClosed(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	c := newClient(t, srv.Client(t))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ok, err := c.FencedSet(ctx, "fenced-after-close", "v", 1)
	if !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("FencedSet after Close = %v, %v; want ErrClosed", ok, err)
	}
	if _, _, err := c.FencedGet(ctx, "fenced-after-close"); !errors.Is(err, redisson.ErrClosed) {
		t.Errorf("FencedGet after Close = %v; want ErrClosed", err)
	}
}
