package redisson_test

// The synchronizers of TestModel beside its locks: a Semaphore, a PermitExpirableSemaphore and a
// CountDownLatch, each under its own name, taken by the same teams (in every process, through the
// same faulted Clients) and checked against the model in B.
//
// Semaphore (plain permits, no lease, no owner):
//   - too many inside: entering the critical section is an atomic check-and-set in B (hash
//     semin:<name>, hold id -> "<proc>|<hold>|<n>|<expiry>|<clients>|<since>"); the permits of the
//     holders inside plus the newcomer's must not exceed the permits set at the start
//     (modelPermits, TrySetPermits). Plain permits never lapse: nothing is excused;
//   - permits count: at the end, with every Client closed, the permits available must lie in
//     [modelPermits - unknown - killed, modelPermits], where (all kept in B, so that every process
//     adds to them):
//       semout:<name>:<proc>  permits process proc may hold: added before each acquisition, taken
//                             off when it failed cleanly or its Release returned; a killed
//                             process's count moves to semkill:<name> (no lease brings them back);
//       semunk:<name>         permits whose fate is unknown: a Release that failed (it may or may not
//                             have happened; it is not retried, as a retry is a new request and could
//                             release twice), and an acquisition that failed while the library logged
//                             that it could not give back what the attempt may have taken.
//     Without unknown outcomes and kills the check is exact. More than modelPermits is a double
//     release (or a copy of a release applied twice) whatever the faults; the checker also reads the
//     permits every ~100ms and reports any count above modelPermits at once;
//   - waiters: at the end the waiters hash {name}:~sw holds nothing but "seq".
//
// PermitExpirableSemaphore (leased permits with ids):
//   - too many inside, as above, but a holder whose fixed lease may have ended, or whose Client had a
//     blackhole or delay during the hold (a watchdog renewal may have been held up past the lease),
//     is excused and dropped from the critical section;
//   - permits conserved: at every checker tick, atomically, the permits STRING plus the leased permits
//     (ZSET {name}:~sl) must equal modelPermits (every script moves permits between the two);
//   - release misreported: a Release of permits whose lease cannot have ended (watchdog, no taint)
//     must not answer ErrNotHeld. A Release that failed otherwise is retried with the same ids (a
//     release by id is idempotent: a retry after one that happened answers ErrNotHeld);
//   - at the end, once the leases of the killed process's permits have passed, AvailablePermits is
//     exactly modelPermits, and no waiter is left.
//
// The replica-acknowledged Clients (see model_test.go) take leased permits with AcquireHeld (most
// of them watchdog-renewed, some held for 1.5-4s), of this semaphore and of a second
// PermitExpirableSemaphore (the probe, modelPermits permits) that only they use, taking one or two
// watchdog-renewed permits for 4s (psemProbe), checked as the first: their holder works until the
// permits' context ends, and leaves the critical section as soon as it does. A holder whose permits were
// lost is excused for "too many inside" only if its context was cancelled before the newcomer's
// acquisition returned (see lostBefore), and for a Release answering ErrNotHeld if the Client
// declared them lost itself (not found gone in Redis): it gives lost permits back. A Release (of either semaphore)
// answering ErrNotReplicated happened on the master: it counts as released.
//
// CountDownLatch: a coordinator in the parent runs rounds: it sets a count k (TrySetCount), then
// counts down k times (more if a count-down's outcome was unknown, until Count is 0), leaves the latch
// at zero for a while, and sets it again. Before each count-down it records the count-down as started
// in B (hash latch: round, k, started, zero, unk). Teams of every process Wait on an armed round:
//   - released early: a Wait that returned nil while B still shows its round with fewer count-downs
//     started than the round's count (a count-down reaching zero in A is always recorded as started
//     before); rounds next to one with an unknown outcome (TrySetCount or CountDown that failed:
//     a late copy could land in the next round) are not judged;
//   - waiter stuck: a Wait that timed out although its round had been at zero (the coordinator read
//     Count 0) for over a second (plus the blackholes of its Client) and still was;
//   - at the end the latch is counted down to zero and its key gone.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/renew"
)

const (
	modelPermits      = 3
	modelLatchTimeout = 4 * time.Second // a latch waiter's bound
	modelLatchStuck   = time.Second     // a waiter must see a zero that lasted this long
)

