package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// ---- reads -----------------------------------------------------------------

func nodeByID(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Node, error) {
	raw, err := first(txn, ws, TableNodes, indexID, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Node), nil
}

// NodeByID returns the node or nil when it does not exist.
func (s *StateStore) NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error) {
	return nodeByID(s.db.Txn(false), ws, id)
}

// NodeBySecretID returns the node holding the secret, or nil.
func (s *StateStore) NodeBySecretID(ws memdb.WatchSet, secretID string) (*structs.Node, error) {
	if secretID == "" {
		return nil, nil
	}
	raw, err := first(s.db.Txn(false), ws, TableNodes, "secret_id", secretID)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Node), nil
}

// Nodes returns every node, sorted by ID. The slice is the caller's to
// reorder; the nodes are shared.
func (s *StateStore) Nodes(ws memdb.WatchSet) ([]*structs.Node, error) {
	nodes, err := s.sharedNodes(ws)
	return slices.Clone(nodes), err
}

// sharedNodes returns every node, sorted by ID, in a slice shared with
// every other reader of the same version of the nodes table: it must be
// read only.
func (s *StateStore) sharedNodes(ws memdb.WatchSet) ([]*structs.Node, error) {
	it, err := get(s.db.Txn(false), ws, TableNodes, indexID)
	if err != nil {
		return nil, err
	}
	// The iterator's watch channel belongs to the root of the nodes
	// tree, and every version of the tree has a new root: the channel
	// names the version. Every evaluation lists every node, and nodes
	// change far less often than evaluations run, so the list of the
	// last version read is kept instead of walking the tree.
	version := it.WatchCh()
	if c := s.nodeList.Load(); c != nil && c.version == version {
		return c.nodes, nil
	}
	nodes := collect[structs.Node](it, nil)
	s.nodeList.Store(&nodeList{version: version, nodes: nodes})
	return nodes, nil
}

// nodeList is a node listing and the version of the nodes table it was
// read from.
type nodeList struct {
	version <-chan struct{}
	nodes   []*structs.Node
}

