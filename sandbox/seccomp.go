package sandbox

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/moby/profiles/seccomp"
)

// deniedSyscalls are the ways one process reads or changes another's
// memory or execution: tracing, cross-process memory access and
// stealing another process's file descriptors. Docker's default profile
// allows the first three on every kernel since 4.8 (a process may then
// trace any other process of its own user); evalctl's containers allow
// none of them, so no process an answer starts can reach into the harness
// or into a test process, whatever user it runs as.
var deniedSyscalls = []string{"ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd"}

var (
	profileOnce sync.Once
	profileJSON string
	profileErr  error
)

// seccompProfile is Docker's default seccomp profile less deniedSyscalls,
// as the JSON the Engine takes in a "seccomp=" security option. Calls the
// profile does not allow fail with EPERM.
func seccompProfile() (string, error) {
	profileOnce.Do(func() {
		p := seccomp.DefaultProfile()
		var kept []*seccomp.Syscall
		for _, sc := range p.Syscalls {
			names := slices.DeleteFunc(slices.Clone(sc.Names), func(n string) bool { return slices.Contains(deniedSyscalls, n) })
			if len(names) == 0 {
				continue
			}
			sc.Names = names
			kept = append(kept, sc)
		}
		p.Syscalls = kept
		b, err := json.Marshal(p)
		if err != nil {
			profileErr = fmt.Errorf("seccomp profile: %w", err)
			return
		}
		profileJSON = string(b)
	})
	return profileJSON, profileErr
}
