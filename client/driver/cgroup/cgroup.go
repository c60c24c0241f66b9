// Package cgroup puts tasks under cgroup v2 CPU and memory limits. The
// exec driver creates one cgroup per task under a parent it owns
// (<cgroup2 mount>/nomad.slice by default); the task's supervisor starts
// the task inside it, reads OOM kills from it, kills whatever is left in
// it when the task ends and removes it.
//
// Only the unified (v2) hierarchy is supported. A host where the cpu and
// memory controllers are bound to v1 hierarchies, or where the client may
// not create cgroups, is reported by Detect with the reason, and the exec
// driver is then unhealthy rather than running tasks without limits.
package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// DefaultParent is the cgroup, under the v2 mount, that holds the tasks.
const DefaultParent = "nomad.slice"

// requiredControllers are the controllers a task cgroup must have.
var requiredControllers = []string{"cpu", "memory"}

// Limits are the resource limits of one task.
type Limits struct {
	// CPUShares is the task's CPU in MHz; it becomes a relative
	// cpu.weight, so a task may use idle CPU beyond its share.
	CPUShares int64
	// MemoryBytes is the hard memory limit (memory.max); exceeding it
	// gets the task OOM killed. Swap is disabled so the limit is real.
	MemoryBytes int64
}

// CPUWeight maps CPU shares (MHz) onto cgroup v2's cpu.weight range
// [1, 10000] the way container runtimes map cgroup v1 cpu.shares
// ([2, 262144]): weight = 1 + (shares-2)*9999/262142. Values outside the
// v1 range are clamped first.
func CPUWeight(shares int64) int64 {
	shares = min(max(shares, 2), 262144)
	return 1 + (shares-2)*9999/262142
}

// mountPoint finds the cgroup2 mount in the text of /proc/self/mountinfo.
// Each line is "<id> <parent> <maj:min> <root> <mountpoint> <opts>...
// - <fstype> <source> <superopts>"; the optional fields before the " - "
// separator vary in number, so the separator is searched for.
func mountPoint(mountinfo io.Reader) (string, error) {
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		line := sc.Text()
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		left, right := strings.Fields(pre), strings.Fields(post)
		if len(left) < 5 || len(right) < 1 {
			continue
		}
		if right[0] == "cgroup2" {
			return unescapeMount(left[4]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no cgroup2 filesystem is mounted")
}

// unescapeMount decodes the octal escapes (\040 for space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%3o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// missingControllers returns the required controllers absent from the
// space-separated list read from a cgroup.controllers file.
func missingControllers(list string) []string {
	have := strings.Fields(list)
	var missing []string
	for _, c := range requiredControllers {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	return missing
}

// oomKills parses the oom_kill counter of a memory.events file.
func oomKills(events io.Reader) int64 {
	sc := bufio.NewScanner(events)
	for sc.Scan() {
		var n int64
		if _, err := fmt.Sscanf(sc.Text(), "oom_kill %d", &n); err == nil {
			return n
		}
	}
	return 0
}
