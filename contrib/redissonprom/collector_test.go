package redissonprom_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/contrib/redissonprom"
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

// scrape gathers reg, failing the test on an error (e.g. an inconsistent metric).
func scrape(t *testing.T, reg prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := make(map[string]*dto.MetricFamily, len(mfs))
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// series returns the metric of family name whose labels are exactly labels ("k=v" pairs), or nil.
func series(mfs map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	for _, m := range mfs[name].GetMetric() {
		var got []string
		for _, lp := range m.GetLabel() {
			got = append(got, lp.GetName()+"="+lp.GetValue())
		}
		sort.Strings(got)
		sorted := append([]string(nil), labels...)
		sort.Strings(sorted)
		if strings.Join(got, ",") == strings.Join(sorted, ",") {
			return m
		}
	}
	return nil
}

// value is the value of a counter or gauge series; -1 if there is none.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	m := series(mfs, name, labels...)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return -1
}

// histogram is the sample count and sum of a histogram series; count -1 if there is none.
func histogram(mfs map[string]*dto.MetricFamily, name string, labels ...string) (count int64, sum float64) {
	m := series(mfs, name, labels...)
	if m == nil || m.Histogram == nil {
		return -1, 0
	}
	return int64(m.Histogram.GetSampleCount()), m.Histogram.GetSampleSum()
}

// Real lock traffic on a redis-server: N acquisitions and releases, M TryLocks of a held lock, one
// hold lost to ForceUnlock, one acquisition handed over through Redis by the releasing holder of
// another Client, a semaphore's acquisition and busy attempt; the registry then holds exactly those
// counts, histograms with as many samples as events and their sums, and the watched Client's Stats.
func TestCollectorCountsLockTraffic(t *testing.T) {
	const n, m = 5, 3
	srv := redistest.Start(t)
	col := redissonprom.NewCollector()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	// A short watchdog, so that a renewal soon finds the force-unlocked hold gone.
	var handed atomic.Int64 // acquisitions reported handed over
	count := func(e redisson.Event) {
		if e.Kind == redisson.EventAcquired && e.HandedOver {
			handed.Add(1)
		}
	}
	c := newClient(t, srv, redisson.WithEventHook(col.Hook()), redisson.WithEventHook(count),
		redisson.WithWatchdogTimeout(1500*time.Millisecond))
	other := newClient(t, srv) // not hooked: its events are not counted
	unwatch, err := col.Watch(c, "app")
	if err != nil {
		t.Fatal(err)
	}
	defer unwatch()
	ctx := t.Context()

	for range n {
		h, err := c.Lock("orders").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // a hold that lasts, for the sum of the hold histogram
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
		if v := value(scrape(t, reg), "redisson_waiters", "client=app"); v != 1 {
			t.Errorf("redisson_waiters{client=app} = %v while one acquisition waits; want 1", v)
		}
		if err := oh.Unlock(ctx); err != nil { // hands the lock to c's queued waiter
			t.Fatal(err)
		}
		r := <-got
		if r.err != nil {
			t.Fatal(r.err)
		}
		if v := value(scrape(t, reg), "redisson_holds", "client=app"); v != 1 {
			t.Errorf("redisson_holds{client=app} = %v while one lock is held; want 1", v)
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
	eventually(t, 5*time.Second, "the loss to be counted", func() bool {
		return value(scrape(t, reg), "redisson_holds_lost_total", "object=lock", "cause=expired") == 1
	})

	sem := c.Semaphore("slots")
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := sem.TryAcquire(ctx, 1); ok || err != nil {
		t.Fatalf("TryAcquire of an empty semaphore = %v, %v", ok, err)
	}

	before := c.Stats()
	mfs := scrape(t, reg)
	after := c.Stats()
	acquired := n + rounds + 1 // the loop, the hand-over rounds, the one lost
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"redisson_acquisitions_total", []string{"object=lock", "result=acquired"}, float64(acquired)},
		{"redisson_acquisitions_total", []string{"object=lock", "result=busy"}, m},
		{"redisson_acquisitions_total", []string{"object=semaphore", "result=acquired"}, 1},
		{"redisson_acquisitions_total", []string{"object=semaphore", "result=busy"}, 1},
		{"redisson_handovers_total", []string{"object=lock"}, float64(handed.Load())},
		{"redisson_holds_lost_total", []string{"object=lock", "cause=expired"}, 1},
		{"redisson_holds", []string{"client=app"}, 0},
		{"redisson_waiters", []string{"client=app"}, 0},
	}
	for _, ch := range checks {
		if v := value(mfs, ch.name, ch.labels...); v != ch.want {
			t.Errorf("%s%v = %v; want %v", ch.name, ch.labels, v, ch.want)
		}
	}
	if got := len(mfs["redisson_acquisitions_total"].GetMetric()); got != 4 {
		t.Errorf("redisson_acquisitions_total has %d series; want 4 (lock and semaphore, acquired and busy)", got)
	}
	if cnt, sum := histogram(mfs, "redisson_acquire_wait_seconds", "object=lock", "result=acquired"); cnt != int64(acquired) || sum <= 0 {
		t.Errorf("wait histogram of acquired locks: %d samples, sum %v; want %d, > 0", cnt, sum, acquired)
	}
	if cnt, _ := histogram(mfs, "redisson_acquire_wait_seconds", "object=lock", "result=busy"); cnt != m {
		t.Errorf("wait histogram of busy locks: %d samples; want %d", cnt, m)
	}
	cnt, sum := histogram(mfs, "redisson_lock_hold_seconds", "object=lock", "outcome=released")
	if cnt != int64(n+rounds) || sum < (n*2*time.Millisecond).Seconds() {
		t.Errorf("hold histogram of released locks: %d samples, sum %v; want %d, ≥ %v", cnt, sum, n+rounds, (n * 2 * time.Millisecond).Seconds())
	}
	if cnt, sum := histogram(mfs, "redisson_lock_hold_seconds", "object=lock", "outcome=lost"); cnt != 1 || sum <= 0 {
		t.Errorf("hold histogram of lost locks: %d samples, sum %v; want 1, > 0", cnt, sum)
	}
	if _, ok := mfs["redisson_lock_hold_seconds"]; ok && series(mfs, "redisson_lock_hold_seconds", "object=semaphore", "outcome=released") != nil {
		t.Error("a semaphore's hold was observed; semaphores carry no hold time")
	}
	// The Stats counters are the Client's own, read at scrape time.
	for name, f := range map[string]func(redisson.Stats) uint64{
		"redisson_renewals_total":             func(s redisson.Stats) uint64 { return s.Renewed },
		"redisson_renewal_failures_total":     func(s redisson.Stats) uint64 { return s.RenewFailures },
		"redisson_heartbeats_total":           func(s redisson.Stats) uint64 { return s.Heartbeats },
		"redisson_replica_ack_failures_total": func(s redisson.Stats) uint64 { return s.AckFailures },
		"redisson_pubsub_reconnects_total":    func(s redisson.Stats) uint64 { return uint64(s.Reconnects) },
		"redisson_pubsub_subscriptions":       func(s redisson.Stats) uint64 { return uint64(s.Subscriptions) },
	} {
		if v := value(mfs, name, "client=app"); v < float64(f(before)) || v > float64(f(after)) {
			t.Errorf("%s{client=app} = %v; want the Client's Stats, between %d and %d", name, v, f(before), f(after))
		}
	}
}

