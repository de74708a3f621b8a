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
	mu    sync.Mutex
	gates map[string]*gate
}

type gate struct {
	waiters []chan struct{} // FIFO; a closed channel means the turn was handed over
}

// New returns an empty set of gates.
func New() *Gates { return &Gates{gates: map[string]*gate{}} }

// TryEnter takes the turn for name if nobody has it and nobody is queued. It never blocks.
func (g *Gates) TryEnter(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, busy := g.gates[name]; busy {
		return false
	}
	g.gates[name] = &gate{}
	return true
}

// Enter waits for the turn for name, first come first served. It returns nil once the caller has the
// turn (and must Leave later), or ctx.Err() with nothing taken if ctx ends first.
func (g *Gates) Enter(ctx context.Context, name string) error {
	g.mu.Lock()
	q, busy := g.gates[name]
	if !busy {
		g.gates[name] = &gate{}
		g.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	q.waiters = append(q.waiters, turn)
	g.mu.Unlock()

	select {
	case <-turn:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	for i, w := range q.waiters {
		if w == turn {
			q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
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
	q := g.gates[name]
	if q == nil {
		return
	}
	if len(q.waiters) == 0 {
		delete(g.gates, name)
		return
	}
	next := q.waiters[0]
	q.waiters = q.waiters[1:]
	close(next)
}

// Len reports how many names have a turn taken.
func (g *Gates) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.gates)
}
