package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// eventLog records the events of a Client's hook.
type eventLog struct {
	mu     sync.Mutex
	events []redisson.Event
}

func (l *eventLog) hook(e redisson.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// take returns the events recorded so far and forgets them.
func (l *eventLog) take() []redisson.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := l.events
	l.events = nil
	return ev
}

// one returns the single event recorded since the last take, failing the test otherwise. It waits
// for the event a little: a loss is reported just after the hold's context ends.
func (l *eventLog) one(t *testing.T, what string) redisson.Event {
	t.Helper()
	eventually(t, 5*time.Second, what+" to be reported", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.events) > 0
	})
	ev := l.take()
	if len(ev) != 1 {
		t.Fatalf("%s: %d events %v; want 1", what, len(ev), ev)
	}
	return ev[0]
}

type ctxMark struct{}

// checkEvent fails the test unless e is of kind, object and cause, with the caller's context values.
func checkEvent(t *testing.T, what string, e redisson.Event, kind redisson.EventKind, object, cause string) {
	t.Helper()
	if e.Kind != kind || e.Object != object || e.Cause() != cause {
		t.Errorf("%s: event %v %q cause %q (err %v); want %v %q cause %q", what, e.Kind, e.Object, e.Cause(), e.Err, kind, object, cause)
	}
	if e.Ctx == nil || e.Ctx.Value(ctxMark{}) != what {
		t.Errorf("%s: event's context does not carry the caller's values", what)
	}
}

