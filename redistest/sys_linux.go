//go:build linux

package redistest

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
)

// sysProcAttr makes the kernel SIGKILL the server when the thread that
// started it (and so, in practice, the test binary) dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// waitStopped blocks until /proc reports the process pid as stopped, it
// disappears, or timeout elapses (then it returns an error).
func waitStopped(pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil // gone: nothing left to wait for
		}
		// Format: "pid (comm) S ...": comm may contain anything, so look
		// after the last ')'.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
			switch b[i+2] {
			case 'T', 't', 'Z', 'X':
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d not stopped after %v", pid, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}
