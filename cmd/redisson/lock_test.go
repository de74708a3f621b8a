package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// The exit code is the command's: its status, or 128+signal when a signal ended it; the lock is
// released when it exits.
func TestLockExitsWithTheCommandsStatus(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	for _, tc := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -TERM $$", 128 + 15}} {
		code, _, stderr := runCLI(t, srv, "lock", "status", "--", "sh", "-c", tc.script)
		if code != tc.want {
			t.Errorf("%q: exit %d, want %d (%s)", tc.script, code, tc.want, stderr)
		}
		if keyExists(t, rdb, "status") {
			t.Errorf("%q: the lock is still held after the command exited", tc.script)
		}
	}
	if code, _, _ := runCLI(t, srv, "lock", "status", "--", filepath.Join(t.TempDir(), "nonexistent")); code != exitNotFound {
		t.Errorf("a missing command: exit %d, want %d", code, exitNotFound)
	}
}

// A lock held elsewhere is not obtained: exit 75 at once with --wait 0, after the bound with
// --wait D (a duration, or a bare number of seconds as flock -w takes); the command does not run.
func TestLockNotObtainedExits75(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	holdBusy(t, c)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, wait := range []string{"0", "200ms", "0.2"} {
		code, _, stderr := runCLI(t, srv, "lock", "--wait", wait, "busy", "--", "touch", marker)
		if code != exitNotObtained {
			t.Errorf("--wait %s: exit %d, want %d (%s)", wait, code, exitNotObtained, stderr)
		}
	}
	if exists(marker) {
		t.Error("the command ran without the lock")
	}
}

// -E N (--conflict-exit-code N), as flock's: the exit code when the lock or permits are not
// obtained, at once with --wait 0 or after --wait D; N outside 0..255 is a usage error. The command
// does not run.
func TestConflictExitCode(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	holdBusy(t, c)
	p := c.PermitExpirableSemaphore("full")
	if _, err := p.TrySetPermits(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	ids, err := p.Acquire(t.Context(), 1, redisson.WithLease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(t.Context(), ids...)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"lock", "-E", "3", "--wait", "0", "busy"}, 3},
		{[]string{"lock", "--conflict-exit-code", "0", "--wait", "0.1", "busy"}, 0},
		{[]string{"lock", "-E", "255", "--wait", "0", "busy"}, 255},
		{[]string{"semaphore", "-n", "1", "-E", "9", "--wait", "0", "full"}, 9},
		{[]string{"lock", "--wait", "0", "busy"}, exitNotObtained},
		{[]string{"lock", "-E", "256", "--wait", "0", "busy"}, exitUsage},
		{[]string{"semaphore", "-n", "1", "-E", "-1", "--wait", "0", "full"}, exitUsage},
	} {
		code, _, stderr := runCLI(t, srv, append(tc.args, "--", "touch", marker)...)
		if code != tc.want {
			t.Errorf("%q: exit %d, want %d (%s)", tc.args, code, tc.want, stderr)
		}
	}
	if exists(marker) {
		t.Error("the command ran without the lock or permits")
	}
}

// Bad usage exits 64 and runs nothing.
func TestUsageErrorsExit64(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	for _, args := range [][]string{
		{"lock"},
		{"lock", "--no-such-flag", "name", "--", "true"},
		{"lock", "--fair", "--spin", "name", "--", "true"},
		{"lock", "a{b", "--", "true"},
		{"lock", "--wait", "-1s", "name", "--", "true"},
		{"semaphore", "name", "--", "true"},
		{"latch", "wait", "--wait", "-1s", "name"},
		{"unlock", "name"},
		{"no-such-command"},
		{},
	} {
		if code, _, stderr := runCLI(t, srv, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, exitUsage, stderr)
		}
	}
}

// Redis unreachable before the command ran: exit 69.
func TestRedisUnreachableExits69(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, srv, "lock", "--wait", "0", "x", "--", "true"); code != exitUnavailable {
		t.Errorf("exit %d, want %d (%s)", code, exitUnavailable, stderr)
	}
}

// trapScript is a command that records the signals it gets in file log, touches ready once its
// traps are set, and then runs until killed; with exitOnTerm it exits 9 on SIGTERM, else it ignores
// it (after recording it).
func trapScript(log, ready string, exitOnTerm bool) string {
	onTerm := `echo TERM >> "` + log + `"`
	if exitOnTerm {
		onTerm += "; exit 9"
	}
	return `trap '` + onTerm + `' TERM; trap 'echo INT >> "` + log + `"; exit 5' INT; touch "` + ready + `"; while :; do sleep 0.05; done`
}

