package scripts

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/redistest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every script loads, and its file opens with the contract header.
func TestLoadAndHeaders(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for name, s := range All {
		if err := s.Load(t.Context(), rdb).Err(); err != nil {
			t.Errorf("%s: SCRIPT LOAD: %v", name, err)
		}
		src, err := os.ReadFile(name + ".lua")
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{"-- " + name + ".lua", "KEYS[1", "ARGV[1]", "returns", "twice"} {
			if !strings.Contains(string(src), part) {
				t.Errorf("%s.lua header lacks %q", name, part)
			}
		}
	}
}

// Keys of the lock under test.
var (
	lockKey     = "{L}"
	queue       = "{L}:q"
	deadlines   = "{L}:qt"
	fence       = "{L}:fence"
	acquireKeys = []string{lockKey, queue, deadlines, fence}
	releaseKeys = acquireKeys
	wakePrefix  = "{L}:w:"
)

// shapes are the values the lock key can hold (with, for one, a live waiter queued): every format the
// scripts write, and the foreign or malformed values they must refuse without a change. A is the
// owner the operations act for; C a waiter of another client.
var shapes = []struct {
	name   string
	value  string // "" absent; "hash:"/"list:" another type
	queued bool   // C waits in the queue
}{
	{"free", "", false},
	{"A one level", "A|1|", false},
	{"A two levels", "A|1,2|", false},
	{"A no level", "A||", false},
	{"A awaited", "A|1|w", false}, // marked, but the waiter has gone
	{"A awaited, C queued", "A|1|w", true},
	{"B", "B|1|", false},
	{"B awaited", "B|1|w", false},
	{"fair lock of A", "A|1||f", false},
	{"fenced lock of A", "A|1||t5", false},
	{"spin lock of A", "A|1||s", false},
	{"plain string", "hello", false},
	{"old claim mark", "A|1|B@", false},
	{"bad mark", "A|1|x", false},
	{"empty level id", "A|1,,2|", false},
	{"no owner", "|1|", false},
	{"extra field", "A|1||", false},
	{"hash", "hash:", false},
	{"list", "list:", false},
}

// ops are calls of every script on a Lock (kind ""), each as owner A (heir H for a transfer).
var ops = []struct {
	name string
	run  func(ctx context.Context, rdb *redis.Client) (any, error)
}{
	{"try", acquire("1", "f")},
	{"wait", acquire("1", "w")},
	{"reenter", acquire("2", "r")},
	{"partial", release("2", "0", "")},
	{"final", release("1", "1", "")},
	{"fast", release("1", "1", "A|1|")},
	{"heir", release("1", "1", "", "H")},
	{"giveback", release("1", "1", "", "", "0")}, // an undo that keeps A's place, ahead of every waiter
	{"force", func(ctx context.Context, rdb *redis.Client) (any, error) {
		return LockForceUnlock.Run(ctx, rdb, releaseKeys, "PUBLISH", wakePrefix, "").Int64()
	}},
	{"renew", func(ctx context.Context, rdb *redis.Client) (any, error) {
		return LockRenew.Run(ctx, rdb, []string{lockKey}, 60000, "A").Int64Slice()
	}},
}

func acquire(level, mode string) func(context.Context, *redis.Client) (any, error) {
	return func(ctx context.Context, rdb *redis.Client) (any, error) {
		r, err := LockAcquire.Run(ctx, rdb, acquireKeys, "A", 60000, level, mode, "", 5000, "").Int64Slice()
		var v int64
		if err == nil {
			v = r[0]
		}
		if v <= -2 { // -3 - PTTL of a lock held by another (PTTL -1 here: no TTL)
			return "held", err
		}
		return v, err
	}
}

func release(level, final, expected string, heir ...any) func(context.Context, *redis.Client) (any, error) {
	return func(ctx context.Context, rdb *redis.Client) (any, error) {
		args := append([]any{"A", level, final, expected, 60000, "PUBLISH", wakePrefix, "", 5000}, heir...)
		return LockRelease.Run(ctx, rdb, releaseKeys, args...).Int64()
	}
}

