// Package resp is the Redis wire protocol for the library's own connections, the ones go-redis
// cannot give it: the sharded pub/sub connections (internal/pubsub, RESP2) and the loss tracker's
// (internal/track, RESP3 with pushes). It dials as a go-redis client's options say, writes
// commands, and reads RESP2 and RESP3 values.
package resp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Dial opens a connection to opt.Addr as a go-redis client with opt would: its Dialer if set,
// else TCP (or opt.Network) bounded by opt.DialTimeout and ctx. It sends nothing.
func Dial(ctx context.Context, opt *redis.Options) (net.Conn, error) {
	dial := opt.Dialer
	if dial == nil {
		d := &net.Dialer{Timeout: opt.DialTimeout}
		dial = d.DialContext
	}
	network := opt.Network
	if network == "" {
		network = "tcp"
	}
	return dial(ctx, network, opt.Addr)
}

// Credentials returns the user name and password opt authenticates with ("" and "": none), asking
// its credentials provider if it has one (which may block, bounded by ctx).
func Credentials(ctx context.Context, opt *redis.Options) (user, pass string, err error) {
	switch {
	case opt.CredentialsProviderContext != nil:
		return opt.CredentialsProviderContext(ctx)
	case opt.CredentialsProvider != nil:
		user, pass = opt.CredentialsProvider()
		return user, pass, nil
	}
	return opt.Username, opt.Password, nil
}

// Write writes one command (an array of bulk strings) to bw, without flushing it. Arguments are
// strings, ints or int64s; anything else is written as fmt.Sprint gives it.
func Write(bw *bufio.Writer, args ...any) {
	bw.WriteString("*")
	bw.WriteString(strconv.Itoa(len(args)))
	bw.WriteString("\r\n")
	for _, a := range args {
		var s string
		switch a := a.(type) {
		case string:
			s = a
		case int:
			s = strconv.Itoa(a)
		case int64:
			s = strconv.FormatInt(a, 10)
		default:
			s = fmt.Sprint(a)
		}
		bw.WriteString("$")
		bw.WriteString(strconv.Itoa(len(s)))
		bw.WriteString("\r\n")
		bw.WriteString(s)
		bw.WriteString("\r\n")
	}
}

// Push is a RESP3 push frame (an invalidation, a pub/sub message on a RESP3 connection).
type Push []any

// Error is a Redis error reply ("MOVED 3999 127.0.0.1:7001", "NOSCRIPT ...").
type Error string

func (e Error) Error() string { return string(e) }

// Read reads one value: a string (simple, bulk, verbatim without its format, double, big number),
// an int64, a bool, nil (null, a null bulk string or array), an Error, a []any (an array, a set,
// or a map as key, value, ...), or a Push. Attributes are skipped. err is for the stream: it is
// unusable after one.
func Read(br *bufio.Reader) (any, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("resp: malformed reply %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', ',', '(':
		return body, nil
	case '-':
		return Error(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '#':
		return body == "t", nil
	case '_':
		return nil, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > 512<<20 {
			return nil, fmt.Errorf("resp: malformed length %q", body)
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, err
		}
		s := string(buf[:n])
		switch line[0] {
		case '=':
			if len(s) >= 4 {
				s = s[4:] // "txt:"
			}
		case '!':
			return Error(s), nil
		}
		return s, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > 1<<24 {
			return nil, fmt.Errorf("resp: malformed length %q", body)
		}
		if n < 0 {
			return nil, nil
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		items := make([]any, 0, n)
		for range n {
			v, err := Read(br)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		switch line[0] {
		case '>':
			return Push(items), nil
		case '|': // attributes precede the value they describe
			return Read(br)
		}
		return items, nil
	}
	return nil, fmt.Errorf("resp: unknown reply type %q", line[0])
}