// Every lock kind reports its acquisitions, failed acquisitions (busy, wait bound, cancelled),
// releases and losses (force-unlocked, fixed lease over, Close) through the hook, with its object
// kind, the caller's context, the wait, the attempts and the time held; re-entries report nothing.
func TestEventsOfEveryLockKind(t *testing.T) {
	t.Parallel()
	for _, compat := range []bool{false, true} {
		for _, kind := range []string{redisson.ObjectLock, redisson.ObjectFairLock, redisson.ObjectFencedLock, redisson.ObjectSpinLock,
			redisson.ObjectReadLock, redisson.ObjectWriteLock} {
			if compat && (kind == redisson.ObjectFencedLock || kind == redisson.ObjectSpinLock) {
				continue // refused on a compat Client
			}
			t.Run(fmt.Sprintf("%s/compat=%v", kind, compat), func(t *testing.T) {
				t.Parallel()
				srv := redistest.Start(t)
				log := &eventLog{}
				// A short watchdog, so that a renewal soon finds a force-unlocked hold gone.
				opts := []redisson.Option{redisson.WithEventHook(log.hook), redisson.WithWatchdogTimeout(1500 * time.Millisecond)}
				if compat {
					opts = append(opts, redisson.WithRedissonCompat())
				}
				c := newClient(t, srv.Client(t), opts...)
				other := newClient(t, srv.Client(t), opts[1:]...)
				of := func(c *redisson.Client) redisson.Locker {
					switch kind {
					case redisson.ObjectFairLock:
						return c.FairLock("ev")
					case redisson.ObjectFencedLock:
						return c.FencedLock("ev")
					case redisson.ObjectSpinLock:
						return c.SpinLock("ev")
					case redisson.ObjectReadLock:
						return readSide{c.ReadWriteLock("ev")}
					case redisson.ObjectWriteLock:
						return c.ReadWriteLock("ev")
					}
					return c.Lock("ev")
				}
				l := of(c)
				mark := func(what string) context.Context { return context.WithValue(t.Context(), ctxMark{}, what) }

				h := mustLock(t, l, mark("acquire"))
				e := log.one(t, "acquire")
				checkEvent(t, "acquire", e, redisson.EventAcquired, kind, "")
				if e.Attempts < 1 || e.Wait <= 0 || e.HandedOver || e.Name != "ev" {
					t.Errorf("acquire: %+v; want attempts ≥ 1, a wait, not handed over, name ev", e)
				}
				inner, err := h.Reenter(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				mustUnlock(t, inner)
				if ev := log.take(); len(ev) != 0 {
					t.Errorf("re-entry and partial unlock reported %v; want nothing", ev)
				}
				mustUnlock(t, h)
				e = log.one(t, "release")
				checkEvent(t, "acquire", e, redisson.EventReleased, kind, "") // the hold's context: the acquiring caller's values
				if e.Held <= 0 {
					t.Errorf("release: Held = %v; want > 0", e.Held)
				}

				// Failed acquisitions, while another Client holds the lock (exclusively).
				blocker := of(other)
				if kind == redisson.ObjectReadLock {
					blocker = other.ReadWriteLock("ev")
				}
				bh := mustLock(t, blocker, t.Context())
				if _, err := l.TryLock(mark("busy")); !errors.Is(err, redisson.ErrNotObtained) {
					t.Fatalf("TryLock of a held lock = %v; want ErrNotObtained", err)
				}
				checkEvent(t, "busy", log.one(t, "busy"), redisson.EventNotObtained, kind, redisson.CauseBusy)
				if _, err := l.TryLock(mark("timeout"), redisson.WithWait(50*time.Millisecond)); !errors.Is(err, redisson.ErrNotObtained) {
					t.Fatalf("TryLock(WithWait) of a held lock = %v; want ErrNotObtained", err)
				}
				checkEvent(t, "timeout", log.one(t, "timeout"), redisson.EventNotObtained, kind, redisson.CauseTimeout)
				cctx, cancel := context.WithCancel(mark("canceled"))
				got, _ := lockAsync(cctx, l)
				awaitWaiting(t, c)
				cancel()
				if r := recvWithin(t, got, 5*time.Second, "the cancelled Lock"); !errors.Is(r.err, context.Canceled) {
					t.Fatalf("cancelled Lock = %v; want context.Canceled", r.err)
				}
				e = log.one(t, "canceled")
				checkEvent(t, "canceled", e, redisson.EventNotObtained, kind, redisson.CauseCanceled)
				if e.Attempts < 1 {
					t.Errorf("cancelled wait: Attempts = %d; want ≥ 1", e.Attempts)
				}
				mustUnlock(t, bh)
				other.Close()

				// Losses: force-unlocked, fixed lease over, Close.
				h = mustLock(t, l, mark("expired"))
				log.take()
				if ok, err := l.ForceUnlock(t.Context()); !ok || err != nil {
					t.Fatalf("ForceUnlock = %v, %v", ok, err)
				}
				<-h.Context().Done()
				e = log.one(t, "expired")
				checkEvent(t, "expired", e, redisson.EventLost, kind, redisson.CauseExpired)
				if !errors.Is(e.Err, redisson.ErrLockLost) || e.Held <= 0 {
					t.Errorf("expired: err %v held %v; want ErrLockLost, > 0", e.Err, e.Held)
				}
				h = mustLock(t, l, mark("lease_ended"), redisson.WithLease(300*time.Millisecond))
				log.take()
				<-h.Context().Done()
				checkEvent(t, "lease_ended", log.one(t, "lease_ended"), redisson.EventLost, kind, redisson.CauseLeaseEnded)
				eventually(t, 5*time.Second, "the lease to end in Redis", func() bool {
					ok, err := l.IsLocked(t.Context())
					return err == nil && !ok
				})
				mustLock(t, l, mark("closed"))
				log.take()
				c.Close()
				checkEvent(t, "closed", log.one(t, "closed"), redisson.EventLost, kind, redisson.CauseClosed)
			})
		}
	}
}

// readSide is the read side of a ReadWriteLock as a Locker.
type readSide struct{ *redisson.ReadWriteLock }

func (r readSide) Lock(ctx context.Context, opts ...redisson.AcquireOption) (*redisson.Hold, error) {
	return r.RLock(ctx, opts...)
}

func (r readSide) TryLock(ctx context.Context, opts ...redisson.AcquireOption) (*redisson.Hold, error) {
	return r.TryRLock(ctx, opts...)
}

// awaitWaiting waits until an acquisition of c waits.
func awaitWaiting(t *testing.T, c *redisson.Client) {
	t.Helper()
	eventually(t, 5*time.Second, "an acquisition to wait", func() bool { return c.Stats().Waiting > 0 })
}

// A Lock handed over by its releasing holder to the next goroutine of the Client is reported as
// such, with no attempt of the waiter's own.
func TestEventsReportHandOver(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	c, _, _ := setup(t, redisson.WithEventHook(log.hook))
	l := c.Lock("handed")
	h := mustLock(t, l, t.Context())
	got, cancel := lockAsync(t.Context(), l)
	defer cancel()
	eventually(t, 5*time.Second, "the second goroutine to wait in the local queue", func() bool { return redisson.LocalWaiting(c, "handed") })
	log.take()
	mustUnlock(t, h)
	r := recvWithin(t, got, 5*time.Second, "the waiting Lock")
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer mustUnlock(t, r.h)
	var acquired []redisson.Event
	for _, e := range log.take() {
		if e.Kind == redisson.EventAcquired {
			acquired = append(acquired, e)
		}
	}
	if len(acquired) != 1 || !acquired[0].HandedOver || acquired[0].Attempts != 0 {
		t.Fatalf("acquisitions reported %+v; want one handed over, with no attempt", acquired)
	}
}

// Semaphores report acquisitions and failed ones with the permits; a PermitExpirableSemaphore also
// reports each lost permit.
func TestEventsOfSemaphores(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	c, _, _ := setup(t, redisson.WithEventHook(log.hook))
	mark := func(what string) context.Context { return context.WithValue(t.Context(), ctxMark{}, what) }
	s := c.Semaphore("evsem")
	if _, err := s.TrySetPermits(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(mark("acquire"), 2); err != nil {
		t.Fatal(err)
	}
	e := log.one(t, "acquire")
	checkEvent(t, "acquire", e, redisson.EventAcquired, redisson.ObjectSemaphore, "")
	if e.Permits != 2 || e.Attempts != 1 {
		t.Errorf("acquire: %+v; want 2 permits, 1 attempt", e)
	}
	if ok, err := s.TryAcquire(mark("busy"), 1); ok || err != nil {
		t.Fatalf("TryAcquire = %v, %v; want false, nil", ok, err)
	}
	checkEvent(t, "busy", log.one(t, "busy"), redisson.EventNotObtained, redisson.ObjectSemaphore, redisson.CauseBusy)
	if ok, err := s.TryAcquire(mark("timeout"), 1, redisson.WithWait(50*time.Millisecond)); ok || err != nil {
		t.Fatalf("TryAcquire(WithWait) = %v, %v; want false, nil", ok, err)
	}
	checkEvent(t, "timeout", log.one(t, "timeout"), redisson.EventNotObtained, redisson.ObjectSemaphore, redisson.CauseTimeout)

	p := c.PermitExpirableSemaphore("evpes")
	if _, err := p.TrySetPermits(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	held, err := p.AcquireHeld(mark("lease_ended"), 2, redisson.WithLease(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	checkEvent(t, "lease_ended", log.one(t, "lease_ended"), redisson.EventAcquired, redisson.ObjectPermitSemaphore, "")
	<-held.Context().Done()
	eventually(t, 5*time.Second, "both permits to be reported lost", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.events) >= 2
	})
	for _, e := range log.take() {
		checkEvent(t, "lease_ended", e, redisson.EventLost, redisson.ObjectPermitSemaphore, redisson.CauseLeaseEnded)
		if e.Permits != 1 {
			t.Errorf("lost permit: Permits = %d; want 1", e.Permits)
		}
	}
}

// Stats counts failed renewals: while the server does not answer, each renewal round of a held
// lock fails, and the hold is lost once its lease may lapse.
func TestStatsCountRenewalFailures(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, _ := refusableProxyClient(t, srv, p)
	log := &eventLog{}
	c := newClient(t, rdb, redisson.WithWatchdogTimeout(time.Second), redisson.WithEventHook(log.hook))
	h := mustLock(t, c.Lock("unrenewed"), t.Context())
	p.Blackhole(true)
	<-h.Context().Done()
	p.Blackhole(false)
	if s := c.Stats(); s.RenewFailures == 0 {
		t.Errorf("Stats().RenewFailures = 0 after a hold lost to failed renewals (%+v)", s)
	}
	var lost []redisson.Event
	eventually(t, 5*time.Second, "the loss to be reported", func() bool { // after the signal, off the scheduler
		for _, e := range log.take() {
			if e.Kind == redisson.EventLost {
				lost = append(lost, e)
			}
		}
		return len(lost) > 0
	})
	if len(lost) != 1 || lost[0].Cause() != redisson.CauseRenewalFailed {
		t.Fatalf("losses reported %v; want one, renewal_failed", lost)
	}
}

// Several hooks all see every event, in the order they were given.
func TestEventHooksRunInOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	hook := func(name string) func(redisson.Event) {
		return func(e redisson.Event) {
			mu.Lock()
			seen = append(seen, name+":"+e.Kind.String())
			mu.Unlock()
		}
	}
	c, _, _ := setup(t, redisson.WithEventHook(hook("a")), redisson.WithEventHook(hook("b")))
	mustUnlock(t, mustLock(t, c.Lock("two-hooks"), t.Context()))
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(seen); got != "[a:acquired b:acquired a:released b:released]" {
		t.Fatalf("hooks saw %s; want [a:acquired b:acquired a:released b:released]", got)
	}
}

// mark returns a context derived from t's carrying what as its ctxMark value: the events of one
// acquisition (and of its hold) carry it.
func markCtx(t *testing.T, what string) context.Context {
	return context.WithValue(t.Context(), ctxMark{}, what)
}

// checkPaired fails the test unless the events marked what (see markCtx) are those of one
// acquisition: one EventNotObtained, or one EventAcquired followed by at most one EventReleased or
// EventLost (exactly one if ended). It returns them.
func checkPaired(t *testing.T, events []redisson.Event, what string, ended bool) []redisson.Event {
	t.Helper()
	var mine []redisson.Event
	for _, e := range events {
		if e.Ctx != nil && e.Ctx.Value(ctxMark{}) == what {
			mine = append(mine, e)
		}
	}
	kinds := make([]redisson.EventKind, len(mine))
	for i, e := range mine {
		kinds[i] = e.Kind
	}
	switch {
	case len(mine) == 1 && mine[0].Kind == redisson.EventNotObtained:
	case len(mine) == 1 && mine[0].Kind == redisson.EventAcquired && !ended:
	case len(mine) == 2 && mine[0].Kind == redisson.EventAcquired &&
		(mine[1].Kind == redisson.EventReleased || mine[1].Kind == redisson.EventLost):
	default:
		t.Errorf("%s: events %v; want one not_obtained, or one acquired then one released or lost", what, kinds)
	}
	return mine
}

// A goroutine handed the lock by a local release as the Client closes has one outcome: the lock
// (EventAcquired, then EventLost to Close) or a failure (EventNotObtained), never both, and no loss
// of a hold it was never given. The hook holds the hand-over's report while Close runs.
func TestEventsOfLocalHandOverRacingClose(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	handed, lost, unblock := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var handedOnce, lostOnce, unblockOnce sync.Once
	release := func() { unblockOnce.Do(func() { close(unblock) }) }
	defer release()
	hook := func(e redisson.Event) {
		log.hook(e)
		switch {
		case e.Kind == redisson.EventAcquired && e.HandedOver:
			handedOnce.Do(func() {
				close(handed)
				<-unblock
			})
		case e.Kind == redisson.EventLost:
			lostOnce.Do(func() { close(lost) })
		}
	}
	c, _, _ := setup(t, redisson.WithEventHook(hook))
	l := c.Lock("handclose")
	h := mustLock(t, l, markCtx(t, "first"))
	got, cancel := lockAsync(markCtx(t, "heir"), l)
	defer cancel()
	eventually(t, 5*time.Second, "the heir to wait in the local queue", func() bool { return redisson.LocalWaiting(c, "handclose") })
	unlocked := make(chan error, 1)
	go func() { unlocked <- h.Unlock(t.Context()) }()
	recvWithin(t, handed, 5*time.Second, "the hand-over to be reported")
	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select { // Close has ended the heir's hold, or returned
	case <-lost:
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close neither ended a hold nor returned")
	}
	release()
	r := recvWithin(t, got, 5*time.Second, "the heir's Lock")
	recvWithin(t, closed, 10*time.Second, "Close")
	recvWithin(t, unlocked, 5*time.Second, "the first holder's Unlock")
	if r.err == nil && r.h.Context().Err() == nil {
		t.Errorf("the heir's hold outlived Close")
	}
	ev := log.take()
	checkPaired(t, ev, "first", true)
	heir := checkPaired(t, ev, "heir", true)
	if (r.err == nil) != (len(heir) > 0 && heir[0].Kind == redisson.EventAcquired) {
		t.Errorf("the heir's Lock returned %v; its events %v disagree", r.err, heir)
	}
}

// A leased permit that ends before its acquisition is reported (a lease too short for the round
// trip) is reported lost after the acquisition, never before it.
func TestEventsOfLeasedPermitsFollowTheirAcquisition(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	c, _, _ := setup(t, redisson.WithEventHook(log.hook))
	p := c.PermitExpirableSemaphore("evlate")
	if _, err := p.TrySetPermits(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	held, err := p.AcquireHeld(markCtx(t, "late"), 2, redisson.WithLease(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	<-held.Context().Done()
	eventually(t, 5*time.Second, "the acquisition and both losses to be reported", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.events) >= 3
	})
	ev := log.take()
	kinds := make([]redisson.EventKind, len(ev))
	for i, e := range ev {
		kinds[i] = e.Kind
	}
	if fmt.Sprint(kinds) != "[acquired lost lost]" {
		t.Fatalf("events %v; want [acquired lost lost]", kinds)
	}
}

// A single attempt (WithWait(0)) of a semaphore's Acquire that finds too few permits is busy, as a
// Lock's is, not a timeout.
func TestEventsOfSemaphoreSingleAttemptAreBusy(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	c, _, _ := setup(t, redisson.WithEventHook(log.hook))
	s := c.Semaphore("evsingle")
	if err := s.Acquire(markCtx(t, "sem"), 1, redisson.WithWait(0)); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("Acquire(WithWait(0)) of an empty semaphore = %v; want ErrNotObtained", err)
	}
	checkEvent(t, "sem", log.one(t, "sem"), redisson.EventNotObtained, redisson.ObjectSemaphore, redisson.CauseBusy)
	p := c.PermitExpirableSemaphore("evsingle2")
	if _, err := p.Acquire(markCtx(t, "pes"), 1, redisson.WithWait(0)); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("Acquire(WithWait(0)) of an empty semaphore = %v; want ErrNotObtained", err)
	}
	checkEvent(t, "pes", log.one(t, "pes"), redisson.EventNotObtained, redisson.ObjectPermitSemaphore, redisson.CauseBusy)
}

// A waiter of another Client handed the lock through Redis by a release (a hand-over message) is
// reported as handed over, its attempts counted (the queued one), and the release as a release.
func TestEventsReportHandOverThroughRedis(t *testing.T) {
	t.Parallel()
	for kind, qkind := range map[string]string{redisson.ObjectLock: "Lock", redisson.ObjectFairLock: "FairLock", redisson.ObjectFencedLock: "FencedLock"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			admin := srv.Client(t)
			log := &eventLog{}
			a := newClient(t, srv.Client(t), redisson.WithEventHook(log.hook))
			b := newClient(t, srv.Client(t), redisson.WithEventHook(log.hook))
			of := func(c *redisson.Client) redisson.Locker {
				switch kind {
				case redisson.ObjectFairLock:
					return c.FairLock("xho")
				case redisson.ObjectFencedLock:
					return c.FencedLock("xho")
				}
				return c.Lock("xho")
			}
			h := mustLock(t, of(a), markCtx(t, "holder"))
			got, cancel := lockAsync(markCtx(t, "waiter"), of(b))
			defer cancel()
			q, _ := redisson.QueueKeys(qkind, "xho")
			awaitQueuedAsleep(t, admin, b, "xho", q, 1)
			mustUnlock(t, h)
			r := recvWithin(t, got, 5*time.Second, "the waiter")
			if r.err != nil {
				t.Fatal(r.err)
			}
			mustUnlock(t, r.h)
			ev := log.take()
			checkPaired(t, ev, "holder", true)
			w := checkPaired(t, ev, "waiter", true)
			if len(w) > 0 && (!w[0].HandedOver || w[0].Attempts < 1) {
				t.Errorf("waiter's acquisition %+v; want handed over, attempts ≥ 1", w[0])
			}
		})
	}
}

