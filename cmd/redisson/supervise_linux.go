package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Linux: the command must not outlive redisson. A killed redisson cannot keep the lock (its watchdog
// stops, the lock is free within the watchdog timeout), so its command, and what the command started
// in its process group, must end with it, as flock(1)'s command keeps the lock for as long as it
// lives. redisson's direct child is therefore a guard: redisson itself, re-run as
// "redisson __guard PID -- CMD ARGS..." (guard below), which asks for a parent-death signal
// (prctl PR_SET_PDEATHSIG) and catches it, runs the command as the leader of a process group of its
// own (the group redisson signals, as elsewhere: the guard is not in it, so neither the forwarded
// signals nor a loss's SIGTERM and SIGKILL reach it), reports the command's pid and exit status to
// redisson on a pipe, reaps the group's leftovers (it is their subreaper) and exits once no process
// is left in the group. If redisson dies first, the guard SIGKILLs the whole group.
//
// A parent-death signal is sent when the thread that forked the child exits, not only when its
// process does (golang/go#27505); the guard tells them apart: on each such signal it compares
// getppid() with redisson's pid (a thread's exit leaves the guard with redisson, a parent in the
// same process), so a spurious signal is ignored. startSupervised also locks its goroutine to its
// thread until the guard exited, so that the forking thread does not exit meanwhile.

const (
	prSetPdeathsig      = 1
	prSetChildSubreaper = 36
	// guardReportFd is the guard's end of the pipe on which it reports to redisson.
	guardReportFd = 3
)

// becomeSubreaper makes the calling process the subreaper of its descendants (prctl
// PR_SET_CHILD_SUBREAPER): a process the command leaves behind is re-parented to it, which reaps it,
// instead of to init (which, in a container, may never reap it: a zombie would count as a running
// process).
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// startSupervised starts argv (env added to the environment, stdin, stdout and stderr passed
// through) under a guard process (see above) that SIGKILLs its process group if redisson dies. It
// blocks until the guard started the command (or failed to: the exit error, 127 not found, 126
// otherwise). The proc's end must be called once no process is left in the group (child.run does).
// If the guard cannot be started at all (no /proc), the command is started unguarded, with a
// warning on stderr. A goroutine reads the guard's reports until it exits.
func startSupervised(argv, env []string, stderr io.Writer) (*proc, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, exitf(exitNotExec, "guard: %v", err)
	}
	// The parent-death signal follows the forking thread: keep it until the guard exited.
	runtime.LockOSThread()
	g := exec.Command("/proc/self/exe", append([]string{guardArg, strconv.Itoa(os.Getpid()), "--"}, argv...)...)
	g.Args[0] = os.Args[0]
	g.Stdin, g.Stdout, g.Stderr = os.Stdin, os.Stdout, os.Stderr
	g.Env = append(os.Environ(), env...)
	g.ExtraFiles = []*os.File{w} // guardReportFd
	err = g.Start()
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		runtime.UnlockOSThread()
		fmt.Fprintf(stderr, "redisson: cannot start the guard process (%v): the command will not be ended if redisson is killed\n", err)
		return startGroup(argv, env)
	}
	rd := bufio.NewReader(r)
	kind, pid, msg := readReport(rd)
	if kind != "pid" || pid <= 0 {
		_ = r.Close()
		werr := g.Wait()
		runtime.UnlockOSThread()
		if kind == "err" {
			return nil, exitf(pid, "%s", msg)
		}
		return nil, exitf(exitNotExec, "the guard process ended before starting the command (%v)", werr)
	}
	p := &proc{pgid: pid, exited: make(chan struct{})}
	guardDone := make(chan struct{})
	go func() {
		defer close(guardDone)
		reported := false
		for {
			kind, n, _ := readReport(rd)
			if kind == "" {
				break
			}
			if kind == "status" && !reported {
				p.status, reported = n, true
				close(p.exited)
			}
		}
		_ = r.Close()
		werr := g.Wait()
		if !reported {
			// The guard was killed while the command ran: its processes are redisson's now (a
			// subreaper), which waits for the command, then for its group, as elsewhere.
			fmt.Fprintf(stderr, "redisson: the guard process ended (%v); the command will not be ended if redisson is killed\n", werr)
			p.status = waitChild(p.pgid)
			if p.status < 0 {
				fmt.Fprintln(stderr, "redisson: the command's exit status is unknown")
				p.status = exitNotExec
			}
			close(p.exited)
		}
	}()
	p.alive = func() bool {
		select {
		case <-guardDone:
			// The guard exits once the group is empty; or it was killed, leaving what runs to
			// redisson (its subreaper).
			return groupAlive(p.pgid)
		default:
			return true
		}
	}
	p.gone = guardDone
	p.end = func() {
		<-guardDone
		runtime.UnlockOSThread()
	}
	return p, nil
}

