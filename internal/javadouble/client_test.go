package javadouble

import (
	"regexp"
	"testing"
)

func TestKeyNamesFollowRedisson(t *testing.T) {
	cases := []struct{ got, want string }{
		{suffixName("a", "timeout"), "{a}:timeout"},
		{suffixName("x{t}y", "timeout"), "x{t}y:timeout"},
		{prefixName("redisson_sc", "a"), "redisson_sc:{a}"},
		{prefixName("redisson_sc", "{t}a"), "redisson_sc:{t}a"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	c := New(nil)
	defer c.Close()
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(c.ID()) {
		t.Errorf("ID %q is not a random UUID", c.ID())
	}
	if got, want := c.Owner(7), c.ID()+":7"; got != want {
		t.Errorf("owner %q, want %q", got, want)
	}
	if got := c.CountDownLatch("{t}x").keys()[1]; got != "redisson_countdownlatch__channel__{{t}x}" {
		t.Errorf("latch channel %q", got)
	}
	if got := c.FairLock("f").channel(3); got != "redisson_lock__channel:{f}:"+c.ID()+":3" {
		t.Errorf("fair channel %q", got)
	}
	if got := c.ReadWriteLock("r").ReadLock().readTimeoutPrefix(3); got != "{r}:"+c.ID()+":3:rwlock_timeout" {
		t.Errorf("read timeout prefix %q", got)
	}
	if got := keySlot("{user1000}.following"); got != keySlot("user1000") || keySlot("123456789") != 12739 {
		t.Errorf("keySlot wrong: %d", got)
	}
}
