package command

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// TestAgentAndScalingCommands: agent-info, check, node config, monitor
// and the scaling policy commands against a real dev agent.
func TestAgentAndScalingCommands(t *testing.T) {
	c := newRealAgent(t)
	job := testJob("web", 1, 64)
	job.TaskGroups[0].Scaling = &api.ScalingPolicy{Min: new(int64(1)), Max: new(int64(5)), Policy: map[string]any{"cooldown": "1m"}}
	registerJob(t, c, job)
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})
	policies, _, err := client.Scaling().ListPolicies(nil)
	if err != nil || len(policies) != 1 {
		t.Fatalf("policies: %v %v", policies, err)
	}
	policyID := policies[0].ID

	cases := []struct {
		name     string
		args     []string
		timeout  int // ms; the monitor runs until interrupted
		wantCode int
		outHas   []string
		errHas   []string
		check    func(t *testing.T, out string)
	}{
		{name: "agent-info", args: []string{"agent-info"}, outHas: []string{"agent\n  client = ", "raft\n", "  num_peers = 0", "runtime\n  arch = "}},
		{name: "agent-info as JSON", args: []string{"agent-info", "-json"}, check: func(t *testing.T, out string) {
			var self api.AgentSelf
			if err := json.Unmarshal([]byte(out), &self); err != nil || self.Stats["nomad"]["leader"] != "true" {
				t.Errorf("agent-info -json: %v %s", err, out)
			}
		}},
		{name: "check a healthy server", args: []string{"check"}},
		{name: "check a server short of peers", args: []string{"check", "-min-peers", "2"}, wantCode: 2,
			outHas: []string{"known peers: 0, is less than expected number of peers: 2"}},
		{name: "node config needs a flag", args: []string{"node", "config"}, wantCode: 1, errHas: []string{"Exactly one of -servers or -update-servers"}},
		{name: "node config -update-servers is refused", args: []string{"node", "config", "-update-servers", "10.0.0.1:4647"}, wantCode: 1,
			errHas: []string{"Error updating server list", "not supported"}},
		{name: "monitor streams until interrupted", args: []string{"monitor", "-log-level", "debug"}, timeout: 300},
		{name: "monitor of another server", args: []string{"monitor", "-server-id", "elsewhere"}, wantCode: 1, errHas: []string{"Error starting monitor"}},
		{name: "node intro create", args: []string{"node", "intro", "create", "-node-name", "n9", "-ttl", "15m"},
			outHas: []string{"Successfully generated client introduction token:\neyJ"}},
		{name: "node intro create as JSON", args: []string{"node", "intro", "create", "-json"}, outHas: []string{`"JWT": "eyJ`}},
		{name: "node intro create with a ttl too long", args: []string{"node", "intro", "create", "-ttl", "10000h"}, wantCode: 1,
			errHas: []string{"Error generating client introduction token"}},
		{name: "scaling policy list", args: []string{"scaling", "policy", "list"},
			outHas: []string{"ID  ", "Enabled  Type        Target", policyID + "  true     horizontal  Namespace:default,Job:web,Group:web"}},
		{name: "scaling policy list of another job", args: []string{"scaling", "policy", "list", "-job", "nope"}, outHas: []string{"No policies found"}},
		{name: "scaling policy info by prefix", args: []string{"scaling", "policy", "info", policyID[:6]},
			outHas: []string{"ID      = " + policyID, "Enabled = true", "Min     = 1", "Max     = 5", "Policy:\n{\n  \"cooldown\": \"1m\"\n}"}},
		{name: "scaling policy info of a missing one", args: []string{"scaling", "policy", "info", "ffffffff"}, wantCode: 1,
			errHas: []string{`No scaling policy with prefix or ID "ffffffff" found`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := runOpts{}
			if tc.timeout > 0 {
				opts.timeout = time.Duration(tc.timeout) * time.Millisecond
			}
			res := runCommand(t, c.Addr(), opts, tc.args...)
			if res.code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:%s\nstderr:%s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			for _, want := range tc.outHas {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			for _, want := range tc.errHas {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
				}
			}
			if tc.check != nil {
				tc.check(t, res.stdout)
			}
		})
	}
}

// TestUi: the pages of a job, an allocation and a node, and the home page.
func TestUi(t *testing.T) {
	c := newRealAgent(t)
	nodeID := c.AddNode(t, &api.Node{Name: "n1"})
	registerJob(t, c, testJob("web", 1, 64))
	c.Settle(t)
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})
	allocs, _, err := client.Jobs().Allocations("web", false, nil)
	if err != nil || len(allocs) != 1 {
		t.Fatalf("allocs: %v %v", allocs, err)
	}
	cases := []struct {
		args     []string
		wantCode int
		stdout   string
		errHas   string
	}{
		{args: []string{"ui", "-show-url"}, stdout: c.Addr() + "/ui/\n"},
		{args: []string{"ui", "-show-url", "web"}, stdout: c.Addr() + "/ui/jobs/web@default\n"},
		{args: []string{"ui", "-show-url", allocs[0].ID[:7]}, stdout: c.Addr() + "/ui/allocations/" + allocs[0].ID + "\n"},
		{args: []string{"ui", "-show-url", nodeID[:8]}, stdout: c.Addr() + "/ui/clients/" + nodeID + "\n"},
		{args: []string{"ui", "-show-url", "zz"}, wantCode: 1, errHas: `No job, allocation or node found for "zz"`},
		{args: []string{"ui", "-authenticate"}, wantCode: 1, errHas: "-authenticate option is not supported"},
	}
	for _, tc := range cases {
		res := runCommand(t, c.Addr(), runOpts{}, tc.args...)
		if res.code != tc.wantCode || (tc.stdout != "" && res.stdout != tc.stdout) || !strings.Contains(res.stderr, tc.errHas) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, res.code, res.stdout, res.stderr)
		}
	}
}
