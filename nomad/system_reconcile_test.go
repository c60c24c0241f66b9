package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestSystem_ReconcileJobSummaries: the repair goes through Raft (its
// index is the latest) and leaves every job with a summary of its groups.
func TestSystem_ReconcileJobSummaries(t *testing.T) {
	p, _, _, _ := fakePipeline()
	s := newTestServerWith(t, nil, p)
	job := mock.Job()
	registerJob(t, s, job)

	var reply structs.GenericResponse
	must.NoError(t, s.RPC("System.ReconcileJobSummaries", &structs.GenericRequest{}, &reply))
	must.Eq(t, latestIndex(t, s), reply.Index)
	summary, err := s.State().JobSummaryByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, summary)
	must.MapContainsKey(t, summary.Summary, job.TaskGroups[0].Name)
}
