package redissonprom_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/contrib/redissonprom"
	"github.com/goredisson/redisson/redistest"
)

// A Collector on a Client: its hook counts the Client's acquisitions, releases and losses, and
// each scrape reads the Stats of the Clients it watches.
func Example() {
	srv, err := redistest.StartProcess()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	reg := prometheus.NewRegistry()
	mux := http.NewServeMux()

	err = func(ctx context.Context, rdb *redis.Client) error {
		col := redissonprom.NewCollector() // or NewCollector(redissonprom.WithNames("orders")) for a name label
		reg.MustRegister(col)
		c, err := redisson.New(rdb, redisson.WithEventHook(col.Hook()))
		if err != nil {
			return err
		}
		defer c.Close()
		unwatch, err := col.Watch(c, "orders-service") // its Stats under client="orders-service"
		if err != nil {
			return err
		}
		defer unwatch()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

		h, err := c.Lock("orders").Lock(ctx)
		if err != nil {
			return err
		}
		return h.Unlock(ctx)
	}(context.Background(), rdb)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := testutil.GatherAndCount(reg, "redisson_acquisitions_total", "redisson_lock_hold_seconds")
	fmt.Println(n, err)
	// Output: 2 <nil>
}
