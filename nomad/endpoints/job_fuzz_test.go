package endpoints

import (
	"testing"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/fsm"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// FuzzPrepareJobRPC is a Job.Register request as it arrives on the RPC
// port, without the agent's checks in front: a msgpack body decoded into
// the request, then PrepareJob's canonicalize-and-validate. Neither may
// panic. A job PrepareJob accepts must be one the log and the FSM take:
// its entry passes structs.CheckEntry and applies to a state store
// without error, as Job.Register would write it.
func FuzzPrepareJobRPC(f *testing.F) {
	for _, job := range []*structs.Job{mock.Job(), mock.BatchJob(), mock.SystemJob(), mock.SysBatchJob(),
		{ID: "x", TaskGroups: []*structs.TaskGroup{nil}}} {
		body, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body[1:])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req structs.JobRegisterRequest
		if err := structs.Decode(body, &req); err != nil {
			return
		}
		if req.Job == nil {
			return
		}
		if _, err := PrepareJob(req.Job, "default", 0, 0, func(ns, id string) (*structs.Job, error) { return nil, nil }); err != nil {
			if code, _, ok := structs.ErrorCode(structs.ClassifyError(err)); !ok || code >= 500 {
				if !structs.IsValidationError(err) {
					t.Fatalf("refused with a server-side error: %v", err)
				}
			}
			return
		}
		entry, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: req.Job})
		if err != nil {
			t.Fatalf("encoding an accepted job: %v", err)
		}
		if err := structs.CheckEntry(entry); err != nil {
			t.Fatalf("an accepted job makes an entry the log refuses: %v", err)
		}
		f, err := fsm.New(fsm.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err, ok := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: entry}).(error); ok {
			t.Fatalf("an accepted job does not apply: %v", err)
		}
	})
}
