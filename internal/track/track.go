// Package track tells a Client at once when one of its holds disappears from Redis, instead of at
// its next renewal: a deletion (a force unlock, DEL, UNLINK), a FLUSHALL, an eviction or an expiry,
// a restart that lost the data, a failover to a replica without the key.
//
// It uses Redis's client tracking (Redis 6 and later): per master, one RESP3 connection of the
// tracker's own with CLIENT TRACKING on. Reading a key on that connection makes the server
// remember it; the next change to the key by anyone (or its expiry, eviction, a flush) sends an
// invalidation push on the connection, once. The read is the hold's check itself: the renewal
// script in its read-only mode, which says whether the owner still holds what it holds. So every
// hold is, at all times, either being checked or tracked since its last check:
//
//   - a hold that has lived Delay is checked (within dueSlack more; holds shorter than that cost
//     nothing);
//   - an invalidation of its key checks it again (a change of our own, such as a renewal, costs one
//     read);
//   - a check answers the hold's time left: a hold ending sooner than its renewals allow is checked
//     again when its time is up (Redis announces an expiry only when its expiry cycle finds the
//     key, which among many keys that expire can be seconds late; the read expires it at once);
//   - when a connection is lost, every hold it tracked is checked again as soon as a connection to
//     the key's master is open again: a restart or a failover that lost the key is found then.
//
// A check that finds the owner gone is the verdict of the master (the connection is to a node that
// says it is a master), and the hold is declared lost (Config.Gone); nothing else is. A missed
// invalidation (a push lost with its connection is made up for by the check after reconnecting)
// costs at most the next renewal, which stays the backstop.
package track

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/internal/resp"
)

// Timing of the tracker.
const (
	// Delay is how long a hold lives before it is first checked and tracked.
	Delay = 20 * time.Millisecond
	// redialEvery is the pause between attempts to open a master's connection.
	redialEvery = 100 * time.Millisecond
	// dialTimeout bounds one attempt: the TCP connect and the handshake (one pipelined round trip).
	// An attempt whose bytes a healing network lost is given up then and made again, so that the
	// master is reached within dialTimeout+redialEvery of the network's heal, inside the second a
	// restart or failover is told in. A master farther than that has no tracking (the renewals tell).
	dialTimeout = 500 * time.Millisecond
	// pingEvery is how often a connection that tracks holds asks its node for its role (idlePings
	// times less often one that tracks none); a ping unanswered in pingTimeout breaks it (a paused or
	// partitioned node sends no FIN), as does an answer other than "master" (a failover that
	// demoted the node without closing its connections).
	pingEvery   = 250 * time.Millisecond
	idlePings   = 8
	pingTimeout = 2 * time.Second
	// maxBackoff bounds the pause between connections whose verdicts the Client's commands keep
	// contradicting (a node that says it is a master but is not the Client's, a database selected
	// in an OnConnect hook the tracker does not run).
	maxBackoff = 5 * time.Second
	// rereadSlack is how much later than its key's time a hold ending soon may be read again, to
	// keep one pending re-read per hold.
	rereadSlack = 10 * time.Millisecond
	// dueSlack is how much later than Delay a hold may be first checked, so that the timer that
	// hands holds over fires at most once per dueSlack however many holds a Client takes (each
	// firing runs a goroutine).
	dueSlack = time.Millisecond
	// maxCheck is the largest number of holds checked in one pipeline.
	maxCheck = 1000
)

// What a check says of a hold besides its time left (Config.Decode).
const (
	Gone     time.Duration = -2 // the owner no longer holds it
	NoExpiry time.Duration = -1 // held, and nothing makes it expire
)

