package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// bin is the redisson command, built once by TestMain (without -race: it runs as a real process).
var bin string

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{}) // as main does: runInProcess's dials print no pool log lines
	dir, err := os.MkdirTemp("", "redisson-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "redisson")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			// Goroutines that end on their own after a Close get a few seconds to do so.
			for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); err = goleak.Find() {
				time.Sleep(200 * time.Millisecond)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
				code = 1
			}
		}
	}
	os.Exit(code)
}

// syncBuffer is a bytes.Buffer safe for the process's writer and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cliRun is one run of the redisson command.
type cliRun struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

// start runs the command against srv with args (after the connection flags), env added to its
// environment. The process is killed at the end of the test if it still runs.
func start(t *testing.T, srv *redistest.Server, env []string, args ...string) *cliRun {
	t.Helper()
	return startArgs(t, env, append([]string{"--addr", srv.Addr()}, args...)...)
}

// startArgs runs the command with args (connection flags included), env added to its environment.
// The process is killed at the end of the test if it still runs.
func startArgs(t *testing.T, env []string, args ...string) *cliRun {
	t.Helper()
	return startPrepared(t, env, nil, args...)
}

// startPrepared is startArgs, with prep (if not nil) applied to the command before it starts.
func startPrepared(t *testing.T, env []string, prep func(*exec.Cmd), args ...string) *cliRun {
	t.Helper()
	c := &cliRun{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Stdout, c.cmd.Stderr = c.stdout, c.stderr
	c.cmd.Env = append(os.Environ(), env...)
	if prep != nil {
		prep(c.cmd)
	}
	// A command left running after its redisson was killed holds the output pipes open: stop
	// copying from them a moment after redisson exits.
	c.cmd.WaitDelay = time.Second
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := c.cmd.Wait()
		c.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				c.code = 128 + int(ws.Signal())
			}
		}
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait returns the exit code, failing the test if the process has not exited within d.
func (c *cliRun) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
		return c.code
	case <-time.After(d):
		t.Fatalf("redisson %q still running after %v\nstdout: %s\nstderr: %s", c.cmd.Args[1:], d, c.stdout, c.stderr)
		return -1
	}
}

// runCLI runs the command to its end (bounded) and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, srv *redistest.Server, args ...string) (int, string, string) {
	t.Helper()
	c := start(t, srv, nil, args...)
	code := c.wait(t, 20*time.Second)
	return code, c.stdout.String(), c.stderr.String()
}

// waitFor polls cond every few milliseconds until it holds, failing the test after d: a bounded
// wait for an event, not a timing assertion.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fileHas reports whether the file at path contains s.
func fileHas(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(b), s)
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// server starts a redis-server for one test, with a go-redis client and a redisson Client on it.
// holdBusy takes the lock "busy" through c for the rest of the test, failing it if it cannot.
func holdBusy(t *testing.T, c *redisson.Client) {
	t.Helper()
	h, err := c.Lock("busy").Lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Unlock(context.Background()) })
}

func server(t *testing.T, opts ...redisson.Option) (*redistest.Server, *redis.Client, *redisson.Client) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, err := redisson.New(rdb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, rdb, c
}

// killGroupAtEnd kills, at the end of the test, the process group whose leader's pid the file at
// path holds (a command the test left running, after its redisson was killed).
func killGroupAtEnd(t *testing.T, path string) {
	t.Cleanup(func() {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
}

// keyExists reports whether key exists in Redis.
func keyExists(t *testing.T, rdb *redis.Client, key string) bool {
	n, err := rdb.Exists(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// --db on a Cluster is a usage error whether the Cluster is given by --addr or by a cluster URL
// (--cluster --url): go-redis's ParseClusterURL ignores a database, so the command would run on
// database 0 instead of the one asked for.
func TestDbOnAClusterURLIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--cluster", "--url", "redis://localhost:1", "--db", "1", "inspect", "name"},
		{"--cluster", "--url", "redis://localhost:1/1", "inspect", "name"},
	} {
		code, stdout, stderr := runInProcess(t, args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "a Redis Cluster has database 0 only") ||
			!strings.HasSuffix(stderr, "Run 'redisson --help' for usage.\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error: a Cluster has database 0 only", args, code, stdout, stderr)
		}
	}
}

// A negative --db is a usage error: go-redis selects no database for it, so the command would run
// on database 0.
func TestNegativeDbIsAUsageError(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runInProcess(t, "--addr", "localhost:1", "--db", "-1", "inspect", "name")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--db") || !strings.HasSuffix(stderr, "Run 'redisson --help' for usage.\n") {
		t.Errorf("--db -1: exit %d, stdout %q, stderr %q; want a usage error naming --db", code, stdout, stderr)
	}
}

// An --addr given but empty (--addr "$REDIS_HOST" with the variable unset) is a usage error, not
// the default localhost:6379: a lock taken on another Redis than the one meant excludes nobody.
func TestEmptyAddrIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--addr", "", "inspect", "name"}, {"--addr", ",", "inspect", "name"}} {
		code, stdout, stderr := runInProcess(t, args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--addr") || !strings.HasSuffix(stderr, "Run 'redisson --help' for usage.\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error naming --addr", args, code, stdout, stderr)
		}
	}
}
