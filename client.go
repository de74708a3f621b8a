package redisson

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/gate"
	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/internal/slot"
	"github.com/goredisson/redisson/internal/track"
	"github.com/goredisson/redisson/internal/wait"
)

// cleanupTimeout bounds the best-effort release that undoes an acquisition whose outcome is unknown,
// and an Unlock called with an already cancelled context.
const cleanupTimeout = 5 * time.Second

// Client owns what all objects created from it share: the go-redis client, one renewal scheduler
// goroutine, one pub/sub hub (one connection, or one per master on a Cluster, opened on the first
// wait) and the local wait queues.
// Create it with New and stop it with Close. A Client is safe for concurrent use. A nil or zero
// Client (one not made by New) is bad input: every method that returns an error returns one
// matching ErrInvalidArgument, doing nothing, Stats returns zero counters, and the handles it
// makes fail every call the same way; no method panics (nor do those of nil and zero handles).
type Client struct {
	rdb redis.UniversalClient
	// ap is rdb's automatic pipeliner (WithAutoPipelining), or nil; inflight counts the commands
	// send has out (sent, not answered yet): a command starting while one is out goes through ap.
	ap       atomic.Pointer[redis.AutoPipeliner]
	apOf     *redis.Client // whose pipeliner ap is
	inflight atomic.Int32
	piped    atomic.Uint64 // commands sent through ap (for tests)
	late     lateWrites    // pipelined commands abandoned, their batch not ended (see process)
	cfg      config
	cluster  bool
	// replicaReads: the go-redis client may send read-only commands to replicas (a ClusterClient
	// with ReadOnly, RouteByLatency or RouteRandomly); the library's own reads then go in
	// transactions, which go-redis always sends to the master (see read).
	replicaReads bool
	publish      any // "PUBLISH", or on a Cluster "SPUBLISH" (the hub subscribes per shard)
	// waiterArg is the waiter timeout in ms, boxed once; watchdogArg, the watchdog timeout (msArg).
	waiterArg, watchdogArg any
	// taken is takenRecord for the waiter timeout and rdb's ReadTimeout: how long at least the
	// request records of a Semaphore and a CountDownLatch live (see evalRecorded); takenArg is it in
	// ms, boxed once.
	taken    time.Duration
	takenArg any

	// id is random and unguessable, the prefix of every owner and request id: 24 hex digits, or on a
	// Client made WithRedissonCompat a random UUID, so that its owners have Java Redisson's form.
	id  string
	seq atomic.Uint64 // suffix of every owner and request id (see newID)
	// The process record (process.go): started by the first newID unless WithoutProcessRecord;
	// recordUp is closed once it is first written (tests wait for it), started is when New ran.
	recordOnce sync.Once
	recordUp   chan struct{}
	started    time.Time
	idBase     int           // the base of the suffix: 36, or 10 (a Java thread id's) in compat mode
	lostHolds  atomic.Uint64 // holds ended by a loss, a fixed lease or Close (Stats.Lost)
	unqueued   atomic.Int64  // acquisitions waiting in no Redis queue: SpinLock, RedLock (in Stats.Waiting)
	// Events reported on a goroutine of their own (see emitLater): queued, and whether it runs.
	eventsMu      sync.Mutex
	eventsQueued  []Event
	eventsRunning bool
	eventsWG      sync.WaitGroup // the goroutine of emitQueued, which Close waits for
	// rtt is a moving average of the commands' round trips, in ns (see noteRoundTrip).
	rtt atomic.Int64
	// unreachable: the latest command that failed could not reach Redis (see unreachableNow).
	unreachable atomic.Bool
	// cleanupEnd is the deadline the clean-ups starting now share (see detached).
	cleanupEnd atomic.Pointer[sharedEnd]
	// slotsReloaded is when (UnixNano) a renewal's connection error last reloaded the Cluster slot map.
	slotsReloaded atomic.Int64

	acks    acks    // the replica-acknowledged mode (replicas.go)
	servers servers // what INFO said of the masters (servers.go)
	sched   *renew.Scheduler
	tracker *track.Tracker // nil: loss tracking off (WithLossTracking, or a client type it cannot serve)
	hub     *pubsub.Hub
	gates   *lockGates
	engine  *wait.Engine

	done      chan struct{} // closed by Close
	closing   context.Context
	cancelAll context.CancelFunc // ends closing: Close
	closeOnce sync.Once
	bgMu      sync.Mutex     // orders background against Close
	bg        sync.WaitGroup // background goroutines (see background)

	// loaded holds "<node address>|<script hash>" for the scripts known to be loaded on a node (see
	// preload); the address is "" outside a Cluster.
	loaded sync.Map

	// permits are the leased permits of PermitExpirableSemaphores held through this Client (watchdog
	// and fixed lease): "<leases key> <permit id>" → *leasedPermit, until released or lost.
	permits sync.Map

	// blooms remembers the parameters of the BloomFilters this Client used, by object key.
	bloomMu sync.Mutex
	blooms  map[string]bloomParams
	// bloomForgets counts forgetBloom calls (see bloomEpoch).
	bloomForgets uint64
	// bloomLoaded, if set (tests only: export_test.go), is called by a BloomFilter right after it
	// read the configuration and remembered it, to force an interleaving.
	bloomLoaded func()

	// notes remembers, per lock (by gate name), what this Client's acquisitions learnt of it lately.
	notesMu sync.Mutex
	notes   map[string]lockNotes
}

