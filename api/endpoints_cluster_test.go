package api

import (
	"net/url"
	"testing"
	"time"
)

func TestNodesEndpoints(t *testing.T) {
	nodeID := "f3e2d1c0-b9a8-4765-8432-10fedcba9876"
	runEndpointCases(t, []endpointCase{
		{
			name:     "list",
			reply:    reply{Body: fixture(t, "nodes_list.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Nodes().List(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/nodes",
			check: func(t *testing.T, out any) {
				n := out.([]*NodeListStub)[0]
				if n.Address != "10.0.0.5" || !n.Drivers["raw_exec"].Healthy || n.SchedulingEligibility != NodeSchedulingEligible {
					t.Fatalf("node stub = %+v", n)
				}
			},
		},
		{
			name:     "info",
			reply:    reply{Body: fixture(t, "node.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Nodes().Info(nodeID, nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/node/" + nodeID,
			check: func(t *testing.T, out any) {
				n := out.(*Node)
				switch {
				case n.NodeResources.Cpu.CpuShares != 4000 || n.NodeResources.MaxDynamicPort != 32000:
					t.Fatalf("resources = %+v", n.NodeResources)
				case n.ReservedResources.Memory.MemoryMB != 256 || n.ReservedResources.Networks.ReservedHostPorts != "22":
					t.Fatalf("reserved = %+v", n.ReservedResources)
				case n.DrainStrategy.Deadline != time.Hour || n.DrainStrategy.ForceDeadline.Hour() != 11:
					t.Fatalf("drain = %+v", n.DrainStrategy)
				case n.LastDrain.Meta["message"] != "kernel upgrade" || n.StatusUpdatedAt != 1714557000:
					t.Fatalf("last drain = %+v", n.LastDrain)
				case n.Events[0].Subsystem != "Cluster" || n.Attributes["kernel.name"] != "linux":
					t.Fatalf("node = %+v", n)
				}
			},
		},
		{
			name:     "allocations",
			reply:    reply{Body: "[" + fixture(t, "allocation.json") + "]"},
			call:     func(c *Client) (any, error) { r, _, err := c.Nodes().Allocations(nodeID, nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/node/" + nodeID + "/allocations",
			check: func(t *testing.T, out any) {
				if out.([]*Allocation)[0].Name != "web.frontend[0]" {
					t.Fatalf("allocs = %+v", out)
				}
			},
		},
		{
			name:  "drain with deadline",
			reply: reply{Body: `{"NodeModifyIndex":150,"EvalIDs":["e-1","e-2"],"EvalCreateIndex":150}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Nodes().UpdateDrainOpts(nodeID, &NodeUpdateDrainRequest{
					DrainSpec: &DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true},
					Meta:      map[string]string{"message": "kernel upgrade"},
				}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/node/" + nodeID + "/drain",
			wantBody: `{"NodeID":"` + nodeID + `","DrainSpec":{"Deadline":3600000000000,"IgnoreSystemJobs":true},"MarkEligible":false,"Meta":{"message":"kernel upgrade"}}`,
			check: func(t *testing.T, out any) {
				r := out.(*NodeDrainUpdateResponse)
				if r.NodeModifyIndex != 150 || len(r.EvalIDs) != 2 {
					t.Fatalf("response = %+v", r)
				}
			},
		},
		{
			name:  "cancel drain and mark eligible",
			reply: reply{Body: `{"NodeModifyIndex":151}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Nodes().UpdateDrain(nodeID, nil, true, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/node/" + nodeID + "/drain",
			wantBody: `{"NodeID":"` + nodeID + `","DrainSpec":null,"MarkEligible":true,"Meta":null}`,
		},
		{
			name:  "ineligible",
			reply: reply{Body: `{"NodeModifyIndex":152,"EvalIDs":null,"EvalCreateIndex":0}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Nodes().ToggleEligibility(nodeID, false, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/node/" + nodeID + "/eligibility",
			wantBody: `{"NodeID":"` + nodeID + `","Eligibility":"ineligible"}`,
		},
		{
			name:  "evaluate",
			reply: reply{Body: `{"NodeModifyIndex":153,"EvalIDs":["e-9"],"EvalCreateIndex":153}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Nodes().ForceEvaluate(nodeID, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/node/" + nodeID + "/evaluate",
			check: func(t *testing.T, out any) {
				if out.(*NodeEvaluateResponse).EvalIDs[0] != "e-9" {
					t.Fatalf("response = %+v", out)
				}
			},
		},
	})
}

func TestEvaluationsAndAllocationsEndpoints(t *testing.T) {
	evalID := "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9"
	allocID := "8a0c1f9e-6b3d-4c2a-9e1f-0d7b5a3c2e11"
	runEndpointCases(t, []endpointCase{
		{
			name:  "evaluations list filtered by job and status",
			reply: reply{Body: "[" + fixture(t, "evaluation.json") + "]"},
			call: func(c *Client) (any, error) {
				r, _, err := c.Evaluations().List(&QueryOptions{Params: map[string]string{"job": "web", "status": "complete"}})
				return r, err
			},
			wantMeth: "GET", wantPath: "/v1/evaluations",
			wantQuery: url.Values{"job": {"web"}, "status": {"complete"}},
		},
		{
			name:     "evaluation info asks for related evals",
			reply:    reply{Body: fixture(t, "evaluation.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Evaluations().Info(evalID, nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/evaluation/" + evalID,
			wantQuery: url.Values{"related": {"true"}},
			check: func(t *testing.T, out any) {
				e := out.(*Evaluation)
				m := e.FailedTGAllocs["frontend"]
				switch {
				case e.Status != EvalStatusComplete || e.BlockedEval == "" || e.QueuedAllocations["frontend"] != 2:
					t.Fatalf("eval = %+v", e)
				case m.DimensionExhausted["memory"] != 3 || m.CoalescedFailures != 2 || m.ClassExhausted["v1:1234"] != 4:
					t.Fatalf("metrics = %+v", m)
				case e.RelatedEvals[0].TriggeredBy != "queued-allocs":
					t.Fatalf("related = %+v", e.RelatedEvals)
				case e.NodeID != "" || e.Wait != 0 || !e.WaitUntil.IsZero():
					t.Fatalf("omitted fields did not decode to zero: %+v", e)
				}
			},
		},
		{
			name:     "evaluation allocations",
			reply:    reply{Body: fixture(t, "allocations_list.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Evaluations().Allocations(evalID, nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/evaluation/" + evalID + "/allocations",
		},
		{
			name:  "allocations list with task states",
			reply: reply{Body: fixture(t, "allocations_list.json")},
			call: func(c *Client) (any, error) {
				r, _, err := c.Allocations().List(&QueryOptions{Params: map[string]string{"task_states": "false"}})
				return r, err
			},
			wantMeth: "GET", wantPath: "/v1/allocations",
			wantQuery: url.Values{"task_states": {"false"}},
		},
		{
			name:     "allocation info",
			reply:    reply{Body: fixture(t, "allocation.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Allocations().Info(allocID, nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/allocation/" + allocID,
			check: func(t *testing.T, out any) {
				a := out.(*Allocation)
				switch {
				case a.AllocatedResources.Tasks["server"].Memory.MemoryMaxMB != 256:
					t.Fatalf("allocated = %+v", a.AllocatedResources)
				case a.AllocatedResources.Shared.Ports[0].Value != 24567 || a.AllocatedResources.Shared.DiskMB != 500:
					t.Fatalf("shared = %+v", a.AllocatedResources.Shared)
				case a.Metrics.ScoreMetaData[0].Scores["binpack"] != 0.41:
					t.Fatalf("metrics = %+v", a.Metrics)
				case a.DesiredTransition.Migrate == nil || !*a.DesiredTransition.Migrate || a.DesiredTransition.Reschedule != nil:
					t.Fatalf("transition = %+v", a.DesiredTransition)
				case len(a.TaskStates["server"].Events) != 2 || a.AllocModifyIndex != 119:
					t.Fatalf("alloc = %+v", a)
				}
			},
		},
		{
			name:  "allocation stop",
			reply: reply{Body: `{"EvalID":"e-7","Index":160}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Allocations().Stop(allocID, &WriteOptions{Params: map[string]string{"no_shutdown_delay": "true"}})
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/allocation/" + allocID + "/stop",
			wantQuery: url.Values{"no_shutdown_delay": {"true"}},
			check: func(t *testing.T, out any) {
				if out.(*AllocStopResponse).EvalID != "e-7" {
					t.Fatalf("response = %+v", out)
				}
			},
		},
	})
}

func TestAgentStatusOperatorEndpoints(t *testing.T) {
	runEndpointCases(t, []endpointCase{
		{
			name:     "agent self",
			reply:    reply{Body: fixture(t, "agent_self.json")},
			call:     func(c *Client) (any, error) { return c.Agent().Self() },
			wantMeth: "GET", wantPath: "/v1/agent/self",
			check: func(t *testing.T, out any) {
				s := out.(*AgentSelf)
				if s.Member.Name != "server-1.global" || s.Member.Tags["raft_vsn"] != "3" ||
					s.Stats["raft"]["state"] != "Leader" || s.Config["Datacenter"] != "dc1" {
					t.Fatalf("self = %+v", s)
				}
			},
		},
		{
			name:     "agent members",
			reply:    reply{Body: fixture(t, "agent_members.json")},
			call:     func(c *Client) (any, error) { return c.Agent().Members() },
			wantMeth: "GET", wantPath: "/v1/agent/members",
			check: func(t *testing.T, out any) {
				m := out.(*ServerMembers)
				if m.ServerRegion != "global" || len(m.Members) != 2 || m.Members[1].Status != "failed" || m.Members[0].Port != 4648 {
					t.Fatalf("members = %+v", m)
				}
			},
		},
		{
			name:     "agent health",
			reply:    reply{Body: `{"client":{"ok":true,"message":"ok"},"server":{"ok":true,"message":"ok"}}`},
			call:     func(c *Client) (any, error) { return c.Agent().Health() },
			wantMeth: "GET", wantPath: "/v1/agent/health",
			check: func(t *testing.T, out any) {
				h := out.(*AgentHealthResponse)
				if !h.Client.Ok || !h.Server.Ok {
					t.Fatalf("health = %+v", h)
				}
			},
		},
		{
			name:     "unhealthy agent answers 500 with a body",
			reply:    reply{Status: 500, Body: `{"server":{"ok":false,"message":"No cluster leader"}}`},
			call:     func(c *Client) (any, error) { return c.Agent().Health() },
			wantMeth: "GET", wantPath: "/v1/agent/health",
			check: func(t *testing.T, out any) {
				h := out.(*AgentHealthResponse)
				if h.Server.Ok || h.Server.Message != "No cluster leader" || h.Client != nil {
					t.Fatalf("health = %+v", h)
				}
			},
		},
		{
			name:     "agent schedulers",
			reply:    reply{Body: fixture(t, "agent_schedulers.json")},
			call:     func(c *Client) (any, error) { return c.Agent().Schedulers(nil) },
			wantMeth: "GET", wantPath: "/v1/agent/schedulers",
			check: func(t *testing.T, out any) {
				s := out.(*AgentSchedulerWorkersInfo)
				if s.ServerID != "server-1.global" || len(s.Schedulers) != 2 ||
					s.Schedulers[0].Status != WorkerStatusPaused || s.Schedulers[1].WorkloadStatus != "WaitingToDequeue" ||
					len(s.Schedulers[0].EnabledSchedulers) != 5 {
					t.Fatalf("schedulers = %+v", s)
				}
			},
		},
		{
			name:     "agent scheduler config",
			reply:    reply{Body: `{"server_id":"server-1.global","num_schedulers":2,"enabled_schedulers":["service","_core"]}`},
			call:     func(c *Client) (any, error) { return c.Agent().SchedulerWorkerConfig(nil) },
			wantMeth: "GET", wantPath: "/v1/agent/schedulers/config",
			check: func(t *testing.T, out any) {
				r := out.(*AgentSchedulerWorkerConfigResponse)
				if r.NumSchedulers != 2 || r.EnabledSchedulers[1] != "_core" || r.ServerID != "server-1.global" {
					t.Fatalf("config = %+v", r)
				}
			},
		},
		{
			name:  "agent set scheduler config",
			reply: reply{Body: `{"server_id":"server-1.global","num_schedulers":1,"enabled_schedulers":["batch","_core"]}`},
			call: func(c *Client) (any, error) {
				return c.Agent().SetSchedulerWorkerConfig(AgentSchedulerWorkerConfigRequest{NumSchedulers: 1, EnabledSchedulers: []string{"batch", "_core"}}, nil)
			},
			wantMeth: "PUT", wantPath: "/v1/agent/schedulers/config",
			wantBody: `{"num_schedulers":1,"enabled_schedulers":["batch","_core"]}`,
		},
		{
			name:  "agent pause scheduler workers",
			reply: reply{Body: `{"server_id":"server-1.global","num_schedulers":2,"enabled_schedulers":["_core"],"paused":true}`},
			call: func(c *Client) (any, error) {
				return c.Agent().SetSchedulerWorkerConfig(AgentSchedulerWorkerConfigRequest{NumSchedulers: 2, EnabledSchedulers: []string{"_core"}, Paused: new(true)}, nil)
			},
			wantMeth: "PUT", wantPath: "/v1/agent/schedulers/config",
			wantBody: `{"num_schedulers":2,"enabled_schedulers":["_core"],"paused":true}`,
			check: func(t *testing.T, out any) {
				if r := out.(*AgentSchedulerWorkerConfigResponse); r.Paused == nil || !*r.Paused {
					t.Fatalf("paused = %v", r.Paused)
				}
			},
		},
		{
			name:     "status leader",
			reply:    reply{Body: `"10.0.0.2:4647"`},
			call:     func(c *Client) (any, error) { return c.Status().Leader() },
			wantMeth: "GET", wantPath: "/v1/status/leader",
			check: func(t *testing.T, out any) {
				if out.(string) != "10.0.0.2:4647" {
					t.Fatalf("leader = %v", out)
				}
			},
		},
		{
			name:     "status leader of another region",
			reply:    reply{Body: `"10.1.0.2:4647"`},
			call:     func(c *Client) (any, error) { return c.Status().RegionLeader("eu") },
			wantMeth: "GET", wantPath: "/v1/status/leader",
			wantQuery: url.Values{"region": {"eu"}},
		},
		{
			name:     "status peers",
			reply:    reply{Body: `["10.0.0.2:4647","10.0.0.3:4647","10.0.0.4:4647"]`},
			call:     func(c *Client) (any, error) { return c.Status().Peers() },
			wantMeth: "GET", wantPath: "/v1/status/peers",
			check: func(t *testing.T, out any) {
				if len(out.([]string)) != 3 {
					t.Fatalf("peers = %v", out)
				}
			},
		},
		{
			name:     "regions sorted",
			reply:    reply{Body: `["us","eu","global"]`},
			call:     func(c *Client) (any, error) { return c.Regions().List() },
			wantMeth: "GET", wantPath: "/v1/regions",
			check: func(t *testing.T, out any) {
				r := out.([]string)
				if r[0] != "eu" || r[2] != "us" {
					t.Fatalf("regions = %v", r)
				}
			},
		},
		{
			name:     "system gc",
			reply:    reply{},
			call:     func(c *Client) (any, error) { return nil, c.System().GarbageCollect() },
			wantMeth: "PUT", wantPath: "/v1/system/gc",
		},
		{
			name:  "scheduler get config",
			reply: reply{Header: map[string]string{"X-Nomad-Index": "37"}, Body: fixture(t, "scheduler_config.json")},
			call: func(c *Client) (any, error) {
				r, qm, err := c.Operator().SchedulerGetConfiguration(nil)
				if err == nil && qm.LastIndex != 37 {
					t.Errorf("index = %d", qm.LastIndex)
				}
				return r, err
			},
			wantMeth: "GET", wantPath: "/v1/operator/scheduler/configuration",
			check: func(t *testing.T, out any) {
				c := out.(*SchedulerConfigurationResponse).SchedulerConfig
				if c.SchedulerAlgorithm != SchedulerAlgorithmSpread || !c.PreemptionConfig.ServiceSchedulerEnabled ||
					!c.MemoryOversubscriptionEnabled || c.ModifyIndex != 37 {
					t.Fatalf("config = %+v", c)
				}
			},
		},
		{
			name:  "scheduler set config",
			reply: reply{Body: `{"Updated":false,"Index":38}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Operator().SchedulerSetConfiguration(&SchedulerConfiguration{SchedulerAlgorithm: "binpack", PauseEvalBroker: true}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/operator/scheduler/configuration",
			wantBody: `{"SchedulerAlgorithm":"binpack","PreemptionConfig":{"SystemSchedulerEnabled":false,"SysBatchSchedulerEnabled":false,"BatchSchedulerEnabled":false,"ServiceSchedulerEnabled":false},"MemoryOversubscriptionEnabled":false,"RejectJobRegistration":false,"PauseEvalBroker":true,"NodeLimitForFeasibilityChecks":0,"CreateIndex":0,"ModifyIndex":0}`,
		},
		{
			name:  "scheduler cas config",
			reply: reply{Body: `{"Updated":true,"Index":39}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Operator().SchedulerCASConfiguration(&SchedulerConfiguration{SchedulerAlgorithm: "spread", ModifyIndex: 37}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/operator/scheduler/configuration",
			wantQuery: url.Values{"cas": {"37"}},
			wantBody:  `{"SchedulerAlgorithm":"spread","PreemptionConfig":{"SystemSchedulerEnabled":false,"SysBatchSchedulerEnabled":false,"BatchSchedulerEnabled":false,"ServiceSchedulerEnabled":false},"MemoryOversubscriptionEnabled":false,"RejectJobRegistration":false,"PauseEvalBroker":false,"NodeLimitForFeasibilityChecks":0,"CreateIndex":0,"ModifyIndex":37}`,
			check: func(t *testing.T, out any) {
				if !out.(*SchedulerSetConfigurationResponse).Updated {
					t.Fatalf("response = %+v", out)
				}
			},
		},
		{
			name:     "raft configuration",
			reply:    reply{Body: fixture(t, "raft_config.json")},
			call:     func(c *Client) (any, error) { return c.Operator().RaftGetConfiguration(nil) },
			wantMeth: "GET", wantPath: "/v1/operator/raft/configuration",
			check: func(t *testing.T, out any) {
				r := out.(*RaftConfiguration)
				if len(r.Servers) != 2 || !r.Servers[0].Leader || r.Servers[1].Address != "10.0.0.3:4647" || r.Index != 12 {
					t.Fatalf("raft = %+v", r)
				}
			},
		},
		{
			name:     "metrics json",
			reply:    reply{Body: fixture(t, "metrics.json")},
			call:     func(c *Client) (any, error) { return c.Metrics(nil) },
			wantMeth: "GET", wantPath: "/v1/metrics",
			check: func(t *testing.T, out any) {
				m := out.(*MetricsSummary)
				if m.Gauges[0].Name != "nomad.broker.total_ready" || m.Gauges[0].Value != 3 ||
					m.Counters[0].Count != 12 || m.Samples[0].Max != 0.05 || m.Gauges[0].Labels["host"] != "server-1" {
					t.Fatalf("metrics = %+v", m)
				}
			},
		},
		{
			name:     "metrics prometheus",
			reply:    reply{Body: "# HELP nomad_broker_total_ready x\nnomad_broker_total_ready 3\n"},
			call:     func(c *Client) (any, error) { return c.MetricsPrometheus(nil) },
			wantMeth: "GET", wantPath: "/v1/metrics",
			wantQuery: url.Values{"format": {"prometheus"}},
			check: func(t *testing.T, out any) {
				if len(out.([]byte)) == 0 {
					t.Fatal("empty body")
				}
			},
		},
	})
}
