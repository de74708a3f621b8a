package pubsub

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/resp"
	"github.com/goredisson/redisson/internal/slot"
)

// Router tells the sharded transport where a channel's slot is served.
type Router interface {
	// Master returns the options of the go-redis client of the master serving channel's slot, as
	// the slot map has it; the transport dials Addr with Dialer and authenticates as they say.
	Master(ctx context.Context, channel string) (*redis.Options, error)
	// Reload asks for the slot map to be read again (after a lost connection or a moved slot). It
	// must not block on the network.
	Reload()
}

// Timing of the sharded transport.
const (
	// pingEvery is how often each connection is pinged; a connection silent for 3 of them is
	// taken for dead (a paused or partitioned node sends no FIN).
	pingEvery = time.Second
	// retryEvery is how soon subscriptions that could not be (re)sent are tried again.
	retryEvery = 200 * time.Millisecond
)

// NewSharded returns a hub for Redis Cluster that subscribes with SSUBSCRIBE, each channel on the
// master serving its slot, over one connection per master (publishers use SPUBLISH, which reaches
// only the subscribers of the channel's shard, instead of PUBLISH, which every node of the Cluster
// broadcasts). A channel whose connection breaks, or whose slot moves (the server then ends the
// subscription with an SUNSUBSCRIBE of its own: a migration, a failover), is subscribed again where
// the slot map now puts it, and the confirmation wakes all its waiters, since messages may have
// been lost meanwhile. It opens no connection until the first Subscribe.
//
// The connections are the hub's own, not go-redis's: a go-redis PubSub resubscribes all its shard
// channels in one SSUBSCRIBE after a reconnect, which a Cluster refuses (CROSSSLOT) as soon as they
// span several slots.
func NewSharded(r Router, log *slog.Logger) *Hub {
	return newHub(func(h *Hub) transport { return newSharded(h, r) }, log)
}

// sharded is the transport of NewSharded.
type sharded struct {
	h *Hub
	r Router

	mu     sync.Mutex
	shards map[string]*shard // open connections, by address
	where  map[string]*shard // every channel wanted and sent, and where it was sent
	// pending are the channels wanted but not sent, with when the fixer may send them (a refused
	// channel waits retryEvery, so that a stale slot map cannot make a storm of refusals).
	pending map[string]time.Time
	hint    map[string]string // where a refusal (MOVED) said a pending channel's slot is served
	closed  bool

	// sendMu orders the SSUBSCRIBE and SUNSUBSCRIBE of a channel as decided: a subscription sent by
	// the fixer never overtakes the unsubscription that follows it.
	sendMu sync.Mutex

	kick chan struct{} // wakes the fixer
	stop chan struct{}
	wg   sync.WaitGroup // the fixer, the pinger and every shard's reader
}

// shard is one connection to one master.
type shard struct {
	addr string
	nc   net.Conn
	opt  *redis.Options

	wmu sync.Mutex // serialises writes
	bw  *bufio.Writer

	// Guarded by sharded.mu.
	channels  map[string]bool // subscribed (or being subscribed) here
	confirmed map[string]bool // the server confirmed the subscription here
	dead      bool
}

func newSharded(h *Hub, r Router) *sharded {
	t := &sharded{h: h, r: r, shards: map[string]*shard{}, where: map[string]*shard{}, pending: map[string]time.Time{},
		hint: map[string]string{}, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	t.wg.Add(2)
	go t.fixer()
	go t.pinger()
	return t
}

func (t *sharded) subscribe(ctx context.Context, name string) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	t.pending[name] = time.Time{}
	t.mu.Unlock()
	return t.send(ctx, name)
}

// send subscribes the pending channel name on the master of its slot, dialling it if needed. On
// failure the channel stays pending and the fixer tries again.
func (t *sharded) send(ctx context.Context, name string) error {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	opt, err := t.r.Master(ctx, name)
	if err != nil {
		t.retry()
		return fmt.Errorf("route shard channel: %w", err)
	}
	t.mu.Lock()
	if addr := t.hint[name]; addr != "" && addr != opt.Addr {
		o := *opt // the same Cluster's options (dialer, credentials), another node
		o.Addr = addr
		opt = &o
	}
	t.mu.Unlock()
	sh, err := t.shardFor(ctx, opt)
	if err != nil {
		t.r.Reload()
		t.retry()
		return err
	}
	t.mu.Lock()
	if _, ok := t.pending[name]; !ok || sh.dead || t.closed { // unsubscribed meanwhile, or the shard died: the fixer decides
		t.mu.Unlock()
		return nil
	}
	delete(t.pending, name)
	delete(t.hint, name)
	t.where[name] = sh
	sh.channels[name] = true
	t.mu.Unlock()
	if err := sh.write(ctx, "SSUBSCRIBE", name); err != nil {
		t.fail(sh, err)
		return err
	}
	return nil
}

