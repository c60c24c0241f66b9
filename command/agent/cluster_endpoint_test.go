package agent

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad"
)

// A snapshot saved through the API restores the state it was taken at:
// a job registered after it is gone once it is restored.
func TestRealServer_SnapshotSaveRestore(t *testing.T) {
	ra := startDevAgent(t)
	resp, body := ra.do("PUT", "/v1/jobs", registerBody)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	resp, archive := ra.do("GET", "/v1/operator/snapshot", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(archive))
	must.Eq(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"))
	// Nomad's clients check the body against the Digest header.
	sum := sha256.Sum256([]byte(archive))
	must.Eq(t, "sha-256="+base64.StdEncoding.EncodeToString(sum[:]), resp.Header.Get("Digest"))

	resp, body = ra.do("DELETE", "/v1/job/web?purge=true", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, _ = ra.do("GET", "/v1/job/web", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)

	resp, body = ra.do("PUT", "/v1/operator/snapshot", archive)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("GET", "/v1/job/web", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	// A damaged archive is refused and changes nothing.
	resp, body = ra.do("PUT", "/v1/operator/snapshot", archive[:len(archive)/2])
	must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(body))
	must.StrContains(t, body, "corrupt")
	resp, _ = ra.do("GET", "/v1/job/web", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
}

func TestRealServer_ClusterEndpointErrors(t *testing.T) {
	ra := startDevAgent(t)
	cases := []struct {
		method, path string
		code         int
		body         string
	}{
		{"DELETE", "/v1/operator/raft/peer", http.StatusBadRequest, "missing peer id"},
		{"DELETE", "/v1/operator/raft/peer?address=127.0.0.1:4647", http.StatusBadRequest, "use ?id="},
		{"DELETE", "/v1/operator/raft/peer?id=nope", http.StatusBadRequest, `id "nope" was not found in the Raft configuration`},
		{"GET", "/v1/operator/raft/peer?id=x", http.StatusMethodNotAllowed, "Invalid method"},
		{"PUT", "/v1/agent/join", http.StatusBadRequest, "missing address"},
		{"GET", "/v1/agent/join?address=x", http.StatusMethodNotAllowed, "Invalid method"},
		{"PUT", "/v1/agent/force-leave", http.StatusBadRequest, "missing node"},
		// A dev agent is self-contained: it runs no gossip, so it cannot
		// do what these ask.
		{"PUT", "/v1/agent/force-leave?node=x", http.StatusBadRequest, "this server runs no gossip"},
		{"POST", "/v1/agent/force-leave?node=x", http.StatusBadRequest, "this server runs no gossip"},
		{"PUT", "/v1/agent/join?address=127.0.0.1", http.StatusBadRequest, "this server runs no gossip"},
		{"PUT", "/v1/agent/join?address=127.0.0.1:abc", http.StatusBadRequest, "port"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp, body := ra.do(tc.method, tc.path, "")
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.body)
		})
	}

}

// fakeCluster is a server agent's ClusterServer whose membership
// operations return what a test sets.
type fakeCluster struct {
	*testServer
	joined   int
	joinErr  error
	leaveErr error
	pruned   bool
}

func (f *fakeCluster) Join(addrs []string) (int, error) { return f.joined, f.joinErr }
func (f *fakeCluster) ForceLeave(node string, prune bool) error {
	f.pruned = prune
	return f.leaveErr
}
func (f *fakeCluster) SnapshotRestore(r io.Reader, token string) error { return nil }
func (f *fakeCluster) SnapshotSave(w io.Writer, token string, stale bool, onIndex func(uint64)) error {
	return nil
}

// TestClusterEndpoints_MembershipOutcomes: a join or force-leave this
// agent cannot do at all is the caller's mistake (400); a join that was
// tried and failed is reported in a 200's body, as Nomad does; any other
// failure of force-leave is the agent's (500).
func TestClusterEndpoints_MembershipOutcomes(t *testing.T) {
	noGossip := fmt.Errorf("server: %w", nomad.ErrNoGossip)
	cases := []struct {
		name     string
		cluster  fakeCluster
		path     string
		code     int
		contains string
	}{
		{"join without gossip", fakeCluster{joinErr: noGossip}, "/v1/agent/join?address=10.0.0.1", 400, "this server runs no gossip"},
		{"join that failed", fakeCluster{joinErr: errors.New("joining [10.0.0.1:4648]: connection refused")},
			"/v1/agent/join?address=10.0.0.1", 200, `"error":"joining [10.0.0.1:4648]: connection refused"`},
		{"join", fakeCluster{joined: 1}, "/v1/agent/join?address=10.0.0.1", 200, `"num_joined":1,"error":""`},
		{"force-leave without gossip", fakeCluster{leaveErr: noGossip}, "/v1/agent/force-leave?node=s2", 400, "this server runs no gossip"},
		{"force-leave that failed", fakeCluster{leaveErr: errors.New("force-leave \"s2\": broadcast failed")},
			"/v1/agent/force-leave?node=s2", 500, "broadcast failed"},
		{"force-leave", fakeCluster{}, "/v1/agent/force-leave?node=s2", 200, ""},
		{"force-leave with prune", fakeCluster{}, "/v1/agent/force-leave?node=s2&prune=true", 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc := tc.cluster
			h := newTestHTTP(t, func(c *HTTPServerConfig) {
				fc.testServer = c.Server.(*testServer)
				c.Server = &fc
			})
			resp, body := h.do("PUT", tc.path, "")
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.contains)
			must.StrNotContains(t, body, "RPC Error")
			must.Eq(t, strings.Contains(tc.path, "prune=true"), fc.pruned)
		})
	}
}
