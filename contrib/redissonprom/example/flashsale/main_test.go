package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// One round of the sale on a throwaway redis-server, then a scrape of /metrics over HTTP: every
// buyer's acquisition is counted, with its wait, and each watched Client's Stats are there.
func TestOneRoundServesMetrics(t *testing.T) {
	const buyers, clients = 40, 2
	var body string
	cfg := config{Listen: "127.0.0.1:0", Clients: clients, Buyers: buyers, Stock: 10, Rounds: 1,
		served: func(url string) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				t.Error(err)
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("GET %s: %v", url, err)
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %s, %v", url, resp.Status, err)
			}
			body = string(b)
			http.DefaultClient.CloseIdleConnections()
		}}
	var out bytes.Buffer
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v; output:\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "round 1: sold 10 of 10 items to 40 buyers") {
		t.Errorf("output lacks the round's line:\n%s", out.String())
	}
	lines := make(map[string]bool)
	for _, l := range strings.Split(body, "\n") {
		lines[l] = true
	}
	for _, want := range []string{
		`redisson_acquisitions_total{object="lock",result="acquired"} 40`,
		`redisson_acquire_wait_seconds_count{object="lock",result="acquired"} 40`,
		`redisson_lock_hold_seconds_count{object="lock",outcome="released"} 40`,
		`redisson_holds{client="client-0"} 0`,
		`redisson_holds{client="client-1"} 0`,
		`redisson_waiters{client="client-1"} 0`,
		`redisson_replica_ack_failures_total{client="client-0"} 0`,
		`# TYPE redisson_acquire_wait_seconds histogram`,
		`# TYPE redisson_renewals_total counter`,
	} {
		if !lines[want] {
			t.Errorf("/metrics lacks the line %q", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}