// Names are labels only when asked for: WithNames keeps the listed names and folds the others
// into "other"; without it there is no name label at all.
func TestCollectorNameLabelIsOptIn(t *testing.T) {
	srv := redistest.Start(t)
	named := redissonprom.NewCollector(redissonprom.WithNames("orders"), redissonprom.WithNamespace("app"))
	plain := redissonprom.NewCollector()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(named, plain)
	c := newClient(t, srv, redisson.WithEventHook(named.Hook()), redisson.WithEventHook(plain.Hook()))
	for _, name := range []string{"orders", "order:1", "order:2"} {
		h, err := c.Lock(name).Lock(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	mfs := scrape(t, reg)
	if v := value(mfs, "app_acquisitions_total", "object=lock", "result=acquired", "name=orders"); v != 1 {
		t.Errorf("app_acquisitions_total{name=orders} = %v; want 1", v)
	}
	if v := value(mfs, "app_acquisitions_total", "object=lock", "result=acquired", "name=other"); v != 2 {
		t.Errorf("app_acquisitions_total{name=other} = %v; want 2", v)
	}
	if v := value(mfs, "redisson_acquisitions_total", "object=lock", "result=acquired"); v != 3 {
		t.Errorf("redisson_acquisitions_total{object=lock,result=acquired} = %v; want 3, with no name label", v)
	}
	if cnt, _ := histogram(mfs, "app_lock_hold_seconds", "object=lock", "outcome=released", "name=other"); cnt != 2 {
		t.Errorf("app_lock_hold_seconds{name=other} has %d samples; want 2", cnt)
	}
}

// Watch reports each watched Client under its label until unwatched, refuses a label twice and a
// nil Client; a Collector watching nothing exports no Stats series.
func TestCollectorWatch(t *testing.T) {
	srv := redistest.Start(t)
	col := redissonprom.NewCollector()
	a, b := newClient(t, srv), newClient(t, srv)
	h, err := a.Lock("w").Lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unlock(context.WithoutCancel(t.Context()))
	ua, err := col.Watch(a, "a")
	if err != nil {
		t.Fatal(err)
	}
	ub, err := col.Watch(b, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := col.Watch(b, "a"); err == nil {
		t.Error("Watch with a label already watched succeeded; want an error")
	}
	if _, err := col.Watch(nil, "c"); err == nil {
		t.Error("Watch(nil) succeeded; want an error")
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	mfs := scrape(t, reg)
	if va, vb := value(mfs, "redisson_holds", "client=a"), value(mfs, "redisson_holds", "client=b"); va != 1 || vb != 0 {
		t.Errorf("redisson_holds: a=%v b=%v; want 1, 0", va, vb)
	}
	ua()
	ua() // a second call does nothing
	if n := testutil.CollectAndCount(col, "redisson_holds"); n != 1 {
		t.Errorf("after unwatching a: %d redisson_holds series; want 1", n)
	}
	if _, err := col.Watch(a, "a"); err != nil { // the label is free again
		t.Errorf("Watch after unwatch = %v", err)
	}
	ub()
	if err := testutil.CollectAndCompare(redissonprom.NewCollector(), strings.NewReader("")); err != nil {
		t.Errorf("a fresh Collector exports something: %v", err)
	}
}
