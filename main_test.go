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
		// A go-redis Sentinel (failover) client that dials after its Close (a command racing the
		// Close) subscribes to the sentinels again and never stops that subscription: its goroutines
		// (sentinelFailover.listen and the go-redis PubSub channel it reads) are go-redis's, seen
		// now and then after the Sentinel suites, and ignored. Our hub reads its PubSubs with
		// ChannelWithSubscriptions, whose goroutine is not ignored. Goroutines that end on their own
		// after a Close get a few seconds to do so.
		ignore := []goleak.Option{
			goleak.IgnoreTopFunction("github.com/redis/go-redis/v9.(*sentinelFailover).listen"),
			goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9.(*channel).initMsgChan.func1"),
			goleak.IgnoreTopFunction("github.com/redis/go-redis/v9.(*channel).initHealthCheck.func1"),
		}
		err := goleak.Find(ignore...)
		for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); err = goleak.Find(ignore...) {
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}
