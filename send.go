package redisson

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goredisson/redisson/internal/renew"
	"github.com/goredisson/redisson/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// The command path: every command and script of the library is sent from this file, and only this
// file knows how. Primitives say what to run (a script, its keys and arguments, whether it is safe
// to run twice, whether the replica-acknowledged mode applies) and read the reply; this layer
// decides where it goes (the master of its key, whatever read routing the go-redis client has),
// whether it is sent again, what an error means (did it run?), the WAIT of the replica-acknowledged
// mode, NOSCRIPT, MOVED/ASK/TRYAGAIN/CLUSTERDOWN, the renewals' per-node pipelines, and the contexts
// of clean-ups. In order: send and its rules; routing; the replica-acknowledged WAIT; reads; commands
// sent as they are and the data objects' transactions; clean-ups; renewals.
//
// How a command of the library is sent (send), and what its failure means.
//
// go-redis would re-send a command after a network error (MaxRetries): the library never lets it
// (go-redis's Cmder.NoRetry), so that it alone decides, and knows, whether a command may have run.
// A command is sent again, by send, only:
//   - after a reply proving that it did not run: NOSCRIPT (run with EVAL instead; in the
//     replica-acknowledged mode the script is loaded on the node first), TRYAGAIN,
//     CLUSTERDOWN, a MOVED or ASK (followed; on a Cluster a connection refused by a dead master);
//   - after an error proving that it was never written: no connection could be made, or none was
//     free in time (a few times: a server that cannot be reached is reported soon);
//   - after a network error that leaves its outcome unknown, only if it is safe to run twice (the
//     lock, semaphore and latch scripts answer a repeat from the state it finds, or from a request
//     record), a few times. The caller may ask whether the reply answers such a re-send (repeat): a
//     reply that reads state may then describe what the first copy did. A script with a request
//     record is told which copies are re-sends (evalRecorded): a re-send that finds no record
//     applies nothing, since it cannot tell a first copy that never ran from one still travelling
//     or one whose record has expired, and answers that the outcome is unknown.
// If no attempt can have reached Redis, the error is marked as such (notSent): noEffect reports it,
// and the caller has nothing to undo. A context that has ended before an attempt stops it unsent.

// notSent is the error of a command that never reached Redis (see send).
type notSent struct{ err error }

func (e notSent) Error() string { return e.err.Error() }
func (e notSent) Unwrap() error { return e.err }

// Bounds of send's re-sends.
const (
	unsentRetries = 3 // re-sends of a command that was never written
	unknownResend = 3 // re-sends of a safe command after an unknown outcome
)

// sendOpts says how a command may be sent (see send).
type sendOpts struct {
	// resend: the command is safe to run twice, so it is sent again after a network error.
	resend bool
	// acked: in the replica-acknowledged mode, the command is followed by WAIT on the same
	// connection to the master of its key, and too few acknowledgements are reported.
	acked bool
	// tx makes the command the EXEC of a transaction: MULTI, the commands tx queues, and EXEC go in
	// one pipeline to the master of key (followed by WAIT in the replica-acknowledged mode).
	tx func(p redis.Pipeliner)
	// onResend, if set, is called before each copy sent after an unknown outcome (see evalRecorded).
	onResend func()
	// repeat, if set, is where send reports whether the reply it returns answers a re-send after an
	// unknown outcome: an earlier copy may have run, and the reply may describe what that copy left.
	repeat *bool
}

