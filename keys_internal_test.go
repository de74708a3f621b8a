package redisson

import (
	"errors"
	"testing"
)

func TestObjectKeys(t *testing.T) {
	cases := []struct {
		prefix, name string
		key, aux     string
		wantErr      bool
	}{
		{"", "orders:42", "{orders:42}", "{orders:42}:~ch", false},
		{"app:", "orders:42", "app:{orders:42}", "app:{orders:42}:~ch", false},
		{"", "{user:7}:cart", "{{user:7}:cart}", "{{user:7}:cart}:~ch", false},
		{"", "a{b", "{a{b}", "{a{b}:~ch", false},
		{"", "a}b", "{a}b}", "{a}b}:~ch", false},
		{"", "}a", "", "", true}, // the empty tag "{}" would make Redis hash whole keys
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
		if keySlot(key) != keySlot(aux("ch")) || keySlot(key) != keySlot(aux("rel")) {
			t.Errorf("%q, %q and %q are in slots %d, %d, %d", key, aux("ch"), aux("rel"),
				keySlot(key), keySlot(aux("ch")), keySlot(aux("rel")))
		}
	}
}

// Issue 5, defect 7: keys and channels of distinct objects never collide, whatever the names, and
// every name of an object shares one slot. Names are drawn from the characters that matter to the
// layout.
func TestObjectKeysNeverCollide(t *testing.T) {
	alphabet := []string{"x", "{", "}", ":", "ch", "rel", "a"}
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
				who := prefix + "|" + name + "|" + suffix
				if prev, ok := seen[k]; ok {
					t.Fatalf("%q is built for both %s and %s", k, prev, who)
				}
				seen[k] = who
				if keySlot(k) != keySlot(key) {
					t.Fatalf("%q (%s) is in slot %d, its object key %q in %d", k, who, keySlot(k), key, keySlot(key))
				}
			}
		}
	}
	if len(seen) < 10000 {
		t.Fatalf("only %d names checked", len(seen))
	}
}

// Slots as CLUSTER KEYSLOT reports them.
func TestKeySlot(t *testing.T) {
	for key, want := range map[string]int{
		"foo":             12182,
		"bar":             5061,
		"{foo}.following": 12182, // only the tag is hashed
	} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d; want %d", key, got, want)
		}
	}
	// An empty tag does not count: the whole key is hashed.
	if tag, ok := hashTag("{}foo"); ok || tag != "{}foo" {
		t.Errorf("hashTag(\"{}foo\") = %q, %v; want the whole key, false", tag, ok)
	}
}
