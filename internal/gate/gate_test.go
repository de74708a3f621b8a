package gate

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFIFO(t *testing.T) {
	g := New[string, string]()
	if _, _, err := g.Enter(t.Context(), "k", ""); err != nil {
		t.Fatal(err)
	}
	const n = 5
	order := make(chan int, n)
	for i := range n {
		queued := make(chan struct{})
		go func() {
			go func() {
				// Enter queues synchronously before blocking; wait until it is queued.
				for g.queued("k") < i+1 {
					time.Sleep(time.Millisecond)
				}
				close(queued)
			}()
			if _, _, err := g.Enter(t.Context(), "k", ""); err != nil {
				t.Error(err)
			}
			order <- i
			g.Leave("k")
		}()
		<-queued
	}
	g.Leave("k")
	for want := range n {
		if got := <-order; got != want {
			t.Fatalf("turn %d went to waiter %d; want FIFO", want, got)
		}
	}
	if g.Len() != 0 {
		t.Fatalf("Len() = %d after all left; want 0", g.Len())
	}
}

func TestTryEnter(t *testing.T) {
	g := New[string, string]()
	if !g.TryEnter("a") {
		t.Fatal("TryEnter on a free gate = false")
	}
	if g.TryEnter("a") {
		t.Fatal("TryEnter on a taken gate = true")
	}
	if !g.TryEnter("b") {
		t.Fatal("gates of different names interfere")
	}
	g.Leave("a")
	g.Leave("b")
	if !g.TryEnter("a") {
		t.Fatal("TryEnter after Leave = false")
	}
	g.Leave("a")
}

func TestEnterCancelled(t *testing.T) {
	g := New[string, string]()
	g.TryEnter("k")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		_, _, err := g.Enter(ctx, "k", "")
		done <- err
	}()
	for g.queued("k") < 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Enter() = %v; want context.Canceled", err)
	}
	if g.queued("k") != 0 {
		t.Fatal("cancelled waiter still queued")
	}
	g.Leave("k")
	if g.Len() != 0 {
		t.Fatal("gate still taken after the holder left")
	}
}

// queued reports how many goroutines wait for name (tests only).
func (g *Gates[W, P]) queued(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.gates[name])
}

func TestHandTo(t *testing.T) {
	g := New[string, string]()
	g.TryEnter("k")
	got := make(chan string)
	go func() {
		p, handed, err := g.Enter(t.Context(), "k", "wants")
		if err != nil || !handed {
			t.Error(err, handed)
		}
		got <- p
	}()
	for g.Head("k") == nil {
		time.Sleep(time.Millisecond)
	}
	w := g.Head("k")
	if w.Data != "wants" {
		t.Fatalf("Head().Data = %v; want the waiter's data", w.Data)
	}
	if !g.HandTo("k", w, "the lock") {
		t.Fatal("HandTo(head) = false")
	}
	if p := <-got; p != "the lock" {
		t.Fatalf("waiter got %v; want the payload", p)
	}
	if g.HandTo("k", w, "again") {
		t.Fatal("HandTo a waiter no longer queued = true")
	}
	g.Leave("k")
	if g.Len() != 0 {
		t.Fatal("gate still taken")
	}
}
