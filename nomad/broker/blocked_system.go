package broker

import "github.com/opennomad/nomad/structs"

// systemBlockedIndex indexes blocked system-job evals by the node they
// could not be placed on. A system job wants one alloc on every eligible
// node, so capacity freed on that very node (UnblockNode) is what can
// help, whatever its class. The evals themselves stay in the tracker's
// captured set; this is only an index into it.
type systemBlockedIndex struct {
	byNode map[string]map[string]struct{}
}

func newSystemBlockedIndex() systemBlockedIndex {
	return systemBlockedIndex{byNode: make(map[string]map[string]struct{})}
}

func (s systemBlockedIndex) add(e *structs.Evaluation) {
	ids := s.byNode[e.NodeID]
	if ids == nil {
		ids = make(map[string]struct{})
		s.byNode[e.NodeID] = ids
	}
	ids[e.ID] = struct{}{}
}

func (s systemBlockedIndex) remove(e *structs.Evaluation) {
	ids := s.byNode[e.NodeID]
	if ids == nil {
		return
	}
	delete(ids, e.ID)
	if len(ids) == 0 {
		delete(s.byNode, e.NodeID)
	}
}

// evalsOn returns the IDs indexed under nodeID, as a copy the caller may
// hold while removing them.
func (s systemBlockedIndex) evalsOn(nodeID string) []string {
	ids := s.byNode[nodeID]
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	return out
}
