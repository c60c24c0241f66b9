// Package fingerprint describes the machine a client runs on: CPU, memory,
// the disk of the data directory, the network address, kernel and OS,
// as node attributes and node resources the scheduler places against.
// BuildNode combines that with the client's configuration, identity and
// driver health into the structs.Node the client registers.
//
// Linux is read from /proc, /sys and /etc. Elsewhere the attributes that
// need those files are left out and CPU speed and memory size must be
// given in the configuration.
package fingerprint

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/version"
)

// Config is the part of the client configuration fingerprinting reads.
type Config struct {
	// DataDir is the client's data directory; its disk is the node's.
	DataDir    string
	Datacenter string
	// NodeName defaults to the host name.
	NodeName  string
	NodeClass string
	NodePool  string
	Meta      map[string]string
	HTTPAddr  string
	// NetworkInterface picks the interface whose address the node
	// advertises; empty means the one of the default route.
	NetworkInterface string
	// NetworkSpeed in Mbit/s overrides the detected link speed.
	NetworkSpeed int
	// CPUTotalCompute (MHz) and MemoryTotalMB override detection; they
	// are required where the host cannot be read.
	CPUTotalCompute int
	MemoryTotalMB   int
	Reserved        *structs.NodeReservedResources
	MinDynamicPort  int
	MaxDynamicPort  int
	// HostVolumes are the static host volumes the node offers.
	HostVolumes map[string]*structs.ClientHostVolumeConfig
}

// Host is where the machine is read from; tests point it at fixtures.
type Host struct {
	ProcDir string
	SysDir  string
	EtcDir  string
}

// DefaultHost reads the real machine.
func DefaultHost() Host { return Host{ProcDir: "/proc", SysDir: "/sys", EtcDir: "/etc"} }

// Result is what the machine looks like.
type Result struct {
	Attributes map[string]string
	Resources  *structs.NodeResources
}

// defaultNetworkSpeed is assumed when a link does not report its speed.
const defaultNetworkSpeed = 1000

// Fingerprint reads the machine. It fails only when a resource the
// scheduler needs (CPU, memory, disk) cannot be determined, naming the
// setting that would supply it.
func Fingerprint(cfg *Config, host Host) (*Result, error) {
	res := &Result{
		Attributes: map[string]string{},
		Resources: &structs.NodeResources{
			MinDynamicPort: structs.DefaultMinDynamicPort,
			MaxDynamicPort: structs.DefaultMaxDynamicPort,
		},
	}
	if cfg.MinDynamicPort > 0 {
		res.Resources.MinDynamicPort = cfg.MinDynamicPort
	}
	if cfg.MaxDynamicPort > 0 {
		res.Resources.MaxDynamicPort = cfg.MaxDynamicPort
	}
	steps := []func(*Config, Host, *Result) error{
		fingerprintHost, fingerprintCPU, fingerprintMemory, fingerprintStorage, fingerprintNetwork,
	}
	var errs []error
	for _, step := range steps {
		if err := step(cfg, host, res); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("fingerprinting: %w", err)
	}
	return res, nil
}

// fingerprintHost records kernel, OS, host name and agent version.
func fingerprintHost(cfg *Config, host Host, res *Result) error {
	a := res.Attributes
	a["kernel.name"] = runtime.GOOS
	a["cpu.arch"] = runtime.GOARCH
	if v, err := os.ReadFile(filepath.Join(host.ProcDir, "sys/kernel/osrelease")); err == nil {
		a["kernel.version"] = strings.TrimSpace(string(v))
	}
	if arch := kernelArch(); arch != "" {
		a["kernel.arch"] = arch
	}
	for _, p := range []string{filepath.Join(host.EtcDir, "os-release"), "/usr/lib/os-release"} {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		id, ver := parseOSRelease(f)
		f.Close()
		if id != "" {
			a["os.name"] = id
		}
		if ver != "" {
			a["os.version"] = ver
		}
		break
	}
	if _, ok := a["os.name"]; !ok {
		a["os.name"] = runtime.GOOS
	}
	if hn, err := os.Hostname(); err == nil {
		a["unique.hostname"] = hn
	}
	v := version.Version
	if version.Prerelease != "" {
		v += "-" + version.Prerelease
	}
	a["nomad.version"] = v
	if version.GitCommit != "" {
		a["nomad.revision"] = version.GitCommit
	}
	a["os.signals"] = strings.Join(driver.SignalNames(), ",")
	return nil
}

