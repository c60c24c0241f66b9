package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigReadsEnvironment(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want Config
	}{
		{
			name: "nothing set",
			env:  map[string]string{},
			want: Config{Address: "http://127.0.0.1:4646"},
		},
		{
			name: "everything set",
			env: map[string]string{
				"NOMAD_ADDR":      "https://nomad.example:4646",
				"NOMAD_TOKEN":     "s3cret",
				"NOMAD_REGION":    "eu",
				"NOMAD_NAMESPACE": "prod",
			},
			want: Config{Address: "https://nomad.example:4646", SecretID: "s3cret", Region: "eu", Namespace: "prod"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"NOMAD_ADDR", "NOMAD_TOKEN", "NOMAD_REGION", "NOMAD_NAMESPACE"} {
				t.Setenv(k, tc.env[k])
			}
			got := DefaultConfig()
			if got.Address != tc.want.Address || got.SecretID != tc.want.SecretID ||
				got.Region != tc.want.Region || got.Namespace != tc.want.Namespace {
				t.Fatalf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestNewClientAddress(t *testing.T) {
	cases := []struct {
		addr    string
		wantErr string
		wantURL string
	}{
		{addr: "http://127.0.0.1:4646", wantURL: "http://127.0.0.1:4646/v1/jobs"},
		{addr: "127.0.0.1:4646", wantURL: "http://127.0.0.1:4646/v1/jobs"},
		{addr: "https://lb.example/nomad/", wantURL: "https://lb.example/nomad/v1/jobs"},
		{addr: "unix:///tmp/nomad.sock", wantErr: "scheme must be http or https"},
		{addr: "http://", wantErr: "missing host"},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			c, err := NewClient(&Config{Address: tc.addr})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.url(c.newRequest("GET", "/v1/jobs")); got != tc.wantURL {
				t.Fatalf("url = %q, want %q", got, tc.wantURL)
			}
		})
	}
}

func TestClientSendsConfiguredTokenRegionNamespace(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: "[]"})
	c, err := NewClient(&Config{
		Address:   agent.URL,
		SecretID:  "tok-1",
		Region:    "eu",
		Namespace: "prod",
		Headers:   http.Header{"X-Custom": []string{"yes"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().List(nil); err != nil {
		t.Fatal(err)
	}
	req := agent.only(t)
	if got := req.Header.Get("X-Nomad-Token"); got != "tok-1" {
		t.Errorf("token header = %q", got)
	}
	if got := req.Header.Get("X-Custom"); got != "yes" {
		t.Errorf("custom header = %q", got)
	}
	if req.Query.Get("region") != "eu" || req.Query.Get("namespace") != "prod" {
		t.Errorf("query = %v", req.Query)
	}
}

func TestQueryOptionsOverrideConfigAndEncode(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: "[]"})
	c, _ := NewClient(&Config{Address: agent.URL, SecretID: "config-token", Region: "eu", Namespace: "prod"})
	q := &QueryOptions{
		Region:     "us",
		Namespace:  "*",
		AllowStale: true,
		WaitIndex:  42,
		WaitTime:   1500 * time.Millisecond,
		Prefix:     "we",
		Filter:     `Status == "running"`,
		PerPage:    10,
		NextToken:  "abc",
		Reverse:    true,
		Params:     map[string]string{"meta": "true"},
		Headers:    map[string]string{"X-Trace": "1"},
		AuthToken:  "request-token",
	}
	if _, _, err := c.Jobs().List(q); err != nil {
		t.Fatal(err)
	}
	req := agent.only(t)
	want := map[string]string{
		"region": "us", "namespace": "*", "stale": "", "index": "42", "wait": "1500ms",
		"prefix": "we", "filter": `Status == "running"`, "per_page": "10", "next_token": "abc",
		"reverse": "true", "meta": "true",
	}
	for k, v := range want {
		if got, ok := req.Query[k]; !ok || got[0] != v {
			t.Errorf("query %s = %v, want %q", k, got, v)
		}
	}
	if len(req.Query) != len(want) {
		t.Errorf("query has extra parameters: %v", req.Query)
	}
	if req.Header.Get("X-Nomad-Token") != "request-token" || req.Header.Get("X-Trace") != "1" {
		t.Errorf("headers = %v", req.Header)
	}
}

func TestConfigWaitTimeAppliesToBlockingQueriesOnly(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: "[]"})
	c, _ := NewClient(&Config{Address: agent.URL, WaitTime: 2 * time.Second})
	c.Jobs().List(&QueryOptions{WaitIndex: 7})
	c.Jobs().List(nil)
	reqs := agent.all()
	if got := reqs[0].Query.Get("wait"); got != "2000ms" {
		t.Errorf("blocking query wait = %q, want 2000ms", got)
	}
	if _, ok := reqs[1].Query["wait"]; ok {
		t.Errorf("non-blocking query got a wait parameter")
	}
}

