package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/javadouble"
)

// hostname is os.Hostname, failing the test on an error.
func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// awaitProcessRecord makes c acquire (and release) a lock, then waits until Inspect names c's
// process: its process record is written.
func awaitProcessRecord(t *testing.T, c *redisson.Client) {
	t.Helper()
	ctx := t.Context()
	h, err := c.Lock("record-probe").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unlock(ctx)
	waitFor(t, 10*time.Second, "the process record", func() bool {
		in, err := c.Inspect(ctx, "record-probe")
		return err == nil && len(in.Holders) == 1 && in.Holders[0].Process != nil
	})
}

// inspect --json prints a held lock's kind, holder and hold count, and a semaphore's permits and
// leases.
func TestInspectJSON(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	ctx := t.Context()
	h, err := c.FencedLock("held").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unlock(ctx)
	r, err := h.Reenter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(ctx)
	var got jsonInspection
	code, stdout, stderr := runCLI(t, srv, "inspect", "--json", "held")
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil {
		t.Fatalf("exit %d, stdout %q (%s)", code, stdout, stderr)
	}
	if got.Kind != "fenced lock" || len(got.Holders) != 1 || got.Holders[0].Levels != 2 || got.Holders[0].Token != h.Token() ||
		got.FencingToken != h.Token() || got.TTLMs <= 0 || got.Holders[0].RemainingMs <= 0 {
		t.Fatalf("inspect --json held = %s", stdout)
	}

	p := c.PermitExpirableSemaphore("pool")
	if _, err := p.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	ids, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	got = jsonInspection{}
	code, stdout, stderr = runCLI(t, srv, "inspect", "--json", "pool")
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil {
		t.Fatalf("exit %d, stdout %q (%s)", code, stdout, stderr)
	}
	if got.Kind != "permit semaphore" || got.Value != 2 || len(got.Leases) != 1 || got.Leases[0].ID != ids[0] ||
		got.Leases[0].RemainingMs <= 0 || got.Leases[0].RemainingMs > 60000 {
		t.Fatalf("inspect --json pool = %s", stdout)
	}

	got = jsonInspection{}
	if code, stdout, _ = runCLI(t, srv, "inspect", "--json", "nothing"); code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || got.Kind != "none" {
		t.Fatalf("inspect --json nothing: exit %d, %s", code, stdout)
	}
	if code, stdout, _ = runCLI(t, srv, "inspect", "held"); code != 0 || !strings.Contains(stdout, "kind:     fenced lock") ||
		!strings.Contains(stdout, "2 level(s)") {
		t.Fatalf("inspect held: exit %d, %s", code, stdout)
	}
}

