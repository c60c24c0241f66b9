package agent

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/shoenig/test/must"
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
		// A dev agent is self-contained: it runs no gossip.
		{"PUT", "/v1/agent/force-leave?node=x", http.StatusInternalServerError, "runs no gossip"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp, body := ra.do(tc.method, tc.path, "")
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.body)
		})
	}

	// Nomad answers a failed join with 200 and the error in the body.
	resp, body := ra.do("PUT", "/v1/agent/join?address=127.0.0.1", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var res joinResult
	must.NoError(t, json.Unmarshal([]byte(body), &res))
	must.Eq(t, 0, res.NumJoined)
	must.StrContains(t, res.Error, "runs no gossip")
}
