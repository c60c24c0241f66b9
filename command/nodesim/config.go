package nodesim

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Config describes the simulated nodes and how they behave. Start from
// DefaultConfig; New validates it.
type Config struct {
	// Nodes is how many nodes to simulate.
	Nodes int
	// NamePrefix names node i "<prefix>-<i>" (zero-padded).
	NamePrefix string
	// Region is the region of every request.
	Region string
	// Datacenters are assigned round robin: node i is in
	// Datacenters[i mod len].
	Datacenters []string
	// NodePool of every node ("default" when empty).
	NodePool string
	// NodeClass of every node (none when empty).
	NodeClass string
	// Racks sets meta.rack = "r<i mod Racks>"; 0 sets no rack.
	Racks int

	// Resources of each node: CPUCores × CPUMHzPerCore, MemoryMB and
	// DiskMB, with the Reserved* part kept for the host.
	CPUCores         int
	CPUMHzPerCore    int64
	MemoryMB         int64
	DiskMB           int64
	ReservedCPUMHz   int64
	ReservedMemoryMB int64
	ReservedDiskMB   int64

	// Drivers are reported detected and healthy (with their driver.<name>
	// attribute), so jobs for them are feasible. Nothing is ever started.
	Drivers []string

	// RegisterConcurrency bounds the registrations in flight.
	RegisterConcurrency int
	// HeartbeatWorkers is the number of goroutines sending heartbeats.
	HeartbeatWorkers int
	// WatchWait is how long one blocking query for a node's allocations
	// may wait on the server.
	WatchWait time.Duration
	// SyncInterval is how often pending alloc status updates are sent.
	SyncInterval time.Duration
	// MaxUpdatesPerCall bounds the allocations of one Node.UpdateAlloc.
	MaxUpdatesPerCall int
	// BatchRunTime is how long a batch or sysbatch allocation "runs"
	// before it is reported complete; service and system allocations run
	// until the servers stop them.
	BatchRunTime time.Duration

	Logger hclog.Logger
}

// DefaultConfig returns W1's node shape: 4 cores × 3,500 MHz, 32,000 MB,
// 100 GiB of disk, reserved 100 MHz / 256 MB / 4 GiB, in dc1, with the
// mock_driver, raw_exec and exec drivers.
func DefaultConfig() Config {
	return Config{
		Nodes:               1,
		NamePrefix:          "sim",
		Region:              "global",
		Datacenters:         []string{"dc1"},
		CPUCores:            4,
		CPUMHzPerCore:       3500,
		MemoryMB:            32000,
		DiskMB:              100 * 1024,
		ReservedCPUMHz:      100,
		ReservedMemoryMB:    256,
		ReservedDiskMB:      4 * 1024,
		Drivers:             []string{"mock_driver", "raw_exec", "exec"},
		RegisterConcurrency: 64,
		HeartbeatWorkers:    8,
		WatchWait:           5 * time.Minute,
		SyncInterval:        200 * time.Millisecond,
		MaxUpdatesPerCall:   1000,
		BatchRunTime:        time.Second,
	}
}

// validate lists every problem of the configuration.
func (c *Config) validate() error {
	var errs []error
	positive := func(name string, v int64) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be > 0, got %d", name, v))
		}
	}
	positive("nodes", int64(c.Nodes))
	positive("cpu cores", int64(c.CPUCores))
	positive("cpu MHz per core", c.CPUMHzPerCore)
	positive("memory MB", c.MemoryMB)
	positive("disk MB", c.DiskMB)
	positive("register concurrency", int64(c.RegisterConcurrency))
	positive("heartbeat workers", int64(c.HeartbeatWorkers))
	positive("max updates per call", int64(c.MaxUpdatesPerCall))
	if c.WatchWait <= 0 {
		errs = append(errs, fmt.Errorf("watch wait must be > 0, got %s", c.WatchWait))
	}
	if c.SyncInterval <= 0 {
		errs = append(errs, fmt.Errorf("sync interval must be > 0, got %s", c.SyncInterval))
	}
	if c.BatchRunTime < 0 {
		errs = append(errs, fmt.Errorf("batch run time must be >= 0, got %s", c.BatchRunTime))
	}
	if c.ReservedCPUMHz < 0 || c.ReservedMemoryMB < 0 || c.ReservedDiskMB < 0 {
		errs = append(errs, errors.New("reserved resources must be >= 0"))
	}
	if c.Racks < 0 {
		errs = append(errs, fmt.Errorf("racks must be >= 0, got %d", c.Racks))
	}
	if c.NamePrefix == "" {
		errs = append(errs, errors.New("name prefix is required"))
	}
	if c.Region == "" {
		errs = append(errs, errors.New("region is required"))
	}
	if len(c.Datacenters) == 0 {
		errs = append(errs, errors.New("at least one datacenter is required"))
	}
	for i, dc := range c.Datacenters {
		if dc == "" {
			errs = append(errs, fmt.Errorf("datacenter %d is empty", i))
		}
	}
	return errors.Join(errs...)
}
