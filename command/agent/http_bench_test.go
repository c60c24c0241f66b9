package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// benchHTTP is an API handler over the fake server, called without a
// network so that only the agent's own work is measured.
func benchHTTP(b *testing.B) (*HTTPServer, *testRPC) {
	rpc := &testRPC{writes: map[string]func(args, reply interface{}) error{}}
	rpc.state = stateWithPublisher(b, nil)
	srv, err := NewHTTPServer(HTTPServerConfig{RPC: rpc, Agent: DevConfig()})
	if err != nil {
		b.Fatal(err)
	}
	return srv, rpc
}

// BenchmarkJobRegisterHandler measures a registration's agent side:
// decode the JSON body, canonicalize, convert, validate, encode the
// answer.
func BenchmarkJobRegisterHandler(b *testing.B) {
	srv, rpc := benchHTTP(b)
	rpc.writes["Job.Register"] = func(args, reply interface{}) error { return nil }
	h := srv.Handler()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPut, "/v1/jobs", strings.NewReader(registerBody))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// loadJobBody is the body the api client sends for one job of the
// load generator's shape: one group of one allocation of one task, the
// unset fields as JSON nulls.
func loadJobBody(b *testing.B) string {
	id, typ, count, cpu, mem, disk := "load-1", "service", 1, 20, 16, 300
	job := &api.Job{ID: &id, Name: &id, Type: &typ, Datacenters: []string{"*"},
		TaskGroups: []*api.TaskGroup{{Name: &typ, Count: &count, EphemeralDisk: &api.EphemeralDisk{SizeMB: &disk},
			Tasks: []*api.Task{{Name: "work", Driver: "mock_driver", Config: map[string]any{"run_for": "24h"},
				Resources: &api.Resources{CPU: &cpu, MemoryMB: &mem}}}}}}
	body, err := json.Marshal(&api.JobRegisterRequest{Job: job})
	if err != nil {
		b.Fatal(err)
	}
	return string(body)
}

// BenchmarkJobRegisterToRequestBytes measures what a server does with a
// registration before the leader's endpoint sees it: the small job's
// JSON body decoded, converted to the RPC request, and that request
// msgpack-encoded (as a follower forwards it, and as its Raft entry is
// written); the answer rendered as JSON.
func BenchmarkJobRegisterToRequestBytes(b *testing.B) {
	srv, rpc := benchHTTP(b)
	var size int
	rpc.writes["Job.Register"] = func(args, reply interface{}) error {
		buf, err := structs.Encode(structs.JobRegisterRequestType, args)
		size = len(buf)
		return err
	}
	h := srv.Handler()
	body := loadJobBody(b)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPut, "/v1/jobs", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.ReportMetric(float64(len(body)), "bodyB")
	b.ReportMetric(float64(size), "requestB")
}

// BenchmarkJobListHandler measures listing 1000 jobs: the read, the
// stubs and their JSON.
func BenchmarkJobListHandler(b *testing.B) {
	srv, rpc := benchHTTP(b)
	for i := 0; i < 1000; i++ {
		if err := rpc.state.UpsertJob(uint64(i+1), mock.Job(mock.JobID(fmt.Sprintf("job-%04d", i)))); err != nil {
			b.Fatal(err)
		}
	}
	h := srv.Handler()
	for _, q := range []string{"", "?filter=Status%20%3D%3D%20%22pending%22", "?per_page=50"} {
		b.Run("query="+q, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				req := httptest.NewRequest(http.MethodGet, "/v1/jobs"+q, nil)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkEventsJSON measures rendering one event batch as a stream line.
func BenchmarkEventsJSON(b *testing.B) {
	job := mock.Job()
	batch := &stream.Batch{Index: 7, Events: []structs.Event{
		{Topic: structs.TopicJob, Type: structs.TypeJobRegistered, Key: job.ID, Namespace: job.Namespace, Index: 7,
			Payload: &structs.JobEvent{Job: job}},
		{Topic: structs.TopicNode, Type: structs.TypeNodeRegistration, Key: "n", Index: 7,
			Payload: &structs.NodeStreamEvent{Node: mock.Node()}},
	}}
	var line bytes.Buffer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		line.Reset()
		if err := appendEventsLine(&line, batch); err != nil {
			b.Fatal(err)
		}
	}
}
