package loadgen

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Config describes the load and where to send it. Start from
// DefaultConfig; Run validates it.
type Config struct {
	// Addresses are the HTTP API addresses of the servers. Registrations
	// rotate over them; the event stream is read from the first, which
	// should be the leader (it publishes a commit first).
	Addresses []string
	// Token is the ACL token every request carries ("" without ACLs).
	Token string
	// ServerPIDs are the servers' process IDs, for their memory (read from
	// /proc); none means memory is not reported.
	ServerPIDs []int

	// Jobs is how many jobs to register, each with one group of Count
	// allocations.
	Jobs  int
	Count int
	// Rate is the registrations per second to aim for; 0 sends them as
	// fast as the servers accept them, Concurrency at a time.
	Rate        float64
	Concurrency int

	// The job shape: type service or batch, the task's driver (mock_driver
	// runs nothing; raw_exec runs `sleep`), its CPU and memory and the
	// group's ephemeral disk.
	Type        string
	Driver      string
	CPU         int
	MemoryMB    int
	DiskMB      int
	Datacenters []string
	// IDPrefix starts every job ID: "<prefix>-<n>". Empty means a random
	// one, so repeated runs against one cluster do not collide.
	IDPrefix string

	// WaitRunning also waits until every allocation is reported running
	// (complete counts too, for batch jobs).
	WaitRunning bool
	// Timeout bounds the whole run.
	Timeout time.Duration

	// Progress receives a progress line while the run lasts; nil for
	// none.
	Progress io.Writer
}

// DefaultConfig returns a service job of one mock_driver task asking for
// 100 MHz and 128 MB with 150 MB of disk, small enough that 100 fit on a
// W1 node, registered as fast as accepted, 16 at a time.
func DefaultConfig() Config {
	return Config{
		Addresses:   []string{"http://127.0.0.1:4646"},
		Jobs:        100,
		Count:       1,
		Concurrency: 16,
		Type:        "service",
		Driver:      "mock_driver",
		CPU:         100,
		MemoryMB:    128,
		DiskMB:      150,
		Datacenters: []string{"*"},
		WaitRunning: true,
		Timeout:     30 * time.Minute,
	}
}

// validate lists every problem of the configuration.
func (c *Config) validate() error {
	var errs []error
	if len(c.Addresses) == 0 {
		errs = append(errs, errors.New("at least one server address is required"))
	}
	if c.Jobs <= 0 {
		errs = append(errs, fmt.Errorf("jobs must be > 0, got %d", c.Jobs))
	}
	if c.Count <= 0 {
		errs = append(errs, fmt.Errorf("count must be > 0, got %d", c.Count))
	}
	if c.Rate < 0 {
		errs = append(errs, fmt.Errorf("rate must be >= 0, got %g", c.Rate))
	}
	if c.Concurrency <= 0 {
		errs = append(errs, fmt.Errorf("concurrency must be > 0, got %d", c.Concurrency))
	}
	switch c.Type {
	case "service", "batch":
	default:
		errs = append(errs, fmt.Errorf("job type must be service or batch, got %q", c.Type))
	}
	switch c.Driver {
	case "mock_driver", "raw_exec":
	default:
		errs = append(errs, fmt.Errorf("driver must be mock_driver or raw_exec, got %q", c.Driver))
	}
	if c.CPU <= 0 || c.MemoryMB <= 0 || c.DiskMB <= 0 {
		errs = append(errs, fmt.Errorf("cpu, memory and disk must be > 0, got %d MHz, %d MB, %d MB", c.CPU, c.MemoryMB, c.DiskMB))
	}
	if len(c.Datacenters) == 0 {
		errs = append(errs, errors.New("at least one datacenter is required"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout must be > 0, got %s", c.Timeout))
	}
	for _, pid := range c.ServerPIDs {
		if pid <= 0 {
			errs = append(errs, fmt.Errorf("server pid must be > 0, got %d", pid))
		}
	}
	return errors.Join(errs...)
}
