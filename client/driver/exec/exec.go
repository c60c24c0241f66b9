//go:build unix

// Package exec is the exec driver: it runs the task's command as an
// isolated process on Linux. Each task gets a session and process group of
// its own, its own cgroup v2 with a CPU weight and a hard memory limit
// taken from its resources, and runs as an unprivileged user (nobody,
// unless the task names a user) when the client runs as root.
//
// Unlike Nomad's exec driver there is no chroot: the task sees the host's
// filesystem with the permissions of its user. Host volumes are bind
// mounted at their destination taken inside the task directory (where
// Nomad's chroot would put them), read-only when asked, in a mount
// namespace of the task's own. When the host cannot give
// tasks their own cgroups (no cgroup v2 cpu and memory controllers, or no
// permission), the driver reports itself unhealthy with the reason and
// refuses tasks, rather than running them without limits.
package exec

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/driver/cgroup"
	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/structs"
)

// Name is the driver's name in job files.
const Name = "exec"

// DefaultUser is who tasks run as when the client is root and the task
// names no user.
const DefaultUser = "nobody"

// Config configures the driver.
type Config struct {
	// ExecutorPath is the binary run as task supervisor; empty means the
	// running binary.
	ExecutorPath string
	// CgroupParent is the cgroup, relative to the cgroup2 mount, under
	// which task cgroups are created (cgroup.DefaultParent when empty).
	CgroupParent string
}

// TaskConfig is the task's `config` block.
type TaskConfig struct {
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

// Driver is the exec driver.
type Driver struct {
	cfg Config

	mu  sync.Mutex
	cg  *cgroup.Manager
	err error // why tasks cannot be isolated; nil when healthy
}

var _ driver.Driver = (*Driver)(nil)

// New returns the driver. Host capabilities are checked by Fingerprint
// and again before each start.
func New(cfg Config) *Driver { return &Driver{cfg: cfg} }

// Name returns "exec".
func (d *Driver) Name() string { return Name }

// isolation checks (again) whether tasks can be isolated on this host.
func (d *Driver) isolation() (*cgroup.Manager, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if runtime.GOOS != "linux" {
		d.cg, d.err = nil, fmt.Errorf("exec driver needs Linux, this is %s", runtime.GOOS)
		return d.cg, d.err
	}
	if os.Geteuid() != 0 {
		d.cg, d.err = nil, fmt.Errorf("exec driver needs the client to run as root to create cgroups and switch users")
		return d.cg, d.err
	}
	d.cg, d.err = cgroup.Detect(d.cfg.CgroupParent)
	return d.cg, d.err
}

// Fingerprint reports the driver detected on Linux and healthy only when
// task cgroups with cpu and memory limits can be created.
func (d *Driver) Fingerprint() *structs.DriverInfo {
	cg, err := d.isolation()
	if runtime.GOOS != "linux" {
		return &structs.DriverInfo{HealthDescription: err.Error()}
	}
	if err != nil {
		return &structs.DriverInfo{Detected: true, HealthDescription: "cannot isolate tasks: " + err.Error()}
	}
	return &structs.DriverInfo{
		Detected:          true,
		Healthy:           true,
		HealthDescription: "Healthy",
		Attributes: map[string]string{
			"driver.exec":               "1",
			"driver.exec.cgroup.parent": cg.Parent(),
		},
	}
}

// Start runs the task in a cgroup of its own as an unprivileged user.
func (d *Driver) Start(ctx context.Context, cfg *driver.TaskConfig) (driver.Handle, error) {
	cg, err := d.isolation()
	if err != nil {
		return nil, fmt.Errorf("%s driver is unhealthy: %w", Name, err)
	}
	var tc TaskConfig
	if err := driver.DecodeConfig(cfg.Config, &tc); err != nil {
		return nil, err
	}
	spec, err := d.prepare(cfg, &tc)
	if err != nil {
		return nil, err
	}
	lim := cgroup.Limits{
		CPUShares:   cfg.Resources.CPUShares,
		MemoryBytes: max(cfg.Resources.MemoryMB, cfg.Resources.MemoryMaxMB) << 20,
	}
	dir, err := cg.Create(cgroupName(cfg), lim)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	spec.Cgroup = dir
	h, err := d.launch(ctx, cfg, spec)
	if err != nil {
		cgroup.Remove(dir)
		return nil, err
	}
	return h, nil
}

// prepare builds the supervisor spec and the task's identity.
func (d *Driver) prepare(cfg *driver.TaskConfig, tc *TaskConfig) (*executor.Spec, error) {
	spec, err := executor.NewSpec(cfg, tc.Command, tc.Args)
	if err != nil {
		return nil, err
	}
	spec.Mounts = executor.BindMounts(cfg)
	user := cfg.User
	if user == "" && os.Geteuid() == 0 {
		user = DefaultUser
	}
	if user != "" {
		cred, err := executor.LookupCredential(user)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		if err := executor.GiveTaskDirs(cfg, cred); err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		spec.User = cred
	}
	return spec, nil
}

func (d *Driver) launch(ctx context.Context, cfg *driver.TaskConfig, spec *executor.Spec) (driver.Handle, error) {
	exe := d.cfg.ExecutorPath
	if exe == "" {
		var err error
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

// cgroupName is "<alloc-id>.<task>.scope", unique per task and readable in
// systemd-cgls.
func cgroupName(cfg *driver.TaskConfig) string {
	clean := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' {
			return '_'
		}
		return r
	}, cfg.Name)
	return cfg.AllocID + "." + clean + ".scope"
}
