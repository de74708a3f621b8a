package redisson_test

// TestModel is a randomized, model-checked fault test. Clients in this process and in child
// processes (the test binary re-executed, see TestModelChild) run teams that lock, re-enter from
// concurrent helper goroutines, unlock and sometimes force-unlock shared locks of every kind (a
// Lock, FairLock, FencedLock, SpinLock, the read and write sides of a ReadWriteLock, with
// downgrades, a MultiLock over the Lock and the FairLock through two Clients, and a RedLock over
// three Locks of its own through three Clients), while a fault
// goroutine per process loses replies, drops connections, delays and black-holes each Client's
// connection to the lock server A (every Client has its own redistest.Proxy), holds a request back
// to land after the waiter timeout, its connection given up meanwhile (a blackhole or delay below
// includes these), the parent kills
// pub/sub connections and once kills a child process. Results are checked against a model kept on
// a second, never faulted server B:
//
//   - two owners: entering a critical section is an atomic check-and-set in B; finding another
//     hold's entry there is a violation unless a force unlock ran since that hold's acquisition (or
//     is running), its fixed lease may have run out, or a blackhole or delay of its Client overlapped
//     it (its lease may have lapsed). A ReadWriteLock's readers enter beside each other, a writer
//     beside nobody (but the reader it let in itself: downgrade). A group enters its own critical
//     section and those of the parts it holds (the MultiLock's are the Lock's and the FairLock's);
//   - downgrade refused: a read acquisition marked with a live write hold must be let in;
//   - read/write hash: the ReadWriteLock's hash must decode, have a TTL covering every field's time
//     and no holder whose lease is longer than any the workload gives;
//   - hold count: at a quiescent point of a session, the hold count in Redis must be the model's,
//     and the hold must not have been released;
//   - unlock misreported: an Unlock of a level the model holds must not answer ErrNotHeld;
//   - held after its last Unlock: a final Unlock that returned nil must have released the lock;
//   - held or renewed after its last Unlock: no lock may be held by an owner whose last Unlock
//     returned more than its lease (plus slack) ago;
//   - waiter stuck, waiter never served, left in Redis: liveness and cleanup;
//   - force unlock refused: ForceUnlock must not take a lock value for another type of value.
//
// Discrepancies that a fault could explain for a correct library (an Unlock with an unknown outcome
// earlier in the hold, a force unlock, a fixed lease running out, a blackhole or delay of the
// hold's Client) are excused; see excuse and modelCSEnter.
//
// The replica-acknowledged mode: A is the master of a replicated set-up (redistest.StartReplicated),
// and one Client of each process, chosen by the seed, runs with WithReplicaAcks(1, modelAckTimeout)
// (its key ends in "a"; modelClient.acked). Its third team runs the same workload as the others,
// some of whose ReadWriteLock and PermitExpirableSemaphore holds last 1.5-4s (stopping early when
// the hold's context ends); its first two teams spend nearly all their time probing, retrying at
// once an acquisition refused in a cut, so that the next cut finds a probe holding: one with long
// holds, mostly a reader's, of a second ReadWriteLock that only the acked Clients use until the
// final phase (probeSpec), the other with 4s holds of one or two watchdog-renewed permits of a
// PermitExpirableSemaphore that only they use (psemProbe). The "replica" fault (parent only) cuts
// the replication link for 0.2-1.2s or 1.8-3s at random times, then rejoins the replica and waits
// until it is in sync; each fault is recorded in B (zset replica:faults, scored by when it stops
// excusing; hash replica:cuts, the windows in which no acknowledgement can reach A). While the link
// is cut, acked acquisitions fail with ErrNotObtained and ErrNotReplicated (not held: not a
// violation, not even in the final phase, since a WAIT can also time out on a loaded machine), and
// acked holds whose renewals go unacknowledged are lost (cause ErrNotReplicated, or a renewal round
// cut short by its own deadline). There is one master and no failover, so such a loss must never
// make two owners: the lost hold's key stays on the master (unacknowledged renewals still extend it
// there) until the library, after cancelling the hold's context, releases it. The model keeps every
// check for acked holds and excuses only what such a loss explains:
//
//   - hold count, unlock misreported (and a permit Release answering ErrNotHeld): excused for a hold
//     of an acked Client lost with a cause matching ErrNotReplicated, or lost because its renewals
//     failed until the lease might lapse while a replica fault overlapped it (see ackLost);
//   - two owners (and too many permits inside): a holder through an acked Client found inside by a
//     newcomer is excused only if its context was cancelled (stamped in B as lost:<hold>@<name>
//     when its clear began) before the newcomer's acquisition returned (plus modelTaintAfter of
//     timer jitter): it was told to stop before the lock was taken (see lostBefore);
//   - kept without acknowledgements: an acked watchdog hold (or permits) still live after a window
//     without acknowledgements longer than its lease, that began before its acquisition returned,
//     is a violation: it must have been lost (see checkAckKept);
//   - acquired without acknowledgements: an acked acquisition (not a group's) called and returned
//     with success within such a window is a violation (see checkAckGranted).
//
// A release answering ErrNotReplicated happened on the master and is checked as such (Semaphore
// permits counted back, AtomicLong deltas applied).
//
// A Semaphore, a PermitExpirableSemaphore and a CountDownLatch are taken by the same teams, through
// the same faulted Clients, and checked against their own invariants: see model_sync_test.go.
// The data objects (two AtomicLongs, a BitSet, a BloomFilter, a HyperLogLog) are used by the same
// teams too, each mutation tracked as applied, not applied or unknown: see model_objects_test.go.
//
// The lock API is reached only through lockDriver (driver_test.go), chosen by newModelDriver.
//
// Flags: -model.seed (replay a run; the seed fixes every random choice, timing still varies),
// -model.duration, -model.children, -model.faults (a subset of the faults, to tell which one a
// violation needs), -model.trace (a directory for per-process event traces, to check a violation
// against the fault timing).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/redistest"
)

var (
	modelSeedFlag     = flag.Int64("model.seed", 0, "TestModel: random seed (0: pick one from the time; it is always printed)")
	modelDurationFlag = flag.Duration("model.duration", 20*time.Second, "TestModel: how long the faulted workload runs")
	modelChildrenFlag = flag.Int("model.children", 1, "TestModel: number of child processes")
	modelTraceFlag    = flag.String("model.trace", "", "TestModel: directory for per-process event traces (debugging)")
	modelFaultsFlag   = flag.String("model.faults", modelAllFaults, "TestModel: the faults to inject, a comma-separated subset of "+modelAllFaults)
)

// modelAllFaults are the kinds of faults TestModel injects by default: lost replies, closed
// connections, delays, blackholes, requests held back to land late (all on the proxies), killed
// pub/sub connections, a killed child process, force unlocks by the workload, and cuts of A's
// replication link (parent only).
const modelAllFaults = "drop,close,delay,blackhole,hold,pubsub,kill,force,replica"

// modelFaultSet parses a -model.faults value.
func modelFaultSet(list string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if !slices.Contains(strings.Split(modelAllFaults, ","), f) {
			return nil, fmt.Errorf("unknown fault %q (known: %s)", f, modelAllFaults)
		}
		set[f] = true
	}
	return set, nil
}

// Workload and timing parameters.
const (
	modelNameCount     = 7 // lock, fair, fenced, spin, rwlock, multilock, redlock
	modelTeams         = 3 // per Client
	modelParentClients = 3
	modelChildClients  = 3 // a RedLock takes its three parts through three distinct Clients
	modelWatchdog      = 1500 * time.Millisecond
	modelRepoll        = 100 * time.Millisecond
	modelMaxLease      = 4 * time.Second
	modelReadTimeout   = time.Second      // go-redis read timeout of the Clients' connections
	modelWaitSlack     = 3 * time.Second  // an acquisition must return within its wait plus this
	modelFinalWait     = 10 * time.Second // wait of the final, fault-free acquisitions
	modelFinTTL        = 60 * time.Second
	modelRenewSlack    = time.Second // a lock may outlive its last Unlock by its lease plus this...
	// ... plus this if its Client had a blackhole or delay around its last Unlock.
	modelTaintedRenewSlack = 3 * time.Second
	// A blackhole or delay taints the holds of its Client whose lifetime it overlaps, counting a hold
	// from modelTaintBefore before its acquisition returned and a fault until modelTaintAfter after
	// it was turned off (timer jitter).
	modelTaintBefore = 100 * time.Millisecond
	modelTaintAfter  = 50 * time.Millisecond
	modelForceTTL    = 10 * time.Second // a force unlock in progress excuses overtaking for at most this
	// The replica-acknowledged Clients' WAIT timeout: below the renewal period (a third of the
	// watchdog), so that a renewal round under a cut usually ends with WAIT's answer
	// (ErrNotReplicated) rather than its own deadline, and below the read timeout.
	modelAckTimeout = 150 * time.Millisecond
	// Replica faults: a cut lasts modelCutMin-modelCutMax, or (1 in 2) modelLongCutMin-modelLongCutMax,
	// longer than a watchdog lease, so that acked holds are lost; none starts unless it can end (and
	// the replica be in sync again) modelCutMargin before the deadline.
	modelCutMin     = 200 * time.Millisecond
	modelCutMax     = 1200 * time.Millisecond
	modelLongCutMin = 1800 * time.Millisecond
	modelLongCutMax = 3 * time.Second
	modelCutMargin  = 2 * time.Second
	// The long holds of acked Clients' sessions (a ReadWriteLock's, leased permits'): long enough to
	// be lost by a long cut.
	modelLongHoldMin = 1500 * time.Millisecond
	modelLongHoldMax = 4 * time.Second
	modelProbeHold   = 4 * time.Second // an acked Client's permit probe
	// An acked watchdog hold must be lost once a cut of the replication link overlapping its life
	// lasts its lease (less the loss margin) plus this (timer jitter): see checkAckKept.
	modelAckSlack = 250 * time.Millisecond
	// Interval of the extra lost replies (per process), on top of the mixed faults every 50-200ms.
	modelDropMin   = 15 * time.Millisecond
	modelDropMax   = 45 * time.Millisecond
	modelOpTimeout = 10 * time.Second // bounds every call to B and to the admin connection

	modelChildEnv = "GOREDISSON_MODEL_CHILD"
	modelPrefix   = "MODEL-"
)

// Violation kinds.
const (
	vTwoOwners   = "two owners"
	vHoldCount   = "hold count"
	vHeldAfter   = "held after its last Unlock"
	vMisreport   = "unlock misreported"
	vStuck       = "waiter stuck"
	vRenewed     = "held or renewed after its last Unlock"
	vNeverServed = "waiter never served"
	vLeft        = "left in Redis"
	// Not a defect of the list, found on the way: ForceUnlock answered WRONGTYPE for a lock value.
	vForceRefused = "force unlock refused"
	// A FencedLock holder whose token is not newer than that of a holder that entered before it.
	vToken = "fencing token not increasing"
	// A read acquisition marked with a live write hold (ContextWithHold) was refused as held.
	vDowngrade = "downgrade refused"
	// A ReadWriteLock's hash that does not decode, lacks a TTL covering its fields, or holds a lease
	// longer than any the workload gives.
	vRWState = "read/write hash"
	// An acked watchdog hold (or permits) still held after a cut of the replication link, during
	// which none of its renewals could be acknowledged, lasted longer than its lease.
	vAckKept = "kept without acknowledgements"
	// An acked acquisition that returned success although it was called and returned within a window
	// in which no acknowledgement could reach A.
	vAckGranted = "acquired without acknowledgements"
)

// Verdicts returned by modelCSEnter (the others name the excuse: forced, forcing, expired, tainted).
const (
	csOK        = "ok"
	csViolation = "violation"
)

// modelCSEnter enters the critical section of a lock in B.
//
// KEYS[1] cs:<name>   "<proc>|<hold>|<owner>|<epoch>|<expiry ms>|<clients>|<since ms>" of the
// exclusive holder inside (<clients>: comma-separated, a group's several)
// KEYS[2] epoch:<name> force-unlock epoch (absent: 0)
// KEYS[3] forcing:<name> zset of force unlocks in progress, scored by when they stop excusing
// KEYS[4] token:<name> the highest fencing token that entered (FencedLock)
// KEYS[5] csr:<name>  hash: hold id -> entry of the readers inside (ReadWriteLock)
// ARGV[1] the entry to set; ARGV[2] its hold id; ARGV[3] its fencing token (0: none); ARGV[4] "x"
// (exclusive: a writer or any other kind) or "r" (a reader); ARGV[5] a reader's vouching writer's
// hold id ("" none)
//
// A hold whose own epoch (read before its Lock call) is not the current one may have been
// force-unlocked before its Lock call even returned: it enters as "stale" and leaves the entries of
// whoever is inside alone. An exclusive entry is judged against the exclusive entry and every
// reader's, a reader against the exclusive entry only (but for the writer that let it in). An entry
// of another hold is a violation unless: its epoch is not the current one (a force unlock ran since
// its acquisition), a force unlock is in progress, its fixed lease may have run out (expiry ms > 0
// and passed), or a blackhole or delay of one of its Clients (zset faults:<client>, scored by when
// the fault stops tainting) overlaps its hold; an excused entry is replaced (exclusive) or dropped
// (a reader found by a writer, a writer found by a reader). Returns {verdict, the judged entry,
// now ms, its side "x" or "r"}.
var modelCSEnter = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('GET', KEYS[1])
local mine = select(4, string.match(ARGV[1], '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|'))
local epoch = redis.call('GET', KEYS[2]) or '0'
if mine ~= epoch then
  return {'stale', cur or '', now, 'x'}
end
local token = tonumber(ARGV[3])
if token > 0 then
  local last = tonumber(redis.call('GET', KEYS[4]) or '0')
  if token <= last then
    return {'token', tostring(last), now, 'x'}
  end
  redis.call('SET', KEYS[4], token)