// startTrapped runs redisson with args (before "--") over a command that logs the signals it gets
// (trapScript; exitOnTerm: it exits on SIGTERM, else it ignores it) and waits until it runs. It returns
// the run and the command's log.
func startTrapped(t *testing.T, srv *redistest.Server, exitOnTerm bool, args ...string) (*cliRun, string) {
	t.Helper()
	dir := t.TempDir()
	log, ready := filepath.Join(dir, "log"), filepath.Join(dir, "ready")
	p := start(t, srv, nil, append(args, "--", "sh", "-c", trapScript(log, ready, exitOnTerm))...)
	waitFor(t, 10*time.Second, "the command to start", func() bool { return exists(ready) })
	return p, log
}

// A hold lost while the command runs (a lock deleted, a fixed lease ending, Redis stopped so that
// renewals fail until the lease may lapse, a semaphore's leases deleted): the command gets SIGTERM
// (and SIGKILL after --grace if it ignores it), and redisson exits 70.
func TestLossTerminatesTheCommand(t *testing.T) {
	t.Parallel()
	del := func(key string) func(*testing.T, *redistest.Server, *redis.Client) {
		return func(t *testing.T, _ *redistest.Server, rdb *redis.Client) {
			if err := rdb.Del(t.Context(), key).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, tc := range map[string]struct {
		args   []string
		ignore bool                                               // the command ignores SIGTERM
		lose   func(*testing.T, *redistest.Server, *redis.Client) // nil: the loss comes by itself
	}{
		// The watchdog's next renewal (a third of 1.5s) finds the key gone.
		"lock deleted":            {args: []string{"--watchdog", "1500ms", "lock", "doomed"}, lose: del("doomed")},
		"TERM ignored, killed":    {args: []string{"--watchdog", "1500ms", "lock", "--grace", "300ms", "stubborn"}, ignore: true, lose: del("stubborn")},
		"fixed lease ended":       {args: []string{"lock", "--lease", "1s", "leased"}},
		"semaphore's leases gone": {args: []string{"--watchdog", "1500ms", "semaphore", "-n", "1", "sem"}, lose: del("{sem}:~sl")},
		"Redis stopped": {args: []string{"--watchdog", "2s", "lock", "stopped"}, lose: func(t *testing.T, srv *redistest.Server, _ *redis.Client) {
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, rdb, _ := server(t)
			p, log := startTrapped(t, srv, !tc.ignore, tc.args...)
			if tc.lose != nil {
				tc.lose(t, srv, rdb)
			}
			if code := p.wait(t, 10*time.Second); code != exitLost {
				t.Fatalf("exit %d, want %d (%s)", code, exitLost, p.stderr)
			}
			if !fileHas(log, "TERM") {
				t.Fatalf("the command did not get SIGTERM (log %q, stderr %s)", readFile(log), p.stderr)
			}
			if tc.ignore && !strings.Contains(p.stderr.String(), "SIGKILL") {
				t.Fatalf("a command ignoring SIGTERM was not killed after --grace (stderr %s)", p.stderr)
			}
		})
	}
}

// SIGKILL of redisson stops its watchdog: the lock is free within the watchdog timeout.
func TestKilledCLIFreesTheLockWithinTheWatchdogTimeout(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	killGroupAtEnd(t, pidFile) // if the command outlives redisson (elsewhere than Linux)
	p := start(t, srv, nil, "--watchdog", "2s", "lock", "orphan", "--", "sh", "-c", `echo $$ > "`+pidFile+`"; exec sleep 60`)
	waitFor(t, 10*time.Second, "the command to start", func() bool { return fileHas(pidFile, "\n") })
	if !keyExists(t, rdb, "orphan") {
		t.Fatal("the lock is not held while the command runs")
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 5*time.Second)
	killed := time.Now()
	waitFor(t, 2*time.Second+3*time.Second, "the lock to expire", func() bool { return !keyExists(t, rdb, "orphan") })
	t.Logf("free %v after redisson was killed (watchdog 2s)", time.Since(killed))
}

// A loss that no renewal reported while the command ran (the default 30s watchdog renews every
// 10s; the command ends long before) is found by the release: redisson exits 70, with a message,
// even though the command exited 0. Without the loss the exit is the command's status.
func TestLossFoundByTheReleaseExits70(t *testing.T) {
	t.Parallel()
	forceUnlock := func(t *testing.T, c *redisson.Client, _ *redis.Client, name string) {
		if ok, err := c.Lock(name).ForceUnlock(t.Context()); err != nil || !ok {
			t.Fatalf("force unlock: %v, %v", ok, err)
		}
	}
	delLeases := func(t *testing.T, _ *redisson.Client, rdb *redis.Client, name string) {
		if n, err := rdb.Del(t.Context(), "{"+name+"}:~sl").Result(); err != nil || n != 1 {
			t.Fatalf("del the leases: %d, %v", n, err)
		}
	}
	for name, tc := range map[string]struct {
		args   []string // before NAME
		lose   func(t *testing.T, c *redisson.Client, rdb *redis.Client, name string)
		status string // the command's
		want   int
	}{
		"lock force-unlocked":     {args: []string{"lock"}, lose: forceUnlock, status: "0", want: exitLost},
		"lock kept":               {args: []string{"lock"}, status: "3", want: 3},
		"semaphore's leases gone": {args: []string{"semaphore", "-n", "1"}, lose: delLeases, status: "0", want: exitLost},
		"semaphore kept":          {args: []string{"semaphore", "-n", "1"}, status: "3", want: 3},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, rdb, c := server(t)
			dir := t.TempDir()
			ready, gate := filepath.Join(dir, "ready"), filepath.Join(dir, "go")
			script := `touch "` + ready + `"; while [ ! -e "` + gate + `" ]; do sleep 0.02; done; exit ` + tc.status
			p := start(t, srv, nil, append(tc.args, "held", "--", "sh", "-c", script)...)
			waitFor(t, 10*time.Second, "the command to start", func() bool { return exists(ready) })
			if tc.lose != nil {
				tc.lose(t, c, rdb, "held")
			}
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			code := p.wait(t, 10*time.Second)
			if code != tc.want {
				t.Fatalf("exit %d, want %d (stderr %s)", code, tc.want, p.stderr)
			}
			if lost := strings.Contains(p.stderr.String(), "lost while the command ran"); lost != (tc.lose != nil) {
				t.Fatalf("stderr %q: want a loss message: %v", p.stderr, tc.lose != nil)
			}
		})
	}
}