// shardFor returns the open connection to opt.Addr, dialling and authenticating a new one if there
// is none.
func (t *sharded) shardFor(ctx context.Context, opt *redis.Options) (*shard, error) {
	t.mu.Lock()
	if sh := t.shards[opt.Addr]; sh != nil {
		t.mu.Unlock()
		return sh, nil
	}
	t.mu.Unlock()
	sh, err := dialShard(ctx, opt)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if other := t.shards[opt.Addr]; other != nil || t.closed { // dialled concurrently, or closed
		t.mu.Unlock()
		_ = sh.nc.Close()
		if other == nil {
			return nil, ErrClosed
		}
		return other, nil
	}
	t.shards[opt.Addr] = sh
	t.wg.Add(1)
	t.mu.Unlock()
	go t.read(sh)
	return sh, nil
}

// dialShard opens and authenticates a connection as the go-redis options say.
func dialShard(ctx context.Context, opt *redis.Options) (*shard, error) {
	if opt.DialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.DialTimeout)
		defer cancel()
	}
	nc, err := resp.Dial(ctx, opt)
	if err != nil {
		return nil, fmt.Errorf("dial shard %s: %w", opt.Addr, err)
	}
	sh := &shard{addr: opt.Addr, nc: nc, opt: opt, bw: bufio.NewWriter(nc), channels: map[string]bool{}, confirmed: map[string]bool{}}
	user, pass, err := resp.Credentials(ctx, opt)
	if err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("credentials for shard %s: %w", opt.Addr, err)
	}
	if pass != "" {
		args := []string{"AUTH", pass}
		if user != "" {
			args = []string{"AUTH", user, pass}
		}
		if err := authenticate(ctx, sh, args); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("authenticate to shard %s: %w", opt.Addr, err)
		}
	}
	return sh, nil
}

