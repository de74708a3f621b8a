// Package redistest starts real redis-server processes for tests, in the
// spirit of net/http/httptest: each server listens on a free loopback port,
// lives in its own temporary directory and is torn down when the test ends.
//
// A typical test:
//
//	func TestSomething(t *testing.T) {
//		srv := redistest.Start(t)      // skipped if redis-server is not installed
//		rdb := srv.Client(t)           // closed automatically
//		if err := rdb.Ping(t.Context()).Err(); err != nil {
//			t.Fatal(err)
//		}
//	}
//
// The binary is $REDIS_SERVER_BIN if set, otherwise "redis-server" from
// $PATH. When it cannot be found, [Start] skips the test, unless
// REDISTEST_REQUIRE=1 is set in the environment, in which case it fails the
// test; [StartProcess] returns an error wrapping [ErrNoBinary].
//
// Servers can be stopped, killed, paused and restarted on the same port to
// simulate crashes and hangs, and [Proxy] injects network faults (lost
// replies, requests held back to land late, delays, black holes, dropped
// connections) between a client and a server.
//
// Every server is started with
//
//	--port P --bind 127.0.0.1 --dir DIR --save "" --appendonly no
//	--daemonize no --protected-mode yes --logfile DIR/redis.log
//
// followed by the arguments given with [WithArgs], which therefore override
// the defaults. Do not override --port, --bind or --dir: the harness relies
// on them.
//
// On Linux every redis-server is started with a parent-death signal of
// SIGKILL, so servers do not outlive a test binary that crashes or is killed
// (best effort: the signal is tied to the OS thread that started the
// process).
package redistest
