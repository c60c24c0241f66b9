package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// Topic is a class of state changes on the event stream.
type Topic string

// Event stream topics.
const (
	TopicDeployment Topic = "Deployment"
	TopicEvaluation Topic = "Evaluation"
	TopicAllocation Topic = "Allocation"
	TopicJob        Topic = "Job"
	TopicNode       Topic = "Node"
	TopicNodePool   Topic = "NodePool"
	TopicService    Topic = "Service"
	TopicAll        Topic = "*"
)

// Events is one line of the event stream: the events of one Raft index.
// A line with no index and no events is a heartbeat.
type Events struct {
	Index  uint64
	Events []Event
	// Err is set (and nothing else) when the stream failed; it is the last
	// value delivered on a Stream channel.
	Err error `json:"-"`
}

// IsHeartbeat reports whether the line was a keep-alive.
func (e *Events) IsHeartbeat() bool { return e.Index == 0 && len(e.Events) == 0 }

// Event is one state change. Payload holds one object keyed by its kind,
// e.g. {"Job": {...}}; use the typed accessors to decode it.
type Event struct {
	Topic      Topic
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    map[string]json.RawMessage
}

// Job decodes a Job topic payload.
func (e *Event) Job() (*Job, error) {
	var out Job
	return &out, e.decodePayload("Job", &out)
}

// Evaluation decodes an Evaluation topic payload.
func (e *Event) Evaluation() (*Evaluation, error) {
	var out Evaluation
	return &out, e.decodePayload("Evaluation", &out)
}

// Allocation decodes an Allocation topic payload.
func (e *Event) Allocation() (*Allocation, error) {
	var out Allocation
	return &out, e.decodePayload("Allocation", &out)
}

// Node decodes a Node topic payload.
func (e *Event) Node() (*Node, error) {
	var out Node
	return &out, e.decodePayload("Node", &out)
}

// NodePool decodes a NodePool topic payload.
func (e *Event) NodePool() (*NodePool, error) {
	var out NodePool
	return &out, e.decodePayload("NodePool", &out)
}

// Service decodes a Service topic payload.
func (e *Event) Service() (*ServiceRegistration, error) {
	var out ServiceRegistration
	return &out, e.decodePayload("Service", &out)
}

func (e *Event) decodePayload(kind string, out any) error {
	raw, ok := e.Payload[kind]
	if !ok {
		return fmt.Errorf("event %s/%s has no %s payload", e.Topic, e.Type, kind)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding %s payload of event %s/%s: %w", kind, e.Topic, e.Type, err)
	}
	return nil
}

// EventReader reads the newline-delimited JSON of an open event stream,
// skipping heartbeats. It is not safe for concurrent use.
type EventReader struct {
	body io.ReadCloser
	dec  *json.Decoder
}

// NewEventReader reads events from r (closed by Close).
func NewEventReader(r io.ReadCloser) *EventReader {
	return &EventReader{body: r, dec: json.NewDecoder(r)}
}

// Next blocks until the next non-heartbeat line and returns it. It returns
// io.EOF when the server ends the stream.
func (r *EventReader) Next() (*Events, error) {
	for {
		var ev Events
		if err := r.dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading event stream: %w", err)
		}
		if !ev.IsHeartbeat() {
			return &ev, nil
		}
	}
}

// Close ends the stream.
func (r *EventReader) Close() error { return r.body.Close() }

// EventStream is the /v1/event/stream endpoint.
type EventStream struct {
	client *Client
}

// EventStream returns the event stream endpoint.
func (c *Client) EventStream() *EventStream { return &EventStream{client: c} }

// Open subscribes to topics (each with a list of keys; no keys means all
// keys) starting after index, and returns a reader. Cancelling ctx ends
// the stream.
func (s *EventStream) Open(ctx context.Context, topics map[Topic][]string, index uint64, q *QueryOptions) (*EventReader, error) {
	q = q.WithContext(ctx)
	params := make(map[string]string, len(q.Params)+1)
	for k, v := range q.Params {
		params[k] = v
	}
	params["index"] = strconv.FormatUint(index, 10)
	q.Params = params

	r := s.client.newRequest("GET", "/v1/event/stream")
	q.apply(r)
	for _, t := range topicParams(topics) {
		r.params.Add("topic", t)
	}
	resp, _, err := s.client.do(r)
	if err != nil {
		return nil, err
	}
	return NewEventReader(resp.Body), nil
}

// Stream subscribes like Open and delivers events on a channel, which is
// closed when the stream ends; a failure is delivered as a final Events
// with Err set. Cancelling ctx ends the stream.
func (s *EventStream) Stream(ctx context.Context, topics map[Topic][]string, index uint64, q *QueryOptions) (<-chan *Events, error) {
	reader, err := s.Open(ctx, topics, index, q)
	if err != nil {
		return nil, err
	}
	ch := make(chan *Events, 10)
	go func() {
		defer close(ch)
		defer reader.Close()
		for {
			ev, err := reader.Next()
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, io.EOF) {
					return
				}
				ev = &Events{Err: err}
			}
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Err != nil {
				return
			}
		}
	}()
	return ch, nil
}

// topicParams renders topics as "Topic:key" values in a stable order.
func topicParams(topics map[Topic][]string) []string {
	var out []string
	for topic, keys := range topics {
		if len(keys) == 0 {
			out = append(out, string(topic))
			continue
		}
		for _, k := range keys {
			out = append(out, string(topic)+":"+k)
		}
	}
	sort.Strings(out)
	return out
}