end
local mode, vouch = ARGV[4], ARGV[5]
local function judge(entry)
  local _, hold, _, ep, expiry, clients, since = string.match(entry, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  if hold == ARGV[2] or (vouch ~= '' and hold == vouch) then
    return 'ok'
  end
  if ep ~= epoch then
    return 'forced'
  elseif redis.call('ZCOUNT', KEYS[3], now, '+inf') > 0 then
    return 'forcing'
  elseif tonumber(expiry) > 0 and now >= tonumber(expiry) then
    return 'expired'
  end
  for c in string.gmatch(clients, '[^,]+') do
    if redis.call('ZCOUNT', 'faults:' .. c, since, '+inf') > 0 then
      return 'tainted'
    end
  end
  return 'violation'
end
local verdict, prev, side = 'ok', cur or '', 'x'
if cur then
  verdict = judge(cur)
end
if mode == 'x' then
  local rs = redis.call('HGETALL', KEYS[5])
  for i = 1, #rs, 2 do
    local v = judge(rs[i + 1])
    if v == 'violation' then
      if verdict ~= 'violation' then
        verdict, prev, side = v, rs[i + 1], 'r'
      end
    elseif v ~= 'ok' then
      if verdict == 'ok' then
        verdict, prev, side = v, rs[i + 1], 'r'
      end
      redis.call('HDEL', KEYS[5], rs[i])
    end
  end
  redis.call('SET', KEYS[1], ARGV[1])
else
  if cur and verdict ~= 'ok' and verdict ~= 'violation' then
    redis.call('DEL', KEYS[1])
  end
  redis.call('HSET', KEYS[5], ARGV[2], ARGV[1])
end
return {verdict, prev, now, side}
`)

// modelCSLeave deletes, from the exclusive entry KEYS[1] and the readers' entries KEYS[2] of a
// critical section, those whose field ARGV[1] (1: process, 2: hold) is ARGV[2]; returns how many.
var modelCSLeave = redis.NewScript(`
local n = 0
local f = tonumber(ARGV[1])
local function match(entry)
  local proc, hold = string.match(entry, '^([^|]*)|([^|]*)|')
  if f == 2 then
    return hold == ARGV[2]
  end
  return proc == ARGV[2]
end
local cur = redis.call('GET', KEYS[1])
if cur and match(cur) then
  redis.call('DEL', KEYS[1])
  n = n + 1
end
if f == 2 then
  return n + redis.call('HDEL', KEYS[2], ARGV[2])
end
local rs = redis.call('HGETALL', KEYS[2])
for i = 1, #rs, 2 do
  if match(rs[i + 1]) then
    redis.call('HDEL', KEYS[2], rs[i])
    n = n + 1
  end
end
return n
`)

// modelForced reports (1) whether epoch:<name> (KEYS[1]) differs from ARGV[1] or a force unlock is
// in progress (KEYS[2]).
var modelForced = redis.NewScript(`
local e = redis.call('GET', KEYS[1]) or '0'
if e ~= ARGV[1] then return 1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZCOUNT', KEYS[2], now, '+inf') > 0 then return 1 end
return 0
`)

// modelRedisOptions are the go-redis options of every Client's connection to A (through its proxy):
// re-sends after a network error, delayed so that other operations interleave.
func modelRedisOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		MaxRetries:            3,
		MinRetryBackoff:       5 * time.Millisecond,
		MaxRetryBackoff:       40 * time.Millisecond,
		DialTimeout:           time.Second,
		ReadTimeout:           modelReadTimeout,
		WriteTimeout:          time.Second,
	}
}

// modelRun is the state of one process of the model test (the parent or a child).
type modelRun struct {
	proc     int // 0: parent; children 1, 2, ...
	seed     int64
	deadline time.Time // end of the faulted workload
	names    []string
	// groups maps the MultiLock's and the RedLock's names to their parts' names; part i of a group
	// locked through Client c is taken through Client c+i (mod the process's Clients).
	groups map[string][]string
	// keyNames are the names with a key of their own in A (all but the groups, plus the RedLock's
	// parts, which are no name of the workload's own), csNames those with critical sections.
	keyNames, csNames []string
	drv               lockDriver
	admin             *redis.Client // A, direct
	bdb               *redis.Client // B, direct
	clients           []*modelClient
	ctx               context.Context // cancelled only to abort a hung run
	emit              func(kind, msg string)
	faults            map[string]bool // enabled fault kinds (see modelAllFaults)
	// rep is A's replicated set-up, whose link the replica fault cuts: the parent's; nil in children.
	rep *redistest.Replicated

	holdSeq atomic.Int64
	faultSq atomic.Int64

	afterMu  sync.Mutex
	afterWG  sync.WaitGroup        // critical-section clears registered with context.AfterFunc
	afterOff map[int64]func() bool // their stop functions, until they run

	mu         sync.Mutex
	stats      map[string]int64
	violations map[string]int64
	infra      []string // errors of the test itself (B, admin), not of the lock

	traceMu sync.Mutex
	trace   *os.File

	clientsOnce, closeOnce sync.Once

	// The synchronizers (model_sync_test.go): "" when not run.
	semName, psemName, latchName string
	psemProbeName                string           // the acked Clients' probe (see psemProbe)
	giveBackFailed               map[string]int64 // per semaphore: acquisitions that could not give back (logged)
	// The data objects (model_objects_test.go): nil when not run.
	objs *modelObjects
}

// modelClient is one redisson Client with its own proxy to A.
type modelClient struct {
	idx   int
	key   string // "p<proc>c<idx>", plus "a" if acked
	proxy *redistest.Proxy
	rdb   *redis.Client
	rc    *redisson.Client
	acked bool // the replica-acknowledged mode (WithReplicaAcks(1, modelAckTimeout))

	mu     sync.Mutex
	faults []modelFault // blackholes, held-back requests and delays so far
}

// modelFault is a blackhole, held-back request or delay of a Client's proxy; end is zero while it is
// on. A held-back request holds up a call as a blackhole does (blackhole is set for both).
type modelFault struct {
	start, end time.Time
	blackhole  bool
}

// blackholeCost returns how long blackholes of c overlapping [from, to] may have held up a call:
// each one's overlap plus a read timeout (a request lost in it is given up only then).
func (c *modelClient) blackholeCost(from, to time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var d time.Duration
	for _, f := range c.faults {
		end := f.end
		if end.IsZero() || end.After(to) {
			end = to
		}
		if f.blackhole && !f.start.After(to) && !end.Before(from) {
			begin := f.start
			if begin.Before(from) {
				begin = from
			}
			d += end.Sub(begin) + modelReadTimeout
		}
	}
	return d
}

// tainted reports whether a blackhole or delay of c overlaps [from, to] (extended by modelTaintAfter
// after each fault).
func (c *modelClient) tainted(from, to time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.faults {
		if !f.start.After(to) && (f.end.IsZero() || !f.end.Add(modelTaintAfter).Before(from)) {
			return true
		}
	}
	return false
}

// modelHold is the model's view of one hold.
type modelHold struct {
	id       string
	name     string
	c        *modelClient
	h        driverHold
	owner    string         // "" for a group (see parts)
	read     bool           // a ReadWriteLock's read side
	vouch    string         // a reader let in by a writer (downgrade): the writer's hold id
	clients  []*modelClient // every Client the hold goes through: c, or a group's parts'
	parts    []modelPart    // a group's parts
	lease    time.Duration  // 0: watchdog
	epoch    int64          // force-unlock epoch read before the acquisition
	acquired time.Time      // when the acquisition returned
	start    time.Time      // when the acquisition was called
	expiry   time.Time      // fixed lease: the lock cannot expire in Redis before this; zero for the watchdog
	// fixed lease: the library may consider the hold ended from this on (the lease counted from
	// before the acquisition call); zero for the watchdog
	leaseEnd time.Time

	mu      sync.Mutex
	count   int       // levels the model holds
	unknown time.Time // start of the first Unlock of this hold with an unknown outcome; zero if none
	// start of the first Reenter of this hold with an unknown outcome; zero if none
	reenterUnknown time.Time
	reported       map[string]bool
	suspects       []modelSuspect // Unlocks that answered ErrNotHeld, judged by judgeUnlocks
}

// modelPart is one part of a group's hold.
type modelPart struct {
	name  string
	c     *modelClient
	epoch int64      // force-unlock epoch of the part's name, read before the acquisition
	h     driverHold // nil: a RedLock part not acquired (or a MultiLock part missing: a defect)
	owner string
	// the group holds it: a MultiLock's every part (whether or not its hold came back), a RedLock's
	// parts acquired
	held bool
}

// modelSuspect is an Unlock that answered ErrNotHeld while the model held its level.
type modelSuspect struct {
	what     string
	err      error
	at       time.Time // when it returned
	released bool      // the hold's context had ended without a loss by then
}

func (mh *modelHold) add(n int) {
	mh.mu.Lock()
	mh.count += n
	mh.mu.Unlock()
}

func (mh *modelHold) levels() int {
	mh.mu.Lock()
	defer mh.mu.Unlock()
	return mh.count
}

func (mh *modelHold) markUnknown(start time.Time) {
	mh.mu.Lock()
	if mh.unknown.IsZero() || start.Before(mh.unknown) {
		mh.unknown = start
	}
	mh.mu.Unlock()
}

func (mh *modelHold) markReenterUnknown(start time.Time) {
	mh.mu.Lock()
	if mh.reenterUnknown.IsZero() {
		mh.reenterUnknown = start
	}
	mh.mu.Unlock()
}

func (mh *modelHold) reenterUnknownSince() time.Time {
	mh.mu.Lock()
	defer mh.mu.Unlock()
	return mh.reenterUnknown
}

func (mh *modelHold) unknownSince() time.Time {
	mh.mu.Lock()
	defer mh.mu.Unlock()
	return mh.unknown
}

// modelLost reports whether ctx, a hold's context, ended because the hold was lost.
func modelLost(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), redisson.ErrLockLost)
}

// ackLost reports whether hctx, the context of a hold (or permits) of an acked Client whose
// acquisition was called at start, ended because the hold was lost for want of replica
// acknowledgements: its cause matches ErrNotReplicated, or its renewals failed until the lease may
// lapse (renew.ErrLapsing) while a replica fault overlapped the hold or its acquisition (whose
// attempts a fault delays: the lease counts from the attempt's sending). (A renewal round whose WAIT
// is answered after the round's own deadline fails with that deadline, not ErrNotReplicated.)
func (r *modelRun) ackLost(c *modelClient, hctx context.Context, start time.Time) bool {
	if !c.acked || !modelLost(hctx) {
		return false
	}
	cause := context.Cause(hctx)
	return errors.Is(cause, redisson.ErrNotReplicated) ||
		errors.Is(cause, renew.ErrLapsing) && r.replicaFaulted(start.Add(-modelTaintBefore))
}

// released reports whether ctx, a hold's context, ended without a loss: the hold was released.
func released(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), redisson.ErrLockLost)
}

// modelSpec is one session: what to acquire and what to do while holding it.
type modelSpec struct {
	name       string
	wait       time.Duration // 0: a single attempt
	lease      time.Duration // 0: watchdog
	leaderWork time.Duration
	helpers    [][]time.Duration // per helper goroutine, the work of each re-entry round
	final      bool              // the fault-free final phase: failing to acquire is a violation
	read       bool              // a ReadWriteLock: the read side (else the write side)
	downgrade  bool              // a ReadWriteLock's writer: read with the write hold's mark, then release the write hold
}

func (r *modelRun) rng(client, team int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(r.seed), uint64(r.proc)<<40|uint64(client)<<20|uint64(team)))
}

func (r *modelRun) stat(key string, n int64) {
	r.mu.Lock()
	r.stats[key] += n
	r.mu.Unlock()
}

func (r *modelRun) violation(kind, format string, args ...any) {
	msg := fmt.Sprintf("p%d: ", r.proc) + fmt.Sprintf(format, args...)
	msg = strings.ReplaceAll(msg, "\n", " ")
	r.mu.Lock()
	r.violations[kind]++
	r.mu.Unlock()
	r.tracef("VIOLATION %s: %s", kind, msg)
	r.emit(kind, msg)
}

// holdViolation reports a violation of mh, at most once per kind and hold.
func (r *modelRun) holdViolation(mh *modelHold, kind, format string, args ...any) {
	mh.mu.Lock()
	if mh.reported[kind] {
		mh.mu.Unlock()
		return
	}
	mh.reported[kind] = true
	mh.mu.Unlock()
	r.violation(kind, format, args...)
}

func (r *modelRun) infraErr(format string, args ...any) {
	msg := fmt.Sprintf("p%d: ", r.proc) + fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.infra = append(r.infra, msg)
	r.mu.Unlock()
	r.tracef("INFRA %s", msg)
}

func (r *modelRun) tracef(format string, args ...any) {
	if r.trace == nil {
		return
	}
	line := time.Now().Format("15:04:05.000000") + " " + fmt.Sprintf(format, args...) + "\n"
	r.traceMu.Lock()
	_, _ = r.trace.WriteString(line)
	r.traceMu.Unlock()
}

func (r *modelRun) openTrace(dir string) error {
	if dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("model-p%d.trace", r.proc)))
	if err != nil {
		return err
	}
	r.trace = f
	return nil
}

func (r *modelRun) opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.ctx, modelOpTimeout)
}

// newModelRun sets up the process's Clients, each over its own proxy to addrA.
func newModelRun(ctx context.Context, proc int, seed int64, deadline time.Time, names []string, addrA, addrB string, clients int) (*modelRun, error) {
	r := &modelRun{
		proc: proc, seed: seed, deadline: deadline, names: names, ctx: ctx,
		afterOff:       map[int64]func() bool{},
		stats:          map[string]int64{},
		giveBackFailed: map[string]int64{},
		violations:     map[string]int64{},
	}
	r.groups = modelGroups(names)
	for _, name := range names {
		r.csNames = append(r.csNames, name)
		if _, ok := r.groups[name]; !ok {
			r.keyNames = append(r.keyNames, name)
		}
	}
	for _, name := range names {
		if kindOf(name) == "RedLock" {
			r.keyNames = append(r.keyNames, r.groups[name]...)
			r.csNames = append(r.csNames, r.groups[name]...)
		}
	}
	r.admin = redis.NewClient(&redis.Options{Addr: addrA, ContextTimeoutEnabled: true})
	r.bdb = redis.NewClient(&redis.Options{Addr: addrB, ContextTimeoutEnabled: true, ClientName: modelBName(proc)})
	r.drv = newModelDriver(r.admin)
	acked := r.rng(0xFFFF, 4).IntN(clients) // the replica-acknowledged Client, by the seed
	// Another Client, by the seed, batches its teams' concurrent commands (WithAutoPipelining).
	piped := (acked + 1 + r.rng(0xFFFF, 5).IntN(max(clients-1, 1))) % clients
	for i := range clients {
		p, err := redistest.StartProxy(addrA)
		if err != nil {
			r.close()
			return nil, err
		}
		c := &modelClient{idx: i, key: fmt.Sprintf("p%dc%d", proc, i), proxy: p, acked: i == acked}
		opts := []redisson.Option{redisson.WithWatchdogTimeout(modelWatchdog), redisson.WithRepollInterval(modelRepoll),
			redisson.WithWaiterTimeout(modelWatchdog), redisson.WithLogger(slog.New(modelWarnCounter{r})), redisson.WithLossTracking(true)}
		switch {
		case c.acked:
			c.key += "a"
			opts = append(opts, redisson.WithReplicaAcks(1, modelAckTimeout))
		case i == piped:
			c.key += "p"
			opts = append(opts, redisson.WithAutoPipelining(true))
		}
		c.rdb = redis.NewClient(modelRedisOptions(p.Addr()))
		c.rc, err = redisson.New(c.rdb, opts...)
		if err != nil {
			_ = c.rdb.Close()
			_ = p.Close()
			r.close()
			return nil, err
		}
		r.clients = append(r.clients, c)
	}
	return r, nil
}

// modelGroups returns the parts of the groups among names: the MultiLock's are the first Lock and
// the first FairLock of names, the RedLock's three Locks of its own.
func modelGroups(names []string) map[string][]string {
	first := func(kind string) string {
		for _, n := range names {
			if kindOf(n) == kind {
				return n
			}
		}
		return ""
	}
	groups := map[string][]string{}
	for _, name := range names {
		switch kindOf(name) {
		case "MultiLock":
			groups[name] = []string{first("Lock"), first("FairLock")}
		case "RedLock":
			base := strings.Replace(name, "redlock", "rlpart", 1)
			groups[name] = []string{base + "-1", base + "-2", base + "-3"}
		}
	}
	return groups
}

// groupClients returns the Clients the parts of group name go through when c locks it.
func (r *modelRun) groupClients(c *modelClient, name string) []*modelClient {
	parts := r.groups[name]
	if parts == nil {
		return []*modelClient{c}
	}
	out := make([]*modelClient, len(parts))
	for i := range parts {
		out[i] = r.clients[(c.idx+i)%len(r.clients)]
	}
	return out
}

// locker returns lock name as Client c takes it (a group's parts through groupClients).
func (r *modelRun) locker(c *modelClient, name string) redisson.Locker {
	kind := kindOf(name)
	parts := r.groups[name]
	if parts == nil {
		return lockOf(c.rc, kind, name)
	}
	var locks []redisson.Locker
	for i, pc := range r.groupClients(c, name) {
		locks = append(locks, lockOf(pc.rc, kindOf(parts[i]), parts[i]))
	}
	if kind == "RedLock" {
		// Its parts go through three Clients, each behind its own proxy to A: NewRedLock, which
		// compares addresses, cannot tell they reach one server. The model checks the algorithm
		// (majority, loss, release), not the independence of the servers.
		return redisson.NewRedLock(locks...)
	}
	return redisson.NewMultiLock(locks...)
}

// forceScope returns the names whose holders a force unlock of name may end: name, the groups it is
// a part of, and a group's parts.
func (r *modelRun) forceScope(name string) []string {
	scope := []string{name}
	scope = append(scope, r.groups[name]...)
	for g, parts := range r.groups {
		if slices.Contains(parts, name) {
			scope = append(scope, g)
		}
	}
	slices.Sort(scope) // a fixed order (the map's is random)
	return scope
}

// modelLockerDriver is what TestModel needs of its driver beyond lockDriver for the locks it builds
// itself (groups over several Clients, a ReadWriteLock's read side).
type modelLockerDriver interface {
	LockWith(ctx context.Context, lock, try acquireFunc, wait, lease time.Duration) (driverHold, error)
	Mark(ctx context.Context, h driverHold) context.Context
}

// modelGroupHold is a group's hold: its parts' holds (nil for a part not acquired).
type modelGroupHold interface {
	GroupParts() []driverHold
}

// acquire takes the lock of s through c.
func (r *modelRun) acquire(c *modelClient, s modelSpec) (driverHold, error) {
	ld, _ := r.drv.(modelLockerDriver)
	switch {
	case s.read:
		rw := c.rc.ReadWriteLock(s.name)
		return ld.LockWith(r.ctx, rw.RLock, rw.TryRLock, s.wait, s.lease)
	case r.groups[s.name] != nil:
		l := r.locker(c, s.name)
		return ld.LockWith(r.ctx, l.Lock, l.TryLock, s.wait, s.lease)
	}
	return r.drv.Lock(r.ctx, c.rc, s.name, s.wait, s.lease)
}

// modelBName is the connection name of process proc's connections to B.
func modelBName(proc int) string { return fmt.Sprintf("model-p%d", proc) }

// closeClients closes every redisson Client, then waits for the critical-section clears their
// ending holds trigger. Holds whose context did not end are left.
func (r *modelRun) closeClients() { r.clientsOnce.Do(r.closeClientsOnce) }

func (r *modelRun) closeClientsOnce() {
	for _, c := range r.clients {
		_ = c.rc.Close()
	}
	r.afterMu.Lock()
	stops := slices.Collect(maps.Values(r.afterOff))
	r.afterMu.Unlock()
	for _, stop := range stops {
		if stop() {
			r.afterWG.Done()
		}
	}
	done := make(chan struct{})
	go func() { r.afterWG.Wait(); close(done) }()
	timer := time.NewTimer(2 * modelOpTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		r.infraErr("critical-section clears did not finish within %v", 2*modelOpTimeout)
		<-done // each is bounded by modelOpTimeout
	}
}

// close closes the connections and proxies (after closeClients).
func (r *modelRun) close() { r.closeOnce.Do(r.closeConns) }

func (r *modelRun) closeConns() {
	for _, c := range r.clients {
		_ = c.rdb.Close()
		_ = c.proxy.Close()
	}
	_ = r.admin.Close()
	_ = r.bdb.Close()
	if r.trace != nil {
		_ = r.trace.Close()
	}
}

// workload runs every team until the deadline, with faults, then the fault-free final phase.
func (r *modelRun) workload() {
	var wg sync.WaitGroup
	for _, c := range r.clients {
		for tm := range modelTeams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.runTeam(c, tm)
			}()
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.runFaults()
	}()
	if r.rep != nil && r.faults["replica"] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runReplicaFaults()
		}()
	}
	if r.proc == 0 && r.latchName != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runLatch()
		}()
	}
	wg.Wait()
	r.tracef("final phase")
	r.finalPhase()
}

// finalPhase: with faults off, every team acquires every name once.
func (r *modelRun) finalPhase() {
	var wg sync.WaitGroup
	for _, c := range r.clients {
		for tm := range modelTeams {
			for _, name := range r.names {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// A ReadWriteLock: every other team reads.
					read := kindOf(name) == "ReadWriteLock" && tm%2 == 1
					r.session(c, tm, modelSpec{name: name, wait: modelFinalWait, final: true, read: read})
				}()
			}
			if r.semName != "" {
				wg.Add(2)
				go func() {
					defer wg.Done()
					r.semSession(c, tm, r.rng(c.idx, 100+tm), true)
				}()
				go func() {
					defer wg.Done()
					r.psemSession(c, tm, r.rng(c.idx, 200+tm), true)
				}()
			}
		}
	}
	wg.Wait()
}

func (r *modelRun) workloadOn() bool { return r.ctx.Err() == nil && time.Now().Before(r.deadline) }

// work sleeps d, the work done under a hold whose context is hctx: less if the hold ends (its
// holder must stop) or the run is aborted.
func (r *modelRun) work(hctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-hctx.Done():
	case <-r.ctx.Done():
	}
}

// holdWork is work for a hold of Client c (context hctx) lasting d. A long hold of an acked Client
// keeps pinging A through the Client's proxy meanwhile: otherwise its renewals would be the only
// replies there, and every lost reply the drop fault arms would be a renewal's, so that the hold
// would be lost to the drops before a cut of the replication link could tell anything.
func (r *modelRun) holdWork(c *modelClient, hctx context.Context, d time.Duration) {
	if !c.acked || d < modelLongHoldMin {
		r.work(hctx, d)
		return
	}
	end := time.Now().Add(d)
	for hctx.Err() == nil && r.ctx.Err() == nil {
		left := time.Until(end)
		if left <= 0 {
			return
		}
		r.work(hctx, min(left, 25*time.Millisecond))
		ctx, cancel := context.WithTimeout(hctx, 100*time.Millisecond)
		_ = c.rdb.Ping(ctx).Err() // traffic only: a lost reply just ends it
		cancel()
	}
}

// pause sleeps d (workload pacing), or less if the run is aborted.
func (r *modelRun) pause(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.ctx.Done():
	}
}

func modelBetween(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// randomSpec draws a session of Client c.
func (r *modelRun) randomSpec(c *modelClient, rng *rand.Rand) modelSpec {
	// Skewed: most sessions contend for the first name, so that releases often find both a waiter
	// of another Client that claimed the lock and one of the same Client to hand it to.
	s := modelSpec{name: r.names[0]}
	switch p := rng.IntN(100); {
	case p >= 95:
		s.name = r.names[6] // RedLock
	case p >= 90:
		s.name = r.names[5] // MultiLock over names[0] and names[1]
	case p >= 76:
		s.name = r.names[4] // ReadWriteLock
		switch q := rng.IntN(100); {
		case q < 55:
			s.read = true
		case q < 80:
			s.downgrade = true
		}
	case p >= 66:
		s.name = r.names[2]
	case p >= 59:
		s.name = r.names[3] // SpinLock
	case p >= 45:
		s.name = r.names[1]
	}
	switch p := rng.IntN(100); {
	case p < 12:
		s.wait = 0 // a single attempt
	case p < 25:
		s.wait = modelBetween(rng, 5*time.Millisecond, 30*time.Millisecond) // likely cancelled
	default:
		s.wait = modelBetween(rng, 50*time.Millisecond, 3*time.Second)
	}
	switch p := rng.IntN(100); {
	case p < 4:
		s.lease = modelBetween(rng, 150*time.Millisecond, 400*time.Millisecond) // runs out during the session
	case p < 20:
		s.lease = modelBetween(rng, 2*time.Second, modelMaxLease)
	}
	if s.name == r.names[3] && rng.IntN(100) < 40 {
		// A short fixed lease: a grant delayed (or re-sent after a lost reply) past its margin is
		// given back, and the spin goes on as a new owner, while the given-back owner's undos are
		// repeated in the background (see spin in lock.go).
		s.lease = modelBetween(rng, 150*time.Millisecond, 400*time.Millisecond)
		s.wait = max(s.wait, modelBetween(rng, time.Second, 3*time.Second)) // outlives a late grant's give-back
	}
	s.leaderWork = modelBetween(rng, 0, 5*time.Millisecond)
	if s.name == r.names[4] {
		// Longer ReadWriteLock holds: readers overlap each other, and a writer or reader let in
		// beside them wrongly finds them inside.
		s.leaderWork = modelBetween(rng, 0, 20*time.Millisecond)
		if c.acked && rng.IntN(100) < 35 {
			// Long enough for a cut of the replication link to make it lost.
			s.leaderWork = modelBetween(rng, modelLongHoldMin, modelLongHoldMax)
		}
	}
	k := 2
	switch p := rng.IntN(100); {
	case p < 35:
		k = 0
	case p < 70:
		k = 1
	}
	for range k {
		rounds := make([]time.Duration, 1+rng.IntN(3))
		for i := range rounds {
			rounds[i] = modelBetween(rng, 0, 3*time.Millisecond)
		}
		s.helpers = append(s.helpers, rounds)
	}
	return s
}

// probeSpec draws a session of the acked Clients' probe: a long watchdog hold (mostly a reader's) of
// the ReadWriteLock that only they use before the final phase, so that cuts of the replication link
// find acked holds to lose (and an acked writer finds an acked holder lost before it) without
// stalling the workload's own ReadWriteLock.
func (r *modelRun) probeSpec(rng *rand.Rand) modelSpec {
	s := modelSpec{name: r.names[modelNameCount], read: rng.IntN(100) < 75,
		wait:       modelBetween(rng, 50*time.Millisecond, 1500*time.Millisecond),
		leaderWork: modelBetween(rng, modelLongHoldMin, modelLongHoldMax)}
	if rng.IntN(2) == 0 {
		s.helpers = [][]time.Duration{{modelBetween(rng, 0, 3*time.Millisecond)}}
	}
	return s
}

func (r *modelRun) runTeam(c *modelClient, team int) {
	rng := r.rng(c.idx, team)
	for r.workloadOn() {
		if c.acked && team == 0 && len(r.names) > modelNameCount && rng.IntN(100) < 95 {
			r.stat("acked probes", 1)
			r.session(c, team, r.probeSpec(rng))
		} else if c.acked && team == 1 && r.psemProbeName != "" && rng.IntN(100) < 95 {
			r.stat("acked permit probes", 1)
			r.psemProbe(c, team, rng)
		} else if p := rng.IntN(100); p < 2 && r.faults["force"] {
			r.forceUnlock(c, team, r.names[rng.IntN(len(r.names))], false)
		} else if !r.syncSession(c, team, rng, p-2) && !r.objSession(c, team, rng, p-17) {
			r.session(c, team, r.randomSpec(c, rng))
		}
		r.pause(modelBetween(rng, 0, 5*time.Millisecond))
	}
}

// epoch reads the force-unlock epoch of name.
func (r *modelRun) epoch(name string) int64 {
	ctx, cancel := r.opCtx()
	defer cancel()
	e, err := r.bdb.Get(ctx, "epoch:"+name).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		r.infraErr("GET epoch:%s: %v", name, err)
	}
	return e
}

// forced reports whether a force unlock of name may have run since epoch was read (or the
// question could not be answered).
func (r *modelRun) forced(name string, epoch int64) bool {
	ctx, cancel := r.opCtx()
	defer cancel()
	n, err := modelForced.Run(ctx, r.bdb, []string{"epoch:" + name, "forcing:" + name}, epoch).Int()
	if err != nil {
		r.infraErr("force check of %s: %v", name, err)
		return true
	}
	return n == 1
}

// excuse returns why a discrepancy observed on mh by a call that returned at at may be legitimate,
// or "" if nothing explains it.
//
// A hold released (its context ended without a loss) while the model holds levels can only be
// explained by an Unlock with an unknown outcome: leases, faults and force unlocks make holds lost.
func (r *modelRun) excuse(mh *modelHold, at time.Time, released bool) string {
	if u := mh.unknownSince(); !u.IsZero() && u.Before(at) {
		return "an earlier call of the hold had an unknown outcome"
	}
	if released {
		return ""
	}
	if r.excuseAckLost(mh) {
		return "lost (or a part): too few replicas acknowledged its renewals"
	}
	if !mh.leaseEnd.IsZero() && !at.Before(mh.leaseEnd) {
		return "its fixed lease may have run out"
	}
	for _, c := range mh.clients {
		if c.tainted(mh.acquired.Add(-modelTaintBefore), at) {
			return "a blackhole or delay of its Client"
		}
	}
	if r.forced(mh.name, mh.epoch) {
		return "a force unlock"
	}
	return ""
}

// session acquires s.name, enters its critical section, runs the helpers, checks the hold count,
// leaves and unlocks, checking every result against the model. A downgrading writer then reads.
func (r *modelRun) session(c *modelClient, team int, s modelSpec) {
	r.stat("sessions", 1)
	id := fmt.Sprintf("p%dc%dt%d#%d", r.proc, c.idx, team, r.holdSeq.Add(1))
	epoch := r.epoch(s.name)
	clients := r.groupClients(c, s.name)
	var parts []modelPart
	for i, part := range r.groups[s.name] {
		parts = append(parts, modelPart{name: part, c: clients[i], epoch: r.epoch(part)})
	}
	start := time.Now()
	h, err := r.acquire(c, s)
	acquired := time.Now()
	// Blackholes during the call stall it legitimately (a cleanup after an unknown outcome too).
	var bh time.Duration
	for _, gc := range clients {
		bh += gc.blackholeCost(start, acquired)
	}
	if took := acquired.Sub(start); took > s.wait+modelWaitSlack+bh {
		r.violation(vStuck, "%s: Lock(%s, wait %v, lease %v, read %v) returned after %v (blackholes during it: %v; err %v)",
			id, s.name, s.wait, s.lease, s.read, took, bh, err)
	}
	if err != nil {
		r.stat("not obtained", 1)
		r.tracef("%s lock %s wait=%v lease=%v read=%v: %v", id, s.name, s.wait, s.lease, s.read, err)
		refused := errors.Is(err, redisson.ErrNotReplicated)
		if refused {
			// Not acknowledged: undone, not held.
			r.stat("acked refused (acks)", 1)
		}
		if refused && s.final {
			r.finalRefused(start)
		} else if s.final {
			r.violation(vNeverServed, "%s: Lock(%s, read %v) with faults off and a %v wait: %v (the lock now: %s)",
				id, s.name, s.read, s.wait, err, r.describeLock(s.name))
		}
		return
	}
	r.stat("acquired", 1)
	label := kindOf(s.name)
	if s.read {
		label += "(read)"
	}
	r.stat("acquired "+label, 1)
	if c.acked {
		r.stat("acked acquired "+label, 1)
		if r.groups[s.name] == nil {
			r.checkAckGranted(id, s.name, start, acquired)
		}
	}
	mh := &modelHold{id: id, name: s.name, c: c, h: h, owner: h.Owner(), read: s.read, clients: clients, lease: s.lease,
		epoch: epoch, acquired: acquired, start: start, count: 1, reported: map[string]bool{}}
	if g, ok := h.(modelGroupHold); ok && parts != nil {
		for i, ph := range g.GroupParts() {
			if i < len(parts) && ph != nil {
				parts[i].h, parts[i].owner, parts[i].held = ph, ph.Owner(), true
			}
		}
		if kindOf(s.name) == "MultiLock" {
			// All or nothing: the group holds every part, and enters every part's critical section.
			for i := range parts {
				parts[i].held = true
			}
		}
		mh.parts = parts
	}
	if s.lease > 0 {
		mh.leaseEnd = start.Add(s.lease)
		mh.expiry = r.leaseExpiry(s.name, mh.owner, mh.leaseEnd)
	}
	r.tracef("%s lock %s owner=%s read=%v wait=%v lease=%v took=%v expiry=%s", id, s.name, r.ownersOf(mh), s.read, s.wait, s.lease,
		acquired.Sub(start), mh.expiry.Format("15:04:05.000"))
	r.holdPhase(mh, s, false)
	if s.downgrade {
		r.downgrade(c, team, mh, s)
		return
	}
	r.release(c, team, mh)
}

// holdPhase enters mh's critical section and runs the leader's work (unless mh is a downgraded
// reader, which entered already), runs the helpers, and checks the unlocks and the hold count at the
// quiescent point that follows.
func (r *modelRun) holdPhase(mh *modelHold, s modelSpec, downgraded bool) {
	if !downgraded {
		r.enter(mh)
		r.holdWork(mh.c, mh.h.Context(), s.leaderWork)
		if mh.c.acked && mh.lease == 0 && mh.parts == nil {
			r.checkAckKept(mh.id, mh.name, mh.h.Context(), mh.acquired)
		}
	}
	var wg sync.WaitGroup
	for _, rounds := range s.helpers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.helper(mh, rounds)
		}()
	}
	wg.Wait()

	// Quiescent point: nothing of this hold is in flight.
	r.judgeUnlocks(mh)
	r.checkHoldCount(mh, mh.h.Context())
}

// release leaves mh's critical section and releases its last level.
func (r *modelRun) release(c *modelClient, team int, mh *modelHold) {
	r.leave(mh)
	mh.add(-1)
	if r.finalUnlock(mh) {
		// The lock stays held (and renewed) by an owner that let it go. Force-unlock it so that
		// the run goes on; the first time in the run, only after the checker could see it outlive
		// its lease.
		if r.firstStuck() {
			r.pause(modelWatchdog + modelRenewSlack + modelTaintedRenewSlack + 300*time.Millisecond)
		}
		r.forceUnlock(c, team, mh.name, true)
	}
}

// downgrade: the writer w takes the read side with a context marked by its hold, releases the write
// side, and goes on as a reader (re-entries included).
func (r *modelRun) downgrade(c *modelClient, team int, w *modelHold, s modelSpec) {
	ld := r.drv.(modelLockerDriver)
	id := fmt.Sprintf("p%dc%dt%d#%d", r.proc, c.idx, team, r.holdSeq.Add(1))
	epoch := r.epoch(s.name)
	rw := c.rc.ReadWriteLock(s.name)
	start := time.Now()
	h, err := ld.LockWith(ld.Mark(r.ctx, w.h), rw.RLock, rw.TryRLock, 0, s.lease)
	acquired := time.Now()
	if err != nil {
		r.stat("downgrade failed", 1)
		r.tracef("%s downgrade of %s (writer %s): %v", id, s.name, w.id, err)
		// Refused as held by others while the write hold is live: only an excuse of the writer's
		// (its lock may be gone in Redis) explains it.
		if strings.Contains(err.Error(), "held by another owner") && w.h.Context().Err() == nil {
			if why := r.excuse(w, acquired, false); why == "" {
				r.holdViolation(w, vDowngrade, "%s: %s (writer %s, owner %s, lease %v, acquired at %s): TryRLock with its mark: %v",
					s.name, id, w.id, w.owner, w.lease, w.acquired.Format("15:04:05.000"), err)
			}
		}
		r.release(c, team, w)
		return
	}
	r.stat("downgraded", 1)
	mh := &modelHold{id: id, name: s.name, c: c, h: h, owner: h.Owner(), read: true, vouch: w.id, clients: []*modelClient{c},
		lease: s.lease, epoch: epoch, acquired: acquired, start: start, count: 1, reported: map[string]bool{}}
	if s.lease > 0 {
		mh.leaseEnd = start.Add(s.lease)
		mh.expiry = mh.leaseEnd
	}
	r.tracef("%s downgrade %s owner=%s (writer %s) took=%v", id, s.name, mh.owner, w.id, acquired.Sub(start))
	r.enter(mh)
	r.release(c, team, w)
	r.holdPhase(mh, s, true)
	r.release(c, team, mh)
}

// ownersOf describes mh's owner, or its parts'.
func (r *modelRun) ownersOf(mh *modelHold) string {
	if mh.parts == nil {
		return mh.owner
	}
	var os []string
	for _, p := range mh.parts {
		os = append(os, p.owner)
	}
	return "[" + strings.Join(os, " ") + "]"
}

// firstStuck reports whether this is the first lock of the run found held after its last Unlock.
func (r *modelRun) firstStuck() bool {
	ctx, cancel := r.opCtx()
	defer cancel()
	n, err := r.bdb.Incr(ctx, "stuck").Result()
	return err == nil && n == 1
}

// leaseExpiry returns the earliest time a fixed-lease lock just acquired by owner can expire: the
// lease counted from before the call, or from before a PTTL read of the key if it is owner's.
func (r *modelRun) leaseExpiry(name, owner string, lb time.Time) time.Time {
	ctx, cancel := r.opCtx()
	defer cancel()
	key := r.drv.Key(name)
	before := time.Now()
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	_, _ = r.admin.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, key)
		pttl = p.PTTL(ctx, key)
		return nil
	})
	if get.Err() == nil && pttl.Err() == nil && pttl.Val() > time.Millisecond {
		if o, _, ok := r.drv.Decode(get.Val()); ok && o == owner && owner != "" {
			if e := before.Add(pttl.Val() - time.Millisecond); e.After(lb) {
				return e
			}
		}
	}
	return lb
}

// csValue is mh's entry in B for the critical section of name: its own (epoch, Clients and owner
// those of mh), or that of one of its parts.
func (r *modelRun) csValue(mh *modelHold, p *modelPart) string {
	var expiry int64
	if !mh.expiry.IsZero() {
		expiry = mh.expiry.UnixMilli()
	}
	owner, epoch, clients := mh.owner, mh.epoch, mh.c.key
	if mh.parts != nil {
		owner = r.ownersOf(mh)
	}
	if p != nil {
		owner, epoch, clients = p.owner, p.epoch, p.c.key
	} else if len(mh.clients) > 1 {
		var keys []string
		for _, c := range mh.clients {
			keys = append(keys, c.key)
		}
		clients = strings.Join(keys, ",")
	}
	owner = strings.NewReplacer("|", "/").Replace(owner)
	return fmt.Sprintf("%d|%s|%s|%d|%d|%s|%d", r.proc, mh.id, owner, epoch, expiry, clients,
		mh.acquired.Add(-modelTaintBefore).UnixMilli())
}

// csKeys are the keys of name's critical section (see modelCSEnter).
func csKeys(name string) []string {
	return []string{"cs:" + name, "epoch:" + name, "forcing:" + name, "token:" + name, "csr:" + name}
}

// enter registers mh in the critical section of its lock (and a group's in those of the parts it
// holds), reporting another live holder found there, and makes it leave them when its context (a
// part's) ends.
func (r *modelRun) enter(mh *modelHold) {
	var token int64
	if tk, ok := mh.h.(interface{ Token() int64 }); ok {
		token = tk.Token()
	}
	r.enterCS(mh, mh.name, r.csValue(mh, nil), token)
	for i := range mh.parts {
		if p := &mh.parts[i]; p.held {
			r.enterCS(mh, p.name, r.csValue(mh, p), 0)
		}
	}
	// A lost hold leaves the critical section at once (registered after entering, so that a clear
	// triggered by an already ended hold comes after the entry).
	names := []string{mh.name}
	for _, p := range mh.parts {
		if p.held {
			names = append(names, p.name)
		}
	}
	acked := false
	for _, c := range mh.clients {
		acked = acked || c.acked
	}
	r.onEnd(mh.h.Context(), acked, mh.id, names, func() { r.leave(mh) })
	for _, p := range mh.parts {
		if p.h != nil {
			r.onEnd(p.h.Context(), p.c.acked, mh.id, []string{p.name}, func() { r.leaveCS(mh, p.name) })
		}
	}
}

// enterCS enters the critical section of name with entry value.
func (r *modelRun) enterCS(mh *modelHold, name, value string, token int64) {
	mode, side := "x", "writer"
	if mh.read {
		mode, side = "r", "reader"
	}
	var verdict, prev, prevSide string
	var f []string
	for try := 0; ; try++ {
		ctx, cancel := r.opCtx()
		res, err := modelCSEnter.Run(ctx, r.bdb, csKeys(name), value, mh.id, token, mode, mh.vouch).Slice()
		cancel()
		if err != nil || len(res) != 4 {
			r.infraErr("entering cs:%s: %v %v", name, res, err)
			return
		}
		verdict, _ = res[0].(string)
		prev, _ = res[1].(string)
		prevSide, _ = res[3].(string)
		r.tracef("%s enter %s (%s): %s (prev %q %s)", mh.id, name, mode, verdict, prev, prevSide)
		if verdict == "token" {
			r.holdViolation(mh, vToken, "%s: %s (owner %s) entered with fencing token %d; a holder that entered before had %s",
				name, mh.id, mh.owner, token, prev)
			return
		}
		if verdict == csOK {
			return
		}
		if verdict != csViolation {
			r.stat("overtaken ("+verdict+")", 1)
			return
		}
		f = strings.Split(prev, "|")
		if len(f) != 7 {
			r.infraErr("cs:%s holds %q", name, prev)
			return
		}
		// A holder (through an acked Client) that was told it was lost before this hold's
		// acquisition returned had to stop: its entry may still be here only because its clear had
		// not run yet. Drop it and enter again (another holder may be inside too). The token was
		// checked by the first try.
		if try >= 8 || !r.lostBefore(f[1], name, mh.acquired) {
			break
		}
		r.stat("overtaken (acked, lost before)", 1)
		r.tracef("%s enter %s: %s (acked) was lost before, dropped", mh.id, name, f[1])
		ctx, cancel = r.opCtx()
		if err := modelCSLeave.Run(ctx, r.bdb, []string{"cs:" + name, "csr:" + name}, 2, f[1]).Err(); err != nil {
			r.infraErr("leaving cs:%s: %v", name, err)
		}
		cancel()
		token = 0
	}
	what, other := "", ""
	if kindOf(mh.name) == "ReadWriteLock" {
		what = " (" + side + ")"
		other = " (writer)"
		if prevSide == "r" {
			other = " (reader)"
		}
	}
	if name != mh.name {
		what += " as a part of " + mh.name
	}
	since, _ := strconv.ParseInt(f[6], 10, 64)
	r.holdViolation(mh, vTwoOwners, "%s: %s%s (owner %s, lease %v, acquired at %s) entered while %s%s (owner %s, process %s, "+
		"acquired at about %s) was still inside", name, mh.id, what, r.ownersOf(mh), mh.lease, mh.acquired.Format("15:04:05.000"),
		f[1], other, f[2], f[0], time.UnixMilli(since).Add(modelTaintBefore).Format("15:04:05.000"))
}

// leave removes mh's entries from its critical sections, if they are still there.
func (r *modelRun) leave(mh *modelHold) {
	r.leaveCS(mh, mh.name)
	for _, p := range mh.parts {
		if p.held {
			r.leaveCS(mh, p.name)
		}
	}
}

// leaveCS removes mh's entry from the critical section of name, if it is still there.
func (r *modelRun) leaveCS(mh *modelHold, name string) {
	ctx, cancel := r.opCtx()
	defer cancel()
	if err := modelCSLeave.Run(ctx, r.bdb, []string{"cs:" + name, "csr:" + name}, 2, mh.id).Err(); err != nil {
		r.infraErr("leaving cs:%s: %v", name, err)
	}
}

// onEnd runs leave when hctx (the context of hold id, or of its part) ends. If the hold, through an
// acked Client, was lost, it first stamps the time in B for each of names (the critical sections
// leave clears): see lostBefore.
func (r *modelRun) onEnd(hctx context.Context, acked bool, id string, names []string, leave func()) {
	seq := r.holdSeq.Add(1)
	r.afterWG.Add(1)
	r.afterMu.Lock()
	defer r.afterMu.Unlock()
	r.afterOff[seq] = context.AfterFunc(hctx, func() {
		at := time.Now()
		defer r.afterWG.Done()
		r.afterMu.Lock()
		delete(r.afterOff, seq)
		r.afterMu.Unlock()
		r.tracef("%s context ended: %v", id, context.Cause(hctx))
		if acked && modelLost(hctx) {
			if errors.Is(context.Cause(hctx), redisson.ErrNotReplicated) {
				r.stat("lost for acks", 1)
			} else {
				r.stat("acked lost", 1)
			}
			ctx, cancel := r.opCtx()
			for _, name := range names {
				if err := r.bdb.Set(ctx, modelLostKey(id, name), at.UnixMilli(), modelFinTTL).Err(); err != nil {
					r.infraErr("SET %s: %v", modelLostKey(id, name), err)
				}
			}
			cancel()
		}
		leave()
	})
}

// modelLostKey is the key in B of the time hold id (through an acked Client), in the critical
// section of name, was told it was lost.
func modelLostKey(id, name string) string { return "lost:" + id + "@" + name }

// lostBefore reports whether hold id (through an acked Client), found in the critical section of
// name by a holder whose acquisition returned at acquired, had been told it was lost by then (plus
// modelTaintAfter of timer jitter): its stamp (see onEnd) says when its context's clear began,
// which follows the cancellation. The clear may not have run yet when the newcomer enters, so the
// stamp is awaited for up to a second. (Sound for a loss of any cause: a holder told before the
// newcomer got the lock had to stop; it is used for the acked Clients' holds only, to leave the
// checks of the others as they were.)
func (r *modelRun) lostBefore(id, name string, acquired time.Time) bool {
	limit := time.Now().Add(time.Second)
	for {
		ctx, cancel := r.opCtx()
		ms, err := r.bdb.Get(ctx, modelLostKey(id, name)).Int64()
		cancel()
		if err == nil {
			return !time.UnixMilli(ms).After(acquired.Add(modelTaintAfter))
		}
		if !errors.Is(err, redis.Nil) {
			r.infraErr("GET %s: %v", modelLostKey(id, name), err)
			return false
		}
		if time.Now().After(limit) || r.ctx.Err() != nil {
			return false
		}
		r.pause(20 * time.Millisecond) // polling for the holder's clear
	}
}

// helper re-enters the shared hold and unlocks that level, once per round.
func (r *modelRun) helper(mh *modelHold, rounds []time.Duration) {
	for _, work := range rounds {
		start := time.Now()
		lvl, err := mh.h.Reenter(r.ctx)
		if err != nil {
			r.stat("reenter failed", 1)
			if !errors.Is(err, redisson.ErrLockLost) && !errors.Is(err, redisson.ErrNotHeld) {
				// Not a clean refusal: the library undoes it, or must end the hold if it cannot. The
				// hold count is still checked; an Unlock answering ErrNotHeld is not.
				r.stat("unknown outcome", 1)
				mh.markReenterUnknown(start)
			}
			r.tracef("%s reenter: %v", mh.id, err)
			continue
		}
		mh.add(1)
		r.stat("reentered", 1)
		r.tracef("%s reenter (sent %s, took %v): ok", mh.id, start.Format("15:04:05.000000"), time.Since(start))
		r.pause(work)
		mh.add(-1)
		r.unlock(mh, lvl, "level")
	}
}

// unlock releases one level (the model already counts it released) and checks the result.
func (r *modelRun) unlock(mh *modelHold, lvl driverLevel, what string) error {
	hctx := mh.h.Context()
	lostBefore := modelLost(hctx)
	start := time.Now()
	err := lvl.Unlock(r.ctx)
	at := time.Now()
	r.tracef("%s unlock %s (sent %s, took %v): %v", mh.id, what, start.Format("15:04:05.000000"), at.Sub(start), err)
	switch {
	case err == nil:
		r.stat("unlocked", 1)
	case errors.Is(err, redisson.ErrNotHeld) || errors.Is(err, redisson.ErrLockLost):
		// ErrLockLost alone: a group's Unlock that found a part gone and released the others.
		r.stat("unlock not held", 1)
		if lostBefore {
			return err
		}
		if r.excuseAckLost(mh) {
			// Lost for want of replica acknowledgements while it was in flight: the library freed
			// the lock after telling the holder.
			r.stat("unlock not held (lost for acks)", 1)
			return err
		}
		// Judged once no call of the hold is in flight (see judgeUnlocks): a concurrent call with
		// an unknown outcome, reported later, may explain it.
		mh.mu.Lock()
		mh.suspects = append(mh.suspects, modelSuspect{what: what, err: err, at: at, released: released(hctx)})
		mh.mu.Unlock()
	default:
		r.stat("unknown outcome", 1)
		mh.markUnknown(start)
	}
	return err
}

// judgeUnlocks decides, at a quiescent point, whether the Unlocks of mh that answered ErrNotHeld
// while the model held their level are violations.
func (r *modelRun) judgeUnlocks(mh *modelHold) {
	mh.mu.Lock()
	suspects := mh.suspects
	mh.suspects = nil
	mh.mu.Unlock()
	for _, su := range suspects {
		if u := mh.reenterUnknownSince(); !u.IsZero() && u.Before(su.at) {
			continue
		}
		if why := r.excuse(mh, su.at, su.released); why != "" {
			r.tracef("%s unlock misreport excused: %s", mh.id, why)
			continue
		}
		r.holdViolation(mh, vMisreport, "%s: %s: Unlock of a held %s (owner %s, lease %v, acquired at %s) returned %v at %s",
			mh.name, mh.id, su.what, mh.owner, mh.lease, mh.acquired.Format("15:04:05.000"), su.err, su.at.Format("15:04:05.000"))
	}
}

// checkHoldCount compares the hold count in Redis with the model at a quiescent point.
func (r *modelRun) checkHoldCount(mh *modelHold, hctx context.Context) {
	want := mh.levels()
	if hctx.Err() != nil {
		if modelLost(hctx) || want == 0 {
			return
		}
		// Ended without being lost: released while the model still holds levels.
		if why := r.excuse(mh, time.Now(), true); why != "" {
			return
		}
		r.holdViolation(mh, vHoldCount, "%s: %s (owner %s) was released (context: %v) while the model holds %d level(s)",
			mh.name, mh.id, mh.owner, context.Cause(hctx), want)
		return
	}
	n, err := mh.h.HoldCount(r.ctx)
	at := time.Now()
	if err != nil {
		r.tracef("%s HoldCount: %v", mh.id, err)
		return
	}
	if n == want {
		return
	}
	if u := mh.reenterUnknownSince(); n > want && !u.IsZero() {
		// A re-entry whose outcome stayed unknown (its undo failed too) may have left its level in
		// Redis; the final release frees the lock whatever levels are left ("held after" checks it).
		r.tracef("%s hold count %d, model %d: excused: a re-entry had an unknown outcome", mh.id, n, want)
		return
	}
	if why := r.excuse(mh, at, false); why != "" {
		r.tracef("%s hold count %d, model %d: excused: %s", mh.id, n, want, why)
		return
	}
	r.holdViolation(mh, vHoldCount, "%s: %s (owner %s, lease %v): HoldCount = %d, the model holds %d level(s)",
		mh.name, mh.id, mh.owner, mh.lease, n, want)
}

// modelHeldKey is a lock key an owner of a hold holds: the hold's own, or a group's part's.
type modelHeldKey struct {
	name, owner string
	side        string // a ReadWriteLock: "r" or "x"; "" for a lock string
}

// heldKeys returns the keys mh's owners hold (a group's: its parts' that it acquired).
func (r *modelRun) heldKeys(mh *modelHold) []modelHeldKey {
	if mh.parts != nil {
		var keys []modelHeldKey
		for _, p := range mh.parts {
			if p.h != nil && p.owner != "" {
				keys = append(keys, modelHeldKey{name: p.name, owner: p.owner})
			}
		}
		return keys
	}
	if mh.owner == "" {
		return nil
	}
	k := modelHeldKey{name: mh.name, owner: mh.owner}
	if kindOf(mh.name) == "ReadWriteLock" {
		k.side = "x"
		if mh.read {
			k.side = "r"
		}
	}
	return []modelHeldKey{k}
}

// stillHeld reports whether k's owner holds k's lock in A, with the count stored; err is redis.Nil
// if the lock is free.
func (r *modelRun) stillHeld(k modelHeldKey) (bool, int, error) {
	ctx, cancel := r.opCtx()
	defer cancel()
	switch k.side {
	case "":
		v, err := r.admin.Get(ctx, r.drv.Key(k.name)).Result()
		if err != nil {
			return false, 0, err
		}
		o, n, ok := r.drv.Decode(v)
		return ok && o == k.owner, n, nil
	case "x":
		v, err := r.admin.HGet(ctx, r.drv.Key(k.name), "w").Result()
		if err != nil {
			return false, 0, err
		}
		o, levels, _ := strings.Cut(v, "|")
		levels, _, _ = strings.Cut(levels, "|")
		return o == k.owner, len(strings.Split(levels, ",")), nil
	}
	v, err := r.admin.HGet(ctx, r.drv.Key(k.name), "r:"+k.owner).Result()
	if err != nil {
		return false, 0, err
	}
	levels, _, _ := strings.Cut(v, "|")
	return true, len(strings.Split(levels, ",")), nil
}

// describeLock returns what A holds for lock name (a group: for its parts), for messages.
func (r *modelRun) describeLock(name string) string {
	ctx, cancel := r.opCtx()
	defer cancel()
	names := r.groups[name]
	if names == nil {
		names = []string{name}
	}
	var out []string
	for _, n := range names {
		out = append(out, r.describeKey(ctx, r.drv.Key(n)))
	}
	return strings.Join(out, "; ")
}

// describeKey returns key and its value (a string's or a hash's) and PTTL, for messages.
func (r *modelRun) describeKey(ctx context.Context, key string) string {
	typ, err := r.admin.Type(ctx, key).Result()
	if err != nil {
		return fmt.Sprintf("%s: %v", key, err)
	}
	pttl, _ := r.admin.PTTL(ctx, key).Result()
	switch typ {
	case "string":
		v, err := r.admin.Get(ctx, key).Result()
		return fmt.Sprintf("%s = %q %v (PTTL %v)", key, v, err, pttl)
	case "hash":
		v, err := r.admin.HGetAll(ctx, key).Result()
		return fmt.Sprintf("%s = %v %v (PTTL %v)", key, v, err, pttl)
	}
	return fmt.Sprintf("%s: %s", key, typ)
}

// finalUnlock releases the last level the model holds and checks that the owner is gone (a group's
// owners of its parts); it reports whether an owner still holds its lock after an Unlock that
// returned nil.
func (r *modelRun) finalUnlock(mh *modelHold) (heldAfter bool) {
	defer r.judgeUnlocks(mh)
	if r.trace != nil {
		r.tracef("%s before the last unlock: %s", mh.id, r.describeLock(mh.name))
	}
	// A group's part lost before its last Unlock (a RedLock goes on with a majority) is released in
	// the background or lapses within its lease: the fin: check below bounds it, not this one.
	lostParts := map[string]bool{}
	for _, p := range mh.parts {
		if p.h != nil && modelLost(p.h.Context()) {
			lostParts[p.name] = true
		}
	}
	err := r.unlock(mh, mh.h, "last level")
	ret := time.Now()
	keys := r.heldKeys(mh)
	if err == nil {
		for _, k := range keys {
			if lostParts[k.name] {
				r.tracef("%s: part %s was lost before the last Unlock: left to its lease", mh.id, k.name)
				continue
			}
			held, n, gerr := r.stillHeld(k)
			switch {
			case gerr == nil && held:
				heldAfter = true
				r.holdViolation(mh, vHeldAfter, "%s: %s: still held by its owner %s (count %d, lock %s) after its last Unlock returned nil",
					mh.name, mh.id, k.owner, n, k.name)
			case gerr != nil && !errors.Is(gerr, redis.Nil):
				r.infraErr("reading %s: %v", k.name, gerr)
			}
		}
	}
	lease := mh.lease
	if lease == 0 {
		lease = modelWatchdog
	}
	ctx, cancel := r.opCtx()
	defer cancel()
	for _, k := range keys {
		fin := fmt.Sprintf("%d|%d|%s|%s", ret.UnixMilli(), lease.Milliseconds(), mh.id, r.clientsKey(mh))
		if err := r.bdb.Set(ctx, "fin:"+k.owner, fin, modelFinTTL).Err(); err != nil {
			r.infraErr("SET fin:%s: %v", k.owner, err)
		}
	}
	return heldAfter
}

// clientsKey is mh's Clients' keys, comma-separated.
func (r *modelRun) clientsKey(mh *modelHold) string {
	var keys []string
	for _, c := range mh.clients {
		keys = append(keys, c.key)
	}
	return strings.Join(keys, ",")
}

// forceUnlock force-unlocks name, bumping its epoch before and after so that holders it may
// overtake are excused.
//
// With recover set (the lock is stuck with an owner that let it go), a lock the library does not
// delete is deleted directly in A, so that the run goes on.
func (r *modelRun) forceUnlock(c *modelClient, team int, name string, recover bool) {
	id := fmt.Sprintf("p%dc%dt%d#%d", r.proc, c.idx, team, r.holdSeq.Add(1))
	ctx, cancel := r.opCtx()
	defer cancel()
	if !r.forceBegin(ctx, name, id) {
		return
	}
	defer r.forceEnd(ctx, name, id)
	fctx, fcancel := context.WithTimeout(r.ctx, 5*time.Second)
	var ok bool
	var err error
	if r.groups[name] != nil {
		ok, err = r.locker(c, name).ForceUnlock(fctx)
	} else {
		ok, err = r.drv.ForceUnlock(fctx, c.rc, name)
	}
	fcancel()
	if recover {
		r.stat("recoveries", 1)
	} else {
		r.stat("force unlocks", 1)
	}
	r.tracef("%s force unlock %s: %v %v", id, name, ok, err)
	if errors.Is(err, redisson.ErrWrongType) {
		// A holds nothing but what the library writes.
		r.violation(vForceRefused, "%s: ForceUnlock(%s) by %s: %v", name, name, id, err)
	}
	if recover && err != nil {
		keys := []string{r.drv.Key(name)}
		for _, part := range r.groups[name] {
			keys = append(keys, r.drv.Key(part))
		}
		n, err := r.admin.Del(ctx, keys...).Result()
		r.tracef("%s recovery: DEL %v: %d %v", id, keys, n, err)
	}
}

// forceBegin announces a force unlock of name (bumps its epoch, registers it as in progress), and
// of every name whose holders it may end (forceScope).
func (r *modelRun) forceBegin(ctx context.Context, name, id string) bool {
	until := time.Now().Add(modelForceTTL)
	if _, err := r.bdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, n := range r.forceScope(name) {
			p.ZAdd(ctx, "forcing:"+n, redis.Z{Score: float64(until.UnixMilli()), Member: id})
			p.Incr(ctx, "epoch:"+n)
		}
		return nil
	}); err != nil {
		r.infraErr("announcing a force unlock of %s: %v", name, err)
		return false
	}
	return true
}

// forceEnd ends a force unlock of name: bumps its epoch again (holders that acquired before it
// ended may have been deleted), then drops it from the ones in progress.
func (r *modelRun) forceEnd(ctx context.Context, name, id string) {
	if _, err := r.bdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, n := range r.forceScope(name) {
			p.Incr(ctx, "epoch:"+n)
			p.ZRem(ctx, "forcing:"+n, id)
		}
		return nil
	}); err != nil {
		r.infraErr("ending a force unlock of %s: %v", name, err)
	}
}

// modelDelIfValue deletes KEYS[1] if it still holds ARGV[1].
var modelDelIfValue = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// modelHDelIfValue deletes field ARGV[1] of hash KEYS[1] if it still holds ARGV[2].
var modelHDelIfValue = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
`)

