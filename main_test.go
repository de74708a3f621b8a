package redisson_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/goredisson/redisson/redistest"
	"go.uber.org/goleak"
)

// exampleAddr is the address of a redis-server shared by the runnable examples.
var exampleAddr string

func TestMain(m *testing.M) {
	flag.Parse()
	srv, err := redistest.StartProcess()
	if err != nil {
		// Tests that need Redis skip on their own (or fail under REDISTEST_REQUIRE=1); the rest still
		// run. Examples cannot skip, so they are left out.
		fmt.Fprintln(os.Stderr, "redisson tests:", err)
		if os.Getenv("REDISTEST_REQUIRE") == "1" {
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "redisson tests: running without redis-server: examples skipped")
		if err := flag.Set("test.skip", "^Example"); err != nil {
			fmt.Fprintln(os.Stderr, "redisson tests:", err)
			os.Exit(1)
		}
	} else {
		exampleAddr = srv.Addr()
	}
	code := m.Run()
	closeShared()
	if srv != nil {
		srv.Close()
	}
	if code == 0 {
		// go-redis stops a Sentinel client's own subscription to the sentinels asynchronously after
		// Close: a reconnection in flight to a sentinel that closeShared has just stopped ends only
		// at its dial timeout (5s). A leak is a goroutine still there 10s after the last test.
		err := goleak.Find()
		for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); err = goleak.Find() {
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}
