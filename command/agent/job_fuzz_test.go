package agent

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/endpoints"
	"github.com/opennomad/nomad/structs"
)

// FuzzJobRegisterBody drives a job registration body through everything
// that reads it before Raft: the agent's JSON decoding, its refusal of
// null entries and too-deep driver configs, the conversion to the
// server's structs, and the server's canonicalize-and-validate step
// (endpoints.PrepareJob, against a registered job of the same ID so the
// update checks run too). None of it may panic; every refusal is an
// error of a 4xx kind. A job PrepareJob accepts must make a Raft entry
// the log can take and decode again.
func FuzzJobRegisterBody(f *testing.F) {
	f.Add([]byte(`{"Job":{"ID":"example","Name":"example","Type":"service","Datacenters":["dc1"],` +
		`"TaskGroups":[{"Name":"web","Count":2,"Tasks":[{"Name":"server","Driver":"docker",` +
		`"Config":{"image":"nginx","ports":["http"]},"Resources":{"CPU":100,"MemoryMB":64}}]}]}}`))
	f.Add([]byte(`{"Job":{"ID":"example","TaskGroups":[null]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("PUT", "/v1/jobs", strings.NewReader(string(body)))
		var req api.JobRegisterRequest
		if err := decodeBody(r, &req); err != nil {
			mustBeClientError(t, err)
			return
		}
		if req.Job == nil {
			return
		}
		if err := nullEntries(req.Job); err != nil {
			mustBeClientError(t, err)
			return
		}
		if err := deepConfigs(req.Job); err != nil {
			mustBeClientError(t, err)
			return
		}
		job, _ := convertJob(req.Job)
		registered := fuzzRegisteredJob()
		_, err := endpoints.PrepareJob(job, "default", req.EvalPriority, 0, func(ns, id string) (*structs.Job, error) {
			if ns == registered.Namespace && id == registered.ID {
				return registered, nil
			}
			return nil, nil
		})
		if err != nil {
			mustBeClientError(t, err)
			return
		}
		entry, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
		if err != nil {
			t.Fatalf("encoding an accepted job: %v", err)
		}
		if err := structs.CheckEntry(entry); err != nil {
			t.Fatalf("an accepted job makes an entry the log refuses: %v", err)
		}
		var back structs.JobRegisterRequest
		if err := structs.Decode(entry[1:], &back); err != nil {
			t.Fatalf("an accepted job does not decode from its entry: %v", err)
		}
	})
}

// fuzzRegisteredJob is the version PrepareJob compares a submitted job
// named "example" with.
func fuzzRegisteredJob() *structs.Job {
	j := &structs.Job{ID: "example", Name: "example", Namespace: "default", Type: structs.JobTypeService,
		Datacenters: []string{"dc1"}, Priority: 50,
		TaskGroups: []*structs.TaskGroup{{Name: "web", Count: 1,
			Tasks: []*structs.Task{{Name: "server", Driver: "docker", Config: map[string]interface{}{"image": "nginx"}}}}}}
	j.Canonicalize()
	return j
}

// mustBeClientError fails unless the HTTP layer answers err with a 4xx:
// a refusal of the input, not a server fault.
func mustBeClientError(t *testing.T, err error) {
	t.Helper()
	if code, msg := errorStatus(err); code < 400 || code >= 500 {
		t.Fatalf("input refused with status %d: %s (%T)", code, msg, err)
	}
}
