package structs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Default dynamic port range, as in Nomad.
const (
	DefaultMinDynamicPort = 20000
	DefaultMaxDynamicPort = 32000
	maxValidPort          = 65535
)

// Holders of a port in a NetworkIndex, used in collision reasons.
const (
	portHolderNode  = "the node"
	portHolderAlloc = "an allocation"
)

// NetworkIndex tracks the host ports in use on one node so that the
// scheduler can hand out ports and the plan applier can detect collisions
// with exactly the same rules.
type NetworkIndex struct {
	used    map[int]string // port -> who holds it, for collision reasons
	minPort int
	maxPort int
	hostIP  string
}

// NewNetworkIndex indexes the node's reserved ports. It fails only when
// the node's reserved port list cannot be parsed.
func NewNetworkIndex(node *Node) (*NetworkIndex, error) {
	idx := &NetworkIndex{used: map[int]string{}, minPort: DefaultMinDynamicPort, maxPort: DefaultMaxDynamicPort}
	if nr := node.NodeResources; nr != nil {
		if nr.MinDynamicPort > 0 {
			idx.minPort = nr.MinDynamicPort
		}
		if nr.MaxDynamicPort > 0 {
			idx.maxPort = nr.MaxDynamicPort
		}
		for _, n := range nr.Networks {
			if n.IP != "" {
				idx.hostIP = n.IP
				break
			}
		}
	}
	if idx.hostIP == "" {
		idx.hostIP = node.Attributes["unique.network.ip-address"]
	}
	if rr := node.ReservedResources; rr != nil && rr.Networks.ReservedHostPorts != "" {
		ports, err := ParsePortRanges(rr.Networks.ReservedHostPorts)
		if err != nil {
			return nil, fmt.Errorf("node %q: reserved host ports: %w", node.ID, err)
		}
		for _, p := range ports {
			idx.used[p] = portHolderNode
		}
	}
	return idx, nil
}

// HostIP is the address ports are bound on.
func (idx *NetworkIndex) HostIP() string { return idx.hostIP }

// AddAllocs marks the ports of non-terminal allocs as used. It reports a
// collision when an alloc claims a port the node reserves or another
// alloc already holds. The reason names the port but no alloc, so that it
// can key AllocMetric.DimensionExhausted without growing per alloc:
// "port 8080 reserved by the node", "port 8080 used by an allocation".
func (idx *NetworkIndex) AddAllocs(allocs []*Allocation) (collide bool, reason string) {
	var buf [16]int
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		for _, port := range appendHostPorts(buf[:0], a) {
			if holder, ok := idx.used[port]; ok {
				if holder == portHolderNode {
					return true, fmt.Sprintf("port %d reserved by the node", port)
				}
				return true, fmt.Sprintf("port %d used by %s", port, holder)
			}
			idx.used[port] = portHolderAlloc
		}
	}
	return false, ""
}

// AllocHostPorts returns every host port the alloc holds, each once: the
// group's assigned ports plus any port recorded on the group's or a task's
// network (older allocations carry them there). An alloc listing the same
// port in two places holds it once, not twice.
func AllocHostPorts(a *Allocation) []int { return appendHostPorts(nil, a) }

// appendHostPorts appends the alloc's host ports to dst, which must hold
// no other alloc's ports: duplicates are found by scanning dst, cheaper
// than a set for the handful of ports an alloc holds.
func appendHostPorts(dst []int, a *Allocation) []int {
	ar := a.AllocatedResources
	if ar == nil {
		return dst
	}
	add := func(p int) {
		if p > 0 && !slices.Contains(dst, p) {
			dst = append(dst, p)
		}
	}
	for _, p := range ar.Shared.Ports {
		add(p.Value)
	}
	addNets := func(nets Networks) {
		for _, n := range nets {
			if n == nil {
				continue
			}
			for _, p := range n.ReservedPorts {
				add(p.Value)
			}
			for _, p := range n.DynamicPorts {
				add(p.Value)
			}
		}
	}
	addNets(ar.Shared.Networks)
	for _, t := range ar.Tasks {
		if t != nil {
			addNets(t.Networks)
		}
	}
	return dst
}

// holdsPorts reports, without allocating, whether the alloc holds any
// host port, so fit checks skip the port index for port-less workloads.
func holdsPorts(a *Allocation) bool {
	ar := a.AllocatedResources
	if ar == nil {
		return false
	}
	if len(ar.Shared.Ports) > 0 {
		return true
	}
	netsHold := func(nets Networks) bool {
		for _, n := range nets {
			if n != nil && (len(n.ReservedPorts) > 0 || len(n.DynamicPorts) > 0) {
				return true
			}
		}
		return false
	}
	if netsHold(ar.Shared.Networks) {
		return true
	}
	for _, t := range ar.Tasks {
		if t != nil && netsHold(t.Networks) {
			return true
		}
	}
	return false
}

// AssignPorts grants the static and dynamic ports of a group's network
// asks. Static ports must be free; dynamic ones are drawn at random from
// the node's range so concurrent schedulers rarely pick the same port.
// rng may be nil for the default source.
func (idx *NetworkIndex) AssignPorts(asks Networks, rng *rand.Rand) (AllocatedPorts, error) {
	var out AllocatedPorts
	taken := map[int]bool{}
	for _, ask := range asks {
		for _, p := range ask.ReservedPorts {
			if _, ok := idx.used[p.Value]; ok || taken[p.Value] {
				return nil, fmt.Errorf("%s: reserved port collision %s=%d", DimensionNetwork, p.Label, p.Value)
			}
			taken[p.Value] = true
			out = append(out, AllocatedPortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: idx.hostIP})
		}
	}
	for _, ask := range asks {
		for _, p := range ask.DynamicPorts {
			port, ok := idx.pickDynamic(taken, rng)
			if !ok {
				return nil, fmt.Errorf("%s: dynamic port selection failed", DimensionNetwork)
			}
			taken[port] = true
			to := p.To
			if to == -1 {
				to = port
			}
			out = append(out, AllocatedPortMapping{Label: p.Label, Value: port, To: to, HostIP: idx.hostIP})
		}
	}
	return out, nil
}

func (idx *NetworkIndex) pickDynamic(taken map[int]bool, rng *rand.Rand) (int, bool) {
	span := idx.maxPort - idx.minPort + 1
	if span <= 0 {
		return 0, false
	}
	free := func(p int) bool {
		_, used := idx.used[p]
		return !used && !taken[p]
	}
	// A few random probes find a port quickly on lightly used nodes; a
	// linear scan from a random offset guarantees an answer otherwise.
	randN := rand.IntN
	if rng != nil {
		randN = rng.IntN
	}
	for range 20 {
		if p := idx.minPort + randN(span); free(p) {
			return p, true
		}
	}
	start := randN(span)
	for i := range span {
		if p := idx.minPort + (start+i)%span; free(p) {
			return p, true
		}
	}
	return 0, false
}

// ParsePortRanges parses "22,80,8000-8100" into a list of ports.
func ParsePortRanges(spec string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		start, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("invalid port %q", part)
		}
		end := start
		if isRange {
			if end, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, fmt.Errorf("invalid port range %q", part)
			}
		}
		if start < 1 || end > maxValidPort || start > end {
			return nil, fmt.Errorf("port range %q out of bounds", part)
		}
		for p := start; p <= end; p++ {
			out = append(out, p)
		}
	}
	return out, nil
}
