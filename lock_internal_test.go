package redisson

import (
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/redistest"
)

// The Go decoder and the Lua one (internal/scripts/lock_value.lua) agree on every value: which are
// lock strings, who owns them, and how many levels they hold.
func TestDecoderAgreesWithLua(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	values := []string{
		"A|1|", "A|1,2|", "A||", "A|1|w", "A|a,b,zz9|", "c0ffee:1a|1,2,3|w", "A|1||f", "A|1|w|f",
		"A|1||t7", "A|1,2|w|t123456789012", "hello", "", "|", "||", "|1|", "A|1", "A|1||", "A|1|x",
		"A|1|w|", "A|1|B@", "A|1|@", "A@|1|", "A;|1|", "A=|1|", "A,|1|", "A|1,,2|", "A|1,|", "A|,1|",
		"A|1-2|", "A|Z|", "A|1||g", "A|1||t", "A|1||tx", "A|1||t1|", "A|1||f|", "A|1||F",
		"A|1|w1763900000000000", "A|1,2|w17|f", "A|1|w5|t9", "A|1|w12a", "A|1|1", "A|1|ww1",
		"A|1||s", "A|1,2|w3|s", "A|1||s|", "A|1||S", "A|1||st",
	}
	keys := []string{"d", "{d}:~q", "{d}:~qt", "{d}:~fence"}
	for _, s := range values {
		v, ok := decodeLockValue(s)
		if err := rdb.Set(ctx, "d", s, 0).Err(); err != nil {
			t.Fatal(err)
		}
		// Re-entering as the owner Go decoded, as the kind Go decoded, with a new level, answers
		// Lua's level count + 1 (and the token Go decoded); a value Lua refuses answers WRONGTYPE.
		cmd := scripts.LockAcquire.Run(ctx, rdb, keys, v.owner, 0, "new", "r", v.kind, 5000, "")
		var n, token int64
		r, err := cmd.Int64Slice()
		if err == nil {
			n, token = r[0], r[1]
		}
		luaOK := err == nil || !strings.Contains(err.Error(), "WRONGTYPE")
		if err != nil && luaOK {
			t.Fatalf("%q: %v", s, err)
		}
		switch {
		case ok != luaOK:
			t.Errorf("%q: Go decodes it: %v; Lua: %v", s, ok, luaOK)
		case ok && (n != int64(v.levels+1) || token != v.token):
			t.Errorf("%q: Go decodes %+v; Lua, re-entered by that owner, answers %d levels, token %d", s, v, n, token)
		}
		// Every other kind refuses it.
		for _, k := range []*lockKind{kindPlain, kindFair, kindFenced, kindSpin} {
			kind := k.marker
			if !ok || kind == v.kind {
				continue
			}
			err := scripts.LockAcquire.Run(ctx, rdb, keys, v.owner, 0, "new", "r", kind, 5000, "").Err()
			if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
				t.Errorf("%q (kind %q) re-entered as kind %q: %v; want WRONGTYPE", s, v.kind, kind, err)
			}
		}
	}
}

// The Go decoder of Java Redisson's RLock hash and the Lua one (compat_lock_value.lua) agree on every
// hash: which are Redisson locks, who holds them, and with what count.
func TestRedissonDecoderAgreesWithLua(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	hashes := []map[string]string{
		{}, {"uuid-1:1": "1"}, {"a:1": "2"}, {"a": "17"}, {"a": "0"}, {"a": "-1"}, {"a": "x"}, {"a": ""},
		{"a": "01"}, {"a": "+1"}, {"a": "1.5"}, {"a": "1 "}, {"a": "1", "b": "1"}, {"mode": "write", "a:write": "1"},
		{"w": "A|1|9", "nr": "0", "nww": "0", "wwd": "0"}, {"": "1"}, {"a": "99999999999"},
	}
	for _, h := range hashes {
		v, ok := decodeRedissonLock(h)
		rdb.Del(ctx, "d")
		for f, c := range h {
			if err := rdb.HSet(ctx, "d", f, c).Err(); err != nil {
				t.Fatal(err)
			}
		}
		// Re-entering as the holder Go decoded answers Lua's count + 1; a hash Lua refuses answers
		// WRONGTYPE; a free lock (no hash) is not re-entered.
		r, err := scripts.CompatLockAcquire.Run(ctx, rdb, []string{"d"}, v.owner, 0, "r").Int64Slice()
		luaOK := err == nil || !strings.Contains(err.Error(), "WRONGTYPE")
		if err != nil && luaOK {
			t.Fatalf("%v: %v", h, err)
		}
		switch {
		case ok != luaOK:
			t.Errorf("%v: Go decodes it: %v; Lua: %v", h, ok, luaOK)
		case ok && v.owner == "" && r[0] != 0:
			t.Errorf("%v: Go decodes a free lock; Lua re-entered it (%v)", h, r)
		case ok && v.owner != "" && r[0] != int64(v.count+1):
			t.Errorf("%v: Go decodes %+v; Lua, re-entered by that owner, answers %v", h, v, r)
		}
	}
}

// A Client names the epoch of its last liveness refresh for a lock only while that refresh was sent
// less than a third of the waiter timeout ago, and a late answer to an older refresh never replaces
// a newer one's.
func TestKnownEpoch(t *testing.T) {
	c := &Client{cfg: config{waiterTimeout: 3 * time.Second}}
	t0 := time.Now()
	if got := c.knownEpoch("L", t0); got != "" {
		t.Fatalf("nothing noted: %q; want \"\"", got)
	}
	c.noteEpoch("L", 7, t0)
	c.noteEpoch("L", 5, t0.Add(-time.Millisecond)) // an older refresh answered late
	if got := c.knownEpoch("L", t0.Add(999*time.Millisecond)); got != "7" {
		t.Fatalf("within a third of the timeout: %q; want 7", got)
	}
	if got := c.knownEpoch("L", t0.Add(time.Second)); got != "" {
		t.Fatalf("a third of the timeout later: %q; want \"\"", got)
	}
	if got := c.knownEpoch("M", t0); got != "" {
		t.Fatalf("another lock: %q; want \"\"", got)
	}
}