// NodesByIDPrefix returns the nodes whose ID starts with prefix.
func (s *StateStore) NodesByIDPrefix(ws memdb.WatchSet, prefix string) ([]*structs.Node, error) {
	it, err := get(s.db.Txn(false), ws, TableNodes, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect[structs.Node](it, nil), nil
}

// NodesByNodePool returns the nodes of a pool.
func (s *StateStore) NodesByNodePool(ws memdb.WatchSet, pool string) ([]*structs.Node, error) {
	it, err := get(s.db.Txn(false), ws, TableNodes, "node_pool", pool)
	if err != nil {
		return nil, err
	}
	return collect[structs.Node](it, nil), nil
}

// NodesByDrain returns the nodes that are draining (draining true) or
// not, sorted by ID. A watch set registered here fires only on changes to
// nodes on that side, and on nodes crossing over.
func (s *StateStore) NodesByDrain(ws memdb.WatchSet, draining bool) ([]*structs.Node, error) {
	it, err := get(s.db.Txn(false), ws, TableNodes, "drain", draining)
	if err != nil {
		return nil, err
	}
	return collect[structs.Node](it, nil), nil
}

// ---- writes ----------------------------------------------------------------

// UpsertNode registers a node or replaces its registration, creating
// its node pool when that does not exist. A re-register
// keeps what only other writes own: the node's events, drain strategy,
// scheduling eligibility and last drain. A first registration records a
// "Node registered" event stamped with StatusUpdatedAt.
func (tx *Txn) UpsertNode(node *structs.Node) error {
	tx.touch(TableNodes)
	if node == nil {
		return fmt.Errorf("upsert node: node is nil")
	}
	if node.ID == "" {
		return fmt.Errorf("upsert node: ID is required")
	}
	if node.SecretID == "" {
		return fmt.Errorf("node %q: SecretID is required", node.ID)
	}
	existing, err := nodeByID(tx.txn, nil, node.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		node.CreateIndex = existing.CreateIndex
		node.Events = existing.Events
		node.DrainStrategy = existing.DrainStrategy
		node.SchedulingEligibility = existing.SchedulingEligibility
		node.LastDrain = existing.LastDrain
	} else {
		node.CreateIndex = tx.index
		node.Events = nil
		node.AppendEvents(tx.index, structs.NewNodeEvent(structs.NodeEventSubsystemCluster,
			structs.NodeEventMsgRegistered, time.Unix(node.StatusUpdatedAt, 0).UTC()))
	}
	node.ModifyIndex = tx.index
	tx.internNode(node)
	pool := node.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	if err := tx.ensureNodePool(pool); err != nil {
		return fmt.Errorf("node %q: %w", node.ID, err)
	}
	if err := tx.insert(TableNodes, node); err != nil {
		return fmt.Errorf("node %q: %w", node.ID, err)
	}
	if err := tx.updateHostVolumesOfNode(node); err != nil {
		return err
	}
	tx.emitNode(structs.TypeNodeRegistration, node)
	return nil
}

// DeleteNodes removes nodes. Their allocations stay until garbage
// collected. Every ID must exist, or nothing is deleted.
func (tx *Txn) DeleteNodes(ids []string) error {
	tx.touch(TableNodes)
	for _, id := range ids {
		n, err := nodeByID(tx.txn, nil, id)
		if err != nil {
			return err
		}
		if n == nil {
			return fmt.Errorf("delete node %q: %w", id, structs.ErrUnknownNode)
		}
		if err := tx.delete(TableNodes, n); err != nil {
			return fmt.Errorf("node %q: %w", id, err)
		}
		// The node's allocation index goes with it; a node registering
		// again under the ID starts over at the allocs table's index.
		if _, err := tx.txn.DeleteAll(TableNodeAllocIndex, indexID, id); err != nil {
			return fmt.Errorf("node %q: deleting its allocation index: %w", id, err)
		}
		if err := tx.deleteServicesBy(indexNodeID, id); err != nil {
			return fmt.Errorf("node %q: %w", id, err)
		}
		tx.emitNode(structs.TypeNodeDeregistration, n)
	}
	return nil
}

// UpdateNodeStatus sets a node's status (a heartbeat that changed it, or a
// missed heartbeat), the time of the update (unix seconds) and, when
// given, appends a node event. A node marked down or disconnected records
// the index in LastMissedHeartbeatIndex.
func (tx *Txn) UpdateNodeStatus(nodeID, status string, updatedAt int64, event *structs.NodeEvent) error {
	if !structs.ValidNodeStatus(status) {
		return fmt.Errorf("node %q: invalid status %q", nodeID, status)
	}
	n, err := tx.nodeForUpdate(nodeID)
	if err != nil {
		return err
	}
	n.Status = status
	n.StatusUpdatedAt = updatedAt
	if status == structs.NodeStatusDown || status == structs.NodeStatusDisconnected {
		n.LastMissedHeartbeatIndex = tx.index
	}
	if status == structs.NodeStatusDown {
		// A down node's allocs will be replaced elsewhere; its
		// registrations point at nothing that answers. A disconnected
		// node's allocs may come back, so they keep theirs.
		if err := tx.deleteServicesBy(indexNodeID, nodeID); err != nil {
			return fmt.Errorf("node %q: %w", nodeID, err)
		}
	}
	if event != nil {
		n.AppendEvents(tx.index, event)
	}
	return tx.putNode(n, structs.TypeNodeEvent)
}

// UpdateNodeDrain starts (drain != nil) or cancels (drain == nil) a drain.
// Draining makes the node ineligible; cancelling makes it eligible again
// only with markEligible. drainMeta, when not empty, replaces the
// operator metadata of LastDrain.
func (tx *Txn) UpdateNodeDrain(nodeID string, drain *structs.DrainStrategy, markEligible bool, updatedAt int64, event *structs.NodeEvent, drainMeta map[string]string) error {
	return tx.updateNodeDrain(nodeID, drain, markEligible, updatedAt, event, drainMeta, false)
}

// BatchUpdateNodeDrain applies the drainer's updates: drains it finished
// (strategy nil) are recorded as complete rather than canceled.
func (tx *Txn) BatchUpdateNodeDrain(updates map[string]*structs.DrainUpdate, updatedAt int64, events map[string]*structs.NodeEvent) error {
	tx.touch(TableNodes)
	for _, id := range sortedKeys(updates) {
		u := updates[id]
		if u == nil {
			return fmt.Errorf("node %q: drain update is nil", id)
		}
		if err := tx.updateNodeDrain(id, u.DrainStrategy, u.MarkEligible, updatedAt, events[id], nil, true); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Txn) updateNodeDrain(nodeID string, drain *structs.DrainStrategy, markEligible bool, updatedAt int64, event *structs.NodeEvent, drainMeta map[string]string, completed bool) error {
	existing, err := nodeByID(tx.txn, nil, nodeID)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("update drain of node %q: %w", nodeID, structs.ErrUnknownNode)
	}
	n := existing.Copy()
	n.StatusUpdatedAt = updatedAt
	if event != nil {
		n.AppendEvents(tx.index, event)
	}
	n.DrainStrategy = drain
	switch {
	case drain != nil:
		n.SchedulingEligibility = structs.NodeSchedulingIneligible
	case markEligible:
		n.SchedulingEligibility = structs.NodeSchedulingEligible
	}

	// LastDrain describes the latest drain; writes that neither had nor
	// set a drain leave it alone.
	if existing.DrainStrategy != nil || drain != nil {
		now := time.Unix(updatedAt, 0).UTC()
		if existing.DrainStrategy == nil {
			n.LastDrain = &structs.DrainMetadata{StartedAt: now}
		} else if n.LastDrain == nil {
			n.LastDrain = &structs.DrainMetadata{StartedAt: existing.DrainStrategy.StartedAt.UTC().Truncate(time.Second)}
		}
		n.LastDrain.UpdatedAt = now
		if len(drainMeta) != 0 {
			n.LastDrain.Meta = drainMeta
		}
		switch {
		case drain != nil:
			n.LastDrain.Status = structs.DrainStatusDraining
		case completed:
			n.LastDrain.Status = structs.DrainStatusComplete
		default:
			n.LastDrain.Status = structs.DrainStatusCanceled
		}
	}
	return tx.putNode(n, structs.TypeNodeDrain)
}

// UpdateNodeEligibility sets whether new allocations may be placed on the
// node. A draining node cannot be made eligible.
func (tx *Txn) UpdateNodeEligibility(nodeID, eligibility string, updatedAt int64, event *structs.NodeEvent) error {
	switch eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return fmt.Errorf("node %q: invalid scheduling eligibility %q", nodeID, eligibility)
	}
	n, err := tx.nodeForUpdate(nodeID)
	if err != nil {
		return err
	}
	if n.DrainStrategy != nil && eligibility == structs.NodeSchedulingEligible {
		return fmt.Errorf("node %q: can not set node's scheduling eligibility to eligible while it is draining", nodeID)
	}
	n.SchedulingEligibility = eligibility
	n.StatusUpdatedAt = updatedAt
	if event != nil {
		n.AppendEvents(tx.index, event)
	}
	return tx.putNode(n, structs.TypeNodeEligibilityUpdate)
}

