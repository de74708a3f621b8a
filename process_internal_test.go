package redisson

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
)

// What an owner id tells by itself: Go's forms with their time, Java's with its thread id, and
// nothing of other strings.
func TestParseOwner(t *testing.T) {
	now := time.Now().UnixMilli()
	at := uint64(now-1500) << seqShift
	hex := "0123456789abcdef01234567"
	uuid := "6f1c2a4e-9b3d-4c5e-8f70-112233445566"
	for _, tc := range []struct {
		owner  string
		want   ownerID
		reason string
	}{
		{hex + ":" + strconv.FormatUint(at, 36), ownerID{client: hex, origin: OriginGo, since: now - 1500}, "this package's layout"},
		{hex + ":" + strconv.FormatUint(at+7, 36), ownerID{client: hex, origin: OriginGo, since: now - 1500}, "a burst: the low bits are a counter"},
		{hex + ":1", ownerID{client: hex, origin: OriginGo}, "an earlier version's counter: no time"},
		{uuid + ":" + strconv.FormatUint(at, 10), ownerID{client: uuid, origin: OriginGo, since: now - 1500}, "compat layout"},
		{uuid + ":57", ownerID{client: uuid, origin: OriginJava, thread: 57}, "a Java thread"},
		{uuid + ":" + strconv.FormatUint(uint64(now+2*24*3600*1000)<<seqShift, 10), ownerID{client: uuid, origin: OriginJava,
			thread: int64(uint64(now+2*24*3600*1000) << seqShift)}, "a time two days ahead is no time of ours"},
		{"a:1", ownerID{}, "neither form"},
		{"", ownerID{}, "empty"},
		{hex + ":1:write", ownerID{}, "not an owner id"},
		{strings.ToUpper(uuid) + ":5", ownerID{}, "Java writes UUIDs in lower case"},
	} {
		if got := parseOwner(tc.owner, now); got != tc.want {
			t.Errorf("%s: parseOwner(%q) = %+v; want %+v", tc.reason, tc.owner, got, tc.want)
		}
	}
}

// A record is read only when it is small; its fields are cut as the writer cuts them, on a
// character boundary.
func TestDecodeRecord(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	p, err := decodeRecord(`{"host":"` + long + `","pid":42,"prog":"deploy","started":1700000000000}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Host) > recordFieldMax || !utf8.ValidString(p.Host) || !strings.HasPrefix(long, p.Host) || len(p.Host) < recordFieldMax-1 {
		t.Fatalf("host cut to %d bytes (%q); want at most %d, whole characters", len(p.Host), p.Host, recordFieldMax)
	}
	if p.PID != 42 || p.Program != "deploy" || !p.Started.Equal(time.UnixMilli(1700000000000)) {
		t.Fatalf("%+v", p)
	}
	if _, err := decodeRecord(`{"host":"` + strings.Repeat("x", recordMax) + `"}`); err == nil {
		t.Fatal("a record longer than the bound was decoded")
	}
	if _, err := decodeRecord("not json"); err == nil {
		t.Fatal("garbage was decoded")
	}
	if got := thisProcess(time.Now()); len(got.Host) > recordFieldMax || len(got.Program) > recordFieldMax || got.PID == 0 {
		t.Fatalf("this process: %+v", got)
	}
}

// appendSeq writes what strconv.FormatUint writes.
func TestAppendSeq(t *testing.T) {
	for _, n := range []uint64{0, 1, 35, 36, 37, 1295, 1296, uint64(time.Now().UnixMilli()) << seqShift, 1<<63 - 1, 1<<64 - 1} {
		for _, base := range []int{10, 36} {
			if got, want := string(appendSeq([]byte("x:"), n, base)), "x:"+strconv.FormatUint(n, base); got != want {
				t.Errorf("appendSeq(%d, %d) = %q; want %q", n, base, got, want)
			}
		}
	}
}

// A Client's sequence numbers strictly increase: the time, or the last one + 1 when that is ahead
// (a clock set back, or a burst).
func TestNewIDIncreases(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	c, err := New(rdb, WithoutProcessRecord())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seqOf := func(id string) uint64 {
		n, err := strconv.ParseUint(id[strings.LastIndexByte(id, ':')+1:], 36, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := seqOf(c.newID())
	if ms := int64(first >> seqShift); ms < time.Now().Add(-time.Minute).UnixMilli() || ms > time.Now().UnixMilli() {
		t.Fatalf("first id's time %v; want now", time.UnixMilli(ms))
	}
	ahead := uint64(time.Now().Add(time.Hour).UnixMilli()) << seqShift // as after the clock went back an hour
	c.seq.Store(ahead)
	if got := seqOf(c.newID()); got != ahead+1 {
		t.Fatalf("after %d: %d; want %d", ahead, got, ahead+1)
	}
}
