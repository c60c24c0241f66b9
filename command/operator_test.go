package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

func readSchedulerConfig(t *testing.T, c testCluster) *api.SchedulerConfiguration {
	t.Helper()
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})
	resp, _, err := client.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.SchedulerConfig
}

func TestServerMembers(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:     "members with the leader marked",
			fakeOnly: true,
			args:     []string{"server", "members"},
			wantOut: `Name             Address   Port  Status  Leader  Raft Version  Build      Datacenter  Region
server-1.global  10.0.0.1  4648  alive   true    3             0.1.0-dev  dc1         global
server-2.global  10.0.0.2  4648  alive   false   3             0.1.0-dev  dc1         global
server-3.global  10.0.0.3  4648  alive   false   3             0.1.0-dev  dc1         global`,
		},
		{name: "verbose adds protocol and tags", fakeOnly: true, args: []string{"server", "members", "-verbose"},
			outHas: []string{"Region  Protocol  Tags\n", "global  2         build=0.1.0-dev,dc=dc1,port=4647,raft_vsn=3,region=global,role=nomad,rpc_addr=10.0.0.1"}},
		{name: "json", args: []string{"server", "members", "-json"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var members []*api.AgentMember
				if err := json.Unmarshal([]byte(res.stdout), &members); err != nil || len(members) == 0 {
					t.Errorf("json: %v %s", err, res.stdout)
				}
			}},
	})
}

func TestOperatorRaftListPeers(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:     "peers",
			fakeOnly: true,
			args:     []string{"operator", "raft", "list-peers", "-stale"},
			wantOut: `Node             ID                                    Address        State     Voter  RaftProtocol
server-1.global  <id>  10.0.0.1:4647  leader    true   3
server-2.global  <id>  10.0.0.2:4647  follower  true   3
server-3.global  <id>  10.0.0.3:4647  follower  true   3`,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if q := c.fake().requestsTo("GET", "/v1/operator/raft/configuration")[0].Query; !strings.Contains(q, "stale") {
					t.Errorf("-stale not sent: %q", q)
				}
			},
		},
		{name: "an argument", args: []string{"operator", "raft", "list-peers", "x"}, wantCode: 1, errHas: []string{"no arguments"}},
	})
}

func TestOperatorSchedulerConfig(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name: "get",
			// The modify index is the fake's.
			fakeOnly: true,
			args:     []string{"operator", "scheduler", "get-config"},
			wantOut: `Scheduler Algorithm               = binpack
Memory Oversubscription           = false
Reject Job Registration           = false
Pause Eval Broker                 = false
Preemption System Scheduler       = true
Preemption Service Scheduler      = false
Preemption Batch Scheduler        = false
Preemption SysBatch Scheduler     = false
Node Limit For Feasibility Checks = 100 (default)
Modify Index                      = 1`,
		},
		{name: "get as JSON", args: []string{"operator", "scheduler", "get-config", "-json"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var conf api.SchedulerConfiguration
				if err := json.Unmarshal([]byte(res.stdout), &conf); err != nil || conf.SchedulerAlgorithm != "binpack" {
					t.Errorf("json: %v %s", err, res.stdout)
				}
			}},
		{
			name:    "set changes only what the flags name",
			args:    []string{"operator", "scheduler", "set-config", "-scheduler-algorithm=spread", "-pause-eval-broker", "-preempt-service-scheduler=true", "-memory-oversubscription=true"},
			wantOut: "Scheduler configuration updated!",
			check: func(t *testing.T, c testCluster, res cmdResult) {
				conf := readSchedulerConfig(t, c)
				if conf.SchedulerAlgorithm != "spread" || !conf.PauseEvalBroker || !conf.PreemptionConfig.ServiceSchedulerEnabled ||
					!conf.MemoryOversubscriptionEnabled {
					t.Errorf("config = %+v", conf)
				}
				// Untouched settings keep their values.
				if !conf.PreemptionConfig.SystemSchedulerEnabled || conf.RejectJobRegistration || conf.PreemptionConfig.BatchSchedulerEnabled {
					t.Errorf("untouched settings changed: %+v", conf)
				}
			},
		},
		{
			name: "set to false",
			setup: func(t *testing.T, c testCluster) {
				runCommand(t, c.Addr(), runOpts{}, "operator", "scheduler", "set-config", "-pause-eval-broker=true")
			},
			args: []string{"operator", "scheduler", "set-config", "-pause-eval-broker=false", "-preempt-system-scheduler=false",
				"-preempt-batch-scheduler=true", "-preempt-sysbatch-scheduler=true", "-reject-job-registration=true",
				"-node-limit-for-feasibility-checks=50", "-eval-backlog-limit=500"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				conf := readSchedulerConfig(t, c)
				if conf.EvalBacklogLimit == nil || *conf.EvalBacklogLimit != 500 {
					t.Errorf("eval backlog limit = %v", conf.EvalBacklogLimit)
				}
				if conf.PauseEvalBroker || conf.PreemptionConfig.SystemSchedulerEnabled || !conf.PreemptionConfig.BatchSchedulerEnabled ||
					!conf.PreemptionConfig.SysBatchSchedulerEnabled || !conf.RejectJobRegistration || conf.NodeLimitForFeasibilityChecks != 50 {
					t.Errorf("config = %+v", conf)
				}
			},
		},
		{
			name:     "check-index that matches",
			fakeOnly: true, // the index is the fake's
			args:     []string{"operator", "scheduler", "set-config", "-check-index", "1", "-scheduler-algorithm=spread"},
			wantOut:  "Scheduler configuration updated!",
		},
		{
			name:     "check-index that does not match changes nothing",
			args:     []string{"operator", "scheduler", "set-config", "-check-index", "99", "-scheduler-algorithm=spread"},
			wantCode: 1,
			errHas:   []string{"Scheduler configuration not updated: its modify index is no longer 99"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if conf := readSchedulerConfig(t, c); conf.SchedulerAlgorithm != "binpack" {
					t.Errorf("algorithm changed to %s", conf.SchedulerAlgorithm)
				}
			},
		},
		{name: "no flags", args: []string{"operator", "scheduler", "set-config"}, wantCode: 1,
			errHas: []string{"No setting to change"}},
		{name: "unknown algorithm", args: []string{"operator", "scheduler", "set-config", "-scheduler-algorithm=random"}, wantCode: 1,
			errHas: []string{`Invalid -scheduler-algorithm "random": must be "binpack" or "spread"`}},
		{name: "not a boolean", args: []string{"operator", "scheduler", "set-config", "-pause-eval-broker=maybe"}, wantCode: 1,
			errHas: []string{`"maybe" is not a boolean (use true or false)`}},
	})
}