// Config is what the tracker needs from its Client.
type Config struct {
	// Master returns the options of the master serving key, or an error if it is not known (the
	// hold is then tried again later). It may block on the network (bounded by ctx).
	Master func(ctx context.Context, key string) (*redis.Options, error)
	// Reload asks for the Cluster slot map to be read again; nil elsewhere. It must not block.
	Reload func()
	// Check builds the read-only checks of holds, all served by one master: the commands, and for
	// each command the holds it checks. The reply of command i is decoded by Decode.
	Check func(items []*renew.Entry) (cmds [][]any, of [][]int)
	// Decode reads the reply of one check command: for each hold it checks, its time left (how
	// long until its key, or its own expiry, ends it), NoExpiry, or Gone.
	Decode func(reply any) ([]time.Duration, error)
	// Load is the SCRIPT LOAD command of the script a NOSCRIPT reply to cmd asks for.
	Load func(cmd []any) []any
	// Confirm checks entries, which a check on the tracker's connection found gone, through the
	// Client's own command path (the path its renewals take, to the master it uses): one alive flag
	// per entry. A verdict stands only if it agrees: a connection to a node that still says it is a
	// master but is no longer the one the Client's commands reach (a Sentinel failover, before the old
	// master is demoted) is not a verdict. It may block, bounded by ctx. nil: the check is the verdict.
	Confirm func(ctx context.Context, entries []*renew.Entry) ([]bool, error)
	// Active reports whether e is registered, and its registration's generation.
	Active func(e *renew.Entry) (gen uint64, ok bool)
	// Gone declares the registration gen of e lost, with cause why.
	Gone func(e *renew.Entry, gen uint64, why error)
	Log  *slog.Logger
}

// Tracker tracks the holds of one Client. Create it with New, stop it with Close.
type Tracker struct {
	cfg Config

	mu      sync.Mutex
	fresh   []item // holds added, not yet checked (oldest first), from index head
	head    int
	timer   *time.Timer
	nodes   map[string]*node // by master address
	closed  bool
	checked uint64 // holds checked so far, for tests and stats
	pending int    // goroutines of after that have not run or ended yet

	stop   chan struct{}
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// reg is one registration of an entry.
type reg struct {
	e   *renew.Entry
	gen uint64
}

type item struct {
	e   *renew.Entry
	gen uint64
	at  time.Time
	why error // what a check that finds the owner gone reports
	// first: not checked yet. A first check that finds the owner gone reports ErrReconnected if the
	// node's connection was lost (or could not be opened) after the hold was taken: its master
	// restarted or failed over since.
	first bool
}

// New returns a tracker; it starts no goroutine and opens no connection until the first hold is due.
func New(cfg Config) *Tracker {
	t := &Tracker{cfg: cfg, nodes: map[string]*node{}, stop: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.timer = time.AfterFunc(time.Hour, t.due)
	t.timer.Stop()
	return t
}

// Add makes the registration gen of e tracked once it has lived Delay. It does not block.
func (t *Tracker) Add(e *renew.Entry, gen uint64) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.fresh = append(t.fresh, item{e: e, gen: gen, at: now, why: ErrChanged, first: true})
	if len(t.fresh) == t.head+1 {
		t.timer.Reset(Delay)
	}
}

// Ended tells the tracker that the registration gen of e has ended (released). If it is the latest
// hold added and not yet checked, it is forgotten at once, and the timer is stopped when nothing is
// left to check: a Client that holds one lock at a time, briefly, then never has its timer fire (a
// wake-up of an otherwise idle process per acquisition). Other ended holds are skipped when their
// time comes, as before. It does not block.
func (t *Tracker) Ended(e *renew.Entry, gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.fresh)
	if n == t.head || t.fresh[n-1].e != e || t.fresh[n-1].gen != gen {
		return
	}
	t.fresh[n-1] = item{}
	t.fresh = t.fresh[:n-1]
	if n-1 == t.head {
		t.fresh, t.head = t.fresh[:0], 0
		t.timer.Stop()
	}
}