// lockNotes is what a Client remembers of one lock.
type lockNotes struct {
	// contended is when an acquisition last found the lock held: the next fresh acquisitions, for
	// contendedFor, skip the SET NX that would fail anyway (see contend).
	contended time.Time
	// epoch is the queue epoch under which an attempt sent at refreshed refreshed this Client's
	// liveness deadline in the lock's wait queue (see internal/scripts/wait_queue.lua): while that
	// is recent, the Client's next attempts under the same epoch need not refresh it again.
	epoch     int64
	refreshed time.Time
}

// contendedFor is how long a lock found held counts as contended; maxNotes bounds the memory.
const (
	contendedFor = time.Second
	maxNotes     = 4096
)

// note updates the notes on the lock of gate name.
func (c *Client) note(name string, update func(*lockNotes)) {
	c.notesMu.Lock()
	defer c.notesMu.Unlock()
	if c.notes == nil || len(c.notes) >= maxNotes {
		c.notes = map[string]lockNotes{} // forget: at worst a few SET NX that fail and refreshes
	}
	n := c.notes[name]
	update(&n)
	c.notes[name] = n
}

// bloomEpoch returns the count of forgets so far: a read of parameters that starts at epoch e may
// remember them (noteBloom) only if no forget came since, or it would bring back parameters that a
// Delete or a stale call found gone.
func (c *Client) bloomEpoch() uint64 {
	c.bloomMu.Lock()
	defer c.bloomMu.Unlock()
	return c.bloomForgets
}

// noteBloom remembers the parameters of the BloomFilter at key, read from Redis after bloomEpoch
// returned epoch, unless a forget came since.
func (c *Client) noteBloom(key string, p bloomParams, epoch uint64) {
	c.bloomMu.Lock()
	defer c.bloomMu.Unlock()
	if epoch != c.bloomForgets {
		return
	}
	if c.blooms == nil || len(c.blooms) >= maxNotes {
		c.blooms = map[string]bloomParams{} // forget: each filter's next call reads them again
	}
	c.blooms[key] = p
}

// bloomParams returns the remembered parameters of the BloomFilter at key.
func (c *Client) bloomParams(key string) (bloomParams, bool) {
	c.bloomMu.Lock()
	defer c.bloomMu.Unlock()
	p, ok := c.blooms[key]
	return p, ok
}

// forgetBloom forgets the parameters of the BloomFilter at key.
func (c *Client) forgetBloom(key string) {
	c.bloomMu.Lock()
	defer c.bloomMu.Unlock()
	delete(c.blooms, key)
	c.bloomForgets++
}