// send sends the command that build makes (on key's slot; build is called for every attempt),
// running script with EVALSHA if script is set, as the rules above say, and returns it: its error
// is the caller's to read (matching notSent if it never reached Redis). With opts.acked and the
// replica-acknowledged mode on, the command and a WAIT go in one pipeline on one connection to the
// master of key (following MOVED and ASK there, so that WAIT follows the write), and ackErr reports
// too few acknowledgements (see ackResult); otherwise ackErr is nil.
func send[C redis.Cmder](ctx context.Context, c *Client, key string, script *redis.Script, build func() C, opts sendOpts) (cmd C, ackErr error) {
	c.checkServer(ctx, key)
	waits := opts.acked && c.acks.on()
	// A transaction (tx) goes as one pipeline to the master of key as well, with or without WAIT.
	acked := waits || opts.tx != nil
	var r route // acked: where the command goes
	loaded := false
	maybeRan := false // an earlier attempt may have reached Redis
	redirects, refusals, unsents, resends := 0, 0, 0, 0
	if opts.repeat != nil {
		defer func() { *opts.repeat = maybeRan }()
	}
	for {
		cmd = build()
		if err := ctx.Err(); err != nil {
			cmd.SetErr(c.unsent(err, maybeRan))
			return cmd, nil
		}
		var wait *redis.Cmd
		need := 0
		began := time.Now()
		if acked {
			if r.node == nil {
				node, addr, err := c.node(ctx, key)
				if err != nil {
					cmd.SetErr(c.unsent(err, maybeRan))
					return cmd, nil
				}
				r = route{node: node, addr: addr}
			}
			if script != nil {
				c.preload(ctx, r, script)
			}
			if waits {
				need = c.needed(ctx, r.node, r.addr)
			}
			p := r.node.Pipeline()
			if r.ask {
				p.Do(ctx, "ASKING")
			}
			if opts.tx != nil {
				_ = p.Process(ctx, onceCmd{redis.NewCmd(ctx, "multi")})
				opts.tx(p)
			}
			_ = p.Process(ctx, onceCmd{cmd})
			if need > 0 {
				wait = p.Do(ctx, "WAIT", need, c.acks.timeout.Milliseconds())
			}
			_, _ = p.Exec(ctx) // errors are per command
		} else {
			cmd = process(ctx, c, cmd, build)
		}
		err := cmd.Err()
		if script != nil && !loaded && errPrefix(err, "NOSCRIPT") {
			loaded = true
			if acked {
				c.forgetLoaded(r.addr, script)
				continue // preload loads it
			}
			// Run it with EVAL instead, on whichever node go-redis sends it to (the master of the
			// slot, or the one an ASK names during a migration), which also caches it there.
			// (Script.Load would ask every master of a Cluster, and fail when any one is down.)
			if !evalFallback(ctx, c, any(cmd), script) {
				return cmd, nil
			}
			err = cmd.Err()
		}
		if err == nil {
			c.reachable()
			c.noteRoundTrip(time.Since(began))
			if wait != nil {
				return cmd, c.ackResult(wait, need)
			}
			return cmd, nil
		}
		if acked {
			if next, redirect := c.redirected(ctx, err); redirect && redirects < maxRedirects {
				redirects++
				if next.node == nil && !retryPause(ctx, redirects) {
					return cmd, nil
				}
				r = next
				continue
			}
		}
		switch {
		case c.refused(err):
			// A migration or a failover is under way: its end, not the redirections, bounds the re-sends.
			if !retryPause(ctx, refusals) {
				return cmd, nil
			}
			refusals++
			redirects, r = 0, route{}
		case neverWritten(err):
			c.unreachableNow(err)
			if unsents >= unsentRetries || !retryPause(ctx, unsents) {
				cmd.SetErr(c.unsent(withCtxErr(ctx, err), maybeRan))
				return cmd, nil
			}
			unsents++
		case isReply(err):
			return cmd, nil // Redis answered: the caller reads the reply
		default: // a network or context error: the command may have run
			maybeRan = true
			if !opts.resend || resends >= unknownResend || !retryPause(ctx, resends) {
				cmd.SetErr(withCtxErr(ctx, err))
				return cmd, nil
			}
			resends++
			if opts.onResend != nil {
				opts.onResend()
			}
			r = route{}
		}
	}
}

// noteRoundTrip folds d, the time a command took from its send to its answer, into the Client's
// estimate of the round trip (see attemptGrace): a moving average, each sample capped at
// maxRoundTripSample so that one stalled command does not stretch every wait's bound.
func (c *Client) noteRoundTrip(d time.Duration) {
	d = min(d, maxRoundTripSample)
	old, avg := c.rtt.Load(), int64(d)
	if old != 0 {
		avg = old - old/8 + avg/8
	}
	c.rtt.CompareAndSwap(old, avg) // a lost race drops one sample
}

// maxRoundTripSample caps each sample of noteRoundTrip.
const maxRoundTripSample = 100 * time.Millisecond

// attemptGrace is how long past its WithWait bound an attempt in flight may still be answered (see
// boundedAttempt): cleanupGrace, plus twice the Client's recent round trip, so that a bound shorter
// than a round trip to a distant server still makes an attempt, and an attempt sent just before the
// bound can still tell whether the lock was busy. Until the Client has seen an answer (its first
// command also dials, and may load a script), the round trip is taken as maxRoundTripSample: at most
// cleanupGrace + 2*maxRoundTripSample.
func (c *Client) attemptGrace() time.Duration {
	rtt := time.Duration(c.rtt.Load())
	if rtt == 0 {
		rtt = maxRoundTripSample
	}
	return cleanupGrace + 2*rtt
}

// withCtxErr is err, a network error, made to match ctx's error too if ctx has ended: a socket
// deadline set from ctx fails as an i/o timeout, and the caller should see that its context ended.
func withCtxErr(ctx context.Context, err error) error {
	if err == nil || isReply(err) {
		return err
	}
	cerr := ctx.Err()
	if dl, ok := ctx.Deadline(); cerr == nil && ok && !time.Now().Before(dl) {
		cerr = context.DeadlineExceeded // the socket's deadline, set from ctx's, came first
	}
	if cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}