// recoverStuck deletes lock name, if it still holds value, as a force unlock would: a lock held by
// an owner that let it go would otherwise block the rest of the run. A ReadWriteLock's field is
// given as "field=value": only the field goes.
func (r *modelRun) recoverStuck(name, value string) {
	id := fmt.Sprintf("p%d-recovery#%d", r.proc, r.holdSeq.Add(1))
	ctx, cancel := r.opCtx()
	defer cancel()
	if !r.forceBegin(ctx, name, id) {
		return
	}
	defer r.forceEnd(ctx, name, id)
	var n int
	var err error
	if field, v, ok := strings.Cut(value, "="); ok && kindOf(name) == "ReadWriteLock" {
		n, err = modelHDelIfValue.Run(ctx, r.admin, []string{r.drv.Key(name)}, field, v).Int()
	} else {
		n, err = modelDelIfValue.Run(ctx, r.admin, []string{r.drv.Key(name)}, value).Int()
	}
	r.stat("recoveries", 1)
	r.tracef("%s recovery of %s: deleted %d %v", id, name, n, err)
}

// runFaults injects faults into this process's proxies until the deadline, then turns them off.
func (r *modelRun) runFaults() {
	rng := r.rng(0xFFFF, 0)
	type timed struct {
		c     *modelClient
		until time.Time
		fault int // index in c.faults
		name  string
		off   func()
	}
	var on []timed
	end := func(f timed) {
		f.off()
		now := time.Now()
		f.c.mu.Lock()
		f.c.faults[f.fault].end = now
		f.c.mu.Unlock()
		ctx, cancel := r.opCtx()
		defer cancel()
		if err := r.bdb.ZAdd(ctx, "faults:"+f.c.key, redis.Z{Score: float64(now.Add(modelTaintAfter).UnixMilli()), Member: f.name}).Err(); err != nil {
			r.infraErr("ZADD faults:%s: %v", f.c.key, err)
		}
		r.tracef("fault %s on %s off", f.name, f.c.key)
	}
	// taint records a blackhole, held-back request or delay of c until until, in memory and in B,
	// before it starts.
	taint := func(c *modelClient, kind string, until time.Time) (int, string, bool) {
		now := time.Now()
		name := fmt.Sprintf("%s#%d@%d", kind, r.faultSq.Add(1), now.UnixMilli())
		c.mu.Lock()
		c.faults = append(c.faults, modelFault{start: now, blackhole: kind == "blackhole" || kind == "hold"})
		i := len(c.faults) - 1
		c.mu.Unlock()
		ctx, cancel := r.opCtx()
		defer cancel()
		if err := r.bdb.ZAdd(ctx, "faults:"+c.key, redis.Z{Score: float64(until.Add(modelTaintAfter).UnixMilli()), Member: name}).Err(); err != nil {
			r.infraErr("ZADD faults:%s: %v", c.key, err)
			return 0, "", false
		}
		return i, name, true
	}
	busy := func(c *modelClient) bool {
		for _, f := range on {
			if f.c == c {
				return true
			}
		}
		return false
	}
	defer func() {
		for _, f := range on {
			end(f)
		}
		for _, c := range r.clients {
			c.proxy.DropReplies(0)
		}
	}()

	next := time.Now().Add(modelBetween(rng, 50*time.Millisecond, 200*time.Millisecond))
	// Besides the mixed faults, extra lost replies: a lost reply whose command is re-sent after
	// other commands interleaved is what the known defects need.
	nextDrop := time.Now().Add(modelBetween(rng, modelDropMin, modelDropMax))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wake := next
		if nextDrop.Before(wake) {
			wake = nextDrop
		}
		if r.deadline.Before(wake) {
			wake = r.deadline
		}
		for _, f := range on {
			if f.until.Before(wake) {
				wake = f.until
			}
		}
		timer.Reset(time.Until(wake))
		select {
		case <-r.ctx.Done():
			return
		case <-timer.C:
		}
		now := time.Now()
		keep := on[:0]
		for _, f := range on {
			if now.Before(f.until) {
				keep = append(keep, f)
			} else {
				end(f)
			}
		}
		on = keep
		if !now.Before(r.deadline) {
			return
		}
		if !now.Before(nextDrop) {
			nextDrop = now.Add(modelBetween(rng, modelDropMin, modelDropMax))
			if c := r.clients[rng.IntN(len(r.clients))]; r.faults["drop"] {
				r.stat("faults", 1)
				r.stat("fault: dropped reply", 1)
				c.proxy.DropReplies(1)
				r.tracef("fault drop on %s", c.key)
			}
		}
		if now.Before(next) {
			continue
		}
		next = now.Add(modelBetween(rng, 50*time.Millisecond, 200*time.Millisecond))
		c := r.clients[rng.IntN(len(r.clients))]
		p := rng.IntN(100)
		if p >= 55 && busy(c) {
			p = 0
		}
		kind := "blackhole"
		switch {
		case p < 45:
			kind = "drop"
		case p < 55:
			kind = "close"
		case p < 85:
			kind = "delay"
		case p >= 95:
			kind = "hold"
		}
		if !r.faults[kind] {
			continue
		}
		r.stat("faults", 1)
		switch {
		case p < 45:
			r.stat("fault: dropped reply", 1)
			c.proxy.DropReplies(1)
			r.tracef("fault drop on %s", c.key)
		case p < 55:
			r.stat("fault: closed connections", 1)
			c.proxy.CloseConns()
			r.tracef("fault close on %s", c.key)
		case p < 85:
			r.stat("fault: delay", 1)
			d := modelBetween(rng, time.Millisecond, 30*time.Millisecond)
			if rng.IntN(4) == 0 {
				// Long enough that a grant with a short fixed lease is answered past its margin
				// (a SpinLock then gives it back and spins on as a new owner).
				d = modelBetween(rng, 150*time.Millisecond, 450*time.Millisecond)
			}
			until := now.Add(modelBetween(rng, 100*time.Millisecond, 300*time.Millisecond))
			if i, name, ok := taint(c, "delay", until); ok {
				c.proxy.Delay(d)
				on = append(on, timed{c: c, until: until, fault: i, name: name, off: func() { c.proxy.Delay(0) }})
				r.tracef("fault %s on %s: %v until %s", name, c.key, d, until.Format("15:04:05.000"))
			}
		case p >= 95:
			// The next request of c is held back past the waiter timeout (as long as a request
			// record lives), its connection given up meanwhile: a copy landing after its call ended.
			r.stat("fault: held-back request", 1)
			until := now.Add(modelBetween(rng, modelWatchdog+100*time.Millisecond, modelWatchdog+time.Second))
			if i, name, ok := taint(c, "hold", until); ok {
				c.proxy.HoldRequests(1)
				on = append(on, timed{c: c, until: until, fault: i, name: name, off: func() {
					c.proxy.HoldRequests(0)
					c.proxy.ReleaseHeld()
				}})
				r.tracef("fault %s on %s until %s", name, c.key, until.Format("15:04:05.000"))
			}
		default:
			r.stat("fault: blackhole", 1)
			dur := modelBetween(rng, 50*time.Millisecond, 400*time.Millisecond)
			if rng.IntN(10) == 0 {
				dur = modelBetween(rng, time.Second, 1800*time.Millisecond) // long enough for leases to lapse
			}
			until := now.Add(dur)
			if i, name, ok := taint(c, "blackhole", until); ok {
				c.proxy.Blackhole(true)
				on = append(on, timed{c: c, until: until, fault: i, name: name, off: func() { c.proxy.Blackhole(false) }})
				r.tracef("fault %s on %s until %s", name, c.key, until.Format("15:04:05.000"))
			}
		}
	}
}

