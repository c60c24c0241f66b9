package agent

import (
	"encoding/json"
	"net/http"
	"runtime"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

func TestAgent_Self(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("GET", "/v1/agent/self", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var self api.AgentSelf
	must.NoError(t, json.Unmarshal([]byte(body), &self))
	must.Eq[any](t, "n1", self.Config["Name"])
	must.Eq[any](t, "global", self.Config["Region"])
	must.Eq(t, "n1.global", self.Member.Name)
	must.Eq(t, "nomad", self.Member.Tags["role"])
	must.Eq(t, runtime.GOOS, self.Stats["runtime"]["os"])
	must.Eq(t, "Leader", self.Stats["raft"]["state"])
	must.Eq(t, "true", self.Stats["agent"]["server"])

	// The replication token is a management token of another region.
	var agentCfg *Config
	h = newTestHTTP(t, func(c *HTTPServerConfig) {
		c.Agent.ACL.ReplicationToken = "c2a8a1f6-6d4b-4c59-9a53-2a1b0f3c9d10"
		agentCfg = c.Agent
	})
	_, body = h.do("GET", "/v1/agent/self", "")
	must.StrNotContains(t, body, "c2a8a1f6")
	must.NoError(t, json.Unmarshal([]byte(body), &self))
	must.Eq[any](t, "<redacted>", self.Config["ACL"].(map[string]any)["ReplicationToken"])
	// Only the answer is redacted, not the agent's configuration.
	must.Eq(t, "c2a8a1f6-6d4b-4c59-9a53-2a1b0f3c9d10", agentCfg.ACL.ReplicationToken)
}

func TestAgent_MembersServers(t *testing.T) {
	h := newTestHTTP(t)
	_, body := h.do("GET", "/v1/agent/members", "")
	var members api.ServerMembers
	must.NoError(t, json.Unmarshal([]byte(body), &members))
	must.Eq(t, "global", members.ServerRegion)
	must.Len(t, 1, members.Members)
	must.Eq(t, uint16(4648), members.Members[0].Port)

	_, body = h.do("GET", "/v1/agent/servers", "")
	must.Eq(t, `["127.0.0.1:4647"]`+"\n", body)
	resp, _ := h.do("PUT", "/v1/agent/servers?address=1.2.3.4:4647", "")
	must.Eq(t, http.StatusNotImplemented, resp.StatusCode)

	// A server-only agent has no client servers to show.
	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.ClientServers = nil })
	resp, body = h.do("GET", "/v1/agent/servers", "")
	must.Eq(t, http.StatusNotImplemented, resp.StatusCode)
	must.Eq(t, "Client not enabled", body)
}

func TestAgent_Health(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("GET", "/v1/agent/health", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, `{"client":{"ok":true,"message":"ok"},"server":{"ok":true,"message":"ok"}}`+"\n", body)

	_, body = h.do("GET", "/v1/agent/health?type=server", "")
	must.Eq(t, `{"server":{"ok":true,"message":"ok"}}`+"\n", body)

	// No leader: 500 with the same JSON shape.
	h.rpc.onWrite("Status.Leader", func(args, reply interface{}) error {
		*reply.(*string) = ""
		return nil
	})
	resp, body = h.do("GET", "/v1/agent/health", "")
	must.Eq(t, http.StatusInternalServerError, resp.StatusCode)
	must.Eq(t, "application/json", resp.Header.Get("Content-Type"))
	must.Eq(t, `{"client":{"ok":true,"message":"ok"},"server":{"ok":false,"message":"No cluster leader"}}`+"\n", body)

	// Asking about a part the agent does not run is a 400.
	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.Server = nil })
	resp, body = h.do("GET", "/v1/agent/health?type=server", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "server not enabled", body)
	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.ClientServers = func() []string { return nil } })
	resp, body = h.do("GET", "/v1/agent/health?type=client", "")
	must.Eq(t, http.StatusInternalServerError, resp.StatusCode)
	must.Eq(t, `{"client":{"ok":false,"message":"no known servers"}}`+"\n", body)
}