// nodeForUpdate returns a copy of the stored node, ready to change.
func (tx *Txn) nodeForUpdate(nodeID string) (*structs.Node, error) {
	existing, err := nodeByID(tx.txn, nil, nodeID)
	if err != nil {
		return nil, err
	}
	if existing == nil {
		return nil, fmt.Errorf("update node %q: %w", nodeID, structs.ErrUnknownNode)
	}
	return existing.Copy(), nil
}

func (tx *Txn) putNode(n *structs.Node, eventType string) error {
	n.ModifyIndex = tx.index
	tx.internNode(n) // a status or eligibility was decoded afresh
	if err := tx.insert(TableNodes, n); err != nil {
		return fmt.Errorf("node %q: %w", n.ID, err)
	}
	tx.emitNode(eventType, n)
	return nil
}

func (tx *Txn) emitNode(eventType string, n *structs.Node) {
	tx.emit(structs.Event{
		Topic:   structs.TopicNode,
		Type:    eventType,
		Key:     n.ID,
		Payload: &structs.NodeStreamEvent{Node: n.Sanitize()},
	})
}

// ---- store wrappers ----------------------------------------------------------

// UpsertNode registers or re-registers a node at index; see Txn.UpsertNode.
func (s *StateStore) UpsertNode(index uint64, node *structs.Node) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertNode(node) })
}

// DeleteNodes removes nodes at index; see Txn.DeleteNodes.
func (s *StateStore) DeleteNodes(index uint64, ids []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteNodes(ids) })
}

// UpdateNodeStatus changes a node's status at index; see Txn.UpdateNodeStatus.
func (s *StateStore) UpdateNodeStatus(index uint64, nodeID, status string, updatedAt int64, event *structs.NodeEvent) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateNodeStatus(nodeID, status, updatedAt, event) })
}

// UpdateNodeDrain starts or cancels a drain at index; see Txn.UpdateNodeDrain.
func (s *StateStore) UpdateNodeDrain(index uint64, nodeID string, drain *structs.DrainStrategy, markEligible bool, updatedAt int64, event *structs.NodeEvent, drainMeta map[string]string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error {
		return tx.UpdateNodeDrain(nodeID, drain, markEligible, updatedAt, event, drainMeta)
	})
}

// BatchUpdateNodeDrain applies drainer updates at index; see Txn.BatchUpdateNodeDrain.
func (s *StateStore) BatchUpdateNodeDrain(index uint64, updates map[string]*structs.DrainUpdate, updatedAt int64, events map[string]*structs.NodeEvent) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.BatchUpdateNodeDrain(updates, updatedAt, events) })
}

// UpdateNodeEligibility changes eligibility at index; see Txn.UpdateNodeEligibility.
func (s *StateStore) UpdateNodeEligibility(index uint64, nodeID, eligibility string, updatedAt int64, event *structs.NodeEvent) error {
	return s.WithWriteTxn(index, func(tx *Txn) error {
		return tx.UpdateNodeEligibility(nodeID, eligibility, updatedAt, event)
	})
}