// want[shape][op] is "<reply> <lock key after>[ pub]": the reply (WRONGTYPE for a refusal), the
// value left in the lock key ("-" absent, "=" unchanged), and "pub" if a wake-up was published.
// Refusals must leave the key untouched, as must anything on a lock held by another owner except
// the queue mark.
var want = map[string]map[string]string{
	"free": {
		"try": "1 A|1|", "wait": "1 A|1|", "reenter": "-1 =", "partial": "-1 =", "final": "-1 =",
		"fast": "-1 =", "heir": "-1 =", "force": "0 =", "renew": "[0] =", "giveback": "-1 =",
	},
	"A one level": {
		"try": "1 =", "wait": "1 =", "reenter": "2 A|1,2|", "partial": "1 =", "final": "0 -",
		"fast": "0 -", "heir": "-2 H|1|", "force": "1 -", "renew": "[1] =", "giveback": "0 A|1|w pub",
	},
	"A two levels": {
		"try": "2 =", "wait": "2 =", "reenter": "2 =", "partial": "1 A|1|", "final": "0 -",
		"fast": "0 -", "heir": "-2 H|1|", "force": "1 -", "renew": "[1] =", "giveback": "0 A|1|w pub",
	},
	"A no level": {
		"try": "1 A|1|", "wait": "1 A|1|", "reenter": "1 A|2|", "partial": "1 =", "final": "0 -",
		"fast": "0 -", "heir": "-2 H|1|", "force": "1 -", "renew": "[1] =", "giveback": "0 A|1|w pub",
	},
	"A awaited": {
		"try": "1 =", "wait": "1 =", "reenter": "2 A|1,2|w", "partial": "1 =", "final": "0 -",
		"fast": "0 -", "heir": "-2 H|1|", "force": "1 -", "renew": "[1] =", "giveback": "0 = pub",
	},
	"A awaited, C queued": {
		"try": "1 =", "wait": "1 =", "reenter": "2 A|1,2|w", "partial": "1 =", "final": "0 C|1|w pub",
		"fast": "0 C|1|w pub", "heir": "0 C|1|w pub", "force": "1 C|1|w pub", "renew": "[1] =",
		"giveback": "0 = pub", // A rejoins ahead of C and is handed the lock back
	},
	"B": {
		"try": "held =", "wait": "held B|1|w", "reenter": "held =", "partial": "-1 =", "final": "-1 =",
		"fast": "-1 =", "heir": "-1 =", "force": "1 -", "renew": "[0] =", "giveback": "-1 =",
	},
	"B awaited": {
		"try": "held =", "wait": "held =", "reenter": "held =", "partial": "-1 =", "final": "-1 =",
		"fast": "-1 =", "heir": "-1 =", "force": "1 -", "renew": "[0] =", "giveback": "-1 =",
	},
}

// foreign lists the shapes no script of a Lock may touch: every op but renew is refused with
// WRONGTYPE, and renew answers "not held" (or renews a lock of A's of another kind: renewals check
// the owner only).
var foreign = map[string]string{
	"fair lock of A": "[1] =", "fenced lock of A": "[1] =", "spin lock of A": "[1] =", "plain string": "[0] =", "old claim mark": "[0] =",
	"bad mark": "[0] =", "empty level id": "[0] =", "no owner": "[0] =", "extra field": "[0] =",
	"hash": "[0] =", "list": "[0] =",
}

// Every script against every value shape.
func TestScriptsAgainstEveryShape(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	for name, renew := range foreign {
		row := map[string]string{}
		for _, op := range ops {
			row[op.name] = "WRONGTYPE ="
		}
		row["renew"] = renew
		want[name] = row
	}
	for _, sh := range shapes {
		for _, op := range ops {
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			setShape(t, rdb, sh.value)
			if sh.queued {
				rdb.ZAdd(ctx, queue, redis.Z{Score: 1, Member: "C/5000"})
				rdb.ZAdd(ctx, deadlines, redis.Z{Score: 1e15, Member: "C"}) // alive for ages
			}
			before, published := dump(t, rdb), publishCalls(t, rdb)
			reply, err := op.run(ctx, rdb)
			got := fmt.Sprint(reply)
			if err != nil {
				got = strings.Fields(err.Error())[0]
			}
			switch after := dump(t, rdb); after {
			case before:
				got += " ="
			case "":
				got += " -"
			default:
				got += " " + after
			}
			if publishCalls(t, rdb) > published {
				got += " pub"
			}
			if w := want[sh.name][op.name]; got != w {
				t.Errorf("%s on %q (%s) = %q; want %q", op.name, sh.value, sh.name, got, w)
			}
		}
	}
}

