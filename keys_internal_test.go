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
		{"", "orders:42", "orders:42", "{orders:42}:ch", false},
		{"app:", "orders:42", "app:orders:42", "{app:orders:42}:ch", false},
		{"", "user{7}:cart", "user{7}:cart", "user{7}:cart:ch", false}, // the name's own tag wins
		{"", "a{b", "a{b", "{a{b}:ch", false},                          // no complete tag: wrap
		{"", "a}b", "", "", true},                                      // '}' would end our tag early
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
		if keySlot(key) != keySlot(aux("ch")) {
			t.Errorf("%q and %q are in slots %d and %d", key, aux("ch"), keySlot(key), keySlot(aux("ch")))
		}
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
