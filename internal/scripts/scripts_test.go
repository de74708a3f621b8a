package scripts_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/leakcheck"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/redistest"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }

// Every script loads, and its file opens with the contract header.
func TestLoadAndHeaders(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for name, s := range scripts.All {
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
	lockKey = "{L}"
	channel = "{L}:ch"
	history = "{L}:rel:A"
	keys    = []string{lockKey, channel, history}
)

// shapes are the values the lock key can hold: every format the scripts write, and the foreign or
// malformed values they must refuse without a change. A is the owner the operations act for.
var shapes = []struct {
	name  string
	value string // "" absent; "hash:"/"list:" another type
}{
	{"free", ""},
	{"A one level", "A|1|"},
	{"A two levels", "A|1,2|"},
	{"A no level", "A||"},
	{"A awaited", "A|1|w"},
	{"A claimed by B", "A|1|B@"},
	{"B", "B|1|"},
	{"B awaited", "B|1|w"},
	{"B claimed by A", "B|1|A@"},
	{"plain string", "hello"},
	{"bad mark", "A|1|x"},
	{"empty level id", "A|1,,2|"},
	{"no owner", "|1|"},
	{"extra field", "A|1||"},
	{"hash", "hash:"},
	{"list", "list:"},
}

// ops are calls of every script, each as owner A (heir H for a transfer).
var ops = []struct {
	name string
	run  func(ctx context.Context, rdb *redis.Client) (any, error)
}{
	{"fresh", acquire("1", "f")},
	{"claim", acquire("1", "s")},
	{"reenter", acquire("2", "r")},
	{"partial", release("2", "0", "")},
	{"final", release("1", "1", "")},
	{"fast", release("1", "1", "A|1|")},
	{"heir", release("1", "1", "", "H")},
	{"force", func(ctx context.Context, rdb *redis.Client) (any, error) {
		return scripts.LockForceUnlock.Run(ctx, rdb, keys, "PUBLISH", "req-1", 60000).Int64()
	}},
	{"renew", func(ctx context.Context, rdb *redis.Client) (any, error) {
		return scripts.LockRenew.Run(ctx, rdb, keys[:1], 60000, "A").Int64Slice()
	}},
}

func acquire(level, mode string) func(context.Context, *redis.Client) (any, error) {
	return func(ctx context.Context, rdb *redis.Client) (any, error) {
		v, err := scripts.LockAcquire.Run(ctx, rdb, keys[:1], "A", 60000, level, mode).Int64()
		if v <= -2 { // -3 - PTTL of a lock held by another (PTTL -1 here: no TTL)
			return "held", err
		}
		return v, err
	}
}

func release(level, final, expected string, heir ...any) func(context.Context, *redis.Client) (any, error) {
	return func(ctx context.Context, rdb *redis.Client) (any, error) {
		args := append([]any{"A", level, final, expected, 60000, 60000, 2000, "PUBLISH"}, heir...)
		return scripts.LockRelease.Run(ctx, rdb, keys, args...).Int64()
	}
}

// want[shape][op] is "<reply> <lock key after>[ pub]": the reply (WRONGTYPE for a refusal), the
// value left in the lock key ("-" absent, "=" unchanged), and "pub" if a wake-up was published.
// Refusals must leave the key untouched, as must anything on a lock held by another owner except
// the waiter mark and claims.
var want = map[string]map[string]string{
	"free": {
		"fresh": "1 A|1|", "claim": "1 A|1|", "reenter": "-1 =", "partial": "-1 =", "final": "-1 =",
		"fast": "-1 =", "heir": "-1 =", "force": "0 =", "renew": "[0] =",
	},
	"A one level": {
		"fresh": "1 =", "claim": "1 =", "reenter": "2 A|1,2|", "partial": "1 =", "final": "0 -",
		"fast": "0 -", "heir": "-2 H|1|", "force": "1 - pub", "renew": "[1] =",
	},
	"A two levels": {
		"fresh": "2 =", "claim": "2 =", "reenter": "2 =", "partial": "1 A|1|", "final": "0 -",
		"fast": "0 -", "heir": "-2 H|1|", "force": "1 - pub", "renew": "[1] =",
	},
	"A no level": {
		"fresh": "1 A|1|", "claim": "1 A|1|", "reenter": "1 A|2|", "partial": "1 =", "final": "0 -",
		"fast": "0 -", "heir": "-2 H|1|", "force": "1 - pub", "renew": "[1] =",
	},
	"A awaited": {
		"fresh": "1 =", "claim": "1 =", "reenter": "2 A|1,2|w", "partial": "1 =", "final": "0 - pub",
		"fast": "0 - pub", "heir": "0 - pub", "force": "1 - pub", "renew": "[1] =",
	},
	"A claimed by B": {
		"fresh": "1 =", "claim": "1 =", "reenter": "2 A|1,2|B@", "partial": "1 =", "final": "0 B|1|w pub",
		"fast": "0 B|1|w pub", "heir": "0 B|1|w pub", "force": "1 - pub", "renew": "[1] =",
	},
	"B": {
		"fresh": "held B|1|w", "claim": "held B|1|A@", "reenter": "held =", "partial": "-1 =", "final": "-1 =",
		"fast": "-1 =", "heir": "-1 =", "force": "1 - pub", "renew": "[0] =",
	},
	"B awaited": {
		"fresh": "held =", "claim": "held B|1|A@", "reenter": "held =", "partial": "-1 =", "final": "-1 =",
		"fast": "-1 =", "heir": "-1 =", "force": "1 - pub", "renew": "[0] =",
	},
	"B claimed by A": {
		"fresh": "held =", "claim": "held =", "reenter": "held =", "partial": "-1 B|1|w", "final": "-1 B|1|w",
		"fast": "-1 B|1|w", "heir": "-1 B|1|w", "force": "1 - pub", "renew": "[0] =",
	},
}

// foreign lists the shapes no script may touch: every op but renew is refused with WRONGTYPE, and
// renew answers "not held".
var foreign = []string{"plain string", "bad mark", "empty level id", "no owner", "extra field", "hash", "list"}

// Every script against every value shape.
func TestScriptsAgainstEveryShape(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	for _, name := range foreign {
		row := map[string]string{}
		for _, op := range ops {
			row[op.name] = "WRONGTYPE ="
		}
		row["renew"] = "[0] ="
		want[name] = row
	}
	for _, sh := range shapes {
		for _, op := range ops {
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			setShape(t, rdb, sh.value)
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

// dump describes the lock key: its string value, its type, or "" when absent.
func dump(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	typ := rdb.Type(t.Context(), lockKey).Val()
	switch typ {
	case "none":
		return ""
	case "string":
		return rdb.Get(t.Context(), lockKey).Val()
	}
	return typ + ":"
}

// Every script run twice in a row answers the same and leaves the same state (the re-sent command
// of a lost reply), on every shape it accepts.
func TestScriptsSafeToRunTwice(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	for _, sh := range shapes {
		for _, op := range ops {
			if op.name == "claim" {
				continue // a claim is withdrawn by the undo, not by a repeat
			}
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			setShape(t, rdb, sh.value)
			first, err1 := op.run(ctx, rdb)
			state := dump(t, rdb)
			second, err2 := op.run(ctx, rdb)
			if fmt.Sprint(first, err1) != fmt.Sprint(second, err2) || dump(t, rdb) != state {
				t.Errorf("%s on %q twice: %v %v, then %v %v (state %q then %q)",
					op.name, sh.value, first, err1, second, err2, state, dump(t, rdb))
			}
		}
	}
}

// The release history: a repeat of a final release is recognised after the lock changed hands any
// number of times, as is a partial release overtaken by its owner's final one; the record of a
// client's release is replaced only by that client's next final release; a force unlock's repeat
// answers as the first run did without deleting a lock acquired since.
func TestReleaseHistory(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	hist := func(owner string) string { return "{L}:rel:" + strings.SplitN(owner, ":", 2)[0] }
	rel := func(owner, level, final string, heir ...any) int64 {
		t.Helper()
		args := append([]any{owner, level, final, "", 60000, 5000, 2000, "PUBLISH"}, heir...)
		v, err := scripts.LockRelease.Run(ctx, rdb, []string{lockKey, channel, hist(owner)}, args...).Int64()
		if err != nil {
			t.Fatalf("release %s/%s: %v", owner, level, err)
		}
		return v
	}
	set := func(v string) { rdb.Set(ctx, lockKey, v, 0) }

	set("a:1|1,2|")
	if got := rel("a:1", "1", "1", "h:1"); got != -2 {
		t.Fatalf("transfer = %d; want -2", got)
	}
	if got := rel("a:1", "1", "1", "h:1"); got != -2 { // the heir holds it: a repeat
		t.Fatalf("repeat of the transfer = %d; want -2", got)
	}
	if got := rel("a:1", "2", "0"); got != -2 { // a's partial release, overtaken by the final one
		t.Fatalf("a's late partial release = %d; want -2 (from the history)", got)
	}
	if got := rel("h:1", "1", "1"); got != 0 {
		t.Fatalf("h's release = %d; want 0", got)
	}
	// 200 releases by owners of other clients in between do not touch a's record.
	for i := range 200 {
		owner := fmt.Sprintf("c%d:1", i)
		set(owner + "|1|")
		if got := rel(owner, "1", "1"); got != 0 {
			t.Fatalf("release %d = %d", i, got)
		}
	}
	if got := rel("a:1", "1", "1", "h:1"); got != -2 {
		t.Fatalf("a's repeat after 201 other releases = %d; want -2", got)
	}
	if ttl := rdb.PTTL(ctx, hist("a:1")).Val().Milliseconds(); ttl <= 3000 || ttl > 5000 {
		t.Fatalf("history TTL = %dms; want the 5000ms re-send window", ttl)
	}
	// The next final release of a's client replaces the record (a's own release had answered).
	set("a:2|1|")
	if got := rel("a:2", "1", "1"); got != 0 {
		t.Fatal(got)
	}
	if got := rel("a:1", "1", "1"); got != -1 {
		t.Fatalf("a:1's release after a:2's = %d; want -1 (its record was replaced)", got)
	}

	// A force unlock records its outcome under its request, so a repeat does not delete again.
	force := func(req string) int64 {
		t.Helper()
		v, err := scripts.LockForceUnlock.Run(ctx, rdb, []string{lockKey, channel, "{L}:fu:" + req}, "PUBLISH", req, 5000).Int64()
		if err != nil {
			t.Fatalf("force %s: %v", req, err)
		}
		return v
	}
	set("y:1|1|")
	if got := force("f1"); got != 1 {
		t.Fatalf("force unlock = %d; want 1", got)
	}
	set("z:1|1|")
	if got := force("f1"); got != 1 || rdb.Get(ctx, lockKey).Val() != "z:1|1|" {
		t.Fatalf("repeat of the force unlock = %d, lock %q; want 1 and z's lock untouched", got, rdb.Get(ctx, lockKey).Val())
	}
	rdb.Del(ctx, lockKey)
	if got := force("f2"); got != 0 {
		t.Fatalf("force unlock of nothing = %d; want 0", got)
	}
	set("z:1|1|")
	if got := force("f2"); got != 0 || rdb.Get(ctx, lockKey).Val() != "z:1|1|" {
		t.Fatalf("repeat of a force unlock that found nothing = %d; want 0 and z's lock untouched", got)
	}
	if ttl := rdb.PTTL(ctx, "{L}:fu:f2").Val().Milliseconds(); ttl <= 3000 || ttl > 5000 {
		t.Fatalf("force unlock record TTL = %dms; want the 5000ms re-send window", ttl)
	}
}
