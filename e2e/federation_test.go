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
	"github.com/opennomad/nomad/tlsconf/tlsconftest"
)

// Two regions of one server each, federated by joining their gossip: each
// lists both regions and both servers, and a job written for regionB
// through regionA's API (by the api package and by the CLI's -region
// flag) lives in regionB and is read back through regionA.
func TestFederation_TwoRegions(t *testing.T) {
	a, b := twoRegions(t, func(string) string { return "" })
	// Each server leads its own region: two leaders, one per region.
	out, code := a.cli("server", "members")
	if code != 0 || !strings.Contains(out, "Region") || strings.Count(out, "true") != 2 ||
		!strings.Contains(out, "a1.regionA") || !strings.Contains(out, "b1.regionB") {
		t.Fatalf("server members (exit %d):\n%s", code, out)
	}
	// Neither Raft took in the other region's server.
	for _, s := range []*agent{a, b} {
		if peers := raftPeers(s); len(peers) != 1 {
			t.Fatalf("%s has raft peers %v", s.name, peers)
		}
	}

	inB := &api.WriteOptions{Region: "regionB"}
	if _, _, err := a.api().Jobs().Register(sleepJob("in-b"), inB); err != nil {
		t.Fatalf("register in regionB through regionA: %v", err)
	}
	job, _, err := a.api().Jobs().Info("in-b", &api.QueryOptions{Region: "regionB"})
	if err != nil || *job.Region != "regionB" {
		t.Fatalf("read back through regionA: %v, %v", job, err)
	}
	if _, _, err := b.api().Jobs().Info("in-b", nil); err != nil {
		t.Fatalf("regionB's own view: %v", err)
	}
	if _, _, err := a.api().Jobs().Info("in-b", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("regionA must not hold regionB's job: %v", err)
	}

	// The CLI's -region flag.
	spec := filepath.Join(t.TempDir(), "cli.nomad.hcl")
	if err := os.WriteFile(spec, []byte(`job "by-cli" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/sleep" }
    }
  }
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := a.cli("job", "run", "-detach", "-region", "regionB", spec); code != 0 {
		t.Fatalf("job run -region regionB (exit %d):\n%s", code, out)
	}
	if out, code := a.cli("job", "status", "-region", "regionB", "by-cli"); code != 0 || !strings.Contains(out, "by-cli") {
		t.Fatalf("job status -region regionB (exit %d):\n%s", code, out)
	}
	if job, _, err := b.api().Jobs().Info("by-cli", nil); err != nil || *job.Region != "regionB" {
		t.Fatalf("the CLI's job in regionB: %v, %v", job, err)
	}

	// A region nobody serves.
	_, _, err = a.api().Jobs().Info("in-b", &api.QueryOptions{Region: "mars"})
	if err == nil || !strings.Contains(err.Error(), "No path to region") {
		t.Fatalf("unknown region: %v", err)
	}
}

// ACLs across two regions of real agents: regionA is authoritative, and
// regionB's server, given a management token of regionA as its
// replication token, copies regionA's policies and global tokens; a global
// token made through regionB is made in regionA and works in both, a
// local one only where it was made.
func TestFederation_ACLReplication(t *testing.T) {
	p := freePorts(t, 6)
	server := func(name, region, serverExtra, aclExtra string, i int) *agent {
		return newAgent(t, name, ports{HTTP: p[3*i], RPC: p[3*i+1], Serf: p[3*i+2]}, `
region = "`+region+`"
server {
  enabled              = true
  bootstrap_expect     = 1
  num_schedulers       = 1
  authoritative_region = "regionA"
  `+serverExtra+`
}
acl {
  enabled = true
  `+aclExtra+`
}
`)
	}
	a := server("a1", "regionA", "", "", 0)
	a.start()
	var boot *api.ACLToken
	waitFor(t, 30*time.Second, "the ACL bootstrap in regionA", func() bool {
		var err error
		boot, _, err = a.api().ACLTokens().Bootstrap(nil)
		return err == nil
	})
	// regionB joins by its configuration: joining by hand needs a token
	// regionB has only once it replicated.
	b := server("b1", "regionB", `server_join { retry_join = ["`+a.serfAddr()+`"] }`,
		`replication_token = "`+boot.SecretID+`"`, 1)
	b.start()
	as := func(ag *agent, secret string) *api.Client {
		c, err := api.NewClient(&api.Config{Address: fmt.Sprintf("http://127.0.0.1:%d", ag.ports.HTTP), SecretID: secret})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	waitFor(t, 30*time.Second, "b1 to elect itself", func() bool {
		l, err := b.api().Status().Leader()
		return err == nil && l == b.rpcAddr()
	})
	waitFor(t, 30*time.Second, "both regions in regionA's list", func() bool {
		regions, err := a.api().Regions().List()
		return err == nil && len(regions) == 2
	})

	// A policy written in regionA, and a global token through regionB.
	if _, err := as(a, boot.SecretID).ACLPolicies().Upsert(&api.ACLPolicy{Name: "readjobs",
		Rules: `namespace "default" { policy = "read" }`}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the policy in regionB", func() bool {
		pol, _, err := as(b, boot.SecretID).ACLPolicies().Info("readjobs", nil)
		return err == nil && pol != nil
	})
	global, _, err := as(b, boot.SecretID).ACLTokens().Create(&api.ACLToken{Name: "g", Type: "client",
		Policies: []string{"readjobs"}, Global: true}, nil)
	if err != nil {
		t.Fatalf("global token through regionB: %v", err)
	}
	if _, _, err := as(a, boot.SecretID).ACLTokens().Info(global.AccessorID, nil); err != nil {
		t.Fatalf("the global token is regionA's: %v", err)
	}
	local, _, err := as(b, boot.SecretID).ACLTokens().Create(&api.ACLToken{Name: "l", Type: "client",
		Policies: []string{"readjobs"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the global token to work in regionB", func() bool {
		_, _, err := as(b, global.SecretID).Jobs().List(nil)
		return err == nil
	})
	if _, _, err := as(a, global.SecretID).Jobs().List(nil); err != nil {
		t.Fatalf("the global token in regionA: %v", err)
	}
	// The local token works in regionB, and for regionB through regionA
	// (regionB authorizes it), but not in regionA itself.
	if _, _, err := as(b, local.SecretID).Jobs().List(nil); err != nil {
		t.Fatalf("the local token in its region: %v", err)
	}
	if _, _, err := as(a, local.SecretID).Jobs().List(&api.QueryOptions{Region: "regionB"}); err != nil {
		t.Fatalf("the local token for its region through regionA: %v", err)
	}
	if _, _, err := as(a, local.SecretID).Jobs().List(nil); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("the local token in regionA: %v", err)
	}
}

// With tls.rpc and verify_server_hostname, each region's servers prove
// their own region's name (server.<region>.nomad): a request forwarded
// from regionA to regionB checks regionB's name, and goes through.
func TestFederation_MutualTLS(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	a, b := twoRegions(t, func(region string) string { return rpcTLS(ca, ca.Server(t, region)) })
	if _, _, err := a.api().Jobs().Register(sleepJob("tls-b"), &api.WriteOptions{Region: "regionB"}); err != nil {
		t.Fatalf("register in regionB through regionA over TLS: %v", err)
	}
	if _, _, err := b.api().Jobs().Info("tls-b", nil); err != nil {
		t.Fatalf("regionB's job: %v", err)
	}
	if l, err := b.api().Status().RegionLeader("regionA"); err != nil || l != a.rpcAddr() {
		t.Fatalf("regionA's leader through regionB: %q, %v", l, err)
	}
}

// twoRegions starts regionA and regionB of one server each (a1 and b1),
// extra(region) added to each server's configuration; it waits for each
// to lead its region, joins b1 to a1's gossip and waits until both list
// both regions.
func twoRegions(t *testing.T, extra func(region string) string) (a, b *agent) {
	t.Helper()
	p := freePorts(t, 6)
	server := func(name, region string, i int) *agent {
		return newAgent(t, name, ports{HTTP: p[3*i], RPC: p[3*i+1], Serf: p[3*i+2]}, fmt.Sprintf(`
region = %q
server {
  enabled          = true
  bootstrap_expect = 1
  num_schedulers   = 1
}
%s`, region, extra(region)))
	}
	a = server("a1", "regionA", 0)
	b = server("b1", "regionB", 1)
	a.start()
	b.start()
	for _, s := range []*agent{a, b} {
		waitFor(t, 30*time.Second, s.name+" to elect itself", func() bool {
			l, err := s.api().Status().Leader()
			return err == nil && l == s.rpcAddr()
		})
	}
	if n, err := b.api().Agent().Join(a.serfAddr()); err != nil || n != 1 {
		t.Fatalf("join: %d, %v", n, err)
	}
	for _, s := range []*agent{a, b} {
		waitFor(t, 30*time.Second, s.name+" to list both regions", func() bool {
			regions, err := s.api().Regions().List()
			return err == nil && slices.Equal(regions, []string{"regionA", "regionB"})
		})
	}
	return a, b
}
