package pubsub_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/redistest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newHub starts a redis-server and a hub over it, closed when the test ends.
func newHub(t *testing.T) (*pubsub.Hub, *redis.Client) {
	rdb := redistest.Start(t).Client(t)
	h := pubsub.New(rdb, slog.New(slog.DiscardHandler))
	t.Cleanup(h.Close)
	return h, rdb
}

func received(w *pubsub.Waiter, within time.Duration) bool {
	select {
	case <-w.C:
		return true
	case <-time.After(within):
		return false
	}
}

func TestMessageWakesOneWaiterAtATime(t *testing.T) {
	h, rdb := newHub(t)
	ctx := t.Context()

	a, err := h.Subscribe(ctx, "ch", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := h.Subscribe(ctx, "ch", "")
	<-a.Ready()
	if n := rdb.PubSubNumSub(ctx, "ch").Val()["ch"]; n != 1 {
		t.Fatalf("NUMSUB = %d; want one shared subscription", n)
	}
	rdb.Publish(ctx, "ch", "0")
	rdb.Publish(ctx, "ch", "0")
	// Each message wakes one waiter; the two take turns.
	if !received(a, 5*time.Second) || !received(b, 5*time.Second) {
		t.Fatal("two messages did not wake both waiters once each")
	}
	a.Close()
	b.Close()
}

func TestReconnectWakesAllWaiters(t *testing.T) {
	h, rdb := newHub(t)
	ctx := t.Context()
	var ws []*pubsub.Waiter
	for range 3 {
		w, err := h.Subscribe(ctx, "lock", "")
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	<-ws[0].Ready()
	if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		if !received(w, 10*time.Second) {
			t.Fatalf("waiter %d not woken after the pub/sub connection was killed", i)
		}
		w.Close()
	}
	if _, reconnects := h.Stats(); reconnects == 0 {
		t.Fatal("reconnect not counted")
	}
}

func TestIdleChannelUnsubscribedAfterLinger(t *testing.T) {
	h, rdb := newHub(t)
	ctx := t.Context()
	w, _ := h.Subscribe(ctx, "idle", "")
	<-w.Ready()
	w.Close()
	deadline := time.Now().Add(3 * pubsub.Linger)
	for rdb.PubSubNumSub(ctx, "idle").Val()["idle"] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle channel still subscribed after 3×Linger")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n, _ := h.Stats(); n != 0 {
		t.Fatalf("hub still tracks %d channels", n)
	}
}

func TestClose(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	h := pubsub.New(rdb, slog.New(slog.DiscardHandler))
	w, _ := h.Subscribe(t.Context(), "c", "")
	h.Close()
	h.Close()
	if !received(w, time.Second) {
		t.Fatal("waiter not woken by Close")
	}
	if _, err := h.Subscribe(t.Context(), "c", ""); err == nil {
		t.Fatal("Subscribe after Close succeeded")
	}
	// A hub that never subscribed closes without a connection.
	pubsub.New(rdb, slog.New(slog.DiscardHandler)).Close()
}

// A subscription that waits on the network (here: a redial through a slow link) must not hold up
// the rest of the hub: a waiter of another channel can still leave, and messages are still handled.
func TestSubscribeIOStallsNothingElse(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr())
	rdb := srv.Client(t, func(o *redis.Options) { o.Addr = p.Addr(); o.ReadTimeout = 30 * time.Second })
	h := pubsub.New(rdb, slog.New(slog.DiscardHandler))
	t.Cleanup(h.Close)
	ctx := t.Context()

	a, err := h.Subscribe(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	<-a.Ready()
	// Break the connection and slow the link: go-redis redials, holding its PubSub's mutex for at
	// least the two 2s delays of the handshake, so the next SUBSCRIBE waits on the network that long.
	p.Delay(2 * time.Second)
	p.CloseConns()
	eventually(t, 5*time.Second, "the redial to start", func() bool { return p.Conns() > 0 })
	subDone := make(chan struct{})
	go func() {
		defer close(subDone)
		if b, err := h.Subscribe(ctx, "b", ""); err == nil {
			b.Close()
		}
	}()
	// The new channel is registered before its SUBSCRIBE goes out.
	eventually(t, 3*time.Second, "channel b to be registered", func() bool { n, _ := h.Stats(); return n == 2 })
	select {
	case <-subDone:
		t.Fatal("Subscribe returned before the redial ended: the test did not exercise a slow SUBSCRIBE")
	default:
	}
	closeDone := make(chan struct{})
	go func() {
		a.Close()
		close(closeDone)
	}()
	select {
	case <-closeDone:
	case <-subDone:
		t.Fatal("a waiter of another channel could not leave until the subscription's network I/O ended")
	}
	p.Delay(0)
	<-subDone
}

