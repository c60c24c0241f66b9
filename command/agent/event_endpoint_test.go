package agent

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// openStream starts an event stream request and returns a line reader;
// the request ends with the test.
func openStream(t *testing.T, h *testHTTP, query string) *bufio.Scanner {
	t.Helper()
	return openStreamURL(t, h.srv.URL+"/v1/event/stream"+query)
}

func openStreamURL(t *testing.T, url string) *bufio.Scanner {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "application/json", resp.Header.Get("Content-Type"))
	return bufio.NewScanner(resp.Body)
}

// nextLine reads one line, failing the test after a generous bound so a
// broken stream cannot hang the suite.
func nextLine(t *testing.T, sc *bufio.Scanner) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		if sc.Scan() {
			got <- sc.Text()
			return
		}
		got <- "<closed: " + errString(sc.Err()) + ">"
	}()
	select {
	case line := <-got:
		return line
	case <-time.After(10 * time.Second):
		t.Fatal("no line on the event stream")
		return ""
	}
}

func errString(err error) string {
	if err == nil {
		return "EOF"
	}
	return err.Error()
}

func decodeLine(t *testing.T, line string) api.Events {
	t.Helper()
	var ev api.Events
	must.NoError(t, json.Unmarshal([]byte(line), &ev), must.Sprint(line))
	return ev
}

func TestEventStream_TopicsAndFraming(t *testing.T) {
	h := newTestHTTP(t)
	sc := openStream(t, h, "?topic=Job:web&topic=Node")

	// A job that is not asked for, then one that is, then a node.
	must.NoError(t, h.rpc.state.UpsertJob(10, mock.Job(mock.JobID("db"))))
	must.NoError(t, h.rpc.state.UpsertJob(11, mock.Job(mock.JobID("web"))))
	node := mock.Node()
	must.NoError(t, h.rpc.state.UpsertNode(12, node))

	ev := decodeLine(t, nextLine(t, sc))
	must.Eq(t, 11, ev.Index)
	must.Len(t, 1, ev.Events)
	must.Eq(t, api.TopicJob, ev.Events[0].Topic)
	must.Eq(t, "JobRegistered", ev.Events[0].Type)
	must.Eq(t, "web", ev.Events[0].Key)
	job, err := ev.Events[0].Job()
	must.NoError(t, err)
	must.Eq(t, "web", *job.ID)

	line := nextLine(t, sc)
	ev = decodeLine(t, line)
	must.Eq(t, 12, ev.Index)
	must.Eq(t, api.TopicNode, ev.Events[0].Topic)
	// Node payloads carry the legacy Drain flag and never the secret.
	must.StrNotContains(t, line, node.SecretID)
	must.StrContains(t, line, `"Drain":false`)
	n, err := ev.Events[0].Node()
	must.NoError(t, err)
	must.Eq(t, node.ID, n.ID)
}

func TestEventStream_IndexReplayAndNamespace(t *testing.T) {
	h := newTestHTTP(t)
	must.NoError(t, h.rpc.state.UpsertJob(10, mock.Job(mock.JobID("a"))))
	must.NoError(t, h.rpc.state.UpsertJob(11, mock.Job(mock.JobID("b"))))
	prod := mock.Job(mock.JobID("c"))
	prod.Namespace = "prod"
	must.NoError(t, h.rpc.state.UpsertJob(12, prod))

	// Replay from index 11 in the default namespace: b only, c is prod.
	sc := openStream(t, h, "?index=11")
	ev := decodeLine(t, nextLine(t, sc))
	must.Eq(t, 11, ev.Index)
	must.Eq(t, "b", ev.Events[0].Key)

	// All namespaces: everything buffered.
	sc = openStream(t, h, "?namespace=*&topic=Job")
	var keys []string
	for i := 0; i < 3; i++ {
		keys = append(keys, decodeLine(t, nextLine(t, sc)).Events[0].Key)
	}
	must.Eq(t, []string{"a", "b", "c"}, keys)
}