// inspect names the holding process: a redisson lock's (its host, pid and program, how long ago it
// took the lock), in both layouts, in text and JSON; with --no-process-record only its client id
// and time, and no record is written; a Java Redisson holder by its client UUID and thread id.
func TestInspectNamesTheHolder(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	ctx := t.Context()
	host := hostname(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"who", nil},
		{"who-compat", []string{"--redisson-compat"}},
		{"who-quiet", []string{"--no-process-record"}},
	} {
		ready := filepath.Join(t.TempDir(), "ready")
		before := time.Now()
		p := start(t, srv, nil, append(tc.args, "lock", tc.name, "--", "sh", "-c", `touch "`+ready+`"; exec sleep 30`)...)
		waitFor(t, 10*time.Second, "the command to start", func() bool { return exists(ready) })
		quiet := tc.name == "who-quiet"
		var got jsonInspection
		waitFor(t, 10*time.Second, "inspect to name the process", func() bool {
			code, stdout, _ := runCLI(t, srv, "inspect", "--json", tc.name)
			got = jsonInspection{}
			return code == 0 && json.Unmarshal([]byte(stdout), &got) == nil && len(got.Holders) == 1 &&
				(got.Holders[0].Process != nil || quiet)
		})
		h := got.Holders[0]
		if h.Origin != "go" || h.Client == "" || !strings.HasPrefix(h.Owner, h.Client+":") || h.Since == nil ||
			h.Since.Before(before.Add(-time.Second)) || h.Since.After(time.Now()) || h.AgeMs < 0 || h.AgeMs > 60000 {
			t.Fatalf("%s: holder %+v; want a Go holder, taken since the command started", tc.name, h)
		}
		pr := h.Process
		if quiet {
			if pr != nil {
				t.Fatalf("%s: process %+v named with --no-process-record", tc.name, pr)
			}
		} else if pr.Host != host || pr.PID != p.cmd.Process.Pid || pr.Program != "redisson" || pr.Started.Before(before.Add(-time.Second)) {
			t.Fatalf("%s: process %+v; want host %s, pid %d, program redisson", tc.name, pr, host, p.cmd.Process.Pid)
		}
		code, stdout, _ := runCLI(t, srv, "inspect", tc.name)
		want := fmt.Sprintf("(host %s pid %d prog redisson, taken ≤", host, p.cmd.Process.Pid)
		if quiet {
			want = "(Go client " + h.Client + ", no process record, taken ≤"
		}
		if code != 0 || !strings.Contains(stdout, "holder:   "+h.Owner+", 1 level(s), ") || !strings.Contains(stdout, want) {
			t.Fatalf("inspect %s: exit %d, %s; want %q", tc.name, code, stdout, want)
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		p.wait(t, 10*time.Second)
	}
	// Each redisson lock closed its Client, which deleted its record; the quiet one wrote none.
	if keys := rdb.Keys(ctx, "*redisson:~client:*").Val(); len(keys) != 0 {
		t.Fatalf("process records left: %q", keys)
	}

	j := javadouble.New(rdb)
	t.Cleanup(j.Close)
	if err := j.Lock("java").Lock(ctx, 57, time.Minute); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCLI(t, srv, "inspect", "--json", "java")
	var got jsonInspection
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || len(got.Holders) != 1 {
		t.Fatalf("inspect --json java: exit %d, %s", code, stdout)
	}
	if h := got.Holders[0]; h.Origin != "java" || h.Client != j.ID() || h.ThreadID != 57 || h.Since != nil || h.Process != nil {
		t.Fatalf("Java holder %+v; want origin java, client %s, thread 57", h, j.ID())
	}
	want := "(Java Redisson client " + j.ID() + ", thread 57)"
	if code, stdout, _ := runCLI(t, srv, "inspect", "java"); code != 0 || !strings.Contains(stdout, want) {
		t.Fatalf("inspect java: exit %d, %s; want %q", code, stdout, want)
	}
}

// unlock --force deletes whatever lock the name holds (exit 0), and exits 1 when it is not locked;
// each layout is recognised whatever --redisson-compat says.
func TestUnlockForce(t *testing.T) {
	t.Parallel()
	// A short watchdog: each holder learns of its loss at its next renewal.
	srv, rdb, c := server(t, redisson.WithWatchdogTimeout(time.Second))
	ctx := t.Context()
	compat, err := redisson.New(rdb, redisson.WithRedissonCompat(), redisson.WithWatchdogTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer compat.Close()
	holds := map[string]*redisson.Hold{}
	for name, l := range map[string]redisson.Locker{
		"plain": c.Lock("plain"), "fair": c.FairLock("fair"), "rw": c.ReadWriteLock("rw"), "java": compat.Lock("java"),
		"spin": c.SpinLock("spin"), "fenced": c.FencedLock("fenced"), "javafair": compat.FairLock("javafair"),
		"javarw": compat.ReadWriteLock("javarw"),
	} {
		h, err := l.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		holds[name] = h
	}
	for name, h := range holds {
		args := []string{"unlock", "--force", name}
		if name == "plain" || name == "javarw" { // either layout is found whatever the flag says
			args = append([]string{"--redisson-compat"}, args...)
		}
		if code, _, stderr := runCLI(t, srv, args...); code != 0 {
			t.Errorf("unlock --force %s: exit %d (%s)", name, code, stderr)
		}
		select {
		case <-h.Context().Done():
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the holder was not told of its loss", name)
		}
		if keyExists(t, rdb, name) {
			t.Errorf("%s: still held", name)
		}
		if code, _, _ := runCLI(t, srv, "unlock", "--force", name); code != exitNotLocked {
			t.Errorf("unlock --force %s again: exit %d, want %d", name, code, exitNotLocked)
		}
	}
}

// latch set, count-down and wait.
func TestLatch(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	if code, _, stderr := runCLI(t, srv, "latch", "set", "-n", "1", "gate"); code != 0 {
		t.Fatalf("latch set: exit %d (%s)", code, stderr)
	}
	if code, _, _ := runCLI(t, srv, "latch", "set", "-n", "1", "gate"); code != exitNotLocked {
		t.Fatalf("latch set again: exit %d, want %d", code, exitNotLocked)
	}
	if code, _, _ := runCLI(t, srv, "latch", "wait", "--wait", "100ms", "gate"); code != exitNotObtained {
		t.Fatalf("latch wait before zero: exit %d, want %d", code, exitNotObtained)
	}
	w := start(t, srv, nil, "latch", "wait", "gate")
	if code, stdout, stderr := runCLI(t, srv, "latch", "count-down", "gate"); code != 0 || strings.TrimSpace(stdout) != "0" {
		t.Fatalf("latch count-down: exit %d, %q (%s)", code, stdout, stderr)
	}
	if code := w.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("latch wait: exit %d (%s)", code, w.stderr)
	}
}

