package javadouble

import (
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Waiters of two Clients block in Await until the second CountDown (no poll fallback: only the
// zero-count message releases them).
func TestCountDownLatchAwaitReleasedByCountDown(t *testing.T) {
	forTopologies(t, both, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxFor(t, 20*time.Second)
		a, b := newDouble(t, rdb), newDouble(t, rdb)
		name := keyName(t, "latch")
		channel := "redisson_countdownlatch__channel__{" + name + "}"
		l := a.CountDownLatch(name)
		if ok, err := l.TrySetCount(ctx, 2); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if ok, _ := b.CountDownLatch(name).TrySetCount(ctx, 5); ok {
			t.Fatal("TrySetCount over a count")
		}
		var wg sync.WaitGroup
		done := make(chan error, 4)
		for i := range 4 {
			c := []*Client{a, b}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				done <- c.CountDownLatch(name).Await(ctx)
			}()
		}
		eventually(t, 5*time.Second, "the waiters", func() bool {
			return subscribers(t, rdb, channel) == 2 && waiting(a, channel) == 2 && waiting(b, channel) == 2
		})
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
		if ok, _ := b.CountDownLatch(name).AwaitTimeout(ctx, 50*time.Millisecond); ok {
			t.Fatal("open at count 1")
		}
		if len(done) != 0 {
			t.Fatal("a waiter returned at count 1")
		}
		if err := b.CountDownLatch(name).CountDown(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(done)
		for err := range done {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n, _ := l.GetCount(ctx); n != 0 {
			t.Fatalf("count %d", n)
		}
		if n, _ := rdb.Exists(ctx, name).Result(); n != 0 {
			t.Fatal("key left at zero")
		}
	})
}
