package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// proxyDialTimeout bounds the proxy's dial to its target.
const proxyDialTimeout = 5 * time.Second

// Proxy is an in-process TCP proxy on a loopback port that forwards each
// accepted connection to a target address and can inject faults: lost
// replies ([Proxy.DropReplies]), requests held back to land late
// ([Proxy.HoldRequests]), a black hole ([Proxy.Blackhole]) and dropped
// connections ([Proxy.CloseConns]). Point a client at [Proxy.Addr]
// instead of the server's address. Its methods are safe for concurrent use.
//
// Every goroutine of a Proxy is owned by it and has finished when
// [Proxy.Close] returns.
type Proxy struct {
	target string
	ln     net.Listener
	ctx    context.Context // cancelled by Close; aborts pending dials
	cancel context.CancelFunc
	wg     sync.WaitGroup // accept loop and all per-connection goroutines

	mu        sync.Mutex // guards the fields below
	conns     map[*proxyConn]struct{}
	closed    bool
	blackhole bool
	drop      int           // server→client chunks still to drop
	delay     time.Duration // added before forwarding each chunk
	hold      int           // client→server chunks still to hold back
	held      *heldBatch    // the chunks held back since the last ReleaseHeld

	closeOnce sync.Once
	closeErr  error
}

// heldBatch is the chunks held back since the last [Proxy.ReleaseHeld]:
// release is closed to forward them, and wg counts those not yet forwarded.
type heldBatch struct {
	release chan struct{}
	wg      sync.WaitGroup
	n       int // held now (guarded by Proxy.mu)
}

// proxyConn is one proxied connection: the accepted client side and, once
// dialled, the server side. Closing it closes both.
type proxyConn struct {
	p      *Proxy
	client net.Conn

	mu     sync.Mutex
	server net.Conn
	closed bool
}

// NewProxy starts a proxy to target (host:port) with [StartProxy] and
// registers a tb.Cleanup that closes it. It calls tb.Fatal if the proxy
// cannot listen. It does not connect to target until a client connects.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p, err := StartProxy(target)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := p.Close(); err != nil {
			tb.Errorf("redistest: %v", err)
		}
	})
	return p
}

// StartProxy listens on a free port on 127.0.0.1 and forwards each accepted
// connection to target, dialled when the client connects (a failed dial
// closes the client connection). It returns an error only if it cannot
// listen. The caller must call [Proxy.Close].
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", loopbackAddr(0))
	if err != nil {
		return nil, fmt.Errorf("redistest: proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		target: target,
		ln:     ln,
		ctx:    ctx,
		cancel: cancel,
		conns:  make(map[*proxyConn]struct{}),
		held:   &heldBatch{release: make(chan struct{})},
	}
	p.wg.Add(1)
	go p.acceptLoop()
	proxies.Store(p.Addr(), p)
	return p, nil
}

// proxies holds the open proxies by address (see IsProxy).
var proxies sync.Map

// IsProxy reports whether addr is the address of a Proxy of this process that is not closed: a
// test helper can tell a client whose connections go through a proxy (whose faults the test aims
// at its commands) from one connected to a server directly. It does not block.
func IsProxy(addr string) bool {
	_, ok := proxies.Load(addr)
	return ok
}

// Addr returns the address clients should connect to, "127.0.0.1:PORT".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// DropReplies arranges that the next n chunks of bytes read from the server,
// on any connection, are not forwarded: instead, as soon as such a chunk
// arrives, that connection is closed on both sides. For a request/response
// protocol this simulates "the server executed the command but the reply
// was lost", so a client typically retries on a new connection. A chunk is
// what one read returns: normally one reply, but a large reply may span
// several chunks and pipelined replies may share one. It replaces any
// previous count; n <= 0 cancels pending drops. It does not block. Chunks
// discarded by Blackhole do not count.
func (p *Proxy) DropReplies(n int) {
	p.mu.Lock()
	p.drop = max(n, 0)
	p.mu.Unlock()
}

// HoldRequests arranges that the next n chunks of bytes read from clients,
// on any connection, are held back instead of forwarded, until
// [Proxy.ReleaseHeld]: a request delayed on the network (a retransmission, a
// buffer, a middlebox) for as long as the test decides. A connection whose
// chunk is held forwards nothing more from its client until then; other
// connections are untouched. A held chunk is forwarded even if its client has
// closed the connection meanwhile, as a retransmitted segment would still
// reach the server. It replaces any previous count; n <= 0 cancels pending
// holds (chunks already held stay held). It does not block. Chunks discarded
// by Blackhole do not count.
func (p *Proxy) HoldRequests(n int) {
	p.mu.Lock()
	p.hold = max(n, 0)
	p.mu.Unlock()
}

// Held returns how many chunks are held back now (see [Proxy.HoldRequests]).
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held.n
}