func TestAgent_Schedulers(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("GET", "/v1/agent/schedulers", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var info api.AgentSchedulerWorkersInfo
	must.NoError(t, json.Unmarshal([]byte(body), &info))
	must.Eq(t, "n1.global", info.ServerID)
	must.Len(t, 2, info.Schedulers)
	must.Eq(t, "Started", info.Schedulers[0].Status)
	// snake_case on the wire.
	must.StrContains(t, body, `"server_id":"n1.global"`)
	must.StrContains(t, body, `"workload_status":"WaitingToDequeue"`)

	_, body = h.do("GET", "/v1/agent/schedulers/config", "")
	must.Eq(t, `{"server_id":"n1.global","num_schedulers":2,"enabled_schedulers":["service","batch","system","sysbatch","_core"]}`+"\n", body)

	// A GET body sent back (with its server_id) is accepted.
	resp, body = h.do("PUT", "/v1/agent/schedulers/config", `{"server_id":"x","num_schedulers":1,"enabled_schedulers":["service","_core"]}`)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, `{"server_id":"n1.global","num_schedulers":1,"enabled_schedulers":["service","_core"]}`+"\n", body)
	_, body = h.do("GET", "/v1/agent/schedulers", "")
	must.NoError(t, json.Unmarshal([]byte(body), &info))
	must.Len(t, 1, info.Schedulers)

	// Pausing (an extension of Nomad's API) reaches the server and its
	// answer comes back.
	_, body = h.do("PUT", "/v1/agent/schedulers/config", `{"num_schedulers":1,"enabled_schedulers":["_core"],"paused":true}`)
	must.Eq(t, `{"server_id":"n1.global","num_schedulers":1,"enabled_schedulers":["_core"],"paused":true}`+"\n", body)

	// Client-only agents have no workers.
	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.Server = nil })
	for _, p := range []string{"/v1/agent/schedulers", "/v1/agent/schedulers/config"} {
		resp, body = h.do("GET", p, "")
		must.Eq(t, http.StatusBadRequest, resp.StatusCode)
		must.Eq(t, "Server only endpoint", body)
	}
}

func TestStatusAndRegions(t *testing.T) {
	h := newTestHTTP(t)
	_, body := h.do("GET", "/v1/status/leader", "")
	must.Eq(t, `"127.0.0.1:4647"`+"\n", body)
	_, body = h.do("GET", "/v1/status/peers", "")
	must.Eq(t, `["127.0.0.1:4647"]`+"\n", body)
	_, body = h.do("GET", "/v1/regions", "")
	must.Eq(t, `["global"]`+"\n", body)
	h.do("GET", "/v1/status/leader?region=west", "")
	must.Eq(t, "west", h.rpc.lastCall(t, "Status.Leader").(*structs.GenericRequest).Region)
}

func TestOperator_SchedulerConfiguration(t *testing.T) {
	h := newTestHTTP(t)
	must.NoError(t, h.rpc.state.SchedulerSetConfig(4, &structs.SchedulerConfiguration{SchedulerAlgorithm: "spread"}))

	resp, body := h.do("GET", "/v1/operator/scheduler/configuration", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "4", resp.Header.Get("X-Nomad-Index"))
	var out struct {
		api.SchedulerConfigurationResponse
		Index       uint64
		KnownLeader bool
	}
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, "spread", out.SchedulerConfig.SchedulerAlgorithm)
	must.Eq(t, 4, out.Index)
	must.True(t, out.KnownLeader)

	h.rpc.onWrite("Operator.SchedulerSetConfiguration", func(args, reply interface{}) error {
		out := reply.(*structs.SchedulerSetConfigurationResponse)
		out.Updated, out.Index = true, 5
		return nil
	})
	resp, body = h.do("PUT", "/v1/operator/scheduler/configuration?cas=4",
		`{"SchedulerAlgorithm": "binpack", "PauseEvalBroker": true, "PreemptionConfig": {"BatchSchedulerEnabled": true}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "5", resp.Header.Get("X-Nomad-Index"))
	must.Eq(t, `{"Updated":true,"Index":5}`+"\n", body)
	args := h.rpc.lastCall(t, "Operator.SchedulerSetConfiguration").(*structs.SchedulerSetConfigRequest)
	must.True(t, args.CAS)
	must.Eq(t, 4, args.Config.ModifyIndex)
	must.True(t, args.Config.PauseEvalBroker)
	must.True(t, args.Config.PreemptionConfig.BatchSchedulerEnabled)
}

func TestOperator_RaftConfiguration(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("GET", "/v1/operator/raft/configuration", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var out api.RaftConfiguration
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Len(t, 1, out.Servers)
	must.True(t, out.Servers[0].Leader)
	must.Eq(t, "3", out.Servers[0].RaftProtocol)
	must.Eq(t, 7, out.Index)
}

func TestSystem_GC(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("PUT", "/v1/system/gc", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "", body)
	h.rpc.lastCall(t, "System.GarbageCollect")
}