// waitChild waits for redisson's child pid to exit and returns its exit status, or -1 if it is not
// redisson's child (any more).
func waitChild(pid int) int {
	for {
		var ws syscall.WaitStatus
		p, err := syscall.Wait4(pid, &ws, 0, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil || p != pid:
			return -1
		default:
			return exitStatus(ws)
		}
	}
}

// readReport reads one line of the guard's reports: "pid N" once the command started, "err CODE
// MESSAGE" if it could not be, then "status N" once it exited. kind is "" at the end of the reports.
func readReport(rd *bufio.Reader) (kind string, n int, msg string) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", 0, ""
	}
	f := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 3)
	if len(f) < 2 {
		return "?", 0, ""
	}
	n, err = strconv.Atoi(f[1])
	if err != nil {
		return "?", 0, ""
	}
	if len(f) == 3 {
		msg = f[2]
	}
	return f[0], n, msg
}

// groupFatal are the catchable signals, besides the forwarded ones, whose default action would end
// the guard when sent to redisson's process group.
var groupFatal = []os.Signal{syscall.SIGQUIT, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGPROF,
	syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGPIPE}

// guard is the guard process (see above): args are redisson's pid, "--" and the command. It returns
// its exit code: 0 once no process is left in the command's group, 1 if the command was not
// started (its exit error is reported to redisson), 64 on bad arguments.
func guard(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		return exitUsage
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil {
		return exitUsage
	}
	// The parent-death signal is armed on the thread that asks for it: keep this goroutine on it.
	runtime.LockOSThread()
	syscall.CloseOnExec(guardReportFd) // the command must not hold the report pipe open
	report := os.NewFile(guardReportFd, "report")
	// The forwarded signals also reach redisson's process group, the guard's: redisson passes them on
	// to the command's group; the guard only checks whether its parent is gone. So do the other
	// signals a terminal or a kill of the group sends (SIGQUIT from Ctrl-\, say): one that ends
	// redisson must not end the guard with it, which would leave the command running unlocked.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, append([]os.Signal{parentDeathSignal}, append(forwarded, groupFatal...)...)...)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(parentDeathSignal), 0); errno != 0 {
		fmt.Fprintf(report, "err %d guard: prctl PR_SET_PDEATHSIG: %v\n", exitNotExec, errno)
		return 1
	}
	if os.Getppid() != parent {
		return 1 // redisson died before the signal was armed: nothing runs
	}
	becomeSubreaper()
	p, err := startGroup(args[2:], nil)
	if err != nil {
		code := exitNotExec
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		fmt.Fprintf(report, "err %d %s\n", code, strings.ReplaceAll(strings.TrimPrefix(err.Error(), "redisson: "), "\n", " "))
		return 1
	}
	fmt.Fprintf(report, "pid %d\n", p.pgid)
	exited := p.exited
	orphaned := false
	var poll <-chan time.Time
	for {
		select {
		case <-sigs:
			orphaned = orphaned || os.Getppid() != parent
		case <-exited:
			exited = nil
			fmt.Fprintf(report, "status %d\n", p.status) // EPIPE if redisson is gone
		case <-poll:
		}
		if orphaned {
			// Again at each look: a process forked as the group was killed is killed too.
			_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
		}
		if exited == nil && !p.alive() {
			return 0
		}
		if orphaned || exited == nil {
			poll = time.After(20 * time.Millisecond)
		}
	}
}
