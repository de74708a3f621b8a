package redisson

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/goredisson/redisson/internal/renew"
)

// Defaults of the client options.
const (
	DefaultWatchdogTimeout = 30 * time.Second
	DefaultRepollInterval  = 500 * time.Millisecond
	DefaultLossMargin      = 0.1
	DefaultWaiterTimeout   = 5 * time.Second
	DefaultSpinBackoff     = time.Millisecond
	DefaultSpinBackoffMax  = 128 * time.Millisecond
)

// Bounds of the durations accepted by the options: the minimum watchdog timeout keeps the renewal
// period (a third of the lease) at a sensible size; the maxima keep every derived value (lease,
// reservation, backoff) far from overflowing time.Duration or Redis' expiry range.
const (
	minWatchdogTimeout = 100 * time.Millisecond
	maxLease           = 30 * 24 * time.Hour // a watchdog timeout or a fixed lease
	maxRepoll          = time.Hour
)

// Option configures a Client; pass options to New. Invalid values make New return ErrInvalidArgument.
type Option func(*config) error

type config struct {
	watchdog      time.Duration
	repoll        time.Duration
	waiterTimeout time.Duration
	// waiterGiven is the waiter timeout given with WithWaiterTimeout, not lowered to the watchdog
	// timeout (0: none given): a compat FairLock waiter's threadWaitTime (see fairThreadWait).
	waiterGiven time.Duration
	margin      float64
	prefix      string
	// acks and ackTimeout: the replica-acknowledged mode (WithReplicaAcks); ackTimeout 0 = off.
	acks       int
	ackTimeout time.Duration
	// spinMin and spinMax: the pauses of a SpinLock's waiters (WithSpinBackoff).
	spinMin, spinMax time.Duration
	logger           *slog.Logger
	hook             func(Event)
	// compat: Java Redisson's data layout, channels and messages (WithRedissonCompat).
	compat bool
	// javaWatchdog is the Java clients' lockWatchdogTimeout (WithRedissonWatchdogTimeout), and
	// javaWatchdogSet whether it was given (only with compat).
	javaWatchdog    time.Duration
	javaWatchdogSet bool
	// tracking: holds are told of a loss at once (WithLossTracking).
	tracking bool
	// noRecord: no process record (WithoutProcessRecord).
	noRecord bool
	// autoPipeline: commands sent while another is in flight are batched (WithAutoPipelining).
	autoPipeline bool
}

func defaultConfig() config {
	return config{
		watchdog:      DefaultWatchdogTimeout,
		repoll:        DefaultRepollInterval,
		margin:        DefaultLossMargin,
		waiterTimeout: DefaultWaiterTimeout,
		spinMin:       DefaultSpinBackoff,
		spinMax:       DefaultSpinBackoffMax,
		tracking:      true,
		logger:        slog.Default(),
		javaWatchdog:  DefaultWatchdogTimeout, // Redisson's default lockWatchdogTimeout
	}
}

// WithWatchdogTimeout sets the lease of locks acquired without an explicit lease. The watchdog renews
// such locks every third of it, and a lock whose process dies is freed at most this long after the
// last renewal. It must be between 100ms and 30 days.
//
// On a Client made WithRedissonCompat, a ReadWriteLock's read holds are renewed at least every third
// of the Java clients' lockWatchdogTimeout too (WithRedissonWatchdogTimeout, 30s unless told
// otherwise), and count on no longer than that after each renewal: a Java reader's watchdog cuts
// the shared hash's TTL to it. Their lease stays this timeout.
//
// default: 30s
func WithWatchdogTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < minWatchdogTimeout || d > maxLease {
			return invalidf("watchdog timeout %v is outside [%v, %v]", d, minWatchdogTimeout, maxLease)
		}
		c.watchdog = d
		return nil
	}
}

