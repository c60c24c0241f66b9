//go:build !unix

package scheduler

// processCPU is not measured on this platform.
func processCPU() int64 { return 0 }