// Violation kinds of the synchronizers.
const (
	vSemInside  = "too many permits inside"
	vSemCount   = "semaphore permits count"
	vSemRelease = "permit release misreported"
	vLatchEarly = "latch released early"
)

// modelSemEnter enters a semaphore's critical section (see model_sync_test.go's header).
//
// KEYS[1] semin:<name>; ARGV[1] the hold id; ARGV[2] its entry; ARGV[3] the permits; ARGV[4] "1" if
// holders may be excused (leased permits). Returns {verdict, permits of the others inside, them}.
var modelSemEnter = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = tonumber(string.match(ARGV[2], '^[^|]*|[^|]*|([^|]*)|'))
local total, others = 0, {}
local rs = redis.call('HGETALL', KEYS[1])
for i = 1, #rs, 2 do
  local _, _, m, expiry, clients, since = string.match(rs[i + 1], '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  local excused = false
  if ARGV[4] == '1' then
    if tonumber(expiry) > 0 and now >= tonumber(expiry) then
      excused = true
    end
    for c in string.gmatch(clients, '[^,]+') do
      if not excused and redis.call('ZCOUNT', 'faults:' .. c, since, '+inf') > 0 then
        excused = true
      end
    end
  end
  if excused then
    redis.call('HDEL', KEYS[1], rs[i])
  else
    total = total + tonumber(m)
    others[#others + 1] = rs[i + 1]
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if total + n > tonumber(ARGV[3]) then
  return {'violation', total, table.concat(others, ' ; ')}
end
return {'ok', total, ''}
`)

// modelSemPurge deletes the entries of process ARGV[1] from hash KEYS[1]; returns how many.
var modelSemPurge = redis.NewScript(`
local n = 0
local rs = redis.call('HGETALL', KEYS[1])
for i = 1, #rs, 2 do
  if string.match(rs[i + 1], '^([^|]*)|') == ARGV[1] then
    redis.call('HDEL', KEYS[1], rs[i])
    n = n + 1
  end
end
return n
`)

// modelSemRead reads a semaphore in A atomically: {permits STRING or "", leased permits}.
var modelSemRead = redis.NewScript(`
return {redis.call('GET', KEYS[1]) or '', redis.call('ZCARD', KEYS[2])}
`)

// modelWarnCounter is the Clients' logger: it counts the warnings that a semaphore acquisition could
// not give back what it may have taken, per semaphore name.
type modelWarnCounter struct{ r *modelRun }

func (h modelWarnCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h modelWarnCounter) Handle(_ context.Context, rec slog.Record) error {
	if !strings.Contains(rec.Message, "could not give back") {
		return nil
	}
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "name" { // Client.cleanupFailed's attribute: the object's name
			h.r.mu.Lock()
			h.r.giveBackFailed[a.Value.String()]++
			h.r.mu.Unlock()
		}
		return true
	})
	return nil
}

func (h modelWarnCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h modelWarnCounter) WithGroup(string) slog.Handler      { return h }

func (r *modelRun) giveBacksFailed(name string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.giveBackFailed[name]
}

// modelSyncNames returns the names of the synchronizers of a run whose lock names are names: a
// Semaphore, a PermitExpirableSemaphore, a CountDownLatch and the acked Clients' probe
// PermitExpirableSemaphore (see psemProbe).
func modelSyncNames(tag string) []string {
	return []string{fmt.Sprintf("model-%s-sem-7", tag), fmt.Sprintf("model-%s-psem-8", tag), fmt.Sprintf("model-%s-latch-9", tag),
		fmt.Sprintf("model-%s-psem-probe-16", tag)}
}

func (r *modelRun) setSyncNames(names []string) {
	if len(names) == 4 {
		r.semName, r.psemName, r.latchName, r.psemProbeName = names[0], names[1], names[2], names[3]
	}
}

// leasedNames returns the names of the PermitExpirableSemaphores: the workload's and the probe's.
func (r *modelRun) leasedNames() []string { return []string{r.psemName, r.psemProbeName} }

// bInt runs a command on B returning an integer, reporting an error of B's.
func (r *modelRun) bInt(what string, f func(ctx context.Context) *redis.IntCmd) int64 {
	ctx, cancel := r.opCtx()
	defer cancel()
	v, err := f(ctx).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		r.infraErr("%s: %v", what, err)
	}
	return v
}

// semLeakBound is how many permits of the plain Semaphore may be gone for good: unknown outcomes and
// those of killed processes.
func (r *modelRun) semLeakBound() int64 {
	ctx, cancel := r.opCtx()
	defer cancel()
	vs, err := r.bdb.MGet(ctx, "semunk:"+r.semName, "semkill:"+r.semName).Result()
	if err != nil {
		r.infraErr("MGET semunk: %v", err)
		return modelPermits
	}
	var sum int64
	for _, v := range vs {
		if s, ok := v.(string); ok {
			n, _ := strconv.ParseInt(s, 10, 64)
			sum += n
		}
	}
	return sum
}

// semEnter enters a semaphore's critical section with n permits; leased: excuses allowed.
func (r *modelRun) semEnter(name, id string, c *modelClient, n int64, expiry, since time.Time, leased bool) {
	var exp int64
	if !expiry.IsZero() {
		exp = expiry.UnixMilli()
	}
	entry := fmt.Sprintf("%d|%s|%d|%d|%s|%d", r.proc, id, n, exp, c.key, since.Add(-modelTaintBefore).UnixMilli())
	excuse := "0"
	if leased {
		excuse = "1"
	}
	ctx, cancel := r.opCtx()
	defer cancel()
	res, err := modelSemEnter.Run(ctx, r.bdb, []string{"semin:" + name}, id, entry, modelPermits, excuse).Slice()
	if err != nil || len(res) != 3 {
		r.infraErr("entering semin:%s: %v %v", name, res, err)
		return
	}
	r.tracef("%s sem enter %s n=%d: %v (others %v: %v)", id, name, n, res[0], res[1], res[2])
	if res[0] == csViolation && !(leased && r.semLostBefore(name, id, n, res[2], since)) {
		r.violation(vSemInside, "%s: %s (%d permits, client %s) entered while permits %v were inside (%v); permits set: %d",
			name, id, n, c.key, res[1], res[2], modelPermits)
	}
}

// semLostBefore reports whether the holders inside (others, the entries modelSemEnter found) whose
// permits were lost for want of replica acknowledgements before this acquisition (hold id, n permits)
// returned at acquired explain its finding too many permits inside; it drops their entries.
func (r *modelRun) semLostBefore(name, id string, n int64, others any, acquired time.Time) bool {
	list, _ := others.(string)
	total := int64(0)
	var lost []string
	for _, e := range strings.Split(list, " ; ") {
		f := strings.Split(e, "|")
		if len(f) != 6 {
			continue
		}
		m, _ := strconv.ParseInt(f[2], 10, 64)
		total += m
		if r.lostBefore(f[1], name, acquired) {
			total -= m
			lost = append(lost, f[1])
		}
	}
	if len(lost) == 0 || total+n > modelPermits {
		return false
	}
	r.stat("psem overtaken (lost for acks)", 1)
	r.tracef("%s sem enter %s: %v were lost for acks before, dropped", id, name, lost)
	ctx, cancel := r.opCtx()
	defer cancel()
	if err := r.bdb.HDel(ctx, "semin:"+name, lost...).Err(); err != nil {
		r.infraErr("HDEL semin:%s: %v", name, err)
	}
	return true
}

func (r *modelRun) semLeave(name, id string) {
	ctx, cancel := r.opCtx()
	defer cancel()
	if err := r.bdb.HDel(ctx, "semin:"+name, id).Err(); err != nil {
		r.infraErr("leaving semin:%s: %v", name, err)
	}
}

// syncSession runs one session of a synchronizer, drawn with probability p (out of 100) by runTeam;
// it returns false if p leaves the session to the locks.
func (r *modelRun) syncSession(c *modelClient, team int, rng *rand.Rand, p int) bool {
	if r.semName == "" {
		return false
	}
	switch {
	case p < 7:
		r.semSession(c, team, rng, false)
	case p < 11:
		r.psemSession(c, team, rng, false)
	case p < 15:
		r.latchWait(c, team, rng)
	default:
		return false
	}
	return true
}

// semSpec draws the permits, wait and work of a semaphore session.
func semSpec(rng *rand.Rand, final bool) (n int64, wait, work time.Duration) {
	n = 1 + rng.Int64N(modelPermits)
	switch p := rng.IntN(100); {
	case final:
		n, wait = 1, modelFinalWait
	case p < 15:
		wait = 0
	case p < 35: // likely to end while the permits come in
		wait = modelBetween(rng, 5*time.Millisecond, 30*time.Millisecond)
	default:
		wait = modelBetween(rng, 50*time.Millisecond, 1500*time.Millisecond)
	}
	return n, wait, modelBetween(rng, 5*time.Millisecond, 80*time.Millisecond) // long enough to overlap
}

// stuckCheck reports an acquisition of name through c that returned later than its wait allows.
func (r *modelRun) stuckCheck(c *modelClient, id, name string, wait time.Duration, start, end time.Time, err error) {
	if took := end.Sub(start); took > wait+modelWaitSlack+c.blackholeCost(start, end) {
		r.violation(vStuck, "%s: TryAcquire(%s, wait %v) returned after %v (err %v)", id, name, wait, took, err)
	}
}

// semSession takes permits of the plain Semaphore, enters, works, leaves and releases them.
func (r *modelRun) semSession(c *modelClient, team int, rng *rand.Rand, final bool) {
	name := r.semName
	id := fmt.Sprintf("p%dc%dt%d#%d", r.proc, c.idx, team, r.holdSeq.Add(1))
	n, wait, work := semSpec(rng, final)
	if final && r.semLeakBound() >= modelPermits-n+1 {
		return // the permits may all be gone (killed holders, unknown outcomes)
	}
	out := "semout:" + name + ":" + strconv.Itoa(r.proc)
	r.bInt("INCRBY "+out, func(ctx context.Context) *redis.IntCmd { return r.bdb.IncrBy(ctx, out, n) })
	warned := r.giveBacksFailed(name)
	sem := c.rc.Semaphore(name)
	start := time.Now()
	ok, err := sem.TryAcquire(r.ctx, n, redisson.WithWait(wait))
	end := time.Now()
	r.stuckCheck(c, id, name, wait, start, end, err)
	r.tracef("%s sem acquire %s n=%d wait=%v: %v %v", id, name, n, wait, ok, err)
	if !ok {
		r.stat("sem not obtained", 1)
		if err != nil && r.giveBacksFailed(name) != warned {
			// The attempt may have taken them and the library could not give them back.
			r.stat("sem unknown outcome", 1)
			r.bInt("INCRBY semunk", func(ctx context.Context) *redis.IntCmd { return r.bdb.IncrBy(ctx, "semunk:"+name, n) })
		}
		r.bInt("DECRBY "+out, func(ctx context.Context) *redis.IntCmd { return r.bdb.DecrBy(ctx, out, n) })
		if final && errors.Is(err, redisson.ErrNotReplicated) {
			r.finalRefused(start) // given back, not held
		} else if final && r.semLeakBound() < modelPermits-n+1 {
			r.violation(vNeverServed, "%s: TryAcquire(%s, %d) with faults off and a %v wait: %v %v", id, name, n, wait, ok, err)
		}
		return
	}
	r.stat("sem acquired", 1)
	r.semEnter(name, id, c, n, time.Time{}, end, false)
	r.pause(work)
	r.semLeave(name, id)
	err = sem.Release(r.ctx, n)
	r.tracef("%s sem release %s n=%d: %v", id, name, n, err)
	if errors.Is(err, redisson.ErrNotReplicated) {
		// Released on the master; too few replicas acknowledged it.
		r.stat("sem released (not acknowledged)", 1)
		err = nil
	}
	if err != nil {
		// Unknown: it may or may not have happened; not retried (a retry is a new request).
		r.stat("sem release unknown", 1)
		r.bInt("INCRBY semunk", func(ctx context.Context) *redis.IntCmd { return r.bdb.IncrBy(ctx, "semunk:"+name, n) })
	} else {
		r.stat("sem released", 1)
	}
	r.bInt("DECRBY "+out, func(ctx context.Context) *redis.IntCmd { return r.bdb.DecrBy(ctx, out, n) })
}

// psemSession takes leased permits of the PermitExpirableSemaphore, enters, works, leaves and
// releases them by id. An acked Client takes them with AcquireHeld and works until their context
// ends.
func (r *modelRun) psemSession(c *modelClient, team int, rng *rand.Rand, final bool) {
	n, wait, work := semSpec(rng, final)
	var lease time.Duration
	switch p := rng.IntN(100); {
	case final:
	case p < 10:
		lease = modelBetween(rng, 100*time.Millisecond, 300*time.Millisecond) // may run out inside
	case p < 30:
		lease = modelBetween(rng, time.Second, 3*time.Second)
	}
	if lease > 0 {
		work = modelBetween(rng, 0, 2*lease/3)
	} else if c.acked && !final && rng.IntN(100) < 40 {
		work = modelBetween(rng, modelLongHoldMin, modelLongHoldMax) // long enough for a cut to lose them
	}
	r.psemRun(c, team, r.psemName, n, wait, lease, work, final)
}

// psemProbe is the acked Clients' permit probe (see probeSpec): one or two watchdog permits of the
// probe semaphore (modelPermits of them, used by nobody else) held for modelProbeHold, or until
// they are lost.
func (r *modelRun) psemProbe(c *modelClient, team int, rng *rand.Rand) {
	r.psemRun(c, team, r.psemProbeName, 1+rng.Int64N(2), modelBetween(rng, 50*time.Millisecond, 1500*time.Millisecond), 0,
		modelProbeHold, false)
}

// psemRun takes n leased permits of semaphore name (lease 0: watchdog-renewed) within wait, works,
// and releases them.
func (r *modelRun) psemRun(c *modelClient, team int, name string, n int64, wait, lease, work time.Duration, final bool) {
	id := fmt.Sprintf("p%dc%dt%d#%d", r.proc, c.idx, team, r.holdSeq.Add(1))
	opts := []redisson.AcquireOption{redisson.WithWait(wait)}
	if lease > 0 {
		opts = append(opts, redisson.WithLease(lease))
	}
	ps := c.rc.PermitExpirableSemaphore(name)
	start := time.Now()
	var ids []string
	var held *redisson.HeldPermits
	var err error
	if c.acked {
		held, err = ps.AcquireHeld(r.ctx, n, opts...)
		ids = held.IDs()
	} else {
		ids, err = ps.TryAcquire(r.ctx, n, opts...)
	}
	end := time.Now()
	r.stuckCheck(c, id, name, wait, start, end, err)
	r.tracef("%s psem acquire %s n=%d wait=%v lease=%v held=%v: %v %v", id, name, n, wait, lease, c.acked, ids, err)
	if ids == nil {
		r.stat("psem not obtained", 1)
		refused := errors.Is(err, redisson.ErrNotReplicated)
		if refused {
			r.stat("psem refused (acks)", 1)
		}
		if refused && final {
			r.finalRefused(start)
		} else if final {
			r.violation(vNeverServed, "%s: TryAcquire(%s, %d) with faults off and a %v wait: %v", id, name, n, wait, err)
		}
		return
	}
	r.stat("psem acquired", 1)
	if held != nil {
		if lease > 0 {
			r.stat("psem held acquired (lease)", 1)
		} else {
			r.stat("psem held acquired (watchdog)", 1)
		}
		r.checkAckGranted(id, name, start, end)
	}
	var expiry time.Time
	if lease > 0 {
		expiry = start.Add(lease)
	}
	r.semEnter(name, id, c, n, expiry, end, true)
	if held != nil {
		// The holder stops counting the permits as soon as their context ends (registered after
		// entering, so that a clear of permits already lost comes after the entry).
		hctx := held.Context()
		r.onEnd(hctx, true, id, []string{name}, func() { r.semLeave(name, id) })
		r.holdWork(c, hctx, work)
		if lease == 0 {
			r.checkAckKept(id, name, hctx, end)
		}
	} else {
		r.pause(work)
	}
	r.semLeave(name, id)
	for try := 0; ; try++ {
		rs := time.Now()
		err = ps.Release(r.ctx, ids...)
		r.tracef("%s psem release %s %v: %v", id, name, ids, err)
		switch {
		case err == nil:
			r.stat("psem released", 1)
		case errors.Is(err, redisson.ErrNotReplicated):
			// Released on the master; too few replicas acknowledged it.
			r.stat("psem released (not acknowledged)", 1)
		case errors.Is(err, redisson.ErrNotHeld):
			switch {
			case try > 0:
				// An earlier try with an unknown outcome released them.
			case lease > 0 && !rs.Before(expiry):
				r.stat("psem lease ended", 1)
			case held != nil && modelLost(held.Context()) && !errors.Is(context.Cause(held.Context()), renew.ErrGone):
				// The Client declared them lost (renewals failing, acknowledged or not; a fixed
				// lease about to pass; a reply too late to vouch for the lease) and told the holder:
				// it gives lost permits back. (Found gone in Redis is no such excuse.)
				if r.ackLost(c, held.Context(), start) {
					r.stat("psem lost for acks", 1)
				} else {
					r.stat("psem lost (told)", 1)
				}
			case c.tainted(end.Add(-modelTaintBefore), time.Now()):
				r.stat("psem lease lapsed (tainted)", 1)
			default:
				r.violation(vSemRelease, "%s: %s: Release of permits %v (lease %v, watchdog %v) acquired at %s answered %v",
					name, id, ids, lease, lease == 0, end.Format("15:04:05.000"), err)
			}
		default:
			r.stat("psem release unknown", 1)
			if try < 5 && r.ctx.Err() == nil {
				r.pause(50 * time.Millisecond)
				continue
			}
			// Renewed by the watchdog until its Client is closed, or left to its fixed lease.
			r.stat("psem release given up", 1)
		}
		return
	}
}

// latchState is the coordinator's record of the latch rounds in B (hash "latch").
type latchState struct {
	round, k, started, zero, unk int64
	arming                       bool
}

func (r *modelRun) latchRead() (latchState, bool) {
	ctx, cancel := r.opCtx()
	defer cancel()
	m, err := r.bdb.HGetAll(ctx, "latch").Result()
	if err != nil {
		r.infraErr("HGETALL latch: %v", err)
		return latchState{}, false
	}
	get := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	return latchState{round: get("round"), k: get("k"), started: get("started"), zero: get("zero"), unk: get("unk"),
		arming: m["arming"] == "1"}, len(m) > 0
}

func (r *modelRun) latchSet(fields ...any) {
	ctx, cancel := r.opCtx()
	defer cancel()
	if err := r.bdb.HSet(ctx, "latch", fields...).Err(); err != nil {
		r.infraErr("HSET latch: %v", err)
	}
}

// latchWait waits on the current round of the latch, if it is armed, and judges the outcome.
func (r *modelRun) latchWait(c *modelClient, team int, rng *rand.Rand) {
	st, ok := r.latchRead()
	if !ok || st.arming || st.round == 0 {
		return
	}
	id := fmt.Sprintf("p%dc%dt%d#%d", r.proc, c.idx, team, r.holdSeq.Add(1))
	ctx, cancel := context.WithTimeout(r.ctx, modelBetween(rng, modelLatchTimeout/2, modelLatchTimeout))
	start := time.Now()
	err := c.rc.CountDownLatch(r.latchName).Wait(ctx)
	cancel()
	at := time.Now()
	now, _ := r.latchRead()
	r.tracef("%s latch wait (round %d, k %d, started %d): %v; now round %d started %d zero %d", id, st.round, st.k, st.started, err,
		now.round, now.started, now.zero)
	judged := st.round > now.unk+1
	switch {
	case err == nil:
		r.stat("latch waits released", 1)
		if judged && now.round == st.round && now.started < now.k {
			r.violation(vLatchEarly, "%s: Wait(%s) on round %d returned nil at %s with %d of %d count-downs started",
				id, r.latchName, st.round, at.Format("15:04:05.000"), now.started, now.k)
		}
	case r.ctx.Err() == nil:
		r.stat("latch waits timed out", 1)
		if now.round == st.round && !now.arming && now.zero > 0 &&
			time.UnixMilli(now.zero).Before(at.Add(-modelLatchStuck-c.blackholeCost(start, at))) {
			r.violation(vStuck, "%s: Wait(%s) on round %d timed out at %s (%v) although the count was 0 since %s",
				id, r.latchName, st.round, at.Format("15:04:05.000"), err, time.UnixMilli(now.zero).Format("15:04:05.000"))
		}
	}
}

// runLatch is the parent's latch coordinator (see the header): rounds until the deadline, then the
// latch is left at zero.
func (r *modelRun) runLatch() {
	rng := r.rng(0xFFFF, 3)
	c := r.clients[len(r.clients)-1]
	l := c.rc.CountDownLatch(r.latchName)
	var round int64
	// drain counts down until Count reads 0 (recording each count-down as started first), and
	// records the zero.
	drain := func() {
		for r.ctx.Err() == nil {
			n, err := l.Count(r.ctx)
			if err == nil && n == 0 {
				r.latchSet("zero", time.Now().UnixMilli())
				return
			}
			if err == nil {
				r.bInt("HINCRBY latch started", func(ctx context.Context) *redis.IntCmd { return r.bdb.HIncrBy(ctx, "latch", "started", 1) })
				if _, err = l.CountDown(r.ctx); err != nil {
					r.latchSet("unk", round)
				}
			}
			r.pause(20 * time.Millisecond)
		}
	}
	for r.workloadOn() {
		round++
		k := 1 + rng.Int64N(3)
		r.latchSet("round", round, "k", k, "started", 0, "zero", 0, "arming", 1)
		for r.ctx.Err() == nil {
			set, err := l.TrySetCount(r.ctx, k)
			if err != nil {
				r.latchSet("unk", round)
				r.pause(20 * time.Millisecond)
				continue
			}
			if !set {
				// Set already: by an earlier try whose outcome was unknown (then unk is set), or a late
				// copy of an earlier round's; either way the round is not judged.
				r.latchSet("unk", round)
			}
			break
		}
		r.latchSet("arming", 0)
		r.stat("latch rounds", 1)
		for range k {
			r.pause(modelBetween(rng, 20*time.Millisecond, 300*time.Millisecond))
			r.bInt("HINCRBY latch started", func(ctx context.Context) *redis.IntCmd { return r.bdb.HIncrBy(ctx, "latch", "started", 1) })
			if _, err := l.CountDown(r.ctx); err != nil {
				r.stat("latch unknown outcome", 1)
				r.latchSet("unk", round)
			}
		}
		drain()
		r.pause(modelBetween(rng, 50*time.Millisecond, 1500*time.Millisecond)) // at zero for a while
	}
	drain()
}

// setupSync sets the permits of both semaphores (the parent, before anything else runs).
func (r *modelRun) setupSync() error {
	if r.semName == "" {
		return nil
	}
	ctx, cancel := r.opCtx()
	defer cancel()
	rc := r.clients[0].rc
	if ok, err := rc.Semaphore(r.semName).TrySetPermits(ctx, modelPermits); err != nil || !ok {
		return fmt.Errorf("TrySetPermits(%s): %v %v", r.semName, ok, err)
	}
	for _, name := range r.leasedNames() {
		if ok, err := rc.PermitExpirableSemaphore(name).TrySetPermits(ctx, modelPermits); err != nil || !ok {
			return fmt.Errorf("TrySetPermits(%s): %v %v", name, ok, err)
		}
	}
	return nil
}

// purgeSync drops the critical-section entries of killed process proc and moves the plain
// Semaphore's permits it may have held to semkill (gone for good: plain permits have no lease).
func (r *modelRun) purgeSync(ctx context.Context, proc int) {
	if r.semName == "" {
		return
	}
	for _, name := range []string{r.semName, r.psemName, r.psemProbeName} {
		if err := modelSemPurge.Run(ctx, r.bdb, []string{"semin:" + name}, proc).Err(); err != nil {
			r.infraErr("purging semin:%s: %v", name, err)
		}
	}
	out := "semout:" + r.semName + ":" + strconv.Itoa(proc)
	n, err := r.bdb.GetDel(ctx, out).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		r.infraErr("GETDEL %s: %v", out, err)
	}
	if err := r.bdb.IncrBy(ctx, "semkill:"+r.semName, n).Err(); err != nil {
		r.infraErr("INCRBY semkill: %v", err)
	}
	r.tracef("killed child %d may have held %d permits of %s", proc, n, r.semName)
	r.stat("sem permits of killed", n)
}

// checkSyncRunning is the checker's part for the synchronizers: the plain Semaphore never has more
// than its permits available; the leased one's permits and leases always add up to them.
func (r *modelRun) checkSyncRunning(reported map[string]bool) {
	if r.semName == "" {
		return
	}
	for _, name := range []string{r.semName, r.psemName, r.psemProbeName} {
		key := r.drv.Key(name)
		ctx, cancel := r.opCtx()
		res, err := modelSemRead.Run(ctx, r.admin, []string{key, redisson.AuxOf(key, "sl")}).Slice()
		cancel()
		if err != nil || len(res) != 2 || res[0] == "" {
			continue
		}
		v, _ := strconv.ParseInt(res[0].(string), 10, 64)
		leased, _ := res[1].(int64)
		bad := ""
		switch {
		case name == r.semName && v > modelPermits:
			bad = fmt.Sprintf("%d permits available, more than the %d set", v, modelPermits)
		case name != r.semName && v+leased != modelPermits:
			bad = fmt.Sprintf("%d permits available and %d leased, the permits set are %d", v, leased, modelPermits)
		}
		if bad != "" && !reported["sem:"+name] {
			reported["sem:"+name] = true
			r.violation(vSemCount, "%s: %s", name, bad)
		}
	}
}

// checkSyncEnd checks the synchronizers' end state (every process done, every Client closed).
func (r *modelRun) checkSyncEnd() {
	if r.semName == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*modelMaxLease+2*modelOpTimeout)
	defer cancel()
	rc, err := redisson.New(r.admin)
	if err != nil {
		r.infraErr("a Client for the end checks: %v", err)
		return
	}
	defer rc.Close()

	// Plain Semaphore: [permits - unknown - killed, permits].
	keys, err := r.bdb.Keys(ctx, "semout:"+r.semName+":*").Result()
	if err != nil {
		r.infraErr("KEYS semout: %v", err)
	}
	for _, k := range keys {
		if n, _ := r.bdb.Get(ctx, k).Int64(); n != 0 {
			r.infraErr("%s = %d at the end (a process that was not killed)", k, n)
		}
	}
	leak := r.semLeakBound()
	avail, err := rc.Semaphore(r.semName).AvailablePermits(ctx)
	r.stat("sem end leak bound", leak)
	switch {
	case err != nil:
		r.infraErr("AvailablePermits(%s): %v", r.semName, err)
	case avail > modelPermits || avail < modelPermits-leak:
		r.violation(vSemCount, "%s: %d permits available at the end; expected %d less at most %d (unknown outcomes and killed holders)",
			r.semName, avail, modelPermits, leak)
	}

	// Leased: exactly the permits, once the leases of the killed process's permits have passed.
	limit := time.Now().Add(modelMaxLease + modelWatchdog + time.Second)
	for _, name := range r.leasedNames() {
		for {
			avail, err = rc.PermitExpirableSemaphore(name).AvailablePermits(ctx)
			if err != nil {
				r.infraErr("AvailablePermits(%s): %v", name, err)
				break
			}
			if avail == modelPermits || time.Now().After(limit) {
				break
			}
			time.Sleep(50 * time.Millisecond) // polling for the leases to pass
		}
		if err == nil && avail != modelPermits {
			r.violation(vSemCount, "%s: %d permits available at the end (after every lease passed); expected %d",
				name, avail, modelPermits)
		}
	}

	// No waiter left (AvailablePermits dropped those whose registration lapsed).
	for _, name := range []string{r.semName, r.psemName, r.psemProbeName} {
		w, err := r.admin.HGetAll(ctx, redisson.AuxOf(r.drv.Key(name), "sw")).Result()
		if err != nil {
			r.infraErr("HGETALL waiters of %s: %v", name, err)
			continue
		}
		delete(w, "seq")
		if len(w) > 0 {
			r.violation(vLeft, "%s: waiters left at the end: %v", name, w)
		}
	}

	// The latch is at zero (its key gone).
	if n, err := rc.CountDownLatch(r.latchName).Count(ctx); err != nil || n != 0 {
		r.violation(vLeft, "%s: count %d (%v) at the end, after the coordinator counted it down to 0", r.latchName, n, err)
	}
}

// syncLeftover reports whether key is a synchronizer's key that may stay in A: a semaphore's permits
// (for good: noTTL), its waiters hash and request records (with a TTL), a latch's request records and
// its round counter (for good).
func (r *modelRun) syncLeftover(key string) (ok, noTTL bool) {
	if r.semName == "" {
		return false, false
	}
	for _, name := range []string{r.semName, r.psemName, r.latchName, r.psemProbeName} {
		k := r.drv.Key(name)
		switch {
		case name != r.latchName && key == k:
			return true, true
		case name != r.latchName && key == redisson.AuxOf(k, "sw"):
			return true, false
		case strings.HasPrefix(key, redisson.AuxOf(k, "sr:")):
			return true, false
		case name == r.latchName && key == redisson.AuxOf(k, "lr"):
			return true, true // the latch's round counter, kept for good
		}
	}
	return false, false
}
