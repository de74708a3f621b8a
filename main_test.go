package redisson_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/goredisson/redisson/internal/leakcheck"
	"github.com/goredisson/redisson/redistest"
)

// exampleAddr is the address of a redis-server shared by the runnable examples.
var exampleAddr string

func TestMain(m *testing.M) {
	srv, err := redistest.StartProcess()
	if err != nil {
		// Tests skip (or fail under REDISTEST_REQUIRE=1) on their own; examples need a server.
		fmt.Fprintln(os.Stderr, "redisson tests:", err)
		if os.Getenv("REDISTEST_REQUIRE") == "1" {
			os.Exit(1)
		}
		os.Exit(0)
	}
	exampleAddr = srv.Addr()
	code := m.Run()
	srv.Close()
	if code == 0 {
		if err := leakcheck.Check(leakcheck.DefaultTimeout); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}