// An acquisition or an unlock whose reply is lost (and re-sent, or undone) is still one event: the
// acquisition's one outcome, the hold's one end.
func TestEventsOfLostReplies(t *testing.T) {
	t.Parallel()
	for _, compat := range []bool{false, true} {
		kinds := []string{"Lock", "FairLock", "FencedLock", "SpinLock", "ReadWriteLock"}
		if compat {
			kinds = []string{"CompatLock", "CompatFairLock", "CompatReadWriteLock"}
		}
		for _, kind := range kinds {
			t.Run(kind, func(t *testing.T) {
				t.Parallel()
				srv := redistest.Start(t)
				p := redistest.NewProxy(t, srv.Addr())
				rdb, _ := proxiedClient(t, srv, p)
				log := &eventLog{}
				opts := []redisson.Option{redisson.WithEventHook(log.hook)}
				if compat {
					opts = append(opts, redisson.WithRedissonCompat())
				}
				c := newClient(t, rdb, opts...)
				l := lockOf(c, kind, "lostreply")
				mustUnlock(t, mustLock(t, l, t.Context())) // loads the scripts, pools a connection
				log.take()
				for i, op := range []string{"try lock", "lock", "unlock"} {
					what := fmt.Sprintf("%s-%d", op, i)
					var h *redisson.Hold
					var err error
					if op == "unlock" {
						h = mustLock(t, l, markCtx(t, what))
						p.DropReplies(1)
						_ = h.Unlock(t.Context())
					} else {
						p.DropReplies(1)
						if op == "lock" {
							h, err = l.Lock(markCtx(t, what))
						} else {
							h, err = l.TryLock(markCtx(t, what))
						}
						if err == nil {
							mustUnlock(t, h)
						}
					}
					eventually(t, 5*time.Second, "no hold left", func() bool { return c.Stats().Held == 0 })
					checkPaired(t, log.take(), what, err == nil)
				}
			})
		}
	}
}

