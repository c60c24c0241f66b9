package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Job submissions: the source of a job version, one row per (namespace,
// job, version). A row lives as long as its version: it goes when the
// version is trimmed from the history and when the job is purged.

// TableJobSubmissions holds structs.JobSubmission rows.
const TableJobSubmissions = "job_submission"

func jobSubmissionsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobSubmissions,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(&memdb.CompoundIndex{Indexes: []memdb.Indexer{
				strField(func(s *structs.JobSubmission) string { return s.Namespace }),
				strField(func(s *structs.JobSubmission) string { return s.JobID }),
				uintField(func(s *structs.JobSubmission) uint64 { return s.Version }),
			}}),
		},
	}
}

// JobSubmission returns the source of a job version, nil when none is
// kept.
func (s *StateStore) JobSubmission(ws memdb.WatchSet, namespace, jobID string, version uint64) (*structs.JobSubmission, error) {
	raw, err := first(s.db.Txn(false), ws, TableJobSubmissions, indexID, namespace, jobID, version)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.JobSubmission), nil
}

// UpsertJobSubmission keeps sub as the source of the job's current
// version, if this transaction wrote that version (a registration that
// changed nothing made none, and its source is not kept). The row is a
// copy named after the version.
func (tx *Txn) UpsertJobSubmission(namespace, jobID string, sub *structs.JobSubmission) error {
	if sub == nil {
		return nil
	}
	job, err := tx.JobByID(namespace, jobID)
	if err != nil {
		return err
	}
	if job == nil || job.JobModifyIndex != tx.index {
		return nil
	}
	row := sub.Copy()
	row.Namespace, row.JobID, row.Version = namespace, jobID, job.Version
	if err := tx.insert(TableJobSubmissions, row); err != nil {
		return fmt.Errorf("source of job %q version %d: %w", jobID, job.Version, err)
	}
	return nil
}

// deleteJobSubmission drops the source of one job version, if kept.
func (tx *Txn) deleteJobSubmission(namespace, jobID string, version uint64) error {
	raw, err := first(tx.txn, nil, TableJobSubmissions, indexID, namespace, jobID, version)
	if err != nil || raw == nil {
		return err
	}
	if err := tx.delete(TableJobSubmissions, raw); err != nil {
		return fmt.Errorf("source of job %q version %d: %w", jobID, version, err)
	}
	return nil
}

// deleteJobSubmissions drops the sources of every version of a job.
func (tx *Txn) deleteJobSubmissions(namespace, jobID string) error {
	it, err := get(tx.txn, nil, TableJobSubmissions, indexID+"_prefix", namespace, jobID)
	if err != nil {
		return err
	}
	// The job ID is a prefix scan: "web" also sees "web-2".
	rows := collect(it, func(s *structs.JobSubmission) bool { return s.JobID == jobID })
	for _, row := range rows {
		if err := tx.delete(TableJobSubmissions, row); err != nil {
			return fmt.Errorf("source of job %q version %d: %w", jobID, row.Version, err)
		}
	}
	return nil
}
