package structs

import (
	"path/filepath"
	"strings"
)

func (t *Task) validate(p *problems, prefix string, groupDiskMB int) {
	t.validateNames(p, prefix)
	if t.Name == "" {
		p.add(prefix, "missing task name")
	} else if strings.ContainsAny(t.Name, "/\x00") {
		p.add(prefix, "task name %q must not contain slashes or null characters", t.Name)
	}
	if t.Driver == "" {
		p.add(prefix, "missing driver")
	}
	if ConfigDepth(t.Config, MaxConfigDepth) > MaxConfigDepth {
		p.add(joinPath(prefix, "config"), "nests deeper than %d levels", MaxConfigDepth)
	}
	if t.KillTimeout < 0 {
		p.add(prefix, "kill_timeout must be >= 0, got %s", t.KillTimeout)
	}
	// distinct_* compare placements of whole groups; a task cannot be
	// placed apart from its group.
	validateConstraints(p, prefix, t.Constraints, false)
	validateAffinities(p, prefix, t.Affinities)
	if t.Resources == nil {
		p.add(prefix, "missing resources")
	} else {
		t.Resources.validate(p, prefix)
	}
	t.validateLogs(p, prefix, groupDiskMB)
	t.validateActions(p, prefix)
	if lc := t.Lifecycle; lc != nil {
		switch lc.Hook {
		case TaskLifecycleHookPrestart, TaskLifecycleHookPoststart, TaskLifecycleHookPoststop:
		default:
			p.add(joinPath(prefix, "lifecycle"), "invalid hook %q: must be prestart, poststart or poststop", lc.Hook)
		}
	}
	if dp := t.DispatchPayload; dp != nil {
		if dp.File == "" {
			p.add(joinPath(prefix, "dispatch_payload"), "missing file")
		} else if escapesDir(dp.File) {
			p.add(joinPath(prefix, "dispatch_payload"), "file %q escapes the task directory", dp.File)
		}
	}
}

// escapesDir reports whether a relative path leaves the directory it is
// relative to (the payload is written inside the task's directory).
func escapesDir(path string) bool {
	clean := filepath.Clean(path)
	return filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../")
}

func (r *Resources) validate(p *problems, prefix string) {
	if r.CPU < 0 {
		p.add(prefix, "cpu must be >= 0 MHz, got %d", r.CPU)
	}
	if r.Cores < 0 {
		p.add(prefix, "cores must be >= 0, got %d", r.Cores)
	}
	if r.CPU == 0 && r.Cores == 0 {
		p.add(prefix, "cpu must be > 0 MHz when no cores are requested")
	}
	if r.CPU > 0 && r.Cores > 0 {
		p.add(prefix, "cpu and cores cannot both be set")
	}
	if r.MemoryMB < minTaskMemoryMB {
		p.add(prefix, "memory must be >= %d MB, got %d", minTaskMemoryMB, r.MemoryMB)
	}
	if r.MemoryMaxMB != 0 && r.MemoryMaxMB < r.MemoryMB {
		p.add(prefix, "memory_max (%d MB) must be >= memory (%d MB)", r.MemoryMaxMB, r.MemoryMB)
	}
	if r.DiskMB != 0 {
		// Disk is shared by the group's tasks; asking per task would
		// double count it.
		p.add(prefix, "disk cannot be requested by a task, use the group's ephemeral_disk (got %d MB)", r.DiskMB)
	}
	if r.IOPS < 0 {
		p.add(prefix, "iops must be >= 0, got %d", r.IOPS)
	}
}

func (t *Task) validateLogs(p *problems, prefix string, groupDiskMB int) {
	lc := t.LogConfig
	if lc == nil || lc.Disabled {
		return
	}
	lp := joinPath(prefix, "logs")
	if lc.MaxFiles < 1 {
		p.add(lp, "max_files must be >= 1, got %d", lc.MaxFiles)
	}
	if lc.MaxFileSizeMB < 1 {
		p.add(lp, "max_file_size must be >= 1 MB, got %d", lc.MaxFileSizeMB)
	}
	// Nomad counts max_files x max_file_size once against the disk and
	// wants headroom left for the tasks themselves.
	if need := lc.MaxFiles * lc.MaxFileSizeMB; groupDiskMB > 0 && need >= groupDiskMB {
		p.add(lp, "log storage (%d MB) must be less than the group's ephemeral disk (%d MB)", need, groupDiskMB)
	}
}

// portChecker validates port asks across a group and its tasks: labels
// and static ports must be unique within the whole allocation, since they
// all share the node's ports and the NOMAD_PORT_<label> namespace.
type portChecker struct {
	labels  map[string]bool
	static  map[int]bool
	dynamic int
}

// validatePorts checks the group's networks and every task's.
func (tg *TaskGroup) validatePorts(p *problems, prefix string) {
	pc := &portChecker{labels: map[string]bool{}, static: map[int]bool{}}
	if len(tg.Networks) > 1 {
		p.add(prefix, "only one network block is allowed per group, got %d", len(tg.Networks))
	}
	pc.check(p, joinPath(prefix, "network"), tg.Networks)
	for i, t := range tg.Tasks {
		if t == nil || t.Resources == nil {
			continue
		}
		pc.check(p, joinPath(prefix, taskPathElem(t, i)+": network"), t.Resources.Networks)
	}
	if pc.dynamic > maxDynamicPortsAsk {
		p.add(joinPath(prefix, "network"), "at most %d dynamic ports may be requested, got %d", maxDynamicPortsAsk, pc.dynamic)
	}
}

func (pc *portChecker) check(p *problems, prefix string, nets Networks) {
	for _, n := range nets {
		if n == nil {
			p.add(prefix, "network is empty")
			continue
		}
		switch n.Mode {
		case "", NetworkModeHost, NetworkModeNone:
		default:
			p.add(prefix, "network mode %q is not supported (use %q)", n.Mode, NetworkModeHost)
		}
		if n.MBits < 0 {
			p.add(prefix, "mbits must be >= 0, got %d", n.MBits)
		}
		for _, port := range n.ReservedPorts {
			pc.port(p, prefix, port, true)
		}
		for _, port := range n.DynamicPorts {
			pc.port(p, prefix, port, false)
			pc.dynamic++
		}
	}
}

func (pc *portChecker) port(p *problems, prefix string, port Port, static bool) {
	if port.Label == "" {
		p.add(prefix, "port label must not be empty")
	} else if pc.labels[port.Label] {
		p.add(prefix, "port label %q is used more than once", port.Label)
	}
	pc.labels[port.Label] = true
	if static {
		if port.Value < 1 || port.Value > maxValidPort {
			p.add(prefix, "port %q static value %d must be within [1, %d]", port.Label, port.Value, maxValidPort)
		} else if pc.static[port.Value] {
			p.add(prefix, "static port %d is used more than once", port.Value)
		}
		pc.static[port.Value] = true
	}
	if port.To < -1 || port.To > maxValidPort {
		p.add(prefix, "port %q mapped value %d must be within [-1, %d]", port.Label, port.To, maxValidPort)
	}
}
