package redisson_test

// The data objects of TestModel beside its locks and synchronizers: two AtomicLongs, a BitSet, a
// BloomFilter and a HyperLogLog, each under its own name, used by the same teams (in every process,
// through the same faulted Clients: lost replies, closed connections, delays, blackholes, a killed
// child) and checked against a model in B. Every mutation of these objects is sent once: after a
// network error it may or may not have happened, never twice. The model records each mutation in B
// before it is sent (pending) and resolves it once it returned: applied, not applied, or unknown (an
// error; it stays unknown for good, as does a pending one of a killed process).
//
// AtomicLong "counter" (Add with deltas of either sign, CompareAndSwap loops adding a delta):
//   - counter out of range: B keeps kpos/kneg, the sums of the positive/negative deltas known
//     applied, and upos/uneg, those of the deltas pending or unknown. A value observed (Load, the
//     value Add returned, the old value of a CompareAndSwap that succeeded) between snapshots S1 and
//     S2 of these sums must lie in [K1 + (kneg2-kneg1) + uneg2, K1 + (kpos2-kpos1) + upos2], where
//     K1 = kpos1 + kneg1: what was known applied before the call is in the value, whatever was
//     pending, unknown or resolved in between may or may not be. An Add applied twice (a re-send),
//     or a CompareAndSwap that succeeded, was re-sent, answered false and made its loop add again,
//     leaves the value off by a delta the model does not allow. Checked at every call and at the end.
//     Unknown outcomes widen the range for good, so the counter comes in generations: an unknown
//     outcome on one makes a fresh AtomicLong the one new operations use, whose range is exact but
//     for the operations in flight (a copy applied twice without an error is then caught at once).
//
// AtomicLong "mark" (SetIfGreater with about increasing values, Load):
//   - high-water mark: a Load must return at least the largest v of a SetIfGreater(v) that returned
//     (true or false: both mean the value is ≥ v) before it started, at least any value a Load that
//     returned before it started saw (it never decreases), and at most the largest v ever sent; a
//     SetIfGreater(v) must not answer true when a value ≥ v was known set before it was sent.
//
// BitSet: each team owns 16 bits of its own (by process, Client and team), so that each bit has one
// writer: Set, Clear, SetRange and ClearRange (ranges not byte-aligned) on its bits, Get of its own
// bits. B keeps each bit's state (0, 1, or U: pending or unknown) with a version bumped by every
// change:
//   - bitset state: Set (Clear) must answer "was set" as the model knows the bit (when it is not U);
//     Get of a bit the model knows must answer it; a checkpoint by any team reads Bytes, Cardinality
//     and Length between two snapshots of the states: a bit known 1 (0, or never touched) in both,
//     with the same version, must be set (clear); Cardinality and Length must lie between what the
//     bits certainly set and those possibly set allow. At the end (every process done), the same
//     with a fresh Client.
//
// BloomFilter (sized once by the parent): AddMany of new elements, Add of an element known added,
// ContainsMany of known elements, Contains of never-added ones (false positives are only counted):
//   - bloom false negative: an element whose Add returned success is contained ever after, through
//     any Client; an Add of it again must answer "not new" (its bits are all set). Elements whose Add
//     failed or was in flight are excused. At the end a fresh Client checks every known element.
//
// HyperLogLog (only adds): AddMany of new elements, Add of a known element, Count:
//   - hyperloglog count: an Add of an element known added must answer "not changed"; Count never
//     decreases (it is at least what a Count that returned before it started saw) and lies within
//     [0.9 × the elements known added before it started − 3, 1.1 × the elements ever sent + 3].
//
// At the end the objects are deleted (Delete), and their keys must be gone.
//
// The replica-acknowledged Clients (see model_test.go) use the objects too: a counter Add or
// CompareAndSwap answering ErrNotReplicated happened on the master, and is checked as applied (its
// value included); the other objects' mutations answering it count as unknown outcomes.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// Violation kinds of the data objects.
const (
	vObjCounter = "atomic counter out of range"
	vObjMark    = "high-water mark"
	vBitState   = "bitset state"
	vBloomMiss  = "bloom false negative"
	vHLLCount   = "hyperloglog count"
)

const (
	modelBitsPerTeam    = 16
	modelBloomInserts   = 5000
	modelBloomFPR       = 0.01
	modelObjSessionOps  = 8 // at most, per session
	modelObjSampleCheck = 8 // known elements checked per ContainsMany
)

// modelObjects names the data objects of a run.
type modelObjects struct {
	counter, mark, bits, bloom, hll string
}

// modelObjectNames returns the names of the data objects of a run.
func modelObjectNames(tag string) []string {
	var out []string
	for i, kind := range []string{"counter", "mark", "bits", "bloom", "hll"} {
		out = append(out, fmt.Sprintf("model-%s-%s-%d", tag, kind, 10+i))
	}
	return out
}

