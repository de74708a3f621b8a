package redisson_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/javadouble"
	"github.com/goredisson/redisson/redistest"
)

// awaitRecord waits (bounded) until c's process record was first written.
func awaitRecord(t *testing.T, c *redisson.Client) {
	t.Helper()
	select {
	case <-redisson.ProcessRecordUp(c):
	case <-time.After(10 * time.Second):
		t.Fatal("the process record was not written within 10s")
	}
}

// wantThisProcess checks that h names c's Client and this process, and an acquisition that began
// within [before, after].
func wantThisProcess(t *testing.T, h redisson.Holder, c *redisson.Client, newAt, before, after time.Time) {
	t.Helper()
	host, _ := os.Hostname()
	if h.Origin != redisson.OriginGo || h.Client != redisson.ClientIDOf(c) || h.ThreadID != 0 {
		t.Fatalf("holder %+v: want Origin go, Client %s", h, redisson.ClientIDOf(c))
	}
	p := h.Process
	if p == nil || p.Host != host || p.PID != os.Getpid() || p.Program != filepath.Base(os.Args[0]) {
		t.Fatalf("holder's process %+v; want host %q pid %d program %q", p, host, os.Getpid(), filepath.Base(os.Args[0]))
	}
	if p.Started.Before(newAt.Truncate(time.Millisecond)) || p.Started.After(before) {
		t.Fatalf("process started %v; want the Client's New, in [%v, %v]", p.Started, newAt, before)
	}
	if h.Since.Before(before.Truncate(time.Millisecond)) || h.Since.After(after) {
		t.Fatalf("holder since %v; want in [%v, %v] (the acquisition)", h.Since, before, after)
	}
	if h.Age < 0 || h.Age > time.Minute {
		t.Fatalf("holder's age %v; want in [0, 1m]", h.Age)
	}
}

// Inspect names the process of a Go holder, in this package's layout and in Redisson's (a Lock, a
// FairLock, both sides of a ReadWriteLock; natively also a FencedLock and a SpinLock), as another
// Client sees it: host, pid, program, when its Client was made, and when the acquisition began.
func TestInspectNamesGoHolders(t *testing.T) {
	for _, compat := range []bool{false, true} {
		layout := map[bool]string{false: "native", true: "compat"}[compat]
		t.Run(layout, func(t *testing.T) {
			opts := []redisson.Option{redisson.KeepProcessRecord()}
			if compat {
				opts = append(opts, redisson.WithRedissonCompat())
			}
			srv := redistest.Start(t)
			newAt := time.Now()
			c := newClient(t, srv.Client(t), opts...)
			inspector := newClient(t, srv.Client(t), opts...)
			ctx := t.Context()
			kinds := []string{"Lock", "FairLock", "ReadWriteLock/read", "ReadWriteLock/write"}
			if !compat {
				kinds = append(kinds, "FencedLock", "SpinLock")
			}
			for _, kind := range kinds {
				name := "who-" + strings.ReplaceAll(kind, "/", "-")
				before := time.Now()
				switch kind {
				case "ReadWriteLock/read":
					if _, err := c.ReadWriteLock(name).RLock(ctx); err != nil {
						t.Fatal(err)
					}
				case "ReadWriteLock/write":
					mustLock(t, c.ReadWriteLock(name), ctx)
				default:
					mustLock(t, lockOf(c, kind, name), ctx)
				}
				after := time.Now()
				awaitRecord(t, c)
				in, err := inspector.Inspect(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if len(in.Holders) != 1 {
					t.Fatalf("%s: holders %+v", kind, in.Holders)
				}
				wantThisProcess(t, in.Holders[0], c, newAt, before, after)
			}
		})
	}
}

// The record is a small JSON string with a TTL, at the documented key; Close deletes it. A lock
// left held by a closed Client (Close does not release) still tells its Client and when it was
// taken, not its process.
func TestProcessRecordGoneAfterClose(t *testing.T) {
	c, admin, srv := setup(t, redisson.WithKeyPrefix("app:"), redisson.KeepProcessRecord())
	ctx := t.Context()
	mustLock(t, c.Lock("left"), ctx)
	awaitRecord(t, c)
	key := redisson.ProcessRecordKey(c)
	if want := "app:redisson:~client:" + redisson.ClientIDOf(c); key != want {
		t.Fatalf("record key %q; want %q", key, want)
	}
	v, err := admin.Get(ctx, key).Result()
	mustDo(t, "GET record", err)
	var rec map[string]any
	if err := json.Unmarshal([]byte(v), &rec); err != nil || len(v) > 600 || len(rec) != 4 ||
		rec["pid"] != float64(os.Getpid()) || rec["prog"] != filepath.Base(os.Args[0]) {
		t.Fatalf("record %q (%v); want {host, pid, prog, started}", v, err)
	}
	if ttl := admin.PTTL(ctx, key).Val(); ttl <= 0 || ttl > 30*time.Second {
		t.Fatalf("record TTL %v; want in (0, 30s]", ttl)
	}
	_ = c.Close()
	if n := admin.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("the process record is still there after Close")
	}
	other := newClient(t, srv.Client(t), redisson.WithKeyPrefix("app:"))
	in, err := other.Inspect(ctx, "left")
	if err != nil || len(in.Holders) != 1 {
		t.Fatalf("Inspect = %+v, %v", in, err)
	}
	if h := in.Holders[0]; h.Process != nil || h.Origin != redisson.OriginGo || h.Client != redisson.ClientIDOf(c) || h.Since.IsZero() {
		t.Fatalf("holder of a closed Client %+v; want its Client and time, no process", h)
	}
}