// process sends cmd once (not again after a network error) and waits for its reply: straight on a
// connection of c.rdb, or, with WithAutoPipelining, through rdb's pipeliner when another command is
// out. A pipelined command whose wait ctx ends first is abandoned to the pipeliner, which may still
// write it, and run it, until its batch ends (bounded by the go-redis read, write and dial timeouts,
// not by ctx): the command returned is then a fresh one from build, failed with ctx's error (an
// unknown outcome), and the command is counted in c.late until its batch ends, so that the undos
// scheduled meanwhile are repeated after it (see repeat).
func process[C redis.Cmder](ctx context.Context, c *Client, cmd C, build func() C) C {
	busy := c.inflight.Add(1) > 1
	defer c.inflight.Add(-1)
	ap := c.ap.Load()
	if ap == nil || !busy {
		_ = c.rdb.Process(ctx, onceCmd{cmd})
		return cmd
	}
	c.piped.Add(1)
	f := ap.Submit(ctx, onceCmd{cmd})
	err := f.WaitContext(ctx)
	switch {
	case errors.Is(err, redis.ErrClosed):
		// Closed before it took the command (its Close, by rdb's other users, leaves rdb working):
		// rdb's current one from now on, and this command straight.
		if fresh, ferr := c.apOf.AsyncAutoPipeline(); ferr == nil {
			c.ap.CompareAndSwap(ap, fresh)
		}
		cmd = build()
		_ = c.rdb.Process(ctx, onceCmd{cmd})
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		c.late.add()
		if !c.background(func(<-chan struct{}) {
			_ = f.WaitContext(c.closing) // until its batch ends, or Close
			c.late.done()
		}) {
			c.late.done()
		}
		cmd = build()
		cmd.SetErr(err)
	}
	return cmd
}

// lateWrites counts a Client's pipelined commands abandoned by their callers (see process) whose
// batch has not ended: each may still be written and run.
type lateWrites struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while it is 0
}

func (l *lateWrites) add() {
	l.mu.Lock()
	if l.n++; l.n == 1 {
		l.idle = make(chan struct{})
	}
	l.mu.Unlock()
}

func (l *lateWrites) done() {
	l.mu.Lock()
	if l.n--; l.n == 0 {
		close(l.idle)
		l.idle = nil
	}
	l.mu.Unlock()
}

// pending returns nil if no abandoned command is outstanding, or a channel closed once none is (the
// ones outstanding now, and any abandoned before they end).
func (l *lateWrites) pending() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.idle
}

// evalFallback runs cmd, an EVALSHA of script that was answered NOSCRIPT, again as EVAL with the
// script's source, sent once, and stores the answer in cmd. It reports false if it cannot (not a
// script command of this package); cmd then keeps its NOSCRIPT.
func evalFallback(ctx context.Context, c *Client, cmd any, script *redis.Script) bool {
	sc, ok := cmd.(*redis.Cmd)
	src := scripts.Source(script)
	if !ok || src == "" || len(sc.Args()) < 2 {
		return false
	}
	eval := redis.NewCmd(ctx, append([]any{"eval", src}, sc.Args()[2:]...)...)
	_ = c.rdb.Process(ctx, onceCmd{eval})
	sc.SetVal(eval.Val())
	sc.SetErr(eval.Err())
	return true
}

// unsent is err, a failure before the command was written, marked notSent unless an earlier attempt
// of the same command may have run.
func (c *Client) unsent(err error, maybeRan bool) error {
	if maybeRan {
		return err
	}
	return notSent{err}
}

// isReply reports whether err is an error reply from Redis (not a network or context error).
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// neverWritten reports whether err proves that a command was never written to Redis: the connection
// could not be made, none was free in time, or the go-redis client is closed.
func neverWritten(err error) bool {
	var op *net.OpError
	switch {
	case err == nil:
		return false
	case errors.As(err, &op) && op.Op == "dial", errors.Is(err, redis.ErrClosed):
		return true
	}
	return strings.Contains(err.Error(), "connection pool timeout")
}

// run runs script, safe to run twice, on the master of its keys (see send), without WAIT.
func (c *Client) run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	cmd, _ := send(ctx, c, keys[0], script, func() *redis.Cmd { return scriptCmd(ctx, script, keys, args...) }, sendOpts{resend: true})
	return cmd
}

// evalOpts runs script as opts say (see send).
func (c *Client) evalOpts(ctx context.Context, opts sendOpts, script *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	return send(ctx, c, keys[0], script, func() *redis.Cmd { return scriptCmd(ctx, script, keys, args...) }, opts)
}

// resentArg, among the arguments of evalRecorded, stands for whether the copy sent is a re-send
// after an unknown outcome: "1" if it is, else "0".
type resentArg struct{}

// evalRecorded runs script, which keeps a record of each request (see the script's header), safe to
// run twice and followed by WAIT in the replica-acknowledged mode (ackErr: see send), with resentArg
// in args replaced for each copy. A re-send that finds no record of the first copy applies nothing
// and answers UNKNOWN: so no copy is applied twice, however late it lands; that answer becomes
// errUnknownOutcome, the error callers report.
func (c *Client) evalRecorded(ctx context.Context, script *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	flag := "0"
	opts := sendOpts{resend: true, acked: true, onResend: func() { flag = "1" }}
	cmd, ackErr := send(ctx, c, keys[0], script, func() *redis.Cmd {
		sent := make([]any, len(args))
		for i, a := range args {
			if _, ok := a.(resentArg); ok {
				a = flag
			}
			sent[i] = a
		}
		return scriptCmd(ctx, script, keys, sent...)
	}, opts)
	if errPrefix(cmd.Err(), "UNKNOWN") {
		cmd.SetErr(errUnknownOutcome)
	}
	return cmd, ackErr
}