// modelReplicaFaults is the zset in B of the replica faults: member the fault, score (ms) when it
// stops excusing (far ahead while it is on).
const modelReplicaFaults = "replica:faults"

// runReplicaFaults (parent) cuts A's replication link at random times until the deadline, each time
// for a while, then rejoins the replica and waits until it is in sync; no cut starts that could not
// end modelCutMargin before the deadline, so that the final phase finds the replica in sync.
func (r *modelRun) runReplicaFaults() {
	rng := r.rng(0xFFFF, 5)
	for {
		r.pause(modelBetween(rng, 300*time.Millisecond, 2*time.Second))
		dur := modelBetween(rng, modelCutMin, modelCutMax)
		if rng.IntN(2) == 0 {
			dur = modelBetween(rng, modelLongCutMin, modelLongCutMax) // acked watchdog holds are lost
		}
		if !r.workloadOn() || time.Now().Add(dur+modelCutMargin).After(r.deadline) {
			return
		}
		name := fmt.Sprintf("replica#%d@%d", r.faultSq.Add(1), time.Now().UnixMilli())
		if !r.replicaFault(name, time.Now().Add(time.Hour)) {
			return
		}
		r.rep.Cut()
		cut := time.Now()
		r.replicaCut(name, cut, time.Time{})
		r.stat("faults", 1)
		r.stat("fault: replica cut", 1)
		r.tracef("fault %s: replication link cut for %v", name, dur)
		r.pause(dur)
		r.replicaCut(name, cut, time.Now())
		ctx, cancel := context.WithTimeout(r.ctx, 15*time.Second)
		err := r.rep.Rejoin(ctx)
		cancel()
		if err != nil {
			r.infraErr("rejoining the replica: %v", err)
		}
		r.replicaFault(name, time.Now().Add(modelTaintAfter))
		r.tracef("fault %s off: replica in sync (%v)", name, err)
	}
}