// WithoutProcessRecord: nothing but the objects is written (no key, no SETEX), and Inspect names no
// process, only the Client and when the acquisition began.
func TestWithoutProcessRecordWritesNothing(t *testing.T) {
	for _, compat := range []bool{false, true} {
		opts := []redisson.Option{redisson.KeepProcessRecord(), redisson.WithoutProcessRecord()}
		if compat {
			opts = append(opts, redisson.WithRedissonCompat())
		}
		c, admin, _ := setup(t, opts...)
		ctx := t.Context()
		h := mustLock(t, c.Lock("quiet"), ctx)
		if _, err := h.Reenter(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadWriteLock("quiet-rw").RLock(ctx); err != nil {
			t.Fatal(err)
		}
		s := c.Semaphore("quiet-sem")
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		in, err := c.Inspect(ctx, "quiet")
		if err != nil || len(in.Holders) != 1 {
			t.Fatalf("Inspect = %+v, %v", in, err)
		}
		if h := in.Holders[0]; h.Process != nil || h.Origin != redisson.OriginGo || h.Client != redisson.ClientIDOf(c) || h.Since.IsZero() {
			t.Fatalf("compat %v: holder %+v; want its Client and time, no process", compat, h)
		}
		_ = c.Close()
		for _, k := range admin.Keys(ctx, "*").Val() {
			if redisson.IsProcessRecordKey(k) {
				t.Fatalf("compat %v: a process record %q was written", compat, k)
			}
		}
		if stat := admin.InfoMap(ctx, "commandstats").Item("Commandstats", "cmdstat_setex"); stat != "" {
			t.Fatalf("compat %v: SETEX was sent: %s", compat, stat)
		}
	}
}

// A Java Redisson holder (the internal/javadouble client) is told by its owner id: the Redisson
// instance's UUID and the thread id; no time, no process.
func TestInspectJavaHolder(t *testing.T) {
	c, _, srv := setup(t, redisson.WithRedissonCompat())
	ctx := t.Context()
	j := javadouble.New(srv.Client(t))
	t.Cleanup(j.Close)
	if err := j.Lock("java-held").Lock(ctx, 57, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := j.ReadWriteLock("java-rw").ReadLock().Lock(ctx, 58, time.Minute); err != nil {
		t.Fatal(err)
	}
	for name, thread := range map[string]int64{"java-held": 57, "java-rw": 58} {
		in, err := c.Inspect(ctx, name)
		if err != nil || len(in.Holders) != 1 {
			t.Fatalf("Inspect(%s) = %+v, %v", name, in, err)
		}
		h := in.Holders[0]
		if h.Origin != redisson.OriginJava || h.Client != j.ID() || h.ThreadID != thread || !h.Since.IsZero() || h.Age != 0 || h.Process != nil {
			t.Fatalf("%s: Java holder %+v; want Origin java, Client %s, thread %d, no time, no process", name, h, j.ID(), thread)
		}
	}
}

// Owner ids keep Java Redisson's form in compat mode ("<UUID>:<decimal>", a Java long), and their
// numbers grow strictly, whatever the clock, within a Client.
func TestOwnerIDsCarryTheirTime(t *testing.T) {
	for _, compat := range []bool{false, true} {
		var opts []redisson.Option
		if compat {
			opts = append(opts, redisson.WithRedissonCompat())
		}
		c, _, _ := setup(t, opts...)
		ctx := t.Context()
		var last uint64
		for i := range 50 {
			h := mustLock(t, c.Lock("ids"), ctx)
			owner := redisson.OwnerOf(h)
			mustUnlock(t, h)
			if compat && !javaOwnerForm.MatchString(owner) {
				t.Fatalf("compat owner %q is not of Java's form", owner)
			}
			client, num, _ := strings.Cut(owner, ":")
			if client != redisson.ClientIDOf(c) {
				t.Fatalf("owner %q; want client %s", owner, redisson.ClientIDOf(c))
			}
			base := map[bool]int{false: 36, true: 10}[compat]
			seq, err := strconv.ParseUint(num, base, 63)
			if err != nil {
				t.Fatalf("owner %q: sequence %v (want below 2^63, a Java long)", owner, err)
			}
			if i > 0 && seq <= last {
				t.Fatalf("owner %q after sequence %d: not increasing", owner, last)
			}
			last = seq
		}
	}
}

// On a Cluster the process record is on a slot of its own, likely another master's than the
// lock's: Inspect reads it there, through a client that routes reads to replicas too (in a
// transaction of its own, on the master).
func TestInspectNamesGoHolderOnCluster(t *testing.T) {
	long(t)
	cl := sharedCluster(t)
	for name, mod := range map[string]func(*redis.ClusterOptions){
		"plain":    func(*redis.ClusterOptions) {},
		"ReadOnly": func(o *redis.ClusterOptions) { o.ReadOnly = true },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			newAt := time.Now()
			c := newClient(t, cl.Client(t, mod), redisson.KeepProcessRecord())
			inspector := newClient(t, cl.Client(t, mod))
			// Several holders' Clients, so that their records spread over the slots.
			var holders []*redisson.Client
			for range 4 {
				holders = append(holders, newClient(t, cl.Client(t, mod), redisson.KeepProcessRecord()))
			}
			lock := "who-cluster-" + name
			before := time.Now()
			mustLock(t, c.Lock(lock), ctx)
			after := time.Now()
			awaitRecord(t, c)
			in, err := inspector.Inspect(ctx, lock)
			if err != nil || len(in.Holders) != 1 {
				t.Fatalf("Inspect = %+v, %v", in, err)
			}
			wantThisProcess(t, in.Holders[0], c, newAt, before, after)
			rw := "{who-cluster-" + name + "}:rw"
			for _, h := range holders {
				if _, err := h.ReadWriteLock(rw).RLock(ctx); err != nil {
					t.Fatal(err)
				}
				awaitRecord(t, h)
			}
			in, err = inspector.Inspect(ctx, rw)
			if err != nil || len(in.Holders) != len(holders) {
				t.Fatalf("Inspect(rw) = %+v, %v", in, err)
			}
			for _, h := range in.Holders {
				if h.Process == nil || h.Process.PID != os.Getpid() {
					t.Fatalf("reader %+v: want its process", h)
				}
			}
		})
	}
}