// due hands the holds that have lived Delay to their masters' connections.
func (t *Tracker) due() {
	now := time.Now()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.wg.Add(1) // Close waits for this call
	defer t.wg.Done()
	n := t.head
	for n < len(t.fresh) && now.Sub(t.fresh[n].at) >= Delay {
		n++
	}
	var ready []item
	for _, it := range t.fresh[t.head:n] {
		if gen, ok := t.cfg.Active(it.e); ok && gen == it.gen {
			ready = append(ready, it)
		}
	}
	// The handed-over items are dropped from the front; the rest moves down only when the front
	// is the larger part (a copy per firing would cost as many moves as holds taken in Delay).
	clear(t.fresh[t.head:n])
	t.head = n
	if t.head == len(t.fresh) {
		t.fresh, t.head = t.fresh[:0], 0
	} else if t.head >= len(t.fresh)-t.head {
		rest := copy(t.fresh, t.fresh[t.head:])
		clear(t.fresh[rest:])
		t.fresh, t.head = t.fresh[:rest], 0
	}
	if t.head < len(t.fresh) {
		t.timer.Reset(max(Delay-now.Sub(t.fresh[t.head].at), dueSlack))
	}
	t.mu.Unlock()
	if len(ready) > 0 {
		t.place(ready)
	}
}

// place hands items to the connections of their masters, resolving each key's master off the
// tracker's lock (it may block on the network).
func (t *Tracker) place(items []item) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	by := map[string][]item{}
	opts := map[string]*redis.Options{}
	for _, it := range items {
		opt, err := t.cfg.Master(ctx, it.e.Key)
		if err != nil {
			t.cfg.Log.Debug("redisson: tracking: master unknown", "key", it.e.Key, "err", err)
			opt = nil
		}
		addr := ""
		if opt != nil {
			addr = opt.Addr
			opts[addr] = opt
		}
		by[addr] = append(by[addr], it)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	for addr, its := range by {
		if addr == "" { // no master known: try again in a while, through a node of its own
			t.nodeLocked("", nil).queue(its)
			continue
		}
		t.nodeLocked(addr, opts[addr]).queue(its)
	}
}

// later runs f after redialEvery (see after).
func (t *Tracker) later(f func()) { t.after(redialEvery, f) }

// after runs f after d on a goroutine of its own (off a node's goroutine: f may wait for the
// node), unless Close comes first; Close waits for it.
func (t *Tracker) after(d time.Duration, f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.wg.Add(1)
	t.pending++
	go func() {
		defer t.wg.Done()
		defer func() {
			t.mu.Lock()
			t.pending--
			t.mu.Unlock()
		}()
		select {
		case <-t.stop:
		case <-time.After(d):
			f()
		}
	}()
}

// nodeLocked returns the node of addr, starting it if new. Called with t.mu held.
func (t *Tracker) nodeLocked(addr string, opt *redis.Options) *node {
	n := t.nodes[addr]
	if n == nil {
		n = &node{t: t, addr: addr, opt: opt, keys: map[string]map[*renew.Entry]item{}, rereads: map[reg]time.Time{}, kick: make(chan struct{}, 1)}
		t.nodes[addr] = n
		t.wg.Add(1)
		go n.run()
	}
	return n
}

// Checked reports how many hold checks were made so far.
func (t *Tracker) Checked() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.checked
}

// Pending reports the goroutines waiting to run something later (re-reads, retries of placements).
func (t *Tracker) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending
}

// Tracked reports the holds tracked on the open connections (each once, whatever its keys).
func (t *Tracker) Tracked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, nd := range t.nodes {
		nd.mu.Lock()
		seen := map[*renew.Entry]bool{}
		for _, m := range nd.keys {
			for e := range m {
				seen[e] = true
			}
		}
		n += len(seen)
		nd.mu.Unlock()
	}
	return n
}

// Conns reports the open tracking connections.
func (t *Tracker) Conns() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, nd := range t.nodes {
		nd.mu.Lock()
		if nd.c != nil {
			n++
		}
		nd.mu.Unlock()
	}
	return n
}

// Close closes the connections and waits for the tracker's goroutines.
func (t *Tracker) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		t.wg.Wait()
		return
	}
	t.closed = true
	t.timer.Stop()
	t.fresh, t.head = nil, 0
	close(t.stop)
	t.cancel()
	t.mu.Unlock()
	t.wg.Wait()
}

