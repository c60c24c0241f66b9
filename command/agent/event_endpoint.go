package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/structs"
)

// eventStream serves GET /v1/event/stream: newline-delimited JSON, one
// line per Raft index ({"Index":n,"Events":[...]}), and "{}" whenever
// nothing was sent for a heartbeat interval. Query parameters: topic
// (repeatable, "Topic" or "Topic:key"; none means every topic), index
// (replay buffered events from it), namespace ("*" for all).
//
// The stream ends when the client goes away, the agent shuts down, or
// the subscriber falls so far behind that events were lost; the client
// then resubscribes from the last index it saw.
func (s *HTTPServer) eventStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, errInvalidMethod.Msg)
		return
	}
	req, err := parseEventRequest(r)
	if err == nil {
		err = s.localRegion(r)
	}
	if err != nil {
		code, msg := errorStatus(err)
		writeError(w, code, msg)
		return
	}
	if s.cfg.Server == nil {
		writeError(w, http.StatusNotImplemented, "the event stream is served by server agents only")
		return
	}
	a := requestACL(r)
	if !a.IsManagement() {
		// Only the topics the token may read; the need let through a
		// request with at least one.
		req.Topics = readableTopics(a, req)
	}
	sub, err := s.cfg.Server.Subscribe(req)
	if err != nil {
		var coded *CodedError
		switch {
		case errors.As(err, &coded):
			writeError(w, coded.Code, coded.Msg)
		case errors.Is(err, stream.ErrSubscriptionClosed):
			writeError(w, http.StatusServiceUnavailable, err.Error())
		default:
			// The broker refuses only requests it cannot serve.
			writeError(w, http.StatusBadRequest, err.Error())
		}
		return
	}
	defer sub.Unsubscribe()

	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc.Flush()
	var line bytes.Buffer
	secret := authToken(r)
	for {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.EventHeartbeat)
		batch, err := sub.NextBatch(ctx)
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			// The token is resolved again (cheaply: cached until the
			// ACL tables change): a deleted token, or one that may no
			// longer read any topic asked for, ends the stream; the
			// client resubscribes and is refused.
			now, aclErr := s.resolveACL(secret)
			if aclErr != nil || (!now.IsManagement() && len(readableTopics(now, req)) == 0) {
				s.logger.Debug("event stream ended: the token's access changed")
				return
			}
			a = now
		}
		switch {
		case err == nil:
			if batch = readableEvents(a, batch); batch == nil {
				continue
			}
			line.Reset()
			if err = appendEventsLine(&line, batch); err == nil {
				_, err = w.Write(line.Bytes())
			}
		case r.Context().Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			_, err = w.Write([]byte("{}\n"))
		default:
			s.logger.Debug("event stream ended", "error", err)
			return
		}
		if err != nil {
			s.logger.Debug("event stream write failed", "error", err)
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// eventStreamNeed: the token must be allowed to read at least one of the
// topics asked for (topicReadable); the stream then carries only those
// topics, and of them only events of namespaces the token may read.
var eventStreamNeed = need{
	Doc: "per topic: Job, Allocation, Evaluation, Deployment, Service: read-job in the event's namespace; Node: node read; " +
		"NodePool, ACL topics, \"*\" and no topic: management. Events the token may not read are left out; " +
		"a token that may read none of the topics asked for is refused",
	check: func(_ *HTTPServer, a *acl.ACL, r *http.Request) error {
		req, err := parseEventRequest(r)
		if err != nil {
			return nil // the handler answers 400
		}
		if !a.IsManagement() && len(readableTopics(a, req)) == 0 {
			return errPermissionDenied
		}
		return nil
	},
}

// topicReadable reports whether a may read events of topic in namespace
// ns ("*": some namespace).
func topicReadable(a *acl.ACL, topic structs.Topic, ns string) bool {
	switch topic {
	case structs.TopicJob, structs.TopicAllocation, structs.TopicEvaluation, structs.TopicDeployment, structs.TopicService:
		if ns == "" {
			ns = structs.DefaultNamespace
		}
		return a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob)
	case structs.TopicNode:
		return a.AllowNodeRead()
	}
	// "*", NodePool, the ACL topics and anything else.
	return a.IsManagement()
}

// readableTopics is the topics of req that a may read; no topic at all
// asks for every topic ("*").
func readableTopics(a *acl.ACL, req *stream.SubscribeRequest) map[structs.Topic][]string {
	topics := req.Topics
	if len(topics) == 0 {
		topics = map[structs.Topic][]string{structs.TopicAll: {stream.Wildcard}}
	}
	out := map[structs.Topic][]string{}
	for t, keys := range topics {
		if topicReadable(a, t, req.Namespace) {
			out[t] = keys
		}
	}
	return out
}