func setShape(t *testing.T, rdb *redis.Client, v string) {
	t.Helper()
	var err error
	switch {
	case v == "":
	case v == "hash:":
		err = rdb.HSet(t.Context(), lockKey, "A", 1).Err()
	case v == "list:":
		err = rdb.RPush(t.Context(), lockKey, "A|1|").Err()
	default:
		err = rdb.Set(t.Context(), lockKey, v, 0).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// publishCalls is how many PUBLISH commands the server has run, scripts included.
func publishCalls(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info := rdb.Info(t.Context(), "commandstats").Val()
	var n int64
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_publish:calls="); ok {
			fmt.Sscan(strings.SplitN(rest, ",", 2)[0], &n)
		}
	}
	return n
}

var epochDigits = regexp.MustCompile(`\|w[0-9]+`)

// dump describes the lock key: its string value, its type, or "" when absent.
func dump(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	typ := rdb.Type(t.Context(), lockKey).Val()
	switch typ {
	case "none":
		return ""
	case "string":
		return epochDigits.ReplaceAllString(rdb.Get(t.Context(), lockKey).Val(), "|w") // epochs are times
	}
	return typ + ":"
}

// Every script run twice in a row leaves the same state (the re-sent command of a lost reply), on
// every shape it accepts, and answers the same; except a final release, whose repeat may find its
// owner gone and answer -1 where the first run answered 0 (the client reads a repeat's "not held" as
// released: see releaseFinal in hold.go). A force unlock is not safe to run twice, and is never
// re-sent after a lost reply.
func TestScriptsSafeToRunTwice(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	for _, sh := range shapes {
		for _, op := range ops {
			if op.name == "claim" || op.name == "force" {
				continue // a claim is withdrawn by the undo, not by a repeat; a force unlock is sent once
			}
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			setShape(t, rdb, sh.value)
			first, err1 := op.run(ctx, rdb)
			state := dump(t, rdb)
			second, err2 := op.run(ctx, rdb)
			if first == int64(0) && second == int64(-1) && err1 == nil && err2 == nil {
				second = first // a final release's repeat: "not held", read as released
			}
			if fmt.Sprint(first, err1) != fmt.Sprint(second, err2) || dump(t, rdb) != state {
				t.Errorf("%s on %q twice: %v %v, then %v %v (state %q then %q)",
					op.name, sh.value, first, err1, second, err2, state, dump(t, rdb))
			}
		}
	}
}

// No record: a repeat of a final release finds the owner gone and answers -1 (the client reads that
// as released when it answers a re-send: see releaseFinal in hold.go), a repeat of a transfer finds
// the heir holding the lock and answers -2, a partial release overtaken by its owner's final one
// answers -1, and neither a release nor a force unlock writes any key besides the lock's own.
func TestReleaseKeepsNoRecord(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	rel := func(owner, level, final string, heir ...any) int64 {
		t.Helper()
		args := append([]any{owner, level, final, "", 60000, "PUBLISH", wakePrefix, "", 5000}, heir...)
		v, err := LockRelease.Run(ctx, rdb, releaseKeys, args...).Int64()
		if err != nil {
			t.Fatalf("release %s/%s: %v", owner, level, err)
		}
		return v
	}
	set := func(v string) { rdb.Set(ctx, lockKey, v, 0) }
	onlyLock := func(what string) {
		t.Helper()
		for _, k := range rdb.Keys(ctx, "*").Val() {
			if k != lockKey {
				t.Fatalf("after %s, key %s exists; want none but the lock's", what, k)
			}
		}
	}

	set("a:1|1,2|")
	if got := rel("a:1", "1", "1", "h:1"); got != -2 {
		t.Fatalf("transfer = %d; want -2", got)
	}
	if got := rel("a:1", "1", "1", "h:1"); got != -2 { // the heir holds it: a repeat
		t.Fatalf("repeat of the transfer = %d; want -2", got)
	}
	if got := rel("a:1", "2", "0"); got != -1 { // a's partial release, overtaken by the final one
		t.Fatalf("a's late partial release = %d; want -1", got)
	}
	if got := rel("h:1", "1", "1"); got != 0 {
		t.Fatalf("h's release = %d; want 0", got)
	}
	if got := rel("h:1", "1", "1"); got != -1 {
		t.Fatalf("repeat of h's release = %d; want -1", got)
	}
	onlyLock("releases")

	force := func() int64 {
		t.Helper()
		v, err := LockForceUnlock.Run(ctx, rdb, releaseKeys, "PUBLISH", wakePrefix, "").Int64()
		if err != nil {
			t.Fatalf("force: %v", err)
		}
		return v
	}
	set("y:1|1|")
	if got := force(); got != 1 {
		t.Fatalf("force unlock = %d; want 1", got)
	}
	if got := force(); got != 0 {
		t.Fatalf("force unlock of nothing = %d; want 0", got)
	}
	onlyLock("force unlocks")
}