// node tracks the holds served by one master (addr "": holds whose master was not known).
type node struct {
	t    *Tracker
	addr string
	opt  *redis.Options

	mu      sync.Mutex
	c       *conn                            // nil while disconnected
	broke   time.Time                        // when a connection was last lost or refused, or the node woke with none (see run)
	flushAt time.Time                        // when the last invalidation of every key came
	rereads map[reg]time.Time                // the re-read due of each hold ending soon (see rereadAt)
	keys    map[string]map[*renew.Entry]item // holds tracked on c, by key (every key of each hold)
	todo    []item                           // holds to check
	flushed bool                             // an invalidation of every key came
	// backoff is the pause before the next connection after one whose verdicts the Client's
	// commands contradicted (errElsewhere), doubling while they go on doing so; 0 otherwise.
	backoff time.Duration
	kick    chan struct{}
}

// queue adds items to the holds to check. It does not block.
func (n *node) queue(items []item) {
	n.mu.Lock()
	n.todo = append(n.todo, items...)
	n.mu.Unlock()
	n.wake()
}

func (n *node) wake() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// invalidated is the connection's push handler: the holds of keys (nil: all) are checked again.
func (n *node) invalidated(keys []string) {
	n.mu.Lock()
	if keys == nil {
		n.flushed = true
		n.flushAt = time.Now()
	}
	for _, k := range keys {
		for _, it := range n.keys[k] {
			n.forgetLocked(it.e)
			it.why = ErrChanged
			n.todo = append(n.todo, it)
		}
	}
	n.mu.Unlock()
	n.wake()
}

// run keeps the connection open and checks the holds queued, until Close.
func (n *node) run() {
	defer n.t.wg.Done()
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	idle := 0
	for {
		if n.addr == "" { // master unknown: place the holds again in a while
			select {
			case <-n.t.stop:
				return
			case <-time.After(redialEvery):
			}
			n.rehome()
			continue
		}
		n.mu.Lock()
		c, wait := n.c, n.backoff
		n.mu.Unlock()
		if c == nil && !n.anything() {
			// Nothing to track here (a master demoted by a failover, whose holds went to the new
			// one; a node whose holds all ended): no connection until holds are queued for it. A
			// backoff from verdicts contradicted before is forgotten: the holds to come are new.
			n.mu.Lock()
			n.backoff = 0
			n.mu.Unlock()
			select {
			case <-n.t.stop:
				return
			case <-n.kick:
			}
			// The holds queued meanwhile were taken while no connection was open: their first
			// check tells a loss as a reconnection's (see broke).
			n.mu.Lock()
			n.broke = time.Now()
			n.mu.Unlock()
			continue
		}
		if c == nil {
			if wait > 0 { // the last connection disagreed with the Client's commands
				select {
				case <-n.t.stop:
					return
				case <-time.After(wait):
				}
				if n.t.cfg.Reload != nil {
					n.rehome() // a Cluster's slot map, reloaded: the holds go where it says now
				}
			}
			if !n.connect() {
				select {
				case <-n.t.stop:
					return
				case <-time.After(redialEvery):
				}
				continue
			}
			continue
		}
		select {
		case <-n.t.stop:
			c.close()
			<-c.done
			return
		case <-c.done:
			n.lost(c, c.err)
		case <-n.kick:
			n.check(c)
		case <-ping.C:
			if idle++; idle >= idlePings {
				n.sweep()
			}
			n.mu.Lock()
			busy := len(n.keys) > 0
			n.mu.Unlock()
			if busy || idle >= idlePings {
				idle = 0
				if err := n.ping(c); err != nil {
					n.lost(c, err)
				}
			}
		}
	}
}

// anything reports whether the node has holds to track or check, dropping those to check that are
// no longer registered.
func (n *node) anything() bool {
	n.mu.Lock()
	its := n.todo
	n.todo = nil
	n.mu.Unlock()
	its = n.live(its)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.todo = append(its, n.todo...)
	return len(n.todo) > 0 || len(n.keys) > 0
}