// SIGKILL of redisson (which cannot keep the lock once dead) ends its command and the command's
// background processes as well: nothing runs on without the lock.
func TestKilledCLIsCommandDoesNotOutliveIt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has a parent-death signal: elsewhere the command can outlive a killed redisson")
	}
	t.Parallel()
	srv, rdb, _ := server(t)
	dir := t.TempDir()
	pidFile, bgFile := filepath.Join(dir, "pid"), filepath.Join(dir, "bg")
	killGroupAtEnd(t, pidFile) // if it does outlive redisson
	loop := `trap "" INT TERM HUP; while :; do sleep 0.05; done`
	bg := `echo $$ > "` + bgFile + `"; ` + loop
	p := start(t, srv, nil, "lock", "killed", "--", "sh", "-c", `sh -c '`+bg+`' & echo $$ > "`+pidFile+`"; `+loop)
	waitFor(t, 10*time.Second, "the command and its background process to start", func() bool {
		return pidIn(pidFile) > 0 && pidIn(bgFile) > 0
	})
	if !keyExists(t, rdb, "killed") {
		t.Fatal("the lock is not held while the command runs")
	}
	killed := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 5*time.Second)
	waitFor(t, 5*time.Second, "the command and its background process to end", func() bool {
		return !alive(pidIn(pidFile)) && !alive(pidIn(bgFile))
	})
	t.Logf("the command and its background process ended %v after redisson was killed", time.Since(killed))
}

// On Linux the command runs under a guard process, redisson's child, that SIGKILLs the command's
// group when its parent-death signal comes and its parent is gone. The signal also comes when the
// thread that forked the guard exits while redisson lives (golang/go#27505): the guard, finding
// redisson still its parent, ignores it, and the command runs on to its own end.
func TestGuardIgnoresAParentDeathSignalWhileRedissonLives(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the guard process is Linux's")
	}
	t.Parallel()
	srv, _, _ := server(t)
	dir := t.TempDir()
	ready, gate := filepath.Join(dir, "ready"), filepath.Join(dir, "go")
	p := start(t, srv, nil, "lock", "spurious", "--", "sh", "-c",
		`touch "`+ready+`"; while [ ! -e "`+gate+`" ]; do sleep 0.02; done; exit 3`)
	waitFor(t, 10*time.Second, "the command to start", func() bool { return exists(ready) })
	guards := childrenOf(p.cmd.Process.Pid)
	if len(guards) != 1 {
		t.Fatalf("redisson's children %v: want one, the guard", guards)
	}
	if err := syscall.Kill(guards[0], parentDeathSignal); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the guard to take the signal", func() bool { return !signalPending(guards[0]) })
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 3 {
		t.Fatalf("exit %d, want the command's 3 (%s)", code, p.stderr)
	}
}

