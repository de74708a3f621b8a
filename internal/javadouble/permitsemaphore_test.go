package javadouble

import (
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

func TestPermitExpirableSemaphoreLeases(t *testing.T) {
	rdb := standalone.rdb(t)
	ctx := ctxFor(t, 20*time.Second)
	a, b := newDouble(t, rdb), newDouble(t, rdb)
	name := keyName(t, "pes")
	p := a.PermitExpirableSemaphore(name)
	if ok, err := p.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	id, err := p.Acquire(ctx, 0)
	if err != nil || len(id) != 32 {
		t.Fatalf("id %q %v", id, err)
	}
	raw, _ := hex.DecodeString(id)
	score, err := rdb.ZScore(ctx, "{"+name+"}:timeout", string(raw)).Result()
	if err != nil || score != nonExpiring {
		t.Fatalf("raw-id member score %v %v, want %d", score, err, int64(nonExpiring))
	}
	if _, ok, _ := b.PermitExpirableSemaphore(name).TryAcquire(ctx, 0, 0); ok {
		t.Fatal("acquired beyond the permits")
	}
	if err := p.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, id); !errors.Is(err, ErrIllegalArgument) {
		t.Fatalf("second release: %v", err)
	}
	// A leased permit that is never released is reclaimed at its expiry by the waiter's retry.
	if _, err := p.Acquire(ctx, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	id2, ok, err := b.PermitExpirableSemaphore(name).TryAcquire(ctx, 10*time.Second, 0)
	if !ok || err != nil {
		t.Fatal("expired permit not reclaimed:", ok, err)
	}
	if n, _ := p.AvailablePermits(ctx); n != 0 {
		t.Fatalf("%d available, want 0", n)
	}
	if err := b.PermitExpirableSemaphore(name).Release(ctx, id2); err != nil {
		t.Fatal(err)
	}
	if n, _ := p.AvailablePermits(ctx); n != 1 {
		t.Fatalf("%d available, want 1", n)
	}
	if _, err := p.TryRelease(ctx, "zz"); !errors.Is(err, ErrIllegalArgument) {
		t.Fatalf("bad id: %v", err)
	}
}
