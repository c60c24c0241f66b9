package nomad

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Children of job templates, launched by the leader's periodic
// dispatcher (on its clock, or forced) and by dispatch.

func periodicJob(spec string) *structs.Job {
	job := mock.BatchJob()
	job.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: spec, SpecType: structs.PeriodicSpecCron}
	job.Canonicalize()
	return job
}

// children returns the jobs whose parent is id.
func children(t *testing.T, ws memdb.WatchSet, store *state.StateStore, id string) []*structs.Job {
	t.Helper()
	jobs, err := store.Jobs(ws, structs.AllNamespaces)
	must.NoError(t, err)
	var out []*structs.Job
	for _, j := range jobs {
		if j.ParentID == id {
			out = append(out, j)
		}
	}
	return out
}

func TestServerPipeline_PeriodicJobLaunchesOnTheClock(t *testing.T) {
	start := time.Date(2030, 1, 1, 10, 0, 30, 0, time.UTC)
	fake := clock.NewFake(start)
	s := newPipelineServer(t, 1, func(c *Config) { c.Clock = fake })
	job := periodicJob("*/5 * * * *")
	// The dispatcher first sees the template at the clock's time and
	// arms a timer for its next launch; the clock must not move before
	// that, or it would first see it past the launch. The leader's other
	// loops have their timers armed already and re-arm only when the
	// clock moves.
	armed := fake.Pending()
	reply := registerJob(t, s, job)
	must.Eq(t, "", reply.EvalID, must.Sprint("a periodic template gets no eval"))
	must.SliceEmpty(t, children(t, nil, s.State(), job.ID))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must.NoError(t, fake.BlockUntil(ctx, armed+1))

	fake.Advance(5 * time.Minute)
	var child *structs.Job
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		kids := children(t, ws, store, job.ID)
		if len(kids) != 1 {
			return false, fmt.Sprintf("%d children", len(kids))
		}
		child = kids[0]
		return true, ""
	})
	must.Eq(t, structs.PeriodicChildID(job.ID, start.Truncate(5*time.Minute).Add(5*time.Minute)), child.ID)
	must.Nil(t, child.Periodic)
	// The child's eval went through a worker: no node can run it, so it
	// completed with a blocked eval left behind.
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		evals, err := store.EvalsByJob(ws, child.Namespace, child.ID)
		must.NoError(t, err)
		for _, e := range evals {
			if e.TriggeredBy == structs.EvalTriggerPeriodicJob {
				return e.Status == structs.EvalStatusComplete, "launch eval is " + e.Status
			}
		}
		return false, "no launch eval"
	})
	launch, err := s.State().PeriodicLaunchByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, launch)
}

func TestPeriodicEndpoint_Force(t *testing.T) {
	s := newPipelineServer(t, 1, nil)
	registerNode(t, s, mock.Node())
	job := periodicJob("0 0 1 1 *")
	registerJob(t, s, job)

	var reply structs.PeriodicForceResponse
	must.NoError(t, s.RPC("Periodic.Force", &structs.PeriodicForceRequest{JobID: job.ID}, &reply))
	must.NotEq(t, "", reply.EvalID)
	must.Positive(t, reply.EvalCreateIndex)
	eval := mustEval(t, s, reply.EvalID)
	must.StrHasPrefix(t, job.ID+structs.PeriodicLaunchSuffix, eval.JobID)
	child, err := s.State().JobByID(nil, eval.Namespace, eval.JobID)
	must.NoError(t, err)
	waitForLive(t, s, child, child.TaskGroups[0].Count)

	cases := []struct {
		name string
		req  *structs.PeriodicForceRequest
		code int
		msg  string
	}{
		{"no job ID", &structs.PeriodicForceRequest{}, 400, "missing job ID"},
		{"unknown job", &structs.PeriodicForceRequest{JobID: "nope"}, 404, "job not found"},
		{"not periodic", &structs.PeriodicForceRequest{JobID: child.ID}, 400, "non-periodic"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.RPC("Periodic.Force", tc.req, &reply)
			code, msg, ok := structs.ErrorCode(err)
			must.True(t, ok, must.Sprintf("%v", err))
			must.Eq(t, tc.code, code)
			must.StrContains(t, msg, tc.msg)
		})
	}
}

