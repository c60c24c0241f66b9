package api

// Resources is what a task asks for (the `resources` block). CPU is in MHz,
// memory and disk in MB.
type Resources struct {
	CPU         *int               `hcl:"cpu,optional"`
	Cores       *int               `hcl:"cores,optional"`
	MemoryMB    *int               `hcl:"memory,optional"`
	MemoryMaxMB *int               `hcl:"memory_max,optional"`
	DiskMB      *int               `hcl:"disk,optional"`
	Networks    []*NetworkResource `hcl:"network,block"`
	Devices     []*RequestedDevice `hcl:"device,block"`
	IOPS        *int               `hcl:"iops,optional"`
}

// DefaultResources is the ask of a task that sets none: 100 MHz, 300 MB.
func DefaultResources() *Resources {
	return &Resources{CPU: new(100), Cores: new(0), MemoryMB: new(300)}
}

// Canonicalize fills the defaults. A task that reserves whole cores gets no
// MHz default, because cores and cpu are mutually exclusive.
func (r *Resources) Canonicalize() {
	d := DefaultResources()
	if r.Cores == nil {
		r.Cores = d.Cores
		if r.CPU == nil {
			r.CPU = d.CPU
		}
	}
	if r.CPU == nil {
		r.CPU = new(0)
	}
	if r.MemoryMB == nil {
		r.MemoryMB = d.MemoryMB
	}
	for _, dev := range r.Devices {
		dev.Canonicalize()
	}
}

// Network modes.
const (
	NetworkModeHost   = "host"
	NetworkModeBridge = "bridge"
	NetworkModeNone   = "none"
)

// NetworkResource is a network ask (the `network` block) or, on a node or
// allocation, a network that was assigned.
type NetworkResource struct {
	Mode     string     `hcl:"mode,optional"`
	Device   string     `hcl:"device,optional"`
	CIDR     string     `hcl:"cidr,optional"`
	IP       string     `hcl:"ip,optional"`
	DNS      *DNSConfig `hcl:"dns,block"`
	Hostname string     `hcl:"hostname,optional"`
	// ReservedPorts are ports with a fixed host port (`static`);
	// DynamicPorts get one chosen by the client. In HCL both are written
	// as `port "label" {}` blocks; a port with `static` set is reserved.
	ReservedPorts []Port `hcl:"reserved_ports,block"`
	DynamicPorts  []Port `hcl:"port,block"`
	MBits         *int   `hcl:"mbits,optional"`
}

// Port is one labelled port of a network.
type Port struct {
	Label string `hcl:",label"`
	// Value is the host port (`static`); 0 for a dynamic port until placed.
	Value int `hcl:"static,optional"`
	// To is the port inside the task's network namespace.
	To              int    `hcl:"to,optional"`
	HostNetwork     string `hcl:"host_network,optional"`
	IgnoreCollision bool   `hcl:"ignore_collision,optional"`
}

// DNSConfig is a network's DNS configuration (the `dns` block).
type DNSConfig struct {
	Servers  []string `hcl:"servers,optional"`
	Searches []string `hcl:"searches,optional"`
	Options  []string `hcl:"options,optional"`
}

// RequestedDevice asks for device instances (the `device "name"` block).
type RequestedDevice struct {
	Name        string        `hcl:",label"`
	Count       *uint64       `hcl:"count,optional"`
	Constraints []*Constraint `hcl:"constraint,block"`
	Affinities  []*Affinity   `hcl:"affinity,block"`
}

// Canonicalize defaults Count to 1.
func (d *RequestedDevice) Canonicalize() {
	if d == nil {
		return
	}
	if d.Count == nil {
		d.Count = new(uint64(1))
	}
	for _, a := range d.Affinities {
		a.Canonicalize()
	}
}