// A MultiLock whose acquisition fails midway gives back the parts it took: each part's acquisition
// is paired with its release, the failed part reports its failure (busy), and the group nothing of
// its own.
func TestEventsOfMultiLockFailingMidway(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	log := &eventLog{}
	c := newClient(t, srv.Client(t), redisson.WithEventHook(log.hook))
	other := newClient(t, srv.Client(t))
	bh := mustLock(t, other.FairLock("mid-b"), t.Context())
	ml := redisson.NewMultiLock(c.Lock("mid-a"), c.FairLock("mid-b"))
	if _, err := ml.TryLock(markCtx(t, "group")); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("TryLock of a MultiLock with a part held = %v; want ErrNotObtained", err)
	}
	if _, err := ml.Lock(markCtx(t, "bounded"), redisson.WithWait(100*time.Millisecond)); !errors.Is(err, redisson.ErrNotObtained) {
		t.Fatalf("Lock(WithWait) of a MultiLock with a part held = %v; want ErrNotObtained", err)
	}
	mustUnlock(t, bh)
	ev := log.take()
	var acquired, released, notObtained int
	for _, e := range ev {
		switch e.Kind {
		case redisson.EventAcquired:
			acquired++
			if e.Object != redisson.ObjectLock {
				t.Errorf("acquired %q; want only part a (a lock)", e.Object)
			}
		case redisson.EventReleased:
			released++
		case redisson.EventNotObtained:
			if e.Object == redisson.ObjectFairLock && e.Cause() == redisson.CauseBusy {
				notObtained++ // else part a, whose wait ended with the group's
			}
		default:
			t.Errorf("unexpected event %v", e.Kind)
		}
		if e.Ctx == nil || (e.Ctx.Value(ctxMark{}) != "group" && e.Ctx.Value(ctxMark{}) != "bounded") {
			t.Errorf("event %v without the caller's context values", e.Kind)
		}
	}
	// (Part b's call in the last round may come after the group's wait ended: refused before any
	// attempt, it reports nothing.)
	if acquired == 0 || acquired != released || notObtained == 0 {
		t.Errorf("parts: %d acquired, %d released, %d of part b not obtained (busy); want as many released as acquired, and b busy", acquired, released, notObtained)
	}
}