// childrenOf returns the pids of the processes whose parent is pid.
func childrenOf(pid int) []int {
	var kids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		n, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		s := readFile("/proc/" + d.Name() + "/stat")
		i := strings.LastIndexByte(s, ')')
		if f := strings.Fields(s[i+1:]); i >= 0 && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, n)
		}
	}
	return kids
}

// signalPending reports whether process pid has a signal pending (not delivered yet).
func signalPending(pid int) bool {
	for _, line := range strings.Split(readFile("/proc/"+strconv.Itoa(pid)+"/status"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && (k == "SigPnd" || k == "ShdPnd") && strings.Trim(strings.TrimSpace(v), "0") != "" {
			return true
		}
	}
	return false
}

// SIGINT to redisson is passed on to the command; redisson unlocks and exits with its status.
func TestSIGINTIsForwardedAndTheLockReleased(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	dir := t.TempDir()
	log, ready := filepath.Join(dir, "log"), filepath.Join(dir, "ready")
	p := start(t, srv, nil, "lock", "interrupted", "--", "sh", "-c", trapScript(log, ready, true))
	waitFor(t, 10*time.Second, "the command to start", func() bool { return exists(ready) })
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 5 {
		t.Fatalf("exit %d, want the command's 5 (%s)", code, p.stderr)
	}
	if !fileHas(log, "INT") {
		t.Fatal("the command did not get SIGINT")
	}
	if keyExists(t, rdb, "interrupted") {
		t.Fatal("the lock is held after redisson exited")
	}
}

// overlap runs n redisson commands at once, each running a command that appends "start" and
// "end" lines to one file, and returns the largest number of commands that ran at once.
func overlap(t *testing.T, n int, args ...string) int {
	t.Helper()
	srv, _, _ := server(t)
	log := filepath.Join(t.TempDir(), "log")
	script := `echo start >> "` + log + `"; sleep 0.1; echo end >> "` + log + `"`
	var ps []*cliRun
	for range n {
		ps = append(ps, start(t, srv, nil, append(args, "--", "sh", "-c", script)...))
	}
	for _, p := range ps {
		if code := p.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("exit %d (%s)", code, p.stderr)
		}
	}
	lines := strings.Fields(readFile(log))
	if len(lines) != 2*n {
		t.Fatalf("log %q: want %d lines", lines, 2*n)
	}
	running, most := 0, 0
	for _, l := range lines {
		if l == "start" {
			running++
		} else {
			running--
		}
		most = max(most, running)
	}
	return most
}

// Two (here four) redisson commands on one lock never run their commands at once.
func TestLockCommandsNeverOverlap(t *testing.T) {
	t.Parallel()
	if most := overlap(t, 4, "lock", "shared"); most != 1 {
		t.Fatalf("%d commands ran at once under one lock", most)
	}
}

// semaphore -n 2 never runs more than two commands at once.
func TestSemaphoreRunsAtMostNCommands(t *testing.T) {
	t.Parallel()
	if most := overlap(t, 5, "semaphore", "-n", "2", "pool"); most > 2 {
		t.Fatalf("%d commands ran at once with 2 permits", most)
	}
}

// --fenced gives each command a strictly increasing token in REDISSON_FENCING_TOKEN, and the name
// in REDISSON_LOCK_NAME.
func TestFencedTokensIncrease(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	log := filepath.Join(t.TempDir(), "tokens")
	for range 3 {
		code, _, stderr := runCLI(t, srv, "lock", "--fenced", "fenced", "--", "sh", "-c",
			`echo "$REDISSON_LOCK_NAME $REDISSON_FENCING_TOKEN" >> "`+log+`"`)
		if code != 0 {
			t.Fatalf("exit %d (%s)", code, stderr)
		}
	}
	prev := int64(0)
	for _, line := range strings.Split(strings.TrimSpace(readFile(log)), "\n") {
		name, tok, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(tok, 10, 64)
		if name != "fenced" || err != nil || n <= prev {
			t.Fatalf("tokens %q: want the name and strictly increasing tokens", readFile(log))
		}
		prev = n
	}
}