// ping asks the node for its role: a connection that does not answer, or whose node is no longer
// a master (a failover demoted it, keeping its connections), is dropped, and the holds it tracked
// are checked again where their keys' master now is.
func (n *node) ping(c *conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	r, err := c.do(ctx, []any{"ROLE"})
	if err != nil {
		return err
	}
	l, _ := r[0].([]any)
	if len(l) == 0 || l[0] != "master" {
		return fmt.Errorf("%w: %s now answers ROLE with %v", errRole, n.addr, r[0])
	}
	return nil
}

// connect opens the connection; every hold of the node is then checked (and tracked) anew. A node
// that cannot be reached for long hands its holds back to be placed again (a Cluster failover
// moves their slots elsewhere).
func (n *node) connect() bool {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	c, err := dial(ctx, n.opt, n.invalidated)
	if err != nil {
		n.t.cfg.Log.Debug("redisson: tracking: cannot connect", "addr", n.addr, "err", err)
		n.mu.Lock()
		n.broke = time.Now()
		n.mu.Unlock()
		if n.t.cfg.Reload != nil {
			n.t.cfg.Reload()
			n.rehome()
		}
		return false
	}
	n.mu.Lock()
	n.c = c
	n.flushed = false
	n.mu.Unlock()
	n.wake()
	return true
}

// lost drops a broken connection: every hold it tracked is to be checked on the next one.
func (n *node) lost(c *conn, err error) {
	c.close()
	<-c.done
	n.t.cfg.Log.Debug("redisson: tracking: connection lost", "addr", n.addr, "err", err)
	n.mu.Lock()
	n.c = nil
	n.broke = time.Now()
	n.requeueAllLocked(ErrReconnected)
	n.mu.Unlock()
}

// requeueAllLocked moves every tracked hold to the holds to check, for why. Called with n.mu held.
func (n *node) requeueAllLocked(why error) {
	seen := map[*renew.Entry]bool{}
	for k, its := range n.keys {
		for e, it := range its {
			if !seen[e] {
				seen[e] = true
				it.why = why
				n.todo = append(n.todo, it)
			}
		}
		delete(n.keys, k)
	}
}

// rehome takes the node's holds to check and places them again (their master may have changed).
func (n *node) rehome() {
	n.mu.Lock()
	if n.addr != "" {
		n.requeueAllLocked(ErrReconnected)
	}
	its := n.todo
	n.todo = nil
	n.mu.Unlock()
	if len(its) > 0 {
		n.t.place(n.live(its))
	}
}

// live returns the items still registered, each once.
func (n *node) live(its []item) []item {
	out := its[:0:0]
	seen := map[*renew.Entry]bool{}
	for _, it := range its {
		if gen, ok := n.t.cfg.Active(it.e); ok && gen == it.gen && !seen[it.e] {
			seen[it.e] = true
			out = append(out, it)
		}
	}
	return out
}

// check checks the holds queued on c: each is first recorded as tracked under its keys (so that an
// invalidation arriving while its check is out queues it again), then read.
func (n *node) check(c *conn) {
	for {
		n.mu.Lock()
		if n.flushed {
			n.flushed = false
			n.requeueAllLocked(ErrFlushed)
			for i := range n.todo { // holds not yet checked when the flush came, too
				n.todo[i].why = ErrFlushed
			}
		}
		its := n.todo
		if len(its) > maxCheck {
			n.todo = append([]item(nil), its[maxCheck:]...)
			its = its[:maxCheck]
		} else {
			n.todo = nil
		}
		n.mu.Unlock()
		its = n.live(its)
		if len(its) == 0 {
			n.mu.Lock()
			more := len(n.todo) > 0 || n.flushed
			n.mu.Unlock()
			if !more {
				return
			}
			continue
		}
		n.mu.Lock()
		for i := range its {
			switch {
			case !its[i].first:
			case its[i].at.Before(n.broke):
				its[i].why = ErrReconnected
			case its[i].at.Before(n.flushAt):
				its[i].why = ErrFlushed
			}
			its[i].first = false
			for _, k := range keysOf(its[i].e) {
				m := n.keys[k]
				if m == nil {
					m = map[*renew.Entry]item{}
					n.keys[k] = m
				}
				m[its[i].e] = its[i]
			}
		}
		n.mu.Unlock()
		if err := n.send(c, its); err != nil {
			n.lost(c, err)
			return
		}
	}
}

