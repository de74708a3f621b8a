package redistest

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// ErrPortInUse is returned, wrapped, when a server cannot listen on its port
// because something else is bound to it, e.g. by [Server.Restart] when the
// port was taken while the server was down, or by [StartProcess] with
// [WithPort]. Test with errors.Is.
var ErrPortInUse = errors.New("port in use")

// loopback is the only address servers and proxies bind to.
const loopback = "127.0.0.1"

func loopbackAddr(port int) string {
	return net.JoinHostPort(loopback, strconv.Itoa(port))
}

// pickPort is the port allocator; a variable so internal tests can make it
// hand out a busy port.
var pickPort = freePort

// freePort asks the kernel for a currently free loopback TCP port. For every
// offset in also, port+offset must be bindable too (a Redis Cluster node
// needs its bus port, port+10000, free as well). The port is released
// before returning, so another process may grab it before it is used:
// callers must detect a failed bind and retry.
func freePort(also ...int) (int, error) {
	var lastErr error
	for range 50 {
		ln, err := net.Listen("tcp", loopbackAddr(0))
		if err != nil {
			return 0, fmt.Errorf("redistest: finding a free port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ok := true
		for _, off := range also {
			if !portFree(port + off) {
				ok = false
				lastErr = fmt.Errorf("port %d is free but %d is not", port, port+off)
				break
			}
		}
		ln.Close()
		if ok {
			return port, nil
		}
	}
	return 0, fmt.Errorf("redistest: finding a free port: %w", lastErr)
}

// portFree reports whether 127.0.0.1:port can be bound right now.
func portFree(port int) bool {
	if port <= 0 || port > 65535 {
		return false
	}
	ln, err := net.Listen("tcp", loopbackAddr(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
