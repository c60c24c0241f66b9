package agent

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestJobOps_Revert(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Revert", func(args, reply interface{}) error {
		out := reply.(*structs.JobRegisterResponse)
		out.EvalID, out.EvalCreateIndex, out.JobModifyIndex, out.Index = "e1", 20, 20, 20
		return nil
	})
	resp, body := h.do("PUT", "/v1/job/web/revert?namespace=prod", `{"JobID":"web","JobVersion":1,"EnforcePriorVersion":3}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "20", resp.Header.Get("X-Nomad-Index"))
	var out api.JobRegisterResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, "e1", out.EvalID)
	args := h.rpc.lastCall(t, "Job.Revert").(*structs.JobRevertRequest)
	must.Eq(t, uint64(1), args.JobVersion)
	must.Eq(t, uint64(3), *args.EnforcePriorVersion)
	must.Eq(t, "prod", args.Namespace)

	for body, want := range map[string]string{
		`{"JobVersion":1}`:                 "JobID must be specified",
		`{"JobID":"other","JobVersion":1}`: "Job ID does not match",
	} {
		resp, got := h.do("PUT", "/v1/job/web/revert", body)
		must.Eq(t, http.StatusBadRequest, resp.StatusCode)
		must.StrContains(t, got, want)
	}
}

func TestJobOps_Stable(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Stable", func(args, reply interface{}) error {
		reply.(*structs.JobStabilityResponse).Index = 31
		return nil
	})
	resp, body := h.do("POST", "/v1/job/web/stable", `{"JobID":"web","JobVersion":2,"Stable":true}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var out api.JobStabilityResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, uint64(31), out.JobModifyIndex)
	must.StrContains(t, body, `"Index":31`)
	args := h.rpc.lastCall(t, "Job.Stable").(*structs.JobStabilityRequest)
	must.True(t, args.Stable)
	must.Eq(t, uint64(2), args.JobVersion)
}

func TestJobOps_ScaleAction(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Scale", func(args, reply interface{}) error {
		out := reply.(*structs.JobRegisterResponse)
		out.EvalID, out.Index = "e2", 40
		return nil
	})
	resp, body := h.do("PUT", "/v1/job/a%2Fb/scale",
		`{"Count":3,"Target":{"Job":"a/b","Group":"web"},"Message":"m","Meta":{"k":"v"},"JobModifyIndex":9}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	args := h.rpc.lastCall(t, "Job.Scale").(*structs.JobScaleRequest)
	must.Eq(t, "a/b", args.JobID)
	must.Eq(t, int64(3), *args.Count)
	must.Eq(t, "web", args.Target[structs.ScalingTargetGroup])
	must.Eq(t, uint64(9), args.JobModifyIndex)
	must.Eq[any](t, "v", args.Meta["k"])

	cases := map[string]string{
		`{"Count":1,"Target":{"Job":"other","Group":"web"}}`:                       "job ID in payload did not match URL",
		`{"Count":1,"Target":{"Job":"a/b","Group":"web","Namespace":"elsewhere"}}`: "namespace in payload did not match header",
	}
	for in, want := range cases {
		resp, got := h.do("PUT", "/v1/job/a%2Fb/scale", in)
		must.Eq(t, http.StatusBadRequest, resp.StatusCode)
		must.StrContains(t, got, want)
	}
}

func TestJobOps_ScaleStatus(t *testing.T) {
	h := newTestHTTP(t)
	count := int64(2)
	h.rpc.onWrite("Job.ScaleStatus", func(args, reply interface{}) error {
		out := reply.(*structs.JobScaleStatusResponse)
		if args.(*structs.JobScaleStatusRequest).JobID != "web" {
			return nil
		}
		out.Index = 50
		out.JobScaleStatus = &structs.JobScaleStatus{JobID: "web", Namespace: "default", JobCreateIndex: 3,
			JobModifyIndex: 9, TaskGroups: map[string]*structs.TaskGroupScaleStatus{
				"web":   {Desired: 2, Placed: 2, Running: 1, Healthy: 1, Events: []*structs.ScalingEvent{{Count: &count, Time: 5}}},
				"quiet": {Desired: 1},
			}}
		return nil
	})
	resp, body := h.do("GET", "/v1/job/web/scale", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "50", resp.Header.Get("X-Nomad-Index"))
	var out api.JobScaleStatusResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, 2, out.TaskGroups["web"].Desired)
	must.Eq(t, int64(2), *out.TaskGroups["web"].Events[0].Count)
	must.StrContains(t, body, `"Events":null`, must.Sprint("a group with no events has null, as Nomad answers"))

	resp, _ = h.do("GET", "/v1/job/nope/scale", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = h.do("DELETE", "/v1/job/web/scale", "")
	must.Eq(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestJobOps_VersionTag(t *testing.T) {
	h := newTestHTTP(t)
	job := mock.Job(mock.JobID("web/child"))
	must.NoError(t, h.rpc.state.UpsertJob(5, job))
	next := job.Copy()
	next.Priority = 77
	must.NoError(t, h.rpc.state.UpsertJob(6, next))
	h.rpc.onWrite("Job.TagVersion", func(args, reply interface{}) error {
		a := args.(*structs.JobApplyTagRequest)
		out := reply.(*structs.JobTagResponse)
		out.Index, out.Name = 60, a.Name
		return nil
	})

	resp, body := h.do("PUT", "/v1/job/web%2Fchild/versions/golden/tag", `{"Version":0,"Description":"first"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	args := h.rpc.lastCall(t, "Job.TagVersion").(*structs.JobApplyTagRequest)
	must.Eq(t, "web/child", args.JobID)
	must.Eq(t, "golden", args.Name)
	must.Eq(t, uint64(0), args.Version)
	must.Eq(t, &structs.JobVersionTag{Name: "golden", Description: "first"}, args.Tag)

	// Latest, or no version at all, tags the current version.
	for _, in := range []string{`{"Version":0,"Latest":true}`, `{"Description":"x"}`} {
		resp, body = h.do("PUT", "/v1/job/web%2Fchild/versions/now/tag", in)
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
		must.True(t, h.rpc.lastCall(t, "Job.TagVersion").(*structs.JobApplyTagRequest).Latest)
	}

	resp, body = h.do("DELETE", "/v1/job/web%2Fchild/versions/golden/tag", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	args = h.rpc.lastCall(t, "Job.TagVersion").(*structs.JobApplyTagRequest)
	must.Nil(t, args.Tag)
	must.Eq(t, "golden", args.Name)

	resp, _ = h.do("PUT", "/v1/job/web%2Fchild/versions/x/tag", `{"JobID":"other"}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
}

func TestJobOps_VersionsDiffOptions(t *testing.T) {
	h := newTestHTTP(t)
	job := mock.Job(mock.JobID("web"))
	must.NoError(t, h.rpc.state.UpsertJob(5, job))
	h.do("GET", "/v1/job/web/versions?diffs=true&diff_tag=golden&diff_version=2", "")
	args := h.rpc.lastCall(t, "Job.GetJobVersions").(*structs.JobVersionsRequest)
	must.Eq(t, "golden", args.DiffTagName)
	must.Eq(t, uint64(2), *args.DiffVersion)
	resp, _ := h.do("GET", "/v1/job/web/versions?diff_version=x", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
}

// TestJobOps_EmptyJobIDOnScaleIs400: "PUT /v1/job//scale" is redirected
// by the router to "/v1/job/scale", a registration without a job.
func TestJobOps_EmptyJobIDOnScaleIs400(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("PUT", "/v1/job//scale", `{"Count":1,"Target":{"Group":"web"}}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, "Job must be specified")
}