func keysOf(e *renew.Entry) []string {
	if e.Keys != nil {
		return e.Keys
	}
	return []string{e.Key}
}

// send sends the checks of its on c and acts on the verdicts.
func (n *node) send(c *conn, its []item) error {
	entries := make([]*renew.Entry, len(its))
	for i, it := range its {
		entries[i] = it.e
	}
	cmds, of := n.t.cfg.Check(entries)
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	sent := time.Now()
	replies, err := c.do(ctx, cmds...)
	if err != nil {
		return err
	}
	// A flush announced while the checks were out (its push comes before their replies) is what a
	// check that finds a hold gone most likely saw.
	n.mu.Lock()
	flushed := !n.flushAt.Before(sent)
	n.mu.Unlock()
	n.t.mu.Lock()
	n.t.checked += uint64(len(its))
	n.t.mu.Unlock()
	var again []item // a script to load first, or a slot served elsewhere
	var gone []item  // found gone: a verdict once confirmed
	var reload []any
	for i, r := range replies {
		left, err := n.t.cfg.Decode(r)
		if err != nil || len(left) != len(of[i]) {
			var re resp.Error
			if errors.As(err, &re) && len(re) >= 8 && re[:8] == "NOSCRIPT" {
				reload = n.t.cfg.Load(cmds[i])
				for _, j := range of[i] {
					again = append(again, its[j])
				}
				continue
			}
			// MOVED, ASK, an error: not a verdict. Place it again (its slot may have moved).
			n.t.cfg.Log.Debug("redisson: tracking: check failed", "addr", n.addr, "err", err)
			n.untrack(its, of[i])
			moved := make([]item, 0, len(of[i]))
			for _, j := range of[i] {
				moved = append(moved, its[j])
			}
			n.t.later(func() { n.t.place(n.live(moved)) })
			continue
		}
		for k, j := range of[i] {
			switch it := its[j]; {
			case left[k] == Gone:
				n.untrack(its, []int{j})
				if flushed && it.why == ErrChanged {
					it.why = ErrFlushed
				}
				gone = append(gone, it)
			case left[k] >= 0 && (!it.e.Watchdog || left[k] < it.e.Lease/2):
				// A fixed lease, or a watchdog hold ending sooner than its renewals would let it
				// (someone shortened its TTL, its renewals fail): checked again when it ends. Redis
				// announces an expiry only when its expiry cycle finds the key, which on a server
				// with many keys that expire can be seconds late; the read then expires it at once.
				// A fixed lease's own end is told by the Client first (its deadline comes before the
				// key's expiry): the re-read comes a little later, not to race it.
				it.why = ErrChanged
				late := time.Millisecond
				if !it.e.Watchdog {
					late = 20 * time.Millisecond
				}
				n.rereadAt(it, time.Now().Add(left[k]+late))
			}
		}
	}
	if reload != nil {
		if _, err := c.do(ctx, reload); err != nil {
			n.queue(gone)
			return err
		}
		n.untrack(again, nil)
		n.queue(again)
	}
	if len(gone) == 0 {
		n.mu.Lock()
		n.backoff = 0
		n.mu.Unlock()
		return nil
	}
	n.t.wg.Add(1)
	go n.verdicts(c, gone) // off the node's goroutine: a slow confirmation must not delay the others
	return nil
}

