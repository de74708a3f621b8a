package track

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/resp"
)

// conn is one RESP3 connection to one Redis master, with client tracking on: the replies to the
// commands it sends come back in order, and the server's invalidation pushes come in between, at
// any time. It is the tracker's own, not go-redis's: go-redis has no way to hand a reader
// goroutine the pushes of a connection of its pool.
type conn struct {
	nc  net.Conn
	bw  *bufio.Writer
	wmu sync.Mutex // serialises writes

	// replies receives, in order, the reply to every command written; pushes go to onPush.
	replies chan any
	done    chan struct{} // closed when the reader has exited
	err     error         // why the reader exited (read after done)
}

// errRole is returned by dial when the node is not a master (a Sentinel's stale answer, a demoted
// master): what a replica says about a key is not a verdict on a hold.
var errRole = errors.New("not a master")

// errElsewhere breaks a connection whose node found holds gone that the Client's own commands
// find held: the node says it is a master, but it is not the one the Client uses.
var errElsewhere = errors.New("not the master the Client uses")

// dial opens a connection as the go-redis options say (address, dialer, credentials, database),
// switches it to RESP3 with HELLO, checks that the node is a master, and turns tracking on. The
// reader goroutine it starts calls onPush with the keys of every invalidation (nil: all keys, a
// FLUSHALL or FLUSHDB) until the connection fails or is closed.
func dial(ctx context.Context, opt *redis.Options, onPush func(keys []string)) (*conn, error) {
	nc, err := resp.Dial(ctx, opt)
	if err != nil {
		return nil, err
	}
	c := &conn{nc: nc, bw: bufio.NewWriter(nc), replies: make(chan any, 64), done: make(chan struct{})}
	go c.read(onPush)
	hello := []any{"HELLO", "3"}
	user, pass, err := resp.Credentials(ctx, opt)
	if err != nil {
		c.close()
		return nil, err
	}
	if pass != "" {
		if user == "" {
			user = "default"
		}
		hello = append(hello, "AUTH", user, pass)
	}
	cmds := [][]any{hello, {"CLIENT", "TRACKING", "on"}}
	if opt.DB != 0 {
		cmds = append(cmds, []any{"SELECT", opt.DB})
	}
	replies, err := c.do(ctx, cmds...)
	if err != nil {
		c.close()
		return nil, err
	}
	for _, r := range replies {
		if e, ok := r.(error); ok {
			c.close()
			return nil, e
		}
	}
	if role := field(replies[0], "role"); role != "master" {
		c.close()
		return nil, fmt.Errorf("%w: %s says it is %q", errRole, opt.Addr, role)
	}
	return c, nil
}

// field returns the string value of key in a RESP3 map reply (flattened into a slice), or "".
func field(m any, key string) string {
	kv, _ := m.([]any)
	for i := 0; i+1 < len(kv); i += 2 {
		if k, _ := kv[i].(string); k == key {
			s, _ := kv[i+1].(string)
			return s
		}
	}
	return ""
}

// do writes cmds in one pipeline and waits for their replies, bounded by ctx (at most 3 s without
// a deadline). A Redis error reply is returned as an error value in its place; err is for the
// connection (it is then closed: the replies of a pipeline cut short cannot be matched any more).
func (c *conn) do(ctx context.Context, cmds ...[]any) ([]any, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(3 * time.Second)
	}
	c.wmu.Lock()
	_ = c.nc.SetWriteDeadline(deadline)
	for _, cmd := range cmds {
		resp.Write(c.bw, cmd...)
	}
	err := c.bw.Flush()
	c.wmu.Unlock()
	if err != nil {
		c.close()
		return nil, err
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	out := make([]any, 0, len(cmds))
	for range cmds {
		select {
		case r := <-c.replies:
			out = append(out, r)
		case <-c.done:
			return nil, c.err
		case <-t.C:
			c.close()
			return nil, context.DeadlineExceeded
		case <-ctx.Done():
			c.close()
			return nil, ctx.Err()
		}
	}
	return out, nil
}

func (c *conn) close() { _ = c.nc.Close() }

// read parses what the server sends until the connection fails.
func (c *conn) read(onPush func([]string)) {
	defer close(c.done)
	br := bufio.NewReader(c.nc)
	for {
		v, err := resp.Read(br)
		if err != nil {
			c.err = err
			_ = c.nc.Close()
			return
		}
		if p, ok := v.(resp.Push); ok {
			if len(p) >= 2 && p[0] == "invalidate" {
				keys, _ := p[1].([]any)
				var ks []string
				if keys != nil {
					ks = make([]string, 0, len(keys))
					for _, k := range keys {
						s, _ := k.(string)
						ks = append(ks, s)
					}
				}
				onPush(ks) // nil: every key
			}
			continue
		}
		c.replies <- v
	}
}
