package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Time bounds for process management. Every wait in this package is bounded.
const (
	readyTimeout = 10 * time.Second       // start → answering PING
	readyPoll    = 10 * time.Millisecond  // interval between readiness PINGs
	pingTimeout  = 250 * time.Millisecond // one readiness PING round trip
	stopTimeout  = 10 * time.Second       // SIGTERM → exit, before escalating to SIGKILL
	killTimeout  = 10 * time.Second       // SIGKILL → exit
	pauseTimeout = 5 * time.Second        // SIGSTOP → observed stopped

	logTailBytes = 8 << 10
	logTailLines = 30
)

// ErrNotRunning is returned, wrapped, by [Server.Pause] and [Server.Resume]
// when the server process is not running (never started successfully,
// stopped, killed, crashed, or closed).
var ErrNotRunning = errors.New("redis-server is not running")

// ErrClosed is returned, wrapped, by [Server.Restart] after [Server.Close].
var ErrClosed = errors.New("redistest: server closed")

// process is one redis-server process (later also sentinel or cluster
// node) with a fixed command line, which can be started again after it
// exits. Lifecycle operations are serialised by opMu; quick accessors only
// take mu, so they do not block behind a slow stop.
type process struct {
	bin     string
	args    []string
	dir     string // working directory; owned by the caller
	logPath string // receives the server log and its stdout/stderr
	addr    string // loopback address that answers PING once ready
	ports   []int  // must all be bindable before a start

	opMu sync.Mutex // serialises start, stop, kill, pause, resume, close

	mu     sync.Mutex // guards the fields below
	cur    *run       // latest run, nil before the first start
	paused bool       // cur was sent SIGSTOP and not SIGCONT since
	closed bool
}

// run is one execution of a process. Its waiter goroutine is the only
// caller of cmd.Wait; it stores the result and closes exited, so any number
// of callers can wait for the exit, and once exited is closed the goroutine
// is finished.
type run struct {
	cmd       *exec.Cmd
	logOffset int64 // size of the log file when this run started
	exited    chan struct{}
	err       error // cmd.Wait's result; read only after exited is closed
}

func (r *run) running() bool {
	if r == nil {
		return false
	}
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// waitExit blocks until r has exited (true) or d elapsed (false).
func (r *run) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.exited:
		return true
	case <-t.C:
		return false
	}
}

func (p *process) current() *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// pid returns the pid of the running process, or 0.
func (p *process) pid() int {
	if r := p.current(); r.running() {
		return r.cmd.Process.Pid
	}
	return 0
}

// start launches the process and blocks until it answers PING, exits, or
// readyTimeout elapses. If the configured ports are not free it fails with
// an error wrapping ErrPortInUse without starting anything. On any failure
// the process is not running and its waiter goroutine has finished.
func (p *process) start() error {
	p.opMu.Lock()
	defer p.opMu.Unlock()

	p.mu.Lock()
	closed, cur := p.closed, p.cur
	p.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if cur.running() {
		return fmt.Errorf("redis-server on %s is already running (pid %d)", p.addr, cur.cmd.Process.Pid)
	}
	for _, port := range p.ports {
		if !portFree(port) {
			return fmt.Errorf("cannot start redis-server: %s: %w", loopbackAddr(port), ErrPortInUse)
		}
	}

	r, err := p.spawn()
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.cur, p.paused = r, false
	p.mu.Unlock()

	if err := p.waitReady(r); err != nil {
		if kerr := p.killRun(r); kerr != nil {
			err = errors.Join(err, kerr)
		}
		return err
	}
	return nil
}

// spawn starts the command and its waiter goroutine.
func (p *process) spawn() (*run, error) {
	logf, err := os.OpenFile(p.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log file: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	off, err := logf.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("opening log file: %w", err)
	}

	cmd := exec.Command(p.bin, p.args...)
	cmd.Dir = p.dir
	// An *os.File is handed to the child as is: no copying goroutines.
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.bin, err)
	}
	r := &run{cmd: cmd, logOffset: off, exited: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		close(r.exited)
	}()
	return r, nil
}