// errUnknownOutcome is the error of a request whose reply was lost and whose re-send found no
// record of it: it may or may not have been applied (once at most). It matches ErrOutcomeUnknown,
// and is not a reply error, so that noEffect does not take it for proof that nothing changed.
var errUnknownOutcome = fmt.Errorf("%w: the reply was lost, and the re-sent request found no record of the first copy (which is applied once at most)", ErrOutcomeUnknown)

// mutate sends a data object's mutation, which must not run twice (see object.go), once: see send.
func mutate[C redis.Cmder](ctx context.Context, c *Client, key string, script *redis.Script, build func() C) (cmd C, ackErr error) {
	return send(ctx, c, key, script, build, sendOpts{acked: true})
}

// noEffect reports whether err proves that the command changed nothing: it never reached Redis
// (notSent, see send), or a WRONGTYPE reply, by which the scripts refuse a key before any write. Any
// other error leaves the outcome unknown: besides network and context errors, the error reply of a
// re-send (READONLY, LOADING, ...) may follow a first run, whose reply was lost, that was applied.
func noEffect(err error) bool {
	var re redis.Error
	var ns notSent
	return errors.As(err, &ns) || errors.As(err, &re) && strings.Contains(err.Error(), "WRONGTYPE")
}

// Routing: the master of a key, MOVED and ASK, refusals, and the slot map.

// node is the connection group that serves key: the Client's go-redis client, or on a Cluster the
// client of the master serving key's slot (a ClusterClient pipeline would send WAIT, which has no
// key, to any node).
func (c *Client) node(ctx context.Context, key string) (redis.Cmdable, string, error) {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return c.rdb, "", nil
	}
	n, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return nil, "", err
	}
	return n, n.Options().Addr, nil
}

// refused reports whether err proves that a command did not run and may succeed if sent again
// shortly: TRYAGAIN (a script names all the keys of an object, and while their slot migrates, one
// that finds some of them moved and others not, or absent, is refused until the migration ends),
// CLUSTERDOWN (a failover under way), or, on a Cluster, a connection refused (a master that died,
// which the slot map still names) or a MOVED/ASK left after go-redis's redirections ran out (a
// migration ending): the slot map is reloaded.
func (c *Client) refused(err error) bool {
	switch {
	case err == nil:
		return false
	case errPrefix(err, "TRYAGAIN"), errPrefix(err, "CLUSTERDOWN"):
		return true
	}
	cc, ok := c.rdb.(*redis.ClusterClient)
	if ok && (errPrefix(err, "MOVED") || errPrefix(err, "ASK")) {
		// go-redis ran out of redirections while the slot map was changing (a migration ending):
		// the node refused without running the command. The slot map is read again.
		c.reloadSlots(cc)
		return true
	}
	if ok && errors.Is(err, syscall.ECONNREFUSED) {
		c.reloadSlots(cc)
		return true
	}
	return false
}

