package redistest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// startAttempts bounds how many free ports StartProcess tries when
// redis-server fails to bind the one it was given (another process took it
// between allocation and bind).
const startAttempts = 5

// logFileName is the name of the log file inside a server's directory.
const logFileName = "redis.log"

// config collects the effect of Options.
type config struct {
	args         []string
	debugCommand bool
	port         int
	clusterNode  bool   // a Redis Cluster node: its bus port, port+10000, must be free too
	sentinelConf string // a Sentinel: its configuration (written to sentinel.conf in its directory)
}

// Option configures a server started by [Start] or [StartProcess].
type Option func(*config)

// WithArgs appends extra redis-server command-line arguments, e.g.
// WithArgs("--maxmemory", "10mb"). They come after the defaults and so
// override them; do not override --port, --bind or --dir. Repeated
// WithArgs options accumulate.
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// WithDebugCommand enables the DEBUG command for loopback clients
// (--enable-debug-command local), e.g. for DEBUG SLEEP.
func WithDebugCommand() Option {
	return func(c *config) { c.debugCommand = true }
}

// WithPort makes the server listen on the given fixed port instead of a
// free one chosen by the kernel. Starting fails with an error wrapping
// [ErrPortInUse] if the port is taken; no other port is tried. Rarely
// needed. A port of 0 means "pick a free one" (the default).
func WithPort(port int) Option {
	return func(c *config) { c.port = port }
}

// Server is a redis-server process listening on 127.0.0.1 with its own
// temporary directory. Its methods are safe for concurrent use; lifecycle
// operations (Stop, Kill, Pause, Resume, Restart, Close) are serialised.
// The address, port and directory never change, also across Restart.
type Server struct {
	proc *process
	port int
	dir  string

	closeOnce sync.Once
	closeErr  error
}

// Start starts a standalone redis-server for the test and registers a
// tb.Cleanup that closes it (killing the process and removing its
// directory); if the test failed by then, the tail of the server log is
// logged first. Start blocks until the server answers PING.
//
// If the redis-server binary cannot be found, Start calls tb.Skip with a
// one-line install hint, or tb.Fatal if the environment variable
// REDISTEST_REQUIRE=1 is set. Any other failure calls tb.Fatal with the
// error, which includes the tail of the server log when there is one. Like
// those methods it must be called from the test's goroutine.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := StartProcess(opts...)
	mustStart(tb, err)
	closeAtEnd(tb, s.Close, s)
	return s
}

// mustStart ends the test if a start failed: a skip when a binary is missing (a failure under
// REDISTEST_REQUIRE=1), a failure otherwise.
func mustStart(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrNoBinary) || errors.Is(err, ErrNoCLI) {
		if os.Getenv("REDISTEST_REQUIRE") == "1" {
			tb.Fatalf("%v (REDISTEST_REQUIRE=1)", err)
		}
		tb.Skip(err)
	}
	tb.Fatal(err)
}

// closeAtEnd registers a tb.Cleanup that logs the tail of each server's log if the test failed, then
// calls closeFn.
func closeAtEnd(tb testing.TB, closeFn func() error, servers ...*Server) {
	tb.Cleanup(func() {
		if tb.Failed() {
			for _, s := range servers {
				tb.Logf("redistest: log of redis-server on %s (%s):\n%s", s.Addr(), s.LogFile(), s.proc.logTail(0))
			}
		}
		if err := closeFn(); err != nil {
			tb.Errorf("redistest: %v", err)
		}
	})
}

