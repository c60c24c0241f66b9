package agent

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// FuzzEventStreamQuery reads /v1/event/stream's query string (topics,
// index, namespace) as the handler does, narrows the topics to what each
// of a few tokens may read, subscribes to a broker holding one buffered
// batch with an event of every topic, and writes what the subscription
// delivers as the stream would. Nothing may panic; a bad query is a 400;
// a token is handed only events it may read.
func FuzzEventStreamQuery(f *testing.F) {
	f.Add("topic=Job:example&topic=Node&index=3")
	f.Add("topic=*&namespace=*")
	tokens := []*acl.ACL{acl.ManagementACL, fuzzACL(f, `namespace "default" { policy = "read" }`),
		fuzzACL(f, `node { policy = "read" }`), fuzzACL(f, `namespace "other" { policy = "read" }`)}
	node, job := mock.Node(), mock.Job()
	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	eval := mock.Eval(mock.EvalForJob(job))
	batch := &structs.Events{Index: 5, Events: []structs.Event{
		{Topic: structs.TopicJob, Type: structs.TypeJobRegistered, Key: job.ID, Namespace: job.Namespace, Index: 5, Payload: &structs.JobEvent{Job: job}},
		{Topic: structs.TopicEvaluation, Type: structs.TypeEvalUpdated, Key: eval.ID, Namespace: eval.Namespace, FilterKeys: []string{job.ID}, Index: 5, Payload: &structs.EvaluationEvent{Evaluation: eval}},
		{Topic: structs.TopicAllocation, Type: structs.TypeAllocationUpdated, Key: alloc.ID, Namespace: alloc.Namespace, FilterKeys: []string{job.ID}, Index: 5, Payload: &structs.AllocationEvent{Allocation: alloc}},
		{Topic: structs.TopicNode, Type: structs.TypeNodeRegistration, Key: node.ID, Index: 5, Payload: &structs.NodeStreamEvent{Node: node}},
		{Topic: structs.TopicNodePool, Type: structs.TypeNodePoolUpserted, Key: "default", Index: 5},
		{Topic: structs.TopicJob, Type: structs.TypeJobRegistered, Key: "other", Namespace: "other", Index: 5},
	}}
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest("GET", "/v1/event/stream", nil)
		r.URL.RawQuery = query
		for _, a := range tokens {
			req, err := parseEventRequest(r)
			if err != nil {
				mustBeClientError(t, err)
				return
			}
			if !a.IsManagement() {
				req.Topics = readableTopics(a, req)
				if len(req.Topics) == 0 {
					continue // the route's need refuses the token
				}
			}
			broker := stream.NewEventBroker(stream.Config{EventBufferSize: 4})
			broker.Publish(batch)
			sub, err := broker.Subscribe(req)
			if err != nil {
				continue // refused with a 400
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // what is buffered, without waiting for more
			got, err := sub.NextBatch(ctx)
			sub.Unsubscribe()
			broker.Close()
			if err != nil {
				continue
			}
			got = readableEvents(a, got)
			if got == nil {
				continue
			}
			for _, e := range got.Events {
				if !a.IsManagement() && !topicReadable(a, e.Topic, e.Namespace) {
					t.Fatalf("query %q: a token got a %s event of namespace %q it may not read", query, e.Topic, e.Namespace)
				}
			}
			if err := appendEventsLine(&bytes.Buffer{}, got); err != nil {
				t.Fatalf("writing events: %v", err)
			}
		}
	})
}

func fuzzACL(f *testing.F, rules string) *acl.ACL {
	p, err := acl.Parse(rules)
	if err != nil {
		f.Fatal(err)
	}
	a, err := acl.NewACL(false, []*acl.Policy{p})
	if err != nil {
		f.Fatal(err)
	}
	return a
}