// A plain lock's command has REDISSON_LOCK_NAME but no token.
func TestLockEnvironment(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	code, stdout, stderr := runCLI(t, srv, "lock", "envy", "--", "sh", "-c", `echo "[$REDISSON_LOCK_NAME][$REDISSON_FENCING_TOKEN]"`)
	if code != 0 || strings.TrimSpace(stdout) != "[envy][]" {
		t.Fatalf("exit %d, stdout %q (%s)", code, stdout, stderr)
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// SIGINT while waiting for the lock ends the wait: exit 130 (128+SIGINT), the command never runs,
// and the waiter leaves the queue.
func TestSIGINTWhileWaitingExits130(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	ctx := t.Context()
	h, err := c.Lock("queued").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unlock(ctx)
	marker := filepath.Join(t.TempDir(), "ran")
	p := start(t, srv, nil, "lock", "queued", "--", "touch", marker)
	waitFor(t, 10*time.Second, "redisson to queue for the lock", func() bool {
		in, err := c.Inspect(ctx, "queued")
		return err == nil && len(in.Waiters) == 1
	})
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 128+int(syscall.SIGINT) {
		t.Fatalf("exit %d, want %d (%s)", code, 128+int(syscall.SIGINT), p.stderr)
	}
	if exists(marker) {
		t.Fatal("the command ran")
	}
	if in, err := c.Inspect(ctx, "queued"); err != nil || len(in.Waiters) != 0 {
		t.Fatalf("after the interrupted wait: %+v, %v; want no waiter", in, err)
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// pidIn reads the pid a command wrote to the file at path (0 if none yet).
func pidIn(path string) int {
	pid, _ := strconv.Atoi(strings.TrimSpace(readFile(path)))
	return pid
}

// A process the command started in the background (its process group) is terminated too when the
// lock is lost, SIGKILLed after --grace if it ignores SIGTERM: nothing runs on after redisson exits.
func TestLockLossTerminatesTheCommandsBackgroundProcesses(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	killGroupAtEnd(t, pidFile)
	inner := `trap "" TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.05; done`
	p := start(t, srv, nil, "--watchdog", "1500ms", "lock", "--grace", "300ms", "bg", "--", "sh", "-c", `sh -c '`+inner+`' & wait`)
	waitFor(t, 10*time.Second, "the background process to start", func() bool { return pidIn(pidFile) > 0 })
	if err := rdb.Del(t.Context(), "bg").Err(); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != exitLost {
		t.Fatalf("exit %d, want %d (%s)", code, exitLost, p.stderr)
	}
	if pid := pidIn(pidFile); alive(pid) {
		t.Fatalf("the command's background process %d still runs after redisson exited on the loss", pid)
	}
}

// SIGINT reaches the command's background processes, which a non-interactive shell starts with
// SIGINT ignored: they get SIGTERM, then SIGKILL after --grace, once the command exited; redisson
// does not exit (nor unlock) while they run.
func TestSIGINTEndsTheCommandsBackgroundProcesses(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	killGroupAtEnd(t, pidFile)
	inner := `trap "" TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.05; done`
	p := start(t, srv, nil, "lock", "--grace", "300ms", "bgint", "--", "sh", "-c", `sh -c '`+inner+`' & wait`)
	waitFor(t, 10*time.Second, "the background process to start", func() bool { return pidIn(pidFile) > 0 })
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 128+int(syscall.SIGINT) {
		t.Fatalf("exit %d, want %d (%s)", code, 128+int(syscall.SIGINT), p.stderr)
	}
	if pid := pidIn(pidFile); alive(pid) {
		t.Fatalf("the command's background process %d still runs after redisson exited", pid)
	}
	if keyExists(t, rdb, "bgint") {
		t.Fatal("the lock is held after redisson exited")
	}
}

// A command that leaves a process running in the background (in its process group) keeps the lock
// until that process exits: two such commands never run their background work at once.
func TestLockIsHeldUntilTheCommandsBackgroundProcessesExit(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	log := filepath.Join(t.TempDir(), "log")
	script := `(echo start >> "` + log + `"; sleep 0.2; echo end >> "` + log + `") >/dev/null 2>&1 &`
	var ps []*cliRun
	for range 3 {
		ps = append(ps, start(t, srv, nil, "lock", "daemonish", "--", "sh", "-c", script))
	}
	for _, p := range ps {
		if code := p.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("exit %d (%s)", code, p.stderr)
		}
	}
	waitFor(t, 10*time.Second, "every background job to end", func() bool { return strings.Count(readFile(log), "end") == 3 })
	running, most := 0, 0
	for _, l := range strings.Fields(readFile(log)) {
		if l == "start" {
			running++
		} else {
			running--
		}
		most = max(most, running)
	}
	if most != 1 {
		t.Fatalf("%d background jobs ran at once under one lock (log %q)", most, readFile(log))
	}
}

// A loss reported while redisson's stderr is a closed pipe (redisson lock ... 2>&1 | head) still
// terminates the command: writing the message must not kill redisson with SIGPIPE.
func TestLockLossWithStderrClosedTerminatesTheCommand(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	dir := t.TempDir()
	log, ready := filepath.Join(dir, "log"), filepath.Join(dir, "ready")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	p := &cliRun{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "--addr", srv.Addr(), "--watchdog", "1500ms", "lock", "piped", "--", "sh", "-c",
		"exec 2>/dev/null; "+trapScript(log, ready, true)) // the shell's own messages would kill it by SIGPIPE
	p.cmd.Stderr = w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		err := p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.code = 128 + int(ws.Signal())
		}
		_ = err
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	waitFor(t, 10*time.Second, "the command to start", func() bool { return exists(ready) })
	if err := rdb.Del(t.Context(), "piped").Err(); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != exitLost {
		t.Fatalf("exit %d, want %d", code, exitLost)
	}
	if !fileHas(log, "TERM") {
		t.Fatal("the command did not get SIGTERM")
	}
}

// SIGKILL of a semaphore's redisson stops its watchdog: its permits come back within the watchdog
// timeout, and another redisson takes them.
func TestKilledCLIsPermitsComeBackWithinTheWatchdogTimeout(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	killGroupAtEnd(t, pidFile)
	p := start(t, srv, nil, "--watchdog", "2s", "semaphore", "-n", "2", "--acquire", "2", "leaky", "--", "sh", "-c", `echo $$ > "`+pidFile+`"; exec sleep 60`)
	waitFor(t, 10*time.Second, "the command to start", func() bool { return pidIn(pidFile) > 0 })
	if n, err := c.PermitExpirableSemaphore("leaky").AvailablePermits(t.Context()); err != nil || n != 0 {
		t.Fatalf("available permits while the command runs: %d, %v; want 0", n, err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 5*time.Second)
	if code, _, stderr := runCLI(t, srv, "semaphore", "-n", "2", "--acquire", "2", "--wait", "10s", "leaky", "--", "true"); code != 0 {
		t.Fatalf("the killed redisson's permits did not come back: exit %d (%s)", code, stderr)
	}
}

// lock --fair serves the redisson commands queued on a lock in the order they queued.
func TestFairLockServesCommandsInArrivalOrder(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	ctx := t.Context()
	h, err := c.FairLock("fifo").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "log")
	var ps []*cliRun
	for i := range 3 {
		ps = append(ps, start(t, srv, nil, "lock", "--fair", "fifo", "--", "sh", "-c", `echo `+strconv.Itoa(i)+` >> "`+log+`"`))
		waitFor(t, 10*time.Second, "redisson to queue", func() bool {
			in, err := c.Inspect(ctx, "fifo")
			return err == nil && len(in.Waiters) == i+1
		})
	}
	if err := h.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if code := p.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit %d (%s)", code, p.stderr)
		}
	}
	if got := strings.Fields(readFile(log)); strings.Join(got, " ") != "0 1 2" {
		t.Fatalf("served in the order %q, want 0 1 2", got)
	}
}

