package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"
)

// A configuration row is a cluster-wide singleton an operator replaces
// as a whole (the scheduler's, autopilot's): validated before it is
// written, stamped with the indexes of its first and last writes, and
// replaced by a check-and-set only while its ModifyIndex is the one the
// writer read.

// configRow is what such a configuration offers the store.
type configRow[T any] interface {
	*T
	Validate() error
	Copy() *T
	Indexes() (create, modify uint64)
	SetIndexes(create, modify uint64)
}

// readConfig returns the index of the last write to the table's
// configuration and the configuration, nil when none was ever written.
func readConfig[T any, P configRow[T]](txn *memdb.Txn, ws memdb.WatchSet, table string) (uint64, P, error) {
	raw, err := first(txn, ws, table, indexID)
	if err != nil || raw == nil {
		return 0, nil, err
	}
	c := raw.(P)
	_, modify := c.Indexes()
	return modify, c, nil
}

// setConfig replaces the table's configuration with a stamped copy of
// config; what names it in errors.
func setConfig[T any, P configRow[T]](tx *Txn, table, what string, config P) error {
	if config == nil {
		return fmt.Errorf("%s is nil", what)
	}
	if err := config.Validate(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	_, existing, err := readConfig[T, P](tx.txn, nil, table)
	if err != nil {
		return err
	}
	create := tx.index
	if existing != nil {
		create, _ = existing.Indexes()
	}
	row := P(config.Copy())
	row.SetIndexes(create, tx.index)
	return tx.insert(table, row)
}

// casConfig replaces the table's configuration only if its ModifyIndex
// is still cas (0: only if none was ever written), and reports whether
// it did. A failed check is not an error.
func casConfig[T any, P configRow[T]](tx *Txn, table, what string, cas uint64, config P) (bool, error) {
	tx.touch(table)
	current, _, err := readConfig[T, P](tx.txn, nil, table)
	if err != nil {
		return false, err
	}
	if current != cas {
		return false, nil
	}
	if err := setConfig[T, P](tx, table, what, config); err != nil {
		return false, err
	}
	return true, nil
}