// latch wait --wait 0 is one check: exit 0 if the count is zero (a latch never set, or counted down),
// 75 if not.
func TestLatchWaitZeroIsOneCheck(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	if code, _, stderr := runCLI(t, srv, "latch", "wait", "--wait", "0", "open"); code != 0 {
		t.Fatalf("latch wait --wait 0 on an open latch: exit %d, want 0 (%s)", code, stderr)
	}
	if _, err := c.CountDownLatch("shut").TrySetCount(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, srv, "latch", "wait", "--wait", "0", "shut"); code != exitNotObtained {
		t.Fatalf("latch wait --wait 0 on a count of 1: exit %d, want %d (%s)", code, exitNotObtained, stderr)
	}
	if _, err := c.CountDownLatch("shut").CountDown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, srv, "latch", "wait", "--wait", "0", "shut"); code != 0 {
		t.Fatalf("latch wait --wait 0 once counted down: exit %d, want 0 (%s)", code, stderr)
	}
}

// watch prints a line when the holder changes, and stops on SIGINT with exit 0.
func TestWatch(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	ctx := t.Context()
	// The Client's process record is written just after its first acquisition: once it is there,
	// the holder's line names the process at once (else a second line would follow when it appears).
	awaitProcessRecord(t, c)
	w := start(t, srv, nil, "watch", "--interval", "20ms", "watched")
	waitFor(t, 10*time.Second, "the first line", func() bool { return strings.Contains(w.stdout.String(), "none") })
	h, err := c.Lock("watched").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the holder's line", func() bool { return strings.Contains(w.stdout.String(), "lock holder=") })
	if by := fmt.Sprintf(" by=%s@%s:%d", filepath.Base(os.Args[0]), hostname(t), os.Getpid()); !strings.Contains(w.stdout.String(), by) {
		t.Fatalf("watch printed %q; want the holder named (%q)", w.stdout.String(), by)
	}
	if err := h.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the release's line", func() bool { return strings.Count(w.stdout.String(), "none") == 2 })
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("watch: exit %d after SIGINT (%s)", code, w.stderr)
	}
	if lines := strings.Split(strings.TrimSpace(w.stdout.String()), "\n"); len(lines) != 3 {
		t.Fatalf("watch printed %q, want 3 lines (none, held, none)", lines)
	}
}

