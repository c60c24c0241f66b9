package allocrunner

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestHostNetworkStatus(t *testing.T) {
	node := &structs.Node{
		Attributes: map[string]string{nodeAddressAttribute: "10.0.0.5"},
		NodeResources: &structs.NodeResources{Networks: structs.Networks{
			{Device: "eth0", IP: "fd00::5"},
			{Device: "eth0", IP: "10.0.0.5"},
			{Device: "eth1", IP: "fd01::9"},
		}},
	}
	group := func(mode ...string) *structs.TaskGroup {
		tg := &structs.TaskGroup{Name: "web"}
		for _, m := range mode {
			tg.Networks = append(tg.Networks, &structs.NetworkResource{Mode: m})
		}
		return tg
	}
	host := &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "10.0.0.5", AddressIPv6: "fd00::5"}
	cases := []struct {
		name string
		node *structs.Node
		tg   *structs.TaskGroup
		want *structs.AllocNetworkStatus
	}{
		{name: "no network block", node: node, tg: group(), want: host},
		{name: "mode unset", node: node, tg: group(""), want: host},
		{name: "host mode", node: node, tg: group("host"), want: host},
		{name: "bridge mode", node: node, tg: group("bridge")},
		{name: "no address", node: &structs.Node{}, tg: group()},
		{name: "address without resources", node: &structs.Node{Attributes: node.Attributes}, tg: group(),
			want: &structs.AllocNetworkStatus{Address: "10.0.0.5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, hostNetworkStatus(tc.node, tc.tg))
		})
	}
}