// waitReady polls PING until the server answers, r exits, or readyTimeout
// elapses. It does not stop r.
func (p *process) waitReady(r *run) error {
	deadline := time.Now().Add(readyTimeout)
	tick := time.NewTimer(readyPoll)
	defer tick.Stop()
	for {
		select {
		case <-r.exited:
			return p.startupExit(r)
		default:
		}
		reply, err := ping(p.addr, pingTimeout)
		if err == nil && pingReady(reply) {
			// Another process's server may have bound the port first (two processes of a test
			// run picked the same free port): this one then fails to bind, and the PING was
			// answered by the other.
			if pid, ok := serverPID(p.addr, pingTimeout); ok && pid != r.cmd.Process.Pid {
				return fmt.Errorf("cannot start redis-server: %s answered by another server (pid %d): %w", p.addr, pid, ErrPortInUse)
			}
			return nil
		}
		if time.Now().After(deadline) {
			last := reply
			if err != nil {
				last = err.Error()
			}
			return fmt.Errorf("redis-server on %s did not answer PING within %v (last attempt: %s); log tail:\n%s",
				p.addr, readyTimeout, last, p.logTail(r.logOffset))
		}
		select {
		case <-r.exited:
			return p.startupExit(r)
		case <-tick.C:
			tick.Reset(readyPoll)
		}
	}
}

// startupExit builds the error for a run that exited before it was ready.
func (p *process) startupExit(r *run) error {
	<-r.exited
	tail := p.logTail(r.logOffset)
	return &exitError{
		addr:      p.addr,
		status:    r.err,
		tail:      tail,
		addrInUse: strings.Contains(tail, "Address already in use"),
	}
}

// exitError reports a server that exited during startup. It matches
// ErrPortInUse when the log shows a failed bind.
type exitError struct {
	addr      string
	status    error // nil for exit status 0
	tail      string
	addrInUse bool
}

func (e *exitError) Error() string {
	status := "exit status 0"
	if e.status != nil {
		status = e.status.Error()
	}
	return fmt.Sprintf("redis-server for %s exited during startup (%s); log tail:\n%s", e.addr, status, e.tail)
}

func (e *exitError) Is(target error) bool { return target == ErrPortInUse && e.addrInUse }

// stop sends SIGTERM (after SIGCONT if paused) and blocks until the process
// exits. If it has not exited after stopTimeout it is killed and an error is
// returned. A non-zero exit status is reported as an error. Stopping a
// process that is not running returns nil.
func (p *process) stop() error {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	r := p.current()
	if !r.running() {
		return nil
	}
	p.continueIfPaused(r)
	if err := signal(r, sigTerm); err != nil {
		if errors.Is(err, ErrNotRunning) {
			<-r.exited // exit observed by the kernel; Wait is about to return
			return nil
		}
		return fmt.Errorf("stopping redis-server on %s: %w", p.addr, err)
	}
	if !r.waitExit(stopTimeout) {
		err := fmt.Errorf("redis-server on %s did not exit within %v of SIGTERM; killing it", p.addr, stopTimeout)
		if kerr := p.killRun(r); kerr != nil {
			err = errors.Join(err, kerr)
		}
		return err
	}
	if r.err != nil {
		return fmt.Errorf("redis-server on %s: %w; log tail:\n%s", p.addr, r.err, p.logTail(r.logOffset))
	}
	return nil
}

// kill sends SIGKILL and blocks until the process has exited. Killing a
// process that is not running returns nil.
func (p *process) kill() error {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	return p.killRun(p.current())
}

// killRun SIGKILLs r (after SIGCONT if paused) and waits up to killTimeout
// for its waiter goroutine to finish. Callers hold opMu.
func (p *process) killRun(r *run) error {
	if !r.running() {
		return nil
	}
	p.continueIfPaused(r)
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing redis-server on %s: %w", p.addr, err)
	}
	if !r.waitExit(killTimeout) {
		return fmt.Errorf("redis-server on %s (pid %d) did not exit within %v of SIGKILL", p.addr, r.cmd.Process.Pid, killTimeout)
	}
	return nil
}

// continueIfPaused sends SIGCONT to r if it was paused, so that it can act
// on a following SIGTERM. Callers hold opMu.
func (p *process) continueIfPaused(r *run) {
	p.mu.Lock()
	paused := p.paused
	p.paused = false
	p.mu.Unlock()
	if paused {
		_ = signal(r, sigCont) // best effort: it may have died meanwhile
	}
}

