package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// The cluster-wide singletons: the scheduler configuration and the
// cluster's identity.

// SchedulerConfig returns the index of the last configuration write and
// the configuration, nil when none was ever written (callers then use
// structs.DefaultSchedulerConfiguration).
func (s *StateStore) SchedulerConfig(ws memdb.WatchSet) (uint64, *structs.SchedulerConfiguration, error) {
	return schedulerConfig(s.db.Txn(false), ws)
}

func schedulerConfig(txn *memdb.Txn, ws memdb.WatchSet) (uint64, *structs.SchedulerConfiguration, error) {
	return readConfig[structs.SchedulerConfiguration](txn, ws, TableSchedulerConfig)
}

// SchedulerSetConfig replaces the scheduler configuration.
func (tx *Txn) SchedulerSetConfig(config *structs.SchedulerConfiguration) error {
	return setConfig(tx, TableSchedulerConfig, "scheduler configuration", config)
}

// SchedulerCASConfig replaces the scheduler configuration only if its
// ModifyIndex is still cas (0: only if none was ever written), and
// reports whether it did. A failed check is not an error.
func (tx *Txn) SchedulerCASConfig(cas uint64, config *structs.SchedulerConfiguration) (bool, error) {
	return casConfig(tx, TableSchedulerConfig, "scheduler configuration", cas, config)
}

// ClusterMetadata returns the cluster's identity, or nil before the first
// leader wrote it.
func (s *StateStore) ClusterMetadata(ws memdb.WatchSet) (*structs.ClusterMetadata, error) {
	raw, err := first(s.db.Txn(false), ws, TableClusterMeta, indexID)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.ClusterMetadata), nil
}

// ClusterSetMetadata records the cluster's identity. It is written once:
// writing the same ID again is a no-op, another ID is refused.
func (tx *Txn) ClusterSetMetadata(meta *structs.ClusterMetadata) error {
	tx.touch(TableClusterMeta)
	if meta == nil || meta.ClusterID == "" {
		return fmt.Errorf("cluster metadata: ClusterID is required")
	}
	raw, err := first(tx.txn, nil, TableClusterMeta, indexID)
	if err != nil {
		return err
	}
	if raw != nil {
		existing := raw.(*structs.ClusterMetadata)
		if existing.ClusterID == meta.ClusterID {
			return nil
		}
		return fmt.Errorf("refusing to set cluster ID %q: the cluster already has ID %q", meta.ClusterID, existing.ClusterID)
	}
	return tx.insert(TableClusterMeta, meta)
}

// SchedulerSetConfig replaces the scheduler configuration at index.
func (s *StateStore) SchedulerSetConfig(index uint64, config *structs.SchedulerConfiguration) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.SchedulerSetConfig(config) })
}

// SchedulerCASConfig replaces the configuration at index if its
// ModifyIndex is still cas; see Txn.SchedulerCASConfig.
func (s *StateStore) SchedulerCASConfig(index, cas uint64, config *structs.SchedulerConfiguration) (bool, error) {
	var applied bool
	err := s.WithWriteTxn(index, func(tx *Txn) error {
		var err error
		applied, err = tx.SchedulerCASConfig(cas, config)
		return err
	})
	return applied, err
}

// ClusterSetMetadata records the cluster's identity at index; see
// Txn.ClusterSetMetadata.
func (s *StateStore) ClusterSetMetadata(index uint64, meta *structs.ClusterMetadata) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.ClusterSetMetadata(meta) })
}