// WithRepollInterval bounds every wait for a wake-up message: a waiter tries again at least this often
// even if no message arrives, so a lost message costs at most this long. Shorter means quicker
// recovery and more commands while waiting. It must be positive and at most an hour.
//
// default: 500ms
func WithRepollInterval(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 || d > maxRepoll {
			return invalidf("repoll interval %v is outside (0, %v]", d, maxRepoll)
		}
		c.repoll = d
		return nil
	}
}

// WithWaiterTimeout sets how long a waiter queued in Redis stays queued without a heartbeat: the
// Client keeps its waiters alive (every third of it), so a waiter is evicted after this long only
// when its process died or lost Redis. A lock handed to a waiter is reserved for it this long at
// most (until its deadline if its Client is not subscribed), so this also bounds how long a dead
// waiter stalls the lock
// (plus a third of the next waiter's timeout: its heartbeat notices when that reservation ends). It
// must be between 100ms and an hour; a timeout longer than the watchdog timeout (WithWatchdogTimeout)
// is lowered to it, since the lock handed to a waiter is reserved for that long.
//
// On a Client made WithRedissonCompat a FairLock's waiters queue in Redisson's queue, which keeps no
// heartbeats but a deadline per waiter: a timeout given with this option is their threadWaitTime
// there, as Java's fairLockWaitTimeout (Config.setFairLockWaitTimeout) is for Java waiters, and is
// not lowered: the slot each waiter adds to the deadline of the one ahead (or to the lock's TTL), so
// a waiter whose process died holds up the waiters behind it until then, and a live waiter still
// queued past its deadline (the lock held that long) is dropped and queues again at the back.
// Without this option they take Redisson's default, 5 minutes, not the 5s below; a WithWait bound
// replaces either, as Redisson's tryLock(waitTime) does.
//
// default: 5s
func WithWaiterTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < minWatchdogTimeout || d > maxRepoll {
			return invalidf("waiter timeout %v is outside [%v, %v]", d, minWatchdogTimeout, maxRepoll)
		}
		c.waiterTimeout, c.waiterGiven = d, d
		return nil
	}
}

// WithLossMargin sets how early, as a fraction of the lease, a hold is declared lost when its lease
// may be about to lapse: the watchdog gives up retrying failed renewals, and a fixed-lease hold ends,
// that much before the key can expire (counted from when the acquiring or renewing request was
// sent). The margin must cover the clock drift between this process and Redis and the time the
// holder takes to notice its context was cancelled and stop; a process paused for longer than that
// is not protected (see the package documentation on fencing). It must be in [0, 0.5].
//
// default: 0.1 (3s of the default 30s watchdog timeout)
func WithLossMargin(fraction float64) Option {
	return func(c *config) error {
		if !(fraction >= 0 && fraction <= 0.5) {
			return invalidf("loss margin %v is outside [0, 0.5]", fraction)
		}
		c.margin = fraction
		return nil
	}
}

// Bounds of WithReplicaAcks.
const (
	maxReplicaAcks = 64
	maxAckTimeout  = time.Minute
)

// WithReplicaAcks turns on the replica-acknowledged mode: every lock acquisition, re-entry, renewal,
// release and forced unlock is pipelined with WAIT on the same connection, so that it counts as done
// only once replicas of the master that holds the key have acknowledged it, waiting at most timeout
// for them.
//
// replicas is how many acknowledgements are required; 0 means the default: 1 when the master has
// replicas, none (the mode stays off for that master, which is logged once) when it has none.
// An acquisition or re-entry that too few replicas acknowledge is undone (released) and fails with an
// error matching ErrNotObtained and ErrNotReplicated; a renewal that too few acknowledge counts as
// failed, so the hold is declared lost, with ErrNotReplicated, when its last acknowledged renewal is
// about to lapse. A release or forced unlock is applied on the master whatever the replicas say.
//
// A master without the WAIT command (renamed away, or a proxy that refuses it) is detected on the
// first mutation: the Client logs it once, reports it in Stats, and carries on without
// acknowledgements rather than failing every call; Client.CheckReplicas reports it as an error.
//
// The mode narrows, and does not close, what a failover can lose: see the package documentation.
// replicas must be in [0, 64] and timeout in (0, 1m].
//
// default: off
func WithReplicaAcks(replicas int, timeout time.Duration) Option {
	return func(c *config) error {
		if replicas < 0 || replicas > maxReplicaAcks {
			return invalidf("replica acknowledgements %d are outside [0, %d]", replicas, maxReplicaAcks)
		}
		if timeout <= 0 || timeout > maxAckTimeout {
			return invalidf("replica acknowledgement timeout %v is outside (0, %v]", timeout, maxAckTimeout)
		}
		c.acks, c.ackTimeout = replicas, timeout
		return nil
	}
}

