//go:build linux

package main

import "syscall"

// sysProcAttr makes the kernel SIGKILL a worker when the parent dies. Workers also exit when their
// stdin (a pipe from the parent) closes, which covers other systems.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
