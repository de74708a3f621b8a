package redisson_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson"
)

// Readers share, a writer excludes everyone, and a writer that waits makes newcomer readers wait
// behind it (while the readers already in keep reading and may re-enter).
func TestReadWriteLockSharingAndWriterPreference(t *testing.T) {
	c, rdb, _ := setup(t)
	d := newClient(t, rdb)
	ctx := t.Context()
	rw, rwD := c.ReadWriteLock("rw"), d.ReadWriteLock("rw")
	r1 := mustRLock(t, rw, ctx)
	r2 := mustRLock(t, rwD, ctx) // another Client reads at once
	if _, err := rwD.TryLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a writer while readers read: %v; want ErrNotObtained", err)
	}
	wgot, cancel := lockAsync(ctx, rwD) // a writer waits
	defer cancel()
	eventually(t, 5*time.Second, "the writer to wait", func() bool { return d.Stats().Waiting == 1 })
	if _, err := rw.TryRLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a newcomer reader while a writer waits: %v; want ErrNotObtained (writer preference)", err)
	}
	inner, err := r1.Reenter(ctx) // a reader already in may re-enter
	if err != nil {
		t.Fatalf("a reader's re-entry while a writer waits: %v", err)
	}
	mustUnlock(t, inner)
	mustUnlock(t, r1)
	select {
	case r := <-wgot:
		t.Fatalf("the writer got the lock while a reader still held it: %v", r.err)
	default:
	}
	mustUnlock(t, r2)
	r := regressWait(t, wgot, 10*time.Second, "the writer to get the lock after the last reader")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if _, err := rw.TryRLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("a reader while a writer holds: %v; want ErrNotObtained", err)
	}
	rgot, cancelR := rLockAsync(ctx, rw)
	defer cancelR()
	mustUnlock(t, r.h)
	rr := regressWait(t, rgot, 10*time.Second, "a waiting reader to get the lock after the writer")
	if rr.err != nil {
		t.Fatal(rr.err)
	}
	mustUnlock(t, rr.h)
}

// The writer downgrades: it reads with a context marked by its write hold, then releases the write
// hold and keeps reading; a reader cannot upgrade.
func TestReadWriteLockDowngradeNoUpgrade(t *testing.T) {
	c, _, _ := setup(t)
	ctx := t.Context()
	rw := c.ReadWriteLock("dg")
	w := mustLockRW(t, rw, ctx)
	if _, err := rw.TryRLock(ctx); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("an unmarked reader beside the writer: %v; want ErrNotObtained", err)
	}
	r, err := rw.RLock(redisson.ContextWithHold(ctx, w))
	if err != nil {
		t.Fatalf("the writer's read: %v", err)
	}
	mustUnlock(t, w) // downgraded
	other, err := c.ReadWriteLock("dg").TryRLock(ctx)
	if err != nil {
		t.Fatalf("another reader after the downgrade: %v", err)
	}
	mustUnlock(t, other)
	if _, err := rw.Lock(redisson.ContextWithHold(ctx, r)); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("an upgrade: %v; want ErrNotObtained at once", err)
	}
	mustUnlock(t, r)
	if locked, err := rw.IsLocked(ctx); err != nil || locked {
		t.Fatalf("after every unlock: locked %v, %v", locked, err)
	}
}

// Each reader has its own lease: a reader whose Client is gone (closed: nothing renews it) lapses
// on its own, and its field leaves the lock's hash, while another, renewed, keeps reading; then a
// waiting writer gets in at the last live reader's release.
func TestReadWriteLockReaderLeasesApart(t *testing.T) {
	_, rdb, _ := setup(t)
	ctx := t.Context()
	alive := newClient(t, rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
	doomed, err := redisson.New(rdb, redisson.WithWatchdogTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	kept := mustRLock(t, alive.ReadWriteLock("apart"), ctx)
	_ = mustRLock(t, doomed.ReadWriteLock("apart"), ctx)
	if err := doomed.Close(); err != nil { // its read hold stays in Redis until its lease ends
		t.Fatal(err)
	}
	readerFields := func() (n int) {
		for _, f := range rdb.HKeys(ctx, "{apart}").Val() {
			if strings.HasPrefix(f, "r:") {
				n++
			}
		}
		return n
	}
	if n := readerFields(); n != 2 {
		t.Fatalf("%d readers in the hash; want 2", n)
	}
	// The live reader's renewals load the hash, which drops the lapsed reader.
	eventually(t, 5*time.Second, "the closed Client's reader to lapse", func() bool { return readerFields() == 1 })
	if err := kept.Context().Err(); err != nil {
		t.Fatalf("the renewed reader lost its hold: %v", context.Cause(kept.Context()))
	}
	w, cancel := lockAsync(ctx, alive.ReadWriteLock("apart"))
	defer cancel()
	eventually(t, 5*time.Second, "the writer to wait", func() bool { return alive.Stats().Waiting == 1 })
	mustUnlock(t, kept)
	r := regressWait(t, w, 10*time.Second, "the writer after the last live reader")
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustUnlock(t, r.h)
}

// 8 readers and 2 writers in 2 Clients for a while: never a writer beside anyone, several readers at
// once, and every writer served; the longest writer wait is printed.
func TestReadWriteLockMixedLoad(t *testing.T) {
	_, rdb, _ := setup(t)
	ctx := t.Context()
	clients := []*redisson.Client{newClient(t, rdb), newClient(t, rdb)}
	var readersIn, writersIn, maxReaders, overlaps, writes atomic.Int64
	var maxWait atomic.Int64
	stop := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for g := range 10 {
		c := clients[g%2]
		writer := g < 2
		spawn(&wg, func() {
			for time.Now().Before(stop) {
				start := time.Now()
				var h *redisson.Hold
				var err error
				if writer {
					h, err = c.ReadWriteLock("mixed").Lock(ctx)
				} else {
					h, err = c.ReadWriteLock("mixed").RLock(ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if writer {
					if d := int64(time.Since(start)); d > maxWait.Load() {
						maxWait.Store(d)
					}
					if writersIn.Add(1) != 1 || readersIn.Load() != 0 {
						overlaps.Add(1)
					}
					time.Sleep(time.Millisecond) // the critical section
					writersIn.Add(-1)
					writes.Add(1)
				} else {
					n := readersIn.Add(1)
					for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
					}
					if writersIn.Load() != 0 {
						overlaps.Add(1)
					}
					time.Sleep(time.Millisecond)
					readersIn.Add(-1)
				}
				if err := h.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("writes %d, most readers at once %d, longest writer wait %v", writes.Load(), maxReaders.Load(), time.Duration(maxWait.Load()))
	if overlaps.Load() != 0 {
		t.Fatalf("%d overlaps of a writer with another holder", overlaps.Load())
	}
	if maxReaders.Load() < 2 || writes.Load() == 0 {
		t.Fatalf("most readers at once %d, writes %d; want readers sharing and writers served", maxReaders.Load(), writes.Load())
	}
}

func mustRLock(t *testing.T, rw *redisson.ReadWriteLock, ctx context.Context) *redisson.Hold {
	t.Helper()
	h, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustLockRW(t *testing.T, rw *redisson.ReadWriteLock, ctx context.Context) *redisson.Hold {
	t.Helper()
	h, err := rw.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// rLockAsync is lockAsync for a read hold.
func rLockAsync(ctx context.Context, rw *redisson.ReadWriteLock) (<-chan lockResult, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	got := make(chan lockResult, 1)
	go func() {
		h, err := rw.RLock(ctx)
		got <- lockResult{h, err}
	}()
	return got, cancel
}
