// Package pubsub is the one wake-up hub of a Client: every wait on every lock of the Client shares a
// single pub/sub connection (on a Cluster, one per master: see NewSharded), with one
// reference-counted subscription per channel.
//
// Messages are signals, not data: a waiter receives on a buffered channel of size one and, when woken,
// re-runs its acquire script, so coalescing several signals into one is harmless. A message decides
// whom it wakes: one naming a waiter's id wakes that waiter only (nobody if it has left); "*" wakes
// every waiter of the channel; any other wakes one (waiters take turns). A (re)subscription
// confirmation for a channel that was already subscribed means the connection was re-established,
// and wakes every waiter of that channel, since messages may have been lost while it was down. Waiters must still bound every wait by a timer:
// the hub narrows the window in which a message can be missed, it cannot close it.
//
// A channel whose last waiter leaves stays subscribed for Linger, so a lock that is contended again
// soon does not pay SUBSCRIBE and UNSUBSCRIBE every time.
package pubsub

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Linger is how long a channel without waiters stays subscribed.
const Linger = 2 * time.Second

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = errors.New("pubsub hub closed")

// Subscriber is what the hub needs from a go-redis client.
type Subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

var _ Subscriber = (redis.UniversalClient)(nil)

// transport carries the hub's subscriptions: SUBSCRIBE on one go-redis PubSub (classic), or
// SSUBSCRIBE on one connection per Cluster master (sharded). It reports what it receives with
// Hub.handle.
type transport interface {
	// subscribe sends the subscription of name, blocking for the network write, bounded by ctx. A
	// subscription that could not be sent is retried by the transport when it reconnects.
	subscribe(ctx context.Context, name string) error
	// unsubscribe sends the unsubscription of names.
	unsubscribe(ctx context.Context, names []string) error
	// close closes the connections and waits for the transport's goroutines.
	close()
	// conns is the number of open connections.
	conns() int
}

// Hub multiplexes waits over one pub/sub connection (or one per master). Create it with New or
// NewSharded; stop it with Close.
type Hub struct {
	open func(h *Hub) transport // creates the transport on the first Subscribe
	log  *slog.Logger

	// io serialises the hub's SUBSCRIBE and UNSUBSCRIBE commands, so that an unsubscription of an
	// idle channel and a new subscription of the same name reach the server in the order decided. It
	// is never held together with mu while waiting on the network, so a slow (re)dial delays only the
	// goroutines that subscribe a new channel, never the delivery of messages.
	io sync.Mutex

	mu       sync.Mutex
	tr       transport // created on first Subscribe
	channels map[string]*channel
	closed   bool

	stop chan struct{}
	done chan struct{} // closed when the sweep goroutine has exited (or was never started)

	reconnects int // resubscriptions observed, for tests and stats
}

type channel struct {
	waiters []*Waiter
	ready   chan struct{} // closed when the server confirmed the subscription
	isReady bool
	readyAt time.Time // when it was last confirmed (first subscription, or after a reconnect)
	idle    time.Time // when the last waiter left; zero while waited on
	// held keeps, for Hold, the messages that named a waiter not registered (yet): a waiter that
	// registers with that id just after its message arrived is woken at once (see Subscribe).
	held map[string]heldMessage
	// allAt is when the last "*" (WakeAll) arrived: a waiter that registers within Hold of it is
	// woken at once too, since it may have tried before the message and slept after it.
	allAt time.Time
	// anyAt is when the last message of any kind arrived, for the waiters that every message wakes
	// (SubscribeEvery), in the same way.
	anyAt time.Time
}

// heldMessage is a message kept for a waiter not registered yet.
type heldMessage struct {
	text string
	at   time.Time
}

// Hold is how long a message naming an unregistered waiter is kept for it; at most maxHeld per
// channel, the oldest forgotten first.
const (
	Hold    = 2 * time.Second
	maxHeld = 64
)

// Waiter is one goroutine's interest in one channel. C receives a signal when the goroutine should
// try again. Close it when done waiting.
type Waiter struct {
	C       chan struct{}
	id      string // messages naming it wake this waiter only ("": anonymous)
	every   bool   // every message wakes it (SubscribeEvery)
	hub     *Hub
	ch      *channel
	readyAt time.Time // the channel's confirmation, if it came before the waiter registered
	message string    // the last message that named it (guarded by hub.mu)
}