// The wait queue, through the lock scripts: first come first served for a FairLock, a waiter that
// gave up or died leaves it, a hand-over reserves the lock until the waiter's deadline, fencing tokens
// increase with every holder, and heartbeats keep waiters alive.
func TestWaitQueue(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	// acqFull returns the script's answer: n, token, ticket, epoch.
	acqFull := func(owner, mode, kind string, timeoutMs int) []int64 {
		t.Helper()
		v, err := LockAcquire.Run(ctx, rdb, acquireKeys, owner, 60000, "1", mode, kind, timeoutMs, "").Int64Slice()
		if err != nil || len(v) != 4 {
			t.Fatalf("acquire %s: %v, %v", owner, v, err)
		}
		return v
	}
	// acq returns the token of a FencedLock, the level count (or refusal) otherwise.
	acq := func(owner, mode, kind string) int64 {
		t.Helper()
		v := acqFull(owner, mode, kind, 5000)
		if kind == "t" {
			return v[1]
		}
		return v[0]
	}
	rel := func(owner, kind string) int64 {
		t.Helper()
		v, err := LockRelease.Run(ctx, rdb, releaseKeys, owner, "1", "1", "", 60000, "PUBLISH", wakePrefix, kind, 5000).Int64()
		if err != nil {
			t.Fatalf("release %s: %v", owner, err)
		}
		return v
	}
	members := func() []string { // waiter ids, in order
		var ids []string
		for _, m := range queueWaiters(ctx, rdb, queue) {
			ids = append(ids, strings.SplitN(m, "/", 2)[0])
		}
		return ids
	}
	holder := func() string { return strings.SplitN(rdb.Get(ctx, lockKey).Val(), "|", 2)[0] }

	// FairLock: A holds; B and C queue in that order; a try by D never queues.
	if got := acq("A", "w", "f"); got != 1 {
		t.Fatalf("A = %d", got)
	}
	ticketB := acqFull("B", "w", "f", 5000)[2]
	acq("C", "w", "f")
	if again := acqFull("B", "w", "f", 5000)[2]; again != ticketB || ticketB <= 0 { // a repeat keeps B's place
		t.Fatalf("B's tickets %d, %d; want one positive ticket", ticketB, again)
	}
	if got := acq("D", "f", "f"); got >= 1 || fmt.Sprint(members()) != "[B C]" {
		t.Fatalf("try by D = %d, queue %v; want refused and [B C]", got, members())
	}
	// A's release hands the lock to B (reserved for B's waiter timeout, 5s), and wakes B only, with
	// B's ticket and the reservation.
	ps := rdb.Subscribe(ctx, wakePrefix+"B")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rel("A", "f"); got != 0 || holder() != "B" {
		t.Fatalf("A's release = %d, holder %q; want 0 and B", got, holder())
	}
	msg, err := ps.ReceiveMessage(ctx)
	var ticket, reserve int64
	if err == nil {
		_, err = fmt.Sscanf(msg.Payload, "B|%d|%d", &ticket, &reserve)
	}
	if err != nil || ticket != ticketB || reserve <= 3000 || reserve > 5000 {
		t.Fatalf("wake message = %v, %v; want B|<B's ticket %d>|<about 5000> on B's channel", msg, err, ticketB)
	}
	if ttl := rdb.PTTL(ctx, lockKey).Val(); ttl <= 3*time.Second || ttl > 5*time.Second {
		t.Fatalf("handed-over lock TTL = %v; want B's remaining waiter timeout (5s)", ttl)
	}
	if got := acq("B", "w", "f"); got != 1 || rdb.PTTL(ctx, lockKey).Val() < 50*time.Second {
		t.Fatalf("B's confirmation = %d (TTL %v); want 1 and its lease", got, rdb.PTTL(ctx, lockKey).Val())
	}
	// C gives up (the release script as undo takes it out of the queue), then a newcomer E queues.
	if got := rel("C", "f"); got != -1 || len(members()) != 0 {
		t.Fatalf("C's undo = %d, queue %v; want -1 and empty", got, members())
	}
	// E queues, and dies: its deadline passes, and nobody receives its wake-up; B's release finds
	// nobody alive and frees the lock.
	acq("E", "w", "f")
	rdb.ZAdd(ctx, deadlines, redis.Z{Score: 1, Member: "E"}) // E's deadline long passed
	if got := rel("B", "f"); got != 0 || rdb.Exists(ctx, lockKey, queue, deadlines).Val() != 0 {
		t.Fatalf("B's release = %d; want the lock freed and the dead waiter evicted, keys left: %v",
			got, rdb.Keys(ctx, "{L}*").Val())
	}

	// FencedLock: tokens increase with every holder, hand-overs included; re-entry keeps the token.
	rdb.FlushDB(ctx)
	if got := acq("A", "w", "t"); got != 1 {
		t.Fatalf("A's token = %d; want 1", got)
	}
	if got := acq("A", "w", "t"); got != 1 {
		t.Fatalf("A's token on a repeat = %d; want 1", got)
	}
	acq("B", "w", "t")
	rel("A", "t")
	if got := acq("B", "w", "t"); got != 2 {
		t.Fatalf("B's token after the hand-over = %d; want 2", got)
	}
	rel("B", "t")
	if got := acq("C", "f", "t"); got != 3 {
		t.Fatalf("C's token = %d; want 3", got)
	}

	// Heartbeats move a queued waiter's client's deadline; a waiter no longer queued answers 0.
	rdb.FlushDB(ctx)
	acq("A", "w", "")
	acqFull("B", "w", "", 60000)
	now := rdb.Time(ctx).Val()
	rdb.ZAdd(ctx, deadlines, redis.Z{Score: float64(now.UnixMilli() + 1000), Member: "B"})
	before := rdb.ZScore(ctx, deadlines, "B").Val()
	beatKeys := []string{lockKey, queue, deadlines, lockKey, queue, deadlines}
	beat, err := WaitBeat.Run(ctx, rdb, beatKeys, 60000, "B", "Z").Int64Slice()
	if err != nil || fmt.Sprint(beat) != "[1 0]" {
		t.Fatalf("heartbeat = %v, %v; want [1 0]", beat, err)
	}
	if after := rdb.ZScore(ctx, deadlines, "B").Val(); after < before+50000 {
		t.Fatalf("B's deadline %v -> %v; want moved by about a minute", before, after)
	}
	if ttl := rdb.PTTL(ctx, queue).Val(); ttl < 100*time.Second {
		t.Fatalf("queue TTL after the heartbeat = %v; want two waiter timeouts (2m)", ttl)
	}
	// The lock ended without a release (its lease ran out): the heartbeat tells B to try again.
	rdb.Del(ctx, lockKey)
	if beat, err := WaitBeat.Run(ctx, rdb, beatKeys[:3], 60000, "B").Int64Slice(); err != nil || fmt.Sprint(beat) != "[0]" {
		t.Fatalf("heartbeat of a waiter for a free lock = %v, %v; want [0]", beat, err)
	}
	// The queue of waiters that all died expires on its own.
	rdb.FlushDB(ctx)
	acq("A", "w", "")
	if err := LockAcquire.Run(ctx, rdb, acquireKeys, "B", 60000, "1", "w", "", 100, "").Err(); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, queue).Val(); ttl <= 0 || ttl > 200*time.Millisecond {
		t.Fatalf("queue TTL = %v; want two waiter timeouts (200ms)", ttl)
	}
	// A waiter with a longer timeout lengthens the keys' life; a shorter one never shortens it.
	acqFull("C", "w", "", 60000)
	acqFull("D", "w", "", 100)
	if ttl := rdb.PTTL(ctx, deadlines).Val(); ttl < 100*time.Second {
		t.Fatalf("queue TTL = %v; want two of the longest waiter timeout (2m)", ttl)
	}

	// A waiter served and queued again has a new ticket.
	rdb.FlushDB(ctx)
	acq("A", "w", "")
	first := acqFull("B", "w", "", 5000)[2]
	rel("A", "") // hands the lock to B
	rel("B", "")
	acq("C", "w", "")
	if again := acqFull("B", "w", "", 5000)[2]; again == first || again <= 0 {
		t.Fatalf("B's tickets before and after being served: %d, %d; want two different", first, again)
	}

	// More dead waiters than one call evicts: a FairLock never goes to a newcomer ahead of the live
	// waiter behind them; calls evict them bit by bit, until the live waiter is at the head.
	rdb.FlushDB(ctx)
	acq("A", "w", "f")
	now = rdb.Time(ctx).Val()
	for i := range 1500 { // each of its own client: the most expensive to evict
		id := fmt.Sprintf("dead%d", i)
		rdb.ZAdd(ctx, queue, redis.Z{Score: float64(now.UnixMicro() - 10_000_000 + int64(i)), Member: id + "/5000"})
		rdb.ZAdd(ctx, deadlines, redis.Z{Score: float64(now.UnixMilli() - 1000), Member: id})
	}
	acq("B", "w", "f")
	rel("A", "f") // evicts 1024, finds no live head among them: frees the lock
	for i := 0; ; i++ {
		got := acq("N", "f", "f")
		if got >= 1 {
			t.Fatalf("newcomer N took the FairLock with %v queued", members())
		}
		if fmt.Sprint(members()) == "[B]" {
			break
		}
		if i > 3 {
			t.Fatalf("dead waiters not evicted: %d left", len(members()))
		}
	}
	if got := acq("B", "w", "f"); got != 1 {
		t.Fatalf("B, now at the head = %d; want 1", got)
	}
}

