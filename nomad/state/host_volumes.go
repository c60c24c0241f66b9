package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Dynamic host volumes, by ID, with an index by node. A volume's state
// follows its node: ready while the node reports it (an entry of
// Node.HostVolumes carrying the volume's ID), unavailable once a node
// that had it stops reporting it, pending until it first does.

// TableHostVolumes holds structs.HostVolume rows.
const TableHostVolumes = "host_volumes"

func hostVolumesTableSchema() *memdb.TableSchema {
	field := strField[*structs.HostVolume]
	return &memdb.TableSchema{
		Name: TableHostVolumes,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(field(func(v *structs.HostVolume) string { return v.ID })),
			indexNodeID: {
				Name:    indexNodeID,
				Indexer: field(func(v *structs.HostVolume) string { return v.NodeID }),
			},
		},
	}
}

// HostVolumes returns every volume, by ID.
func (s *StateStore) HostVolumes(ws memdb.WatchSet) ([]*structs.HostVolume, error) {
	it, err := get(s.db.Txn(false), ws, TableHostVolumes, indexID)
	if err != nil {
		return nil, err
	}
	return collect[structs.HostVolume](it, nil), nil
}

// HostVolumeByID returns the volume or nil.
func (s *StateStore) HostVolumeByID(ws memdb.WatchSet, id string) (*structs.HostVolume, error) {
	return hostVolumeByID(s.db.Txn(false), ws, id)
}

func hostVolumeByID(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.HostVolume, error) {
	raw, err := first(txn, ws, TableHostVolumes, indexID, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.HostVolume), nil
}

// HostVolumesByNodeID returns the volumes of one node.
func (s *StateStore) HostVolumesByNodeID(ws memdb.WatchSet, nodeID string) ([]*structs.HostVolume, error) {
	return hostVolumesByNode(s.db.Txn(false), ws, nodeID)
}

func hostVolumesByNode(txn *memdb.Txn, ws memdb.WatchSet, nodeID string) ([]*structs.HostVolume, error) {
	it, err := get(txn, ws, TableHostVolumes, indexNodeID, nodeID)
	if err != nil {
		return nil, err
	}
	return collect[structs.HostVolume](it, nil), nil
}

// UpsertHostVolumes writes volumes at index; see Txn.UpsertHostVolumes.
func (s *StateStore) UpsertHostVolumes(index uint64, vols []*structs.HostVolume) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertHostVolumes(vols) })
}

// UpsertHostVolumes adds or replaces volumes, all or none. A volume must
// name its node, which must exist; one that exists keeps its creation
// index and time and may not move to another node. Its state is set from
// what the node reports. The caller's objects are not written into.
func (tx *Txn) UpsertHostVolumes(vols []*structs.HostVolume) error {
	tx.touch(TableHostVolumes)
	for _, v := range vols {
		if v == nil || v.ID == "" {
			return structs.KindErrorf(structs.ErrInvalid, "host volume without an ID")
		}
		v = v.Copy()
		v.Allocations = nil
		node, err := nodeByID(tx.txn, nil, v.NodeID)
		if err != nil {
			return err
		}
		if node == nil {
			return structs.KindErrorf(structs.ErrInvalid, "host volume %q: node %q does not exist", v.ID, v.NodeID)
		}
		existing, err := hostVolumeByID(tx.txn, nil, v.ID)
		if err != nil {
			return err
		}
		v.CreateIndex = tx.index
		if existing != nil {
			if existing.NodeID != v.NodeID {
				return structs.KindErrorf(structs.ErrInvalid, "host volume %q: cannot move from node %q to %q", v.ID, existing.NodeID, v.NodeID)
			}
			v.CreateIndex, v.CreateTime = existing.CreateIndex, existing.CreateTime
			if v.HostPath == "" {
				v.HostPath = existing.HostPath
			}
		}
		v.ModifyIndex = tx.index
		v.NodePool = node.NodePool
		setHostVolumeState(v, node, existing)
		if err := tx.insert(TableHostVolumes, v); err != nil {
			return fmt.Errorf("host volume %q: %w", v.ID, err)
		}
	}
	return nil
}

// setHostVolumeState reads v's state from its node's report: ready (with
// the path the node reports) while the node has it, unavailable once a
// ready volume is missing from the report, pending before.
func setHostVolumeState(v *structs.HostVolume, node *structs.Node, existing *structs.HostVolume) {
	for _, hv := range node.HostVolumes {
		if hv != nil && hv.ID == v.ID {
			v.State, v.HostPath = structs.HostVolumeStateReady, hv.Path
			return
		}
	}
	switch {
	case existing != nil && existing.State != structs.HostVolumeStatePending:
		v.State = structs.HostVolumeStateUnavailable
	default:
		v.State = structs.HostVolumeStatePending
	}
}

// updateHostVolumesOfNode follows a node's registration: each of its
// volumes whose state the new report changes is rewritten.
func (tx *Txn) updateHostVolumesOfNode(node *structs.Node) error {
	vols, err := hostVolumesByNode(tx.txn, nil, node.ID)
	if err != nil {
		return err
	}
	for _, old := range vols {
		v := old.Copy()
		setHostVolumeState(v, node, old)
		v.NodePool = node.NodePool
		if v.State == old.State && v.HostPath == old.HostPath && v.NodePool == old.NodePool {
			continue
		}
		tx.touch(TableHostVolumes)
		v.ModifyIndex = tx.index
		if err := tx.insert(TableHostVolumes, v); err != nil {
			return fmt.Errorf("host volume %q: %w", v.ID, err)
		}
	}
	return nil
}

// DeleteHostVolume removes a volume at index; see Txn.DeleteHostVolume.
func (s *StateStore) DeleteHostVolume(index uint64, id string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteHostVolume(id) })
}

// DeleteHostVolume removes the volume; one that does not exist is
// structs.ErrNotFound.
func (tx *Txn) DeleteHostVolume(id string) error {
	tx.touch(TableHostVolumes)
	v, err := hostVolumeByID(tx.txn, nil, id)
	if err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("host volume %q: %w", id, structs.ErrNotFound)
	}
	return tx.delete(TableHostVolumes, v)
}