// retryPause waits before the attempt+1st re-send of a refused command (see refused): 10ms doubling
// to 320ms, about 10s in all. It returns false, at once, when there is to be no re-send: ctx ended or
// the attempts ran out.
func retryPause(ctx context.Context, attempt int) bool {
	if attempt >= 36 {
		return false
	}
	t := time.NewTimer(time.Duration(10<<min(attempt, 5)) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// maxRedirects bounds the MOVED and ASK replies followed for one command.
const maxRedirects = 5

// route is where a command for one Cluster slot is sent: the node, its address, and whether it must
// be preceded by ASKING (the slot is being imported there).
type route struct {
	node redis.Cmdable
	addr string
	ask  bool
}

// redirected returns where a MOVED or ASK reply err sends the command: the client of the node it
// names (MOVED also reloads the slot map). redirect is false if err is no redirection; r.node is nil
// if err names a node the slot map does not know (the map is then reloaded: route by it again).
func (c *Client) redirected(ctx context.Context, err error) (r route, redirect bool) {
	cc, isCluster := c.rdb.(*redis.ClusterClient)
	if !isCluster || err == nil {
		return route{}, false
	}
	f := strings.Fields(err.Error())
	if len(f) != 3 || (f[0] != "MOVED" && f[0] != "ASK") {
		return route{}, false
	}
	if f[0] == "MOVED" {
		c.reloadSlots(cc)
	}
	var node *redis.Client
	var mu sync.Mutex
	_ = cc.ForEachShard(ctx, func(_ context.Context, n *redis.Client) error {
		if n.Options().Addr == f[2] {
			mu.Lock()
			node = n
			mu.Unlock()
		}
		return nil
	})
	if node == nil {
		cc.ReloadState(ctx)
		return route{}, true
	}
	return route{node: node, addr: f[2], ask: f[0] == "ASK"}, true
}

// reloadSlots asks go-redis to reload the Cluster slot map, at most once a second.
func (c *Client) reloadSlots(cc *redis.ClusterClient) {
	now := time.Now().UnixNano()
	if last := c.slotsReloaded.Load(); now-last >= int64(time.Second) && c.slotsReloaded.CompareAndSwap(last, now) {
		cc.ReloadState(context.Background())
	}
}

// The replica-acknowledged mode: WAIT after the command, on its connection.

// ackResult interprets the reply to WAIT for need acknowledgements (see send): nil if enough
// replicas acknowledged or the server has no WAIT (the mode then turns off, logged once), else an
// error matching ErrNotReplicated, counted in Stats.AckFailures.
func (c *Client) ackResult(wait *redis.Cmd, need int) error {
	a := &c.acks
	got, err := wait.Int64()
	switch {
	case err != nil && isUnknownCommand(err):
		if !a.noWait.Swap(true) {
			c.cfg.logger.Error("redisson: replica-acknowledged mode is on but the server has no WAIT command; "+
				"carrying on without acknowledgements", "err", err)
		}
		return nil
	case err != nil:
		err = fmt.Errorf("%w: WAIT failed: %w", ErrNotReplicated, err)
	case got < int64(need):
		err = fmt.Errorf("%w: %d of %d replicas acknowledged within %v", ErrNotReplicated, got, need, a.timeout)
	default:
		return nil
	}
	a.failures.Add(1)
	return err
}

// Reads.

// read sends the read commands fn queues on p in one round trip to the master that serves their
// keys (one slot, key's), whatever read routing the user's go-redis client has: the library's reads decide
// what it guarantees (a latch's count, a lock's owner), and a replica may lag behind. A client that
// may send read-only commands to replicas gets them wrapped in MULTI/EXEC, which go-redis sends to
// the master; any other client sends them as a plain pipeline. The commands carry their own results
// and errors; read returns the first error, as Pipelined does (redis.Nil included).
func (c *Client) read(ctx context.Context, key string, fn func(p redis.Pipeliner)) error {
	c.checkServer(ctx, key)
	p := c.rdb.Pipeline()
	if c.replicaReads {
		p = c.rdb.TxPipeline()
	}
	fn(p)
	cmds, err := p.Exec(ctx)
	if err != nil {
		for _, cmd := range cmds {
			if e := cmd.Err(); e != nil {
				cmd.SetErr(withCtxErr(ctx, e))
			}
		}
	}
	return withCtxErr(ctx, err)
}

// Commands sent as they are, and the data objects' transactions.

// onceCmd marks a command that go-redis must not send again after a network error (see "Sent once").
type onceCmd struct{ redis.Cmder }

// NoRetry tells go-redis not to re-send the command.
func (onceCmd) NoRetry() bool { return true }

// scriptCmd is an EVALSHA of script, to be sent as it is (Script.Run would send it through the
// client's re-sending Process).
func scriptCmd(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, "evalsha", scripts.HashArg(script), len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	return redis.NewCmd(ctx, append(a, args...)...)
}

// execOnce sends cmds (each a command's arguments, all on key's slot) as one MULTI/EXEC transaction
// in one round trip, once (see "Sent once"), and returns EXEC's replies in order; a reply that is an
// error is an error value (the other commands ran). err is the transaction's own failure: refused
// (sent again after a pause, see Client.refused), discarded (EXECABORT: nothing ran) or a network
// error (it may or may not have run). In the replica-acknowledged mode MULTI and EXEC are sent by hand
// before WAIT (send's tx option), and ackErr reports too few acknowledgements.
func (c *Client) execOnce(ctx context.Context, key string, cmds [][]any) (replies []any, ackErr, err error) {
	for attempt := 0; c.acks.on(); attempt++ {
		queued := make([]*redis.Cmd, len(cmds))
		var exec *redis.Cmd
		exec, ackErr = send(ctx, c, key, nil, func() *redis.Cmd { return redis.NewCmd(ctx, "exec") }, sendOpts{acked: true,
			tx: func(p redis.Pipeliner) {
				for i, args := range cmds {
					queued[i] = redis.NewCmd(ctx, args...)
					_ = p.Process(ctx, onceCmd{queued[i]})
				}
			}})
		if err := exec.Err(); err != nil {
			// EXECABORT: a command was refused when queued (MOVED, ASK, TRYAGAIN after a migration
			// or failover) and nothing ran; send sees only EXEC's error, so the refusal is looked
			// at here (the slot map is reloaded) and the transaction sent again.
			if errPrefix(err, "EXECABORT") {
				for _, q := range queued {
					if c.refused(q.Err()) && retryPause(ctx, attempt) {
						err = nil
						break
					}
				}
				if err == nil {
					continue
				}
			}
			return nil, nil, err
		}
		replies, _ = exec.Val().([]any)
		if len(replies) != len(cmds) {
			return nil, nil, fmt.Errorf("EXEC answered %d replies for %d commands", len(replies), len(cmds))
		}
		return replies, ackErr, nil
	}
	for attempt := 0; ; attempt++ {
		sent := make([]*redis.Cmd, len(cmds))
		_, err := c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i, args := range cmds {
				sent[i] = redis.NewCmd(ctx, args...)
				_ = p.Process(ctx, onceCmd{sent[i]})
			}
			return nil
		})
		if err != nil && (c.refused(err) || neverWritten(err) && attempt < unsentRetries) && retryPause(ctx, attempt) {
			continue
		}
		// A command's own error (WRONGTYPE) is its reply; anything else failed the transaction.
		replies = make([]any, len(sent))
		for i, cmd := range sent {
			v, cerr := cmd.Result()
			var rerr redis.Error
			switch {
			case cerr == nil:
				replies[i] = v
			case errors.As(cerr, &rerr) && !errPrefix(cerr, "EXECABORT"):
				replies[i] = cerr
			default:
				return nil, nil, withCtxErr(ctx, cerr)
			}
		}
		return replies, nil, nil
	}
}

