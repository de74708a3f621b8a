package redisson

import (
	"errors"
	"testing"

	"github.com/goredisson/redisson/internal/slot"
)

func TestObjectKeys(t *testing.T) {
	cases := []struct {
		prefix, name string
		key, aux     string
		wantErr      bool
	}{
		{"", "orders:42", "orders:42", "{orders:42}:~ch", false},
		{"app:", "orders:42", "app:orders:42", "{app:orders:42}:~ch", false},
		{"", "{user:7}:cart", "{user:7}:cart", "{user:7}:cart:~ch", false}, // the user's tag is kept
		{"app:", "{user:7}:cart", "app:{user:7}:cart", "app:{user:7}:cart:~ch", false},
		{"", "a:b~c", "a:b~c", "{a:b~c}:~ch", false},
		{"", "a{b", "", "", true},  // no tag: Redis would hash it whole, "{a{b}:~x" by "a{b"
		{"", "a}b", "", "", true},  // no tag: "{a}b}:~x" would hash "a"
		{"", "}a", "", "", true},   // likewise
		{"", "{}a", "", "", true},  // the empty tag "{}" makes Redis hash the whole key
		{"", "{x}", "", "", true},  // a bare tag: its auxiliary names would be those of "x"
		{"", "a:~q", "", "", true}, // ":~" is the package's namespace
		{"app:", "~q", "", "", true},
		{"", "", "", "", true},
	}
	for _, c := range cases {
		key, aux, err := objectKeys(c.prefix, c.name)
		if c.wantErr {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("objectKeys(%q, %q) error = %v; want ErrInvalidArgument", c.prefix, c.name, err)
			}
			continue
		}
		if err != nil || key != c.key || aux("ch") != c.aux {
			t.Errorf("objectKeys(%q, %q) = %q, %q, %v; want %q, %q", c.prefix, c.name, key, aux("ch"), err, c.key, c.aux)
			continue
		}
		// Every key of one object hashes to one Cluster slot.
		if slot.Of(key) != slot.Of(aux("ch")) || slot.Of(key) != slot.Of(aux("rel")) {
			t.Errorf("%q, %q and %q are in slots %d, %d, %d", key, aux("ch"), aux("rel"),
				slot.Of(key), slot.Of(aux("ch")), slot.Of(aux("rel")))
		}
	}
}

// Keys and channels of distinct objects never collide, whatever the names, and
// every name of an object shares one slot. Names are drawn from the characters that matter to the
// layout.
func TestObjectKeysNeverCollide(t *testing.T) {
	alphabet := []string{"x", "{", "}", ":", "~", "ch", "a"}
	var names []string
	var grow func(prefix string, depth int)
	grow = func(prefix string, depth int) {
		if prefix != "" {
			names = append(names, prefix)
		}
		if depth == 0 {
			return
		}
		for _, a := range alphabet {
			grow(prefix+a, depth-1)
		}
	}
	grow("", 4)
	seen := map[string]string{} // key or channel -> "name/suffix" that produced it
	for _, prefix := range []string{"", "p:", "p"} {
		for _, name := range names {
			key, aux, err := objectKeys(prefix, name)
			if err != nil {
				continue
			}
			for _, suffix := range []string{"", "ch", "rel"} {
				k := key
				if suffix != "" {
					k = aux(suffix)
				}
				who := prefix + name + "|" + suffix // the prefix is part of the name: "p:"+"x" is "p"+":x"
				if prev, ok := seen[k]; ok && prev != who {
					t.Fatalf("%q is built for both %s and %s", k, prev, who)
				}
				seen[k] = who
				if slot.Of(k) != slot.Of(key) {
					t.Fatalf("%q (%s) is in slot %d, its object key %q in %d", k, who, slot.Of(k), key, slot.Of(key))
				}
			}
		}
	}
	if len(seen) < 5000 {
		t.Fatalf("only %d names checked", len(seen))
	}
}
