package serving

import "syscall"

// sysProcAttr puts the server in a process group of its own, so Stop can
// signal it and every child it forks at once, and asks the kernel to
// SIGKILL it if evalctl dies without stopping it (even by SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
