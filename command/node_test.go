package command

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// Node IDs the fake assigns, in order of AddNode calls.
const (
	node1 = "bbbb0001-0000-4000-8000-000000000001"
	node2 = "bbbb0002-0000-4000-8000-000000000002"
)

// twoNodesOneAlloc adds two nodes and places one allocation on the first.
func twoNodesOneAlloc(t *testing.T, c testCluster) {
	// node-2 joins once the alloc is on node-1: a real scheduler could
	// pick either.
	c.AddNode(t, &api.Node{Name: "node-1"})
	registerJob(t, c, testJob("web", 1, 256))
	c.Settle(t)
	c.AddNode(t, &api.Node{Name: "node-2", NodeClass: "large"})
}

// nodeByName returns the ID of the node with the given name.
func nodeByName(t testing.TB, c testCluster, name string) string {
	t.Helper()
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})
	nodes, _, err := client.Nodes().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("no node named %q", name)
	return ""
}

func readNode(t *testing.T, c testCluster, id string) *api.Node {
	t.Helper()
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})
	n, _, err := client.Nodes().Info(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// advancingClock returns a clock that moves step forward on every read.
func advancingClock(start time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

func TestNodeStatus(t *testing.T) {
	runCases(t, []cmdCase{
		{name: "no nodes", args: []string{"node", "status"}, wantOut: "No nodes registered"},
		{
			name:  "list",
			setup: twoNodesOneAlloc,
			args:  []string{"node", "status"},
			wantOut: `ID        Node Pool  DC   Name    Class   Drain  Eligibility  Status
<id>  default    dc1  node-1  <none>  false  eligible     ready
<id>  default    dc1  node-2  large   false  eligible     ready`,
		},
		{
			name:  "list with running allocations",
			setup: twoNodesOneAlloc,
			args:  []string{"node", "status", "-allocs"},
			outHas: []string{"Status  Running Allocs\n", "node-1  <none>  false  eligible     ready   0\n",
				"node-2  large   false  eligible     ready   0"},
		},
		{
			name:  "one node by prefix",
			setup: twoNodesOneAlloc,
			args:  []string{"node", "status", "{node8:node-1}"},
			outHas: []string{
				"ID                 = <id>\nName               = node-1\nNode Pool          = default\nClass              = <none>\nDC                 = dc1\n",
				"Drain              = false\nEligibility        = eligible\nStatus             = ready\n",
				"Drivers            = exec,raw_exec",
				"Allocated Resources\nCPU           Memory           Disk\n100/4000 MHz  256 MiB/8.0 GiB  300 MiB/100.0 GiB",
				"Allocations\nID        Job ID  Task Group  Version  Desired  Status   Created               Modified\n<id>  web     web         0        run      pending",
			},
		},
		{
			name: "-verbose lists the node's host volumes",
			setup: func(t *testing.T, c testCluster) {
				c.AddNode(t, &api.Node{Name: "node-1", HostVolumes: map[string]*api.HostVolumeInfo{
					"certs": {Path: "/etc/ssl/certs", ReadOnly: true},
					"data":  {Path: "/srv/data"},
				}})
			},
			args: []string{"node", "status", "-verbose", "{node:node-1}"},
			outHas: []string{"Host Volumes       = certs,data\n",
				"Host Volumes\nName   ReadOnly  Source          ID\ncerts  true      /etc/ssl/certs\ndata   false     /srv/data\n"},
		},
		{
			name: "a draining node shows its drain",
			setup: func(t *testing.T, c testCluster) {
				twoNodesOneAlloc(t, c)
				client, _ := api.NewClient(&api.Config{Address: c.Addr()})
				if _, _, err := client.Nodes().UpdateDrain(nodeByName(t, c, "node-1"), &api.DrainSpec{Deadline: time.Hour}, false, nil); err != nil {
					t.Fatal(err)
				}
			},
			args:   []string{"node", "status", "-short", "{node:node-1}"},
			outHas: []string{"Drain              = true\nEligibility        = ineligible"},
		},
		{
			name:  "json",
			setup: twoNodesOneAlloc,
			args:  []string{"node", "status", "-json", "{node:node-1}"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var n api.Node
				if err := json.Unmarshal([]byte(res.stdout), &n); err != nil || n.Name != "node-1" {
					t.Errorf("json: %v %s", err, res.stdout)
				}
			},
		},
		{name: "one-character prefix", setup: twoNodesOneAlloc, args: []string{"node", "status", "b"}, wantCode: 1,
			errHas: []string{`identifier "b" must contain at least two characters`}},
		{name: "ambiguous prefix", fakeOnly: true, setup: twoNodesOneAlloc, args: []string{"node", "status", "bbbb"}, wantCode: 1,
			errHas: []string{"Prefix matched multiple nodes\n\nID", "node-1", "node-2"}},
		{name: "unknown node", setup: twoNodesOneAlloc, args: []string{"node", "status", "ffff"}, wantCode: 1,
			errHas: []string{`No node with prefix or ID "ffff" found`}},
		{name: "-self on an agent without a client", args: []string{"node", "status", "-self"}, wantCode: 1,
			errHas: []string{"is not a client; -self needs a client agent"}},
		{name: "-self and an argument", args: []string{"node", "status", "-self", "x"}, wantCode: 1,
			errHas: []string{"either one argument, <node>, or -self"}},
	})
}

func TestNodeDrain(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:     "enable follows the allocations until the drain completes",
			fakeOnly: true,
			setup:    twoNodesOneAlloc,
			args:     []string{"node", "drain", "-enable", "-deadline", "30m", "{node:node-1}"},
			wantOut: `Node "<id>" drain strategy set
<time>: Ctrl-C to stop monitoring: will not cancel the node drain
<time>: Alloc "<id>" marked for migration
<time>: Alloc "<id>" draining
<time>: Alloc "<id>" status pending -> complete
<time>: All allocations on node "<id>" have stopped
<time>: Node "<id>" drain complete`,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				body := c.fake().requestsTo("PUT", "/v1/node/"+node1+"/drain")[0].Body
				if !strings.Contains(body, `"Deadline":1800000000000`) || !strings.Contains(body, `"MarkEligible":false`) {
					t.Errorf("drain body = %s", body)
				}
			},
		},
		{
			name:     "force stops at once",
			fakeOnly: true,
			setup:    twoNodesOneAlloc,
			args:     []string{"node", "drain", "-enable", "-force", "-ignore-system", "{node:node-1}"},
			outHas:   []string{`Alloc "<id>" draining`, `Node "<id>" drain complete`},
			outNot:   []string{"marked for migration"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				body := c.fake().requestsTo("PUT", "/v1/node/"+node1+"/drain")[0].Body
				if !strings.Contains(body, `"Deadline":-1`) || !strings.Contains(body, `"IgnoreSystemJobs":true`) {
					t.Errorf("drain body = %s", body)
				}
			},
		},
		{
			name:     "a stuck drain gives up a minute after its deadline",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				twoNodesOneAlloc(t, c)
				c.fake().drainStuck = true
			},
			args:     []string{"node", "drain", "-enable", "-deadline", "1m", "{node:node-1}"},
			now:      advancingClock(fakeEpoch, 20*time.Second),
			wantCode: 1,
			errHas: []string{`Node "<id>" drain has not completed 1m0s after its deadline; 1 allocation still to move.`,
				"nomad node drain -monitor <id>"},
		},
		{
			name:    "detach returns once the drain is set, with meta and message",
			setup:   twoNodesOneAlloc,
			args:    []string{"node", "drain", "-enable", "-detach", "-no-deadline", "-m", "kernel upgrade", "-meta", "ticket=OPS-1", "{node:node-1}"},
			wantOut: `Node "<id>" drain strategy set`,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				n := readNode(t, c, nodeByName(t, c, "node-1"))
				if n.DrainStrategy == nil || n.DrainStrategy.Deadline != 0 || n.SchedulingEligibility != api.NodeSchedulingIneligible {
					t.Errorf("node = %+v", n.DrainStrategy)
				}
				if n.LastDrain == nil || n.LastDrain.Meta["message"] != "kernel upgrade" || n.LastDrain.Meta["ticket"] != "OPS-1" {
					t.Errorf("drain meta = %+v", n.LastDrain)
				}
			},
		},
		{
			name: "disable makes the node eligible again",
			setup: func(t *testing.T, c testCluster) {
				twoNodesOneAlloc(t, c)
				runCommand(t, c.Addr(), runOpts{}, "node", "drain", "-enable", "-detach", nodeByName(t, c, "node-1"))
			},
			args:    []string{"node", "drain", "-disable", "{node:node-1}"},
			wantOut: `Node "<id>" drain strategy unset`,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if n := readNode(t, c, nodeByName(t, c, "node-1")); n.DrainStrategy != nil || n.SchedulingEligibility != api.NodeSchedulingEligible {
					t.Errorf("node still draining or ineligible: %+v %s", n.DrainStrategy, n.SchedulingEligibility)
				}
			},
		},
		{
			name: "disable with -keep-ineligible",
			setup: func(t *testing.T, c testCluster) {
				twoNodesOneAlloc(t, c)
				runCommand(t, c.Addr(), runOpts{}, "node", "drain", "-enable", "-detach", nodeByName(t, c, "node-1"))
			},
			args: []string{"node", "drain", "-disable", "-keep-ineligible", "{node:node-1}"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if n := readNode(t, c, nodeByName(t, c, "node-1")); n.SchedulingEligibility != api.NodeSchedulingIneligible {
					t.Errorf("eligibility = %s", n.SchedulingEligibility)
				}
			},
		},
		{
			name:    "a prefix asks first",
			setup:   twoNodesOneAlloc,
			args:    []string{"node", "drain", "-enable", "-detach", "{node8:node-1}"},
			stdin:   "y\n",
			outHas:  []string{`Are you sure you want to enable drain mode for node "<id>"? [y/N]`, "drain strategy set"},
			wantOut: "",
		},
		{
			name: "-self drains the agent's own node",
			setup: func(t *testing.T, c testCluster) {
				twoNodesOneAlloc(t, c)
				if f := c.fake(); f != nil {
					f.selfNodeID = node2
				}
			},
			fakeOnly: true,
			args:     []string{"node", "drain", "-enable", "-detach", "-self"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if n := readNode(t, c, node2); n.DrainStrategy == nil {
					t.Error("node-2 is not draining")
				}
			},
		},
		{name: "monitor a node that is not draining", setup: twoNodesOneAlloc, args: []string{"node", "drain", "-monitor", "{node:node-1}"},
			wantOut: `Node "<id>" is not draining`},
		{name: "neither enable nor disable", args: []string{"node", "drain", "x"}, wantCode: 1,
			errHas: []string{"exactly one of -enable or -disable must be given (or -monitor)"}},
		{name: "both enable and disable", args: []string{"node", "drain", "-enable", "-disable", "x"}, wantCode: 1,
			errHas: []string{"exactly one of -enable or -disable"}},
		{name: "monitor with enable", args: []string{"node", "drain", "-monitor", "-enable", "x"}, wantCode: 1,
			errHas: []string{"-monitor follows an existing drain"}},
		{name: "deadline with disable", args: []string{"node", "drain", "-disable", "-deadline", "1h", "x"}, wantCode: 1,
			errHas: []string{"-deadline, -force and -no-deadline apply only with -enable"}},
		{name: "two deadline flags", args: []string{"node", "drain", "-enable", "-force", "-no-deadline", "x"}, wantCode: 1,
			errHas: []string{"only one of -deadline, -force and -no-deadline"}},
		{name: "unparsable deadline", args: []string{"node", "drain", "-enable", "-deadline", "soon", "x"}, wantCode: 1,
			errHas: []string{`invalid -deadline "soon"`}},
		{name: "zero deadline", args: []string{"node", "drain", "-enable", "-deadline", "0s", "x"}, wantCode: 1,
			errHas: []string{"must be positive (use -force to stop allocations at once)"}},
		{name: "keep-ineligible with enable", args: []string{"node", "drain", "-enable", "-keep-ineligible", "x"}, wantCode: 1,
			errHas: []string{"-keep-ineligible applies only with -disable"}},
		{name: "no node", args: []string{"node", "drain", "-enable"}, wantCode: 1,
			errHas: []string{"either one argument, <node>, or -self"}},
		{name: "bad meta", args: []string{"node", "drain", "-enable", "-meta", "novalue", "x"}, wantCode: 1,
			errHas: []string{`invalid -meta "novalue": expected key=value`}},
	})
}

