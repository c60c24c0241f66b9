package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Manager creates task cgroups under one parent cgroup.
type Manager struct {
	mount  string
	parent string
}

// Detect finds the cgroup v2 mount and prepares parent (a name relative
// to the mount, DefaultParent when empty) so that task cgroups under it
// get the cpu and memory controllers. The error says exactly what the
// host lacks; callers report it as the exec driver's health.
func Detect(parent string) (*Manager, error) {
	if parent == "" {
		parent = DefaultParent
	}
	if filepath.IsAbs(parent) || strings.Contains(parent, "..") {
		return nil, fmt.Errorf("cgroup parent %q must be a relative path inside the cgroup2 mount", parent)
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading mounts: %w", err)
	}
	mount, err := mountPoint(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	ctrl, err := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("cgroup2 at %s: %w", mount, err)
	}
	if missing := missingControllers(string(ctrl)); len(missing) > 0 {
		return nil, fmt.Errorf("cgroup2 at %s offers controllers [%s] but not %s (on this host they are probably bound to cgroup v1 hierarchies)",
			mount, strings.TrimSpace(string(ctrl)), strings.Join(missing, ", "))
	}
	enable := "+" + strings.Join(requiredControllers, " +")
	if err := os.WriteFile(filepath.Join(mount, "cgroup.subtree_control"), []byte(enable), 0); err != nil {
		return nil, fmt.Errorf("cgroup2 at %s: enabling %s for child cgroups: %w", mount, enable, err)
	}
	dir := filepath.Join(mount, parent)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating cgroup %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(enable), 0); err != nil {
		return nil, fmt.Errorf("cgroup %s: enabling %s for task cgroups: %w", dir, enable, err)
	}
	return &Manager{mount: mount, parent: dir}, nil
}

// Parent is the absolute path of the cgroup holding the task cgroups.
func (m *Manager) Parent() string { return m.parent }

// Create makes the cgroup of one task and applies its limits. An existing
// cgroup of the same name (left by a crash) is reused.
func (m *Manager) Create(name string, lim Limits) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", fmt.Errorf("invalid cgroup name %q", name)
	}
	dir := filepath.Join(m.parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("creating cgroup %s: %w", dir, err)
	}
	writes := []struct{ file, value string }{
		{"cpu.weight", strconv.FormatInt(CPUWeight(lim.CPUShares), 10)},
	}
	if lim.MemoryBytes > 0 {
		writes = append(writes, struct{ file, value string }{"memory.max", strconv.FormatInt(lim.MemoryBytes, 10)})
	}
	for _, w := range writes {
		if err := os.WriteFile(filepath.Join(dir, w.file), []byte(w.value), 0); err != nil {
			Remove(dir)
			return "", fmt.Errorf("cgroup %s: setting %s=%s: %w", dir, w.file, w.value, err)
		}
	}
	// Without swap accounting the file does not exist; memory.max still
	// applies then.
	if lim.MemoryBytes > 0 {
		if err := os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			Remove(dir)
			return "", fmt.Errorf("cgroup %s: disabling swap: %w", dir, err)
		}
	}
	return dir, nil
}

// OOMKilled reports whether the kernel OOM-killed a process of the cgroup.
func OOMKilled(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "memory.events"))
	if err != nil {
		return false
	}
	defer f.Close()
	return oomKills(f) > 0
}

// Kill kills every process in the cgroup: through cgroup.kill where the
// kernel has it (5.14+), otherwise by signalling each listed pid.
func Kill(dir string) error {
	err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	if err == nil || (errors.Is(err, os.ErrNotExist) && !dirExists(dir)) {
		return nil
	}
	procs, rerr := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if rerr != nil {
		return fmt.Errorf("killing cgroup %s: %w", dir, errors.Join(err, rerr))
	}
	for _, f := range bytes.Fields(procs) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return nil
}

// Remove deletes an empty task cgroup, waiting briefly for killed
// processes to leave it.
func Remove(dir string) error {
	var err error
	for range 50 {
		err = os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("removing cgroup %s: %w", dir, err)
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}