// Messages that wake anonymous waiters; any other message names the waiter it wakes: its id, alone
// or followed by "|" and data for the waiter (see Waiter.Message).
const (
	WakeAll = "*" // every waiter of the channel
	WakeOne = "0" // one waiter of the channel
)

// New returns a hub that subscribes with SUBSCRIBE on one go-redis PubSub of rdb; it opens no
// connection until the first Subscribe.
func New(rdb Subscriber, log *slog.Logger) *Hub {
	return newHub(func(h *Hub) transport { return newClassic(h, rdb) }, log)
}

func newHub(open func(*Hub) transport, log *slog.Logger) *Hub {
	return &Hub{open: open, log: log, channels: map[string]*channel{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// Subscribe registers a waiter on the channel name, subscribing on the server if no waiter of this
// hub is subscribed to it yet. A message equal to id wakes this waiter only (id "": none does),
// including one that arrived up to Hold before this call, while the channel was subscribed; so does
// a "*" that arrived up to Hold before. It blocks only for the network write of SUBSCRIBE, bounded by ctx,
// and only when the channel is new. It fails only after Close; a SUBSCRIBE that could not be sent is
// retried by go-redis on reconnect and is logged, and the waiter stays registered (its timer-bounded
// wait still works).
func (h *Hub) Subscribe(ctx context.Context, name, id string) (*Waiter, error) {
	return h.subscribe(ctx, name, id, false)
}

// SubscribeEvery is Subscribe for a waiter that every message on the channel wakes, whatever it
// says (and one that arrived up to Hold before this call): for channels whose messages another
// program defines (Java Redisson's, see WithRedissonCompat), where a message is a hint to try again.
func (h *Hub) SubscribeEvery(ctx context.Context, name string) (*Waiter, error) {
	return h.subscribe(ctx, name, "", true)
}

func (h *Hub) subscribe(ctx context.Context, name, id string, every bool) (*Waiter, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	ch := h.channels[name]
	isNew := ch == nil
	if isNew {
		ch = &channel{ready: make(chan struct{})}
		h.channels[name] = ch
		if h.tr == nil {
			h.tr = h.open(h) // no I/O: the transport connects on its first subscription
			go h.sweeper()
		}
	}
	ch.idle = time.Time{}
	w := &Waiter{C: make(chan struct{}, 1), id: id, every: every, hub: h, ch: ch, readyAt: ch.readyAt}
	ch.waiters = append(ch.waiters, w)
	if every && !ch.anyAt.IsZero() && time.Since(ch.anyAt) < Hold {
		signal(w) // a message came just before it registered
	} else if m, ok := ch.held[id]; ok && id != "" {
		delete(ch.held, id)
		w.message = m.text
		signal(w) // its message came just before it registered
	} else if !ch.allAt.IsZero() && time.Since(ch.allAt) < Hold {
		signal(w) // a "*" came just before it registered
	}
	tr := h.tr
	h.mu.Unlock()

	if isNew {
		h.io.Lock()
		err := tr.subscribe(ctx, name)
		h.io.Unlock()
		if err != nil {
			h.log.Warn("redisson: subscribe failed; waiting on timers until the connection recovers",
				"channel", name, "err", err)
		}
	}
	return w, nil
}

// Ready is closed once the server has confirmed the subscription, after which every message
// published on the channel reaches this hub.
func (w *Waiter) Ready() <-chan struct{} { return w.ch.ready }

// Message returns, and forgets, the last message that named this waiter ("" if none since the last
// call). Read it after a signal on C.
func (w *Waiter) Message() string {
	w.hub.mu.Lock()
	defer w.hub.mu.Unlock()
	m := w.message
	w.message = ""
	return m
}

// ReadyBefore reports whether the subscription was confirmed before t, the time the waiter's owner
// sent its last attempt, and before the waiter registered: every message since that attempt has
// then reached the hub, and either woke the waiter or is held for it (a message naming it, or a
// "*" within Hold). A confirmation that came after the attempt leaves a gap, between the attempt
// and the confirmation, whose messages never reached the hub: the owner must try again.
func (w *Waiter) ReadyBefore(t time.Time) bool { return !w.readyAt.IsZero() && w.readyAt.Before(t) }

// Close unregisters the waiter. It does not block; the channel is unsubscribed after Linger if no
// other waiter uses it.
func (w *Waiter) Close() {
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, o := range w.ch.waiters {
		if o == w {
			w.ch.waiters = append(w.ch.waiters[:i], w.ch.waiters[i+1:]...)
			break
		}
	}
	if len(w.ch.waiters) == 0 {
		w.ch.idle = time.Now()
	}
}

// Stats reports the subscribed channels and the reconnects seen.
func (h *Hub) Stats() (channels, reconnects int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.channels), h.reconnects
}

// Conns reports the open pub/sub connections: at most one, or one per Cluster master (NewSharded).
func (h *Hub) Conns() int {
	h.mu.Lock()
	tr := h.tr
	h.mu.Unlock()
	if tr == nil {
		return 0
	}
	return tr.conns()
}

// Close closes the connections, stops the hub's goroutines and waits for them. Waiters still
// registered are woken; later Subscribe calls return ErrClosed.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		<-h.done
		return
	}
	h.closed = true
	tr := h.tr
	for _, ch := range h.channels {
		wakeAll(ch)
	}
	h.mu.Unlock()
	close(h.stop)
	if tr == nil {
		close(h.done)
		return
	}
	<-h.done // the sweeper, which may be sending an UNSUBSCRIBE
	tr.close()
}