// StartProcess is like [Start] for programs without a testing.TB, such as
// demos and benchmarks. It blocks until the server answers PING (bounded:
// about 10 s per attempt). It returns an error wrapping [ErrNoBinary] if the
// binary cannot be found, wrapping [ErrPortInUse] if a port given with
// [WithPort] is taken, or describing the failure (with the tail of the
// server log) otherwise; on error nothing is left running and no directory
// is left behind. On success the caller must call [Server.Close].
func StartProcess(opts ...Option) (*Server, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.port < 0 || cfg.port > 65535 {
		return nil, fmt.Errorf("redistest: invalid port %d", cfg.port)
	}
	bin, err := serverBinary()
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	if cfg.sentinelConf != "" {
		if err := os.WriteFile(filepath.Join(dir, sentinelConfFile), []byte(cfg.sentinelConf), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("redistest: %w", err)
		}
	}

	var lastErr error
	for range startAttempts {
		port := cfg.port
		if port == 0 {
			var also []int
			if cfg.clusterNode {
				also = append(also, clusterBusOffset)
			}
			if port, err = pickPort(also...); err != nil {
				lastErr = err
				break
			}
		}
		proc := newServerProcess(bin, dir, port, &cfg)
		err := proc.start()
		if err == nil {
			return &Server{proc: proc, port: port, dir: dir}, nil
		}
		lastErr = err
		if cfg.port != 0 || !errors.Is(err, ErrPortInUse) {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, fmt.Errorf("redistest: starting redis-server: %w", lastErr)
}

// newServerProcess builds the process for a standalone server.
func newServerProcess(bin, dir string, port int, cfg *config) *process {
	logPath := filepath.Join(dir, logFileName)
	ports := []int{port}
	if cfg.sentinelConf != "" {
		args := append([]string{filepath.Join(dir, sentinelConfFile), "--sentinel",
			"--port", strconv.Itoa(port), "--bind", loopback, "--dir", dir,
			"--daemonize", "no", "--logfile", logPath}, cfg.args...)
		return &process{bin: bin, args: args, dir: dir, logPath: logPath, addr: loopbackAddr(port), ports: ports}
	}
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", loopback,
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", logPath,
	}
	if cfg.debugCommand {
		args = append(args, "--enable-debug-command", "local")
	}
	if cfg.clusterNode {
		ports = append(ports, port+clusterBusOffset)
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", strconv.Itoa(int(clusterNodeTimeout.Milliseconds())))
	}
	args = append(args, cfg.args...)
	return &process{
		bin:     bin,
		args:    args,
		dir:     dir,
		logPath: logPath,
		addr:    loopbackAddr(port),
		ports:   ports,
	}
}

// Addr returns the server's address, "127.0.0.1:PORT". It never blocks.
func (s *Server) Addr() string { return loopbackAddr(s.port) }

// Port returns the server's TCP port. It never blocks.
func (s *Server) Port() int { return s.port }

// Dir returns the server's working directory (--dir), which holds its log
// and any data files. It is removed by Close. It never blocks.
func (s *Server) Dir() string { return s.dir }

// LogFile returns the path of the server's log file inside Dir; the
// process's stdout and stderr go there too. It never blocks.
func (s *Server) LogFile() string { return s.proc.logPath }

// PID returns the process id of the running redis-server, or 0 if it is
// not running (stopped, killed, crashed or closed). A paused server is
// running. It never blocks on lifecycle operations.
func (s *Server) PID() int { return s.proc.pid() }

// Options returns new go-redis options for the server: Addr set and
// ContextTimeoutEnabled true, everything else default. Each call returns a
// fresh value that the caller may modify.
func (s *Server) Options() *redis.Options {
	return &redis.Options{
		Addr:                  s.Addr(),
		ContextTimeoutEnabled: true,
	}
}

// Client returns a new go-redis client for the server, built from
// [Server.Options] after applying each mod in order, and registers a
// tb.Cleanup that closes it (and with it the client's background
// goroutines). It does not connect or block.
func (s *Server) Client(tb testing.TB, mod ...func(*redis.Options)) *redis.Client {
	tb.Helper()
	opt := s.Options()
	for _, m := range mod {
		m(opt)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Stop stops the server gracefully: SIGTERM (preceded by SIGCONT if it is
// paused), then it blocks until the process has exited. If it does not exit
// within 10 s it is killed and an error is returned; a non-zero exit status
// is also returned as an error. Stop returns nil if the server is not
// running. The port and directory are kept for [Server.Restart].
func (s *Server) Stop() error { return s.proc.stop() }

// Kill kills the server with SIGKILL, simulating a crash, and blocks until
// the process has exited (bounded: 10 s, then an error). Kill returns nil if
// the server is not running. The port and directory are kept for
// [Server.Restart].
func (s *Server) Kill() error { return s.proc.kill() }

// Pause freezes the server with SIGSTOP: connections stay open and the
// kernel still accepts new ones, but nothing is answered, simulating a
// hung server. On Linux it blocks until the process is observed stopped.
// It returns an error wrapping [ErrNotRunning] if the server is not running.
func (s *Server) Pause() error { return s.proc.pause() }

// Resume continues a paused server with SIGCONT; it does not block. It
// returns an error wrapping [ErrNotRunning] if the server is not running.
// Resuming a server that is not paused is harmless.
func (s *Server) Resume() error { return s.proc.resume() }

// Restart starts the server again, with the same arguments on the same
// port and directory, after Stop or Kill (or a crash), and blocks until it
// answers PING. Data is gone unless persistence was enabled with WithArgs.
// It returns an error if the server is still running, an error wrapping
// [ErrPortInUse] if the port was taken meanwhile, an error wrapping
// [ErrClosed] after Close, and otherwise an error with the tail of the log;
// after an error the server is not running.
func (s *Server) Restart() error {
	if err := s.proc.start(); err != nil {
		return fmt.Errorf("redistest: restart: %w", err)
	}
	return nil
}

// Close stops the server if it is running (SIGCONT first if it is paused,
// then SIGKILL), blocks until the process and its waiter goroutine have
// finished, and removes its directory. It is idempotent: later calls, also
// concurrent ones, wait for the first to finish and return nil.
func (s *Server) Close() error {
	first := false
	s.closeOnce.Do(func() {
		first = true
		err := s.proc.close()
		if rerr := os.RemoveAll(s.dir); rerr != nil {
			err = errors.Join(err, rerr)
		}
		if err != nil {
			s.closeErr = fmt.Errorf("closing redis-server on %s: %w", s.Addr(), err)
		}
	})
	if !first {
		return nil
	}
	return s.closeErr
}
