package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// registerVersions registers job and then one changed spec per extra
// version (priorities 60, 61, ...), and returns the job as stored.
func registerVersions(t *testing.T, s *Server, job *structs.Job, extra int) *structs.Job {
	t.Helper()
	registerJob(t, s, job.Copy())
	for i := 0; i < extra; i++ {
		next := job.Copy()
		next.Priority = 60 + i
		registerJob(t, s, next)
	}
	stored, err := s.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	return stored
}

func TestJobEndpoint_Revert(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	cur := registerVersions(t, s, job, 1)
	must.Eq(t, uint64(1), cur.Version)
	var reply structs.JobRegisterResponse

	t.Run("to the current version is refused", func(t *testing.T) {
		before := latestIndex(t, s)
		err := s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: job.ID, JobVersion: 1}, &reply)
		must.ErrorIs(t, err, structs.ErrInvalid)
		must.ErrorContains(t, err, "can't revert to current version")
		must.Eq(t, before, latestIndex(t, s))
	})
	t.Run("a missing version is not found", func(t *testing.T) {
		err := s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: job.ID, JobVersion: 9}, &reply)
		must.ErrorIs(t, err, structs.ErrNotFound)
		must.ErrorContains(t, err, `job "`+job.ID+`" in namespace "default" at version 9 not found`)
		err = s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: "nope", JobVersion: 0}, &reply)
		must.ErrorIs(t, err, structs.ErrUnknownJob)
	})
	t.Run("the prior version is enforced", func(t *testing.T) {
		wrong := uint64(0)
		err := s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: job.ID, JobVersion: 0, EnforcePriorVersion: &wrong}, &reply)
		must.ErrorIs(t, err, structs.ErrConflict)
		must.ErrorContains(t, err, "Current job has version 1; enforcing version 0")
	})
	t.Run("reverting registers the old spec as a new version", func(t *testing.T) {
		must.NoError(t, s.RPC("Job.Stable", &structs.JobStabilityRequest{JobID: job.ID, JobVersion: 0, Stable: true},
			&structs.JobStabilityResponse{}))
		prior := uint64(1)
		must.NoError(t, s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: job.ID, JobVersion: 0,
			EnforcePriorVersion: &prior}, &reply))
		must.NotEq(t, "", reply.EvalID)
		got, err := s.State().JobByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		must.Eq(t, uint64(2), got.Version)
		must.False(t, got.Stable, must.Sprint("a reverted copy starts unstable"))
		must.Eq(t, reply.JobModifyIndex, got.JobModifyIndex)
		old, err := s.State().JobByIDAndVersion(nil, job.Namespace, job.ID, 0)
		must.NoError(t, err)
		must.False(t, old.SpecChanged(got), must.Sprint("version 2 is version 0's spec"))
		eval, err := s.State().EvalByID(nil, reply.EvalID)
		must.NoError(t, err)
		must.Eq(t, got.JobModifyIndex, eval.JobModifyIndex)
	})
}

func TestJobEndpoint_Stable(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerVersions(t, s, job, 1)
	for _, stable := range []bool{true, false} {
		var reply structs.JobStabilityResponse
		must.NoError(t, s.RPC("Job.Stable", &structs.JobStabilityRequest{JobID: job.ID, JobVersion: 1, Stable: stable}, &reply))
		must.Greater(t, 0, reply.Index)
		cur, _ := s.State().JobByID(nil, job.Namespace, job.ID)
		must.Eq(t, stable, cur.Stable)
	}
	var reply structs.JobStabilityResponse
	err := s.RPC("Job.Stable", &structs.JobStabilityRequest{JobID: job.ID, JobVersion: 7, Stable: true}, &reply)
	must.ErrorIs(t, err, structs.ErrNotFound)
	err = s.RPC("Job.Stable", &structs.JobStabilityRequest{JobVersion: 7}, &reply)
	must.True(t, structs.IsValidationError(err))
}

func scaleReq(job *structs.Job, group string, count *int64) *structs.JobScaleRequest {
	return &structs.JobScaleRequest{JobID: job.ID, Target: map[string]string{
		structs.ScalingTargetJob: job.ID, structs.ScalingTargetGroup: group}, Count: count, Message: "by test"}
}

