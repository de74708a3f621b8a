package redistest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/redistest"
)

// StartProcess runs a server outside of a test, e.g. for a demo.
func ExampleStartProcess() {
	srv, err := redistest.StartProcess(redistest.WithArgs("--maxmemory", "64mb"))
	if err != nil {
		log.Fatal(err) // errors.Is(err, redistest.ErrNoBinary) if not installed
	}
	defer srv.Close()

	rdb := redis.NewClient(srv.Options())
	defer rdb.Close()
	fmt.Println(rdb.Ping(context.Background()).Val())
}

// A Proxy between client and server loses one reply; go-redis retries the
// command on a new connection, so it runs twice.
func ExampleProxy_DropReplies() {
	srv, err := redistest.StartProcess()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	p, err := redistest.StartProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	opt := srv.Options()
	opt.Addr = p.Addr()
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	ctx := context.Background()
	rdb.Ping(ctx)
	p.DropReplies(1)
	fmt.Println(rdb.Incr(ctx, "n").Val())
}