// Clean-ups, and what the Client logs of an unreachable server.

// detached returns a context with ctx's values but not its cancellation, for clean-ups that must run
// after ctx has ended: it ends between cleanupTimeout-cleanupShare and cleanupTimeout from now, never
// later. The clean-ups that start within cleanupShare of each other share that end, one timer for
// all of them: a context.WithTimeout of its own cost an uncontended lock+unlock cycle a tenth of its
// speed (the timer, and the wake-up of the network poller it often forces), measured with
// BenchmarkUncontended.
func (c *Client) detached(ctx context.Context) context.Context {
	e := c.cleanupEnd.Load()
	now := time.Now() // after the Load: an end stored before it was made at most now
	if e == nil || e.at.Sub(now) < cleanupTimeout-cleanupShare {
		e = &sharedEnd{at: now.Add(cleanupTimeout)}
		e.ctx, e.stop = context.WithDeadline(context.Background(), e.at)
		c.cleanupEnd.Store(e) // one started at the same moment may win: either ends in time
	}
	return cleanupCtx{Context: e.ctx, values: context.WithoutCancel(ctx)}
}

// cleanupShare is how much sooner than cleanupTimeout a clean-up may end (see detached).
const cleanupShare = 100 * time.Millisecond

// sharedEnd is a context ending at a fixed time, shared by the clean-ups that start around the same
// moment. Nothing cancels it early (a clean-up goes on after Close): its timer stops at its end.
type sharedEnd struct {
	ctx  context.Context
	stop context.CancelFunc // kept for vet's sake: the context ends at its deadline
	at   time.Time
}

// cleanupCtx is a clean-up's context: the end (Deadline, Done, Err) of the context it embeds, a
// sharedEnd's, and the values of the caller's context, which are looked up first. Looked up in the
// sharedEnd after them, the context package's own key finds the sharedEnd's cancellation, so that
// context.Cause reports its end and a context derived from this one is cancelled with it without a
// goroutine of its own.
type cleanupCtx struct {
	context.Context
	values context.Context // context.WithoutCancel of the caller's
}

func (c cleanupCtx) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// cleanupGrace is how long a call whose context has ended still waits for its clean-up (see cleanup).
const cleanupGrace = 25 * time.Millisecond