func (r *modelRun) setObjectNames(names []string) {
	if len(names) == 5 {
		r.objs = &modelObjects{counter: names[0], mark: names[1], bits: names[2], bloom: names[3], hll: names[4]}
	}
}

// setupObjects sizes the BloomFilter (the parent, before anything else runs).
func (r *modelRun) setupObjects() error {
	if r.objs == nil {
		return nil
	}
	ctx, cancel := r.opCtx()
	defer cancel()
	if ok, err := r.clients[0].rc.BloomFilter(r.objs.bloom).TryInit(ctx, modelBloomInserts, modelBloomFPR); err != nil || !ok {
		return fmt.Errorf("TryInit(%s): %v %v", r.objs.bloom, ok, err)
	}
	return nil
}

// objSession runs a few operations on one data object, drawn with probability p (out of 100) by
// runTeam; it returns false if p leaves the session to the others.
func (r *modelRun) objSession(c *modelClient, team int, rng *rand.Rand, p int) bool {
	if r.objs == nil || p < 0 || p >= 15 {
		return false
	}
	id := fmt.Sprintf("p%dc%dt%d#%d", r.proc, c.idx, team, r.holdSeq.Add(1))
	r.stat("obj sessions", 1)
	q := rng.IntN(100)
	for range 2 + rng.IntN(modelObjSessionOps-1) {
		if !r.workloadOn() {
			return true
		}
		switch {
		case q < 35:
			r.counterOp(c, id, rng)
		case q < 48:
			r.markOp(c, id, rng)
		case q < 72:
			r.bitsOp(c, team, id, rng)
		case q < 86:
			r.bloomOp(c, id, rng)
		default:
			r.hllOp(c, id, rng)
		}
	}
	return true
}

// unknownOutcome counts a mutation that failed: it may or may not have happened.
func (r *modelRun) unknownOutcome(what string) {
	r.stat("obj unknown outcome", 1)
	r.stat("obj unknown "+what, 1)
}

// ---- AtomicLong "counter" ----

// modelCounterBegin records delta ARGV[1] as pending in hash KEYS[1] and returns the sums before:
// {kpos, kneg, upos, uneg}.
var modelCounterBegin = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'kpos', 'kneg', 'upos', 'uneg')
for i = 1, 4 do v[i] = tonumber(v[i] or '0') end
local d = tonumber(ARGV[1])
if d > 0 then
  redis.call('HINCRBY', KEYS[1], 'upos', d)
else
  redis.call('HINCRBY', KEYS[1], 'uneg', d)
end
return v
`)

// modelCounterEnd resolves pending delta ARGV[1]: ARGV[2] "a" applied, "n" not applied, "u" unknown
// (it stays pending for good). Returns the sums before the resolution.
var modelCounterEnd = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'kpos', 'kneg', 'upos', 'uneg')
for i = 1, 4 do v[i] = tonumber(v[i] or '0') end
local d = tonumber(ARGV[1])
local u, k = 'uneg', 'kneg'
if d > 0 then u, k = 'upos', 'kpos' end
if ARGV[2] == 'a' then
  redis.call('HINCRBY', KEYS[1], u, -d)
  redis.call('HINCRBY', KEYS[1], k, d)
elseif ARGV[2] == 'n' then
  redis.call('HINCRBY', KEYS[1], u, -d)
else
  redis.call('HINCRBY', KEYS[1], 'unknown', 1)
end
return v
`)

type counterSnap struct{ kpos, kneg, upos, uneg int64 }

func counterSnapOf(res []any, err error) (counterSnap, error) {
	if err != nil || len(res) != 4 {
		return counterSnap{}, fmt.Errorf("%v %v", res, err)
	}
	var v [4]int64
	for i := range v {
		switch x := res[i].(type) {
		case int64:
			v[i] = x
		case string:
			v[i], _ = strconv.ParseInt(x, 10, 64)
		}
	}
	return counterSnap{v[0], v[1], v[2], v[3]}, nil
}

// The counter comes in generations: an unknown outcome on generation g makes generation g+1 (a
// fresh AtomicLong, "<name>-g<g+1>", with its own book) the one new operations use, so that the
// range a value may lie in stays exact but for the operations in flight on a generation without
// unknown outcomes. Older generations keep their range (checked at the end too).
const counterGen = "obj:counter:gen"

func counterBook(g int64) string { return "obj:counter:" + strconv.FormatInt(g, 10) }

func (r *modelRun) counterName(g int64) string { return fmt.Sprintf("%s-g%d", r.objs.counter, g) }

// counterGeneration returns the generation new operations use.
func (r *modelRun) counterGeneration() (int64, bool) {
	ctx, cancel := r.opCtx()
	defer cancel()
	g, err := r.bdb.Get(ctx, counterGen).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		r.infraErr("GET %s: %v", counterGen, err)
		return 0, false
	}
	return g, true
}

