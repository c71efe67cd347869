package doctest

import "syscall"

// sysProcAttr puts each block and server in its own process group, so the
// harness kills it with everything it started; Pdeathsig kills it if the
// harness itself dies (go test's -timeout), so no server holds a fixed port
// after its page.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
