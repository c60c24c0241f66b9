//go:build unix

package scheduler

import "syscall"

// processCPU returns the CPU time the process has used, user plus system,
// in nanoseconds. On a shared machine wall time includes waiting for a
// core; CPU time does not.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