// modelCounterNextGen makes generation ARGV[1] + 1 current, if ARGV[1] still is.
var modelCounterNextGen = redis.NewScript(`
if (redis.call('GET', KEYS[1]) or '0') == ARGV[1] then
  return redis.call('INCR', KEYS[1])
end
return 0
`)

func (r *modelRun) counterBegin(g, delta int64) (counterSnap, bool) {
	ctx, cancel := r.opCtx()
	defer cancel()
	s, err := counterSnapOf(modelCounterBegin.Run(ctx, r.bdb, []string{counterBook(g)}, delta).Slice())
	if err != nil {
		r.infraErr("counter begin: %v", err)
		return s, false
	}
	return s, true
}

func (r *modelRun) counterEnd(g, delta int64, outcome string) (counterSnap, bool) {
	ctx, cancel := r.opCtx()
	defer cancel()
	s, err := counterSnapOf(modelCounterEnd.Run(ctx, r.bdb, []string{counterBook(g)}, delta, outcome).Slice())
	if err != nil {
		r.infraErr("counter end: %v", err)
		return s, false
	}
	if outcome == "u" {
		if err := modelCounterNextGen.Run(ctx, r.bdb, []string{counterGen}, g).Err(); err != nil {
			r.infraErr("counter next generation: %v", err)
		}
	}
	return s, true
}

func (r *modelRun) counterSnap(g int64) (counterSnap, bool) {
	ctx, cancel := r.opCtx()
	defer cancel()
	s, err := counterSnapOf(r.bdb.HMGet(ctx, counterBook(g), "kpos", "kneg", "upos", "uneg").Result())
	if err != nil {
		r.infraErr("counter snapshot: %v", err)
		return s, false
	}
	return s, true
}

// counterRange is what the counter may hold at an instant between snapshots s1 and s2.
func counterRange(s1, s2 counterSnap) (lo, hi int64) {
	k1 := s1.kpos + s1.kneg
	return k1 + (s2.kneg - s1.kneg) + s2.uneg, k1 + (s2.kpos - s1.kpos) + s2.upos
}

func (r *modelRun) checkCounter(g int64, id, what string, v int64, s1, s2 counterSnap) {
	lo, hi := counterRange(s1, s2)
	if v >= lo && v <= hi {
		return
	}
	r.violation(vObjCounter, "%s: %s: %s = %d, but the model allows [%d, %d] (known applied %+d/%+d, pending or unknown %+d/%+d)",
		r.counterName(g), id, what, v, lo, hi, s2.kpos, s2.kneg, s2.upos, s2.uneg)
}

// counterLoad loads generation g of the counter through rc and checks it.
func (r *modelRun) counterLoad(rc *redisson.Client, g int64, id string) (int64, bool) {
	s1, ok1 := r.counterSnap(g)
	v, err := rc.AtomicLong(r.counterName(g)).Load(r.ctx)
	s2, ok2 := r.counterSnap(g)
	r.tracef("%s counter g%d load: %d %v", id, g, v, err)
	if err != nil || !ok1 || !ok2 {
		return 0, false
	}
	r.checkCounter(g, id, "Load", v, s1, s2)
	return v, true
}

func modelDelta(rng *rand.Rand) int64 {
	d := 1 + rng.Int64N(9)
	if rng.IntN(2) == 0 {
		d = -d
	}
	return d
}

func (r *modelRun) counterOp(c *modelClient, id string, rng *rand.Rand) {
	g, ok := r.counterGeneration()
	if !ok {
		return
	}
	a := c.rc.AtomicLong(r.counterName(g))
	switch p := rng.IntN(100); {
	case p < 45: // Add
		d := modelDelta(rng)
		s1, ok := r.counterBegin(g, d)
		if !ok {
			return
		}
		v, err := a.Add(r.ctx, d)
		if errors.Is(err, redisson.ErrNotReplicated) {
			// Added on the master (an acked Client); too few replicas acknowledged it.
			r.stat("counter adds not acknowledged", 1)
			err = nil
		}
		outcome := "a"
		if err != nil {
			outcome = "u"
			r.unknownOutcome("counter add")
		}
		s2, ok := r.counterEnd(g, d, outcome)
		r.tracef("%s counter g%d add %+d: %d %v", id, g, d, v, err)
		r.stat("counter adds", 1)
		if err == nil && ok {
			r.checkCounter(g, id, fmt.Sprintf("Add(%+d) returned", d), v, s1, s2)
		}
	case p < 85: // a CompareAndSwap loop adding d
		d := modelDelta(rng)
		for range 3 {
			old, ok := r.counterLoad(c.rc, g, id)
			if !ok {
				return
			}
			s1, ok := r.counterBegin(g, d)
			if !ok {
				return
			}
			swapped, err := a.CompareAndSwap(r.ctx, old, old+d)
			if errors.Is(err, redisson.ErrNotReplicated) {
				// Swapped (or not) on the master (an acked Client); too few replicas acknowledged it.
				r.stat("counter cas not acknowledged", 1)
				err = nil
			}
			outcome := "n"
			switch {
			case err != nil:
				outcome = "u"
				r.unknownOutcome("counter cas")
			case swapped:
				outcome = "a"
			}
			s2, ok := r.counterEnd(g, d, outcome)
			r.tracef("%s counter g%d cas %d -> %d: %v %v", id, g, old, old+d, swapped, err)
			r.stat("counter cas", 1)
			if swapped && err == nil && ok {
				r.stat("counter cas swapped", 1)
				r.checkCounter(g, id, fmt.Sprintf("CompareAndSwap(%d, %d) succeeded: the old value", old, old+d), old, s1, s2)
			}
			if swapped || err != nil {
				return
			}
		}
	default:
		r.counterLoad(c.rc, g, id)
		r.stat("counter loads", 1)
	}
}

