package main

import (
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/redistest"
)

// The connection flags reach a Cluster (--cluster with its nodes' addresses) and a Sentinel
// deployment (--sentinel-master with the sentinels' addresses): a command runs under the lock, which
// inspect then finds free, with the fencing token in the command's environment.
func TestLockOnClusterAndSentinel(t *testing.T) {
	t.Parallel()
	for name, conn := range map[string]func(t *testing.T) []string{
		"cluster": func(t *testing.T) []string {
			cl := redistest.StartCluster(t)
			return []string{"--cluster", "--addr", strings.Join(cl.Addrs(), ",")}
		},
		"sentinel": func(t *testing.T) []string {
			s := redistest.StartSentinel(t)
			return []string{"--sentinel-master", s.MasterName(), "--addr", strings.Join(s.SentinelAddrs(), ",")}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			flags := conn(t)
			run := func(args ...string) (int, string, string) {
				c := startArgs(t, nil, append(append([]string{}, flags...), args...)...)
				code := c.wait(t, 30*time.Second)
				return code, c.stdout.String(), c.stderr.String()
			}
			code, out, stderr := run("lock", "--fenced", "{job}:nightly", "--", "sh", "-c", `echo "token=$REDISSON_FENCING_TOKEN"`)
			if code != 0 || !strings.Contains(out, "token=1") {
				t.Fatalf("lock: exit %d, stdout %q, stderr %q; want 0 and token=1", code, out, stderr)
			}
			code, out, stderr = run("inspect", "{job}:nightly")
			if code != 0 || !strings.Contains(out, "fenced") || strings.Contains(out, "holder:") {
				t.Fatalf("inspect: exit %d, stdout %q, stderr %q; want a free fenced lock", code, out, stderr)
			}
		})
	}
}