func TestOperatorSchedulerWorkers(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:     "list",
			fakeOnly: true,
			args:     []string{"operator", "scheduler", "workers"},
			wantOut: `Server             = server-1.global
Workers            = 2
Enabled Schedulers = service, batch, system, sysbatch, _core
Paused By Operator = false

ID        Status   Workload Status   Started
<id>  Started  WaitingToDequeue  <time>
<id>  Started  WaitingToDequeue  <time>`,
		},
		{
			name:     "pause",
			fakeOnly: true,
			args:     []string{"operator", "scheduler", "workers", "-pause"},
			outHas: []string{`Server "server-1.global": workers pausing (each finishes the evaluation in hand)`,
				"Paused By Operator = true", "<id>  Paused  Paused           <time>"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				body := c.fake().requestsTo("PUT", "/v1/agent/schedulers/config")[0].Body
				if !strings.Contains(body, `"paused":true`) || !strings.Contains(body, `"num_schedulers":2`) {
					t.Errorf("body = %s", body)
				}
			},
		},
		{
			name:     "resume",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				runCommand(t, c.Addr(), runOpts{}, "operator", "scheduler", "workers", "-pause")
			},
			args:   []string{"operator", "scheduler", "workers", "-resume"},
			outHas: []string{"workers resuming", "Paused By Operator = false", "Started  WaitingToDequeue"},
		},
		{
			name:     "resize and choose schedulers",
			fakeOnly: true,
			args:     []string{"operator", "scheduler", "workers", "-num", "3", "-schedulers", "service, batch,_core", "-verbose"},
			outHas: []string{`Server "server-1.global": pool resized from 2 to 3 workers; schedulers set to service, batch, _core`,
				"Workers            = 3",
				"ID                                    Status   Workload Status   Started               Schedulers\n",
				"WaitingToDequeue  <time>  service,batch,_core"},
		},
		{name: "zero workers", fakeOnly: true, args: []string{"operator", "scheduler", "workers", "-num", "0"},
			outHas: []string{"No scheduler workers: this server does not schedule"}},
		{name: "json", fakeOnly: true, args: []string{"operator", "scheduler", "workers", "-json"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var out workersOutput
				if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.Config == nil || len(out.Workers.Schedulers) != 2 {
					t.Errorf("json: %v %s", err, res.stdout)
				}
			}},
		{name: "server refuses", fakeOnly: true, args: []string{"operator", "scheduler", "workers", "-num", "64"}, wantCode: 1,
			errHas: []string{"Error updating scheduler workers: Unexpected response code: 400 (Invalid request)"}},
		{name: "pause and resume", args: []string{"operator", "scheduler", "workers", "-pause", "-resume"}, wantCode: 1,
			errHas: []string{"-pause and -resume cannot be used together"}},
		{name: "negative size", args: []string{"operator", "scheduler", "workers", "-num", "-1"}, wantCode: 1,
			errHas: []string{"invalid -num -1: must be 0 or more"}},
		{name: "unknown scheduler", args: []string{"operator", "scheduler", "workers", "-schedulers", "service,gpu,_core"}, wantCode: 1,
			errHas: []string{`unknown scheduler "gpu" (known: service, batch, system, sysbatch, _core)`}},
		{name: "without _core", args: []string{"operator", "scheduler", "workers", "-schedulers", "service"}, wantCode: 1,
			errHas: []string{"must include _core"}},
	})
}

func TestOperatorSchedulerWorkersOnAServerWithoutPause(t *testing.T) {
	f := newFakeAgent(t)
	f.workerConfig.Paused = nil
	f.noPauseSupport = true
	res := runCommand(t, f.Addr(), runOpts{}, "operator", "scheduler", "workers", "-pause")
	if res.code != 1 || !strings.Contains(res.stderr, `the server "server-1.global" does not support pausing workers`) {
		t.Fatalf("%+v", res)
	}
}

func TestSystemGC(t *testing.T) {
	runCases(t, []cmdCase{
		{name: "gc", args: []string{"system", "gc"}, check: func(t *testing.T, c testCluster, res cmdResult) {
			if f := c.fake(); f != nil && f.gcRuns != 1 {
				t.Errorf("gc runs = %d", f.gcRuns)
			}
		}},
		{name: "an argument", args: []string{"system", "gc", "now"}, wantCode: 1, errHas: []string{"no arguments"}},
	})
}
