package executor

import (
	"os"
	"syscall"
)

// taskSysProcAttr puts the task in a session (and so a process group) of
// its own, so that stopping it reaches everything it started and a
// terminal's signals never do; makes the kernel kill it if the
// supervisor dies; switches its identity; and starts it directly inside
// its cgroup (clone3 CLONE_INTO_CGROUP), so no instant of it runs outside
// its limits.
func taskSysProcAttr(spec *Spec, cgroupFD *os.File) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if spec.User != nil {
		attr.Credential = &syscall.Credential{Uid: spec.User.UID, Gid: spec.User.GID, Groups: spec.User.Groups}
	}
	if cgroupFD != nil {
		attr.UseCgroupFD = true
		attr.CgroupFD = int(cgroupFD.Fd())
	}
	return attr
}

// execSysProcAttr is taskSysProcAttr for a command exec'd into a running
// task: no parent-death signal, since its parent is a client thread that
// may end before it (the client kills it when the session ends).
func execSysProcAttr(spec *Spec, cgroupFD *os.File) *syscall.SysProcAttr {
	attr := taskSysProcAttr(spec, cgroupFD)
	attr.Pdeathsig = 0
	return attr
}