// WithSpinBackoff sets the pauses of SpinLock waiters between attempts: the first pause is initial,
// each following one twice the last, up to max, each plus a random jitter of up to half of it.
// initial must be positive, max at least initial, both at most an hour.
//
// default: 1ms, 128ms
func WithSpinBackoff(initial, max time.Duration) Option {
	return func(c *config) error {
		if initial <= 0 || max < initial || max > maxRepoll {
			return invalidf("spin backoff %v..%v is not within (0, %v] in order", initial, max, maxRepoll)
		}
		c.spinMin, c.spinMax = initial, max
		return nil
	}
}

// WithKeyPrefix puts every key and channel of this client under prefix, e.g. "app:". It must not
// contain '{' or '}', which would break the key layout (see the package documentation).
//
// default: "" (the object's name is the key)
func WithKeyPrefix(prefix string) Option {
	return func(c *config) error {
		if strings.ContainsAny(prefix, "{}") {
			return invalidf("key prefix %q contains '{' or '}'", prefix)
		}
		c.prefix = prefix
		return nil
	}
}

// WithRedissonCompat makes the Client's objects use Java Redisson 3.x's data layout, TTL rules,
// pub/sub channels and messages, so that Go services share them with Java services running Redisson
// (default single-server, Sentinel and Cluster configurations, lockWatchdogTimeout 30s unless the
// Client is told another with WithRedissonWatchdogTimeout) on the same Redis: a Java unlock wakes a
// Go waiter, a Go watchdog keeps a Java client out, and so on. Give the Client the key prefix that
// the Java side's NameMapper adds, if any. A ReadWriteLock's read holds are then renewed at least
// every third of the Java side's lockWatchdogTimeout, whatever WithWatchdogTimeout says (see
// WithRedissonWatchdogTimeout), and a FairLock's waiters queue with Redisson's threadWaitTime (see
// WithWaiterTimeout).
//
// Client.Lock then returns a lock in Redisson's RLock layout (a hash at the name: owner -> hold
// count, TTL the lease; unlock messages on "redisson_lock__channel:{name}"), with no wait queue of
// this package in Redis, no hand-over and no SET NX fast path; Client.FairLock one in Redisson's
// RFairLock layout (its queue and client-clock deadlines, a channel per waiter), served in queue
// order across languages; Client.ReadWriteLock one in Redisson's RReadWriteLock layout (a hash with
// the mode, readers and writer; a key per read acquisition). MultiLock and RedLock of such locks
// work. Semaphore, CountDownLatch, BloomFilter and PermitExpirableSemaphore take Redisson's
// channels, messages and (the BloomFilter, the PermitExpirableSemaphore's leases) layouts too;
// AtomicLong, BitSet and HyperLogLog are Redis's own formats in either mode. Only the kinds Redisson
// has a layout for are available (every lock kind is, in Redisson's RLock, RFairLock, RFencedLock,
// RSpinLock and RReadWriteLock layouts); a call the mode does not offer fails with an error
// matching errors.ErrUnsupported, never silently, and changes nothing. See
// "Sharing locks with Java services" in the package documentation for what is and is not shared.
//
// default: off (this package's own layouts)
func WithRedissonCompat() Option {
	return func(c *config) error {
		c.compat = true
		return nil
	}
}

