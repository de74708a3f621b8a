package wait_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/internal/wait"
	"github.com/goredisson/redisson/redistest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// engine returns an engine over a real redis-server, with a scheduler whose heartbeats always succeed.
func engine(t *testing.T, repoll time.Duration) (*wait.Engine, func(string)) {
	rdb := redistest.Start(t).Client(t)
	hub := pubsub.New(rdb, slog.New(slog.DiscardHandler))
	sched := renew.New(renew.PerBatch(func(_ context.Context, batch []*renew.Entry) ([]bool, error) {
		ok := make([]bool, len(batch))
		for i := range ok {
			ok[i] = true
		}
		return ok, nil
	}), time.Minute, 0)
	closed := make(chan struct{})
	t.Cleanup(func() {
		close(closed)
		sched.Close()
		hub.Close()
	})
	// The publisher may still await PUBLISH's reply when the waiter, woken, has ended the test: a
	// context of its own, and t.Error (it runs on another goroutine).
	publish := func(msg string) {
		if err := rdb.Publish(context.Background(), "wake", msg).Err(); err != nil {
			t.Error(err)
		}
	}
	return &wait.Engine{Hub: hub, Sched: sched, Repoll: repoll, Closed: closed}, publish
}

// A message naming the waiter wakes it and reaches its next attempt, with when its deadline was
// last moved; a queued waiter is kept alive while it waits, and no longer once the wait ends.
func TestWakeByName(t *testing.T) {
	e, publish := engine(t, time.Minute) // only a message can wake it
	w := &wait.Waiter{Channel: "wake", ID: "me", Beat: renew.Entry{Key: "q", Owner: "me", Lease: 3 * time.Second}}
	var mu sync.Mutex
	var attempts []wait.Woken
	queued := make(chan struct{}, 4)
	published := make(chan struct{})
	defer func() {
		select { // the publisher is done (or, if the wait failed early, never started)
		case <-published:
		case <-time.After(10 * time.Second):
		}
	}()
	err := func() error {
		go func() {
			defer close(published)
			<-queued
			<-queued // the attempt after the subscription is confirmed
			publish("someone-else")
			publish("me|42")
		}()
		return e.Wait(t.Context(), w, func(_ context.Context, woken wait.Woken) (wait.Outcome, error) {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, woken)
			if woken.Message != "" {
				return wait.Outcome{Acquired: true}, nil
			}
			queued <- struct{}{}
			return wait.Outcome{Queued: true, Retry: -1}, nil
		})
	}()
	if err != nil {
		t.Fatal(err)
	}
	last := attempts[len(attempts)-1]
	if last.Message != "me|42" || last.Since.IsZero() {
		t.Fatalf("the last attempt was woken by %+v; want the message naming the waiter, with a time", last)
	}
	if len(attempts) != 3 {
		t.Fatalf("%d attempts; want 3: first, after the subscription, after the message (others' messages wake nobody)", len(attempts))
	}
	if e.Sched.Active(&w.Beat) {
		t.Fatal("the waiter is still kept alive after its wait ended")
	}
}

// A wait ends with its context, or with the Client; the heartbeat goes with it.
func TestWaitEnds(t *testing.T) {
	e, _ := engine(t, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	w := &wait.Waiter{Channel: "wake", ID: "me", Beat: renew.Entry{Key: "q", Owner: "me", Lease: 3 * time.Second}}
	n := 0
	err := e.Wait(ctx, w, func(context.Context, wait.Woken) (wait.Outcome, error) {
		n++
		return wait.Outcome{Queued: true, Retry: -1}, nil
	})
	if !errors.Is(err, context.DeadlineExceeded) || n < 2 {
		t.Fatalf("Wait = %v after %d attempts; want the context's error after re-polls", err, n)
	}
	if e.Sched.Active(&w.Beat) {
		t.Fatal("the waiter is still kept alive after its wait ended")
	}
	boom := errors.New("boom")
	if err := e.Wait(t.Context(), w, func(context.Context, wait.Woken) (wait.Outcome, error) {
		return wait.Outcome{}, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Wait = %v; want the attempt's error", err)
	}
}