// Failed acquisitions are classified by cause: a Redis error (ErrWrongType) is an error, the
// context's deadline a timeout, a TryLock of a lock another goroutine of the same Client holds busy
// (with no attempt in Redis).
func TestEventsClassifyFailures(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	c, admin, _ := setup(t, redisson.WithEventHook(log.hook))
	mustDo(t, "SET", admin.HSet(t.Context(), "wrongtype", "f", "v").Err())
	if _, err := c.Lock("wrongtype").TryLock(markCtx(t, "error")); !errors.Is(err, redisson.ErrWrongType) {
		t.Fatalf("TryLock of a hash = %v; want ErrWrongType", err)
	}
	checkEvent(t, "error", log.one(t, "error"), redisson.EventNotObtained, redisson.ObjectLock, redisson.CauseError)
	if err := c.Semaphore("wrongtype").Acquire(markCtx(t, "error"), 1); !errors.Is(err, redisson.ErrWrongType) {
		t.Fatalf("Acquire of a hash = %v; want ErrWrongType", err)
	}
	checkEvent(t, "error", log.one(t, "error"), redisson.EventNotObtained, redisson.ObjectSemaphore, redisson.CauseError)

	l := c.Lock("classified")
	h := mustLock(t, l, t.Context())
	log.take()
	e := func() redisson.Event {
		_, err := l.TryLock(markCtx(t, "busy"))
		if !errors.Is(err, redisson.ErrNotObtained) {
			t.Fatalf("TryLock of a lock held in this Client = %v; want ErrNotObtained", err)
		}
		return log.one(t, "busy")
	}()
	checkEvent(t, "busy", e, redisson.EventNotObtained, redisson.ObjectLock, redisson.CauseBusy)
	if e.Attempts != 0 {
		t.Errorf("TryLock of a lock held in this Client: %d attempts; want 0", e.Attempts)
	}
	dctx, cancel := context.WithTimeout(markCtx(t, "deadline"), 100*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held lock until a deadline = %v; want DeadlineExceeded", err)
	}
	checkEvent(t, "deadline", log.one(t, "deadline"), redisson.EventNotObtained, redisson.ObjectLock, redisson.CauseTimeout)
	sctx, scancel := context.WithTimeout(markCtx(t, "deadline"), 100*time.Millisecond)
	defer scancel()
	if err := c.Semaphore("classified-sem").Acquire(sctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire of an empty semaphore until a deadline = %v; want DeadlineExceeded", err)
	}
	checkEvent(t, "deadline", log.one(t, "deadline"), redisson.EventNotObtained, redisson.ObjectSemaphore, redisson.CauseTimeout)
	mustUnlock(t, h)
}