// verdicts declares lost the holds of gone that the Client's own command path also finds gone
// (Config.Confirm), on a goroutine of its own. A hold it finds held means the connection c is not
// to the master the Client uses: c is closed, the next one opened after a pause (backoff), and the
// holds checked again there. One it cannot check now is checked again in a while.
func (n *node) verdicts(c *conn, gone []item) {
	defer n.t.wg.Done()
	live := n.live(gone)
	if len(live) == 0 {
		return
	}
	entries := make([]*renew.Entry, len(live))
	for i, it := range live {
		entries[i] = it.e
	}
	ctx, cancel := context.WithTimeout(n.t.ctx, pingTimeout) // Close cancels it
	defer cancel()
	alive := make([]bool, len(entries)) // no Confirm: the check is the verdict
	var err error
	if n.t.cfg.Confirm != nil {
		alive, err = n.t.cfg.Confirm(ctx, entries)
	}
	if err != nil || len(alive) != len(live) {
		n.t.cfg.Log.Debug("redisson: tracking: cannot confirm a loss", "addr", n.addr, "err", err)
		n.t.later(func() { n.t.place(n.live(live)) })
		return
	}
	var kept []item
	for i, it := range live {
		if alive[i] {
			kept = append(kept, it)
		} else {
			n.t.cfg.Gone(it.e, it.gen, it.why)
		}
	}
	if len(kept) == 0 {
		return
	}
	n.t.cfg.Log.Debug("redisson: tracking: holds gone on the tracker's connection are held where the Client's commands go",
		"addr", n.addr, "holds", len(kept), "err", errElsewhere)
	n.mu.Lock()
	n.backoff = min(max(2*n.backoff, redialEvery), maxBackoff)
	n.mu.Unlock()
	n.queue(kept)
	if n.t.cfg.Reload != nil {
		n.t.cfg.Reload()
	}
	c.close() // the node's goroutine sees it end and reconnects after the backoff
}

// rereadAt checks it again at when, unless a check of it is already due by then (or within
// rereadSlack after: each check's time left is rounded to the millisecond): one pending re-read per
// hold, however often it is checked.
func (n *node) rereadAt(it item, when time.Time) {
	r := reg{it.e, it.gen}
	n.mu.Lock()
	if d, ok := n.rereads[r]; ok && !d.After(when.Add(rereadSlack)) {
		n.mu.Unlock()
		return
	}
	n.rereads[r] = when
	n.mu.Unlock()
	n.t.after(time.Until(when), func() {
		n.mu.Lock()
		if n.rereads[r].Equal(when) {
			delete(n.rereads, r)
		}
		n.mu.Unlock()
		n.queue(n.live([]item{it}))
	})
}

// untrack forgets its[j] for each j of idx (all of its when idx is nil).
func (n *node) untrack(its []item, idx []int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if idx == nil {
		for _, it := range its {
			n.forgetLocked(it.e)
		}
		return
	}
	for _, j := range idx {
		n.forgetLocked(its[j].e)
	}
}

// forgetLocked stops tracking e under every key of it. Called with n.mu held.
func (n *node) forgetLocked(e *renew.Entry) {
	for _, k := range keysOf(e) {
		if m := n.keys[k]; m != nil {
			delete(m, e)
			if len(m) == 0 {
				delete(n.keys, k)
			}
		}
	}
}

// sweep forgets the holds of several keys tracked that are no longer registered. A hold is
// forgotten at the invalidation its end causes (its release, its expiry change the key), but a
// hold may also name a key nothing writes (a hash tag of Redisson's read-write layout), which is
// never invalidated.
func (n *node) sweep() {
	n.mu.Lock()
	var all []item
	seen := map[*renew.Entry]bool{}
	for _, m := range n.keys {
		for e, it := range m {
			if !seen[e] && len(e.Keys) > 1 {
				seen[e] = true
				all = append(all, it)
			}
		}
	}
	n.mu.Unlock()
	var dead []item
	for _, it := range all {
		if gen, ok := n.t.cfg.Active(it.e); !ok || gen != it.gen {
			dead = append(dead, it)
		}
	}
	n.untrack(dead, nil)
}

// Causes of the losses the tracker finds: what preceded the check that found the owner gone.
var (
	ErrChanged     = errors.New("its key was deleted or changed hands (a force unlock, DEL, UNLINK, expiry or eviction), seen at once by client tracking")
	ErrFlushed     = errors.New("the database was flushed (FLUSHALL, FLUSHDB), seen at once by client tracking")
	ErrReconnected = errors.New("its key was gone when the tracker's connection to its master was open again (a restart or a failover that lost it, or a change made while the connection was down)")
)
