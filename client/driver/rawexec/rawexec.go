//go:build unix

// Package rawexec is the raw_exec driver: it runs the task's command as a
// plain process, with the client's privileges and no isolation, in a
// process group (session) of its own. Because it isolates nothing it is
// off unless the client configuration enables it. Host volumes appear as
// links in the task directory (see linkVolumes).
package rawexec

import (
	"context"
	"fmt"
	"os"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/structs"
)

// Name is the driver's name in job files.
const Name = "raw_exec"

// Config configures the driver (client option driver.raw_exec.enable).
type Config struct {
	Enabled bool
	// ExecutorPath is the binary run as task supervisor; empty means the
	// running binary.
	ExecutorPath string
}

// TaskConfig is the task's `config` block.
type TaskConfig struct {
	// Command is the executable: absolute, relative to the task
	// directory, or looked up in the task's PATH.
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// ValidateConfig checks a task's config block as Start decodes it, so a
// server can report a bad block when a job is validated, before any
// client tries to run it.
func ValidateConfig(raw map[string]interface{}) error {
	var tc TaskConfig
	if err := driver.DecodeConfig(raw, &tc); err != nil {
		return err
	}
	if tc.Command == "" {
		return fmt.Errorf("task config: missing command")
	}
	return nil
}

// Driver is the raw_exec driver.
type Driver struct {
	cfg Config
}

var _ driver.Driver = (*Driver)(nil)

// New returns the driver.
func New(cfg Config) *Driver { return &Driver{cfg: cfg} }

// Name returns "raw_exec".
func (d *Driver) Name() string { return Name }

// Fingerprint reports the driver undetected while disabled, so that no
// job is placed on a client that would refuse it.
func (d *Driver) Fingerprint() *structs.DriverInfo {
	if !d.cfg.Enabled {
		return &structs.DriverInfo{HealthDescription: "disabled (enable with client option driver.raw_exec.enable = true)"}
	}
	return &structs.DriverInfo{
		Detected:          true,
		Healthy:           true,
		HealthDescription: "Healthy",
		Attributes:        map[string]string{"driver.raw_exec": "1"},
	}
}

// Start runs the task's command under a supervisor.
func (d *Driver) Start(ctx context.Context, cfg *driver.TaskConfig) (driver.Handle, error) {
	if !d.cfg.Enabled {
		return nil, fmt.Errorf("%s: %w", Name, driver.ErrDisabled)
	}
	var tc TaskConfig
	if err := driver.DecodeConfig(cfg.Config, &tc); err != nil {
		return nil, err
	}
	spec, err := executor.NewSpec(cfg, tc.Command, tc.Args)
	if err != nil {
		return nil, err
	}
	if err := linkVolumes(cfg.Mounts); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if cfg.User != "" {
		if os.Geteuid() != 0 {
			return nil, fmt.Errorf("%s: running as user %q needs the client to run as root", Name, cfg.User)
		}
		cred, err := executor.LookupCredential(cfg.User)
		if err != nil {
			return nil, err
		}
		if err := executor.GiveTaskDirs(cfg, cred); err != nil {
			return nil, err
		}
		spec.User = cred
	}
	exe := d.cfg.ExecutorPath
	if exe == "" {
		if exe, err = executor.SelfPath(); err != nil {
			return nil, err
		}
	}
	h, err := executor.StartTask(ctx, Name, exe, cfg, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return h, nil
}

// Recover reattaches to a task started before the client restarted.
func (d *Driver) Recover(cfg *driver.TaskConfig, st *driver.HandleState) (driver.Handle, error) {
	h, err := executor.RecoverTask(Name, st)
	if err != nil {
		return nil, err
	}
	return h, nil
}

var _ driver.Execer = (*Driver)(nil)

// ExecTask runs a command with the task's environment, working directory
// and user, as a plain child process of the client.
func (d *Driver) ExecTask(ctx context.Context, cfg *driver.TaskConfig, _ driver.Handle, opts *driver.ExecOptions) (int, error) {
	spec := executor.ExecSpec(cfg)
	if cfg.User != "" && os.Geteuid() == 0 {
		cred, err := executor.LookupCredential(cfg.User)
		if err != nil {
			return 0, err
		}
		spec.User = cred
	}
	return executor.RunExec(ctx, spec, opts)
}

// ExecIsolation is none: raw_exec tasks see the node's filesystem.
func (d *Driver) ExecIsolation() driver.FSIsolation { return driver.FSIsolationNone }