// cleanup runs f, a clean-up that must happen even if ctx has ended (an undo, a release), with a
// context of its own (ctx's values, bounded by cleanupTimeout), on a goroutine the Client owns (on
// the caller's if ctx can never end), and waits for it while ctx lasts and cleanupGrace longer: a
// call never overstays its context by more than that, even when Redis is slow or unreachable; f then finishes in the background, and Close
// waits for it (a release the caller asked for is carried out even if Close comes meanwhile). It
// reports whether f finished. After Close, f runs on the caller's goroutine.
func (c *Client) cleanup(ctx context.Context, f func(ctx context.Context)) bool {
	if ctx.Done() == nil {
		// ctx never ends: nothing to return early for, so f runs on the caller's goroutine (still
		// counted, so that Close waits for it), which saves a hand-over a goroutine switch.
		c.inline(func() { f(c.detached(ctx)) })
		return true
	}
	done := make(chan struct{})
	run := func(<-chan struct{}) {
		defer close(done)
		f(c.detached(ctx))
	}
	if !c.background(run) {
		f(c.detached(ctx))
		return true
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
	}
	t := time.NewTimer(cleanupGrace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// unreachableNow notes that a command could not reach Redis (no connection could be made), logging
// it once until a command succeeds again (see reachable): a server that is down would otherwise log
// a line per call and per renewal. (go-redis logs its own dial failures through redis.SetLogger.)
func (c *Client) unreachableNow(err error) {
	if !c.unreachable.Swap(true) {
		c.cfg.logger.Warn("redisson: cannot reach Redis; calls fail until it is back (logged once)", "err", err)
	}
}

// reachable notes that a command succeeded (see unreachableNow).
func (c *Client) reachable() {
	if c.unreachable.Load() && c.unreachable.Swap(false) {
		c.cfg.logger.Info("redisson: Redis reachable again")
	}
}

// repeat runs f in the background, on a goroutine the Client owns, after each of pauses in turn,
// each time with a context of its own (bounded by cleanupTimeout), until f reports it is done or the
// Client is closed.
//
// With WithAutoPipelining, commands abandoned in the pipeliner when f is scheduled (see process) may
// still be written after the pauses: once they have all been written or failed, f runs after each of
// pauses once more, as after a command that was just sent.
func (c *Client) repeat(pauses []time.Duration, f func(ctx context.Context) (done bool)) {
	late := c.late.pending()
	c.background(func(stop <-chan struct{}) {
		if c.runPauses(stop, pauses, f) || late == nil {
			return
		}
		select {
		case <-stop:
			return
		case <-late:
		}
		c.runPauses(stop, pauses, f)
	})
}

// runPauses runs f after each of pauses in turn (see repeat) and reports whether f is done; false
// also if stop is closed first.
func (c *Client) runPauses(stop <-chan struct{}, pauses []time.Duration, f func(ctx context.Context) (done bool)) bool {
	for _, d := range pauses {
		t := time.NewTimer(d)
		select {
		case <-stop:
			t.Stop()
			return false
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.closing, cleanupTimeout)
		done := f(ctx)
		cancel()
		if done {
			return true
		}
	}
	return false
}

// cleanupFailed logs a clean-up (an undo) of the object called name that failed with err.
func (c *Client) cleanupFailed(what, name string, err error) {
	if neverWritten(err) {
		c.unreachableNow(err)
		return
	}
	c.cfg.logger.Warn("redisson: "+what, "name", name, "err", err)
}

// Renewals: one script call per batch, pipelined per node, the nodes in parallel.

// renewBatches is the scheduler's Renewer: one script call per batch (one kind and slot each), the
// calls for one Redis node pipelined in one round trip, the nodes of a Cluster in parallel, so that a
// slow node delays only its own batches.
func (c *Client) renewBatches(ctx context.Context, batches [][]*renew.Entry, report func(int, []bool, error)) int {
	byNode := map[redis.Cmdable][]int{}
	addrs := map[redis.Cmdable]string{}
	var nodes []redis.Cmdable
	for i, b := range batches {
		node, addr, err := c.node(ctx, b[0].Key)
		if err != nil {
			c.renewFailed(len(b), err)
			report(i, nil, err)
			continue
		}
		if _, ok := byNode[node]; !ok {
			nodes = append(nodes, node)
			addrs[node] = addr
		}
		byNode[node] = append(byNode[node], i)
	}
	var trips atomic.Int64
	var wg sync.WaitGroup
	for _, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trips.Add(int64(c.renewOnNode(ctx, route{node: node, addr: addrs[node]}, batches, byNode[node], report)))
		}()
	}
	wg.Wait()
	return int(trips.Load())
}

// clusterNode is the address of the master serving key, as the client's slot map has it ("" if
// unknown). It runs on the scheduler goroutine and does not wait on the network: the slot map is
// cached once the client has served a command, which it has for every key it renews (go-redis
// refreshes a stale map in the background).
func clusterNode(cc *redis.ClusterClient, key string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	n, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return ""
	}
	return n.Options().Addr
}

// renewOnNode sends the batches idx, all for the node of r, in one pipeline and reports each. A
// batch whose script the node did not have (NOSCRIPT: a pipelined EVALSHA does not fall back to EVAL)
// is sent again once the script is loaded there; a batch whose slot has moved (MOVED, ASK: a failover
// or a migration the slot map does not know yet) is sent again to the node the reply names, after
// ASKING for ASK, and MOVED reloads the slot map. Those re-sends are pipelined per node too, a few
// rounds at most; what is still unanswered then is reported failed, to be renewed in the next round.
// In the replica-acknowledged mode each pipeline ends with WAIT, and lock renewals that too few
// replicas acknowledged are reported failed. It returns the round trips made.
func (c *Client) renewOnNode(ctx context.Context, r route, batches [][]*renew.Entry, idx []int, report func(int, []bool, error)) int {
	trips := 0
	todo := map[route][]int{r: idx}
	loaded := map[string]bool{} // node address + script hash
	for round := 0; len(todo) > 0; round++ {
		next := map[route][]int{}
		for r, idx := range todo {
			trips += c.renewSend(ctx, r, batches, idx, report, round < maxRedirects, loaded, next)
		}
		todo = next
	}
	return trips
}

