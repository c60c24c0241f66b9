//go:build unix

package exec

import (
	"context"
	"os"
	"path/filepath"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/driver/executor"
)

var _ driver.Execer = (*Driver)(nil)

// ExecTask runs a command as the task runs: its environment, working
// directory and user, and inside its cgroup (so under its limits, and
// killed with it).
func (d *Driver) ExecTask(ctx context.Context, cfg *driver.TaskConfig, _ driver.Handle, opts *driver.ExecOptions) (int, error) {
	spec := executor.ExecSpec(cfg)
	user := cfg.User
	if user == "" && os.Geteuid() == 0 {
		user = DefaultUser
	}
	if user != "" {
		cred, err := executor.LookupCredential(user)
		if err != nil {
			return 0, err
		}
		spec.User = cred
	}
	d.mu.Lock()
	cg := d.cg
	d.mu.Unlock()
	if cg != nil {
		dir := filepath.Join(cg.Parent(), cgroupName(cfg))
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			spec.Cgroup = dir
		}
	}
	return executor.RunExec(ctx, spec, opts)
}

// ExecIsolation is none: this exec driver has no chroot, its tasks (and
// commands exec'd into them) see the node's filesystem.
func (d *Driver) ExecIsolation() driver.FSIsolation { return driver.FSIsolationNone }