func TestEventStream_Heartbeat(t *testing.T) {
	h := newTestHTTP(t, func(c *HTTPServerConfig) { c.EventHeartbeat = 20 * time.Millisecond })
	sc := openStream(t, h, "")
	must.Eq(t, "{}", nextLine(t, sc))
	must.Eq(t, "{}", nextLine(t, sc))
	must.NoError(t, h.rpc.state.UpsertJob(3, mock.Job()))
	// Heartbeats may come before the event; the event does come.
	for {
		line := nextLine(t, sc)
		if line != "{}" {
			must.Eq(t, 3, decodeLine(t, line).Index)
			break
		}
	}
}

func TestEventStream_ApiClient(t *testing.T) {
	h := newTestHTTP(t)
	client, err := api.NewClient(&api.Config{Address: h.srv.URL})
	must.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := client.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicEvaluation: nil}, 0, nil)
	must.NoError(t, err)
	job := mock.Job()
	eval := mock.Eval(mock.EvalForJob(job))
	must.NoError(t, h.rpc.state.UpsertEvals(4, []*structs.Evaluation{eval}))
	select {
	case ev := <-ch:
		must.NoError(t, ev.Err)
		must.Eq(t, 4, ev.Index)
		got, err := ev.Events[0].Evaluation()
		must.NoError(t, err)
		must.Eq(t, eval.ID, got.ID)
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
}

func TestEventStream_Errors(t *testing.T) {
	h := newTestHTTP(t)
	cases := []struct {
		query string
		code  int
		body  string
	}{
		{"?topic=ACLToken", 400, `unsupported event topic "ACLToken" (supported: *, Allocation, Deployment, Evaluation, Job, Node, NodePool, Service)`},
		{"?topic=Job:", 400, `Invalid topic "Job:" (use Topic or Topic:key)`},
		{"?topic=:x", 400, `Invalid topic ":x" (use Topic or Topic:key)`},
		{"?topic=Evaluation:::*", 400, "Invalid key value pair for topic: Evaluation:::*"},
	}
	for _, tc := range cases {
		resp, body := h.do("GET", "/v1/event/stream"+tc.query, "")
		must.Eq(t, tc.code, resp.StatusCode)
		must.Eq(t, tc.body, body)
	}

	// The stream ends when the broker closes (server shutdown).
	sc := openStream(t, h, "")
	h.rpc.broker.Close()
	must.Eq(t, "<closed: EOF>", nextLine(t, sc))

	// Client-only agents do not serve it.
	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.Server = nil })
	resp, _ := h.do("GET", "/v1/event/stream", "")
	must.Eq(t, http.StatusNotImplemented, resp.StatusCode)
}

