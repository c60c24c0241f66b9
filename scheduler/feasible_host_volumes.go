package scheduler

import (
	"github.com/opennomad/nomad/structs"
)

// reasonMissingHostVolumes is Nomad's filter reason for a node that lacks
// a host volume the group asks for, or offers it read-only to a writer.
const reasonMissingHostVolumes = "missing compatible host volumes"

// hostVolumesFit reports whether node n offers every volume of reqs, for
// the alloc with index allocIndex (per_alloc requests ask for
// "<source>[<index>]"). A volume the node offers read-only only fits a
// request that does not write.
func hostVolumesFit(n *structs.Node, reqs []*structs.VolumeRequest, allocIndex uint) bool {
	for _, r := range reqs {
		v, ok := n.HostVolumes[r.SourceFor(allocIndex)]
		if !ok || v == nil || (v.ReadOnly && r.Writes()) {
			return false
		}
	}
	return true
}

// splitHostVolumes separates a group's host volume requests into those
// every alloc shares, checked once per node, and the per_alloc ones,
// checked per placement since each alloc index names its own volume.
func splitHostVolumes(tg *structs.TaskGroup) (shared, perAlloc []*structs.VolumeRequest) {
	for _, r := range tg.HostVolumes() {
		if r.PerAlloc {
			perAlloc = append(perAlloc, r)
		} else {
			shared = append(shared, r)
		}
	}
	return shared, perAlloc
}

// allocIndex is the index in an alloc name, 0 when it has none.
func allocIndex(name string) uint {
	return uint(max(0, structs.AllocIndexFromName(name)))
}
