package redisson_test

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// cmdHook is a go-redis hook that records the commands of a client and can hold them back, to force
// an interleaving in a test.
type cmdHook struct {
	mu       sync.Mutex
	held     chan struct{}                          // non-nil while commands are held back; closed on release
	exempt   func(context.Context) bool             // commands that pass while held (nil: none)
	waiting  int                                    // commands held back right now
	marked   int                                    // of which with a context marked by markKey
	markKey  any                                    // context key of marked commands (nil: none)
	inflight int                                    // commands past the hook and not yet answered
	first    time.Time                              // when the first command passed
	scripts  []time.Time                            // start of every script command answered so far
	before   func(ctx context.Context, name string) // called before each command goes out (nil: none)
}

// hold holds back every command sent from now on, except those exempt(ctx) accepts, until release.
// Commands already past the hook are not affected (see inFlight).
func (h *cmdHook) hold(exempt func(context.Context) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = make(chan struct{})
	}
	h.exempt = exempt
}

// release lets the held commands go, and every later one. It is idempotent.
func (h *cmdHook) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		close(h.held)
		h.held = nil
	}
}

// heldBack is how many commands are held back right now.
func (h *cmdHook) heldBack() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting
}

// heldMarked is how many commands whose context carries markKey are held back right now.
func (h *cmdHook) heldMarked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.marked
}

// setBefore sets a function called before each command goes out (nil: none).
func (h *cmdHook) setBefore(f func(ctx context.Context, name string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.before = f
}

// inFlight is how many commands have passed the hook and are not answered yet.
func (h *cmdHook) inFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inflight
}

// claimed reports whether the client (used by one waiter only) has had two script calls answered
// that started at least claimAfter after its first command. The waiter's first command is
// sent after its wait began, and the second such call belongs to an attempt that began after the
// first one had started, so when the waiter made it, it had waited claimAfter: it claimed.
func (h *cmdHook) claimed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.first.IsZero() {
		return false
	}
	n := 0
	for _, s := range h.scripts {
		if s.Sub(h.first) >= claimAfter {
			n++
		}
	}
	return n >= 2
}

func (h *cmdHook) enter(ctx context.Context, name string) (time.Time, error) {
	counted := false
	marked := h.markKey != nil && ctx.Value(h.markKey) != nil
	defer func() {
		if counted {
			h.mu.Lock()
			h.waiting--
			if marked {
				h.marked--
			}
			h.mu.Unlock()
		}
	}()
	for {
		h.mu.Lock()
		held := h.held
		if held == nil || (h.exempt != nil && h.exempt(ctx)) {
			h.inflight++
			now := time.Now()
			if h.first.IsZero() {
				h.first = now
			}
			before := h.before
			h.mu.Unlock()
			if before != nil {
				before(ctx, name)
			}
			return now, nil
		}
		if !counted {
			counted = true
			h.waiting++
			if marked {
				h.marked++
			}
		}
		h.mu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

func (h *cmdHook) leave(start time.Time, name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inflight--
	switch strings.ToLower(name) {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		h.scripts = append(h.scripts, start)
	}
}

func (h *cmdHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *cmdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start, err := h.enter(ctx, cmd.Name())
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		err = next(ctx, cmd)
		h.leave(start, cmd.Name())
		return err
	}
}

func (h *cmdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start, err := h.enter(ctx, "pipeline")
		if err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		err = next(ctx, cmds)
		h.leave(start, "pipeline")
		return err
	}
}
