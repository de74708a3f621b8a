//go:build !linux

package main

import "io"

// becomeSubreaper does nothing where there is no subreaper: init reaps the command's leftovers.
func becomeSubreaper() {}

// startSupervised starts argv as the leader of a process group of its own (startGroup). There is no
// parent-death signal here: if redisson is killed (SIGKILL), the command and its group run on
// without the lock, which is free within the watchdog timeout.
func startSupervised(argv, env []string, _ io.Writer) (*proc, error) {
	return startGroup(argv, env)
}

// guard is not used here (there is no guard process); it refuses to run.
func guard([]string) int { return exitUsage }