// A signal to redisson's whole process group (a terminal's Ctrl-\ sends SIGQUIT to the foreground
// group) reaches redisson and its guard, which share that group, but not the command, which has a
// group of its own. SIGQUIT is neither forwarded nor caught: it ends redisson (the lock is left to
// its watchdog) and must not leave the command running without the lock, as SIGKILL of redisson
// does not. The guard, not catching SIGQUIT, dies with redisson before it can SIGKILL the command's
// group, and the command runs on, orphaned.
func TestGroupSignalToCLIDoesNotOrphanTheCommand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has a parent-death signal: elsewhere the command can outlive a killed redisson")
	}
	t.Parallel()
	srv, _, _ := server(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	killGroupAtEnd(t, pidFile) // it does outlive redisson
	p := startPrepared(t, nil, func(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} },
		"--addr", srv.Addr(), "lock", "group-quit", "--", "sh", "-c", `echo $$ > "`+pidFile+`"; while :; do sleep 0.05; done`)
	waitFor(t, 10*time.Second, "the command to start", func() bool { return pidIn(pidFile) > 0 })
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGQUIT); err != nil { // redisson's group
		t.Fatal(err)
	}
	code := p.wait(t, 5*time.Second)
	t.Logf("redisson exited %d after SIGQUIT to its group", code)
	waitFor(t, 5*time.Second, "the command to end", func() bool { return !alive(pidIn(pidFile)) })
}

