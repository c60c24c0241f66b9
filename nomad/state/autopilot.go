package state

import (
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
	return readConfig[structs.AutopilotConfig](txn, ws, TableAutopilotConfig)
}

// AutopilotSetConfig replaces the autopilot configuration.
func (tx *Txn) AutopilotSetConfig(config *structs.AutopilotConfig) error {
	return setConfig(tx, TableAutopilotConfig, "autopilot configuration", config)
}

// AutopilotCASConfig replaces the autopilot configuration only if its
// ModifyIndex is still cas (0: only if none was ever written), and
// reports whether it did. A failed check is not an error.
func (tx *Txn) AutopilotCASConfig(cas uint64, config *structs.AutopilotConfig) (bool, error) {
	return casConfig(tx, TableAutopilotConfig, "autopilot configuration", cas, config)
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