// fingerprintCPU records cores, clock and total compute (cores x MHz).
func fingerprintCPU(cfg *Config, host Host, res *Result) error {
	var ci cpuInfo
	if f, err := os.Open(filepath.Join(host.ProcDir, "cpuinfo")); err == nil {
		ci, _ = parseCPUInfo(f)
		f.Close()
	}
	mhz := ci.MHz
	// The maximum clock (kHz) is what the CPU sustains; the one in
	// cpuinfo is a momentary reading on hosts that scale frequency.
	if b, err := os.ReadFile(filepath.Join(host.SysDir, "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
			mhz = khz / 1000
		}
	}
	cores := usableCores(host)
	if len(cores) == 0 {
		n := ci.Cores
		if n == 0 || n > runtime.NumCPU() {
			n = runtime.NumCPU()
		}
		for i := range n {
			cores = append(cores, uint16(i))
		}
	}
	total := int64(float64(len(cores)) * mhz)
	if cfg.CPUTotalCompute > 0 {
		total = int64(cfg.CPUTotalCompute)
	}
	if total <= 0 {
		return errors.New("cannot detect the CPU clock speed; set the client's cpu_total_compute (MHz)")
	}
	a := res.Attributes
	a["cpu.numcores"] = strconv.Itoa(len(cores))
	a["cpu.reservablecores"] = strconv.Itoa(len(cores))
	a["cpu.totalcompute"] = strconv.FormatInt(total, 10)
	a["cpu.usablecompute"] = strconv.FormatInt(total, 10)
	if mhz > 0 {
		a["cpu.frequency"] = strconv.Itoa(int(mhz))
	}
	if ci.ModelName != "" {
		a["cpu.modelname"] = ci.ModelName
	}
	res.Resources.Cpu = structs.NodeCpuResources{
		CpuShares:          total,
		TotalCpuCores:      uint16(len(cores)),
		ReservableCpuCores: cores,
	}
	return nil
}

// usableCores lists the cores this process may run on
// (Cpus_allowed_list of /proc/self/status), nil when unknown.
func usableCores(host Host) []uint16 {
	b, err := os.ReadFile(filepath.Join(host.ProcDir, "self/status"))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			cores, err := parseCoreList(strings.TrimSpace(v))
			if err != nil {
				return nil
			}
			return cores
		}
	}
	return nil
}

// parseCoreList parses a kernel CPU list such as "0-3,8,10-11".
func parseCoreList(s string) ([]uint16, error) {
	var out []uint16
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 16); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, uint16(c))
		}
	}
	return out, nil
}

// fingerprintMemory records total memory.
func fingerprintMemory(cfg *Config, host Host, res *Result) error {
	var total int64
	if f, err := os.Open(filepath.Join(host.ProcDir, "meminfo")); err == nil {
		total, _ = parseMemTotal(f)
		f.Close()
	}
	if cfg.MemoryTotalMB > 0 {
		total = int64(cfg.MemoryTotalMB) << 20
	}
	if total <= 0 {
		return errors.New("cannot detect the memory size; set the client's memory_total_mb")
	}
	res.Attributes["memory.totalbytes"] = strconv.FormatInt(total, 10)
	res.Resources.Memory.MemoryMB = total >> 20
	return nil
}

// fingerprintStorage records the disk holding the data directory; the
// node offers its free space.
func fingerprintStorage(cfg *Config, host Host, res *Result) error {
	if cfg.DataDir == "" {
		return errors.New("no data directory to measure the disk of")
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("data dir %q: %w", cfg.DataDir, err)
	}
	total, free, err := diskSpace(dir)
	if err != nil {
		return fmt.Errorf("measuring the disk of %s: %w", dir, err)
	}
	a := res.Attributes
	a["unique.storage.bytestotal"] = strconv.FormatUint(total, 10)
	a["unique.storage.bytesfree"] = strconv.FormatUint(free, 10)
	if f, err := os.Open(filepath.Join(host.ProcDir, "self/mountinfo")); err == nil {
		if src := mountSource(f, dir); src != "" {
			a["unique.storage.volume"] = src
		}
		f.Close()
	}
	res.Resources.Disk.DiskMB = int64(free >> 20)
	return nil
}

// BuildNode assembles the node a client registers. Healthy drivers add
// a driver.<name> attribute and their own attributes.
func BuildNode(id, secretID string, cfg *Config, res *Result, drivers map[string]*structs.DriverInfo) *structs.Node {
	attrs := maps.Clone(res.Attributes)
	for name, d := range drivers {
		if d == nil || !d.Detected || !d.Healthy {
			continue
		}
		attrs["driver."+name] = "1"
		maps.Copy(attrs, d.Attributes)
	}
	name := cfg.NodeName
	if name == "" {
		name = attrs["unique.hostname"]
	}
	pool := cfg.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	dc := cfg.Datacenter
	if dc == "" {
		dc = "dc1"
	}
	n := &structs.Node{
		ID:                    id,
		SecretID:              secretID,
		Datacenter:            dc,
		Name:                  name,
		HTTPAddr:              cfg.HTTPAddr,
		Attributes:            attrs,
		NodeResources:         res.Resources.Copy(),
		ReservedResources:     cfg.Reserved.Copy(),
		Meta:                  maps.Clone(cfg.Meta),
		NodeClass:             cfg.NodeClass,
		NodePool:              pool,
		Drivers:               drivers,
		HostVolumes:           structs.CopyHostVolumes(cfg.HostVolumes),
		Status:                structs.NodeStatusInit,
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
	if n.Meta == nil {
		n.Meta = map[string]string{}
	}
	if n.ReservedResources == nil {
		n.ReservedResources = &structs.NodeReservedResources{}
	}
	n.ComputeClass()
	return n
}