// ---- AtomicLong "mark" ----

const markBook = "obj:mark"

// modelMarkBegin raises ceil to ARGV[1] (a SetIfGreater about to be sent) and returns floor.
var modelMarkBegin = redis.NewScript(`
local c = tonumber(redis.call('HGET', KEYS[1], 'ceil') or '0')
if tonumber(ARGV[1]) > c then redis.call('HSET', KEYS[1], 'ceil', ARGV[1]) end
return tonumber(redis.call('HGET', KEYS[1], 'floor') or '0')
`)

// modelMarkRaise raises field ARGV[1] of KEYS[1] to ARGV[2].
var modelMarkRaise = redis.NewScript(`
local c = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > c then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 0
`)

type markSnap struct{ floor, ceil, seen int64 }

func (r *modelRun) markSnap() (markSnap, bool) {
	ctx, cancel := r.opCtx()
	defer cancel()
	v, err := r.bdb.HMGet(ctx, markBook, "floor", "ceil", "seen").Result()
	if err != nil || len(v) != 3 {
		r.infraErr("mark snapshot: %v", err)
		return markSnap{}, false
	}
	var n [3]int64
	for i := range n {
		s, _ := v[i].(string)
		n[i], _ = strconv.ParseInt(s, 10, 64)
	}
	return markSnap{n[0], n[1], n[2]}, true
}

func (r *modelRun) markRaise(field string, v int64) {
	ctx, cancel := r.opCtx()
	defer cancel()
	if err := modelMarkRaise.Run(ctx, r.bdb, []string{markBook}, field, v).Err(); err != nil {
		r.infraErr("mark raise %s: %v", field, err)
	}
}

// checkMark checks a value of the mark loaded between snapshots s1 and s2.
func (r *modelRun) checkMark(id string, v int64, s1, s2 markSnap) {
	switch {
	case v < s1.floor:
		r.violation(vObjMark, "%s: %s: Load = %d, below %d, set (or found set) by a SetIfGreater that returned before the Load",
			r.objs.mark, id, v, s1.floor)
	case v < s1.seen:
		r.violation(vObjMark, "%s: %s: Load = %d, below %d, seen by a Load that returned before it: the mark went down",
			r.objs.mark, id, v, s1.seen)
	case v > s2.ceil:
		r.violation(vObjMark, "%s: %s: Load = %d, above %d, the largest value any SetIfGreater sent", r.objs.mark, id, v, s2.ceil)
	}
}

func (r *modelRun) markLoad(id string, rc *redisson.Client) {
	s1, ok1 := r.markSnap()
	v, err := rc.AtomicLong(r.objs.mark).Load(r.ctx)
	s2, ok2 := r.markSnap()
	r.tracef("%s mark load: %d %v", id, v, err)
	if err != nil || !ok1 || !ok2 {
		return
	}
	r.checkMark(id, v, s1, s2)
	r.markRaise("seen", v)
}

func (r *modelRun) markOp(c *modelClient, id string, rng *rand.Rand) {
	if rng.IntN(100) < 40 {
		r.markLoad(id, c.rc)
		r.stat("mark loads", 1)
		return
	}
	v := time.Now().UnixMilli()/4 - rng.Int64N(200)
	ctx, cancel := r.opCtx()
	floor, err := modelMarkBegin.Run(ctx, r.bdb, []string{markBook}, v).Int64()
	cancel()
	if err != nil {
		r.infraErr("mark begin: %v", err)
		return
	}
	set, err := c.rc.AtomicLong(r.objs.mark).SetIfGreater(r.ctx, v)
	r.tracef("%s mark set if greater %d (floor %d): %v %v", id, v, floor, set, err)
	r.stat("mark sets", 1)
	if err != nil {
		r.unknownOutcome("mark set")
		return
	}
	if set {
		r.stat("mark raised", 1)
		if floor >= v {
			r.violation(vObjMark, "%s: %s: SetIfGreater(%d) answered true although %d was known set before it was sent",
				r.objs.mark, id, v, floor)
		}
	}
	r.markRaise("floor", v) // true or false: the value is now ≥ v
}

