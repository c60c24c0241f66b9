package agent

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/opennomad/nomad/client"
)

// hostStatser is the part of the agent's client that measures its host.
type hostStatser interface {
	NodeID() string
	HostStats() (*client.HostStats, error)
}

// clientStatsRequest serves GET /v1/client/stats: this agent's client
// host's memory, alloc-dir disk and uptime. ?node_id may name only this
// agent's node: stats of another node are read on the agent running it.
func (s *HTTPServer) clientStatsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	c, ok := s.cfg.Client.(hostStatser)
	if !ok {
		return nil, codedError(http.StatusNotImplemented,
			"this agent runs no client; node stats are answered by the agent running the node")
	}
	if id := r.URL.Query().Get("node_id"); id != "" && !strings.EqualFold(id, c.NodeID()) {
		return nil, codedError(http.StatusNotFound, fmt.Sprintf("Unknown node %q", id))
	}
	return c.HostStats()
}