// Liveness refreshes: a join names the epoch of its client's recent refresh and skips refreshing
// while the lock carries that epoch; the queue emptying deletes the deadlines and ends the epoch, so
// the next join refreshes whatever its client remembers. A hand-over nobody receives reserves the lock
// for the waiter's remaining deadline only.
func TestQueueEpochs(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	join := func(owner, known string) []int64 {
		t.Helper()
		v, err := LockAcquire.Run(ctx, rdb, acquireKeys, owner, 60000, "1", "w", "", 5000, known).Int64Slice()
		if err != nil || len(v) != 4 {
			t.Fatalf("acquire %s: %v, %v", owner, v, err)
		}
		return v
	}
	rel := func(owner string) {
		t.Helper()
		if err := LockRelease.Run(ctx, rdb, releaseKeys, owner, "1", "1", "", 60000, "PUBLISH", wakePrefix, "", 5000).Err(); err != nil {
			t.Fatalf("release %s: %v", owner, err)
		}
	}
	join("A", "")
	first := join("c:1", "") // client c queues: refreshed under a new epoch
	epoch := strconv.FormatInt(first[3], 10)
	if first[0] >= 1 || first[3] <= 0 || !strings.HasSuffix(rdb.Get(ctx, lockKey).Val(), "|w"+epoch) {
		t.Fatalf("first join = %v, lock %q; want queued, refreshed, lock marked with the epoch", first, rdb.Get(ctx, lockKey).Val())
	}
	rdb.ZAdd(ctx, deadlines, redis.Z{Score: 1e15, Member: "c"}) // so that a refresh shows
	if again := join("c:2", epoch); again[3] != 0 || rdb.ZScore(ctx, deadlines, "c").Val() != 1e15 {
		t.Fatalf("join under the known epoch = %v, deadline %v; want no refresh", again, rdb.ZScore(ctx, deadlines, "c").Val())
	}
	if again := join("c:3", "123"); again[3] != first[3] || rdb.ZScore(ctx, deadlines, "c").Val() == 1e15 {
		t.Fatalf("join under another epoch = %v; want a refresh under %s", again, epoch)
	}
	// Nobody subscribed for c: A's release hands the lock to c:1 for the rest of c's deadline.
	now := rdb.Time(ctx).Val()
	rdb.ZAdd(ctx, deadlines, redis.Z{Score: float64(now.UnixMilli() + 1500), Member: "c"})
	rel("A")
	if v, ttl := rdb.Get(ctx, lockKey).Val(), rdb.PTTL(ctx, lockKey).Val(); !strings.HasPrefix(v, "c:1|1|w"+epoch) || ttl > 1500*time.Millisecond || ttl < 1000*time.Millisecond {
		t.Fatalf("after a hand-over nobody received: %q, TTL %v; want c:1's, for c's remaining 1.5s", v, ttl)
	}
	rel("c:1") // to c:2
	rel("c:2") // to c:3
	rel("c:3") // nobody left: the deadlines go with the lock
	if n := rdb.Exists(ctx, lockKey, queue, deadlines).Val(); n != 0 {
		t.Fatalf("%d keys left after the last release: %v", n, rdb.Keys(ctx, "*").Val())
	}
	join("A", "")
	if again := join("c:4", epoch); again[3] <= first[3] || rdb.ZScore(ctx, deadlines, "c").Val() == 0 {
		t.Fatalf("join remembering the ended epoch = %v; want a refresh under a new one", again)
	}
}