// ---- BitSet ----

const bitsBook = "obj:bits"

// modelBitsBegin marks the bits ARGV[1..] pending (U), bumping their versions; returns their states
// before ("0" for a bit never touched).
var modelBitsBegin = redis.NewScript(`
local out = {}
for i = 1, #ARGV do
  local cur = redis.call('HGET', KEYS[1], ARGV[i]) or '0|0'
  local st, ver = string.match(cur, '^(.)|(%d+)$')
  out[i] = st
  redis.call('HSET', KEYS[1], ARGV[i], 'U|' .. (tonumber(ver) + 1))
end
return out
`)

// modelBitsEnd sets the bits ARGV[2..] to state ARGV[1], bumping their versions.
var modelBitsEnd = redis.NewScript(`
for i = 2, #ARGV do
  local cur = redis.call('HGET', KEYS[1], ARGV[i]) or '0|0'
  local ver = string.match(cur, '|(%d+)$')
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[1] .. '|' .. (tonumber(ver) + 1))
end
return 0
`)

// bitsBase is the first of the bits team team of Client c owns.
func (r *modelRun) bitsBase(c *modelClient, team int) int64 {
	return int64((r.proc*4+c.idx)*4+team) * modelBitsPerTeam
}

func (r *modelRun) bitsBegin(bits []int64) ([]string, bool) {
	ctx, cancel := r.opCtx()
	defer cancel()
	args := make([]any, len(bits))
	for i, b := range bits {
		args[i] = b
	}
	res, err := modelBitsBegin.Run(ctx, r.bdb, []string{bitsBook}, args...).StringSlice()
	if err != nil || len(res) != len(bits) {
		r.infraErr("bits begin: %v %v", res, err)
		return nil, false
	}
	return res, true
}

func (r *modelRun) bitsEnd(state string, bits []int64) {
	ctx, cancel := r.opCtx()
	defer cancel()
	args := []any{state}
	for _, b := range bits {
		args = append(args, b)
	}
	if err := modelBitsEnd.Run(ctx, r.bdb, []string{bitsBook}, args...).Err(); err != nil {
		r.infraErr("bits end: %v", err)
	}
}

