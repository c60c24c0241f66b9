package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// raftPeers returns the Raft configuration's servers by node name, as
// the agent sees them.
func raftPeers(a *agent) map[string]*api.RaftServer {
	conf, err := a.api().Operator().RaftGetConfiguration(&api.QueryOptions{AllowStale: true})
	if err != nil {
		return nil
	}
	out := map[string]*api.RaftServer{}
	for _, s := range conf.Servers {
		out[s.Node] = s
	}
	return out
}

// memberStatus returns a server's gossip status as a seen by a.
func memberStatus(a *agent, name string) string {
	members, err := a.api().Agent().Members()
	if err != nil {
		return ""
	}
	for _, m := range members.Members {
		if m.Name == name {
			return m.Status
		}
	}
	return ""
}

// Servers joined by hand with `nomad server join` become voters; a dead
// one leaves Raft through `nomad server force-leave` or `nomad operator
// raft remove-peer`, and comes back as a voter when it restarts.
func TestCluster_Membership(t *testing.T) {
	p := freePorts(t, 9)
	var servers []*agent
	for i := 0; i < 3; i++ {
		expect := 0
		if i == 0 {
			expect = 1
		}
		servers = append(servers, newAgent(t, fmt.Sprintf("server-%d", i+1), ports{HTTP: p[3*i], RPC: p[3*i+1], Serf: p[3*i+2]}, fmt.Sprintf(`
server {
  enabled          = true
  bootstrap_expect = %d
  num_schedulers   = 1
}
`, expect)))
	}
	s1, s2, s3 := servers[0], servers[1], servers[2]
	for _, s := range servers {
		s.start()
	}
	waitFor(t, 30*time.Second, "server-1 to elect itself", func() bool {
		l, err := s1.api().Status().Leader()
		return err == nil && l == s1.rpcAddr()
	})

	for _, s := range []*agent{s2, s3} {
		var out string
		var code int
		waitFor(t, 30*time.Second, s.name+" to join", func() bool {
			out, code = s.cli("server", "join", s1.serfAddr())
			return code == 0
		})
		if !strings.Contains(out, "Joined 1 servers successfully") {
			t.Fatalf("server join: %s", out)
		}
	}
	waitFor(t, 30*time.Second, "three voters", func() bool {
		peers := raftPeers(s1)
		return len(peers) == 3 && peers["server-3.global"] != nil && peers["server-3.global"].Voter
	})
	out, code := s2.cli("operator", "raft", "list-peers")
	if code != 0 || strings.Count(out, "follower") != 2 || strings.Count(out, "leader") != 1 {
		t.Fatalf("list-peers (exit %d):\n%s", code, out)
	}

	// A dead server leaves Raft by force-leave.
	s3.kill()
	waitFor(t, 60*time.Second, "server-3 to be seen failed", func() bool {
		return memberStatus(s1, "server-3.global") == "failed"
	})
	if out, code := s2.cli("server", "force-leave", "server-3"); code != 0 {
		t.Fatalf("force-leave (exit %d): %s", code, out)
	}
	waitFor(t, 30*time.Second, "server-3 to leave Raft", func() bool {
		peers := raftPeers(s1)
		return len(peers) == 2 && peers["server-3.global"] == nil
	})
	if got := memberStatus(s1, "server-3.global"); got != "left" {
		t.Fatalf("server-3 is %q after force-leave, want left", got)
	}

	// Restarted, it rejoins the members it knew and is a voter again.
	s3.start()
	waitFor(t, 60*time.Second, "server-3 to be a voter again", func() bool {
		peers := raftPeers(s1)
		return len(peers) == 3 && peers["server-3.global"] != nil
	})

	// remove-peer takes a dead server out of Raft by its ID.
	id := raftPeers(s1)["server-3.global"].ID
	s3.kill()
	out, code = s1.cli("operator", "raft", "remove-peer", "-peer-id="+id)
	if code != 0 || !strings.Contains(out, "Removed peer with id") {
		t.Fatalf("remove-peer (exit %d): %s", code, out)
	}
	peers := raftPeers(s1)
	if len(peers) != 2 || peers["server-3.global"] != nil {
		t.Fatalf("peers after remove-peer: %v", peers)
	}
	// The two left still commit.
	if _, _, err := s2.api().Jobs().Register(sleepJob("after-removal"), nil); err != nil {
		t.Fatalf("registering with two servers: %v", err)
	}
}
