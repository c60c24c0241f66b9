package autopilot

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func threeServers() Input {
	return Input{
		Config:   structs.DefaultAutopilotConfig(),
		LeaderID: "a",
		Peers:    []Peer{{ID: "a", Address: "10.0.0.1:4647", Voter: true}, {ID: "b", Voter: true}, {ID: "c", Voter: true}},
		Members: map[string]Member{
			"a": {Name: "a.global", Status: "alive", Version: "1.0"},
			"b": {Name: "b.global", Status: "alive"},
			"c": {Name: "c.global", Status: "alive"},
		},
		Stats: map[string]structs.RaftStats{
			"a": {LastContact: 0, LastTerm: 2, LastIndex: 1000},
			"b": {LastContact: 10 * time.Millisecond, LastTerm: 2, LastIndex: 990},
			"c": {LastContact: 20 * time.Millisecond, LastTerm: 2, LastIndex: 1000},
		},
		Now: t0,
	}
}

func TestHealth(t *testing.T) {
	cases := []struct {
		name      string
		change    func(in *Input)
		unhealthy string // the one server judged unhealthy, "" for none
		tolerance int
	}{
		{"all healthy", func(*Input) {}, "", 1},
		{"gossip says failed", func(in *Input) { in.Members["b"] = Member{Status: "failed"} }, "b", 0},
		{"unknown to gossip", func(in *Input) { delete(in.Members, "c") }, "c", 0},
		{"did not answer", func(in *Input) { delete(in.Stats, "b") }, "b", 0},
		{"no contact for too long", func(in *Input) {
			in.Stats["b"] = structs.RaftStats{LastContact: time.Second, LastTerm: 2, LastIndex: 1000}
		}, "b", 0},
		{"never contacted", func(in *Input) {
			in.Stats["c"] = structs.RaftStats{LastContact: -1, LastTerm: 2, LastIndex: 1000}
		}, "c", 0},
		{"older term", func(in *Input) {
			in.Stats["c"] = structs.RaftStats{LastContact: time.Millisecond, LastTerm: 1, LastIndex: 1000}
		}, "c", 0},
		{"log trails too far", func(in *Input) {
			in.Stats["b"] = structs.RaftStats{LastContact: time.Millisecond, LastTerm: 2, LastIndex: 749}
		}, "b", 0},
		{"trails exactly MaxTrailingLogs", func(in *Input) {
			in.Stats["b"] = structs.RaftStats{LastContact: time.Millisecond, LastTerm: 2, LastIndex: 750}
		}, "", 1},
		{"a non-voter does not count for tolerance", func(in *Input) {
			in.Peers = append(in.Peers, Peer{ID: "d"})
			in.Members["d"] = Member{Status: "failed"}
		}, "d", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := threeServers()
			tc.change(&in)
			var tr Tracker
			out := tr.Health(in)
			must.Eq(t, tc.unhealthy == "", out.Healthy)
			must.Eq(t, tc.tolerance, out.FailureTolerance)
			must.Eq(t, "a", out.Leader)
			must.Eq(t, []string{"a", "b", "c"}, out.Voters)
			for _, s := range out.Servers {
				must.Eq(t, s.ID != tc.unhealthy, s.Healthy, must.Sprintf("server %s", s.ID))
				must.Eq(t, s.ID == "a", s.Leader)
			}
		})
	}
}

func TestHealth_StableSince(t *testing.T) {
	var tr Tracker
	in := threeServers()
	out := tr.Health(in)
	must.Eq(t, t0, out.Servers[1].StableSince)

	// Still healthy later: stable since the first judgement.
	in.Now = t0.Add(time.Minute)
	out = tr.Health(in)
	must.Eq(t, t0, out.Servers[1].StableSince)

	// Turning unhealthy restarts the clock.
	in.Now = t0.Add(2 * time.Minute)
	in.Members["b"] = Member{Status: "failed"}
	out = tr.Health(in)
	must.Eq(t, in.Now, out.Servers[1].StableSince)
	must.Eq(t, t0, out.Servers[2].StableSince)
}