// modelReplicaCuts is the hash in B of the replica faults' windows without acknowledgements:
// fault -> "<cut ms>|<rejoin start ms>" (0 while the link is cut).
const modelReplicaCuts = "replica:cuts"

// replicaCut records the window of replica fault name in B: from when its link was cut until the
// rejoin started (0: not yet), both read on the safe side (after Cut, before Rejoin): no
// acknowledgement of the replica reaches A within it.
func (r *modelRun) replicaCut(name string, cut, rejoin time.Time) {
	var end int64
	if !rejoin.IsZero() {
		end = rejoin.UnixMilli()
	}
	ctx, cancel := r.opCtx()
	defer cancel()
	if err := r.bdb.HSet(ctx, modelReplicaCuts, name, fmt.Sprintf("%d|%d", cut.UnixMilli(), end)).Err(); err != nil {
		r.infraErr("HSET %s: %v", modelReplicaCuts, err)
	}
}

// checkAckKept reports an acked watchdog hold (or permits: id, of name) whose context hctx is still
// live although a window without acknowledgements (see replicaCut) that began before its
// acquisition returned (at acquired) or while it ran lasted longer than its lease plus
// modelAckSlack: its last acknowledged write (the acquisition's, or a renewal's) was sent before the
// window, so the hold must have been lost a loss margin before that lease could lapse. (A hold
// acquired after a window may have been acknowledged after the rejoin: that window says nothing.)
func (r *modelRun) checkAckKept(id, name string, hctx context.Context, acquired time.Time) {
	ctx, cancel := r.opCtx()
	cuts, err := r.bdb.HGetAll(ctx, modelReplicaCuts).Result()
	cancel()
	now := time.Now()
	if err != nil {
		r.infraErr("HGETALL %s: %v", modelReplicaCuts, err)
		return
	}
	if hctx.Err() != nil {
		return
	}
	for fault, v := range cuts {
		a, b, _ := strings.Cut(v, "|")
		from, _ := strconv.ParseInt(a, 10, 64)
		to, _ := strconv.ParseInt(b, 10, 64)
		begin, end := time.UnixMilli(from), time.UnixMilli(to)
		if to == 0 || end.After(now) {
			end = now
		}
		if acquired.After(end) {
			continue
		}
		if end.Sub(begin) > modelWatchdog+modelAckSlack {
			r.violation(vAckKept, "%s: %s (acquired at %s) still held at %s, after %s without acknowledgements (%s: %s-%s)",
				name, id, acquired.Format("15:04:05.000"), now.Format("15:04:05.000"), end.Sub(begin).Round(time.Millisecond), fault,
				time.UnixMilli(from).Format("15:04:05.000"), time.UnixMilli(to).Format("15:04:05.000"))
			return
		}
	}
}

