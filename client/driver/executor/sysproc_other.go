//go:build unix && !linux

package executor

import (
	"os"
	"syscall"
)

// taskSysProcAttr puts the task in a session of its own and switches its
// identity. There is no parent-death signal or cgroup here.
func taskSysProcAttr(spec *Spec, cgroupFD *os.File) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true}
	if spec.User != nil {
		attr.Credential = &syscall.Credential{Uid: spec.User.UID, Gid: spec.User.GID, Groups: spec.User.Groups}
	}
	return attr
}

// execSysProcAttr is taskSysProcAttr for a command exec'd into a task.
func execSysProcAttr(spec *Spec, cgroupFD *os.File) *syscall.SysProcAttr {
	return taskSysProcAttr(spec, cgroupFD)
}