// The command inherits no file descriptor of redisson's or its guard's (the guard's report pipe,
// Redis connections): only stdin, stdout and stderr. The command is ls listing its own descriptors
// (besides 0, 1 and 2, the one it reads the listing with). Descriptors the test process itself
// inherited from whoever ran it (same number, same file) pass through every exec, and are ignored.
func TestCommandInheritsOnlyStandardDescriptors(t *testing.T) {
	t.Parallel()
	srv, _, _ := server(t)
	outside := func(fd, target string) bool {
		own, err := os.Readlink("/proc/self/fd/" + fd)
		return err == nil && own == target
	}
	p := start(t, srv, nil, "lock", "fds", "--", "ls", "-l", "/proc/self/fd")
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d (%s)", code, p.stderr)
	}
	for _, line := range strings.Split(p.stdout.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 11 || f[9] != "->" {
			continue // "total 0"
		}
		if fd, target := f[8], f[10]; fd != "0" && fd != "1" && fd != "2" && !strings.HasSuffix(target, "/fd") && !outside(fd, target) {
			t.Errorf("the command inherited descriptor %s -> %s", fd, target)
		}
	}
}

// With the default watchdog (renewals every 10s), a force unlock from another redisson process or
// a deletion of the key terminates the command at once (the loss tracking of the library): SIGTERM
// within 500ms, and redisson exits 70.
func TestLossTerminatesTheCommandAtOnce(t *testing.T) {
	t.Parallel()
	for name, lose := range map[string]func(*testing.T, *redistest.Server, *redis.Client, string){
		"unlock --force": func(t *testing.T, srv *redistest.Server, _ *redis.Client, key string) {
			if code := start(t, srv, nil, "unlock", "--force", key).wait(t, 10*time.Second); code != 0 {
				t.Fatalf("unlock --force exited %d", code)
			}
		},
		"DEL": func(t *testing.T, _ *redistest.Server, rdb *redis.Client, key string) {
			if err := rdb.Del(t.Context(), key).Err(); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, rdb, _ := server(t)
			p, log := startTrapped(t, srv, true, "lock", "at-once")
			lose(t, srv, rdb, "at-once")
			lost := time.Now()
			waitFor(t, 10*time.Second, "SIGTERM to the command", func() bool { return fileHas(log, "TERM") })
			took := time.Since(lost)
			if code := p.wait(t, 10*time.Second); code != exitLost {
				t.Fatalf("exit %d, want %d (%s)", code, exitLost, p.stderr)
			}
			// The bound is on what the library promises (100ms) plus the CLI's signal and the
			// command's trap, which polls every 50ms.
			if took > 500*time.Millisecond {
				t.Fatalf("SIGTERM %v after the loss; the bound is 500ms", took)
			}
			t.Logf("SIGTERM %v after the loss", took)
		})
	}
}

// lock NAME without a command (as etcdctl lock NAME) prints one line naming the lock, its owner and
// with --fenced its token, and holds the lock until SIGTERM or SIGINT: it then unlocks and exits 0.
// A loss meanwhile (a force unlock) exits 70.
func TestLockWithoutCommandHoldsUntilASignal(t *testing.T) {
	t.Parallel()
	srv, rdb, c := server(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		name := "held-" + strconv.Itoa(int(sig))
		p := start(t, srv, nil, "lock", "--fenced", name)
		waitFor(t, 10*time.Second, "the line saying the lock is held", func() bool { return strings.Contains(p.stdout.String(), "\n") })
		in, err := c.Inspect(t.Context(), name)
		if err != nil || len(in.Holders) != 1 {
			t.Fatalf("inspect %s: %+v, %v; want one holder", name, in, err)
		}
		want := fmt.Sprintf("lock %q held by owner %s, fencing token %d\n", name, in.Holders[0].Owner, in.Holders[0].Token)
		if got := p.stdout.String(); got != want {
			t.Fatalf("stdout %q, want %q", got, want)
		}
		if err := p.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 10*time.Second); code != 0 {
			t.Fatalf("%v: exit %d, want 0 (%s)", sig, code, p.stderr)
		}
		if in, err := c.Inspect(t.Context(), name); err != nil || len(in.Holders) != 0 {
			t.Fatalf("%v: still held after the exit: %+v, %v", sig, in, err)
		}
	}

	p := start(t, srv, nil, "lock", "doomed-hold")
	waitFor(t, 10*time.Second, "the line saying the lock is held", func() bool { return strings.Contains(p.stdout.String(), "\n") })
	if !keyExists(t, rdb, "doomed-hold") {
		t.Fatal("the lock is not held")
	}
	if ok, err := c.Lock("doomed-hold").ForceUnlock(t.Context()); err != nil || !ok {
		t.Fatalf("force unlock: %v, %v", ok, err)
	}
	if code := p.wait(t, 10*time.Second); code != exitLost {
		t.Fatalf("lost: exit %d, want %d (%s)", code, exitLost, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), `lock "doomed-hold" lost while held`) {
		t.Fatalf("lost: stderr %q", p.stderr)
	}
}

