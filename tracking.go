package redisson

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/track"
)

// Loss tracking (DESIGN §7a): a hold is told at once when its key changes or its master comes
// back without it, through internal/track; the renewals stay the backstop.

// newTracker returns the tracker of c's holds, or nil when tracking is off (WithLossTracking) or rdb
// is of a type whose masters the library cannot dial on its own.
func (c *Client) newTracker() *track.Tracker {
	if !c.cfg.tracking {
		return nil
	}
	cfg := track.Config{
		Check:  c.trackChecks,
		Decode: decodeChecks,
		Load: func(cmd []any) []any {
			return []any{"SCRIPT", "LOAD", scripts.Source(checkScripts[cmd[1].(string)])}
		},
		Confirm: c.confirmGone,
		Active:  c.sched.Gen,
		Gone: func(e *renew.Entry, gen uint64, why error) {
			c.sched.Lost(e, gen, fmt.Errorf("%w: %w", renew.ErrGone, why))
		},
		Log: c.cfg.logger,
	}
	switch r := c.rdb.(type) {
	case *redis.Client:
		opt := r.Options()
		cfg.Master = func(context.Context, string) (*redis.Options, error) { return opt, nil }
	case *redis.ClusterClient:
		var last atomic.Int64
		cfg.Master = func(ctx context.Context, key string) (*redis.Options, error) {
			n, err := r.MasterForKey(ctx, key)
			if err != nil {
				return nil, err
			}
			return n.Options(), nil
		}
		// At most four reloads a second: a failover must be found within a second of its end.
		cfg.Reload = func() {
			now := time.Now().UnixNano()
			if l := last.Load(); now-l >= int64(250*time.Millisecond) && last.CompareAndSwap(l, now) {
				r.ReloadState(context.Background())
			}
		}
	default:
		return nil
	}
	t := track.New(cfg)
	c.sched.OnAdd(func(e *renew.Entry, gen uint64) {
		if renewKinds[e.Kind].hold {
			t.Add(e, gen)
		}
	})
	c.sched.OnRemove(func(e *renew.Entry, gen uint64) {
		if renewKinds[e.Kind].hold {
			t.Ended(e, gen)
		}
	})
	return t
}

// checkScripts are the renewal scripts by hash, for the tracker's SCRIPT LOAD after NOSCRIPT.
var checkScripts = func() map[string]*redis.Script {
	m := map[string]*redis.Script{}
	for _, k := range renewKinds {
		m[k.script.Hash()] = k.script
	}
	return m
}()

// checkCall is one read-only check: the renewal script of one kind with lease 0, for the entries of
// one slot at indices of (at most renew.BatchSize).
type checkCall struct {
	script *redis.Script
	keys   []string
	args   []any
	of     []int
}

// checkCalls groups the checks of entries, all served by one master, into one call per kind and
// slot, at most renew.BatchSize entries each.
func checkCalls(entries []*renew.Entry) []checkCall {
	type group struct{ kind, slot int }
	idx := map[group][]int{}
	var order []group
	for i, e := range entries {
		g := group{e.Kind, e.Group}
		if _, ok := idx[g]; !ok {
			order = append(order, g)
		}
		idx[g] = append(idx[g], i)
	}
	var calls []checkCall
	for _, g := range order {
		all := idx[g]
		for len(all) > 0 {
			n := min(len(all), renew.BatchSize)
			part := all[:n]
			all = all[n:]
			batch := make([]*renew.Entry, n)
			for k, i := range part {
				batch[k] = entries[i]
			}
			script, keys, args := renewCallWith(batch, 0)
			calls = append(calls, checkCall{script, keys, args, part})
		}
	}
	return calls
}

// trackChecks builds the checks of entries as commands for the tracker's own connection (EVALSHA).
func (c *Client) trackChecks(entries []*renew.Entry) (cmds [][]any, of [][]int) {
	for _, k := range checkCalls(entries) {
		cmd := make([]any, 0, 3+len(k.keys)+len(k.args))
		cmd = append(cmd, "EVALSHA", k.script.Hash(), len(k.keys))
		for _, key := range k.keys {
			cmd = append(cmd, key)
		}
		cmds = append(cmds, append(cmd, k.args...))
		of = append(of, k.of)
	}
	return cmds, of
}

// confirmGone runs the checks of entries through the Client's command path (send.go: the master
// its renewals reach), a few calls at a time: one alive flag per entry.
func (c *Client) confirmGone(ctx context.Context, entries []*renew.Entry) ([]bool, error) {
	calls := checkCalls(entries)
	alive := make([]bool, len(entries))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, k := range calls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res, err := c.run(ctx, k.script, k.keys, k.args...).Int64Slice()
			if err == nil && len(res) != len(k.of) {
				err = errors.New("redisson: tracking: unexpected check reply")
			}
			if err != nil {
				errs[i] = err
				return
			}
			for r, j := range k.of {
				alive[j] = res[r] >= 1 // 0: gone; else held (track_check.lua)
			}
		}()
	}
	wg.Wait()
	return alive, errors.Join(errs...)
}

// decodeChecks reads a check's reply (the renewal scripts' check mode: track_check.lua): per
// entry 0 (gone), 1 (held, no expiry) or 2 + the ms it has left.
func decodeChecks(reply any) ([]time.Duration, error) {
	if err, ok := reply.(error); ok {
		return nil, err
	}
	l, ok := reply.([]any)
	if !ok {
		return nil, errors.New("redisson: tracking: unexpected check reply")
	}
	left := make([]time.Duration, len(l))
	for i, v := range l {
		n, ok := v.(int64)
		switch {
		case !ok || n < 0:
			return nil, errors.New("redisson: tracking: unexpected check reply")
		case n == 0:
			left[i] = track.Gone
		case n == 1:
			left[i] = track.NoExpiry
		default:
			left[i] = time.Duration(n-2) * time.Millisecond
		}
	}
	return left, nil
}

// trackerVerdict reports whether err is a loss the tracker found (rather than a renewal): one that
// an owner's own release in flight may have caused, since the tracker sees every change to the key.
func trackerVerdict(err error) bool {
	return errors.Is(err, track.ErrChanged) || errors.Is(err, track.ErrFlushed) || errors.Is(err, track.ErrReconnected)
}
