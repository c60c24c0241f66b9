package agent

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	batch := &structs.Events{Index: 7, Events: []structs.Event{
		{Topic: structs.TopicJob, Type: structs.TypeJobRegistered, Key: job.ID, Namespace: job.Namespace, Index: 7,
			Payload: &structs.JobEvent{Job: job}},
		{Topic: structs.TopicNode, Type: structs.TypeNodeRegistration, Key: "n", Index: 7,
			Payload: &structs.NodeStreamEvent{Node: mock.Node()}},
	}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := encodeJSON(eventsJSON(batch), false); err != nil {
			b.Fatal(err)
		}
	}
}