// pause sends SIGSTOP and, where the OS allows (Linux), blocks until the
// process is observed stopped.
func (p *process) pause() error {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	r := p.current()
	if !r.running() {
		return fmt.Errorf("pausing %s: %w", p.addr, ErrNotRunning)
	}
	if err := signal(r, sigStop); err != nil {
		return fmt.Errorf("pausing %s: %w", p.addr, err)
	}
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	if err := waitStopped(r.cmd.Process.Pid, pauseTimeout); err != nil {
		return fmt.Errorf("pausing %s: %w", p.addr, err)
	}
	return nil
}

// resume sends SIGCONT. It does not wait for the server to serve requests.
func (p *process) resume() error {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	r := p.current()
	if !r.running() {
		return fmt.Errorf("resuming %s: %w", p.addr, ErrNotRunning)
	}
	if err := signal(r, sigCont); err != nil {
		return fmt.Errorf("resuming %s: %w", p.addr, err)
	}
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
	return nil
}

// close marks the process closed, so it cannot be started again, and kills
// it if it is running, blocking until it has exited. It does not touch dir.
func (p *process) close() error {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	p.mu.Lock()
	p.closed = true
	r := p.cur
	p.mu.Unlock()
	return p.killRun(r)
}

// signal delivers sig to r, mapping "already exited" to ErrNotRunning and
// a signal the OS lacks to errors.ErrUnsupported.
func signal(r *run, sig os.Signal) error {
	if sig == nil {
		return errors.ErrUnsupported
	}
	err := r.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return ErrNotRunning
	}
	return err
}

// logTail returns the last lines written to the log file since offset,
// indented for inclusion in an error message. It never fails: problems
// reading the log are described in the result.
func (p *process) logTail(offset int64) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return fmt.Sprintf("\t(cannot read %s: %v)", p.logPath, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("\t(cannot read %s: %v)", p.logPath, err)
	}
	size := fi.Size()
	start := offset
	if start > size {
		start = 0 // the file was truncated meanwhile
	}
	if size-start > logTailBytes {
		start = size - logTailBytes
	}
	b, err := io.ReadAll(io.NewSectionReader(f, start, size-start))
	if err != nil {
		return fmt.Sprintf("\t(cannot read %s: %v)", p.logPath, err)
	}
	text := strings.TrimRight(string(b), "\r\n")
	if text == "" {
		return fmt.Sprintf("\t(%s is empty)", p.logPath)
	}
	lines := strings.Split(text, "\n")
	if start > offset && len(lines) > 1 {
		lines = lines[1:] // partial first line
	}
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return "\t" + strings.Join(lines, "\n\t")
}

// ping sends an inline PING to addr and returns the first reply line.
func ping(addr string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	// With nothing listening, the kernel may pick the target port as the
	// source port and connect the socket to itself: that is not a server.
	if c.LocalAddr().String() == c.RemoteAddr().String() {
		return "", errors.New("self-connected socket")
	}
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

// serverPID returns the process_id of INFO server from the server at addr, and
// whether it could tell (not when the server asks for a password).
func serverPID(addr string, timeout time.Duration) (int, bool) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, false
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return 0, false
	}
	if _, err := io.WriteString(c, "INFO server\r\n"); err != nil {
		return 0, false
	}
	rd := bufio.NewReader(c)
	head, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		return 0, false // an error reply (NOAUTH), or not a bulk string
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || n < 0 {
		return 0, false
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(rd, body); err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid, err := strconv.Atoi(v)
			return pid, err == nil
		}
	}
	return 0, false
}

// pingReady reports whether a PING reply shows a server that accepts
// commands: any simple-string reply (+PONG) or an error other than
// LOADING/BUSY (e.g. NOAUTH when a password is configured).
func pingReady(reply string) bool {
	switch {
	case strings.HasPrefix(reply, "+"):
		return true
	case strings.HasPrefix(reply, "-LOADING"), strings.HasPrefix(reply, "-BUSY"):
		return false
	case strings.HasPrefix(reply, "-"):
		return true
	default:
		return false
	}
}