// checkAckGranted reports an acquisition (hold id, of name) of an acked Client called at start and
// returned with success at acquired, both within a window without acknowledgements (see
// replicaCut): it was sent after the link was cut, and no acknowledgement could reach A before it
// returned.
func (r *modelRun) checkAckGranted(id, name string, start, acquired time.Time) {
	ctx, cancel := r.opCtx()
	cuts, err := r.bdb.HGetAll(ctx, modelReplicaCuts).Result()
	cancel()
	if err != nil {
		r.infraErr("HGETALL %s: %v", modelReplicaCuts, err)
		return
	}
	for fault, v := range cuts {
		a, b, _ := strings.Cut(v, "|")
		from, _ := strconv.ParseInt(a, 10, 64)
		to, _ := strconv.ParseInt(b, 10, 64)
		if !start.Before(time.UnixMilli(from)) && (to == 0 || !acquired.After(time.UnixMilli(to))) {
			r.violation(vAckGranted, "%s: %s called at %s returned success at %s, within %s (%s-%s)", name, id,
				start.Format("15:04:05.000"), acquired.Format("15:04:05.000"), fault, time.UnixMilli(from).Format("15:04:05.000"),
				time.UnixMilli(to).Format("15:04:05.000"))
			return
		}
	}
}

// replicaFault records replica fault name in B as excusing until until.
func (r *modelRun) replicaFault(name string, until time.Time) bool {
	ctx, cancel := r.opCtx()
	defer cancel()
	if err := r.bdb.ZAdd(ctx, modelReplicaFaults, redis.Z{Score: float64(until.UnixMilli()), Member: name}).Err(); err != nil {
		r.infraErr("ZADD %s: %v", modelReplicaFaults, err)
		return false
	}
	return true
}

