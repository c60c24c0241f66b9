package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// NodeDrainProgress returns the node and how far its drain has got,
// counted from its allocs as the drainer counts them (see
// structs.NodeDrainProgress), so a blocking query can report progress as
// it happens. The progress of a node that is not draining counts as if a
// drain had just started.
func (s *StateStore) NodeDrainProgress(ws memdb.WatchSet, nodeID string) (*structs.Node, structs.DrainProgress, error) {
	txn := s.db.Txn(false)
	node, err := nodeByID(txn, ws, nodeID)
	if err != nil {
		return nil, structs.DrainProgress{}, err
	}
	if node == nil {
		return nil, structs.DrainProgress{}, fmt.Errorf("node %q: %w", nodeID, structs.ErrUnknownNode)
	}
	allocs, err := allocsByNode(txn, ws, nodeID)
	if err != nil {
		return nil, structs.DrainProgress{}, err
	}
	return node, structs.NodeDrainProgress(node, allocs), nil
}