func TestEventStream_Gzip(t *testing.T) {
	h := newTestHTTP(t)
	// Go's client asks for gzip and decompresses transparently; lines must
	// still arrive one by one, not when the compressor's buffer fills.
	req, _ := http.NewRequest("GET", h.srv.URL+"/v1/event/stream", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	must.NoError(t, err)
	defer resp.Body.Close()
	must.True(t, resp.Uncompressed)
	sc := bufio.NewScanner(resp.Body)
	must.NoError(t, h.rpc.state.UpsertJob(3, mock.Job()))
	must.Eq(t, 3, decodeLine(t, nextLine(t, sc)).Index)
}

// TestEventStream_GzipHeaderUpFront: a client that opens a gzip reader as
// soon as the response arrives (Nomad's Go client does) must not wait for
// the first event or heartbeat to get the gzip header.
func TestEventStream_GzipHeaderUpFront(t *testing.T) {
	h := newTestHTTP(t)
	req, _ := http.NewRequest("GET", h.srv.URL+"/v1/event/stream", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultTransport.RoundTrip(req.WithContext(ctx))
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, "gzip", resp.Header.Get("Content-Encoding"))
	opened := make(chan error, 1)
	var zr *gzip.Reader
	go func() {
		var err error
		zr, err = gzip.NewReader(resp.Body)
		opened <- err
	}()
	select {
	case err := <-opened:
		must.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the gzip header did not arrive before any event")
	}
	must.NoError(t, h.rpc.state.UpsertJob(3, mock.Job()))
	must.Eq(t, 3, decodeLine(t, nextLine(t, bufio.NewScanner(zr))).Index)
}

// eventsLine is a stream line as encoding/json renders it: the form the
// tests decode lines into, and the reference the agent's own rendering
// must match byte for byte.
type eventsLine struct {
	Index  uint64
	Events []eventJSON
}

// The line the agent assembles from shared per-event encodings is
// exactly what encoding/json makes of the whole line, for every payload
// the stream carries, including HTML characters json would escape by
// default, node payloads in the API's shape and score metadata with its
// own MarshalJSON.
func TestEventStream_LineIsEncodingJSONs(t *testing.T) {
	job := mock.Job()
	job.Meta = map[string]string{"html": "<b>&</b>"}
	alloc := mock.Alloc()
	alloc.Job = nil
	alloc.Metrics = &structs.AllocMetric{ScoreMetaData: []*structs.NodeScoreMeta{{
		NodeID: "n1", Scores: structs.NamedScores{{Name: "binpack", Score: 0.5}}, NormScore: 0.5}}}
	events := []structs.Event{
		{Topic: structs.TopicJob, Type: structs.TypeJobRegistered, Key: job.ID, Namespace: job.Namespace, Index: 9,
			FilterKeys: []string{"<x>"}, Payload: &structs.JobEvent{Job: job}},
		{Topic: structs.TopicAllocation, Type: structs.TypeAllocationUpdated, Key: alloc.ID, Namespace: alloc.Namespace,
			Index: 9, Payload: &structs.AllocationEvent{Allocation: alloc}},
		{Topic: structs.TopicNode, Type: structs.TypeNodeRegistration, Key: "n", Index: 9,
			Payload: &structs.NodeStreamEvent{Node: mock.Node()}},
	}
	cases := []struct {
		name   string
		events []structs.Event
	}{
		{"one event", events[:1]},
		{"every payload", events},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			line := eventsLine{Index: 9}
			for i := range tc.events {
				line.Events = append(line.Events, eventJSONOf(&tc.events[i]))
			}
			must.NoError(t, enc.Encode(line))

			// One subscriber: encoded straight into the line.
			var got bytes.Buffer
			must.NoError(t, appendEventsLine(&got, &stream.Batch{Index: 9, Events: tc.events}))
			must.Eq(t, want.String(), got.String())

			// Two subscribers of a broker: the encodings are shared.
			broker := stream.NewEventBroker(stream.Config{})
			defer broker.Close()
			var subs []*stream.Subscription
			for range 2 {
				sub, err := broker.Subscribe(&stream.SubscribeRequest{Namespace: "*"})
				must.NoError(t, err)
				defer sub.Unsubscribe()
				subs = append(subs, sub)
			}
			broker.Publish(&structs.Events{Index: 9, Events: tc.events})
			for _, sub := range subs {
				b, err := sub.NextBatch(context.Background())
				must.NoError(t, err)
				must.True(t, b.Shared())
				got.Reset()
				must.NoError(t, appendEventsLine(&got, b))
				must.Eq(t, want.String(), got.String())
			}
		})
	}
}

// TestEventStream_AllocPayloadLeavesJobOut: an alloc event holds the
// stored alloc, job included; it is served byte for byte as the alloc
// without its job, and the stored alloc keeps its job.
func TestEventStream_AllocPayloadLeavesJobOut(t *testing.T) {
	node, job := mock.Node(), mock.Job()
	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	alloc.Job = job
	event := func(a *structs.Allocation) *stream.Batch {
		return &stream.Batch{Index: 5, Events: []structs.Event{{
			Topic: structs.TopicAllocation, Type: structs.TypeAllocationUpdated, Key: a.ID,
			Namespace: a.Namespace, FilterKeys: []string{job.ID}, Index: 5,
			Payload: &structs.AllocationEvent{Allocation: a},
		}}}
	}
	withoutJob := *alloc
	withoutJob.Job = nil
	var got, want bytes.Buffer
	must.NoError(t, appendEventsLine(&got, event(alloc)))
	must.NoError(t, appendEventsLine(&want, event(&withoutJob)))
	must.Eq(t, want.String(), got.String())
	must.StrContains(t, got.String(), `"Job":null`)
	must.True(t, alloc.Job == job)
}
