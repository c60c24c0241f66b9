package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// recorded is one request the fake agent received.
type recorded struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// reply is what the fake agent answers.
type reply struct {
	Status int
	Header map[string]string
	Body   string
}

// fakeAgent is an httptest server that records every request and answers
// each with the configured reply.
type fakeAgent struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
	reply    reply
}

func newFakeAgent(t *testing.T, r reply) *fakeAgent {
	t.Helper()
	f := &fakeAgent{reply: r}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		f.mu.Lock()
		f.requests = append(f.requests, recorded{
			Method: req.Method,
			Path:   req.URL.EscapedPath(),
			Query:  req.URL.Query(),
			Header: req.Header.Clone(),
			Body:   body,
		})
		rep := f.reply
		f.mu.Unlock()
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		status := rep.Status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
	}))
	t.Cleanup(f.Close)
	return f
}

// client returns a client for the fake agent with no environment applied.
func (f *fakeAgent) client(t *testing.T) *Client {
	t.Helper()
	c, err := NewClient(&Config{Address: f.URL})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// only returns the single request received, failing otherwise.
func (f *fakeAgent) only(t *testing.T) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 1 {
		t.Fatalf("got %d requests, want 1", len(f.requests))
	}
	return f.requests[0]
}

// all returns every request received so far.
func (f *fakeAgent) all() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// fixture returns the text of testdata/name.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertJSONEqual compares two JSON documents structurally.
func assertJSONEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", gb, wb)
	}
}