func TestJobEndpoint_Scale(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registered := registerVersions(t, s, job, 0)
	five := int64(5)

	var reply structs.JobRegisterResponse
	req := scaleReq(job, "web", &five)
	req.Meta = map[string]interface{}{"source": "test"}
	must.NoError(t, s.RPC("Job.Scale", req, &reply))
	cur, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, 5, cur.TaskGroups[0].Count)
	must.Eq(t, uint64(1), cur.Version)
	must.Eq(t, cur.JobModifyIndex, reply.JobModifyIndex)
	eval, _ := s.State().EvalByID(nil, reply.EvalID)
	must.NotNil(t, eval)
	must.Eq(t, structs.EvalTriggerScaling, eval.TriggeredBy)
	must.Eq(t, cur.JobModifyIndex, eval.JobModifyIndex)

	events, _, err := s.State().ScalingEventsByJob(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Len(t, 1, events["web"])
	ev := events["web"][0]
	must.Eq(t, five, *ev.Count)
	must.Eq(t, int64(registered.TaskGroups[0].Count), ev.PreviousCount)
	must.Eq(t, reply.EvalID, *ev.EvalID)
	must.Eq(t, "by test", ev.Message)
	must.Eq[any](t, "test", ev.Meta["source"], must.Sprint("meta survives the Raft entry"))
	must.Eq(t, reply.Index, ev.CreateIndex)

	// An error-only request changes nothing but records an event.
	errReq := scaleReq(job, "web", nil)
	errReq.Error, errReq.Message = true, "autoscaler failed"
	var errReply structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Scale", errReq, &errReply))
	must.Eq(t, "", errReply.EvalID)
	after, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, cur.JobModifyIndex, after.JobModifyIndex)
	events, _, _ = s.State().ScalingEventsByJob(nil, job.Namespace, job.ID)
	must.Len(t, 2, events["web"])
	must.True(t, events["web"][0].Error)
	must.Nil(t, events["web"][0].Count)
	must.Nil(t, events["web"][0].EvalID)
}

func TestJobEndpoint_ScaleRefusals(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerVersions(t, s, job, 0)
	sys := mock.SystemJob()
	registerVersions(t, s, sys, 0)
	neg, two := int64(-1), int64(2)
	withIndex := scaleReq(job, "web", &two)
	withIndex.JobModifyIndex = 1
	errWithCount := scaleReq(job, "web", &two)
	errWithCount.Error = true
	cases := []struct {
		name string
		req  *structs.JobScaleRequest
		kind error
		want string
	}{
		{"missing group name", scaleReq(job, "", &two), structs.ErrInvalid, "missing task group name for scaling action"},
		{"negative count", scaleReq(job, "web", &neg), structs.ErrInvalid, "scaling action count can't be negative"},
		{"error with a count", errWithCount, structs.ErrInvalid, "scaling action should not contain count if error is true"},
		{"missing group", scaleReq(job, "db", &two), structs.ErrInvalid, `task group "db" specified for scaling does not exist in job`},
		{"missing job", scaleReq(&structs.Job{ID: "nope"}, "web", &two), structs.ErrNotFound, "job not found"},
		{"system beyond 1", scaleReq(sys, sys.TaskGroups[0].Name, &two), structs.ErrInvalid, `jobs of type "system" can only be scaled between 0 and 1`},
		{"stale job modify index", withIndex, structs.ErrConflict, "job exists with conflicting job modify index"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := latestIndex(t, s)
			var reply structs.JobRegisterResponse
			err := s.RPC("Job.Scale", tc.req, &reply)
			must.ErrorIs(t, err, tc.kind)
			must.ErrorContains(t, err, tc.want)
			must.Eq(t, before, latestIndex(t, s), must.Sprint("a refused scale writes nothing"))
		})
	}

	t.Run("registration disabled", func(t *testing.T) {
		cfg := *structs.DefaultSchedulerConfiguration()
		cfg.RejectJobRegistration = true
		var set structs.SchedulerSetConfigurationResponse
		must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: cfg}, &set))
		var reply structs.JobRegisterResponse
		err := s.RPC("Job.Scale", scaleReq(job, "web", &two), &reply)
		must.ErrorIs(t, err, structs.ErrJobRegistrationOff)
	})
}

func TestJobEndpoint_ScaleStatus(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)
	job := mock.Job()
	registerVersions(t, s, job, 0)
	healthy, unhealthy := true, false
	a0 := placeAlloc(t, s, job, node, 0)
	a1 := placeAlloc(t, s, job, node, 1)
	placeAlloc(t, s, job, node, 2)
	var ack structs.GenericResponse
	must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{
		{ID: a0.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: time.Now()}},
		{ID: a1.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &unhealthy, Timestamp: time.Now()}},
	}}, &ack))
	var scaled structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Scale", scaleReq(job, "web", nil), &scaled))

	var reply structs.JobScaleStatusResponse
	must.NoError(t, s.RPC("Job.ScaleStatus", &structs.JobScaleStatusRequest{JobID: job.ID}, &reply))
	st := reply.JobScaleStatus
	must.NotNil(t, st)
	must.Eq(t, job.ID, st.JobID)
	must.False(t, st.JobStopped)
	web := st.TaskGroups["web"]
	must.Eq(t, 3, web.Desired)
	must.Eq(t, 3, web.Placed)
	must.Eq(t, 2, web.Running)
	must.Eq(t, 1, web.Healthy)
	must.Eq(t, 1, web.Unhealthy)
	must.Len(t, 1, web.Events)
	must.GreaterEq(t, scaled.Index, reply.Index)

	var none structs.JobScaleStatusResponse
	must.NoError(t, s.RPC("Job.ScaleStatus", &structs.JobScaleStatusRequest{JobID: "nope"}, &none))
	must.Nil(t, none.JobScaleStatus)
}