// sweeper unsubscribes idle channels (see sweep) until Close.
func (h *Hub) sweeper() {
	defer close(h.done)
	t := time.NewTicker(Linger / 2)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			h.sweep(now)
		case <-h.stop:
			return
		}
	}
}

func (h *Hub) handle(m any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch m := m.(type) {
	case *redis.Message:
		if ch := h.channels[m.Channel]; ch != nil {
			deliver(ch, m.Payload, time.Now())
		}
	case *redis.Subscription:
		if m.Kind != "subscribe" && m.Kind != "ssubscribe" {
			return
		}
		ch := h.channels[m.Channel]
		if ch == nil {
			return
		}
		if !ch.isReady {
			ch.isReady, ch.readyAt = true, time.Now()
			close(ch.ready)
			return
		}
		// Confirmed again: go-redis re-subscribed after a reconnect; messages may have been lost.
		// A waiter that registers from now on whose attempt came before is not ReadyBefore it.
		h.reconnects++
		ch.readyAt = time.Now()
		wakeAll(ch)
	}
}

// sweep unsubscribes channels idle for longer than Linger.
func (h *Hub) sweep(now time.Time) {
	h.io.Lock() // a Subscribe of a swept name waits, so its SUBSCRIBE follows the UNSUBSCRIBE
	defer h.io.Unlock()
	h.mu.Lock()
	var names []string
	for name, ch := range h.channels {
		for id, m := range ch.held {
			if now.Sub(m.at) >= Hold {
				delete(ch.held, id)
			}
		}
		if len(ch.waiters) == 0 && !ch.idle.IsZero() && now.Sub(ch.idle) >= Linger {
			names = append(names, name)
			delete(h.channels, name)
		}
	}
	tr := h.tr
	h.mu.Unlock()
	if len(names) == 0 || tr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := tr.unsubscribe(ctx, names); err != nil {
		h.log.Debug("redisson: unsubscribe failed", "channels", len(names), "err", err)
	}
}

// deliver wakes the waiters of ch that message names (see the package documentation); a message
// naming a waiter that is not registered is held for it (see Subscribe).
func deliver(ch *channel, message string, now time.Time) {
	ch.anyAt = now
	for _, w := range ch.waiters {
		if w.every {
			signal(w)
		}
	}
	if message == WakeAll {
		ch.allAt = now
		wakeAll(ch)
		return
	}
	id, _, _ := strings.Cut(message, "|")
	for _, w := range ch.waiters {
		if w.id != "" && w.id == id {
			w.message = message
			signal(w)
			return
		}
	}
	if message != WakeOne && message != "" { // names a waiter not registered: it left, or is about to come
		if ch.held == nil {
			ch.held = map[string]heldMessage{}
		}
		if len(ch.held) >= maxHeld {
			// Make room by forgetting the oldest: on a channel shared by the Clients of an object
			// (a ReadWriteLock's), most messages name other Clients' waiters and are never claimed,
			// and a full map must not drop the message of a waiter about to register here.
			oldest := ""
			for k, m := range ch.held {
				if oldest == "" || m.at.Before(ch.held[oldest].at) {
					oldest = k
				}
			}
			delete(ch.held, oldest)
		}
		ch.held[id] = heldMessage{message, now}
		return
	}
	wakeOne(ch)
}

