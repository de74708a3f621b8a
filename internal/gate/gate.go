// Package gate queues the goroutines of one process that want the same distributed lock, so that at
// most one of them contends in Redis at a time and the others wait their turn locally, first come
// first served.
//
// This is what keeps the Redis lock free of starvation inside a process: a goroutine that releases
// and at once asks again goes to the back of the local queue instead of racing the goroutines already
// waiting, and a release never wakes a herd. Between processes, the one contender of each process
// races the others on every release.
package gate

import (
	"context"
	"sync"
)

// Gates holds one FIFO gate per name. The zero value is not usable; use New.
type Gates struct {
	mu sync.Mutex
	// gates holds the names whose turn is taken, each with its FIFO of waiters; a closed channel
	// means the turn was handed over.
	gates map[string][]chan struct{}
}

// New returns an empty set of gates.
func New() *Gates { return &Gates{gates: map[string][]chan struct{}{}} }

// TryEnter takes the turn for name if nobody has it and nobody is queued. It never blocks.
func (g *Gates) TryEnter(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, busy := g.gates[name]; busy {
		return false
	}
	g.gates[name] = nil
	return true
}

// Enter waits for the turn for name, first come first served. It returns nil once the caller has the
// turn (and must Leave later), or ctx.Err() with nothing taken if ctx ends first.
func (g *Gates) Enter(ctx context.Context, name string) error {
	g.mu.Lock()
	q, busy := g.gates[name]
	if !busy {
		g.gates[name] = nil
		g.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	g.gates[name] = append(q, turn)
	g.mu.Unlock()

	select {
	case <-turn:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	q = g.gates[name]
	for i, w := range q {
		if w == turn {
			g.gates[name] = append(q[:i:i], q[i+1:]...)
			g.mu.Unlock()
			return ctx.Err()
		}
	}
	g.mu.Unlock()
	// The turn was handed to us while ctx ended: pass it on.
	g.Leave(name)
	return ctx.Err()
}

// Leave gives the turn for name to the longest waiting goroutine, or frees it. Each successful Enter
// or TryEnter must be matched by exactly one Leave.
func (g *Gates) Leave(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q, busy := g.gates[name]
	if !busy {
		return
	}
	if len(q) == 0 {
		delete(g.gates, name)
		return
	}
	g.gates[name] = q[1:]
	close(q[0])
}

// Len reports how many names have a turn taken.
func (g *Gates) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.gates)
}
