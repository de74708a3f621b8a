package slot_test

import (
	"testing"

	"github.com/goredisson/redisson/internal/slot"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Slots as CLUSTER KEYSLOT reports them.
func TestOf(t *testing.T) {
	for key, want := range map[string]int{
		"foo":             12182,
		"bar":             5061,
		"{foo}.following": 12182, // only the tag is hashed
	} {
		if got := slot.Of(key); got != want {
			t.Errorf("slot.Of(%q) = %d; want %d", key, got, want)
		}
	}
	// An empty tag does not count: the whole key is hashed.
	if tag, ok := slot.Tag("{}foo"); ok || tag != "{}foo" {
		t.Errorf("slot.Tag(\"{}foo\") = %q, %v; want the whole key, false", tag, ok)
	}
}