func TestQueryMetaFromHeaders(t *testing.T) {
	agent := newFakeAgent(t, reply{
		Header: map[string]string{
			"X-Nomad-Index":       "1234",
			"X-Nomad-KnownLeader": "true",
			"X-Nomad-LastContact": "25",
			"X-Nomad-NextToken":   "next",
		},
		Body: "[]",
	})
	_, qm, err := agent.client(t).Jobs().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if qm.LastIndex != 1234 || !qm.KnownLeader || qm.LastContact != 25*time.Millisecond || qm.NextToken != "next" {
		t.Fatalf("query meta = %+v", qm)
	}
}

func TestMalformedIndexHeaderIsAnError(t *testing.T) {
	agent := newFakeAgent(t, reply{Header: map[string]string{"X-Nomad-Index": "many"}, Body: "[]"})
	_, _, err := agent.client(t).Jobs().List(nil)
	if err == nil || !strings.Contains(err.Error(), "X-Nomad-Index") {
		t.Fatalf("err = %v", err)
	}
}

func TestWriteMetaFromHeaders(t *testing.T) {
	agent := newFakeAgent(t, reply{Header: map[string]string{"X-Nomad-Index": "77"}, Body: `{"EvalID":"e1"}`})
	_, wm, err := agent.client(t).Jobs().Register(&Job{ID: new("web")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wm.LastIndex != 77 {
		t.Fatalf("write meta = %+v", wm)
	}
}

func TestHTTPErrorsCarryStatusAndServerText(t *testing.T) {
	cases := []struct {
		status  int
		body    string
		wantMsg string
	}{
		{404, "job not found\n", "Unexpected response code: 404 (job not found)"},
		{400, "1 error occurred:\n\t* group \"web\": count must be >= 0\n", "count must be >= 0"},
		{403, "Permission denied", "Unexpected response code: 403 (Permission denied)"},
		{500, "", "Unexpected response code: 500 (Internal Server Error)"},
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			agent := newFakeAgent(t, reply{Status: tc.status, Body: tc.body})
			_, _, err := agent.client(t).Jobs().Info("web", nil)
			var ure *UnexpectedResponseError
			if !errors.As(err, &ure) {
				t.Fatalf("err = %T %v, want *UnexpectedResponseError", err, err)
			}
			if ure.StatusCode != tc.status || ure.Method != "GET" || !strings.HasSuffix(ure.URL, "/v1/job/web") {
				t.Fatalf("error = %+v", ure)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("message %q does not contain %q", err.Error(), tc.wantMsg)
			}
			if code, ok := StatusCodeOf(err); !ok || code != tc.status {
				t.Fatalf("StatusCodeOf = %d, %v", code, ok)
			}
			if IsNotFound(err) != (tc.status == 404) {
				t.Fatalf("IsNotFound = %v", IsNotFound(err))
			}
		})
	}
}

func TestUndecodableResponseIsAnError(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: "<html>proxy error</html>"})
	_, _, err := agent.client(t).Jobs().Info("web", nil)
	if err == nil || !strings.Contains(err.Error(), "decoding response") {
		t.Fatalf("err = %v", err)
	}
}

func TestContextCancelsBlockingQuery(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := NewClient(&Config{Address: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Jobs().List((&QueryOptions{WaitIndex: 5}).WithContext(ctx))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocking query did not return after cancel")
	}
}

func TestJobIDIsEscapedAsOnePathSegment(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: "{}"})
	if _, _, err := agent.client(t).Jobs().Info("batch/dispatch-1714557600-0a1b2c3d", nil); err != nil {
		t.Fatal(err)
	}
	if got := agent.only(t).Path; got != "/v1/job/batch%2Fdispatch-1714557600-0a1b2c3d" {
		t.Fatalf("path = %q", got)
	}
}

func TestClientSideArgumentErrorsSendNothing(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: "{}"})
	c := agent.client(t)
	if _, _, err := c.Jobs().Plan(nil, false, nil); err == nil {
		t.Error("Plan(nil) succeeded")
	}
	if _, _, err := c.Jobs().Plan(&Job{}, false, nil); err == nil || !strings.Contains(err.Error(), "missing ID") {
		t.Errorf("Plan without ID: %v", err)
	}
	if _, _, err := c.Jobs().Register(nil, nil); err == nil {
		t.Error("Register(nil) succeeded")
	}
	if _, _, err := c.Jobs().Dispatch(&JobDispatchRequest{}, nil); err == nil {
		t.Error("Dispatch without a job ID succeeded")
	}
	if n := len(agent.all()); n != 0 {
		t.Fatalf("%d requests were sent", n)
	}
}

func TestAgentHealthErrorWithoutJSONBody(t *testing.T) {
	agent := newFakeAgent(t, reply{Status: 500, Body: "No cluster leader"})
	_, err := agent.client(t).Agent().Health()
	if code, _ := StatusCodeOf(err); code != 500 {
		t.Fatalf("err = %v", err)
	}
}
