//go:build !linux

package main

import "syscall"

// sysProcAttr returns nil: parent-death signals are Linux-only. Workers still exit when their stdin
// (a pipe from the parent) closes.
func sysProcAttr() *syscall.SysProcAttr { return nil }
