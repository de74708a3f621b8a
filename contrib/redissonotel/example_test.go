package redissonotel_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/contrib/redissonotel"
	"github.com/goredisson/redisson/redistest"
)

// An Adapter on a Client: a span per acquisition and per hold, children of the caller's span, and
// the metrics, with the Client's Stats read whenever the meter's readers collect.
func Example() {
	srv, err := redistest.StartProcess()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())

	err = func(ctx context.Context, rdb *redis.Client) error {
		a, err := redissonotel.New(redissonotel.WithTracerProvider(tp), redissonotel.WithMeterProvider(mp)) // default: the global providers
		if err != nil {
			return err
		}
		c, err := redisson.New(rdb, redisson.WithEventHook(a.Hook()))
		if err != nil {
			return err
		}
		defer c.Close()
		unwatch, err := a.Watch(c, "orders-service") // its Stats under redisson.client="orders-service"
		if err != nil {
			return err
		}
		defer unwatch()

		h, err := c.Lock("orders").Lock(ctx) // span "redisson.acquire lock", child of ctx's span
		if err != nil {
			return err
		}
		return h.Unlock(ctx) // span "redisson.hold lock", from the acquisition to now
	}(context.Background(), rdb)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// redisson.acquire lock
	// redisson.hold lock
}
