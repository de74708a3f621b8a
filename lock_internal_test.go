package redisson

import (
	"strings"
	"testing"

	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/redistest"
)

// The Go decoder and the Lua one (internal/scripts/lock_value.lua) agree on every value: which are
// lock strings, who owns them, and how many levels they hold.
func TestDecoderAgreesWithLua(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	values := []string{
		"A|1|", "A|1,2|", "A||", "A|1|w", "A|1|B@", "A|a,b,zz9|", "c0ffee:1a|1,2,3|w",
		"hello", "", "|", "||", "|1|", "A|1", "A|1||", "A|1|x", "A|1|w|", "A|1|B@@", "A|1|@",
		"A@|1|", "A;|1|", "A=|1|", "A,|1|", "A|1,,2|", "A|1,|", "A|,1|", "A|1|B;@", "A|1-2|", "A|Z|",
	}
	for _, v := range values {
		owner, levels, ok := decodeLockValue(v)
		if err := rdb.Set(ctx, "{d}", v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		// Re-entering as the owner Go decoded, with a new level, answers Lua's level count + 1; a
		// value Lua refuses answers WRONGTYPE.
		n, err := scripts.LockAcquire.Run(ctx, rdb, []string{"{d}"}, owner, 0, "new", "r").Int64()
		luaOK := err == nil || !strings.Contains(err.Error(), "WRONGTYPE")
		if err != nil && luaOK {
			t.Fatalf("%q: %v", v, err)
		}
		switch {
		case ok != luaOK:
			t.Errorf("%q: Go decodes it: %v; Lua: %v", v, ok, luaOK)
		case ok && n != int64(levels+1):
			t.Errorf("%q: Go decodes owner %q with %d levels; Lua, re-entered by that owner, answers %d", v, owner, levels, n)
		}
	}
}
