//go:build !linux

package redistest

import (
	"syscall"
	"time"
)

// sysProcAttr returns nil: parent-death signals are Linux-only.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// waitStopped is a no-op where the process state cannot be observed cheaply.
func waitStopped(pid int, timeout time.Duration) error { return nil }
