package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// cluster is three servers joined by retry_join and one client.
type cluster struct {
	servers []*agent
	client  *agent
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	return startClusterWith(t, func(server bool) string { return "" })
}

// startClusterWith is startCluster with extra configuration for each
// agent, by role.
func startClusterWith(t *testing.T, extra func(server bool) string) *cluster {
	t.Helper()
	p := freePorts(t, 12)
	c := &cluster{}
	var serfAddrs, rpcAddrs []string
	for i := 0; i < 3; i++ {
		serfAddrs = append(serfAddrs, fmt.Sprintf("%q", fmt.Sprintf("127.0.0.1:%d", p[3*i+2])))
		rpcAddrs = append(rpcAddrs, fmt.Sprintf("%q", fmt.Sprintf("127.0.0.1:%d", p[3*i+1])))
	}
	for i := 0; i < 3; i++ {
		s := newAgent(t, fmt.Sprintf("server-%d", i+1), ports{HTTP: p[3*i], RPC: p[3*i+1], Serf: p[3*i+2]}, fmt.Sprintf(`
server {
  enabled          = true
  bootstrap_expect = 3
  num_schedulers   = 1
  server_join {
    retry_join     = [%s]
    retry_interval = "200ms"
  }
}
%s
`, strings.Join(serfAddrs, ", "), extra(true)))
		c.servers = append(c.servers, s)
	}
	c.client = newAgent(t, "client-1", ports{HTTP: p[9], RPC: p[10], Serf: p[11]}, fmt.Sprintf(`
client {
  enabled = true
  servers = [%s]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
%s
`, strings.Join(rpcAddrs, ", "), extra(false)))
	for _, s := range c.servers {
		s.start()
	}
	c.client.start()
	return c
}

// leaderOf returns the leader every running server names, or "" while
// they disagree or know none.
func (c *cluster) agreedLeader() string {
	leader := ""
	for _, s := range c.servers {
		if !s.running() {
			continue
		}
		l, err := s.api().Status().Leader()
		if err != nil || l == "" || (leader != "" && l != leader) {
			return ""
		}
		leader = l
	}
	return leader
}

// serverAt returns the server whose RPC address is addr.
func (c *cluster) serverAt(addr string) *agent {
	for _, s := range c.servers {
		if s.rpcAddr() == addr {
			return s
		}
	}
	return nil
}

// runningAlloc returns the ID of the job's running allocation, "" if none.
func runningAlloc(a *agent, jobID string) string {
	allocs, _, err := a.api().Jobs().Allocations(jobID, false, &api.QueryOptions{AllowStale: true})
	if err != nil {
		return ""
	}
	for _, al := range allocs {
		if al.ClientStatus == "running" {
			return al.ID
		}
	}
	return ""
}