// --key-prefix applies alike to lock, inspect and unlock --force: inspect sees the lock a
// redisson lock holds under the prefix, unlock --force frees it (and the command is terminated).
func TestKeyPrefixIsSharedByLockInspectAndUnlock(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	ready := filepath.Join(t.TempDir(), "ready")
	p := start(t, srv, nil, "--key-prefix", "app:", "--watchdog", "1500ms", "lock", "pfx", "--", "sh", "-c", `touch "`+ready+`"; exec sleep 30`)
	waitFor(t, 10*time.Second, "the command to start", func() bool { return exists(ready) })
	if !keyExists(t, rdb, "app:pfx") {
		t.Fatal("the lock is not under the prefix")
	}
	if code, stdout, stderr := runCLI(t, srv, "--key-prefix", "app:", "inspect", "pfx"); code != 0 || !strings.Contains(stdout, "kind:     lock") {
		t.Fatalf("inspect: exit %d, %s (%s)", code, stdout, stderr)
	}
	if code, stdout, _ := runCLI(t, srv, "inspect", "pfx"); code != 0 || !strings.Contains(stdout, "kind:     none") {
		t.Fatalf("inspect without the prefix: exit %d, %s", code, stdout)
	}
	if code, _, stderr := runCLI(t, srv, "--key-prefix", "app:", "unlock", "--force", "pfx"); code != 0 {
		t.Fatalf("unlock --force: exit %d (%s)", code, stderr)
	}
	if code := p.wait(t, 10*time.Second); code != exitLost {
		t.Fatalf("the holder: exit %d, want %d (%s)", code, exitLost, p.stderr)
	}
}

// unlock --force leaves a semaphore or a latch alone: exit 1, nothing changed.
func TestUnlockForceLeavesSemaphoresAndLatchesAlone(t *testing.T) {
	t.Parallel()
	srv, rdb, c := server(t)
	ctx := t.Context()
	p := c.PermitExpirableSemaphore("sem")
	if _, err := p.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, 1, redisson.WithLease(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CountDownLatch("gate").TrySetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sem", "gate"} {
		before, _ := rdb.Keys(ctx, "*").Result()
		code, _, stderr := runCLI(t, srv, "unlock", "--force", name)
		if code != exitNotLocked || !strings.Contains(stderr, "leaves alone") {
			t.Fatalf("unlock --force %s: exit %d (%s), want %d", name, code, stderr, exitNotLocked)
		}
		if after, _ := rdb.Keys(ctx, "*").Result(); len(after) != len(before) {
			t.Fatalf("unlock --force %s changed the keys %q into %q", name, before, after)
		}
	}
	if n, err := p.AvailablePermits(ctx); err != nil || n != 1 {
		t.Fatalf("available permits %d, %v; want 1", n, err)
	}
}

