package redistest_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/redistest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// shortCtx returns a context that expires after d, for calls that are
// expected to time out.
func shortCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustPing(t *testing.T, c *redis.Client) {
	t.Helper()
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("PING via %s: %v", c.Options().Addr, err)
	}
}

func TestStartPing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	mustPing(t, c)

	host, port, err := net.SplitHostPort(srv.Addr())
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Errorf("Addr() = %q, want 127.0.0.1:PORT", srv.Addr())
	}
	if srv.Port() <= 0 {
		t.Errorf("Port() = %d", srv.Port())
	}
	if fi, err := os.Stat(srv.Dir()); err != nil || !fi.IsDir() {
		t.Errorf("Dir() %q: %v", srv.Dir(), err)
	}
	if srv.PID() <= 0 {
		t.Errorf("PID() = %d, want > 0", srv.PID())
	}
	if o := srv.Options(); o.Addr != srv.Addr() || !o.ContextTimeoutEnabled {
		t.Errorf("Options() = {Addr: %q, ContextTimeoutEnabled: %v}", o.Addr, o.ContextTimeoutEnabled)
	}

	// The defaults are in force: loopback only, no persistence.
	cfg, err := c.ConfigGet(t.Context(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"bind": "127.0.0.1", "save": "", "appendonly": "no",
		"protected-mode": "yes", "daemonize": "no", "dir": srv.Dir(),
	} {
		if got := cfg[k]; got != want {
			t.Errorf("CONFIG GET %s = %q, want %q", k, got, want)
		}
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithArgs("--maxmemory", "10mb"), redistest.WithDebugCommand())
	c := srv.Client(t, func(o *redis.Options) { o.ClientName = "redistest" })
	if got, err := c.ConfigGet(t.Context(), "maxmemory").Result(); err != nil || got["maxmemory"] != "10485760" {
		t.Errorf("maxmemory = %v, %v; want 10485760", got, err)
	}
	if err := c.Do(t.Context(), "DEBUG", "SLEEP", "0").Err(); err != nil {
		t.Errorf("DEBUG SLEEP 0 with WithDebugCommand: %v", err)
	}
	if name, err := c.ClientGetName(t.Context()).Result(); err != nil || name != "redistest" {
		t.Errorf("CLIENT GETNAME = %q, %v; the Client mutator was not applied", name, err)
	}
}

func TestWithPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port

	_, err = redistest.StartProcess(redistest.WithPort(port))
	if !errors.Is(err, redistest.ErrPortInUse) {
		t.Errorf("StartProcess on a busy fixed port: err = %v, want ErrPortInUse", err)
	}

	ln.Close()
	srv := redistest.Start(t, redistest.WithPort(port))
	if srv.Port() != port {
		t.Errorf("Port() = %d, want %d", srv.Port(), port)
	}
	mustPing(t, srv.Client(t))
}

func TestBadArgsReportLog(t *testing.T) {
	t.Parallel()
	_, err := redistest.StartProcess(redistest.WithArgs("--no-such-directive", "x"))
	if err == nil {
		t.Fatal("StartProcess with a bad directive succeeded")
	}
	if !strings.Contains(err.Error(), "no-such-directive") {
		t.Errorf("error does not include the log tail: %v", err)
	}
}

func TestNoBinary(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("REDIS_SERVER_BIN", "/nonexistent/redis-server")
	_, err := redistest.StartProcess()
	if !errors.Is(err, redistest.ErrNoBinary) {
		t.Fatalf("err = %v, want ErrNoBinary", err)
	}
}

func TestKillRestartSamePort(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	port, oldPID := srv.Port(), srv.PID()

	if err := srv.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if pid := srv.PID(); pid != 0 {
		t.Errorf("PID() after Kill = %d, want 0", pid)
	}
	if err := srv.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}
	if err := srv.Pause(); !errors.Is(err, redistest.ErrNotRunning) {
		t.Errorf("Pause after Kill: err = %v, want ErrNotRunning", err)
	}
	if err := c.Ping(shortCtx(t, 300*time.Millisecond)).Err(); err == nil {
		t.Error("PING succeeded against a killed server")
	}

	if err := srv.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if srv.Port() != port {
		t.Errorf("Port() after Restart = %d, want %d", srv.Port(), port)
	}
	if pid := srv.PID(); pid == 0 || pid == oldPID {
		t.Errorf("PID() after Restart = %d (before: %d)", pid, oldPID)
	}
	if err := c.Get(t.Context(), "k").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET k after Kill+Restart: err = %v, want redis.Nil (data gone)", err)
	}
	if err := srv.Restart(); err == nil {
		t.Error("Restart of a running server succeeded")
	}
}

