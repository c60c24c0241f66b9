package allocrunner

import (
	"strings"

	"github.com/opennomad/nomad/structs"
)

// nodeAddressAttribute is the node attribute holding the address the
// node fingerprinted as its own.
const nodeAddressAttribute = "unique.network.ip-address"

// hostNetworkStatus is the network status of an allocation whose group
// shares the node's network (no network block, or mode "host"): the
// node's own address, the interface that carries it and that interface's
// IPv6 address, as the node fingerprinted them. It is nil for the other
// modes, whose networks this client does not set up, and for a node
// without an address.
func hostNetworkStatus(node *structs.Node, tg *structs.TaskGroup) *structs.AllocNetworkStatus {
	if node == nil || tg == nil {
		return nil
	}
	if len(tg.Networks) > 0 {
		if mode := tg.Networks[0].Mode; mode != "" && mode != structs.NetworkModeHost {
			return nil
		}
	}
	addr := node.Attributes[nodeAddressAttribute]
	if addr == "" {
		return nil
	}
	status := &structs.AllocNetworkStatus{Address: addr}
	if node.NodeResources == nil {
		return status
	}
	for _, n := range node.NodeResources.Networks {
		if n != nil && n.IP == addr {
			status.InterfaceName = n.Device
			break
		}
	}
	for _, n := range node.NodeResources.Networks {
		if n != nil && n.Device == status.InterfaceName && n.IP != addr && strings.Contains(n.IP, ":") {
			status.AddressIPv6 = n.IP
			break
		}
	}
	return status
}
