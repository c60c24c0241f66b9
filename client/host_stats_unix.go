//go:build unix

package client

import "syscall"

// diskStats describes the filesystem holding dir.
func diskStats(dir string) (*HostDiskStats, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil, err
	}
	bsize := uint64(st.Bsize)
	d := &HostDiskStats{
		Mountpoint: dir,
		Size:       uint64(st.Blocks) * bsize,
		Available:  uint64(st.Bavail) * bsize,
	}
	d.Used = d.Size - uint64(st.Bfree)*bsize
	if d.Size > 0 {
		d.UsedPercent = 100 * float64(d.Used) / float64(d.Size)
	}
	if st.Files > 0 {
		d.InodesUsedPercent = 100 * float64(st.Files-st.Ffree) / float64(st.Files)
	}
	return d, nil
}