func bitRange(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func (r *modelRun) bitsOp(c *modelClient, team int, id string, rng *rand.Rand) {
	b := c.rc.BitSet(r.objs.bits)
	base := r.bitsBase(c, team)
	i := base + rng.Int64N(modelBitsPerTeam)
	switch p := rng.IntN(100); {
	case p < 50: // Set or Clear one bit
		set := p < 28
		prev, ok := r.bitsBegin([]int64{i})
		if !ok {
			return
		}
		var was bool
		var err error
		op := "Clear"
		if set {
			op = "Set"
			was, err = b.Set(r.ctx, i)
		} else {
			was, err = b.Clear(r.ctx, i)
		}
		r.tracef("%s bits %s(%d) (model %s): %v %v", id, op, i, prev[0], was, err)
		r.stat("bits ops", 1)
		if err != nil {
			r.unknownOutcome("bits set") // stays U
			return
		}
		state := "0"
		if set {
			state = "1"
		}
		r.bitsEnd(state, []int64{i})
		if prev[0] != "U" && was != (prev[0] == "1") {
			r.violation(vBitState, "%s: %s: %s(%d) answered was-set %v, but the model knows the bit as %s (one writer: this team)",
				r.objs.bits, id, op, i, was, prev[0])
		}
	case p < 70: // SetRange or ClearRange within the team's bits
		set := p < 60
		from := base + rng.Int64N(modelBitsPerTeam)
		to := from + 1 + rng.Int64N(base+modelBitsPerTeam-from)
		bits := bitRange(from, to)
		if _, ok := r.bitsBegin(bits); !ok {
			return
		}
		var err error
		op, state := "ClearRange", "0"
		if set {
			op, state = "SetRange", "1"
			err = b.SetRange(r.ctx, from, to)
		} else {
			err = b.ClearRange(r.ctx, from, to)
		}
		r.tracef("%s bits %s(%d, %d): %v", id, op, from, to, err)
		r.stat("bits ops", 1)
		if err != nil {
			r.unknownOutcome("bits range")
			return
		}
		r.bitsEnd(state, bits)
	case p < 82: // Get of an own bit (no write of it in flight)
		ctx, cancel := r.opCtx()
		cur, err := r.bdb.HGet(ctx, bitsBook, strconv.FormatInt(i, 10)).Result()
		cancel()
		if errors.Is(err, redis.Nil) {
			cur, err = "0|0", nil
		}
		if err != nil {
			r.infraErr("bits state: %v", err)
			return
		}
		got, err := b.Get(r.ctx, i)
		r.tracef("%s bits Get(%d) (model %s): %v %v", id, i, cur, got, err)
		r.stat("bits gets", 1)
		if err == nil && cur[0] != 'U' && got != (cur[0] == '1') {
			r.violation(vBitState, "%s: %s: Get(%d) = %v, but the model knows the bit as %c (one writer: this team)",
				r.objs.bits, id, i, got, cur[0])
		}
	default:
		r.bitsCheckpoint(id, c.rc)
	}
}

type bitModel struct {
	state byte // '0', '1', 'U'
	ver   int64
}

func (r *modelRun) bitsSnap() (map[int64]bitModel, bool) {
	ctx, cancel := r.opCtx()
	defer cancel()
	m, err := r.bdb.HGetAll(ctx, bitsBook).Result()
	if err != nil {
		r.infraErr("bits snapshot: %v", err)
		return nil, false
	}
	out := make(map[int64]bitModel, len(m))
	for k, v := range m {
		i, _ := strconv.ParseInt(k, 10, 64)
		st, ver, _ := strings.Cut(v, "|")
		n, _ := strconv.ParseInt(ver, 10, 64)
		out[i] = bitModel{st[0], n}
	}
	return out, true
}

// bitsCheckpoint reads the BitSet (Bytes, Cardinality, Length) through rc between two snapshots of
// the model and checks each against them.
func (r *modelRun) bitsCheckpoint(id string, rc *redisson.Client) {
	b := rc.BitSet(r.objs.bits)
	s1, ok1 := r.bitsSnap()
	raw, errB := b.Bytes(r.ctx)
	card, errC := b.Cardinality(r.ctx)
	length, errL := b.Length(r.ctx)
	s2, ok2 := r.bitsSnap()
	r.stat("bits checkpoints", 1)
	r.tracef("%s bits checkpoint: %d bytes %v, cardinality %d %v, length %d %v", id, len(raw), errB, card, errC, length, errL)
	if !ok1 || !ok2 {
		return
	}
	// Per bit: certainly set, or certainly clear, for the whole interval.
	idx := map[int64]bool{}
	for i := range s1 {
		idx[i] = true
	}
	for i := range s2 {
		idx[i] = true
	}
	var sure1, maybe1 int64
	var lenLo, lenHi int64
	var wrong []string
	sure := func(i int64) (one, zero bool) {
		a, inA := s1[i]
		z, inZ := s2[i]
		if !inA && !inZ {
			return false, true
		}
		if !inA || !inZ || a.ver != z.ver {
			return false, false
		}
		return a.state == '1', a.state == '0'
	}
	for i := range idx {
		one, zero := sure(i)
		if one {
			sure1++
			lenLo = max(lenLo, i+1)
		}
		if !zero {
			maybe1++
			lenHi = max(lenHi, i+1)
		}
		if errB == nil {
			got := i/8 < int64(len(raw)) && raw[i/8]&(0x80>>(i%8)) != 0
			if (one && !got) || (zero && got) {
				wrong = append(wrong, fmt.Sprintf("bit %d is %v (model %c v%d / %c v%d)", i, got, s1[i].state, s1[i].ver, s2[i].state, s2[i].ver))
			}
		}
	}
	if errB == nil {
		// Bits the model never touched must be clear.
		for i := int64(0); i < 8*int64(len(raw)); i++ {
			if !idx[i] && raw[i/8]&(0x80>>(i%8)) != 0 {
				wrong = append(wrong, fmt.Sprintf("bit %d is set, never touched", i))
			}
		}
		if len(wrong) > 0 {
			slices.Sort(wrong)
			if len(wrong) > 6 {
				wrong = append(wrong[:6], fmt.Sprintf("... %d more", len(wrong)-6))
			}
			r.violation(vBitState, "%s: %s: Bytes: %s", r.objs.bits, id, strings.Join(wrong, "; "))
		}
	}
	if errC == nil && (card < sure1 || card > maybe1) {
		r.violation(vBitState, "%s: %s: Cardinality = %d, the model allows [%d, %d]", r.objs.bits, id, card, sure1, maybe1)
	}
	if errL == nil && (length < lenLo || length > lenHi) {
		r.violation(vBitState, "%s: %s: Length = %d, the model allows [%d, %d]", r.objs.bits, id, length, lenLo, lenHi)
	}
}

// ---- BloomFilter ----

const (
	bloomKnown = "obj:bloom:known"
	bloomPend  = "obj:bloom:pending"
)

// knownSample returns up to n random members of set key (known elements).
func (r *modelRun) knownSample(key string, n int) []string {
	ctx, cancel := r.opCtx()
	defer cancel()
	v, err := r.bdb.SRandMemberN(ctx, key, int64(n)).Result()
	if err != nil {
		r.infraErr("SRANDMEMBER %s: %v", key, err)
	}
	return v
}

func (r *modelRun) newElements(id string, rng *rand.Rand) []string {
	els := make([]string, 1+rng.IntN(4))
	for i := range els {
		els[i] = fmt.Sprintf("%s-%d", id, r.holdSeq.Add(1))
	}
	return els
}

func (r *modelRun) bloomOp(c *modelClient, id string, rng *rand.Rand) {
	f := c.rc.BloomFilter(r.objs.bloom)
	switch p := rng.IntN(100); {
	case p < 45: // new elements
		els := r.newElements(id, rng)
		ctx, cancel := r.opCtx()
		err := r.bdb.SAdd(ctx, bloomPend, els).Err()
		cancel()
		if err != nil {
			r.infraErr("SADD %s: %v", bloomPend, err)
			return
		}
		n, err := f.AddMany(r.ctx, els)
		r.tracef("%s bloom add %v: %d %v", id, els, n, err)
		r.stat("bloom adds", 1)
		if err != nil {
			r.unknownOutcome("bloom add") // stays pending: excused
			return
		}
		ctx, cancel = r.opCtx()
		defer cancel()
		if _, err := r.bdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SAdd(ctx, bloomKnown, els)
			p.SRem(ctx, bloomPend, els)
			return nil
		}); err != nil {
			r.infraErr("bloom known: %v", err)
		}
	case p < 60: // an element known added, again
		els := r.knownSample(bloomKnown, 1)
		if len(els) == 0 {
			return
		}
		isNew, err := f.Add(r.ctx, els[0])
		r.tracef("%s bloom re-add %s: %v %v", id, els[0], isNew, err)
		r.stat("bloom re-adds", 1)
		if err == nil && isNew {
			r.violation(vBloomMiss, "%s: %s: Add(%s) of an element known added answered new (some of its bits were clear)",
				r.objs.bloom, id, els[0])
		}
	case p < 90: // known elements are contained
		r.bloomCheck(id, f, r.knownSample(bloomKnown, modelObjSampleCheck))
	default: // an element never added: a false positive is allowed (counted)
		e := fmt.Sprintf("never-%s-%d", id, r.holdSeq.Add(1))
		has, err := f.Contains(r.ctx, e)
		r.stat("bloom absent checks", 1)
		if err == nil && has {
			r.stat("bloom false positives", 1)
		}
	}
}

