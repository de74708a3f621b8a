package redisson_test

// What an acquisition's error says: every failure matches ErrNotObtained; contention (the lock held
// by another owner, too few permits) and only contention matches ErrBusy, so that a caller can retry
// on one and alert on the others; and the messages say what happened in the library's words.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// acquisition is one acquisition call of some kind, for the tables below: a wait (Lock, RLock,
// Acquire) if wait, else a single attempt unless opts say otherwise (TryLock, TryRLock, Acquire with
// WithWait(0)). It returns the error of an acquisition that did not succeed (a success is released
// and reported as an error).
type acquisition struct {
	name string
	call func(ctx context.Context, c *redisson.Client, obj string, wait bool, opts ...redisson.AcquireOption) error
}

func lockAcquisition(kind string) acquisition {
	return acquisition{kind, func(ctx context.Context, c *redisson.Client, obj string, wait bool, opts ...redisson.AcquireOption) error {
		l := lockOf(c, kind, obj)
		acquire := l.TryLock
		if wait {
			acquire = l.Lock
		}
		h, err := acquire(ctx, opts...)
		if err == nil {
			_ = h.Unlock(ctx)
			return errors.New("acquired")
		}
		return err
	}}
}

var acquisitions = []acquisition{
	lockAcquisition("Lock"), lockAcquisition("FairLock"), lockAcquisition("FencedLock"), lockAcquisition("SpinLock"),
	lockAcquisition("ReadWriteLock"), lockAcquisition("MultiLock"),
	{"ReadWriteLock.TryRLock", func(ctx context.Context, c *redisson.Client, obj string, wait bool, opts ...redisson.AcquireOption) error {
		acquire := c.ReadWriteLock(obj).TryRLock
		if wait {
			acquire = c.ReadWriteLock(obj).RLock
		}
		h, err := acquire(ctx, opts...)
		if err == nil {
			_ = h.Unlock(ctx)
			return errors.New("acquired")
		}
		return err
	}},
	{"Semaphore.Acquire", func(ctx context.Context, c *redisson.Client, obj string, wait bool, opts ...redisson.AcquireOption) error {
		if !wait {
			opts = append([]redisson.AcquireOption{redisson.WithWait(0)}, opts...)
		}
		err := c.Semaphore(obj).Acquire(ctx, 1, opts...)
		if err == nil {
			return errors.New("acquired")
		}
		return err
	}},
	{"PermitExpirableSemaphore.Acquire", func(ctx context.Context, c *redisson.Client, obj string, wait bool, opts ...redisson.AcquireOption) error {
		if !wait {
			opts = append([]redisson.AcquireOption{redisson.WithWait(0)}, opts...)
		}
		ids, err := c.PermitExpirableSemaphore(obj).Acquire(ctx, 1, opts...)
		if err == nil {
			_ = c.PermitExpirableSemaphore(obj).Release(ctx, ids...)
			return errors.New("acquired")
		}
		return err
	}},
}

// take makes obj busy for acquisition a: another Client holds the lock (its write side), or the
// semaphore has no permits (it never had any).
func take(t *testing.T, holder *redisson.Client, a acquisition, obj string) {
	t.Helper()
	switch {
	case strings.HasPrefix(a.name, "ReadWriteLock"):
		mustLock(t, holder.ReadWriteLock(obj), t.Context())
	case strings.Contains(a.name, "Semaphore"):
	default:
		mustLock(t, lockOf(holder, a.name, obj), t.Context())
	}
}

func TestAcquisitionErrorsTellContentionFromFailure(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	holder := newClient(t, srv.Client(t))
	c := newClient(t, srv.Client(t))
	ctx := t.Context()
	for _, a := range acquisitions {
		busy := "busy-" + a.name
		take(t, holder, a, busy)
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		for _, tc := range []struct {
			what string
			ctx  context.Context
			wait bool
			opts []redisson.AcquireOption
			also error // the error must match this too
		}{
			{"a single attempt", ctx, false, nil, nil},
			{"a wait to its bound", ctx, true, []redisson.AcquireOption{redisson.WithWait(100 * time.Millisecond)}, nil},
			{"a wait to the context's deadline", short, true, nil, context.DeadlineExceeded},
		} {
			err := a.call(tc.ctx, c, busy, tc.wait, tc.opts...)
			if !errors.Is(err, redisson.ErrNotObtained) || !errors.Is(err, redisson.ErrBusy) {
				t.Errorf("%s, %s on a busy object: %v; want ErrNotObtained and ErrBusy", a.name, tc.what, err)
			}
			if tc.also != nil && !errors.Is(err, tc.also) {
				t.Errorf("%s, %s on a busy object: %v; want it to match %v too", a.name, tc.what, err, tc.also)
			}
		}
		cancel()

		wrong := "wrong-" + a.name
		for _, k := range []string{wrong, wrong + "-a", wrong + "-b"} { // the MultiLock's parts too
			mustDo(t, "SADD", admin.SAdd(ctx, k, "x").Err())
		}
		if err := a.call(ctx, c, wrong, false); !errors.Is(err, redisson.ErrWrongType) || errors.Is(err, redisson.ErrBusy) ||
			!errors.Is(err, redisson.ErrNotObtained) {
			t.Errorf("%s on a set: %v; want ErrNotObtained and ErrWrongType, not ErrBusy", a.name, err)
		} else if msg := err.Error(); strings.Contains(msg, "user_script") || strings.Contains(msg, "script:") {
			t.Errorf("%s on a set: %q; want the library's words, not the script's location", a.name, msg)
		}
		if err := a.call(ctx, c, "", false); !errors.Is(err, redisson.ErrInvalidArgument) || errors.Is(err, redisson.ErrBusy) {
			t.Errorf("%s of an empty name: %v; want ErrInvalidArgument, not ErrBusy", a.name, err)
		}
	}

	closed := newClient(t, srv.Client(t))
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	for _, a := range acquisitions {
		if err := a.call(ctx, closed, "closed-"+a.name, false); !errors.Is(err, redisson.ErrClosed) || errors.Is(err, redisson.ErrBusy) {
			t.Errorf("%s on a closed Client: %v; want ErrClosed, not ErrBusy", a.name, err)
		}
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, a := range acquisitions {
		err := a.call(ctx, c, "down-"+a.name, false)
		if !errors.Is(err, redisson.ErrNotObtained) || errors.Is(err, redisson.ErrBusy) {
			t.Errorf("%s with Redis stopped: %v; want ErrNotObtained, not ErrBusy", a.name, err)
		}
	}
}