// markContended notes that an acquisition found the lock of gate name held.
func (c *Client) markContended(name string, now time.Time) {
	c.note(name, func(n *lockNotes) { n.contended = now })
}

// recentlyContended reports whether an acquisition found the lock of gate name held lately.
func (c *Client) recentlyContended(name string, now time.Time) bool {
	c.notesMu.Lock()
	defer c.notesMu.Unlock()
	at := c.notes[name].contended
	return !at.IsZero() && now.Sub(at) < contendedFor
}

// noteEpoch notes that an attempt sent at sent refreshed this Client's liveness deadline in the
// queue of the lock of gate name under epoch.
func (c *Client) noteEpoch(name string, epoch int64, sent time.Time) {
	c.note(name, func(n *lockNotes) {
		if sent.After(n.refreshed) {
			n.epoch, n.refreshed = epoch, sent
		}
	})
}

// knownEpoch is the script argument naming the epoch of this Client's recent liveness refresh in the
// queue of the lock of gate name: "" unless it was sent less than a third of the waiter timeout
// before now, so that the deadline it set has at least two thirds of the timeout left.
func (c *Client) knownEpoch(name string, now time.Time) string {
	c.notesMu.Lock()
	defer c.notesMu.Unlock()
	n := c.notes[name]
	if n.epoch == 0 || now.Sub(n.refreshed) >= c.cfg.waiterTimeout/3 {
		return ""
	}
	return strconv.FormatInt(n.epoch, 10)
}

