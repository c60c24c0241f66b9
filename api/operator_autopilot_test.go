package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// Our JSON reads into Nomad's types and back, durations as strings.
func TestAutopilotJSON_NomadCompatible(t *testing.T) {
	ours := &AutopilotConfiguration{CleanupDeadServers: true, LastContactThreshold: 200 * time.Millisecond,
		MaxTrailingLogs: 250, MinQuorum: 3, ServerStabilizationTime: 10 * time.Second, ModifyIndex: 7}
	b, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	var theirs nomadapi.AutopilotConfiguration
	if err := json.Unmarshal(b, &theirs); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if theirs.LastContactThreshold != ours.LastContactThreshold || theirs.ServerStabilizationTime != ours.ServerStabilizationTime ||
		theirs.MinQuorum != 3 || theirs.ModifyIndex != 7 || !theirs.CleanupDeadServers {
		t.Fatalf("Nomad's client read %+v from %s", theirs, b)
	}
	b, _ = json.Marshal(&theirs)
	var back AutopilotConfiguration
	if err := json.Unmarshal(b, &back); err != nil || back != *ours {
		t.Fatalf("round trip: %v %+v", err, back)
	}

	h := &ServerHealth{ID: "a", LastContact: 35 * time.Millisecond, Healthy: true}
	b, _ = json.Marshal(h)
	var nh nomadapi.ServerHealth
	if err := json.Unmarshal(b, &nh); err != nil || nh.LastContact != h.LastContact {
		t.Fatalf("server health: %v %+v from %s", err, nh, b)
	}
}

func TestAutopilotEndpoints(t *testing.T) {
	cfgBody := `{"CleanupDeadServers":true,"LastContactThreshold":"200ms","MaxTrailingLogs":250,"MinQuorum":0,` +
		`"ServerStabilizationTime":"10s","EnableRedundancyZones":false,"DisableUpgradeMigration":false,` +
		`"EnableCustomUpgrades":false,"CreateIndex":4,"ModifyIndex":9}`
	runEndpointCases(t, []endpointCase{
		{
			name:     "get",
			reply:    reply{Body: cfgBody},
			call:     func(c *Client) (any, error) { r, _, err := c.Operator().AutopilotGetConfiguration(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/operator/autopilot/configuration",
			check: func(t *testing.T, out any) {
				if c := out.(*AutopilotConfiguration); c.LastContactThreshold != 200*time.Millisecond || c.ModifyIndex != 9 {
					t.Fatalf("config = %+v", c)
				}
			},
		},
		{
			name:  "cas",
			reply: reply{Body: "false"},
			call: func(c *Client) (any, error) {
				ok, _, err := c.Operator().AutopilotCASConfiguration(&AutopilotConfiguration{ModifyIndex: 9}, nil)
				if ok {
					t.Fatal("CAS reported applied")
				}
				return nil, err
			},
			wantMeth: "PUT", wantPath: "/v1/operator/autopilot/configuration", wantQuery: url.Values{"cas": {"9"}},
			wantBody: `{"LastContactThreshold":"0s","ServerStabilizationTime":"0s","CleanupDeadServers":false,"MaxTrailingLogs":0,` +
				`"MinQuorum":0,"EnableRedundancyZones":false,"DisableUpgradeMigration":false,"EnableCustomUpgrades":false,` +
				`"CreateIndex":0,"ModifyIndex":9}`,
		},
		{
			name:     "transfer by id",
			call:     func(c *Client) (any, error) { return nil, c.Operator().RaftTransferLeadershipByID("s2", nil) },
			wantMeth: "PUT", wantPath: "/v1/operator/raft/transfer-leadership", wantQuery: url.Values{"id": {"s2"}},
		},
		{
			name: "transfer by address",
			call: func(c *Client) (any, error) {
				return nil, c.Operator().RaftTransferLeadershipByAddress("10.0.0.2:4647", nil)
			},
			wantMeth: "PUT", wantPath: "/v1/operator/raft/transfer-leadership", wantQuery: url.Values{"address": {"10.0.0.2:4647"}},
		},
	})
}

// An unhealthy cluster is a 429 with the health in the body: an error,
// sent once, with the health beside it.
func TestAutopilotServerHealth_Unhealthy(t *testing.T) {
	agent := newFakeAgent(t, reply{Status: http.StatusTooManyRequests,
		Body: `{"Healthy":false,"FailureTolerance":0,"Servers":[{"ID":"a","LastContact":"1.5s","Healthy":false}],"Leader":"b","Voters":["a","b"]}`})
	out, _, err := agent.client(t).Operator().AutopilotServerHealth(nil)
	var ure *UnexpectedResponseError
	if !errors.As(err, &ure) || ure.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("err = %v", err)
	}
	if out == nil || out.Healthy || out.Servers[0].LastContact != 1500*time.Millisecond {
		t.Fatalf("health = %+v", out)
	}
	if n := len(agent.all()); n != 1 {
		t.Fatalf("sent %d times", n)
	}
}