// excuseAckLost reports whether mh, or a part of it, was lost for want of replica acknowledgements
// (see ackLost).
func (r *modelRun) excuseAckLost(mh *modelHold) bool {
	if mh.parts == nil {
		return r.ackLost(mh.c, mh.h.Context(), mh.start)
	}
	for _, p := range mh.parts {
		if p.h != nil && r.ackLost(p.c, p.h.Context(), mh.start) {
			return true
		}
	}
	return false
}

// finalRefused counts a final-phase acquisition (called at start) that too few replicas
// acknowledged. It is not held, and not a violation: the replica's acknowledgement came later than
// the WAIT timeout, in a replica fault or, rarely, on a loaded machine without one.
func (r *modelRun) finalRefused(start time.Time) {
	if r.replicaFaulted(start) {
		r.stat("final refused (acks, replica fault)", 1)
	} else {
		r.stat("final refused (acks, no fault)", 1)
	}
}

// replicaFaulted reports whether a replica fault was on at or after from (or the question could not
// be answered).
func (r *modelRun) replicaFaulted(from time.Time) bool {
	ctx, cancel := r.opCtx()
	defer cancel()
	n, err := r.bdb.ZCount(ctx, modelReplicaFaults, strconv.FormatInt(from.UnixMilli(), 10), "+inf").Result()
	if err != nil {
		r.infraErr("ZCOUNT %s: %v", modelReplicaFaults, err)
		return true
	}
	return n > 0
}

// Protocol between the parent and the children (stdout lines).
const (
	modelLineViolation = modelPrefix + "VIOLATION " // kind TAB message
	modelLineInfra     = modelPrefix + "INFRA "     // message
	modelLineStats     = modelPrefix + "STATS "     // JSON {"stats": {...}}
	modelLineDone      = modelPrefix + "DONE"
)

var modelStdoutMu sync.Mutex

func modelPrintln(line string) {
	modelStdoutMu.Lock()
	defer modelStdoutMu.Unlock()
	fmt.Println(line)
}

// TestModelChild is not a test of its own: it is the body of TestModel's child processes, which
// re-execute this test binary with -test.run=^TestModelChild$ and GOREDISSON_MODEL_CHILD set to the
// child's process index. In a normal run the variable is absent and it returns at once.
func TestModelChild(t *testing.T) {
	idx := os.Getenv(modelChildEnv)
	if idx == "" {
		return
	}
	proc, err := strconv.Atoi(idx)
	if err != nil {
		t.Fatalf("%s=%q: %v", modelChildEnv, idx, err)
	}
	seed, err := strconv.ParseInt(os.Getenv("GOREDISSON_MODEL_SEED"), 10, 64)
	if err != nil {
		t.Fatalf("GOREDISSON_MODEL_SEED: %v", err)
	}
	dl, err := strconv.ParseInt(os.Getenv("GOREDISSON_MODEL_DEADLINE"), 10, 64)
	if err != nil {
		t.Fatalf("GOREDISSON_MODEL_DEADLINE: %v", err)
	}
	deadline := time.UnixMilli(dl)
	names := strings.Split(os.Getenv("GOREDISSON_MODEL_NAMES"), ",")
	syncNames := strings.Split(os.Getenv("GOREDISSON_MODEL_SYNC"), ",")
	faults, err := modelFaultSet(os.Getenv("GOREDISSON_MODEL_FAULTS"))
	if err != nil {
		t.Fatal(err)
	}

	// Abort (cancel every wait) if the run hangs well past its bound.
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(modelFinalWait+40*time.Second))
	defer cancel()
	r, err := newModelRun(ctx, proc, seed, deadline, names, os.Getenv("GOREDISSON_MODEL_A"), os.Getenv("GOREDISSON_MODEL_B"), modelChildClients)
	if err != nil {
		t.Fatalf("setting up: %v", err)
	}
	defer func() { // after a failure; a no-op after the normal end
		cancel()
		r.closeClients()
		r.close()
	}()
	r.setSyncNames(syncNames)
	r.setObjectNames(strings.Split(os.Getenv("GOREDISSON_MODEL_OBJECTS"), ","))
	r.emit = func(kind, msg string) { modelPrintln(modelLineViolation + kind + "\t" + msg) }
	r.faults = faults
	if err := r.openTrace(os.Getenv("GOREDISSON_MODEL_TRACE")); err != nil {
		t.Fatalf("trace: %v", err)
	}
	r.workload()
	r.closeClients()
	r.mu.Lock()
	stats, _ := json.Marshal(r.stats)
	infra := slices.Clone(r.infra)
	r.mu.Unlock()
	for _, msg := range infra {
		modelPrintln(modelLineInfra + strings.ReplaceAll(msg, "\n", " "))
	}
	modelPrintln(modelLineStats + string(stats))
	r.close()
	modelPrintln(modelLineDone)
}

// modelChild is a running child process.
type modelChild struct {
	idx    int
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited and its output is read
	err    error
	killed atomic.Bool
	sawEnd atomic.Bool // it printed MODEL-DONE

	mu  sync.Mutex
	out bytes.Buffer // output other than protocol lines
}

func (c *modelChild) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.out.String()
	if len(s) > 8<<10 {
		s = "..." + s[len(s)-8<<10:]
	}
	return s
}

type modelChildWriter struct{ c *modelChild }

func (w modelChildWriter) Write(b []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.out.Write(b)
}

// modelParent is the parent's bookkeeping of its children.
type modelParent struct {
	r    *modelRun
	env  []string
	mu   sync.Mutex
	kids []*modelChild
	// child results
	violations []string // "kind\tmessage", from every process
	childStats map[string]int64
}

func (pa *modelParent) addViolation(kind, msg string) {
	pa.mu.Lock()
	pa.violations = append(pa.violations, kind+"\t"+msg)
	pa.mu.Unlock()
}

// start starts child process idx.
func (pa *modelParent) start(idx int) (*modelChild, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, "-test.run=^TestModelChild$", "-test.count=1", "-test.timeout=3m")
	cmd.Env = append(os.Environ(), pa.env...)
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", modelChildEnv, idx))
	ch := &modelChild{idx: idx, cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = modelChildWriter{ch}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pa.mu.Lock()
	pa.kids = append(pa.kids, ch)
	pa.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			pa.line(ch, sc.Text())
		}
		ch.err = cmd.Wait()
		close(ch.done)
	}()
	return ch, nil
}

// line handles one line of a child's stdout.
func (pa *modelParent) line(ch *modelChild, line string) {
	switch {
	case strings.HasPrefix(line, modelLineViolation):
		kind, msg, _ := strings.Cut(strings.TrimPrefix(line, modelLineViolation), "\t")
		pa.r.mu.Lock()
		pa.r.violations[kind]++
		pa.r.mu.Unlock()
		pa.addViolation(kind, msg)
	case strings.HasPrefix(line, modelLineInfra):
		pa.r.mu.Lock()
		pa.r.infra = append(pa.r.infra, strings.TrimPrefix(line, modelLineInfra))
		pa.r.mu.Unlock()
	case strings.HasPrefix(line, modelLineStats):
		var st map[string]int64
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, modelLineStats)), &st); err == nil {
			pa.mu.Lock()
			for k, v := range st {
				pa.childStats[k] += v
			}
			pa.mu.Unlock()
		}
	case line == modelLineDone:
		ch.sawEnd.Store(true)
	default:
		_, _ = modelChildWriter{ch}.Write([]byte(line + "\n"))
	}
}

// killAndReplace SIGKILLs child victim, waits for it and for its connections to B to go, deletes
// its critical-section entries (its locks stay in A until their leases end), and starts child idx.
func (pa *modelParent) killAndReplace(victim *modelChild, idx int) {
	r := pa.r
	victim.killed.Store(true)
	_ = victim.cmd.Process.Kill()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case <-victim.done:
	case <-timer.C:
		r.infraErr("killed child %d did not exit within 10s", victim.idx)
		return
	}
	exited := time.Now()
	// Every command the child sent to B was processed once B has dropped its connections.
	ctx, cancel := r.opCtx()
	defer cancel()
	for {
		list, err := r.bdb.ClientList(ctx).Result()
		if err != nil {
			r.infraErr("CLIENT LIST: %v", err)
			return
		}
		if !strings.Contains(list, " name="+modelBName(victim.idx)+" ") {
			break
		}
		r.pause(5 * time.Millisecond)
		if ctx.Err() != nil {
			r.infraErr("B still lists connections of killed child %d", victim.idx)
			return
		}
	}
	purged := 0
	for _, name := range r.csNames {
		n, err := modelCSLeave.Run(ctx, r.bdb, []string{"cs:" + name, "csr:" + name}, 1, victim.idx).Int()
		if err != nil {
			r.infraErr("purging cs:%s: %v", name, err)
		}
		purged += n
	}
	r.purgeSync(ctx, victim.idx)
	r.tracef("killed child %d (exited %v ago), purged %d critical-section entries", victim.idx, time.Since(exited), purged)
	r.stat("children killed", 1)
	if _, err := pa.start(idx); err != nil {
		r.infraErr("starting replacement child %d: %v", idx, err)
	}
}

// checker reads the lock keys in A every ~100ms: a lock held by an owner whose last Unlock returned
// more than its lease (plus slack) ago is a violation; a ReadWriteLock's hash must also decode
// consistently (checkRWHash).
func (r *modelRun) checker(stop <-chan struct{}) {
	reported := map[string]bool{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
		r.checkSyncRunning(reported)
		for _, name := range r.keyNames {
			before := time.Now()
			if kindOf(name) == "ReadWriteLock" {
				for _, h := range r.checkRWHash(name, reported) {
					r.checkFinished(name, h.owner, h.levels, h.field+"="+h.value, before, reported)
				}
				continue
			}
			ctx, cancel := r.opCtx()
			v, err := r.admin.Get(ctx, r.drv.Key(name)).Result()
			cancel()
			if err != nil {
				continue
			}
			owner, n, ok := r.drv.Decode(v)
			if !ok {
				continue
			}
			r.checkFinished(name, owner, n, v, before, reported)
		}
	}
}

// checkFinished reports owner, found holding lock name (value v) at before, if its last Unlock
// returned more than its lease (plus slack) ago, and recovers the lock.
func (r *modelRun) checkFinished(name, owner string, n int, v string, before time.Time, reported map[string]bool) {
	if reported[owner] {
		return
	}
	ctx, cancel := r.opCtx()
	fin, err := r.bdb.Get(ctx, "fin:"+owner).Result()
	cancel()
	if err != nil {
		return
	}
	f := strings.Split(fin, "|")
	if len(f) != 4 {
		return
	}
	at, _ := strconv.ParseInt(f[0], 10, 64)
	leaseMs, _ := strconv.ParseInt(f[1], 10, 64)
	last, lease := time.UnixMilli(at), time.Duration(leaseMs)*time.Millisecond
	limit := last.Add(lease + modelRenewSlack)
	if !before.After(limit) {
		return
	}
	// A renewal sent before the last Unlock may have been held up by a blackhole or delay of one of
	// the hold's Clients and re-sent after it: allow for that.
	if before.Before(limit.Add(modelTaintedRenewSlack)) {
		for _, c := range strings.Split(f[3], ",") {
			ctx, cancel = r.opCtx()
			faults, err := r.bdb.ZCount(ctx, "faults:"+c, strconv.FormatInt(last.Add(-lease).UnixMilli(), 10), "+inf").Result()
			cancel()
			if err != nil || faults > 0 {
				return
			}
		}
	}
	reported[owner] = true
	r.violation(vRenewed, "%s: held by %s (count %d, hold %s) %v after its last Unlock returned (lease %v)",
		name, owner, n, f[2], before.Sub(last).Round(time.Millisecond), lease)
	r.recoverStuck(name, v)
}

// modelRWRead reads a ReadWriteLock's hash KEYS[1] as it is now: {server time ms, type, PTTL ms,
// fields and values}. The PTTL is the key's absolute expiry time (PEXPIRETIME) less the time read:
// a PTTL read later than TIME (the script preempted in between on a loaded machine) would make the
// key look as if it expired earlier than it does.
var modelRWRead = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local typ = redis.call('TYPE', KEYS[1]).ok
if typ ~= 'hash' then
  return {now, typ, -2, {}}
end
local pttl = redis.call('PEXPIRETIME', KEYS[1])
if pttl >= 0 then
  pttl = math.max(pttl - now, 0)
