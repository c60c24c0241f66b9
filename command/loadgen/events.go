package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// streamBatch is one line of the event stream, decoded into the few
// fields the tracker reads; the rest of each payload is skipped.
type streamBatch struct {
	Index  uint64
	Events []struct {
		Topic   string
		Payload struct {
			Allocation *struct {
				ID           string
				JobID        string
				ClientStatus string
			}
			Evaluation *struct {
				ID     string
				JobID  string
				Status string
			}
		}
	}
}

// eventStream reads /v1/event/stream of one agent into the tracker.
type eventStream struct {
	address string
	client  *http.Client
	token   string
	tracker *tracker
	// reconnects counts streams that ended and were opened again.
	reconnects atomic.Int64
}

// streamURL is the stream of allocation and evaluation events after
// index.
func streamURL(address string, index uint64) (string, error) {
	if !strings.Contains(address, "://") {
		address = "http://" + address
	}
	u, err := url.Parse(address)
	if err != nil {
		return "", fmt.Errorf("event stream address %q: %w", address, err)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/v1/event/stream"
	q := url.Values{}
	q.Add("topic", "Allocation")
	q.Add("topic", "Evaluation")
	q.Set("index", strconv.FormatUint(index, 10))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// open subscribes from index and returns the response body once the
// agent accepted the subscription.
func (e *eventStream) open(ctx context.Context, index uint64) (io.ReadCloser, error) {
	u, err := streamURL(e.address, index)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if e.token != "" {
		req.Header.Set("X-Nomad-Token", e.token)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("opening the event stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("opening the event stream: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return resp.Body, nil
}

// run reads body, and streams reopened after it, until ctx ends. A
// stream the agent ends (a lagging subscriber is cut off) is reopened
// after the last index read; events it missed are lost for the
// latencies, which the result reports.
func (e *eventStream) run(ctx context.Context, body io.ReadCloser, index uint64) error {
	for {
		last, err := e.read(body)
		body.Close()
		if last > 0 {
			index = last + 1
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
		e.reconnects.Add(1)
		for {
			body, err = e.open(ctx, index)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// read decodes lines until the stream ends and returns the last index
// read.
func (e *eventStream) read(body io.Reader) (uint64, error) {
	dec := json.NewDecoder(body)
	var last uint64
	for {
		var b streamBatch
		if err := dec.Decode(&b); err != nil {
			return last, err
		}
		if b.Index == 0 {
			continue // heartbeat
		}
		last = b.Index
		now := time.Now()
		for _, ev := range b.Events {
			switch {
			case ev.Payload.Allocation != nil:
				a := ev.Payload.Allocation
				e.tracker.alloc(a.ID, a.JobID, a.ClientStatus, now)
			case ev.Payload.Evaluation != nil:
				ev := ev.Payload.Evaluation
				e.tracker.eval(ev.ID, ev.JobID, ev.Status)
			}
		}
	}
}