// WithRedissonWatchdogTimeout tells a Client made WithRedissonCompat the lockWatchdogTimeout of the
// Java Redisson clients that share its locks (Config.setLockWatchdogTimeout), when it is not
// Redisson's default, 30s; give the shortest of them. A Java reader's watchdog sets a ReadWriteLock's
// hash TTL to that timeout, whatever the other readers' leases, so a Go reader beside Java readers
// is safe for no longer than that after each of its renewals: the Client renews its read holds
// every third of the shorter of d and the watchdog timeout (WithWatchdogTimeout), and declares one
// lost (ErrLockLost) when no renewal succeeded before the shorter of the two, less the loss margin
// (WithLossMargin), may have passed, whether or not Java readers are there at the time; their lease
// stays the watchdog timeout. Other holds are not affected: a Java client cuts no other TTL than
// its own locks'. d must be between 100ms and 30 days, and the Client made WithRedissonCompat
// (otherwise New returns ErrInvalidArgument).
//
// default: 30s
func WithRedissonWatchdogTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < minWatchdogTimeout || d > maxLease {
			return invalidf("Redisson watchdog timeout %v is outside [%v, %v]", d, minWatchdogTimeout, maxLease)
		}
		c.javaWatchdog, c.javaWatchdogSet = d, true
		return nil
	}
}

// WithoutProcessRecord keeps the Client from writing its process record, for deployments that must
// not publish host names or process ids in Redis. Inspect then names none of its holders' processes
// (Holder.Process is nil); it still tells their client id and when their acquisition began, which
// owner ids carry whatever this option says.
//
// Without this option, the Client's first acquisition, wait or request (of a lock, semaphore or
// latch) starts a goroutine of the Client that writes, at "<prefix>redisson:~client:<client id>"
// (SETEX, any Cluster slot), a JSON string (typically under 100 bytes, at most 4 KiB):
//
//	{"host":"<os.Hostname>","pid":<os.Getpid>,"prog":"<base name of os.Args[0]>","started":<Unix ms of New>}
//
// (host and prog cut to 255 bytes), with a 30s TTL, rewritten every 10s (sooner after a failure,
// which is logged, never returned: it costs no call anything), and deleted by Close: the record of
// a process that died is gone within 30s. Acquisitions and releases send nothing for it. Inspect
// reads the records of a name's holders with one more round trip.
//
// default: a process record is kept
func WithoutProcessRecord() Option {
	return func(c *config) error {
		c.noRecord = true
		return nil
	}
}