// renewSend sends one pipeline of renewals for the node of r (see renewOnNode). Batches to send again
// go into again (if retry), by route; the others are reported. It returns the round trips made.
func (c *Client) renewSend(ctx context.Context, r route, batches [][]*renew.Entry, idx []int, report func(int, []bool, error),
	retry bool, loaded map[string]bool, again map[route][]int) int {
	// A pipelined EVALSHA does not fall back to EVAL: load the scripts first (once per node), rather
	// than learn it from a NOSCRIPT reply, which in the replica-acknowledged mode costs a whole WAIT.
	var used []*redis.Script
	for _, i := range idx {
		used = append(used, renewKinds[batches[i][0].Kind].script)
	}
	trips := c.preload(ctx, r, used...)
	pipe := r.node.Pipeline()
	cmds := make([]*redis.Cmd, len(idx))
	for j, i := range idx {
		if r.ask {
			pipe.Do(ctx, "ASKING")
		}
		script, keys, args := c.renewCall(batches[i])
		cmds[j] = pipe.EvalSha(ctx, script.Hash(), keys, args...)
	}
	var wait *redis.Cmd
	need := 0
	if c.acks.on() {
		if need = c.needed(ctx, r.node, r.addr); need > 0 {
			wait = pipe.Do(ctx, "WAIT", need, c.acks.timeout.Milliseconds())
		}
	}
	_, _ = pipe.Exec(ctx) // errors are per command
	trips++
	var ackErr error
	if wait != nil {
		ackErr = c.ackResult(wait, need)
	}
	for j, i := range idx {
		res, err := cmds[j].Int64Slice()
		if err != nil && retry {
			if errPrefix(err, "NOSCRIPT") { // flushed, or a new master: load it again
				script := renewKinds[batches[i][0].Kind].script
				if k := r.addr + script.Hash(); !loaded[k] {
					loaded[k] = true
					c.forgetLoaded(r.addr, script)
				}
				again[r] = append(again[r], i)
				continue
			}
			if next, redirect := c.redirected(ctx, err); redirect && next.node != nil {
				again[next] = append(again[next], i)
				continue
			}
		}
		if err == nil && ackErr != nil && renewKinds[batches[i][0].Kind].hold {
			err = ackErr // not extended on enough replicas: as good as not extended
		}
		c.reportRenewal(i, len(batches[i]), res, err, report)
	}
	return trips
}

// reportRenewal reports one batch's outcome: a renewal script's reply, or err.
func (c *Client) reportRenewal(i, entries int, res []int64, err error, report func(int, []bool, error)) {
	if err != nil {
		c.renewFailed(entries, err)
		report(i, nil, err)
		return
	}
	alive := make([]bool, len(res))
	for k, v := range res {
		alive[k] = v == 1
	}
	report(i, alive, nil)
}

// renewCall is the script call renewing batch (one kind): see renewKinds.
func (c *Client) renewCall(batch []*renew.Entry) (*redis.Script, []string, []any) {
	return renewCallWith(batch, batch[0].Lease.Milliseconds())
}

// renewCallWith is renewCall setting the lease leaseMs (0: the read-only check of the tracker).
func renewCallWith(batch []*renew.Entry, leaseMs int64) (*redis.Script, []string, []any) {
	k := renewKinds[batch[0].Kind]
	keys := make([]string, 0, len(batch)*max(1, len(batch[0].Keys)))
	args := make([]any, 1, len(batch)+2)
	args[0] = leaseMs
	if k.side != "" {
		args = append(args, k.side)
	}
	for _, e := range batch {
		if e.Keys != nil {
			keys = append(keys, e.Keys...)
		} else {
			keys = append(keys, e.Key)
		}
		args = append(args, e.Owner)
	}
	return k.script, keys, args
}

// preload loads, on the node of r, the scripts not known to be loaded there yet, for pipelines of
// EVALSHA, which do not fall back to EVAL. It returns the round trips made (one per script loaded:
// Script.Load must not run in a pipeline, where it would record an empty hash). A failure is left to
// the pipeline: its NOSCRIPT replies say what is missing.
func (c *Client) preload(ctx context.Context, r route, scripts ...*redis.Script) int {
	trips := 0
	for i, s := range scripts {
		if _, ok := c.loaded.Load(r.addr + "|" + s.Hash()); ok || slices.Contains(scripts[:i], s) {
			continue
		}
		trips++
		if s.Load(ctx, r.node).Err() == nil {
			c.loaded.Store(r.addr+"|"+s.Hash(), true)
		}
	}
	return trips
}

// forgetLoaded forgets that script is loaded on the node at addr (it answered NOSCRIPT: flushed, or
// a new master after a failover), so that the next preload loads it again.
func (c *Client) forgetLoaded(addr string, script *redis.Script) {
	c.loaded.Delete(addr + "|" + script.Hash())
}

// renewFailed logs a failed renewal call; on a Cluster, a connection error (rather than a Redis
// reply) also reloads the slot map, at most once a second: go-redis alone keeps dialling a dead master
// until its periodic reload.
func (c *Client) renewFailed(entries int, err error) {
	if neverWritten(err) {
		c.unreachableNow(err)
	} else {
		c.cfg.logger.Warn("redisson: renewal failed", "entries", entries, "err", err)
	}
	var re redis.Error
	if cc, ok := c.rdb.(*redis.ClusterClient); ok && !errors.As(err, &re) {
		c.reloadSlots(cc)
	}
}
