//go:build !linux

package client

import "errors"

// procUsage is one process's CPU time (seconds) and resident memory.
type procUsage struct {
	pid       int
	user, sys float64
	rss       uint64
}

// sessionUsage needs /proc, which only Linux has.
func sessionUsage(int) ([]procUsage, error) {
	return nil, errors.New("process statistics need Linux /proc")
}
