package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

// The monitor streams the agent's log lines at the level asked for, even
// below the agent's own level, as JSON frames.
func TestAgentMonitor_StreamsLinesAtTheLevelAsked(t *testing.T) {
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "agent", Level: hclog.Error, Output: io.Discard})
	h := newTestHTTP(t, func(c *HTTPServerConfig) { c.Logger = logger })

	resp, body := h.do("GET", "/v1/agent/monitor?log_level=nope", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "Unknown log level: nope", body)
	resp, _ = h.do("GET", "/v1/agent/monitor?node_id=elsewhere", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/v1/agent/monitor?log_level=debug", nil)
	must.NoError(t, err)
	stream, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer stream.Body.Close()
	must.Eq(t, http.StatusOK, stream.StatusCode)

	// The sink is registered before the headers are sent.
	logger.Debug("a line for the monitor")
	dec := json.NewDecoder(bufio.NewReader(stream.Body))
	for {
		var frame api.StreamFrame
		must.NoError(t, dec.Decode(&frame))
		if strings.Contains(string(frame.Data), "a line for the monitor") {
			must.StrContains(t, string(frame.Data), "[DEBUG]")
			return
		}
	}
}