// lock NAME without a command whose stdout is closed cannot tell whoever reads it that the lock is
// held: it releases the lock at once and exits 74 with a line on stderr, instead of holding a lock
// nobody knows about until a signal.
func TestLockWithoutCommandAndStdoutClosedReleasesAtOnce(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	p := startPrepared(t, nil, func(cmd *exec.Cmd) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // a write on w fails with EPIPE
		cmd.Stdout = w
		t.Cleanup(func() { w.Close() })
	}, "--addr", srv.Addr(), "lock", "unseen-hold")
	if code := p.wait(t, 20*time.Second); code != exitIOErr {
		t.Fatalf("exit %d, want %d (stderr %q)", code, exitIOErr, p.stderr)
	}
	if got := p.stderr.String(); !strings.Contains(got, `redisson: lock "unseen-hold": released at once: cannot write on stdout`) ||
		strings.Count(got, "\n") != 1 {
		t.Fatalf("stderr %q, want one line saying the lock was released", got)
	}
	if keyExists(t, rdb, "unseen-hold") {
		t.Fatal("the lock is still held after the exit")
	}
}

// A release that fails (Redis gone before it) is one line on stderr, prefixed once with
// "redisson: ", with and without a command.
func TestReleaseErrorIsReportedOnce(t *testing.T) {
	t.Parallel()
	for _, withCommand := range []bool{false, true} {
		srv, _, _ := server(t)
		dir := t.TempDir()
		ready, proceed := filepath.Join(dir, "ready"), filepath.Join(dir, "proceed")
		args := []string{"lock", "gone-before-release"}
		if withCommand {
			args = append(args, "--", "sh", "-c", `touch "`+ready+`"; while [ ! -e "`+proceed+`" ]; do sleep 0.05; done`)
		}
		p := start(t, srv, nil, args...)
		waitFor(t, 10*time.Second, "the lock to be held", func() bool {
			return exists(ready) || strings.Contains(p.stdout.String(), "\n")
		})
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if withCommand {
			if err := os.WriteFile(proceed, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		} else if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		p.wait(t, 20*time.Second)
		got := p.stderr.String()
		if !strings.HasPrefix(got, `redisson: unlock "gone-before-release": `) || strings.Count(got, "redisson") != 1 || strings.Count(got, "\n") != 1 {
			t.Errorf("with a command %v: stderr %q, want one line prefixed once with redisson: unlock", withCommand, got)
		}
	}
}

// A command line whose last argument is --generate-shell-completion is a completion request, even
// after "--": the completion scripts ask for the words after "--" so (lock NAME -- rm -rf DIR<TAB>
// calls redisson lock NAME -- rm -rf DIR --generate-shell-completion), and running the command then
// would run it at every TAB. So nothing is obtained and nothing runs: a COMMAND whose own last
// argument is --generate-shell-completion cannot be run by redisson (the documented exception).
func TestCompletionRequestAfterDashesRunsNothing(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := server(t)
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	code, stdout, stderr := runCLI(t, srv, "lock", "tabbed", "--", "sh", "-c", `touch "`+ran+`"`, "--generate-shell-completion")
	if code != 0 || stdout != "" || stderr != "" || exists(ran) || keyExists(t, rdb, "tabbed") {
		t.Errorf("exit %d, stdout %q, stderr %q, ran %v; want a completion request that runs nothing", code, stdout, stderr, exists(ran))
	}
}
