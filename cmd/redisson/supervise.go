package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

const (
	// guardArg, as the first argument, runs redisson as the guard of a command (Linux: see guard).
	guardArg = "__guard"
	// parentDeathSignal is the guard's parent-death signal: caught, and checked against getppid().
	parentDeathSignal = syscall.SIGUSR1
)

// forwarded are the signals the CLI passes on to the command (its process group) while it runs, and
// which end a wait for the lock before it runs (exit 128+signal).
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signals relays the forwarded signals: before the command runs they cancel the acquisition, while
// it runs they are passed on to it.
type signals struct {
	ch     chan os.Signal
	cancel context.CancelFunc
	got    chan os.Signal // the first signal received before the command started (buffered)
	// handOff stops cancelling on signals: from then on they are read from ch by child.run.
	handOff func()
}

// catchSignals starts catching the forwarded signals; ctx is cancelled by the first one until
// forward takes over. stop undoes it.
func catchSignals(parent context.Context) (ctx context.Context, s *signals, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	s = &signals{ch: make(chan os.Signal, 4), cancel: cancel, got: make(chan os.Signal, 1)}
	signal.Notify(s.ch, forwarded...)
	done := make(chan struct{})
	stopWatch := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-s.ch:
			s.got <- sig
			cancel()
		case <-stopWatch:
		}
	}()
	var stopped bool
	s.handOff = func() {
		if !stopped {
			stopped = true
			close(stopWatch)
			<-done
		}
	}
	return ctx, s, func() {
		s.handOff()
		signal.Stop(s.ch)
		cancel()
	}
}

// interrupted is the exit error of a wait ended by a signal (128+signal, as shells report it), or
// nil if no signal was received.
func (s *signals) interrupted(what string) error {
	select {
	case sig := <-s.got:
		s.got <- sig
		n := int(sig.(syscall.Signal))
		return exitf(128+n, "%s: interrupted by %v", what, sig)
	default:
		return nil
	}
}

// child is a command run under a lock or permits.
type child struct {
	argv   []string
	env    []string        // added to the CLI's environment
	lost   <-chan struct{} // closed when the lock or permits are lost
	grace  time.Duration   // between SIGTERM and SIGKILL after a loss
	sigs   *signals
	stderr io.Writer
}

// run starts the command in a process group of its own, passes the forwarded signals on to that
// group, and on a loss sends it SIGTERM, then SIGKILL after the grace period. It returns once the
// command exited and no process is left in its group (what the command started in the background
// runs under the lock too: the lock is kept until it exits; if the command was ended by a forwarded
// signal, or on a loss, what is left gets SIGTERM, then SIGKILL after the grace period): the
// command's exit status (128+signal if a signal ended it) and whether the loss was signalled while
// the group ran; or the exit error of a command that could not start (127 not found, 126
// otherwise). Where the system allows it (startSupervised), the group is SIGKILLed if redisson dies
// first: it never runs on without the lock.
func (c *child) run() (status int, lost bool, err error) {
	// The processes the command leaves behind become redisson's children (where the system allows
	// it), so that they are reaped here and a finished one is not mistaken for a running one.
	becomeSubreaper()
	// From now on the signals are the command's: a signal received before it started is passed on
	// once it has (it may still be worth a clean exit).
	c.sigs.handOff()
	p, err := startSupervised(c.argv, c.env, c.stderr)
	if err != nil {
		return 0, false, err
	}
	if p.end != nil {
		defer p.end()
	}
	pid := p.pgid
	done, gone := p.exited, p.gone
	signalled := false
	select {
	case sig := <-c.sigs.got:
		signalled = true
		_ = syscall.Kill(-pid, sig.(syscall.Signal))
	default:
	}
	lostCh := c.lost
	var kill <-chan time.Time
	// terminate sends SIGTERM to the group, and SIGKILL after the grace period (once).
	terminate := func() {
		if kill == nil {
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			t := time.NewTimer(c.grace)
			kill = t.C
		}
	}
	var poll <-chan time.Time // while the command's leftovers run: when to look again
	exited := false
	for {
		if exited {
			if !p.alive() {
				return status, lost, nil
			}
			if signalled {
				terminate()
			}
			poll = time.After(20 * time.Millisecond)
		}
		select {
		case <-done:
			done, exited = nil, true
			status = p.status
		case sig := <-c.sigs.ch:
			signalled = true
			_ = syscall.Kill(-pid, sig.(syscall.Signal))
		case <-lostCh:
			lost, lostCh = true, nil
			fmt.Fprintf(c.stderr, "redisson: lost; sending SIGTERM to the command (SIGKILL in %v)\n", c.grace)
			terminate()
		case <-kill:
			kill = nil
			fmt.Fprintln(c.stderr, "redisson: the command outlived the grace period; sending SIGKILL")
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			kill = make(chan time.Time) // never again
		case <-gone:
			gone = nil
		case <-poll:
		}
	}
}

// proc is a command started as the leader of a process group of its own.
type proc struct {
	pgid   int           // the command's pid, and its group's id
	exited chan struct{} // closed once the command exited; status is set by then
	status int           // its exit status (128+N if signal N ended it)
	// alive reaps the group's exited processes that are this process's to reap, and reports
	// whether a process is left in the group. It is called once exited is closed.
	alive func() bool
	gone  <-chan struct{} // if not nil, closed when alive is to be asked again at once
	end   func()          // if not nil, called once no process is left in the group
}

// startGroup starts argv, with env added to this process's environment and stdin, stdout and
// stderr passed through, as the leader of a process group of its own. It returns the exit error
// of a command that could not start (127 not found, 126 otherwise). Its goroutine ends when the
// command exits.
func startGroup(argv, env []string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		code := exitNotExec
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = exitNotFound
		}
		return nil, exitf(code, "%v", err)
	}
	p := &proc{pgid: cmd.Process.Pid, exited: make(chan struct{})}
	p.alive = func() bool { return groupAlive(p.pgid) }
	go func() {
		_ = cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		p.status = exitStatus(ws)
		close(p.exited)
	}()
	return p, nil
}

// exitStatus is the exit status of a process that ended with ws: 128+N if signal N ended it, as
// shells report it.
func exitStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// groupAlive reaps the exited processes of process group pgid that are this process's children
// (the command's leftovers, adopted as their subreaper) and reports whether a process is left in
// it. The command itself must have been reaped already.
func groupAlive(pgid int) bool {
	for {
		var ws syscall.WaitStatus
		if p, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil); p <= 0 || err != nil {
			break
		}
	}
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}