// authenticate sends AUTH and reads its reply, before the reader starts.
func authenticate(ctx context.Context, sh *shard, args []string) error {
	if err := sh.write(ctx, args...); err != nil {
		return err
	}
	deadline := time.Now().Add(3 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = sh.nc.SetReadDeadline(deadline)
	v, err := resp.Read(bufio.NewReaderSize(sh.nc, 64))
	if err != nil {
		return err
	}
	if e, ok := v.(resp.Error); ok {
		return e
	}
	return nil
}

// write sends one command, bounded by ctx and the write timeout.
func (sh *shard) write(ctx context.Context, args ...string) error {
	sh.wmu.Lock()
	defer sh.wmu.Unlock()
	deadline := time.Now().Add(max(sh.opt.WriteTimeout, time.Second))
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = sh.nc.SetWriteDeadline(deadline)
	cmd := make([]any, len(args))
	for i, a := range args {
		cmd[i] = a
	}
	resp.Write(sh.bw, cmd...)
	return sh.bw.Flush()
}

func (t *sharded) unsubscribe(ctx context.Context, names []string) error {
	var errs []error
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	for _, name := range names {
		t.mu.Lock()
		delete(t.pending, name)
		delete(t.hint, name)
		sh := t.where[name]
		delete(t.where, name)
		if sh != nil {
			delete(sh.channels, name)
			delete(sh.confirmed, name)
		}
		t.mu.Unlock()
		if sh == nil {
			continue
		}
		// One channel per command: a Cluster refuses one SUNSUBSCRIBE over several slots.
		if err := sh.write(ctx, "SUNSUBSCRIBE", name); err != nil {
			t.fail(sh, err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// read receives what the shard's connection delivers until it fails.
func (t *sharded) read(sh *shard) {
	defer t.wg.Done()
	br := bufio.NewReader(sh.nc)
	for {
		_ = sh.nc.SetReadDeadline(time.Now().Add(3 * pingEvery))
		v, err := resp.Read(br)
		if err != nil {
			t.fail(sh, err)
			return
		}
		t.got(sh, v)
	}
}

// got handles one reply of a shard's connection.
func (t *sharded) got(sh *shard, v any) {
	switch v := v.(type) {
	case resp.Error:
		// A refused SSUBSCRIBE: "MOVED <slot> <address>", the slot is no longer served here (the slot
		// map was stale). Which channel is not said: every channel of that slot not confirmed here is
		// sent again, to the address named, after a pause. Confirmed channels lost nothing.
		t.h.log.Debug("redisson: shard subscription refused", "shard", sh.addr, "err", v)
		t.r.Reload()
		t.refused(sh, string(v))
	case []any:
		if len(v) < 2 {
			return
		}
		kind, _ := v[0].(string)
		ch, _ := v[1].(string)
		switch kind {
		case "smessage":
			if len(v) == 3 {
				payload, _ := v[2].(string)
				t.h.handle(&redis.Message{Channel: ch, Payload: payload})
			}
		case "ssubscribe":
			t.mu.Lock()
			if t.where[ch] == sh {
				sh.confirmed[ch] = true
			}
			t.mu.Unlock()
			t.h.handle(&redis.Subscription{Kind: "ssubscribe", Channel: ch})
		case "sunsubscribe":
			// Not asked for if the channel is still wanted here: the server dropped the subscription
			// because the slot left this node (migrated, or the node became a replica).
			t.mu.Lock()
			moved := t.where[ch] == sh && sh.channels[ch]
			if moved {
				delete(sh.channels, ch)
				delete(sh.confirmed, ch)
				delete(t.where, ch)
				t.pending[ch] = time.Time{}
			}
			t.mu.Unlock()
			if moved {
				t.r.Reload()
				t.retry()
			}
		}
	}
}

// fail closes a broken shard connection: its channels are subscribed again by the fixer, and their
// waiters woken now, since messages may have been lost.
func (t *sharded) fail(sh *shard, err error) {
	t.mu.Lock()
	if sh.dead {
		t.mu.Unlock()
		return
	}
	sh.dead = true
	if t.shards[sh.addr] == sh {
		delete(t.shards, sh.addr)
	}
	closed := t.closed
	t.mu.Unlock()
	_ = sh.nc.Close()
	if closed {
		return
	}
	t.h.log.Warn("redisson: shard pub/sub connection lost; resubscribing", "shard", sh.addr, "err", err)
	t.r.Reload()
	t.requeue(sh, true)
}

// requeue makes the channels of sh pending again, wakes their waiters if wake, and kicks the fixer.
func (t *sharded) requeue(sh *shard, wake bool) {
	t.mu.Lock()
	var names []string
	for ch := range sh.channels {
		if t.where[ch] == sh {
			delete(t.where, ch)
			t.pending[ch] = time.Time{}
			names = append(names, ch)
		}
	}
	clear(sh.channels)
	clear(sh.confirmed)
	t.mu.Unlock()
	if wake {
		t.h.wake(names)
	}
	t.retry()
}

// refused handles an error reply on sh: for a MOVED, the channels of its slot not confirmed on sh
// are made pending, to be sent after retryEvery to the node it names.
func (t *sharded) refused(sh *shard, reply string) {
	f := strings.Fields(reply)
	if len(f) != 3 || f[0] != "MOVED" {
		return
	}
	moved, err := strconv.Atoi(f[1])
	if err != nil {
		return
	}
	later := time.Now().Add(retryEvery)
	t.mu.Lock()
	for ch := range sh.channels {
		if t.where[ch] == sh && !sh.confirmed[ch] && slot.Of(ch) == moved {
			delete(sh.channels, ch)
			delete(t.where, ch)
			t.pending[ch] = later
			t.hint[ch] = f[2]
		}
	}
	t.mu.Unlock()
	t.retry()
}

// retry wakes the fixer.
func (t *sharded) retry() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// fixer sends pending subscriptions, retrying every retryEvery while some fail, until close.
func (t *sharded) fixer() {
	defer t.wg.Done()
	again := time.NewTimer(retryEvery)
	defer again.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-t.kick:
		case <-again.C:
		}
		t.mu.Lock()
		var names []string
		now, wait := time.Now(), time.Duration(0)
		for ch, notBefore := range t.pending {
			if d := notBefore.Sub(now); d > 0 {
				wait = max(wait, d)
				continue
			}
			names = append(names, ch)
		}
		t.mu.Unlock()
		for _, ch := range names {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if t.send(ctx, ch) != nil {
				wait = max(wait, retryEvery)
			}
			cancel()
		}
		if wait > 0 {
			again.Reset(wait)
		}
	}
}

// pinger pings every connection every pingEvery, until close, so that a silent connection can be
// told from an idle one. It is a goroutine of its own: a subscription stuck dialling a dead node
// must not starve the connections that work.
func (t *sharded) pinger() {
	defer t.wg.Done()
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-ping.C:
		}
		t.mu.Lock()
		shards := make([]*shard, 0, len(t.shards))
		for _, sh := range t.shards {
			shards = append(shards, sh)
		}
		t.mu.Unlock()
		for _, sh := range shards {
			if err := sh.write(context.Background(), "PING"); err != nil {
				t.fail(sh, err)
			}
		}
	}
}

func (t *sharded) close() {
	t.mu.Lock()
	t.closed = true
	shards := t.shards
	t.shards = map[string]*shard{}
	t.mu.Unlock()
	close(t.stop)
	for _, sh := range shards {
		t.mu.Lock()
		sh.dead = true
		t.mu.Unlock()
		_ = sh.nc.Close()
	}
	t.wg.Wait()
}

func (t *sharded) conns() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.shards)
}
