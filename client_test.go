package redisson_test

// Client-level behaviour: New, Close, Stats, options.

import (
	"testing"
	"time"

	"github.com/goredisson/redisson"
)

// Client.Stats counts ReadWriteLock holds: with a read hold of one ReadWriteLock and the write hold
// of another under a 300ms watchdog, Held is 2 and Renewed grows within a few renewal rounds
// (Stats: "Held: holds registered with the renewal scheduler", "Renewed: lock renewals made so
// far").
func TestStatsCountReadWriteLockHolds(t *testing.T) {
	c, _, _ := setup(t, redisson.WithWatchdogTimeout(300*time.Millisecond))
	ctx := t.Context()
	r := mustRLock(t, c.ReadWriteLock("rw-stats-r"), ctx)
	defer func() { _ = r.Unlock(ctx) }()
	w := mustLockRW(t, c.ReadWriteLock("rw-stats-w"), ctx)
	defer func() { _ = w.Unlock(ctx) }()
	if held := c.Stats().Held; held != 2 {
		t.Errorf("Stats().Held = %d with a read hold and a write hold held; want 2", held)
	}
	deadline := time.Now().Add(3 * time.Second)
	for c.Stats().Renewed == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := c.Stats().Renewed; got == 0 {
		t.Errorf("Stats().Renewed = 0 after 3s of two holds renewed every 100ms (they are renewed: contexts live %v %v)",
			r.Context().Err() == nil, w.Context().Err() == nil)
	}
}