func TestRestartPortTaken(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", srv.Addr())
	if err != nil {
		t.Fatalf("taking the port of the killed server: %v", err)
	}
	err = srv.Restart()
	ln.Close()
	if !errors.Is(err, redistest.ErrPortInUse) {
		t.Fatalf("Restart on a taken port: err = %v, want ErrPortInUse", err)
	}
	if srv.PID() != 0 {
		t.Error("server running after a failed Restart")
	}
	if err := srv.Restart(); err != nil {
		t.Fatalf("Restart after the port was freed: %v", err)
	}
	mustPing(t, srv.Client(t))
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	mustPing(t, c)

	if err := srv.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if srv.PID() == 0 {
		t.Error("PID() = 0 for a paused server")
	}
	start := time.Now()
	if err := c.Ping(shortCtx(t, 200*time.Millisecond)).Err(); err == nil {
		t.Fatal("PING answered by a paused server")
	} else if d := time.Since(start); d > 2*time.Second {
		t.Errorf("PING to a paused server took %v despite a 200ms deadline", d)
	}

	if err := srv.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := c.Ping(shortCtx(t, 2*time.Second)).Err(); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
}

func TestStop(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	mustPing(t, c)

	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if srv.PID() != 0 {
		t.Errorf("PID() after Stop = %d", srv.PID())
	}
	if err := c.Ping(shortCtx(t, 300*time.Millisecond)).Err(); err == nil {
		t.Error("PING succeeded against a stopped server")
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatalf("Restart after Stop: %v", err)
	}
	mustPing(t, c)
}

func TestStopPaused(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop of a paused server: %v", err)
	}
	if srv.PID() != 0 {
		t.Errorf("PID() after Stop = %d", srv.PID())
	}
}

