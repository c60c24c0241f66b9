package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEventStreamRequestAndHeartbeats(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: fixture(t, "events.ndjson")})
	c := agent.client(t)
	topics := map[Topic][]string{TopicJob: {"web", "api"}, TopicNode: nil}
	reader, err := c.EventStream().Open(context.Background(), topics, 100, &QueryOptions{Namespace: "*"})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	first, err := reader.Next()
	if err != nil {
		t.Fatal(err)
	}
	second, err := reader.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("third Next = %v, want io.EOF (heartbeats are skipped)", err)
	}

	req := agent.only(t)
	if req.Path != "/v1/event/stream" || req.Query.Get("index") != "100" || req.Query.Get("namespace") != "*" {
		t.Fatalf("request = %s %v", req.Path, req.Query)
	}
	if got, want := req.Query["topic"], []string{"Job:api", "Job:web", "Node"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("topics = %v, want %v", got, want)
	}

	if first.Index != 119 || len(first.Events) != 2 {
		t.Fatalf("first = %+v", first)
	}
	job, err := first.Events[0].Job()
	if err != nil || *job.ID != "web" || *job.Version != 4 {
		t.Fatalf("job payload = %+v, %v", job, err)
	}
	eval, err := first.Events[1].Evaluation()
	if err != nil || eval.TriggeredBy != "job-register" || first.Events[1].FilterKeys[0] != "web" {
		t.Fatalf("eval payload = %+v, %v", eval, err)
	}
	alloc, err := second.Events[0].Allocation()
	if err != nil || alloc.ClientStatus != AllocClientStatusRunning {
		t.Fatalf("alloc payload = %+v, %v", alloc, err)
	}
	node, err := second.Events[1].Node()
	if err != nil || node.SchedulingEligibility != NodeSchedulingIneligible || second.Events[1].Type != "NodeDrain" {
		t.Fatalf("node payload = %+v, %v", node, err)
	}
	if _, err := second.Events[1].Job(); err == nil || !strings.Contains(err.Error(), "no Job payload") {
		t.Fatalf("wrong-kind accessor err = %v", err)
	}
}

func TestEventStreamChannelEndsWithErrorOnBadLine(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: "{}\n" + `{"Index":5,"Events":[{"Topic":"Job","Type":"JobRegistered","Index":5}]}` + "\nnot json\n"})
	ch, err := agent.client(t).EventStream().Stream(context.Background(), nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []*Events
	for ev := range ch {
		got = append(got, ev)
	}
	if len(got) != 2 || got[0].Index != 5 || got[1].Err == nil {
		t.Fatalf("events = %+v", got)
	}
}

func TestEventStreamCancelClosesChannel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
				io.WriteString(w, "{}\n")
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer srv.Close()
	c, _ := NewClient(&Config{Address: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := c.EventStream().Stream(ctx, map[Topic][]string{TopicAll: nil}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("got %+v after cancel, want closed channel", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("channel not closed after cancel")
	}
}

func TestEventStreamHTTPError(t *testing.T) {
	agent := newFakeAgent(t, reply{Status: 400, Body: "Invalid topic format"})
	_, err := agent.client(t).EventStream().Stream(context.Background(), map[Topic][]string{"Bogus": nil}, 0, nil)
	if code, _ := StatusCodeOf(err); code != 400 {
		t.Fatalf("err = %v", err)
	}
}
