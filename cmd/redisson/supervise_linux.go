package main

import "syscall"

// becomeSubreaper makes redisson the subreaper of its descendants (prctl PR_SET_CHILD_SUBREAPER):
// a process the command leaves behind is re-parented to redisson, which reaps it, instead of to
// init (which, in a container, may never reap it: a zombie would count as a running process).
func becomeSubreaper() {
	const prSetChildSubreaper = 36
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}
