package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// AutopilotConfig returns the index of the last autopilot configuration
// write and the configuration, nil when none was ever written (callers
// then use structs.DefaultAutopilotConfig).
func (s *StateStore) AutopilotConfig(ws memdb.WatchSet) (uint64, *structs.AutopilotConfig, error) {
	return autopilotConfig(s.db.Txn(false), ws)
}

func autopilotConfig(txn *memdb.Txn, ws memdb.WatchSet) (uint64, *structs.AutopilotConfig, error) {
	raw, err := first(txn, ws, TableAutopilotConfig, indexID)
	if err != nil || raw == nil {
		return 0, nil, err
	}
	c := raw.(*structs.AutopilotConfig)
	return c.ModifyIndex, c, nil
}

// AutopilotSetConfig replaces the autopilot configuration.
func (tx *Txn) AutopilotSetConfig(config *structs.AutopilotConfig) error {
	if config == nil {
		return fmt.Errorf("autopilot configuration is nil")
	}
	if err := config.Validate(); err != nil {
		return fmt.Errorf("autopilot configuration: %w", err)
	}
	_, existing, err := autopilotConfig(tx.txn, nil)
	if err != nil {
		return err
	}
	config = config.Copy()
	if existing != nil {
		config.CreateIndex = existing.CreateIndex
	} else {
		config.CreateIndex = tx.index
	}
	config.ModifyIndex = tx.index
	return tx.insert(TableAutopilotConfig, config)
}

// AutopilotCASConfig replaces the autopilot configuration only if its
// ModifyIndex is still cas (0: only if none was ever written), and
// reports whether it did. A failed check is not an error.
func (tx *Txn) AutopilotCASConfig(cas uint64, config *structs.AutopilotConfig) (bool, error) {
	tx.touch(TableAutopilotConfig)
	_, existing, err := autopilotConfig(tx.txn, nil)
	if err != nil {
		return false, err
	}
	current := uint64(0)
	if existing != nil {
		current = existing.ModifyIndex
	}
	if current != cas {
		return false, nil
	}
	if err := tx.AutopilotSetConfig(config); err != nil {
		return false, err
	}
	return true, nil
}

// AutopilotSetConfig replaces the autopilot configuration at index.
func (s *StateStore) AutopilotSetConfig(index uint64, config *structs.AutopilotConfig) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.AutopilotSetConfig(config) })
}

// AutopilotCASConfig replaces the configuration at index if its
// ModifyIndex is still cas; see Txn.AutopilotCASConfig.
func (s *StateStore) AutopilotCASConfig(index, cas uint64, config *structs.AutopilotConfig) (bool, error) {
	var applied bool
	err := s.WithWriteTxn(index, func(tx *Txn) error {
		var err error
		applied, err = tx.AutopilotCASConfig(cas, config)
		return err
	})
	return applied, err
}
