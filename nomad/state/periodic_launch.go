package state

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// The periodic_launch table holds, per periodic template, when it last
// launched a child. Registering a job keeps it up to date (see
// recordPeriodicLaunch), so the launch is recorded in the same Raft entry
// as the child it launched: a new leader never launches twice, and can
// tell which launch fell due while no server was leading.

// ---- reads -----------------------------------------------------------------

func periodicLaunchByID(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) (*structs.PeriodicLaunch, error) {
	raw, err := first(txn, ws, TablePeriodicLaunch, indexID, namespace, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.PeriodicLaunch), nil
}

// PeriodicLaunchByID returns the last launch of a periodic template, or
// nil when none was recorded.
func (s *StateStore) PeriodicLaunchByID(ws memdb.WatchSet, namespace, id string) (*structs.PeriodicLaunch, error) {
	return periodicLaunchByID(s.db.Txn(false), ws, namespace, id)
}

// PeriodicLaunches returns every launch record, sorted by namespace and ID.
func (s *StateStore) PeriodicLaunches(ws memdb.WatchSet) ([]*structs.PeriodicLaunch, error) {
	it, err := get(s.db.Txn(false), ws, TablePeriodicLaunch, indexID)
	if err != nil {
		return nil, err
	}
	return collect[structs.PeriodicLaunch](it, nil), nil
}

// PeriodicLaunchByID returns the launch record or nil.
func (tx *Txn) PeriodicLaunchByID(namespace, id string) (*structs.PeriodicLaunch, error) {
	return periodicLaunchByID(tx.txn, nil, namespace, id)
}

// ---- writes ----------------------------------------------------------------

// UpsertPeriodicLaunch records a template's launch. A launch older than
// the one recorded is ignored: the record only moves forward.
func (tx *Txn) UpsertPeriodicLaunch(l *structs.PeriodicLaunch) error {
	tx.touch(TablePeriodicLaunch)
	if l == nil {
		return fmt.Errorf("upsert periodic launch: launch is nil")
	}
	if l.ID == "" || l.Namespace == "" {
		return fmt.Errorf("upsert periodic launch: ID and Namespace are required")
	}
	existing, err := periodicLaunchByID(tx.txn, nil, l.Namespace, l.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		if l.Launch.Before(existing.Launch) {
			return nil
		}
		l.CreateIndex = existing.CreateIndex
	} else {
		l.CreateIndex = tx.index
	}
	l.ModifyIndex = tx.index
	if err := tx.insert(TablePeriodicLaunch, l); err != nil {
		return fmt.Errorf("periodic launch of job %q: %w", l.ID, err)
	}
	return nil
}

// DeletePeriodicLaunch forgets a template's launches; a missing record is
// not an error.
func (tx *Txn) DeletePeriodicLaunch(namespace, id string) error {
	tx.touch(TablePeriodicLaunch)
	existing, err := periodicLaunchByID(tx.txn, nil, namespace, id)
	if err != nil || existing == nil {
		return err
	}
	if err := tx.delete(TablePeriodicLaunch, existing); err != nil {
		return fmt.Errorf("periodic launch of job %q: %w", id, err)
	}
	return nil
}

// recordPeriodicLaunch keeps the launch table in step with a job just
// registered (isNew: for the first time):
//
//   - a new child launched by a template ("<parent>/periodic-<unix>")
//     records that launch for its parent;
//   - a template with no record yet records its submission as its first
//     "launch", so that a leader elected later counts missed launches from
//     when the template was registered, not from the epoch.
func (tx *Txn) recordPeriodicLaunch(job *structs.Job, isNew bool) error {
	if isNew && job.ParentID != "" {
		if at, ok := structs.PeriodicLaunchTime(job.ParentID, job.ID); ok {
			return tx.UpsertPeriodicLaunch(&structs.PeriodicLaunch{ID: job.ParentID, Namespace: job.Namespace, Launch: at})
		}
	}
	if !job.IsPeriodic() || job.SubmitTime == 0 {
		return nil
	}
	existing, err := periodicLaunchByID(tx.txn, nil, job.Namespace, job.ID)
	if err != nil || existing != nil {
		return err
	}
	return tx.UpsertPeriodicLaunch(&structs.PeriodicLaunch{
		ID: job.ID, Namespace: job.Namespace, Launch: time.Unix(0, job.SubmitTime).UTC(),
	})
}

// ---- store wrappers ----------------------------------------------------------

// UpsertPeriodicLaunch records a launch at index; see Txn.UpsertPeriodicLaunch.
func (s *StateStore) UpsertPeriodicLaunch(index uint64, l *structs.PeriodicLaunch) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertPeriodicLaunch(l) })
}

// DeletePeriodicLaunch forgets a launch record at index; see
// Txn.DeletePeriodicLaunch.
func (s *StateStore) DeletePeriodicLaunch(index uint64, namespace, id string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeletePeriodicLaunch(namespace, id) })
}