// A hook that blocks on a loss delays no other hold's loss signal: the renewal scheduler, which
// signals every hold's loss on time, never waits for the hook.
func TestEventsBlockingHookDelaysNoLossSignal(t *testing.T) {
	t.Parallel()
	blocked, unblock := make(chan struct{}), make(chan struct{})
	var blockedOnce, unblockOnce sync.Once
	release := func() { unblockOnce.Do(func() { close(unblock) }) }
	defer release()
	c, _, _ := setup(t, redisson.WithEventHook(func(e redisson.Event) {
		if e.Kind == redisson.EventLost && e.Name == "first" {
			blockedOnce.Do(func() { close(blocked) })
			<-unblock
		}
	}))
	h1 := mustLock(t, c.Lock("first"), t.Context(), redisson.WithLease(200*time.Millisecond))
	h2 := mustLock(t, c.Lock("second"), t.Context(), redisson.WithLease(time.Second))
	recvWithin(t, blocked, 5*time.Second, "the first hold's loss to be reported")
	<-h1.Context().Done()
	recvWithin(t, h2.Context().Done(), 5*time.Second, "the second hold's loss signal, while the hook blocks on the first's")
}

// Close reports each waiting acquisition as not obtained (closed), each hold and leased permit as
// lost (closed), and each acquisition once.
func TestEventsOfCloseWithWaitersAndHolds(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	log := &eventLog{}
	c := newClient(t, srv.Client(t), redisson.WithEventHook(log.hook))
	other := newClient(t, srv.Client(t))
	var waiting []string
	var results []<-chan error
	for _, kind := range []string{"Lock", "FairLock", "FencedLock", "SpinLock", "ReadWriteLock"} {
		mustLock(t, lockOf(other, kind, "cw-"+kind), t.Context())
		what := "wait-" + kind
		got, cancel := lockAsync(markCtx(t, what), lockOf(c, kind, "cw-"+kind))
		defer cancel()
		ch := make(chan error, 1)
		go func() { ch <- (<-got).err }()
		waiting, results = append(waiting, what), append(results, ch)
	}
	s := c.Semaphore("cw-sem")
	sch := make(chan error, 1)
	go func() { sch <- s.Acquire(markCtx(t, "wait-sem"), 1) }()
	waiting, results = append(waiting, "wait-sem"), append(results, sch)
	eventually(t, 5*time.Second, "every acquisition to wait", func() bool { return c.Stats().Waiting == len(waiting) })
	h := mustLock(t, c.Lock("cw-held"), markCtx(t, "held"))
	p := c.PermitExpirableSemaphore("cw-pes")
	if _, err := p.TrySetPermits(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AcquireHeld(markCtx(t, "permits"), 2); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for i, ch := range results {
		if err := recvWithin(t, ch, 5*time.Second, waiting[i]); !errors.Is(err, redisson.ErrClosed) {
			t.Errorf("%s: %v; want ErrClosed", waiting[i], err)
		}
	}
	<-h.Context().Done()
	ev := log.take()
	for _, what := range waiting {
		if e := checkPaired(t, ev, what, true); len(e) == 1 && e[0].Cause() != redisson.CauseClosed {
			t.Errorf("%s: cause %q; want closed", what, e[0].Cause())
		}
	}
	if e := checkPaired(t, ev, "held", true); len(e) == 2 && e[1].Cause() != redisson.CauseClosed {
		t.Errorf("held: cause %q; want closed", e[1].Cause())
	}
	var kinds []string
	for _, e := range ev {
		if e.Ctx.Value(ctxMark{}) == "permits" {
			kinds = append(kinds, e.Kind.String()+"/"+e.Cause())
		}
	}
	if fmt.Sprint(kinds) != "[acquired/ lost/closed lost/closed]" {
		t.Errorf("permits: %v; want [acquired/ lost/closed lost/closed]", kinds)
	}
}

// An acquisition of 0 permits, which succeeds at once without I/O, is still an acquisition: one
// EventAcquired, with no permit and no attempt.
func TestEventsOfZeroPermitAcquisitions(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	c, _, _ := setup(t, redisson.WithEventHook(log.hook))
	if err := c.Semaphore("zero").Acquire(markCtx(t, "sem"), 0); err != nil {
		t.Fatal(err)
	}
	e := log.one(t, "sem")
	checkEvent(t, "sem", e, redisson.EventAcquired, redisson.ObjectSemaphore, "")
	if e.Permits != 0 || e.Attempts != 0 {
		t.Errorf("sem: %+v; want no permit, no attempt", e)
	}
	if _, err := c.PermitExpirableSemaphore("zero2").AcquireHeld(markCtx(t, "pes"), 0); err != nil {
		t.Fatal(err)
	}
	checkEvent(t, "pes", log.one(t, "pes"), redisson.EventAcquired, redisson.ObjectPermitSemaphore, "")
}

// Leased permits whose renewals fail until their lease may lapse are each reported lost, with the
// cause renewal_failed, after their acquisition.
func TestEventsOfLeasedPermitsLostToFailedRenewals(t *testing.T) {
	long(t)
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb, _ := refusableProxyClient(t, srv, p)
	log := &eventLog{}
	c := newClient(t, rdb, redisson.WithWatchdogTimeout(time.Second), redisson.WithEventHook(log.hook))
	s := c.PermitExpirableSemaphore("unrenewed-permits")
	if _, err := s.TrySetPermits(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	held, err := s.AcquireHeld(markCtx(t, "renewal_failed"), 2)
	if err != nil {
		t.Fatal(err)
	}
	p.Blackhole(true)
	<-held.Context().Done()
	p.Blackhole(false)
	var got []redisson.Event
	eventually(t, 5*time.Second, "the acquisition and both losses to be reported", func() bool {
		got = append(got, log.take()...)
		return len(got) >= 3
	})
	checkEvent(t, "renewal_failed", got[0], redisson.EventAcquired, redisson.ObjectPermitSemaphore, "")
	for _, e := range got[1:] {
		checkEvent(t, "renewal_failed", e, redisson.EventLost, redisson.ObjectPermitSemaphore, redisson.CauseRenewalFailed)
	}
}

// An acquisition refused for too few replicas (ErrNotReplicated) is classified as an error.
func TestEventsClassifyNotReplicated(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	c, _, _ := setup(t, redisson.WithEventHook(log.hook), redisson.WithReplicaAcks(1, 100*time.Millisecond))
	if _, err := c.Lock("unreplicated").TryLock(markCtx(t, "error")); !errors.Is(err, redisson.ErrNotReplicated) {
		t.Fatalf("TryLock without replicas = %v; want ErrNotReplicated", err)
	}
	checkEvent(t, "error", log.one(t, "error"), redisson.EventNotObtained, redisson.ObjectLock, redisson.CauseError)
}

// A local waiter cancelled while the release that transfers the lock to it is in flight (the hook
// holds the release's report) reports one outcome: not obtained (canceled); the transfer is undone.
func TestEventsOfWaiterCanceledAtHandOver(t *testing.T) {
	t.Parallel()
	log := &eventLog{}
	released, unblock := make(chan struct{}), make(chan struct{})
	var releasedOnce, unblockOnce sync.Once
	release := func() { unblockOnce.Do(func() { close(unblock) }) }
	defer release()
	c, admin, _ := setup(t, redisson.WithEventHook(func(e redisson.Event) {
		log.hook(e)
		if e.Kind == redisson.EventReleased && e.Ctx.Value(ctxMark{}) == "first" {
			releasedOnce.Do(func() { close(released) })
			<-unblock
		}
	}))
	l := c.Lock("cancelho")
	h := mustLock(t, l, markCtx(t, "first"))
	got, cancel := lockAsync(markCtx(t, "heir"), l)
	eventually(t, 5*time.Second, "the heir to wait in the local queue", func() bool { return redisson.LocalWaiting(c, "cancelho") })
	unlocked := make(chan error, 1)
	go func() { unlocked <- h.Unlock(t.Context()) }()
	recvWithin(t, released, 5*time.Second, "the release to be reported")
	cancel()
	r := recvWithin(t, got, 5*time.Second, "the cancelled heir")
	release()
	if err := recvWithin(t, unlocked, 5*time.Second, "Unlock"); err != nil {
		t.Fatal(err)
	}
	if r.err == nil {
		t.Fatalf("the heir cancelled before the hand-over got the lock")
	}
	ev := log.take()
	checkPaired(t, ev, "first", true)
	if e := checkPaired(t, ev, "heir", true); len(e) == 1 && e[0].Cause() != redisson.CauseCanceled {
		t.Errorf("heir: cause %q; want canceled", e[0].Cause())
	}
	eventually(t, 5*time.Second, "the transfer to be undone", func() bool {
		return admin.Exists(t.Context(), redisson.LockKeyOf(c, "cancelho")).Val() == 0
	})
}
