package api

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestBackoffDelay(t *testing.T) {
	cases := []struct {
		name   string
		after  time.Duration
		jitter float64
		want   time.Duration
	}{
		{"no jitter", 2 * time.Second, 0, 2 * time.Second},
		{"half jitter", 2 * time.Second, 0.5, 2500 * time.Millisecond},
		{"near full jitter", 2 * time.Second, 0.999, 2999 * time.Millisecond},
		{"retry now", 0, 0.7, 0},
		{"capped", 50 * time.Second, 0.9, time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, backoffDelay(tc.after, tc.jitter))
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{"3": 3 * time.Second, "0": 0, "7200": time.Minute} {
		got, ok := parseRetryAfter(http.Header{"Retry-After": {v}})
		must.True(t, ok)
		must.Eq(t, want, got)
	}
	for _, v := range []string{"", "-1", "soon", "Wed, 21 Oct 2015 07:28:00 GMT"} {
		_, ok := parseRetryAfter(http.Header{"Retry-After": {v}})
		must.False(t, ok, must.Sprint(v))
	}
}

// refusingAgent answers 429 (Retry-After: 0, so the test does not wait)
// to the first refusals requests, then 200; it counts every request.
func refusingAgent(t *testing.T, refusals int32) (*Client, *atomic.Int32) {
	t.Helper()
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= refusals {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte("too many evaluations waiting: 5 ready or blocked, limit 5; retry after 0s"))
			return
		}
		w.Write([]byte(`{"EvalID": "e1", "DispatchedJobID": "p/dispatch-1"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(&Config{Address: srv.URL})
	must.NoError(t, err)
	return c, &seen
}

func TestClient_RegisterBacksOffOn429(t *testing.T) {
	c, seen := refusingAgent(t, 2)
	resp, _, err := c.Jobs().Register(&Job{ID: new("web")}, nil)
	must.NoError(t, err)
	must.Eq(t, "e1", resp.EvalID)
	must.Eq(t, 3, seen.Load(), must.Sprint("two refusals, then the answer"))
}

func TestClient_GivesUpAfterBackoffRetries(t *testing.T) {
	c, seen := refusingAgent(t, 100)
	_, _, err := c.Jobs().Register(&Job{ID: new("web")}, nil)
	must.True(t, IsTooManyRequests(err))
	must.Eq(t, 1+DefaultBackoffRetries, seen.Load())
	wait, ok := RetryDelay(err)
	must.True(t, ok)
	must.Eq(t, 0, wait)
}

func TestClient_DoesNotRepeatDispatchOrWhenTold(t *testing.T) {
	c, seen := refusingAgent(t, 1)
	_, _, err := c.Jobs().Dispatch(&JobDispatchRequest{JobID: "p"}, nil)
	must.True(t, IsTooManyRequests(err), must.Sprint("a dispatch is never sent twice"))
	must.Eq(t, 1, seen.Load())

	c, seen = refusingAgent(t, 1)
	cfg := c.Config()
	cfg.BackoffRetries = -1
	c, err = NewClient(&cfg)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(&Job{ID: new("web")}, nil)
	must.True(t, IsTooManyRequests(err))
	must.Eq(t, 1, seen.Load())
}