// semaphore -n creates the semaphore and is needed only then: without it a missing semaphore is a
// usage error and an existing one is used; -n with another number than the semaphore's is not
// applied, and stderr says so. --acquire more than its permits: with --wait, not obtained says so
// (exit 75, or -E N); without, a line says it waits until permits are added, and it takes them once
// they are.
func TestSemaphorePermitsFlag(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	marker := filepath.Join(t.TempDir(), "ran")
	if code, _, stderr := runCLI(t, srv, "semaphore", "pool", "--", "touch", marker); code != exitUsage ||
		!strings.Contains(stderr, `"pool" does not exist: give -n PERMITS to create it`) {
		t.Fatalf("no -n, no semaphore: exit %d, stderr %q; want %d", code, stderr, exitUsage)
	}
	if exists(marker) {
		t.Fatal("the command ran without a semaphore")
	}
	for _, args := range [][]string{{"-n", "2"}, nil, {"-n", "2"}} {
		if code, _, stderr := runCLI(t, srv, append(append([]string{"semaphore"}, args...), "pool", "--", "true")...); code != 0 || stderr != "" {
			t.Fatalf("%q: exit %d, stderr %q; want 0 and nothing", args, code, stderr)
		}
	}
	code, _, stderr := runCLI(t, srv, "semaphore", "-n", "5", "pool", "--", "true")
	if want := `redisson: semaphore "pool" has 2 permits (2 available): -n 5 not applied (it only creates a semaphore)` + "\n"; code != 0 || stderr != want {
		t.Fatalf("-n 5 on 2 permits: exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	if n, err := c.PermitExpirableSemaphore("pool").AvailablePermits(t.Context()); err != nil || n != 2 {
		t.Fatalf("permits %d, %v; want 2", n, err)
	}

	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--acquire", "3", "--wait", "0"}, exitNotObtained},
		{[]string{"--acquire", "3", "--wait", "0.1", "-E", "4"}, 4},
	} {
		code, _, stderr := runCLI(t, srv, append(append([]string{"semaphore"}, tc.args...), "pool", "--", "touch", marker)...)
		if code != tc.want || !strings.Contains(stderr, "--acquire 3 is more than its 2 permits") {
			t.Errorf("%q: exit %d, stderr %q; want %d and why", tc.args, code, stderr, tc.want)
		}
	}
	if exists(marker) {
		t.Fatal("the command ran without its permits")
	}

	p := start(t, srv, nil, "semaphore", "--acquire", "3", "pool", "--", "touch", marker)
	waitFor(t, 10*time.Second, "the warning", func() bool { return strings.Contains(p.stderr.String(), "\n") })
	if want := `redisson: semaphore "pool" has 2 permits: --acquire 3 waits until permits are added` + "\n"; p.stderr.String() != want {
		t.Fatalf("stderr %q, want %q", p.stderr, want)
	}
	if _, err := c.PermitExpirableSemaphore("pool").AddPermits(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 || !exists(marker) {
		t.Fatalf("after permits were added: exit %d, ran %v (%s)", code, exists(marker), p.stderr)
	}
}

// Integer flags are decimal, as flock's -E N and every shell tool's counts: -n 010 is ten permits,
// not eight (Go's base-0 parsing reads a leading 0 as octal and 0x as hexadecimal).
func TestIntegerFlagsAreDecimal(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	code, _, stderr := runCLI(t, srv, "semaphore", "-n", "010", "ten", "--", "true")
	if code == 0 {
		if n, err := c.PermitExpirableSemaphore("ten").AvailablePermits(t.Context()); err != nil || n != 10 {
			t.Errorf("semaphore -n 010: %d permits, %v; want 10 (or a usage error)", n, err)
		}
	} else if code != exitUsage {
		t.Errorf("semaphore -n 010: exit %d (%s); want 0 and 10 permits, or a usage error", code, stderr)
	}

	holdBusy(t, c)
	code, _, stderr = runCLI(t, srv, "lock", "-E", "010", "--wait", "0", "busy", "--", "true")
	if code != 10 && code != exitUsage {
		t.Errorf("lock -E 010 on a held lock: exit %d (%s); want 10 or a usage error", code, stderr)
	}
	code, _, stderr = runCLI(t, srv, "lock", "-E", "0x10", "--wait", "0", "busy", "--", "true")
	if code != exitUsage {
		t.Errorf("lock -E 0x10 on a held lock: exit %d (%s); want a usage error", code, stderr)
	}
}

// withStdoutClosed makes cmd's stdout a pipe whose reading end is closed: a write fails with EPIPE
// (redisson ... | head, once head has exited).
func withStdoutClosed(t *testing.T) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		cmd.Stdout = w
		t.Cleanup(func() { w.Close() })
	}
}

// Output that cannot be written (stdout a closed pipe) is an I/O error, exit 74 (EX_IOERR) as lock
// without a command exits: not 0 as if it had been printed, nor a usage error (64) pointing at the
// help.
func TestOutputThatCannotBeWrittenExits74(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	for _, args := range [][]string{{"inspect", "name"}, {"inspect", "--json", "name"}, {"completion", "bash"}, {"completion", "zsh"}} {
		p := startPrepared(t, nil, withStdoutClosed(t), append([]string{"--addr", srv.Addr()}, args...)...)
		code := p.wait(t, 20*time.Second)
		if got := p.stderr.String(); code != exitIOErr || strings.Contains(got, "--help") || strings.Count(got, "\n") != 1 {
			t.Errorf("%q with stdout closed: exit %d, stderr %q; want %d and one line saying stdout failed", args, code, got, exitIOErr)
		}
	}
}

// watch whose stdout is closed (redisson watch NAME | head -n 1, once head has exited) stops at
// its next line instead of polling for ever with nobody to read it.
func TestWatchStopsWhenStdoutIsClosed(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	p := startPrepared(t, nil, withStdoutClosed(t), "--addr", srv.Addr(), "watch", "--interval", "20ms", "name")
	if code := p.wait(t, 10*time.Second); code != exitIOErr {
		t.Errorf("watch with stdout closed: exit %d, want %d (stderr %q)", code, exitIOErr, p.stderr)
	}
}