// bloomCheck checks that f contains every element of els, all known added.
func (r *modelRun) bloomCheck(id string, f *redisson.BloomFilter, els []string) {
	if len(els) == 0 {
		return
	}
	has, err := f.ContainsMany(r.ctx, els)
	r.tracef("%s bloom contains %d known: %v", id, len(els), err)
	r.stat("bloom checks", 1)
	if err != nil {
		return
	}
	var missing []string
	for i, h := range has {
		if !h {
			missing = append(missing, els[i])
		}
	}
	if len(missing) > 0 {
		if len(missing) > 6 {
			missing = append(missing[:6], fmt.Sprintf("... %d more", len(missing)-6))
		}
		r.violation(vBloomMiss, "%s: %s: ContainsMany answered false for elements known added: %s", r.objs.bloom, id, strings.Join(missing, ", "))
	}
}

// ---- HyperLogLog ----

const (
	hllKnown   = "obj:hll:known"
	hllStarted = "obj:hll:started"
	hllBook    = "obj:hll" // field seen: the largest Count that returned
)

func (r *modelRun) hllOp(c *modelClient, id string, rng *rand.Rand) {
	h := c.rc.HyperLogLog(r.objs.hll)
	switch p := rng.IntN(100); {
	case p < 50: // new elements
		els := r.newElements(id, rng)
		ctx, cancel := r.opCtx()
		err := r.bdb.IncrBy(ctx, hllStarted, int64(len(els))).Err()
		cancel()
		if err != nil {
			r.infraErr("INCRBY %s: %v", hllStarted, err)
			return
		}
		changed, err := h.AddMany(r.ctx, els)
		r.tracef("%s hll add %v: %v %v", id, els, changed, err)
		r.stat("hll adds", 1)
		if err != nil {
			r.unknownOutcome("hll add")
			return
		}
		ctx, cancel = r.opCtx()
		defer cancel()
		if err := r.bdb.SAdd(ctx, hllKnown, els).Err(); err != nil {
			r.infraErr("SADD %s: %v", hllKnown, err)
		}
	case p < 65: // an element known added, again: no register changes
		els := r.knownSample(hllKnown, 1)
		if len(els) == 0 {
			return
		}
		changed, err := h.Add(r.ctx, els[0])
		r.tracef("%s hll re-add %s: %v %v", id, els[0], changed, err)
		r.stat("hll re-adds", 1)
		if err == nil && changed {
			r.violation(vHLLCount, "%s: %s: Add(%s) of an element known added answered that the estimate changed",
				r.objs.hll, id, els[0])
		}
	default:
		r.hllCount(id, c.rc)
	}
}