// wake signals every waiter of the named channels: a transport may have lost their messages.
func (h *Hub) wake(names []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, name := range names {
		if ch := h.channels[name]; ch != nil {
			wakeAll(ch)
		}
	}
}

// Wake signals the waiter as a message naming it would.
func (w *Waiter) Wake() { signal(w) }

// wakeOne signals the first waiter and moves it to the back, so successive messages take turns.
// wakeOne wakes the next waiter in turn, of those that not every message wakes (those are awake).
func wakeOne(ch *channel) {
	for i, w := range ch.waiters {
		if !w.every {
			copy(ch.waiters[i:], ch.waiters[i+1:])
			ch.waiters[len(ch.waiters)-1] = w
			signal(w)
			return
		}
	}
}

func wakeAll(ch *channel) {
	for _, w := range ch.waiters {
		signal(w)
	}
}

func signal(w *Waiter) {
	select {
	case w.C <- struct{}{}:
	default:
	}
}

// classic is the transport of New: one go-redis PubSub, which reconnects and resubscribes on its
// own; a resubscription's confirmation tells the hub that messages may have been lost. Its one
// goroutine reads the connection and hands each message to the hub itself (go-redis's Channel would
// add a goroutine between the two: a switch per wake-up), and pings while the connection is quiet
// (every classicPing, as go-redis's Channel does), so that a connection whose write fails is
// replaced. A connection that goes silent without failing (a black-holed network) is not noticed,
// as it was not with go-redis's Channel: the messages lost on it cost their waiters the re-poll
// interval, and the loss tracker and the renewals do not depend on it.
type classic struct {
	ps   *redis.PubSub
	seen chan struct{}  // a message arrived: no ping is needed
	stop chan struct{}  // closed by close
	wg   sync.WaitGroup // the reader and the pinger
}

// classicPing is how long the classic transport's connection may be quiet before it is pinged.
const classicPing = 3 * time.Second

func newClassic(h *Hub, rdb Subscriber) *classic {
	t := &classic{ps: rdb.Subscribe(context.Background()), seen: make(chan struct{}, 1), stop: make(chan struct{})}
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		t.read(h)
	}()
	go func() {
		defer t.wg.Done()
		t.ping()
	}()
	return t
}

// read hands every message and subscription confirmation to h, until close.
func (t *classic) read(h *Hub) {
	failed := 0
	for {
		m, err := t.ps.Receive(context.Background())
		if err != nil {
			select {
			case <-t.stop:
				return
			default:
			}
			if errors.Is(err, redis.ErrClosed) {
				return
			}
			// go-redis reconnects on the next Receive; two failures in a row are a pause apart.
			if failed++; failed > 1 {
				select {
				case <-t.stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			continue
		}
		failed = 0
		select {
		case t.seen <- struct{}{}:
		default:
		}
		switch m.(type) {
		case *redis.Message, *redis.Subscription:
			h.handle(m)
		}
	}
}

// ping pings the connection whenever classicPing passes without a message.
func (t *classic) ping() {
	tk := time.NewTicker(classicPing)
	defer tk.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tk.C:
		}
		select {
		case <-t.seen:
			continue // not quiet
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = t.ps.Ping(ctx) // a failed write makes go-redis reconnect
		cancel()
	}
}

func (t *classic) subscribe(ctx context.Context, name string) error { return t.ps.Subscribe(ctx, name) }

func (t *classic) unsubscribe(ctx context.Context, names []string) error {
	return t.ps.Unsubscribe(ctx, names...)
}

func (t *classic) close() {
	close(t.stop)
	_ = t.ps.Close()
	t.wg.Wait()
}

func (t *classic) conns() int { return 1 }
