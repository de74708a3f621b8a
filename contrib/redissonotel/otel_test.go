package redissonotel_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/contrib/redissonotel"
	"github.com/goredisson/redisson/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		// Goroutines that end on their own after a Close get a few seconds to do so.
		err := goleak.Find()
		for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); err = goleak.Find() {
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newClient returns a redisson Client over a new connection to srv, closed when the test ends.
func newClient(t *testing.T, srv *redistest.Server, opts ...redisson.Option) *redisson.Client {
	t.Helper()
	opts = append([]redisson.Option{redisson.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	c, err := redisson.New(srv.Client(t), opts...)
	if err != nil {
		t.Fatalf("redisson.New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// eventually polls cond until it holds, failing the test after timeout: a bounded wait for a
// condition, not a timing assertion.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// attrs returns a span's attributes by key.
func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value)
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// Every acquisition and hold becomes a span, child of the span in the acquiring caller's context,
// with the object, name, outcome, cause, attempts, hand-over and permits as attributes, its start in
// the past (the wait, the time held), and status Error for a lost hold (not for a fixed lease that
// ran out) and an acquisition failed by Close, but not for a busy lock.
func TestSpansOfAcquisitionsAndHolds(t *testing.T) {
	srv := redistest.Start(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	a, err := redissonotel.New(redissonotel.WithTracerProvider(tp), redissonotel.WithMeterProvider(sdkmetric.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	// A short watchdog, so that a renewal soon finds the force-unlocked hold gone.
	c := newClient(t, srv, redisson.WithEventHook(a.Hook()), redisson.WithWatchdogTimeout(1500*time.Millisecond))
	other := newClient(t, srv)

	ctx, parent := tp.Tracer("test").Start(t.Context(), "request")
	h, err := c.Lock("orders").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // a hold that lasts
	if err := h.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	oh, err := other.Lock("orders").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lock("orders").TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock of a held lock = %v; want ErrNotObtained", err)
	}
	if err := oh.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	lost, err := c.Lock("lost").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := other.Lock("lost").ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	<-lost.Context().Done()
	eventually(t, 5*time.Second, "the hold span of the lost lock", func() bool { return len(rec.Ended()) == 5 })
	// A fixed lease that runs out is a loss, but what the lease was for: no status Error.
	leased, err := c.Lock("leased").Lock(ctx, redisson.WithLease(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	<-leased.Context().Done()
	eventually(t, 5*time.Second, "the hold span of the leased lock", func() bool { return len(rec.Ended()) == 7 })
	sem := c.Semaphore("slots")
	if _, err := sem.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// An acquisition that waits when the Client is closed fails with CauseClosed.
	if oh, err = other.Lock("orders").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := c.Lock("orders").Lock(ctx)
		got <- err
	}()
	eventually(t, 5*time.Second, "the acquisition to wait", func() bool { return c.Stats().Waiting == 1 })
	c.Close()
	if err := <-got; !errors.Is(err, redisson.ErrClosed) {
		t.Fatalf("Lock waiting when the Client is closed = %v; want ErrClosed", err)
	}
	if err := oh.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	parent.End()

	type want struct {
		name, outcome, cause, object string
		failed                       bool
	}
	wants := []want{
		{"redisson.acquire lock", "acquired", "", "orders", false},
		{"redisson.hold lock", "released", "", "orders", false},
		{"redisson.acquire lock", "not_obtained", redisson.CauseBusy, "orders", false},
		{"redisson.acquire lock", "acquired", "", "lost", false},
		{"redisson.hold lock", "lost", redisson.CauseExpired, "lost", true},
		{"redisson.acquire lock", "acquired", "", "leased", false},
		{"redisson.hold lock", "lost", redisson.CauseLeaseEnded, "leased", false},
		{"redisson.acquire semaphore", "acquired", "", "slots", false},
		{"redisson.acquire lock", "not_obtained", redisson.CauseClosed, "orders", true},
		{"request", "", "", "", false},
	}
	spans := rec.Ended()
	if len(spans) != len(wants) {
		for _, s := range spans {
			t.Logf("span %q %v", s.Name(), s.Attributes())
		}
		t.Fatalf("%d spans ended; want %d", len(spans), len(wants))
	}
	for i, w := range wants[:len(wants)-1] {
		s := spans[i]
		at := attrs(s)
		what := fmt.Sprintf("span %d %q", i, s.Name())
		if s.Name() != w.name || at[redissonotel.AttrOutcome].AsString() != w.outcome || at[redissonotel.AttrCause].AsString() != w.cause ||
			at[redissonotel.AttrName].AsString() != w.object {
			t.Errorf("%s: outcome %q cause %q name %q; want %q, outcome %q, cause %q, name %q", what, at[redissonotel.AttrOutcome].AsString(),
				at[redissonotel.AttrCause].AsString(), at[redissonotel.AttrName].AsString(), w.name, w.outcome, w.cause, w.object)
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("%s: parent %v; want the caller's span %v", what, s.Parent().SpanID(), parent.SpanContext().SpanID())
		}
		if s.SpanKind() != trace.SpanKindInternal {
			t.Errorf("%s: kind %v; want internal", what, s.SpanKind())
		}
		if !s.EndTime().After(s.StartTime()) {
			t.Errorf("%s: from %v to %v; want a span that lasts", what, s.StartTime(), s.EndTime())
		}
		if got := s.Status().Code == codes.Error; got != w.failed {
			t.Errorf("%s: status %v; want Error %v", what, s.Status(), w.failed)
		} else if got && at[redissonotel.AttrErrorType].AsString() != w.cause {
			t.Errorf("%s: error.type %q; want %q", what, at[redissonotel.AttrErrorType].AsString(), w.cause)
		}
	}
	if at := attrs(spans[0]); at[redissonotel.AttrObject].AsString() != "lock" || at[redissonotel.AttrAttempts].AsInt64() < 1 ||
		at[redissonotel.AttrHandedOver].AsBool() {
		t.Errorf("acquire span attributes %v; want object lock, attempts ≥ 1, not handed over", spans[0].Attributes())
	}
	if d := spans[1].EndTime().Sub(spans[1].StartTime()); d < 2*time.Millisecond {
		t.Errorf("hold span lasts %v; want at least the 2ms the lock was held", d)
	}
	if at := attrs(spans[7]); at[redissonotel.AttrPermits].AsInt64() != 2 || at[redissonotel.AttrObject].AsString() != "semaphore" {
		t.Errorf("semaphore span attributes %v; want permits 2, object semaphore", spans[7].Attributes())
	}
}

// metrics collects rm from r.
func metrics(t *testing.T, r sdkmetric.Reader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]metricdata.Metrics)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// intPoint returns the value of an Int64 sum's data point with exactly the attributes kvs; -1 if
// there is none.
func intPoint(ms map[string]metricdata.Metrics, name string, kvs ...attribute.KeyValue) int64 {
	sum, ok := ms[name].Data.(metricdata.Sum[int64])
	if !ok {
		return -1
	}
	set := attribute.NewSet(kvs...)
	for _, dp := range sum.DataPoints {
		if dp.Attributes.Equals(&set) {
			return dp.Value
		}
	}
	return -1
}

// histPoint returns the count and sum of a histogram's data point with exactly the attributes kvs;
// count -1 if there is none.
func histPoint(ms map[string]metricdata.Metrics, name string, kvs ...attribute.KeyValue) (uint64, float64, bool) {
	h, ok := ms[name].Data.(metricdata.Histogram[float64])
	if !ok {
		return 0, 0, false
	}
	set := attribute.NewSet(kvs...)
	for _, dp := range h.DataPoints {
		if dp.Attributes.Equals(&set) {
			return dp.Count, dp.Sum, true
		}
	}
	return 0, 0, false
}

// Real lock traffic through the meter: N acquisitions, M busy TryLocks, one hold lost to
// ForceUnlock, one acquisition handed over through Redis, counted exactly; the histograms have a
// sample per event and their sums; the Stats of a watched Client are observed under its label until
// it is unwatched; WithNames puts only the listed names on the metrics.
func TestMetricsOfLockTraffic(t *testing.T) {
	const n, m = 4, 3
	srv := redistest.Start(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	a, err := redissonotel.New(redissonotel.WithMeterProvider(mp), redissonotel.WithTracerProvider(noop.NewTracerProvider()),
		redissonotel.WithNames("orders"))
	if err != nil {
		t.Fatal(err)
	}
	var handed atomic.Int64 // acquisitions reported handed over
	count := func(e redisson.Event) {
		if e.Kind == redisson.EventAcquired && e.HandedOver {
			handed.Add(1)
		}
	}
	c := newClient(t, srv, redisson.WithEventHook(a.Hook()), redisson.WithEventHook(count), redisson.WithWatchdogTimeout(1500*time.Millisecond))
	other := newClient(t, srv)
	unwatch, err := a.Watch(c, "app")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Watch(other, "app"); err == nil {
		t.Error("Watch with a label already watched succeeded; want an error")
	}
	ctx := t.Context()
	for range n {
		h, err := c.Lock("orders").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	oh, err := other.Lock("orders").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range m {
		if _, err := c.Lock("orders").TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
			t.Fatalf("TryLock of a held lock = %v; want ErrNotObtained", err)
		}
	}
	// Hand-overs: c waits in Redis's queue while other holds the lock, and other's release hands it
	// over. Whether a given release hands the lock over, or c's own attempt takes it, depends on
	// when c's subscription is confirmed; rounds repeat (boundedly) until one was handed over, and
	// the counts below include every round. While c waits, the waiter gauge shows it; while it
	// holds, the hold gauge.
	client := redissonotel.AttrClient.String("app")
	rounds := 0
	for ; handed.Load() == 0; rounds++ {
		if rounds == 20 {
			t.Fatal("no acquisition was handed over in 20 rounds")
		}
		if rounds > 0 {
			if oh, err = other.Lock("orders").Lock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		type result struct {
			h   *redisson.Hold
			err error
		}
		got := make(chan result, 1)
		go func() {
			h, err := c.Lock("orders").Lock(ctx)
			got <- result{h, err}
		}()
		eventually(t, 5*time.Second, "the acquisition to wait", func() bool { return c.Stats().Waiting == 1 && c.Stats().Subscriptions > 0 })
		if v := intPoint(metrics(t, reader), "redisson.waiters", client); v != 1 {
			t.Errorf("redisson.waiters{app} = %d while one acquisition waits; want 1", v)
		}
		if err := oh.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.err != nil {
			t.Fatal(r.err)
		}
		if v := intPoint(metrics(t, reader), "redisson.holds", client); v != 1 {
			t.Errorf("redisson.holds{app} = %d while one lock is held; want 1", v)
		}
		if err := r.h.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lost, err := c.Lock("lost").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := other.Lock("lost").ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	<-lost.Context().Done()
	lock := redissonotel.AttrObject.String("lock")
	orders, others := redissonotel.AttrName.String("orders"), redissonotel.AttrName.String("other")
	eventually(t, 5*time.Second, "the loss to be counted", func() bool {
		return intPoint(metrics(t, reader), "redisson.holds.lost", lock, redissonotel.AttrCause.String("expired"), others) == 1
	})

	ms := metrics(t, reader)
	acquired := redissonotel.AttrResult.String("acquired")
	for _, ch := range []struct {
		name string
		kvs  []attribute.KeyValue
		want int64
	}{
		{"redisson.acquisitions", []attribute.KeyValue{lock, acquired, orders}, int64(n + rounds)},
		{"redisson.acquisitions", []attribute.KeyValue{lock, acquired, others}, 1},
		{"redisson.acquisitions", []attribute.KeyValue{lock, redissonotel.AttrResult.String("busy"), orders}, m},
		{"redisson.handovers", []attribute.KeyValue{lock, orders}, handed.Load()},
		{"redisson.holds", []attribute.KeyValue{client}, 0},
		{"redisson.waiters", []attribute.KeyValue{client}, 0},
	} {
		if v := intPoint(ms, ch.name, ch.kvs...); v != ch.want {
			t.Errorf("%s%v = %d; want %d", ch.name, ch.kvs, v, ch.want)
		}
	}
	if cnt, sum, _ := histPoint(ms, "redisson.acquire.wait.duration", lock, acquired, orders); cnt != uint64(n+rounds) || sum <= 0 {
		t.Errorf("wait histogram of acquired locks: %d samples, sum %v; want %d, > 0", cnt, sum, n+rounds)
	}
	if cnt, _, _ := histPoint(ms, "redisson.acquire.wait.duration", lock, redissonotel.AttrResult.String("busy"), orders); cnt != m {
		t.Errorf("wait histogram of busy locks: %d samples; want %d", cnt, m)
	}
	if cnt, sum, _ := histPoint(ms, "redisson.lock.hold.duration", lock, redissonotel.AttrOutcome.String("released"), orders); cnt != uint64(n+rounds) || sum <= 0 {
		t.Errorf("hold histogram of released locks: %d samples, sum %v; want %d, > 0", cnt, sum, n+rounds)
	}
	if cnt, sum, _ := histPoint(ms, "redisson.lock.hold.duration", lock, redissonotel.AttrOutcome.String("lost"), others); cnt != 1 || sum <= 0 {
		t.Errorf("hold histogram of lost locks: %d samples, sum %v; want 1, > 0", cnt, sum)
	}
	for _, name := range []string{"redisson.acquire.wait.duration", "redisson.lock.hold.duration"} {
		if u := ms[name].Unit; u != "s" {
			t.Errorf("%s: unit %q; want s", name, u)
		}
	}
	s := c.Stats()
	for name, want := range map[string]int64{"redisson.renewals": int64(s.Renewed), "redisson.renewal.failures": int64(s.RenewFailures),
		"redisson.heartbeats": int64(s.Heartbeats), "redisson.pubsub.reconnects": int64(s.Reconnects),
		"redisson.replica_ack.failures": int64(s.AckFailures), "redisson.pubsub.subscriptions": int64(s.Subscriptions)} {
		if v := intPoint(ms, name, client); v != want {
			t.Errorf("%s{app} = %d; want Stats' %d", name, v, want)
		}
	}

	unwatch()
	unwatch() // a second call does nothing
	if v := intPoint(metrics(t, reader), "redisson.holds", client); v != -1 {
		t.Errorf("redisson.holds{app} = %d after unwatch; want no data point", v)
	}
	if _, err := a.Watch(c, "app"); err != nil {
		t.Errorf("Watch after unwatch = %v", err)
	}
}
