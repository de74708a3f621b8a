package redistest

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
)

// busyPort returns a loopback port held by a listener for the rest of the
// test.
func busyPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", loopbackAddr(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// TestStartRetriesBusyPort makes the allocator hand out taken ports first:
// StartProcess must move on to a free one. Not parallel: it swaps pickPort.
func TestStartRetriesBusyPort(t *testing.T) {
	if _, err := serverBinary(); err != nil {
		t.Skip(err)
	}
	busy := busyPort(t)
	calls := 0
	pickPort = func(also ...int) (int, error) {
		calls++
		if calls < startAttempts {
			return busy, nil
		}
		return freePort(also...)
	}
	t.Cleanup(func() { pickPort = freePort })

	s, err := StartProcess()
	if err != nil {
		t.Fatalf("StartProcess: %v", err)
	}
	defer s.Close()
	if s.Port() == busy || calls != startAttempts {
		t.Fatalf("port %d after %d allocations; want a port other than %d after %d", s.Port(), calls, busy, startAttempts)
	}
}

// TestStartGivesUpOnBusyPorts checks that the retries are bounded.
func TestStartGivesUpOnBusyPorts(t *testing.T) {
	if _, err := serverBinary(); err != nil {
		t.Skip(err)
	}
	busy := busyPort(t)
	calls := 0
	pickPort = func(...int) (int, error) { calls++; return busy, nil }
	t.Cleanup(func() { pickPort = freePort })

	_, err := StartProcess()
	if !errors.Is(err, ErrPortInUse) || calls != startAttempts {
		t.Fatalf("err = %v after %d allocations; want ErrPortInUse after %d", err, calls, startAttempts)
	}
}

// A server started on a port another redis-server holds (two test processes
// picked the same free port) fails to bind, but the other answers its
// readiness PING: start must see that the answer is not its server's, and
// report ErrPortInUse (which StartProcess retries on), not a server that is
// another's.
func TestPortHeldByAnotherServerDetected(t *testing.T) {
	t.Parallel()
	bin, err := serverBinary()
	if err != nil {
		t.Skip(err)
	}
	other, err := StartProcess()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	for range 5 {
		p := newServerProcess(bin, t.TempDir(), other.Port(), &config{})
		p.ports = nil // skip the pre-start port check, as when the other binds just after it
		err := p.start()
		if !errors.Is(err, ErrPortInUse) {
			t.Fatalf("start on a port another redis-server holds: err = %v, want ErrPortInUse", err)
		}
		if p.pid() != 0 {
			t.Fatal("process running after failed start")
		}
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBindFailureDetected skips the pre-start port check, so that
// redis-server itself fails to bind: the early exit must be recognised as
// ErrPortInUse (this is what StartProcess retries on when another process
// grabs the port between allocation and bind).
func TestBindFailureDetected(t *testing.T) {
	t.Parallel()
	bin, err := serverBinary()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	p := newServerProcess(bin, dir, busyPort(t), &config{})
	p.ports = nil
	err = p.start()
	if !errors.Is(err, ErrPortInUse) {
		t.Fatalf("start on a bound port: err = %v, want ErrPortInUse", err)
	}
	if p.pid() != 0 {
		t.Fatal("process running after failed start")
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p.logPath) != dir {
		t.Errorf("log %s not in %s", p.logPath, dir)
	}
}

func TestFreePortWithOffset(t *testing.T) {
	t.Parallel()
	port, err := freePort(10000)
	if err != nil {
		t.Fatal(err)
	}
	if port+10000 > 65535 {
		t.Fatalf("freePort(10000) = %d: bus port out of range", port)
	}
}

func TestPingReady(t *testing.T) {
	t.Parallel()
	for reply, want := range map[string]bool{
		"+PONG":                            true,
		"-NOAUTH Authentication required.": true,
		"-LOADING Redis is loading":        false,
		"-BUSY script":                     false,
		"":                                 false,
		"PING":                             false,
	} {
		if got := pingReady(reply); got != want {
			t.Errorf("pingReady(%q) = %v, want %v", reply, got, want)
		}
	}
}