func TestCloseIdempotent(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartProcess()
	if errors.Is(err, redistest.ErrNoBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil { // Close must cope with a paused server
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if srv.PID() != 0 {
		t.Errorf("PID() after Close = %d", srv.PID())
	}
	if _, err := os.Stat(srv.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Dir() still exists after Close: %v", err)
	}
	if err := srv.Restart(); !errors.Is(err, redistest.ErrClosed) {
		t.Errorf("Restart after Close: err = %v, want ErrClosed", err)
	}
	if err := srv.Resume(); !errors.Is(err, redistest.ErrNotRunning) {
		t.Errorf("Resume after Close: err = %v, want ErrNotRunning", err)
	}
}

func TestParallelServersDistinctPorts(t *testing.T) {
	t.Parallel()
	a, b := redistest.Start(t), redistest.Start(t)
	if a.Port() == b.Port() || a.Dir() == b.Dir() {
		t.Fatalf("servers share port or dir: %s %s, %s %s", a.Addr(), a.Dir(), b.Addr(), b.Dir())
	}
	ca, cb := a.Client(t), b.Client(t)
	if err := ca.Set(t.Context(), "who", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cb.Get(t.Context(), "who").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("server b sees server a's key: err = %v", err)
	}
}

func TestProxyForwards(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	if p.Addr() == srv.Addr() {
		t.Fatal("proxy and server share an address")
	}
	c := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
	big := string(make([]byte, 1<<20)) // spans many chunks both ways
	if err := c.Set(t.Context(), "big", big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(t.Context(), "big").Result()
	if err != nil || got != big {
		t.Fatalf("GET big via proxy: len %d, err %v; want len %d", len(got), err, len(big))
	}
	if n := p.Conns(); n != 1 {
		t.Errorf("Conns() = %d, want 1", n)
	}
}

// proxied starts a server and a Proxy to it, and returns them and a client connecting through the
// proxy.
func proxied(t *testing.T) (*redistest.Server, *redistest.Proxy, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	return srv, p, srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr() })
}

func TestProxyDropReplies(t *testing.T) {
	t.Parallel()
	srv, p, c := proxied(t)
	direct := srv.Client(t)
	mustPing(t, c) // connection set up before the fault is armed

	p.DropReplies(1)
	v, err := c.Incr(t.Context(), "counter").Result()
	if err != nil {
		t.Fatalf("INCR via proxy after a dropped reply: %v (go-redis should have retried)", err)
	}
	n, err := direct.Get(t.Context(), "counter").Int()
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || v != 2 {
		t.Fatalf("INCR returned %d, server counter = %d; want 2 and 2 (executed, reply lost, retried)", v, n)
	}
	// The fault was used up: the next command goes through untouched.
	if v, err := c.Incr(t.Context(), "counter").Result(); err != nil || v != 3 {
		t.Fatalf("second INCR = %d, %v; want 3", v, err)
	}
}

func TestProxyDelay(t *testing.T) {
	t.Parallel()
	_, p, c := proxied(t)
	mustPing(t, c)

	const d = 40 * time.Millisecond
	p.Delay(d)
	start := time.Now()
	mustPing(t, c)
	// A lower bound, not a timing threshold: the request and the reply each wait at least d.
	if took := time.Since(start); took < 2*d {
		t.Errorf("PING through a proxy delaying each chunk by %v took %v; want at least %v", d, took, 2*d)
	}
	p.Delay(0)
	mustPing(t, c)
}

// A request held back by HoldRequests does not run until ReleaseHeld, even after its client gave up
// on it and closed the connection; then it runs, and later requests go through untouched.
func TestProxyHoldRequests(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	c := srv.Client(t, func(o *redis.Options) {
		o.Addr = p.Addr()
		o.MaxRetries = -1
		o.ReadTimeout = 200 * time.Millisecond
	})
	direct := srv.Client(t)
	mustPing(t, c)

	p.HoldRequests(1)
	if err := c.Incr(t.Context(), "held").Err(); err == nil {
		t.Fatal("INCR held back by the proxy was answered")
	}
	if n := p.Held(); n != 1 {
		t.Fatalf("Held() = %d after one request was held; want 1", n)
	}
	if err := direct.Get(t.Context(), "held").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET held before the release = %v; want redis.Nil (the INCR must not have run)", err)
	}
	p.ReleaseHeld()
	if n := p.Held(); n != 0 {
		t.Fatalf("Held() = %d after ReleaseHeld; want 0", n)
	}
	ran := false
	for deadline := time.Now().Add(5 * time.Second); !ran && time.Now().Before(deadline); {
		v, err := direct.Get(t.Context(), "held").Result()
		if ran = err == nil && v == "1"; !ran {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if !ran {
		t.Fatal("the held INCR did not run after ReleaseHeld")
	}
	if v, err := c.Incr(t.Context(), "held").Result(); err != nil || v != 2 {
		t.Fatalf("INCR after the release = %d, %v; want 2", v, err)
	}
}

func TestProxyBlackhole(t *testing.T) {
	t.Parallel()
	_, p, c := proxied(t)
	mustPing(t, c)

	p.Blackhole(true)
	if err := c.Ping(shortCtx(t, 200*time.Millisecond)).Err(); err == nil {
		t.Fatal("PING answered through a black hole")
	}
	p.Blackhole(false)
	if err := c.Ping(shortCtx(t, 2*time.Second)).Err(); err != nil {
		t.Fatalf("PING after the black hole was lifted: %v", err)
	}
}

func TestProxyCloseConns(t *testing.T) {
	t.Parallel()
	_, p, c := proxied(t)
	mustPing(t, c)
	if n := p.Conns(); n != 1 {
		t.Fatalf("Conns() = %d, want 1", n)
	}
	id, err := c.ClientID(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}

	p.CloseConns()
	if n := p.Conns(); n != 0 {
		t.Errorf("Conns() after CloseConns = %d, want 0", n)
	}
	// The server side was closed too, so the server drops the client; go-redis
	// reconnects through the proxy, getting a new client ID.
	newID, err := c.ClientID(t.Context()).Result()
	if err != nil {
		t.Fatalf("CLIENT ID after CloseConns: %v", err)
	}
	if newID == id {
		t.Errorf("same client ID %d after CloseConns: connection was not replaced", id)
	}
	if n := p.Conns(); n != 1 {
		t.Errorf("Conns() after reconnect = %d, want 1", n)
	}
}

func TestProxyClose(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p, err := redistest.StartProxy(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr(); o.MaxRetries = -1 })
	mustPing(t, c)
	p.Blackhole(true) // a connection busy in a black hole must not stall Close
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if n := p.Conns(); n != 0 {
		t.Errorf("Conns() after Close = %d", n)
	}
	if err := c.Ping(shortCtx(t, 300*time.Millisecond)).Err(); err == nil {
		t.Error("PING through a closed proxy succeeded")
	}
}

func TestProxyUnreachableTarget(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close() // nothing listens there now

	p := redistest.NewProxy(t, target)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// The proxy closes the client side when its dial fails.
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read from proxy with unreachable target: err = %v, want EOF/reset", err)
	}
}

func TestRequirePass(t *testing.T) {
	t.Parallel()
	// Readiness must accept NOAUTH as "answering".
	srv := redistest.Start(t, redistest.WithArgs("--requirepass", "s3cret"))
	c := srv.Client(t, func(o *redis.Options) { o.Password = "s3cret" })
	mustPing(t, c)
}
