//go:build unix && !linux

package serving

import "syscall"

// sysProcAttr puts the server in a process group of its own. There is no
// parent-death signal outside Linux: a SIGKILLed evalctl can leave the
// server running there.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
