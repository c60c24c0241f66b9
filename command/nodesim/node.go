package nodesim

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/version"
)

// simNode is one simulated node: its identity, the server it prefers for
// reads, and the allocations it knows. The node's watch goroutine and the
// batch completion timers share allocs under mu.
type simNode struct {
	index    int
	id       string
	secretID string
	name     string
	// server is the index of the server this node reads from, so that the
	// blocking queries spread over the servers as real clients' do.
	server int

	mu     sync.Mutex
	allocs map[string]*simAlloc
}

// simAlloc is what a node remembers of one allocation: enough to report
// its status, never the allocation itself.
type simAlloc struct {
	// modifyIndex is the AllocModifyIndex last seen.
	modifyIndex uint64
	// reported is the last client status sent for it ("" for none).
	reported string
	tasks    []string
	batch    bool
	// healthAfter is how long after it starts the allocation is reported
	// healthy to its deployment; negative for never (no deployment, or a
	// manual health check).
	healthAfter time.Duration
	// startedAt is when it was reported running.
	startedAt time.Time
}

// newSimNode names node i of the configuration.
func newSimNode(cfg *Config, i, servers int) *simNode {
	width := len(strconv.Itoa(cfg.Nodes - 1))
	return &simNode{
		index:    i,
		id:       structs.GenerateUUID(),
		secretID: structs.GenerateUUID(),
		name:     fmt.Sprintf("%s-%0*d", cfg.NamePrefix, width, i),
		server:   i % max(servers, 1),
		allocs:   make(map[string]*simAlloc),
	}
}

// build returns the node as its client registers it: initializing,
// eligible, with attributes a real client fingerprints on linux/amd64
// (unique.* ones differ per node, the rest is shared so nodes of a
// datacenter and rack fall into one computed class) and the configured
// resources.
func (n *simNode) build(cfg *Config, now time.Time) *structs.Node {
	totalMHz := int64(cfg.CPUCores) * cfg.CPUMHzPerCore
	ip := fmt.Sprintf("10.%d.%d.%d", 100+n.index>>16&0xff, n.index>>8&0xff, n.index&0xff)
	attrs := map[string]string{
		"kernel.name":               "linux",
		"kernel.arch":               "x86_64",
		"kernel.version":            "6.1.0",
		"os.name":                   "ubuntu",
		"os.version":                "24.04",
		"cpu.arch":                  "amd64",
		"cpu.numcores":              strconv.Itoa(cfg.CPUCores),
		"cpu.reservablecores":       strconv.Itoa(cfg.CPUCores),
		"cpu.frequency":             strconv.FormatInt(cfg.CPUMHzPerCore, 10),
		"cpu.totalcompute":          strconv.FormatInt(totalMHz, 10),
		"cpu.usablecompute":         strconv.FormatInt(totalMHz, 10),
		"memory.totalbytes":         strconv.FormatInt(cfg.MemoryMB<<20, 10),
		"nomad.version":             version.Version,
		"unique.hostname":           n.name,
		"unique.network.ip-address": ip,
		"unique.storage.bytestotal": strconv.FormatInt(cfg.DiskMB<<20, 10),
		"unique.storage.bytesfree":  strconv.FormatInt(cfg.DiskMB<<20, 10),
	}
	drivers := make(map[string]*structs.DriverInfo, len(cfg.Drivers))
	for _, d := range cfg.Drivers {
		attrs["driver."+d] = "1"
		drivers[d] = &structs.DriverInfo{
			Detected: true, Healthy: true, HealthDescription: "Healthy", UpdateTime: now,
		}
	}
	meta := map[string]string{"simulated": "true"}
	if cfg.Racks > 0 {
		meta["rack"] = "r" + strconv.Itoa(n.index%cfg.Racks)
	}
	cores := make([]uint16, cfg.CPUCores)
	for i := range cores {
		cores[i] = uint16(i)
	}
	node := &structs.Node{
		ID:         n.id,
		SecretID:   n.secretID,
		Datacenter: cfg.Datacenters[n.index%len(cfg.Datacenters)],
		Name:       n.name,
		HTTPAddr:   ip + ":4646",
		Attributes: attrs,
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: totalMHz, TotalCpuCores: uint16(cfg.CPUCores), ReservableCpuCores: cores},
			Memory: structs.NodeMemoryResources{MemoryMB: cfg.MemoryMB},
			Disk:   structs.NodeDiskResources{DiskMB: cfg.DiskMB},
			Networks: structs.Networks{{
				Mode: "host", Device: "eth0", CIDR: ip + "/32", IP: ip, MBits: 1000,
			}},
			MinDynamicPort: 20000,
			MaxDynamicPort: 32000,
		},
		ReservedResources: &structs.NodeReservedResources{
			Cpu:    structs.NodeReservedCpuResources{CpuShares: cfg.ReservedCPUMHz},
			Memory: structs.NodeReservedMemoryResources{MemoryMB: cfg.ReservedMemoryMB},
			Disk:   structs.NodeReservedDiskResources{DiskMB: cfg.ReservedDiskMB},
		},
		Meta:                  meta,
		NodeClass:             cfg.NodeClass,
		NodePool:              cfg.NodePool,
		Drivers:               drivers,
		Status:                structs.NodeStatusInit,
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
	node.Canonicalize()
	return node
}