// New returns a Client over rdb, which may be a plain, failover (Sentinel) or Cluster go-redis client.
// It starts the renewal scheduler goroutine and does no I/O. With its first command to a master, and
// then once a minute, the Client asks that master for its maxmemory-policy, warning if it evicts
// keys (see ErrEvicting, Stats.Evicting). Its first acquisition, wait or request (of a lock,
// semaphore or latch) starts a goroutine that keeps the Client's process record in Redis, which
// names this process to Inspect (see WithoutProcessRecord). Invalid options or a nil rdb return an
// error matching ErrInvalidArgument.
//
// Set ContextTimeoutEnabled: true on rdb: without it go-redis ignores context deadlines on the socket,
// so a hung server blocks calls for the client's read timeout instead of the context's deadline. New
// logs a warning when it can see the setting is off. A Cluster given by a single seed address needs
// IsClusterMode: true, or NewUniversalClient returns a plain client.
//
// The user's read routing is left to the user's own commands: a ClusterClient (or a Sentinel
// NewFailoverClusterClient) with ReadOnly, RouteByLatency or RouteRandomly may send read-only
// commands to replicas, which lag behind their master, so the library sends its own reads to the
// master of each key, in MULTI/EXEC transactions (which go-redis always routes to the master). A
// NewFailoverClient with ReplicaOnly connects to a replica only: every mutation then fails with
// READONLY (do not use one with this package).
//
// A *redis.Ring is refused (ErrInvalidArgument): a Ring moves keys to another shard when a shard goes
// down or comes back, so a lock would silently gain a second owner.
func New(rdb redis.UniversalClient, opts ...Option) (*Client, error) {
	if rdb == nil || isNilPointer(rdb) {
		return nil, invalidf("nil redis client")
	}
	if _, ok := rdb.(*redis.Ring); ok {
		return nil, invalidf("a *redis.Ring cannot hold locks: it remaps keys when shards come and go; use a plain, failover or Cluster client")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, invalidf("nil option")
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.javaWatchdogSet && !cfg.compat {
		return nil, invalidf("WithRedissonWatchdogTimeout needs WithRedissonCompat: it is the Java clients' lockWatchdogTimeout")
	}
	// A waiter handed the lock holds it, until its first renewal, for what is left of its waiter
	// timeout: never longer than the watchdog timeout, so that a re-entry or partial unlock (which
	// set the watchdog lease) cannot shorten the lease behind the scheduler, and a holder that dies
	// right after the hand-over leaves the lock no longer than the watchdog timeout.
	cfg.waiterTimeout = min(cfg.waiterTimeout, cfg.watchdog)
	id, idBase, err := newClientID(cfg.compat)
	if err != nil {
		return nil, err
	}
	// The pipeliner (WithAutoPipelining) before anything is started: New may fail here.
	var ap *redis.AutoPipeliner
	var apOf *redis.Client
	if r, ok := rdb.(*redis.Client); ok && cfg.autoPipeline {
		if r.Options().ReadTimeout <= 0 { // as go-redis stores them: 0 for ReadTimeout -1, -1 for -2
			// Nothing would bound how long a batch held by a hung server holds the commands
			// queued behind it, whose callers have long returned.
			return nil, invalidf("WithAutoPipelining needs a go-redis ReadTimeout; rdb has none")
		}
		var err error
		if ap, err = r.AsyncAutoPipeline(); err != nil {
			return nil, fmt.Errorf("redisson: WithAutoPipelining: %w", err)
		}
		apOf = r
	}
	taken := takenRecord(cfg.waiterTimeout, readTimeout(rdb))
	c := &Client{
		rdb:         rdb,
		cfg:         cfg,
		publish:     "PUBLISH",
		id:          id,
		idBase:      idBase,
		waiterArg:   cfg.waiterTimeout.Milliseconds(),
		watchdogArg: cfg.watchdog.Milliseconds(),
		taken:       taken,
		takenArg:    taken.Milliseconds(),
		gates:       gate.New[*heir, *owner](),
		done:        make(chan struct{}),
		acks:        acks{need: cfg.acks, timeout: cfg.ackTimeout},
		recordUp:    make(chan struct{}),
		started:     time.Now(),
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		c.cluster, c.replicaReads = true, cc.Options().ReadOnly
	}
	c.closing, c.cancelAll = context.WithCancel(context.Background())
	if timeoutsOff(rdb) {
		cfg.logger.Warn("redisson: go-redis ContextTimeoutEnabled is false; context deadlines will not " +
			"bound network waits. Set ContextTimeoutEnabled: true in the go-redis options.")
	}
	if rt := readTimeout(rdb); cfg.ackTimeout > 0 && rt > 0 && cfg.ackTimeout >= rt {
		cfg.logger.Warn("redisson: the replica acknowledgement timeout is not shorter than the go-redis ReadTimeout; "+
			"a WAIT that takes it all fails as a network error", "ackTimeout", cfg.ackTimeout, "readTimeout", rt)
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		c.hub = pubsub.NewSharded(shardRouter{cc, c}, cfg.logger)
		c.publish = "SPUBLISH"
	} else {
		c.hub = pubsub.New(rdb, cfg.logger)
	}
	// Idle wake-ups at half the renewal period: registering a watchdog lock never wakes the goroutine.
	shortest := min(cfg.watchdog, cfg.waiterTimeout)
	if cfg.compat {
		shortest = min(shortest, cfg.javaWatchdog)
	}
	c.sched = renew.New(c.renewBatches, shortest/6, cfg.margin)
	if cfg.compat {
		// A Java reader's watchdog (Redisson's ReadLockTask) sets an RReadWriteLock's hash TTL to
		// its lockWatchdogTimeout, whatever the other readers' leases: a Go reader counts on no
		// more than that after each renewal, and renews at least every third of it.
		c.sched.SetHorizon(kindCompatRWRead, cfg.javaWatchdog)
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		c.sched.SplitBy(func(e *renew.Entry) string { return clusterNode(cc, e.Key) })
	}
	if apOf != nil {
		c.ap.Store(ap)
		c.apOf = apOf
	}
	c.tracker = c.newTracker()
	c.engine = &wait.Engine{Hub: c.hub, Sched: c.sched, Repoll: cfg.repoll, Closed: c.done}
	return c, nil
}

// isNilPointer reports whether rdb is a nil pointer of a concrete type inside a non-nil interface.
func isNilPointer(rdb redis.UniversalClient) bool {
	v := reflect.ValueOf(rdb)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// readTimeout is the go-redis ReadTimeout of rdb (0: unknown or none).
func readTimeout(rdb redis.UniversalClient) time.Duration {
	switch r := rdb.(type) {
	case *redis.Client:
		return r.Options().ReadTimeout
	case *redis.ClusterClient:
		return r.Options().ReadTimeout
	}
	return 0
}

// timeoutsOff reports whether rdb is known to ignore context deadlines on its sockets.
func timeoutsOff(rdb redis.UniversalClient) bool {
	switch r := rdb.(type) {
	case *redis.Client:
		return !r.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return !r.Options().ContextTimeoutEnabled
	}
	return false
}

// Close stops the renewal scheduler and the pub/sub hub and waits for their goroutines, and for the
// event hook (WithEventHook) to have been told of the losses signalled before. It does not
// release locks: a held lock stays in Redis until its lease runs out (at most the watchdog timeout
// after its last renewal), as if the process had exited. The ownership context of every hold (and
// of every leased permit: HeldPermits.Context) is cancelled with a cause matching ErrLockLost and
// ErrClosed, and waits in progress return ErrClosed. Releases and undos already under way (an
// Unlock whose context ended before its release answered, say) are carried out: Close waits for
// them, at most 5s each when Redis does not answer. It deletes the Client's process record (see
// WithoutProcessRecord), waiting at most 1s for Redis to answer; a record left behind expires
// within 30s. Every later call returns ErrClosed. Close does not close rdb, and is idempotent; it
// returns nil (ErrInvalidArgument on a nil Client).
func (c *Client) Close() error {
	if err := c.checkValid(); err != nil {
		return err
	}
	c.closeOnce.Do(func() {
		c.bgMu.Lock()
		close(c.done)
		c.cancelAll()
		c.bgMu.Unlock()
		if c.tracker != nil {
			c.tracker.Close() // first: it declares losses through the scheduler
		}
		for _, e := range c.sched.Close() {
			if e.OnLost != nil {
				e.OnLost(ErrClosed)
			}
		}
		c.hub.Close()
		c.bg.Wait()
		// The losses the scheduler signalled before it stopped (it signals no more) are reported.
		c.eventsWG.Wait()
	})
	return nil
}

// valid reports whether c was created by New (a nil or zero Client is not).
func (c *Client) valid() bool { return c != nil && c.sched != nil }

// background runs f on a goroutine owned by the Client: stop is closed by Close, which waits for f
// to return. It reports whether it started f: after Close it does nothing.
func (c *Client) background(f func(stop <-chan struct{})) bool {
	c.bgMu.Lock()
	defer c.bgMu.Unlock()
	if c.closed() {
		return false
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		f(c.done)
	}()
	return true
}

// inline runs f on the caller's goroutine, counted as background work: Close waits for it to
// return. After Close it runs f all the same (a clean-up the caller asked for is carried out).
func (c *Client) inline(f func()) {
	c.bgMu.Lock()
	if c.closed() {
		c.bgMu.Unlock()
		f()
		return
	}
	c.bg.Add(1)
	c.bgMu.Unlock()
	defer c.bg.Done()
	f()
}

// Lock returns the reentrant lock called name (Redisson's RLock). It does no I/O; the handle is cheap
// and safe to share between goroutines, which exclude each other as with a sync.Mutex. A bad name is
// reported by the first call on the handle (ErrInvalidArgument).
// On a Client made WithRedissonCompat it is stored in Java Redisson's RLock layout (see
// WithRedissonCompat).
func (c *Client) Lock(name string) *Lock { return &Lock{c.newMutex(name, kindPlain)} }

// Stats is a snapshot of a Client's internal activity.
type Stats struct {
	Held          int    // holds registered with the renewal scheduler (watchdog and fixed lease), and leased permits (PermitExpirableSemaphore)
	Waiting       int    // acquisitions waiting: queued in Redis and kept alive by heartbeats, or in no queue (SpinLock, RedLock)
	RenewCalls    uint64 // renewal and heartbeat round trips made so far (one per node per round: up to 256 script calls of up to 100 entries each)
	Renewed       uint64 // lock (and permit) renewals made so far
	RenewFailures uint64 // lock (and permit) renewals that failed (no answer or an error; retried while the lease lasts)
	Heartbeats    uint64 // waiter heartbeats made so far (each moves one waiter's deadline)
	Lost          uint64 // holds and leased permits that ended without a successful unlock or release (lost, fixed lease over, Close)
	Subscriptions int    // channels the pub/sub hub is subscribed to
	Reconnects    int    // pub/sub reconnects observed
	Evicting      int    // masters last seen running a maxmemory-policy that evicts keys (see ErrEvicting)
	AckFailures   uint64 // replica-acknowledged mode: mutations too few replicas acknowledged in time
	NoWait        bool   // replica-acknowledged mode: a master refused WAIT, so acknowledgements are off
}

// Stats returns counters of the client's work. It does not block on I/O.
func (c *Client) Stats() Stats {
	if !c.valid() {
		return Stats{}
	}
	calls, _, _ := c.sched.Stats()
	var held, waiting int
	var renewed, failed, beats uint64
	for k, rk := range renewKinds {
		n, r, f := c.sched.KindStats(k)
		if rk.hold {
			held, renewed, failed = held+n, renewed+r, failed+f
		} else {
			waiting, beats = waiting+n, beats+r
		}
	}
	subs, reconnects := c.hub.Stats()
	return Stats{Held: held, Waiting: waiting + int(c.unqueued.Load()), RenewCalls: calls, Renewed: renewed, RenewFailures: failed, Heartbeats: beats, Lost: c.lostHolds.Load(),
		Subscriptions: subs, Reconnects: reconnects, Evicting: int(c.servers.evicting.Load()), AckFailures: c.acks.failures.Load(), NoWait: c.acks.noWait.Load()}
}

// checkValid reports a nil Client, or one not made by New (ErrInvalidArgument): what every method
// of the Client, and every handle it makes, checks first.
func (c *Client) checkValid() error {
	if !c.valid() {
		return invalidf("nil client or Client not created by New")
	}
	return nil
}

// checkCall checks what every call checks: the Client (checkValid), its context, then Close.
func (c *Client) checkCall(ctx context.Context) error {
	if err := c.checkValid(); err != nil {
		return err
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if c.closed() {
		return ErrClosed
	}
	return nil
}

func (c *Client) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// newID returns a fresh owner or request id: the client's random id and a sequence number,
// "<24 hex digits>:<base 36>", or in compat mode "<UUID>:<decimal>", the form of Java Redisson's
// "<client UUID>:<thread id>" (see newClientID). The sequence numbers of a Client strictly increase,
// which keeps its ids unique; each is the Unix time in ms when it is made shifted left by seqShift,
// or its predecessor + 1 if that is larger (more than 2^20 ids in a millisecond, or the clock set
// back), so that Inspect tells from an owner id when its acquisition began (see mintedAt). Nothing
// else reads the number: scripts and Java compare owner ids whole or take the client id before
// the last colon. The first id also starts the Client's process record (see keepRecord).
func (c *Client) newID() string { return c.newIDAt(time.Now()) }

// newIDAt is newID for an acquisition that began at now (a time.Now the caller has already read:
// it costs ~100ns on some virtual machines).
func (c *Client) newIDAt(now time.Time) string {
	c.recordOnce.Do(c.startRecord)
	at := uint64(now.UnixMilli()) << seqShift
	var seq uint64
	for {
		prev := c.seq.Load()
		seq = max(prev+1, at)
		if c.seq.CompareAndSwap(prev, seq) {
			break
		}
	}
	var buf [80]byte
	b := append(buf[:0], c.id...)
	b = append(b, ':')
	return string(appendSeq(b, seq, c.idBase))
}

// appendSeq appends n in base (36 or 10) to b, as strconv.AppendUint does: in base 36 dividing by
// a constant, which the compiler turns into a multiplication (strconv divides by a variable base,
// which costs ~10ns a digit, and a time-based sequence has 12 digits).
func appendSeq(b []byte, n uint64, base int) []byte {
	if base != 36 {
		return strconv.AppendUint(b, n, base)
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	var buf [13]byte // 36^13 > 2^64
	i := len(buf)
	for n >= 36 {
		q := n / 36
		i--
		buf[i] = digits[n-q*36]
		n = q
	}
	i--
	buf[i] = digits[n]
	return append(b, buf[i:]...)
}

// newClientID returns a Client's random id and the base of its ids' sequence numbers: 12 random
// bytes in hex and base 36; for a Client made WithRedissonCompat (compat), a random version 4 UUID,
// as java.util.UUID.randomUUID().toString() writes it (36 characters, lowercase), and base 10, so
// that a Go owner "<UUID>:<sequence>" has the form of a Java owner "<UUID>:<thread id>" and Java
// code or operators that parse owners (the UUID before the last colon, a long after it) read both.
func newClientID(compat bool) (string, int, error) {
	var b [16]byte
	n := 12
	if compat {
		n = 16
	}
	if _, err := rand.Read(b[:n]); err != nil {
		return "", 0, fmt.Errorf("redisson: client id: %w", err)
	}
	if !compat {
		return hex.EncodeToString(b[:n]), 36, nil
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10 (RFC 4122)
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], 10, nil
}

func (c *Client) emit(e Event) {
	if c.cfg.hook != nil {
		c.cfg.hook(e)
	}
}

// emitLater reports e on a goroutine of its own, after the events queued before it: for losses,
// which the renewal scheduler signals, and whose goroutine must never wait for a hook (it signals
// every hold's loss on time, and a hook that blocks would hold back the others'). The goroutine
// ends when the queue is empty.
func (c *Client) emitLater(e Event) {
	if c.cfg.hook == nil {
		return
	}
	c.eventsMu.Lock()
	c.eventsQueued = append(c.eventsQueued, e)
	start := !c.eventsRunning
	c.eventsRunning = true
	if start {
		c.eventsWG.Add(1)
	}
	c.eventsMu.Unlock()
	if start {
		go c.emitQueued()
	}
}

// emitQueued reports the events emitLater queued, in order, until none is left.
func (c *Client) emitQueued() {
	defer c.eventsWG.Done()
	for {
		c.eventsMu.Lock()
		queued := c.eventsQueued
		c.eventsQueued = nil
		if len(queued) == 0 {
			c.eventsRunning = false
			c.eventsMu.Unlock()
			return
		}
		c.eventsMu.Unlock()
		for _, e := range queued {
			c.emit(e)
		}
	}
}

// eventGate orders the events of one hold (a lock's owner, an acquisition's leased permits): its ends
// (EventReleased, EventLost) are reported only after its acquisition (EventAcquired), which is
// reported by the acquiring goroutine once the hold is live (registered with the scheduler, so
// already able to end: Close, a lease running out); and never if the acquisition is not reported,
// as when it fails because the hold ended before the caller got it (then EventNotObtained is its
// only event). The zero value awaits its acquisition's report.
type eventGate struct {
	mu        sync.Mutex
	announced bool
	pending   []Event // ends reported before the acquisition
}

// announce reports the acquisition e, then the ends reported meanwhile.
func (g *eventGate) announce(c *Client, e Event) {
	if c.cfg.hook == nil {
		return
	}
	c.emit(e)
	g.mu.Lock()
	g.announced = true
	pending := g.pending
	g.pending = nil
	g.mu.Unlock()
	for _, p := range pending {
		c.emit(p)
	}
}

// end reports e, an end of the hold, once the acquisition has been reported: a loss the renewal
// scheduler signals (the key found gone, renewals failing, a fixed lease over) later, on a goroutine
// of its own (see emitLater); the others at once, on the caller's goroutine (an Unlock's, Close's).
func (g *eventGate) end(c *Client, e Event) {
	if c.cfg.hook == nil {
		return
	}
	g.mu.Lock()
	if !g.announced {
		g.pending = append(g.pending, e)
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	if e.Kind == EventLost && (errors.Is(e.Err, renew.ErrGone) || errors.Is(e.Err, renew.ErrLapsing) || errors.Is(e.Err, renew.ErrLeaseEnded)) {
		c.emitLater(e)
		return
	}
	c.emit(e)
}

func (c *Client) group(key string) int {
	if c.cluster {
		return slot.Of(key)
	}
	return 0
}

// Kinds of renewal entries (renew.Entry.Kind). What each kind is renewed with and what it stands
// for is data, in renewKinds: a property every kind must have is implemented once, over the table.
const (
	kindLock          = iota // a held lock (Lock, FairLock, FencedLock, SpinLock)
	kindWaiter               // a waiter queued for a lock
	kindRWRead               // a ReadWriteLock reader
	kindRWWrite              // a ReadWriteLock writer
	kindRWWaiter             // a ReadWriteLock writer waiting
	kindRWReadWaiter         // a ReadWriteLock reader waiting
	kindSemWaiter            // a Semaphore waiter
	kindPermit               // a watchdog-renewed PermitExpirableSemaphore permit
	kindCompatLock           // a held Lock in Java Redisson's format (WithRedissonCompat)
	kindCompatRWRead         // a ReadWriteLock reader in Java Redisson's format
	kindCompatRWWrite        // a ReadWriteLock writer in Java Redisson's format
	numKinds
)

var _ [renew.Kinds - numKinds]struct{} // every kind fits the scheduler's bound

// renewKind is how entries of one kind are renewed.
type renewKind struct {
	name   string
	script *redis.Script // the renewal script: one call renews a batch of entries
	side   string        // rw_renew.lua's second argument ("" for the other scripts)
	// hold: the entry stands for something held (a lock, a side, a permit), which a renewal extends.
	// Holds count in Stats.Held and, in the replica-acknowledged mode, a renewal that too few
	// replicas acknowledged fails (the hold is lost before its last acknowledged lease may lapse).
	// The other kinds keep a waiter's registration alive (Stats.Waiting): losing one costs a wait
	// its place at worst, never an owner.
	hold bool
}

// renewKinds describes every kind, indexed by kind.
var renewKinds = [numKinds]renewKind{
	kindLock:         {name: "lock", script: scripts.LockRenew, hold: true},
	kindWaiter:       {name: "lock waiter", script: scripts.WaitBeat},
	kindRWRead:       {name: "read hold", script: scripts.RWRenew, side: "r", hold: true},
	kindRWWrite:      {name: "write hold", script: scripts.RWRenew, side: "x", hold: true},
	kindRWWaiter:     {name: "writer waiting", script: scripts.RWRenew, side: "ww"},
	kindRWReadWaiter: {name: "reader waiting", script: scripts.RWRenew, side: "wr"},
	kindSemWaiter:    {name: "semaphore waiter", script: scripts.SemBeat},
	kindPermit:       {name: "leased permit", script: scripts.SemRenew, hold: true},
	kindCompatLock:   {name: "lock (Redisson format)", script: scripts.CompatLockRenew, hold: true},
	// Redisson's LockTask and ReadLockTask: entries carry the hash and the tag of its read keys.
	kindCompatRWRead:  {name: "read hold (Redisson format)", script: scripts.CompatRWRenew, side: "r", hold: true},
	kindCompatRWWrite: {name: "write hold (Redisson format)", script: scripts.CompatRWRenew, side: "x", hold: true},
}

// shardRouter routes the sharded hub's channels with the Cluster client's slot map.
type shardRouter struct {
	cc *redis.ClusterClient
	c  *Client
}

func (r shardRouter) Master(ctx context.Context, channel string) (*redis.Options, error) {
	n, err := r.cc.MasterForKey(ctx, channel)
	if err != nil {
		return nil, err
	}
	return n.Options(), nil
}

func (r shardRouter) Reload() { r.c.reloadSlots(r.cc) }

func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return invalidf("nil context")
	}
	return nil
}

// msArg returns ms as a command argument: the watchdog timeout's boxed once (watchdogArg), since a
// watchdog lock sends it on every acquisition and release (boxing an int64 allocates).
func (c *Client) msArg(ms int64) any {
	if w, _ := c.watchdogArg.(int64); w == ms {
		return c.watchdogArg
	}
	return ms
}