// A give-back (the undo of a grant answered too late, lock_release.lua ARGV[11]) puts the owner back
// at its place: with its ticket, it is served before the waiters that arrived after it and after
// those that arrived before; with none, before everyone. A give-back by an owner that no longer holds
// the lock only leaves the queue.
func TestGiveBackKeepsPlace(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	giveBack := func(owner, ticket string) int64 {
		t.Helper()
		args := []any{owner, "1", "1", "", 60000, "PUBLISH", wakePrefix, "f", 5000, "", ticket}
		v, err := LockRelease.Run(ctx, rdb, releaseKeys, args...).Int64()
		if err != nil {
			t.Fatalf("give-back %s: %v", owner, err)
		}
		return v
	}
	holder := func() string { return strings.SplitN(rdb.Get(ctx, lockKey).Val(), "|", 2)[0] }
	for _, tc := range []struct {
		ticket string // A's
		want   string // who holds the lock after A's give-back, then the queue
	}{
		{"50", "A B/5000 C/5000"},  // A arrived before B (100) and C (200)
		{"150", "B A/5000 C/5000"}, // between them
		{"250", "B C/5000 A/5000"}, // after both
		{"0", "A B/5000 C/5000"},   // A took the lock without queueing: ahead of everyone
	} {
		rdb.FlushDB(ctx)
		rdb.Set(ctx, lockKey, "A|1|w1|f", 0)
		rdb.ZAdd(ctx, queue, redis.Z{Score: 100, Member: "B/5000"}, redis.Z{Score: 200, Member: "C/5000"})
		rdb.ZAdd(ctx, deadlines, redis.Z{Score: 1e15, Member: "B"}, redis.Z{Score: 1e15, Member: "C"})
		got := giveBack("A", tc.ticket)
		if state := strings.Join(append([]string{holder()}, queueWaiters(ctx, rdb, queue)...), " "); got != 0 || state != tc.want {
			t.Errorf("ticket %s: give-back = %d, holder and queue %q; want 0, %q", tc.ticket, got, state, tc.want)
		}
		if tc.want[0] == 'A' && rdb.PTTL(ctx, lockKey).Val() > 5*time.Second {
			t.Errorf("ticket %s: the lock handed back is kept %v; want the waiter timeout at most", tc.ticket, rdb.PTTL(ctx, lockKey).Val())
		}
	}
	// The lock lapsed before the give-back: A leaves the queue, nobody is handed anything.
	rdb.FlushDB(ctx)
	rdb.ZAdd(ctx, queue, redis.Z{Score: 100, Member: "B/5000"})
	rdb.ZAdd(ctx, deadlines, redis.Z{Score: 1e15, Member: "B"})
	if got := giveBack("A", "50"); got != -1 || rdb.Exists(ctx, lockKey).Val() != 0 || rdb.ZCard(ctx, queue).Val() != 1 {
		t.Errorf("give-back of a lapsed grant = %d, lock %d, queue %v; want -1, none, [B]", got, rdb.Exists(ctx, lockKey).Val(), queueWaiters(ctx, rdb, queue))
	}
}

