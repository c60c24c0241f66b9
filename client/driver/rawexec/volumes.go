//go:build unix

package rawexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/opennomad/nomad/client/driver"
)

// linkVolumes makes each host volume the task mounts a symbolic link at
// its destination inside the task directory, to the volume's host path.
//
// raw_exec isolates nothing: its task runs with the client's privileges
// and can reach the host path anyway. A link puts the volume where an
// exec task would see it (so a job can switch drivers) without the
// risks of a mount on the host: removing the task directory removes the
// link, never the volume's files. read_only cannot be enforced on a
// link; for a read-only volume the task is trusted as for everything
// else under raw_exec.
func linkVolumes(mounts []driver.Mount) error {
	for _, m := range mounts {
		if err := os.MkdirAll(filepath.Dir(m.TaskPath), 0o755); err != nil {
			return fmt.Errorf("host volume at %s: %w", m.TaskPath, err)
		}
		if fi, err := os.Lstat(m.TaskPath); err == nil {
			// A restart finds its own link; anything else is in the way.
			if fi.Mode()&os.ModeSymlink == 0 {
				return fmt.Errorf("host volume at %s: a file of the task is already there", m.TaskPath)
			}
			if err := os.Remove(m.TaskPath); err != nil {
				return fmt.Errorf("host volume at %s: %w", m.TaskPath, err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("host volume at %s: %w", m.TaskPath, err)
		}
		if err := os.Symlink(m.HostPath, m.TaskPath); err != nil {
			return fmt.Errorf("host volume at %s: %w", m.TaskPath, err)
		}
	}
	return nil
}
