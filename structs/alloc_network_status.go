package structs

import "slices"

// AllocNetworkStatus is an allocation's network as its client set it up,
// reported with the allocation's status so that the API (and whatever
// needs the address, such as service registration) can find it. In host
// mode it is the node's own interface and address.
type AllocNetworkStatus struct {
	InterfaceName string
	Address       string
	AddressIPv6   string
	DNS           *DNSConfig
}

// Copy returns a deep copy.
func (s *AllocNetworkStatus) Copy() *AllocNetworkStatus {
	if s == nil {
		return nil
	}
	c := *s
	c.DNS = s.DNS.Copy()
	return &c
}

// DNSConfig is the DNS configuration an allocation's tasks see.
type DNSConfig struct {
	Servers  []string
	Searches []string
	Options  []string
}

// Copy returns a deep copy.
func (d *DNSConfig) Copy() *DNSConfig {
	if d == nil {
		return nil
	}
	return &DNSConfig{Servers: slices.Clone(d.Servers), Searches: slices.Clone(d.Searches), Options: slices.Clone(d.Options)}
}
