package client

import (
	"strconv"
	"time"
)

// Resource usage of allocations, in the shape of Nomad's
// /v1/client/allocation/:id/stats.

// AllocResourceUsage is an allocation's usage: the sum over its tasks,
// and each task's.
type AllocResourceUsage struct {
	ResourceUsage *ResourceUsage
	Tasks         map[string]*TaskResourceUsage
	// Timestamp is when it was measured, in Unix nanoseconds.
	Timestamp int64
}

// TaskResourceUsage is one task's usage, and each of its processes'.
type TaskResourceUsage struct {
	ResourceUsage *ResourceUsage
	Timestamp     int64
	Pids          map[string]*ResourceUsage
}

// ResourceUsage is memory and CPU usage.
type ResourceUsage struct {
	MemoryStats *MemoryStats
	CpuStats    *CpuStats
}

// MemoryStats is memory usage in bytes. Measured names the fields that
// were actually measured; the others are zero.
type MemoryStats struct {
	RSS            uint64
	Cache          uint64
	Swap           uint64
	MappedFile     uint64
	Usage          uint64
	MaxUsage       uint64
	KernelUsage    uint64
	KernelMaxUsage uint64
	Measured       []string
}

// CpuStats is CPU usage: SystemMode, UserMode and Percent in percent of
// one core, TotalTicks the same usage in MHz of the node's cores.
type CpuStats struct {
	SystemMode       float64
	UserMode         float64
	TotalTicks       float64
	ThrottledPeriods uint64
	ThrottledTime    uint64
	Percent          float64
	Measured         []string
}

var (
	memoryMeasured = []string{"RSS"}
	cpuMeasured    = []string{"System Mode", "User Mode", "Percent"}
)

// cpuSample is a task instance's CPU time at one moment, kept between
// calls so that the next one reports usage over the interval between.
type cpuSample struct {
	at        time.Time
	user, sys float64 // seconds
}

// AllocStats measures the CPU and memory of an allocation's running
// tasks from /proc: every process in the task's session (process
// drivers run each task as a session leader). CPU percentages cover the
// time since the previous call for the same task instance, or since the
// task started on the first call. Tasks with no process (not running,
// or simulated by mock_driver) report zero usage with nothing measured.
func (c *Client) AllocStats(allocID string) (*AllocResourceUsage, error) {
	ar, err := c.runner(allocID)
	if err != nil {
		return nil, err
	}
	now := c.clock.Now()
	mhzPerCore := c.mhzPerCore()
	out := &AllocResourceUsage{
		ResourceUsage: &ResourceUsage{MemoryStats: &MemoryStats{}, CpuStats: &CpuStats{}},
		Tasks:         map[string]*TaskResourceUsage{},
		Timestamp:     now.UnixNano(),
	}
	alloc := ar.Alloc()
	for name, ts := range alloc.TaskStates {
		tu := &TaskResourceUsage{
			ResourceUsage: &ResourceUsage{MemoryStats: &MemoryStats{}, CpuStats: &CpuStats{}},
			Timestamp:     now.UnixNano(),
			Pids:          map[string]*ResourceUsage{},
		}
		out.Tasks[name] = tu
		tr := ar.TaskRunner(name)
		if tr == nil {
			continue
		}
		h := tr.Handle()
		if h == nil {
			continue
		}
		pid, err := strconv.Atoi(h.Inspect().Attributes["pid"])
		if err != nil || pid <= 0 {
			continue
		}
		procs, err := sessionUsage(pid)
		if err != nil || len(procs) == 0 {
			continue
		}
		var rss uint64
		var user, sys float64
		for _, p := range procs {
			rss += p.rss
			user += p.user
			sys += p.sys
			tu.Pids[strconv.Itoa(p.pid)] = &ResourceUsage{
				MemoryStats: &MemoryStats{RSS: p.rss, Measured: memoryMeasured},
				CpuStats:    &CpuStats{Measured: cpuMeasured},
			}
		}
		since := ts.StartedAt
		if ts.LastRestart.After(since) {
			since = ts.LastRestart
		}
		prev := c.takeCPUSample(h.ID(), cpuSample{at: now, user: user, sys: sys}, since)
		cpu := cpuPercent(prev, cpuSample{at: now, user: user, sys: sys}, mhzPerCore)
		tu.ResourceUsage = &ResourceUsage{
			MemoryStats: &MemoryStats{RSS: rss, Measured: memoryMeasured},
			CpuStats:    cpu,
		}
		sum := out.ResourceUsage
		sum.MemoryStats.RSS += rss
		sum.MemoryStats.Measured = memoryMeasured
		sum.CpuStats.UserMode += cpu.UserMode
		sum.CpuStats.SystemMode += cpu.SystemMode
		sum.CpuStats.Percent += cpu.Percent
		sum.CpuStats.TotalTicks += cpu.TotalTicks
		sum.CpuStats.Measured = cpuMeasured
	}
	return out, nil
}

// takeCPUSample stores a task instance's newest sample and returns the
// one to measure against: the previous call's, or zero CPU time at the
// task's start.
func (c *Client) takeCPUSample(instance string, s cpuSample, started time.Time) cpuSample {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	prev, ok := c.cpuSample[instance]
	c.cpuSample[instance] = s
	if !ok {
		prev = cpuSample{at: started}
	}
	return prev
}

// cpuPercent is the usage between two samples.
func cpuPercent(prev, cur cpuSample, mhzPerCore float64) *CpuStats {
	out := &CpuStats{Measured: cpuMeasured}
	elapsed := cur.at.Sub(prev.at).Seconds()
	if elapsed <= 0 {
		return out
	}
	out.UserMode = max(cur.user-prev.user, 0) / elapsed * 100
	out.SystemMode = max(cur.sys-prev.sys, 0) / elapsed * 100
	out.Percent = out.UserMode + out.SystemMode
	out.TotalTicks = out.Percent / 100 * mhzPerCore
	return out
}

// mhzPerCore is the speed of one of the node's cores.
func (c *Client) mhzPerCore() float64 {
	n := c.Node()
	total, _ := strconv.ParseFloat(n.Attributes["cpu.totalcompute"], 64)
	cores, _ := strconv.ParseFloat(n.Attributes["cpu.numcores"], 64)
	if cores <= 0 {
		return 0
	}
	return total / cores
}

// forgetCPUSamples drops the samples of task instances that no longer
// run, so the map does not grow with every restart.
func (c *Client) forgetCPUSamples() {
	live := map[string]bool{}
	for _, ar := range c.allocs.Runners() {
		for name := range ar.Alloc().TaskStates {
			if tr := ar.TaskRunner(name); tr != nil {
				if h := tr.Handle(); h != nil {
					live[h.ID()] = true
				}
			}
		}
	}
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	for id := range c.cpuSample {
		if !live[id] {
			delete(c.cpuSample, id)
		}
	}
}