// A ReadWriteLock waiter's registration carries its own waiter timeout, and a grant reserves the
// lock for that long, whatever the releasing client's timeout; a registration in the older format
// (no timeout) still decodes, and is reserved the releasing client's. A give-back (rw_release.lua
// ARGV[8]) registers the owner again at its place, so the lock is given back to it.
func TestRWWaiterTimeouts(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	const key = "{RW}"
	sub := rdb.Subscribe(ctx, "{RW}:w:A", "{RW}:w:B", "{RW}:w:C")
	defer sub.Close()
	for range 3 {
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
	}
	now := func() int64 { return rdb.Time(ctx).Val().UnixMilli() }
	rel := func(owner, reserveMs string, rejoin ...any) int64 {
		t.Helper()
		args := append([]any{owner, "1", "1", "x", "PUBLISH", "{RW}:w:", reserveMs}, rejoin...)
		v, err := RWRelease.Run(ctx, rdb, []string{key}, args...).Int64()
		if err != nil {
			t.Fatalf("release %s: %v", owner, err)
		}
		return v
	}
	msg := func() string {
		t.Helper()
		m, err := sub.ReceiveMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m.Payload
	}
	far := now() + 600000
	rdb.HSet(ctx, key, "w", fmt.Sprintf("A:1|1|%d", far),
		"ww:B:1", fmt.Sprintf("10|2000|%d", far), // B's own timeout: 2s
		"ww:C:1", fmt.Sprintf("20|%d", far), // the older format
		"seq", 20, "nr", 0, "nww", 2, "wwd", far)
	rdb.PExpire(ctx, key, time.Hour)
	if got := rel("A:1", "20000"); got != 0 {
		t.Fatalf("release A = %d", got)
	}
	if m := msg(); m != "B:1|10|2000" {
		t.Errorf("B's grant message %q; want its own timeout, 2000", m)
	}
	w := strings.Split(rdb.HGet(ctx, key, "w").Val(), "|")
	if exp, _ := strconv.ParseInt(w[len(w)-1], 10, 64); w[0] != "B:1" || exp > now()+2000 {
		t.Errorf("writer %v; want B:1 for 2s at most", w)
	}
	if got := rel("B:1", "20000"); got != 0 {
		t.Fatalf("release B = %d", got)
	}
	if m := msg(); m != "C:1|20|20000" {
		t.Errorf("C's grant message %q; want the releaser's timeout, 20000 (C's registration names none)", m)
	}
	// C, given the lock, gives it back with its ticket while D (ticket 30) waits: C is given it again.
	rdb.HSet(ctx, key, "ww:D:1", fmt.Sprintf("30|5000|%d", far), "nww", 1, "wwd", far)
	if got := rel("C:1", "3000", "20"); got != 0 {
		t.Fatalf("give-back C = %d", got)
	}
	if m := msg(); m != "C:1|20|3000" {
		t.Errorf("C's grant message after its give-back %q; want C:1|20|3000", m)
	}
	h := rdb.HGetAll(ctx, key).Val()
	if !strings.HasPrefix(h["w"], "C:1|1|") || h["ww:D:1"] == "" || h["ww:C:1"] != "" || h["nww"] != "1" {
		t.Errorf("after C's give-back: %v; want C writing, D waiting, nww 1", h)
	}
}

// queueWaiters lists the members of wait queue q scored below +inf, in order: its waiters, without
// the end marker (see wait_queue.lua).
func queueWaiters(ctx context.Context, rdb *redis.Client, q string) []string {
	return rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: q, Start: "-inf", Stop: "(+inf", ByScore: true}).Val()
}
