package agent

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestConfig_LimitsBlock(t *testing.T) {
	c := DefaultConfig()
	must.Eq(t, DefaultLimits(), c.Limits, must.Sprint("Nomad's defaults"))
	must.Eq(t, Limits{HTTPSHandshakeTimeout: 5 * time.Second, HTTPMaxConnsPerClient: 100,
		RPCHandshakeTimeout: 5 * time.Second, RPCMaxConnsPerClient: 100}, c.Limits)

	must.NoError(t, ParseConfig(c, "l.hcl", []byte(`
limits {
  https_handshake_timeout   = "2s"
  http_max_conns_per_client = 0
  rpc_max_conns_per_client  = 10
  http_requests_per_second  = 50
  http_request_burst        = 100
}`)))
	must.Eq(t, Limits{HTTPSHandshakeTimeout: 2 * time.Second, HTTPMaxConnsPerClient: 0,
		RPCHandshakeTimeout: 5 * time.Second, RPCMaxConnsPerClient: 10,
		HTTPRequestsPerSecond: 50, HTTPRequestBurst: 100}, c.Limits, must.Sprint("what the block leaves out keeps its default"))

	sc := serverConfig(func() *Config { c.DevMode = false; c.DataDir = t.TempDir(); return c }())
	must.Eq(t, 5*time.Second, sc.Cluster.RPCHandshakeTimeout)
	must.Eq(t, 10, sc.Cluster.RPCMaxConnsPerClient)

	bad := DefaultConfig()
	bad.Limits = Limits{HTTPMaxConnsPerClient: -1, RPCHandshakeTimeout: -time.Second, HTTPRequestsPerSecond: -1}
	err := bad.Validate()
	for _, key := range []string{"limits.http_max_conns_per_client", "limits.rpc_handshake_timeout", "limits.http_requests_per_second"} {
		must.ErrorContains(t, err, key)
	}
}
