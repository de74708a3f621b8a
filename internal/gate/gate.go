// Package gate queues the goroutines of one process that want the same object, so that at most one of
// them contends in Redis at a time and the others wait their turn locally, first come first served.
//
// This is what keeps a Redis lock free of starvation inside a process: a goroutine that releases and
// at once asks again goes to the back of the local queue instead of racing the goroutines already
// waiting, and a release never wakes a herd. A turn can be handed to the head waiter together with a
// payload (the lock itself, transferred in Redis by the release), so the waiter needs no round trip
// of its own. A primitive that lets several holders in (a read lock, a semaphore) gives its turn back
// as soon as it has acquired, so that the next local waiter contends too.
//
// Names are the caller's: use one per kind of object and Redis key, so that objects of different
// kinds never share a queue.
package gate

import (
	"context"
	"sync"
)

// Gates holds one FIFO gate per name. W is what a waiter wants (published to whoever hands the turn
// over), P what is handed to it with the turn. The zero value is not usable; use New.
type Gates[W, P any] struct {
	mu sync.Mutex
	// gates holds the names whose turn is taken, each with its FIFO of waiters.
	gates map[string][]*Waiter[W, P]
}

// Waiter is one goroutine queued for a turn.
type Waiter[W, P any] struct {
	Data    W // set by the waiter (what it wants), read by the one handing the turn over
	turn    chan struct{}
	payload P
	handed  bool // the turn came with a payload
}

// New returns an empty set of gates.
func New[W, P any]() *Gates[W, P] { return &Gates[W, P]{gates: map[string][]*Waiter[W, P]{}} }

// TryEnter takes the turn for name if nobody has it and nobody is queued. It never blocks.
func (g *Gates[W, P]) TryEnter(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, busy := g.gates[name]; busy {
		return false
	}
	g.gates[name] = nil
	return true
}

// Enter waits for the turn for name, first come first served; data is published to whoever hands
// the turn over (see Head). It returns with the turn (which must be given up with Leave or HandTo
// later) and the payload handed with it, if any (handed reports whether there was one); or ctx.Err()
// with nothing taken if ctx ends first. A turn handed with a payload at the moment ctx ends is still
// taken: the payload must not be lost.
func (g *Gates[W, P]) Enter(ctx context.Context, name string, data W) (payload P, handed bool, err error) {
	g.mu.Lock()
	q, busy := g.gates[name]
	if !busy {
		g.gates[name] = nil
		g.mu.Unlock()
		return payload, false, nil
	}
	w := &Waiter[W, P]{Data: data, turn: make(chan struct{})}
	g.gates[name] = append(q, w)
	g.mu.Unlock()

	select {
	case <-w.turn:
		return w.payload, w.handed, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	q = g.gates[name]
	for i, o := range q {
		if o == w {
			g.gates[name] = append(q[:i:i], q[i+1:]...)
			g.mu.Unlock()
			return payload, false, ctx.Err()
		}
	}
	g.mu.Unlock()
	// The turn was handed to us while ctx ended.
	if w.handed {
		return w.payload, true, nil
	}
	g.Leave(name)
	return payload, false, ctx.Err()
}

// Head returns the longest waiting goroutine for name, or nil. It never blocks.
func (g *Gates[W, P]) Head(name string) *Waiter[W, P] {
	g.mu.Lock()
	defer g.mu.Unlock()
	if q := g.gates[name]; len(q) > 0 {
		return q[0]
	}
	return nil
}

// HandTo gives the turn for name, with payload, to w if w is still the head of the queue, and
// reports whether it did. If it did not (w gave up meanwhile), the caller keeps the turn.
func (g *Gates[W, P]) HandTo(name string, w *Waiter[W, P], payload P) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.gates[name]
	if len(q) == 0 || q[0] != w {
		return false
	}
	g.gates[name] = q[1:]
	w.payload, w.handed = payload, true
	close(w.turn)
	return true
}

// Leave gives the turn for name to the longest waiting goroutine, or frees it. Each successful Enter
// or TryEnter must be matched by exactly one Leave or successful HandTo.
func (g *Gates[W, P]) Leave(name string) {
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
	close(q[0].turn)
}

// Len reports how many names have a turn taken.
func (g *Gates[W, P]) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.gates)
}