// Three servers find each other through retry_join and elect a leader; a
// client runs jobs; the leader is SIGKILLed; the survivors elect a new one
// within seconds, a new job schedules, nothing registered before is lost,
// and the killed server restarts from its data dir and catches up. The
// failover time is workload W3.
func TestCluster_Failover(t *testing.T) {
	c := startCluster(t)

	var leaderAddr string
	waitFor(t, 60*time.Second, "the servers to agree on a leader", func() bool {
		leaderAddr = c.agreedLeader()
		return leaderAddr != ""
	})
	peers, err := c.servers[0].api().Status().Peers()
	if err != nil || len(peers) != 3 {
		t.Fatalf("peers: %v %v", peers, err)
	}
	waitFor(t, 60*time.Second, "the client node to be ready", func() bool {
		nodes, _, err := c.servers[0].api().Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})

	// Register through every server: followers forward to the leader.
	var jobs []string
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("before-%d", i)
		if _, _, err := c.servers[i%3].api().Jobs().Register(sleepJob(id), nil); err != nil {
			t.Fatalf("registering %s through %s: %v", id, c.servers[i%3].name, err)
		}
		jobs = append(jobs, id)
	}
	allocs := map[string]string{}
	waitFor(t, 60*time.Second, "every job's allocation to run", func() bool {
		for _, id := range jobs {
			if allocs[id] == "" {
				allocs[id] = runningAlloc(c.servers[0], id)
			}
			if allocs[id] == "" {
				return false
			}
		}
		return true
	})

	out, code := c.servers[1].cli("server", "members")
	if code != 0 || strings.Count(out, "alive") != 3 || strings.Count(out, "true") != 1 {
		t.Fatalf("server members (exit %d):\n%s", code, out)
	}

	// Kill the leader.
	old := c.serverAt(leaderAddr)
	if old == nil {
		t.Fatalf("no server has the leader's address %s", leaderAddr)
	}
	var survivors []*agent
	for _, s := range c.servers {
		if s != old {
			survivors = append(survivors, s)
		}
	}
	killedAt := time.Now()
	old.kill()

	// Submit a job at once, through a survivor; it waits out the election.
	registered := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, _, err := survivors[0].api().Jobs().Register(sleepJob("after-failover"), nil)
			if err == nil || time.Now().After(deadline) {
				registered <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()

	var newLeader string
	waitFor(t, 30*time.Second, "the survivors to agree on a new leader", func() bool {
		newLeader = c.agreedLeader()
		return newLeader != "" && newLeader != leaderAddr
	})
	failover := time.Since(killedAt)
	waitFor(t, 60*time.Second, "the new job's allocation to run", func() bool {
		return runningAlloc(survivors[0], "after-failover") != ""
	})
	placement := time.Since(killedAt)
	if err := <-registered; err != nil {
		t.Fatalf("registering after the failover: %v", err)
	}
	line := fmt.Sprintf("W3 failover_s=%.2f first_placement_s=%.2f", failover.Seconds(), placement.Seconds())
	t.Log(line)
	fmt.Println(line)

	// Nothing registered before the kill is missing.
	for _, s := range survivors {
		list, _, err := s.api().Jobs().List(&api.QueryOptions{AllowStale: true})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range list {
			ids = append(ids, j.ID)
		}
		for _, id := range append(slices.Clone(jobs), "after-failover") {
			if !slices.Contains(ids, id) {
				t.Errorf("%s: job %s missing after the failover (have %v)", s.name, id, ids)
			}
		}
		for id, allocID := range allocs {
			al, _, err := s.api().Allocations().Info(allocID, &api.QueryOptions{AllowStale: true})
			if err != nil || al.JobID != id {
				t.Errorf("%s: allocation %s of %s: %v", s.name, allocID, id, err)
			}
		}
	}

	// The killed server restarts from its data dir and catches up.
	old.start()
	waitFor(t, 60*time.Second, "the restarted server to follow the new leader", func() bool {
		l, err := old.api().Status().Leader()
		return err == nil && l == newLeader
	})
	waitFor(t, 30*time.Second, "the restarted server to have the new job", func() bool {
		_, _, err := old.api().Jobs().Info("after-failover", &api.QueryOptions{AllowStale: true})
		return err == nil
	})
	waitFor(t, 30*time.Second, "every server to be alive in gossip", func() bool {
		out, code := old.cli("server", "members")
		return code == 0 && strings.Count(out, "alive") == 3
	})

	// A snapshot taken now restores the cluster to this point.
	snap := filepath.Join(t.TempDir(), "backup.snap")
	out, code = survivors[1].cli("operator", "snapshot", "save", snap)
	if code != 0 {
		t.Fatalf("snapshot save (exit %d): %s", code, out)
	}
	if st, err := os.Stat(snap); err != nil || st.Size() == 0 {
		t.Fatalf("snapshot file: %v", err)
	}
	if _, _, err := survivors[1].api().Jobs().Register(sleepJob("after-snapshot"), nil); err != nil {
		t.Fatal(err)
	}
	out, code = old.cli("operator", "snapshot", "restore", snap)
	if code != 0 {
		t.Fatalf("snapshot restore (exit %d): %s", code, out)
	}
	for _, s := range c.servers {
		waitFor(t, 30*time.Second, s.name+" to have restored the snapshot", func() bool {
			_, _, err := s.api().Jobs().Info("after-snapshot", &api.QueryOptions{AllowStale: true})
			_, _, err2 := s.api().Jobs().Info("after-failover", &api.QueryOptions{AllowStale: true})
			return err != nil && err2 == nil
		})
	}
}