func TestNodeEligibility(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:    "disable",
			setup:   twoNodesOneAlloc,
			args:    []string{"node", "eligibility", "-disable", "{node:node-1}"},
			wantOut: `Node "<id>" scheduling eligibility set: ineligible for scheduling`,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if n := readNode(t, c, nodeByName(t, c, "node-1")); n.SchedulingEligibility != api.NodeSchedulingIneligible {
					t.Errorf("eligibility = %s", n.SchedulingEligibility)
				}
			},
		},
		{
			name: "a draining node cannot be made eligible",
			setup: func(t *testing.T, c testCluster) {
				twoNodesOneAlloc(t, c)
				runCommand(t, c.Addr(), runOpts{}, "node", "drain", "-enable", "-detach", nodeByName(t, c, "node-1"))
			},
			args:     []string{"node", "eligibility", "-enable", "{node:node-1}"},
			wantCode: 1,
			errHas:   []string{"can not set node's scheduling eligibility to eligible while it is draining"},
		},
		{name: "neither flag", args: []string{"node", "eligibility", "x"}, wantCode: 1,
			errHas: []string{"exactly one of -enable or -disable must be given"}},
		{name: "no node", args: []string{"node", "eligibility", "-enable"}, wantCode: 1,
			errHas: []string{"either one argument, <node>, or -self"}},
	})
}

func TestNodeDrainInterruptedMonitorSaysTheDrainGoesOn(t *testing.T) {
	f := newFakeAgent(t)
	twoNodesOneAlloc(t, f)
	f.drainStuck = true
	res := runCommand(t, f.Addr(), runOpts{timeout: 300 * time.Millisecond}, "node", "drain", "-enable", "-no-deadline", node1)
	if res.code != 1 || !strings.Contains(res.stdout, "Monitoring stopped; the drain goes on") {
		t.Fatalf("%+v", res)
	}
}