// ReleaseHeld forwards every chunk held back by [Proxy.HoldRequests], each
// in order on its connection, and blocks until they have been written to the
// server (or their connection failed, or the proxy was closed). Chunks held
// later are held until the next call.
func (p *Proxy) ReleaseHeld() {
	p.mu.Lock()
	b := p.held
	p.held = &heldBatch{release: make(chan struct{})}
	p.mu.Unlock()
	close(b.release)
	b.wg.Wait()
}

// Blackhole, when on, stops forwarding in both directions for existing and
// new connections: bytes are still read, then discarded, and connections
// stay open, so peers see a silent network. When off, bytes read from then
// on are forwarded again; discarded bytes are lost for good. It does not
// block.
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	p.blackhole = on
	p.mu.Unlock()
}

// Delay holds every chunk read from then on, in both directions, for d
// before forwarding it, as a slow network would; chunks of one connection
// stay in order. d <= 0 forwards at once again. It does not block.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	p.delay = max(d, 0)
	p.mu.Unlock()
}

// CloseConns closes all current connections, both client and server sides;
// new connections are still accepted. It does not wait for the
// connections' goroutines (Close does).
func (p *Proxy) CloseConns() {
	p.mu.Lock()
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Conns returns the number of currently open client connections, counting
// a connection from when it is accepted until either side closes it or the
// proxy closes it.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops accepting, aborts pending dials, closes all connections and
// blocks until every goroutine of the proxy has finished. It is idempotent;
// later calls wait for the first and return nil. The error, if any, is from
// closing the listener.
func (p *Proxy) Close() error {
	first := false
	p.closeOnce.Do(func() {
		first = true
		proxies.Delete(p.Addr())
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cancel()
		if err := p.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			p.closeErr = fmt.Errorf("proxy: %w", err)
		}
		p.CloseConns()
		p.wg.Wait()
	})
	if !first {
		return nil
	}
	return p.closeErr
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Transient, e.g. out of file descriptors: back off briefly.
			t := time.NewTimer(5 * time.Millisecond)
			select {
			case <-p.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		pc := &proxyConn{p: p, client: c}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.conns[pc] = struct{}{}
		p.wg.Add(1) // the counter is positive: this goroutine is counted
		p.mu.Unlock()
		go p.serve(pc)
	}
}

// serve dials the target, then copies client→server itself and
// server→client in a second goroutine.
func (p *Proxy) serve(pc *proxyConn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: proxyDialTimeout}
	s, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		pc.close()
		return
	}
	if !pc.setServer(s) {
		return // closed while dialling; setServer closed s
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.pipe(pc, pc.client, s, true)
	}()
	p.pipe(pc, s, pc.client, false)
}

// chunkAction says what to do with a chunk that was just read.
type chunkAction int

const (
	forward chunkAction = iota
	discard
	drop
	hold
)

// action says what to do with a chunk just read, and with hold the batch it
// is held in (counted in it: the caller must call unhold once it is done).
func (p *Proxy) action(fromServer bool) (chunkAction, time.Duration, *heldBatch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.blackhole:
		return discard, 0, nil
	case fromServer && p.drop > 0:
		p.drop--
		return drop, 0, nil
	case !fromServer && p.hold > 0:
		p.hold--
		p.held.n++
		p.held.wg.Add(1)
		return hold, 0, p.held
	default:
		return forward, p.delay, nil
	}
}

// unhold ends the holding of one chunk of batch b.
func (p *Proxy) unhold(b *heldBatch) {
	p.mu.Lock()
	b.n--
	p.mu.Unlock()
	b.wg.Done()
}

// sleep waits for d, or until the proxy is closed; it reports whether d passed.
func (p *Proxy) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// pipe copies src to dst chunk by chunk, applying the fault settings, until
// either side fails or the pair is closed; then it closes the pair.
func (p *Proxy) pipe(pc *proxyConn, dst, src net.Conn, fromServer bool) {
	defer pc.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			act, delay, b := p.action(fromServer)
			switch act {
			case drop:
				return
			case hold:
				select {
				case <-b.release:
				case <-p.ctx.Done():
					p.unhold(b)
					return
				}
				_, werr := dst.Write(buf[:n])
				p.unhold(b)
				if werr != nil {
					return
				}
			case forward:
				if !p.sleep(delay) {
					return
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			case discard:
			}
		}
		if err != nil {
			return
		}
	}
}

// setServer records the dialled server side, or closes it and returns
// false if the pair was closed meanwhile.
func (pc *proxyConn) setServer(s net.Conn) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.closed {
		s.Close()
		return false
	}
	pc.server = s
	return true
}

// close closes both sides once and forgets the pair.
func (pc *proxyConn) close() {
	pc.mu.Lock()
	if pc.closed {
		pc.mu.Unlock()
		return
	}
	pc.closed = true
	s := pc.server
	pc.mu.Unlock()

	pc.client.Close()
	if s != nil {
		s.Close()
	}
	pc.p.mu.Lock()
	delete(pc.p.conns, pc)
	pc.p.mu.Unlock()
}