// hllCount counts the HyperLogLog through rc and checks the estimate.
func (r *modelRun) hllCount(id string, rc *redisson.Client) {
	ctx, cancel := r.opCtx()
	var seen *redis.StringCmd
	var known *redis.IntCmd
	_, err := r.bdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		seen = p.HGet(ctx, hllBook, "seen")
		known = p.SCard(ctx, hllKnown)
		return nil
	})
	cancel()
	if err != nil && !errors.Is(err, redis.Nil) {
		r.infraErr("hll snapshot: %v", err)
		return
	}
	seen1, _ := strconv.ParseInt(seen.Val(), 10, 64)
	known1 := known.Val()
	n, err := rc.HyperLogLog(r.objs.hll).Count(r.ctx)
	r.stat("hll counts", 1)
	if err != nil {
		r.tracef("%s hll count: %v", id, err)
		return
	}
	ctx, cancel = r.opCtx()
	defer cancel()
	started, err := r.bdb.Get(ctx, hllStarted).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		r.infraErr("GET %s: %v", hllStarted, err)
		return
	}
	r.tracef("%s hll count: %d (seen %d, known %d, started %d)", id, n, seen1, known1, started)
	lo, hi := known1*9/10-3, started*11/10+3
	switch {
	case n < seen1:
		r.violation(vHLLCount, "%s: %s: Count = %d, below %d, counted before it started, with only adds", r.objs.hll, id, n, seen1)
	case n < lo || n > hi:
		r.violation(vHLLCount, "%s: %s: Count = %d, out of [%d, %d] (%d distinct elements known added before it, %d ever sent)",
			r.objs.hll, id, n, lo, hi, known1, started)
	}
	if err := modelMarkRaise.Run(ctx, r.bdb, []string{hllBook}, "seen", n).Err(); err != nil {
		r.infraErr("hll seen: %v", err)
	}
}

// ---- the end ----

// checkObjectsEnd checks the data objects' end state (every process done, every Client closed)
// through a fresh Client, then deletes them.
func (r *modelRun) checkObjectsEnd() {
	if r.objs == nil {
		return
	}
	rc, err := redisson.New(r.admin)
	if err != nil {
		r.infraErr("a Client for the end checks: %v", err)
		return
	}
	defer rc.Close()
	const id = "end"

	// counter: every generation within what its known and unknown deltas allow.
	gens, _ := r.counterGeneration()
	r.stat("counter generations", gens+1)
	for g := range gens + 1 {
		if s, ok := r.counterSnap(g); ok {
			r.counterLoad(rc, g, id)
			r.stat("counter end unknown slack", s.upos-s.uneg)
		}
	}
	r.markLoad(id, rc)
	r.bitsCheckpoint(id, rc)
	ctx, cancel := r.opCtx()
	all, err := r.bdb.SMembers(ctx, bloomKnown).Result()
	cancel()
	if err != nil {
		r.infraErr("SMEMBERS %s: %v", bloomKnown, err)
	}
	r.stat("bloom known elements", int64(len(all)))
	r.bloomCheck(id, rc.BloomFilter(r.objs.bloom), all)
	r.hllCount(id, rc)

	// Delete them all: nothing of them may be left.
	ctx, cancel = r.opCtx()
	defer cancel()
	var err1 error
	for g := range gens + 1 {
		_, err := rc.AtomicLong(r.counterName(g)).GetAndDelete(ctx)
		err1 = errors.Join(err1, err)
	}
	_, err2 := rc.AtomicLong(r.objs.mark).GetAndDelete(ctx)
	_, err3 := rc.BitSet(r.objs.bits).Delete(ctx)
	_, err4 := rc.BloomFilter(r.objs.bloom).Delete(ctx)
	_, err5 := rc.HyperLogLog(r.objs.hll).Delete(ctx)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		r.infraErr("deleting the data objects: %v", err)
	}
	for _, name := range []string{r.objs.counter + "-g", r.objs.mark, r.objs.bits, r.objs.bloom, r.objs.hll} {
		keys, err := r.admin.Keys(ctx, "*"+name+"*").Result()
		if err == nil && len(keys) > 0 {
			r.violation(vLeft, "%s: keys %v left after Delete", name, keys)
		}
	}
}
