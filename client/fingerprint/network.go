package fingerprint

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// fingerprintNetwork picks the interface the node advertises (the
// configured one, else the default route's, else the first one that is
// up with an address) and records its addresses.
func fingerprintNetwork(cfg *Config, host Host, res *Result) error {
	name := cfg.NetworkInterface
	if name == "" {
		if f, err := os.Open(filepath.Join(host.ProcDir, "net/route")); err == nil {
			name = parseDefaultRouteIface(f)
			f.Close()
		}
	}
	var iface *net.Interface
	var err error
	if name != "" {
		if iface, err = net.InterfaceByName(name); err != nil {
			return fmt.Errorf("network interface %q: %w", name, err)
		}
	} else if iface, err = firstUsableInterface(); err != nil {
		return err
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return fmt.Errorf("addresses of %s: %w", iface.Name, err)
	}
	speed := cfg.NetworkSpeed
	if speed <= 0 {
		speed = linkSpeed(host, iface.Name)
	}
	var nets structs.Networks
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || ipnet.IP.IsLinkLocalUnicast() {
			continue
		}
		bits := 32
		if ipnet.IP.To4() == nil {
			bits = 128
		}
		nets = append(nets, &structs.NetworkResource{
			Mode:   "host",
			Device: iface.Name,
			IP:     ipnet.IP.String(),
			CIDR:   ipnet.IP.String() + "/" + strconv.Itoa(bits),
			MBits:  speed,
		})
	}
	if len(nets) == 0 {
		return fmt.Errorf("network interface %s has no usable address", iface.Name)
	}
	// Prefer an IPv4 address as the node's address, as Nomad does.
	ip := nets[0].IP
	for _, n := range nets {
		if !strings.Contains(n.IP, ":") {
			ip = n.IP
			break
		}
	}
	res.Attributes["unique.network.ip-address"] = ip
	res.Resources.Networks = nets
	return nil
}

// firstUsableInterface returns the first interface that is up, not
// loopback, and has an address; the loopback one when there is none, so
// that an isolated development machine still works.
func firstUsableInterface() (*net.Interface, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing network interfaces: %w", err)
	}
	var loopback *net.Interface
	for i := range ifaces {
		ifc := &ifaces[i]
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		if ifc.Flags&net.FlagLoopback != 0 {
			if loopback == nil {
				loopback = ifc
			}
			continue
		}
		if addrs, err := ifc.Addrs(); err == nil && len(addrs) > 0 {
			return ifc, nil
		}
	}
	if loopback != nil {
		return loopback, nil
	}
	return nil, errors.New("no network interface is up; set the client's network_interface")
}

// linkSpeed reads a link's speed in Mbit/s, defaulting when the link
// (a virtual one, typically) does not say.
func linkSpeed(host Host, iface string) int {
	b, err := os.ReadFile(filepath.Join(host.SysDir, "class/net", iface, "speed"))
	if err != nil {
		return defaultNetworkSpeed
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return defaultNetworkSpeed
	}
	return n
}
