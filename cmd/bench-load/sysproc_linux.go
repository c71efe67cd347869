package main

import "syscall"

// sysProcAttr puts skillsvc in its own process group, and has the kernel
// kill it if the harness dies without cleaning up (SIGKILL, a crash).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
