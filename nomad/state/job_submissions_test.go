package state

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// registerWithSource registers job at index with its source, as the FSM
// does with a registration that carries one.
func registerWithSource(t *testing.T, s *StateStore, index uint64, job *structs.Job, source string) {
	t.Helper()
	must.NoError(t, s.WithWriteTxn(index, func(tx *Txn) error {
		if err := tx.UpsertJob(job); err != nil {
			return err
		}
		return tx.UpsertJobSubmission(job.Namespace, job.ID, &structs.JobSubmission{Source: source, Format: "hcl2"})
	}))
}

// A version's source is kept with it: not for a registration that made
// no version, dropped when the version leaves the history or the job is
// purged.
func TestJobSubmissions_Lifecycle(t *testing.T) {
	s := testStore(t)
	job := mockJob()
	registerWithSource(t, s, 10, job, "v0")
	sub, err := s.JobSubmission(nil, job.Namespace, job.ID, 0)
	must.NoError(t, err)
	must.Eq(t, "v0", sub.Source)
	must.Eq(t, job.ID, sub.JobID)
	must.Eq(t, 0, sub.Version)

	// The same spec again makes no version: its source is not kept,
	// version 0 keeps its own.
	same := mockJob()
	same.ID = job.ID
	registerWithSource(t, s, 11, same, "v0 again")
	sub, _ = s.JobSubmission(nil, job.Namespace, job.ID, 0)
	must.Eq(t, "v0", sub.Source)
	none, _ := s.JobSubmission(nil, job.Namespace, job.ID, 1)
	must.Nil(t, none)

	// Versions past the tracked history take their sources with them.
	for i := 1; i <= structs.JobTrackedVersions; i++ {
		next := mockJob()
		next.ID = job.ID
		next.Priority = 50 + i
		registerWithSource(t, s, uint64(20+i), next, fmt.Sprintf("v%d", i))
	}
	gone, _ := s.JobSubmission(nil, job.Namespace, job.ID, 0)
	must.Nil(t, gone)
	last, _ := s.JobSubmission(nil, job.Namespace, job.ID, uint64(structs.JobTrackedVersions))
	must.Eq(t, fmt.Sprintf("v%d", structs.JobTrackedVersions), last.Source)

	// A job whose ID extends this one's keeps its sources at the purge.
	other := mockJob()
	other.ID = job.ID + "-2"
	registerWithSource(t, s, 40, other, "other")
	must.NoError(t, s.DeleteJob(41, job.Namespace, job.ID))
	for v := uint64(0); v <= uint64(structs.JobTrackedVersions); v++ {
		gone, _ := s.JobSubmission(nil, job.Namespace, job.ID, v)
		must.Nil(t, gone)
	}
	kept, _ := s.JobSubmission(nil, other.Namespace, other.ID, 0)
	must.Eq(t, "other", kept.Source)
}
