//go:build unix

package fingerprint

import "syscall"

// diskSpace returns the size of the filesystem holding dir and the space
// available to unprivileged users on it, in bytes.
func diskSpace(dir string) (total, free uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Blocks) * uint64(st.Bsize), uint64(st.Bavail) * uint64(st.Bsize), nil
}