// WithLogger sets where the client logs problems it handles on its own (failed renewals, lost
// locks and subscriptions, an unreachable server) and warnings about the deployment (go-redis
// without ContextTimeoutEnabled, a master that evicts keys, a master without WAIT in the
// replica-acknowledged mode). WithLogger(slog.New(slog.DiscardHandler)) silences it.
//
// default: slog.Default(), as it is when New is called
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return invalidf("nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithLossTracking turns on (true, the default) or off (false) the immediate loss signal: with it,
// a hold's context (Hold.Context, HeldPermits.Context) is cancelled, with a cause matching
// ErrLockLost, within milliseconds of its key being deleted (ForceUnlock, DEL, UNLINK, a Java
// forceUnlock), flushed, evicted or expired, and within a second of its master coming back
// without it (a restart that lost the data, a failover to a replica that lacked it); without it, at
// the next renewal (every third of the watchdog timeout). It costs, per Client, one connection per
// master (RESP3, CLIENT TRACKING on: Redis 6 or later) and one goroutine per master; per hold that
// lives longer than 20ms, one read when it starts, one after each renewal (the renewal's own write
// invalidates the key), and the server's tracking-table entry for its key (see the package
// documentation, "How fast a loss is told"). A signal is verified before the hold is declared
// lost: a check on the master that the owner is gone. Where CLIENT TRACKING is refused (ACLs, a
// proxy), or a master takes longer than 500ms to answer a connection's handshake, the renewals
// alone tell. The tracker's connections are dialled as the go-redis options say (Dialer, TLS
// through the Dialer, credentials, DB) but do not run an OnConnect hook: a client that selects
// its database there should set DB instead, or its holds are checked in database 0 (never taken
// for a loss: a verdict is confirmed through the Client's own connections first).
//
// On a Cluster the checks are pipelined per master, one script call per lock kind and slot: with
// many long holds on many slots, that is one more call per hold and renewal period than the
// renewals' (which batch up to 256 slots per call). Turn it off where the masters' CPU is short.
//
// default: on. Clients of types other than *redis.Client (plain or Sentinel's failover client) and
// *redis.ClusterClient cannot have it.
func WithLossTracking(on bool) Option {
	return func(c *config) error {
		c.tracking = on
		return nil
	}
}

// WithAutoPipelining makes the Client send a command that starts while another of its commands is
// waiting for its reply through go-redis's automatic pipelining (redis.Client.AsyncAutoPipeline,
// experimental in go-redis v9.22): the commands of many goroutines then share one write and one
// read, as rueidis does, instead of a round trip each; a command sent alone still goes straight to
// its connection. It is for one Client shared by many goroutines (with a Client per goroutine
// there is nothing to batch).
//
// What stays: every command is still sent once (a batch that fails is not sent again: the
// library's commands opt out of go-redis's re-sends), a lost batch reply is an unknown outcome for
// each command in it, and a call returns by its context. What changes: the pipeliner ignores a
// command's context once it is queued, so a command whose caller's context ends while it waits
// behind a batch in flight is abandoned to it and may still be written (and run) until that batch
// ends, which go-redis's ReadTimeout, WriteTimeout and DialTimeout bound, not the context. The
// call reports an unknown outcome, as for a command whose reply a deadline cut; an acquisition
// written so late may take the lock for its done owner for a moment: the undo of every call that
// ended meanwhile is repeated once the abandoned commands' batches have ended (a Client closed
// before that leaves such a lock to its lease). Keep ReadTimeout at its default (3s) or below; New
// fails with ErrInvalidArgument if rdb has none (ReadTimeout -1 or -2): a batch held by a hung
// server would hold the commands behind it until the connection breaks. The pipeliner is rdb's
// (rdb.AsyncAutoPipeline), shared with rdb's other users, stopped by rdb.Close, not by
// Client.Close; if another user closes it, the Client takes rdb's next one. go-redis hooks see the
// pipelined commands as pipelines.
//
// default: off. Only for a *redis.Client (plain or Sentinel's failover client): a Cluster's
// commands, the replica-acknowledged mode's commands and WAIT, and transactions go as before.
func WithAutoPipelining(on bool) Option {
	return func(c *config) error {
		c.autoPipeline = on
		return nil
	}
}

// WithEventHook registers fn to be called on every acquisition (and failed acquisition), release and
// loss of the Client's locks and semaphores (see Event). Each acquisition is reported once, as
// EventAcquired or EventNotObtained, by the acquiring goroutine. A lock's hold then ends with one
// EventReleased or EventLost, and a leased permit lost with one EventLost (a permit released is not
// an event), reported after the acquisition's EventAcquired, and never for an acquisition reported
// as not obtained. A release is reported by the unlocking goroutine, a loss found by an Unlock by it,
// a loss at Close by Close; a loss the renewal scheduler signals (the key found gone, renewals
// failing, a fixed lease over) is reported just after the holder's context ends, on a goroutine of
// its own that reports such losses in order, so that a slow hook never delays the scheduler's
// signals to other holders. fn must return quickly: it delays the goroutine that reports (an
// Unlock's return, and the local waiter handed the lock by that release, wait for it). It may call
// the Client, but must neither wait for one of its locks nor close it: while an EventReleased is
// reported the releasing holder still has its Client's turn for that lock (a TryLock of it fails
// there, a Lock waits for ever, and Close waits for the Unlock), and while an EventAcquired is
// reported the caller has not yet got its Hold. Metrics and tracing adapters build on it (see the
// modules in contrib/). Each WithEventHook adds a hook: several run in the order given.
//
// default: none
func WithEventHook(fn func(Event)) Option {
	return func(c *config) error {
		if fn == nil {
			return invalidf("nil event hook")
		}
		if prev := c.hook; prev != nil {
			c.hook = func(e Event) { prev(e); fn(e) }
		} else {
			c.hook = fn
		}
		return nil
	}
}

// EventKind tells what happened to a lock or semaphore.
type EventKind int

// Event kinds.
const (
	// EventAcquired: a fresh acquisition succeeded (re-entries are not reported). Wait is how long it
	// took, Attempts how many acquire scripts it ran, HandedOver whether a release handed it the lock.
	EventAcquired EventKind = iota + 1
	// EventReleased: the final unlock released the lock. Held is how long it was held.
	EventReleased
	// EventLost: a hold (or a leased permit) ended without an unlock; Err says why (it matches
	// ErrLockLost) and Cause classifies it.
	EventLost
	// EventNotObtained: an acquisition ended without the lock or the permits: a TryLock or a single
	// attempt that found it taken, a wait bound or context that ended, Close, or an error. Err says
	// why (nil when a single attempt of a semaphore found too few permits) and Cause classifies it.
	// Calls refused before any attempt (bad input, a context already ended, a closed Client) are not
	// reported, nor are re-entries.
	EventNotObtained
)

// String returns the kind's name, e.g. "acquired".
func (k EventKind) String() string {
	switch k {
	case EventAcquired:
		return "acquired"
	case EventReleased:
		return "released"
	case EventLost:
		return "lost"
	case EventNotObtained:
		return "not_obtained"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// The values of Event.Object: what kind of object an event is about. A Client made WithRedissonCompat
// reports its objects under the same names. MultiLock and RedLock report no events of their own: each
// part's Client reports the part's.
const (
	ObjectLock            = "lock"
	ObjectFairLock        = "fair_lock"
	ObjectFencedLock      = "fenced_lock"
	ObjectSpinLock        = "spin_lock"
	ObjectReadLock        = "read_lock"  // the read side of a ReadWriteLock
	ObjectWriteLock       = "write_lock" // the write side of a ReadWriteLock
	ObjectSemaphore       = "semaphore"
	ObjectPermitSemaphore = "permit_semaphore" // PermitExpirableSemaphore
)

// The values of Event.Cause. A loss (EventLost) is one of CauseExpired, CauseRenewalFailed,
// CauseLeaseEnded, CauseClosed, CauseUnlockFailed; a failed acquisition (EventNotObtained) one of
// CauseBusy, CauseTimeout, CauseCanceled, CauseClosed, CauseError.
const (
	CauseExpired       = "expired"        // the key was found gone or taken (deleted, force-unlocked, expired during a pause, failover)
	CauseRenewalFailed = "renewal_failed" // renewals failed until the lease might have lapsed
	CauseLeaseEnded    = "lease_ended"    // a fixed lease (WithLease) ran out
	CauseClosed        = "closed"         // the Client was closed
	CauseUnlockFailed  = "unlock_failed"  // the final unlock failed; the lock is left to expire
	CauseBusy          = "busy"           // a single attempt found the lock taken or too few permits
	CauseTimeout       = "timeout"        // the WithWait bound or the context's deadline passed
	CauseCanceled      = "canceled"       // the context was cancelled
	CauseError         = "error"          // anything else: a Redis error, ErrNotReplicated, ErrWrongType...
)

// Event describes one change of a lock or semaphore of this Client, for metrics, traces and logs.
// The fields not listed for a kind are zero.
type Event struct {
	Kind   EventKind
	Object string // what kind of object: one of the Object constants, e.g. ObjectLock
	Name   string // the object's name as given to the Client
	// Ctx is the caller's context of the acquisition (EventAcquired, EventNotObtained), or the
	// hold's context (EventReleased, EventLost: it carries the acquiring caller's values and has
	// ended). Tracing adapters take the parent span from it. Never nil.
	Ctx      context.Context
	Wait     time.Duration // EventAcquired, EventNotObtained: time from the call to the outcome
	Held     time.Duration // EventReleased, EventLost: time from the acquisition to the end (locks)
	Attempts int           // EventAcquired, EventNotObtained: acquire scripts run in Redis (0 for a local hand-over)
	// HandedOver: EventAcquired of a lock handed over by its releasing holder (in this process, or
	// through Redis by a hand-over message), without a new attempt of its own.
	HandedOver bool
	Permits    int64 // semaphores: permits acquired, wanted or lost
	Err        error // EventLost: the reason (matches ErrLockLost); EventNotObtained: the error, if any
}

// Cause classifies the event's outcome for labels with few values: for EventLost and EventNotObtained
// one of the Cause constants; "" for the other kinds.
func (e Event) Cause() string {
	switch e.Kind {
	case EventLost:
		switch {
		case errors.Is(e.Err, ErrClosed):
			return CauseClosed
		case errors.Is(e.Err, renew.ErrLeaseEnded):
			return CauseLeaseEnded
		case errors.Is(e.Err, renew.ErrLapsing):
			return CauseRenewalFailed
		case errors.Is(e.Err, errUnlockFailed):
			return CauseUnlockFailed
		}
		return CauseExpired
	case EventNotObtained:
		switch {
		case errors.Is(e.Err, ErrClosed):
			return CauseClosed
		case errors.Is(e.Err, errWaitBound) || errors.Is(e.Err, context.DeadlineExceeded):
			return CauseTimeout
		case errors.Is(e.Err, context.Canceled):
			return CauseCanceled
		case e.Err == nil || errors.Is(e.Err, ErrBusy):
			return CauseBusy
		}
		return CauseError
	}
	return ""
}

// AcquireOption adjusts one acquisition: see WithLease and WithWait.
type AcquireOption func(*acquireConfig) error

type acquireConfig struct {
	lease   time.Duration // 0: watchdog
	wait    time.Duration
	waitSet bool
}

// WithLease acquires with a fixed lease: the lock expires on its own after d, and no watchdog renews
// it. Re-entering or partially unlocking a fixed-lease hold does not extend it. d must be between 1ms
// and 30 days.
func WithLease(d time.Duration) AcquireOption {
	return func(a *acquireConfig) error {
		if d < time.Millisecond || d > maxLease {
			return invalidf("lease %v is outside [1ms, %v]", d, maxLease)
		}
		a.lease = d
		return nil
	}
}

// WithWait bounds how long an acquisition waits for the lock (or permits), on top of the context:
// the call returns within d, plus a short grace (at most 50ms and two of the Client's recent round
// trips: an attempt sent before d passed may still answer, and a clean-up that answers at once is
// waited for) whatever Redis does; clean-ups that take longer go on in the background. The
// first attempt is made whatever d, so a bound shorter than a round trip still takes a free lock
// (though on a new connection, whose dial costs round trips of its own, such a short bound may end
// the attempt unanswered). 0 means no wait: a single attempt, as TryLock without WithWait, bounded
// by the context only (give it a deadline to bound the attempt too). d must not be negative.
func WithWait(d time.Duration) AcquireOption {
	return func(a *acquireConfig) error {
		if d < 0 {
			return invalidf("wait %v is negative", d)
		}
		a.wait, a.waitSet = d, true
		return nil
	}
}