end
return {now, typ, pttl, redis.call('HGETALL', KEYS[1])}
`)

// modelRWHolder is a live holder found in a ReadWriteLock's hash.
type modelRWHolder struct {
	field, value, owner string
	levels              int
}

// checkRWHash reads ReadWriteLock name's hash and checks that it decodes (rw_value.lua's format),
// that its TTL covers the time of every field (else holders or waiters would vanish before their
// time) and that no hold's time lies further ahead than the longest lease the workload gives. It
// returns the holders whose time has not passed.
func (r *modelRun) checkRWHash(name string, reported map[string]bool) []modelRWHolder {
	ctx, cancel := r.opCtx()
	res, err := modelRWRead.Run(ctx, r.admin, []string{r.drv.Key(name)}).Slice()
	cancel()
	if err != nil || len(res) != 4 {
		return nil
	}
	now, _ := res[0].(int64)
	typ, _ := res[1].(string)
	pttl, _ := res[2].(int64)
	flat, _ := res[3].([]any)
	if typ == "none" {
		return nil
	}
	bad := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if reported["rw:"+msg] {
			return
		}
		reported["rw:"+msg] = true
		r.violation(vRWState, "%s: %s (hash %v, PTTL %dms)", name, msg, flat, pttl)
	}
	if typ != "hash" {
		bad("the key is a %s", typ)
		return nil
	}
	if pttl < 0 {
		bad("the hash has no TTL")
	}
	maxLease := max(modelMaxLease, modelWatchdog).Milliseconds() + 200 // server time vs the lease's start
	var holders []modelRWHolder
	counters := map[string]int64{}
	var nr, nww, wwd int64 // r: and ww: fields, lapsed ones included, and the latest ww: deadline
	checkTime := func(field string, at int64, limit int64) bool {
		if at > now && pttl >= 0 && at-now > pttl+5 {
			bad("field %s lasts until %dms from now, past the key's TTL", field, at-now)
		}
		if at-now > limit {
			bad("field %s lasts %dms from now, longer than any lease or waiter timeout given", field, at-now)
		}
		return at > now
	}
	for i := 0; i+1 < len(flat); i += 2 {
		field, _ := flat[i].(string)
		value, _ := flat[i+1].(string)
		switch {
		case field == "w":
			f := strings.Split(value, "|")
			if len(f) != 3 || f[0] == "" || !modelLevelsOK(f[1]) {
				bad("bad writer field %q", value)
				continue
			}
			at, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				bad("bad writer field %q", value)
				continue
			}
			if checkTime(field, at, maxLease) {
				holders = append(holders, modelRWHolder{field, value, f[0], modelLevelCount(f[1])})
			}
		case strings.HasPrefix(field, "r:"):
			nr++
			f := strings.Split(value, "|")
			if len(f) != 2 || len(field) == 2 || !modelLevelsOK(f[0]) {
				bad("bad reader field %s = %q", field, value)
				continue
			}
			at, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				bad("bad reader field %s = %q", field, value)
				continue
			}
			if checkTime(field, at, maxLease) {
				holders = append(holders, modelRWHolder{field, value, field[2:], modelLevelCount(f[0])})
			}
		case strings.HasPrefix(field, "ww:") || strings.HasPrefix(field, "wr:"):
			if strings.HasPrefix(field, "ww:") {
				nww++
			}
			f := strings.Split(value, "|") // ticket|timeout|deadline
			if len(f) != 3 {
				bad("bad waiter field %s = %q", field, value)
				continue
			}
			_, err1 := strconv.ParseInt(f[0], 10, 64)
			at, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				bad("bad waiter field %s = %q", field, value)
				continue
			}
			if strings.HasPrefix(field, "ww:") {
				wwd = max(wwd, at)
			}
			checkTime(field, at, modelWatchdog.Milliseconds()+200) // the waiter timeout
		case field == "seq" || field == "nr" || field == "nww" || field == "wwd":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				bad("bad %s %q", field, value)
			}
			counters[field] = n
		default:
			bad("unknown field %s = %q", field, value)
		}
	}
	if _, ok := counters["wwd"]; !ok || counters["nr"] != nr || counters["nww"] != nww || counters["wwd"] != wwd {
		bad("counters nr=%d nww=%d wwd=%d (present: %v), but %d reader and %d waiting writer fields, latest deadline %d",
			counters["nr"], counters["nww"], counters["wwd"], ok, nr, nww, wwd)
	}
	return holders
}

// modelLevelsOK reports whether levels is a list of level ids (rw_value.lua).
func modelLevelsOK(levels string) bool {
	if levels == "" {
		return true // a partial release took the last level; the final release removes the field
	}
	for _, id := range strings.Split(levels, ",") {
		if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
			return false
		}
	}
	return true
}

func modelLevelCount(levels string) int {
	if levels == "" {
		return 0
	}
	return len(strings.Split(levels, ","))
}

// pubsubKiller kills the pub/sub connections to A about every second.
func (r *modelRun) pubsubKiller(stop <-chan struct{}) {
	rng := r.rng(0xFFFF, 1)
	for {
		t := time.NewTimer(modelBetween(rng, 800*time.Millisecond, 1200*time.Millisecond))
		select {
		case <-stop:
			t.Stop()
			return
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if !r.workloadOn() {
			return
		}
		ctx, cancel := r.opCtx()
		n, err := r.admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
		cancel()
		if err != nil {
			r.infraErr("CLIENT KILL TYPE pubsub: %v", err)
			continue
		}
		r.stat("pubsub kills", n)
		r.tracef("killed %d pub/sub connections", n)
	}
}

func TestModel(t *testing.T) {
	long(t)
	if os.Getenv(modelChildEnv) != "" {
		t.Skip("child process")
	}
	if testing.Short() {
		t.Skip("runs for -model.duration (20s by default)")
	}
	seed := *modelSeedFlag
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	fmt.Printf("model: seed=%d (replay with -model.seed=%d)\n", seed, seed)
	t.Logf("seed=%d (replay with -model.seed=%d)", seed, seed)
	begin := time.Now()
	duration := *modelDurationFlag
	children := *modelChildrenFlag
	faults, err := modelFaultSet(*modelFaultsFlag)
	if err != nil {
		t.Fatalf("-model.faults: %v", err)
	}

	// A has a replica (for the acked Clients), whose link the replica fault cuts.
	rep := redistest.StartReplicated(t)
	srvA := rep.Master
	srvB := redistest.Start(t)
	tag := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	// One name of each kind (the driver tells the kind from the name): the busiest a Lock.
	var names []string
	for i, kind := range []string{"lock", "fair", "fenced", "spin", "rwlock", "multilock", "redlock"}[:modelNameCount] {
		names = append(names, fmt.Sprintf("model-%s-%s-%d", tag, kind, i))
	}
	// The acked Clients' probe (see probeSpec), a ReadWriteLock of its own.
	names = append(names, fmt.Sprintf("model-%s-rwlock-probe-%d", tag, modelNameCount))
	deadline := time.Now().Add(duration)
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(modelFinalWait+30*time.Second))
	defer cancel()

	r, err := newModelRun(ctx, 0, seed, deadline, names, srvA.Addr(), srvB.Addr(), modelParentClients)
	if err != nil {
		t.Fatalf("setting up: %v", err)
	}
	t.Cleanup(func() { // after a failure; a no-op after the normal end
		cancel()
		r.closeClients()
		r.close()
	})
	syncNames := modelSyncNames(tag)
	r.setSyncNames(syncNames)
	if err := r.setupSync(); err != nil {
		t.Fatalf("setting up: %v", err)
	}
	objNames := modelObjectNames(tag)
	r.setObjectNames(objNames)
	if err := r.setupObjects(); err != nil {
		t.Fatalf("setting up: %v", err)
	}
	pa := &modelParent{r: r, childStats: map[string]int64{}}
	r.emit = pa.addViolation
	r.faults = faults
	r.rep = rep
	if err := r.openTrace(*modelTraceFlag); err != nil {
		t.Fatalf("trace: %v", err)
	}
	pa.env = []string{
		"GOREDISSON_MODEL_SEED=" + strconv.FormatInt(seed, 10),
		"GOREDISSON_MODEL_DEADLINE=" + strconv.FormatInt(deadline.UnixMilli(), 10),
		"GOREDISSON_MODEL_NAMES=" + strings.Join(names, ","),
		"GOREDISSON_MODEL_SYNC=" + strings.Join(syncNames, ","),
		"GOREDISSON_MODEL_OBJECTS=" + strings.Join(objNames, ","),
		"GOREDISSON_MODEL_A=" + srvA.Addr(),
		"GOREDISSON_MODEL_B=" + srvB.Addr(),
		"GOREDISSON_MODEL_TRACE=" + *modelTraceFlag,
		"GOREDISSON_MODEL_FAULTS=" + *modelFaultsFlag,
	}
	for i := 1; i <= children; i++ {
		if _, err := pa.start(i); err != nil {
			t.Fatalf("starting child %d: %v", i, err)
		}
	}
	// Whatever happens, no child outlives the test.
	defer func() {
		pa.mu.Lock()
		kids := slices.Clone(pa.kids)
		pa.mu.Unlock()
		for _, ch := range kids {
			select {
			case <-ch.done:
			default:
				ch.killed.Store(true)
				_ = ch.cmd.Process.Kill()
				<-ch.done
			}
		}
	}()

	var bg sync.WaitGroup
	stop := make(chan struct{})
	bg.Add(1)
	go func() {
		defer bg.Done()
		r.checker(stop)
	}()
	if faults["pubsub"] {
		bg.Add(1)
		go func() {
			defer bg.Done()
			r.pubsubKiller(stop)
		}()
	}
	if children > 0 && faults["kill"] {
		// Once during the run, kill a child and start a replacement.
		rng := r.rng(0xFFFF, 2)
		killAt := time.Now().Add(time.Duration(float64(duration) * (0.3 + 0.3*rng.Float64())))
		bg.Add(1)
		go func() {
			defer bg.Done()
			timer := time.NewTimer(time.Until(killAt))
			defer timer.Stop()
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			pa.mu.Lock()
			victim := pa.kids[0]
			pa.mu.Unlock()
			pa.killAndReplace(victim, children+1)
		}()
	}

	r.workload()
	r.closeClients()

	// Wait for the children (they end their own final phase and close their Clients).
	pa.mu.Lock()
	kids := slices.Clone(pa.kids)
	pa.mu.Unlock()
	childLimit := time.NewTimer(time.Until(deadline.Add(modelFinalWait + 25*time.Second)))
	for _, ch := range kids {
		select {
		case <-ch.done:
		case <-childLimit.C:
			t.Errorf("model (seed=%d): child %d did not finish in time; output:\n%s", seed, ch.idx, ch.output())
			ch.killed.Store(true)
			_ = ch.cmd.Process.Kill()
			<-ch.done
		}
	}
	childLimit.Stop()
	close(stop)
	bg.Wait()
	// The replacement child may have been started while we waited: wait for it too.
	pa.mu.Lock()
	kids = slices.Clone(pa.kids)
	pa.mu.Unlock()
	for _, ch := range kids {
		<-ch.done
		if !ch.killed.Load() && (ch.err != nil || !ch.sawEnd.Load()) {
			t.Errorf("model (seed=%d): child %d failed (%v); output:\n%s", seed, ch.idx, ch.err, ch.output())
		}
	}

	r.checkSyncEnd()
	r.checkObjectsEnd()
	r.checkLeftovers()
	r.close()

	// Report.
	pa.mu.Lock()
	violations := slices.Clone(pa.violations)
	stats := maps.Clone(pa.childStats)
	pa.mu.Unlock()
	r.mu.Lock()
	for k, v := range r.stats {
		stats[k] += v
	}
	byKind := maps.Clone(r.violations)
	infra := slices.Clone(r.infra)
	r.mu.Unlock()
	const maxShown = 8 // per kind
	shown := map[string]int{}
	for _, v := range violations {
		kind, msg, _ := strings.Cut(v, "\t")
		if shown[kind]++; shown[kind] <= maxShown {
			t.Errorf("model (seed=%d): VIOLATION %s: %s", seed, kind, msg)
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(shown)) {
		if n := shown[kind]; n > maxShown {
			t.Errorf("model (seed=%d): ... and %d more %q violations", seed, n-maxShown, kind)
		}
	}
	for _, msg := range infra {
		t.Errorf("model (seed=%d): test infrastructure: %s", seed, msg)
	}
	if duration >= 10*time.Second {
		// Every run drives the replica-acknowledged mode: a ReadWriteLock's both sides and
		// watchdog-renewed permits held with a context (AcquireHeld), through the acked Clients.
		for _, k := range []string{"acked acquired ReadWriteLock", "acked acquired ReadWriteLock(read)", "psem held acquired (watchdog)"} {
			if stats[k] == 0 {
				t.Errorf("model (seed=%d): the workload never drove %q", seed, k)
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "model: seed=%d driver=%q duration=%v children=%d faults=%s elapsed=%v ops:", seed, r.drv.Name(), duration, children, *modelFaultsFlag,
		time.Since(begin).Round(100*time.Millisecond))
	for _, k := range slices.Sorted(maps.Keys(stats)) {
		fmt.Fprintf(&sb, " %s=%d", strings.ReplaceAll(k, " ", "_"), stats[k])
	}
	sb.WriteString(" violations:")
	if len(byKind) == 0 {
		sb.WriteString(" none")
	}
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		fmt.Fprintf(&sb, " %q=%d", k, byKind[k])
	}
	fmt.Println(sb.String())
	t.Log(sb.String())
}

// checkLeftovers waits (bounded) until A holds no lock keys, then checks that what is left is
// bookkeeping with a TTL.
func (r *modelRun) checkLeftovers() {
	limit := time.Now().Add(2*modelMaxLease + 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*modelMaxLease+2*time.Second+modelOpTimeout)
	defer cancel()
	var left []string
	for {
		keys, err := r.admin.Keys(ctx, "*").Result()
		if err != nil {
			r.infraErr("KEYS: %v", err)
			return
		}
		left = left[:0]
		for _, k := range keys {
			if redisson.IsProcessRecordKey(k) {
				continue // Close deletes it, or it expires (30s) if the fault proxy lost the DEL
			}
			if ok, _ := r.syncLeftover(k); !r.drv.Leftover(k) && !ok {
				left = append(left, k)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(limit) {
			for _, k := range left {
				r.violation(vLeft, "%s still there %v after every Client was closed", r.describeKey(ctx, k), 2*modelMaxLease+2*time.Second)
			}
			break
		}
		time.Sleep(50 * time.Millisecond) // polling for expiry
	}
	keys, err := r.admin.Keys(ctx, "*").Result()
	if err != nil {
		r.infraErr("KEYS: %v", err)
		return
	}
	for _, k := range keys {
		sync, noTTL := r.syncLeftover(k)
		if noTTL || (!r.drv.Leftover(k) && !sync) {
			continue // a semaphore's permits stay for good, by design
		}
		// A FencedLock's counter stays for good, by design (its tokens must never go back).
		if strings.HasSuffix(k, ":~fence") {
			continue
		}
		if pttl, err := r.admin.PTTL(ctx, k).Result(); err == nil && pttl < 0 && pttl != -2*time.Nanosecond {
			r.violation(vLeft, "%s has no TTL (PTTL %v)", k, pttl)
		}
	}
}
