package membership

import (
	"slices"
	"strings"

	"github.com/hashicorp/serf/serf"
)

// Federation: the servers of every region gossip in one pool, so each
// server sees the others' regions from their tags. Only this region's
// servers enter the server set (Raft, bootstrap, autopilot, the clients'
// server list); the others are read from gossip when a request names
// their region.

// Regions returns the regions that have at least one alive server,
// sorted; this server's own region is always among them.
func (m *Membership) Regions() []string {
	regions := []string{m.cfg.Region}
	for _, info := range m.aliveServers() {
		if !slices.Contains(regions, info.Region) {
			regions = append(regions, info.Region)
		}
	}
	slices.Sort(regions)
	return regions
}

// RegionServers returns the alive servers of region, sorted by name: where
// a request for that region can be sent. Any of them serves it (or sends
// it on to its region's leader).
func (m *Membership) RegionServers(region string) []ServerInfo {
	var out []ServerInfo
	for _, info := range m.aliveServers() {
		if info.Region == region {
			out = append(out, info)
		}
	}
	return out
}

// aliveServers are the alive Nomad servers of every region, sorted by
// member name.
func (m *Membership) aliveServers() []ServerInfo {
	var out []ServerInfo
	for _, member := range m.serf.Members() {
		if member.Status != serf.StatusAlive {
			continue
		}
		if info, ok := parseServer(member); ok {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}
