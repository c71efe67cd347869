package testserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts the server in its own process group so stop can kill it
// with everything it spawned. Pdeathsig kills it if the test binary dies
// without cleaning up (a panic, or go test's -timeout), so no server outlives
// its tests.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// listensOn reports whether process pid holds the socket listening on the
// loopback TCP port, by matching the socket inodes among its open files
// against the kernel's table of listening sockets.
func listensOn(pid, port int) (bool, error) {
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false, err
	}
	inodes := make(map[string]bool)
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue // no IPv6
		}
		for _, line := range strings.Split(string(data), "\n") {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			hexPort := f[1][strings.LastIndexByte(f[1], ':')+1:]
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port && inodes[f[9]] {
				return true, nil
			}
		}
	}
	return false, nil
}