// readableEvents is the events of b that a may read, nil when none.
func readableEvents(a *acl.ACL, b *stream.Batch) *stream.Batch {
	if a.IsManagement() {
		return b
	}
	return b.Keep(func(e *structs.Event) bool { return topicReadable(a, e.Topic, e.Namespace) })
}

// parseEventRequest reads topic, index and namespace.
func parseEventRequest(r *http.Request) (*stream.SubscribeRequest, error) {
	q := r.URL.Query()
	req := &stream.SubscribeRequest{Namespace: namespace(r), Topics: map[structs.Topic][]string{}}
	if idx := q.Get("index"); idx != "" {
		n, err := strconv.ParseUint(idx, 10, 64)
		if err != nil {
			return nil, codedError(http.StatusBadRequest, "Invalid index")
		}
		req.Index = n
	}
	for _, t := range q["topic"] {
		topic, key, hasKey := strings.Cut(t, ":")
		if strings.Contains(key, ":") {
			return nil, codedError(http.StatusBadRequest, fmt.Sprintf("Invalid key value pair for topic: %s", t))
		}
		if topic == "" || (hasKey && key == "") {
			return nil, codedError(http.StatusBadRequest, fmt.Sprintf("Invalid topic %q (use Topic or Topic:key)", t))
		}
		if !hasKey {
			key = stream.Wildcard
		}
		req.Topics[structs.Topic(topic)] = append(req.Topics[structs.Topic(topic)], key)
	}
	return req, nil
}

// eventJSON is an event as served: node payloads lose their secret and
// gain the legacy Drain flag, as everywhere else in the API.
type eventJSON struct {
	Topic      structs.Topic
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    interface{}
}

type nodeEventJSON struct {
	Node *nodeJSON
}

// appendEventsLine appends b as one line of the stream:
// {"Index":n,"Events":[...]} and a newline, what encoding/json makes of
// the whole line. When several subscribers receive the batch, each
// event's JSON is made once and shared (stream.Batch.Encoded);
// otherwise it is encoded straight into buf.
func appendEventsLine(buf *bytes.Buffer, b *stream.Batch) error {
	buf.WriteString(`{"Index":`)
	buf.Write(strconv.AppendUint(buf.AvailableBuffer(), b.Index, 10))
	buf.WriteString(`,"Events":[`)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	for i := range b.Events {
		if i > 0 {
			buf.WriteByte(',')
		}
		var err error
		if b.Shared() {
			var data []byte
			if data, err = b.Encoded(i, encodeEvent); err == nil {
				buf.Write(data)
			}
		} else if err = enc.Encode(eventJSONOf(&b.Events[i])); err == nil {
			buf.Truncate(buf.Len() - 1) // the encoder's newline
		}
		if err != nil {
			return fmt.Errorf("event %d of index %d: %w", i, b.Index, err)
		}
	}
	buf.WriteString("]}\n")
	return nil
}

// eventScratch holds the buffers encodeEvent renders into before it
// copies the bytes out at their size.
var eventScratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// encodeEvent is an event's JSON within a line, for sharing. It depends
// on the event alone (never on the subscriber or its token), as a shared
// encoding must.
func encodeEvent(e *structs.Event) ([]byte, error) {
	scratch := eventScratch.Get().(*bytes.Buffer)
	defer eventScratch.Put(scratch)
	scratch.Reset()
	enc := json.NewEncoder(scratch)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(eventJSONOf(e)); err != nil {
		return nil, err
	}
	return bytes.Clone(scratch.Bytes()[:scratch.Len()-1]), nil
}

// eventJSONOf is the event as the stream renders it: node payloads in
// the API's node shape; alloc payloads without the job (the state
// store's event holds the stored alloc, job included, so as not to keep
// a copy of it in the buffer).
func eventJSONOf(e *structs.Event) eventJSON {
	payload := e.Payload
	switch p := payload.(type) {
	case *structs.NodeStreamEvent:
		payload = nodeEventJSON{Node: newNodeJSON(p.Node)}
	case *structs.AllocationEvent:
		if p.Allocation != nil && p.Allocation.Job != nil {
			a := *p.Allocation
			a.Job = nil
			payload = &structs.AllocationEvent{Allocation: &a}
		}
	}
	return eventJSON{
		Topic: e.Topic, Type: e.Type, Key: e.Key, Namespace: e.Namespace,
		FilterKeys: e.FilterKeys, Index: e.Index, Payload: payload,
	}
}
