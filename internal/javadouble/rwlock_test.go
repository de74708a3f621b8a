package javadouble

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestReadWriteLockExclusionAndSharing(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 30*time.Second)
	a, b := newDouble(t, rdb), newDouble(t, rdb)
	name := keyName(t, "rw")
	ra, rb := a.ReadWriteLock(name).ReadLock(), b.ReadWriteLock(name).ReadLock()
	if err := ra.Lock(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	if ok, err := rb.TryLock(ctx, 1, time.Second, 0); !ok || err != nil {
		t.Fatal("second reader refused:", ok, err)
	}
	if mode, _ := rdb.HGet(ctx, name, "mode").Result(); mode != "read" {
		t.Fatalf("mode %q, want read", mode)
	}
	tk := "{" + name + "}:" + a.ID() + ":1:rwlock_timeout:1"
	if ttl, _ := rdb.PTTL(ctx, tk).Result(); ttl <= 0 {
		t.Fatalf("read timeout key %s: TTL %v", tk, ttl)
	}
	w := b.ReadWriteLock(name).WriteLock()
	if ok, _ := w.TryLock(ctx, 2, 0, 0); ok {
		t.Fatal("writer acquired while read-locked")
	}
	got := make(chan error, 1)
	go func() {
		ok, err := w.TryLock(ctx, 2, 20*time.Second, 0)
		if err == nil && !ok {
			err = errors.New("writer not woken")
		}
		got <- err
	}()
	eventually(t, 5*time.Second, "the writer's subscription", func() bool {
		return subscribers(t, rdb, "redisson_rwlock:{"+name+"}") == 1
	})
	if err := ra.Unlock(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := rb.Unlock(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.HGet(ctx, name, b.Owner(2)+":write").Int(); n != 1 {
		t.Fatal("write field missing")
	}
	if ok, _ := ra.TryLock(ctx, 1, 0, 0); ok {
		t.Fatal("reader acquired while write-locked")
	}
	// Two readers of one client wait; the write unlock (message 1) wakes both.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for tid := int64(10); tid < 12; tid++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := a.ReadWriteLock(name).ReadLock()
			ok, err := r.TryLock(ctx, tid, 20*time.Second, 0)
			if err == nil && !ok {
				err = errors.New("reader not woken")
			}
			errs <- err
		}()
	}
	eventually(t, 5*time.Second, "both readers waiting", func() bool {
		return waiting(a, "redisson_rwlock:{"+name+"}") == 2
	})
	if err := w.Unlock(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for tid := int64(10); tid < 12; tid++ {
		if err := a.ReadWriteLock(name).ReadLock().Unlock(ctx, tid); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := rdb.Exists(ctx, name).Result(); n != 0 {
		t.Fatal("hash left after the last read unlock")
	}
}

// A write holder may take the read lock (downgrade); its write unlock then leaves mode read.
func TestReadWriteLockDowngrade(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 10*time.Second)
	c := newDouble(t, rdb)
	name := keyName(t, "rw")
	rw := c.ReadWriteLock(name)
	if err := rw.WriteLock().Lock(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	if ok, err := rw.ReadLock().TryLock(ctx, 1, 0, 0); !ok || err != nil {
		t.Fatal("downgrade refused", ok, err)
	}
	if err := rw.WriteLock().Unlock(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if mode, _ := rdb.HGet(ctx, name, "mode").Result(); mode != "read" {
		t.Fatalf("mode %q after the write unlock, want read", mode)
	}
	if err := rw.ReadLock().Unlock(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := rw.ReadLock().Unlock(ctx, 1); !errors.Is(err, ErrIllegalMonitorState) {
		t.Fatalf("unlock of a free read lock: %v", err)
	}
}

// The read-lock watchdog renews the hash and each per-acquisition timeout key.
func TestReadLockWatchdogRenewsTimeoutKeys(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 10*time.Second)
	c := newDouble(t, rdb, WatchdogTimeout(900*time.Millisecond))
	name := keyName(t, "rw")
	r := c.ReadWriteLock(name).ReadLock()
	for range 2 {
		if err := r.Lock(ctx, 1, 0); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		for _, k := range []string{name, "{" + name + "}:" + c.ID() + ":1:rwlock_timeout:2"} {
			if n, _ := rdb.Exists(ctx, k).Result(); n != 1 {
				t.Fatalf("%s expired under the watchdog", k)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for range 2 {
		if err := r.Unlock(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := rdb.Exists(ctx, name).Result(); n != 0 {
		t.Fatal("hash left")
	}
}
