//go:build !unix

package serving

import (
	"errors"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(pgid int, sig syscall.Signal) error {
	return errors.New("process groups are not supported on this system")
}

func groupAlive(pgid int) bool { return false }

const supported = false
