package nomad

import (
	"errors"
	"slices"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// A list's filter is evaluated over whole objects, as Nomad's: Nomad's
// own `job dispatch` and `job periodic force` list jobs with
// `ParameterizedJob is not nil` and `Periodic is not nil`, blocks the
// job stub only has as flags.
func TestListFilter_OverWholeObjects(t *testing.T) {
	s := newTestServer(t, nil)
	registerJob(t, s, mock.Job(mock.JobID("web")))
	periodic := mock.BatchJob(mock.JobID("nightly"))
	periodic.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "0 3 * * *", SpecType: "cron"}
	registerJob(t, s, periodic)
	dispatch := mock.BatchJob(mock.JobID("render"))
	dispatch.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: "optional"}
	registerJob(t, s, dispatch)
	registerNode(t, s, mock.Node(mock.NodeID(mock.IDFor(1)), mock.Attr("os.name", "debian")))
	registerNode(t, s, mock.Node(mock.NodeID(mock.IDFor(2)), mock.Attr("os.name", "alpine")))

	jobCases := []struct {
		filter string
		want   []string
	}{
		{"ParameterizedJob is not nil", []string{"render"}},
		{"Periodic is not nil", []string{"nightly"}},
		{`Periodic is not nil and Periodic.Spec == "0 3 * * *"`, []string{"nightly"}},
		{`Type == "service"`, []string{"web"}},
	}
	for _, tc := range jobCases {
		t.Run("jobs "+tc.filter, func(t *testing.T) {
			var reply structs.JobListResponse
			req := &structs.JobListRequest{}
			req.Filter = tc.filter
			must.NoError(t, s.RPC("Job.List", req, &reply))
			var got []string
			for _, j := range reply.Jobs {
				got = append(got, j.ID)
			}
			slices.Sort(got)
			must.Eq(t, tc.want, got)
		})
	}

	var nodes structs.NodeListResponse
	req := &structs.NodeListRequest{}
	req.Filter = `Attributes["os.name"] == "alpine"`
	must.NoError(t, s.RPC("Node.List", req, &nodes))
	must.Len(t, 1, nodes.Nodes)
	must.Eq(t, mock.IDFor(2), nodes.Nodes[0].ID)

	var allocs structs.AllocListResponse
	areq := &structs.AllocListRequest{}
	areq.Filter = `Job.Type == "batch"`
	must.NoError(t, s.RPC("Alloc.List", areq, &allocs))
	for _, a := range allocs.Allocations {
		must.NotEq(t, "web", a.JobID)
	}

	bad := []string{`Status ==`, `NoSuchField == "x"`}
	for _, expr := range bad {
		var reply structs.JobListResponse
		req := &structs.JobListRequest{}
		req.Filter = expr
		err := s.RPC("Job.List", req, &reply)
		must.Error(t, err)
		must.True(t, errors.Is(err, structs.ErrInvalid), must.Sprintf("%q: %v", expr, err))
	}
}