func TestJobEndpoint_TagVersion(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerVersions(t, s, job, 2)
	tag := func(version uint64, name string) (*structs.JobTagResponse, error) {
		var reply structs.JobTagResponse
		err := s.RPC("Job.TagVersion", &structs.JobApplyTagRequest{JobID: job.ID, Name: name, Version: version,
			Tag: &structs.JobVersionTag{Name: name, Description: "d-" + name}}, &reply)
		return &reply, err
	}
	reply, err := tag(1, "golden")
	must.NoError(t, err)
	must.Eq(t, "golden", reply.Name)
	must.Eq(t, "d-golden", reply.Description)
	must.Greater(t, 0, reply.TaggedTime)
	v, _ := s.State().JobVersionByTagName(nil, job.Namespace, job.ID, "golden")
	must.Eq(t, uint64(1), v.Version)

	before := latestIndex(t, s)
	_, err = tag(2, "golden")
	must.ErrorIs(t, err, structs.ErrConflict)
	must.ErrorContains(t, err, `tag "golden" already exists on a different version of job`)
	_, err = tag(9, "other")
	must.ErrorIs(t, err, structs.ErrNotFound)
	must.Eq(t, before, latestIndex(t, s))

	var latest structs.JobTagResponse
	must.NoError(t, s.RPC("Job.TagVersion", &structs.JobApplyTagRequest{JobID: job.ID, Name: "now", Latest: true,
		Tag: &structs.JobVersionTag{Name: "now"}}, &latest))
	v, _ = s.State().JobVersionByTagName(nil, job.Namespace, job.ID, "now")
	must.Eq(t, uint64(2), v.Version)
	err = s.RPC("Job.TagVersion", &structs.JobApplyTagRequest{JobID: "nope", Name: "now", Latest: true,
		Tag: &structs.JobVersionTag{Name: "now"}}, &latest)
	must.ErrorIs(t, err, structs.ErrUnknownJob)

	var unset structs.JobTagResponse
	must.NoError(t, s.RPC("Job.TagVersion", &structs.JobApplyTagRequest{JobID: job.ID, Name: "golden"}, &unset))
	v, _ = s.State().JobVersionByTagName(nil, job.Namespace, job.ID, "golden")
	must.Nil(t, v)
	err = s.RPC("Job.TagVersion", &structs.JobApplyTagRequest{JobID: job.ID, Name: "golden"}, &unset)
	must.ErrorIs(t, err, structs.ErrNotFound)
}

func TestJobEndpoint_VersionsDiffAgainstAVersion(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerVersions(t, s, job, 2)
	var tag structs.JobTagResponse
	must.NoError(t, s.RPC("Job.TagVersion", &structs.JobApplyTagRequest{JobID: job.ID, Name: "base", Version: 0,
		Tag: &structs.JobVersionTag{Name: "base"}}, &tag))
	zero := uint64(0)
	for name, req := range map[string]*structs.JobVersionsRequest{
		"by version": {JobID: job.ID, DiffVersion: &zero},
		"by tag":     {JobID: job.ID, DiffTagName: "base"},
	} {
		t.Run(name, func(t *testing.T) {
			var reply structs.JobVersionsResponse
			must.NoError(t, s.RPC("Job.GetJobVersions", req, &reply))
			must.Len(t, 3, reply.Versions)
			// Versions 2 and 1, each against version 0 (priority 50 ->
			// 61 and 60).
			must.Len(t, 2, reply.Diffs)
			for _, d := range reply.Diffs {
				must.Eq(t, structs.DiffTypeEdited, d.Type)
			}
		})
	}
	var reply structs.JobVersionsResponse
	err := s.RPC("Job.GetJobVersions", &structs.JobVersionsRequest{JobID: job.ID, DiffTagName: "nope"}, &reply)
	must.ErrorIs(t, err, structs.ErrNotFound)
}