func parameterizedJob() *structs.Job {
	job := mock.BatchJob()
	job.ParameterizedJob = &structs.ParameterizedJobConfig{
		Payload: structs.DispatchPayloadRequired, MetaRequired: []string{"input"}, MetaOptional: []string{"mode"},
	}
	job.Meta = map[string]string{"owner": "data", "mode": "fast"}
	job.Canonicalize()
	return job
}

func TestJobEndpoint_DispatchLaunchesAChild(t *testing.T) {
	s := newPipelineServer(t, 1, nil)
	registerNode(t, s, mock.Node())
	parent := parameterizedJob()
	must.Eq(t, "", registerJob(t, s, parent).EvalID)

	var reply structs.JobDispatchResponse
	must.NoError(t, s.RPC("Job.Dispatch", &structs.JobDispatchRequest{
		JobID: parent.ID, Payload: []byte("hello"), Meta: map[string]string{"input": "s3://x", "mode": "slow"},
	}, &reply))
	prefix := parent.ID + structs.DispatchLaunchSuffix
	must.StrHasPrefix(t, prefix, reply.DispatchedJobID)
	rest := strings.Split(strings.TrimPrefix(reply.DispatchedJobID, prefix), "-")
	must.Len(t, 2, rest, must.Sprint("<unix>-<8 hex>"))
	must.Len(t, 8, []byte(rest[1]))
	must.Positive(t, reply.JobCreateIndex)
	must.Eq(t, reply.JobCreateIndex, reply.EvalCreateIndex)

	child, err := s.State().JobByID(nil, parent.Namespace, reply.DispatchedJobID)
	must.NoError(t, err)
	must.True(t, child.Dispatched)
	must.Eq(t, parent.ID, child.ParentID)
	must.Eq(t, []byte("hello"), child.Payload)
	must.Eq(t, map[string]string{"owner": "data", "mode": "slow", "input": "s3://x"}, child.Meta)
	must.Eq(t, reply.EvalID, mustEval(t, s, reply.EvalID).ID)
	waitForLive(t, s, child, child.TaskGroups[0].Count)

	var templated structs.JobDispatchResponse
	must.NoError(t, s.RPC("Job.Dispatch", &structs.JobDispatchRequest{
		JobID: parent.ID, Payload: []byte("x"), Meta: map[string]string{"input": "y"}, IdPrefixTemplate: "nightly",
	}, &templated))
	must.StrHasPrefix(t, prefix+"nightly-", templated.DispatchedJobID)
}

func TestJobEndpoint_DispatchRejects(t *testing.T) {
	s := newTestServer(t, nil)
	parent := parameterizedJob()
	registerJob(t, s, parent)
	plain := mock.BatchJob()
	registerJob(t, s, plain)
	forbidden := parameterizedJob()
	forbidden.ParameterizedJob.Payload = structs.DispatchPayloadForbidden
	registerJob(t, s, forbidden)

	cases := []struct {
		name string
		req  *structs.JobDispatchRequest
		code int
		msgs []string
	}{
		{"unknown job", &structs.JobDispatchRequest{JobID: "nope"}, 404, []string{"job not found"}},
		{"not parameterized", &structs.JobDispatchRequest{JobID: plain.ID}, 400, []string{"is not a parameterized job"}},
		{"missing payload and meta, unknown meta", &structs.JobDispatchRequest{
			JobID: parent.ID, Meta: map[string]string{"color": "red"},
		}, 400, []string{"Payload is required", "required meta keys: [input]", "unpermitted metadata keys: [color]"}},
		{"payload too big", &structs.JobDispatchRequest{
			JobID: parent.ID, Payload: make([]byte, structs.DispatchPayloadSizeLimit+1), Meta: map[string]string{"input": "x"},
		}, 400, []string{"Payload exceeds maximum size"}},
		{"payload forbidden", &structs.JobDispatchRequest{
			JobID: forbidden.ID, Payload: []byte("x"), Meta: map[string]string{"input": "x"},
		}, 400, []string{"Payload is not allowed"}},
	}
	before := latestIndex(t, s)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reply structs.JobDispatchResponse
			err := s.RPC("Job.Dispatch", tc.req, &reply)
			code, msg, ok := structs.ErrorCode(err)
			must.True(t, ok, must.Sprintf("%v", err))
			must.Eq(t, tc.code, code)
			for _, m := range tc.msgs {
				must.StrContains(t, msg, m)
			}
		})
	}
	must.Eq(t, before, latestIndex(t, s), must.Sprint("refused dispatches write nothing"))
}