// eventually polls cond every few milliseconds until it returns true, failing the test after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A message naming a waiter wakes that waiter only; "*" wakes every waiter; a message naming a waiter
// that has left wakes nobody.
func TestMessagesAddressWaiters(t *testing.T) {
	h, rdb := newHub(t)
	ctx := t.Context()
	a, _ := h.Subscribe(ctx, "ch", "client:a")
	b, _ := h.Subscribe(ctx, "ch", "client:b")
	c, _ := h.Subscribe(ctx, "ch", "")
	<-a.Ready()
	rdb.Publish(ctx, "ch", "client:b")
	if !received(b, 5*time.Second) {
		t.Fatal("the waiter named by the message was not woken")
	}
	// Messages arrive in order: once a has been woken by the second one, the first (naming a waiter
	// that left) has been handled, and must have woken nobody, as the one for b woke b only.
	rdb.Publish(ctx, "ch", "client:gone")
	rdb.Publish(ctx, "ch", "client:a")
	if !received(a, 5*time.Second) {
		t.Fatal("the waiter named by the message was not woken")
	}
	for name, w := range map[string]*pubsub.Waiter{"b": b, "c": c} {
		select {
		case <-w.C:
			t.Fatalf("waiter %s woken by a message that did not name it", name)
		default:
		}
	}
	rdb.Publish(ctx, "ch", pubsub.WakeAll)
	for name, w := range map[string]*pubsub.Waiter{"a": a, "b": b, "c": c} {
		if !received(w, 5*time.Second) {
			t.Fatalf("waiter %s not woken by %q", name, pubsub.WakeAll)
		}
	}
	a.Close()
	b.Close()
	c.Close()
}

// A message naming a waiter about to register is kept for it even after many messages naming
// waiters of other Clients (as on a channel shared by every Client of an object): the oldest of
// those are forgotten first.
func TestHeldMessageSurvivesOthers(t *testing.T) {
	h, rdb := newHub(t)
	ctx := t.Context()
	marker, _ := h.Subscribe(ctx, "shared", "marker")
	<-marker.Ready()
	for i := range 200 {
		rdb.Publish(ctx, "shared", fmt.Sprintf("other-client:%d", i))
	}
	rdb.Publish(ctx, "shared", "me")
	rdb.Publish(ctx, "shared", "marker") // in order: once marker is woken, "me" has been handled
	if !received(marker, 5*time.Second) {
		t.Fatal("the marker waiter was not woken")
	}
	me, _ := h.Subscribe(ctx, "shared", "me")
	select {
	case <-me.C:
		if m := me.Message(); m != "me" {
			t.Fatalf("message %q; want the held one", m)
		}
	default:
		t.Fatal("the message naming the waiter, which came just before it registered, was lost")
	}
	me.Close()
	marker.Close()
}

// A waiter is ReadyBefore its owner's attempt only if the channel was confirmed before that attempt:
// a "*" published between an attempt and the confirmation never reaches the hub, so a waiter whose
// attempt came first must try again, even if it registers after the confirmation (and after that
// message). A waiter whose attempt came after the confirmation need not.
func TestReadyBeforeOnlyForAttemptsAfterTheConfirmation(t *testing.T) {
	h, rdb := newHub(t)
	ctx := t.Context()
	attempt := time.Now() // W2's attempt: before the channel is confirmed
	w1, err := h.Subscribe(ctx, "latch", "")
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Close()
	<-w1.Ready()
	if w1.ReadyBefore(attempt) {
		t.Fatal("the first waiter, registered before the confirmation, is ReadyBefore")
	}
	w2, _ := h.Subscribe(ctx, "latch", "") // registers after the confirmation
	defer w2.Close()
	if w2.ReadyBefore(attempt) {
		t.Fatal("a waiter whose attempt came before the confirmation is ReadyBefore it: a message in between is lost to it")
	}
	later := time.Now()
	w3, _ := h.Subscribe(ctx, "latch", "")
	defer w3.Close()
	if !w3.ReadyBefore(later) {
		t.Fatal("a waiter whose attempt came after the confirmation is not ReadyBefore it: every attempt would be made twice")
	}
	if err := rdb.Publish(ctx, "latch", pubsub.WakeAll).Err(); err != nil {
		t.Fatal(err)
	}
	for i, w := range []*pubsub.Waiter{w1, w2, w3} {
		if !received(w, 5*time.Second) {
			t.Fatalf("waiter %d not woken by *", i+1)
		}
	}
}

// A waiter subscribed with SubscribeEvery is woken by every message, whatever it says (Java
// Redisson's counts and modes), and by one that arrived just before it registered; the other
// waiters of the channel keep their rules.
func TestSubscribeEveryWakesOnAnyMessage(t *testing.T) {
	h, rdb := newHub(t)
	ctx := t.Context()
	a, _ := h.SubscribeEvery(ctx, "ch")
	b, _ := h.SubscribeEvery(ctx, "ch")
	named, _ := h.Subscribe(ctx, "ch", "client:x")
	<-a.Ready()
	for _, msg := range []string{"1", "7", "client:y"} {
		rdb.Publish(ctx, "ch", msg)
		for name, w := range map[string]*pubsub.Waiter{"a": a, "b": b} {
			if !received(w, 5*time.Second) {
				t.Fatalf("waiter %s not woken by %q", name, msg)
			}
		}
	}
	select {
	case <-named.C:
		t.Fatal("a waiter with an id was woken by messages that did not name it")
	default:
	}
	late, _ := h.SubscribeEvery(ctx, "ch") // the last message came just before it registered
	if !received(late, 5*time.Second) {
		t.Fatal("a message that arrived just before the registration did not wake the waiter")
	}
	a.Close()
	b.Close()
	named.Close()
	late.Close()
}
