package agent

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client"
)

// statsClient is a client agent that only measures its host.
type statsClient struct {
	ClientAPI
	id string
}

func (c statsClient) NodeID() string { return c.id }
func (c statsClient) HostStats() (*client.HostStats, error) {
	return &client.HostStats{Memory: &client.HostMemoryStats{Total: 8, Available: 5},
		AllocDirStats: &client.HostDiskStats{Size: 100, Used: 40}}, nil
}

func TestClientStats(t *testing.T) {
	h := newTestHTTP(t)
	resp, _ := h.do("GET", "/v1/client/stats", "")
	must.Eq(t, http.StatusNotImplemented, resp.StatusCode)

	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.Client = statsClient{id: "n1"} })
	resp, body := h.do("GET", "/v1/client/stats?node_id=n1", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var got client.HostStats
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, uint64(5), got.Memory.Available)
	must.Eq(t, uint64(100), got.AllocDirStats.Size)

	resp, _ = h.do("GET", "/v1/client/stats?node_id=other", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = h.do("PUT", "/v1/client/stats", "")
	must.Eq(t, http.StatusMethodNotAllowed, resp.StatusCode)
}
