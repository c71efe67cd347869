//go:build !linux

package doctest

import "syscall"

// sysProcAttr puts each block and server in its own process group, so the
// harness kills it with everything it started.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
