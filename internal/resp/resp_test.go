package resp

import (
	"bufio"
	"reflect"
	"strings"
	"testing"
)

// The reader's decoding of each RESP2 and RESP3 type, as redis-server 7 writes them (the frames
// below are copied from its replies), and its refusal of malformed frames.
func TestRead(t *testing.T) {
	for _, c := range []struct {
		in   string
		want any
	}{
		{"+OK\r\n", "OK"},
		{"-NOSCRIPT No matching script\r\n", Error("NOSCRIPT No matching script")},
		{":-42\r\n", int64(-42)},
		{"$5\r\nhello\r\n", "hello"},
		{"$-1\r\n", nil},
		{"_\r\n", nil},
		{"#t\r\n", true},
		{",1.5\r\n", "1.5"},
		{"=8\r\ntxt:some\r\n", "some"},
		{"!9\r\nERR wrong\r\n", Error("ERR wrong")},
		{"*2\r\n:1\r\n$1\r\na\r\n", []any{int64(1), "a"}},
		{"*-1\r\n", nil},
		{"%1\r\n+role\r\n+master\r\n", []any{"role", "master"}},
		{"~1\r\n+x\r\n", []any{"x"}},
		{">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n", Push{"invalidate", []any{"k"}}},
		{"|1\r\n+ttl\r\n:3\r\n:7\r\n", int64(7)},
	} {
		got, err := Read(bufio.NewReader(strings.NewReader(c.in)))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Read(%q) = %#v, %v; want %#v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"+OK\n", "$x\r\n", "$3\r\nab", "*99999999\r\n", "?1\r\n", ""} {
		if v, err := Read(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("Read(%q) = %#v; want an error", in, v)
		}
	}
}

// Write's frame for each argument type, as the server parses it back.
func TestWrite(t *testing.T) {
	var b strings.Builder
	bw := bufio.NewWriter(&b)
	Write(bw, "SET", "k", 7, int64(-1), 2.5)
	_ = bw.Flush()
	want := "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n7\r\n$2\r\n-1\r\n$3\r\n2.5\r\n"
	if b.String() != want {
		t.Fatalf("Write = %q; want %q", b.String(), want)
	}
}
