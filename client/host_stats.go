package client

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// HostStats is the client host's resource usage as /v1/client/stats
// serves it (Nomad's shape): memory, the disk holding the alloc
// directory, uptime. Per-CPU figures are not measured (CPU is empty).
type HostStats struct {
	Memory           *HostMemoryStats
	CPU              []*HostCPUStats
	DiskStats        []*HostDiskStats
	AllocDirStats    *HostDiskStats
	Uptime           uint64
	Timestamp        int64
	CPUTicksConsumed float64
}

// HostMemoryStats are the host's memory figures in bytes.
type HostMemoryStats struct {
	Total     uint64
	Available uint64
	Used      uint64
	Free      uint64
}

// HostCPUStats is one CPU's usage in percent.
type HostCPUStats struct {
	CPU    string
	User   float64
	System float64
	Idle   float64
}

// HostDiskStats describes a filesystem: sizes in bytes.
type HostDiskStats struct {
	Device            string
	Mountpoint        string
	Size              uint64
	Used              uint64
	Available         uint64
	UsedPercent       float64
	InodesUsedPercent float64
}

// HostStats measures the host now.
func (c *Client) HostStats() (*HostStats, error) {
	out := &HostStats{Timestamp: time.Now().UTC().UnixNano(), CPU: []*HostCPUStats{}}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		out.Memory = parseMeminfo(f)
		f.Close()
	}
	if b, err := os.ReadFile("/proc/uptime"); err == nil {
		if fields := strings.Fields(string(b)); len(fields) > 0 {
			if secs, err := strconv.ParseFloat(fields[0], 64); err == nil {
				out.Uptime = uint64(secs)
			}
		}
	}
	disk, err := diskStats(c.cfg.AllocDir)
	if err != nil {
		return nil, err
	}
	out.AllocDirStats = disk
	out.DiskStats = []*HostDiskStats{disk}
	return out, nil
}

// parseMeminfo reads /proc/meminfo (values in kB).
func parseMeminfo(r io.Reader) *HostMemoryStats {
	m := &HostMemoryStats{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "MemTotal:":
			m.Total = kb * 1024
		case "MemAvailable:":
			m.Available = kb * 1024
		case "MemFree:":
			m.Free = kb * 1024
		}
	}
	if m.Total >= m.Available {
		m.Used = m.Total - m.Available
	}
	return m
}
