package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/tlsconf/tlsconftest"
)

// A production-shaped cluster: three servers and a client with ACLs on
// and mutual TLS on HTTP, RPC and Raft (verify_server_hostname,
// verify_https_client). Through the CLI over HTTPS with a CLI
// certificate: bootstrap ACLs, write a policy per use, make tokens; a job
// run with a token that may submit jobs runs on the client; the same run
// with a read-only token is refused and changes nothing; an HTTPS caller
// without a certificate is refused at the handshake; a client agent
// without a certificate is turned away by the servers.
func TestCluster_ACLsAndMutualTLS(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	block := func(p tlsconftest.Pair) string {
		return fmt.Sprintf(`
tls {
  http                   = true
  rpc                    = true
  ca_file                = %q
  cert_file              = %q
  key_file               = %q
  verify_server_hostname = true
  verify_https_client    = true
}
acl {
  enabled = true
}
`, ca.File, p.CertFile, p.KeyFile)
	}
	c := startClusterWith(t, func(server bool) string {
		if server {
			return block(ca.Server(t, "global"))
		}
		return block(ca.Client(t, "global"))
	})
	cli := ca.Issue(t, "cli.global.nomad")
	s := secureCLI{t: t, addr: fmt.Sprintf("https://127.0.0.1:%d", c.servers[0].ports.HTTP), ca: ca.File, cert: cli}

	// One client per token, as a program would keep: each new client
	// opens its own connections, and the servers allow one address 100
	// (limits.http_max_conns_per_client).
	clients := map[string]*api.Client{}
	apiClient := func(token string) *api.Client {
		if cl := clients[token]; cl != nil {
			return cl
		}
		cfg := &api.Config{Address: s.addr, SecretID: token, TLSConfig: &api.TLSConfig{
			CACert: ca.File, ClientCert: cli.CertFile, ClientKey: cli.KeyFile}}
		cl, err := api.NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients[token] = cl
		return cl
	}
	waitFor(t, 60*time.Second, "a leader", func() bool {
		l, err := apiClient("").Status().Leader()
		return err == nil && l != ""
	})

	var mgmt string
	waitFor(t, 30*time.Second, "the ACL bootstrap", func() bool {
		out, code := s.run("", "acl", "bootstrap")
		mgmt = field(out, "Secret ID")
		return code == 0 && mgmt != ""
	})
	waitFor(t, 60*time.Second, "the client node to be ready", func() bool {
		nodes, _, err := apiClient(mgmt).Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})

	dir := t.TempDir()
	for name, rules := range map[string]string{
		"submit":   `namespace "default" { policy = "write" }`,
		"readonly": `namespace "default" { policy = "read" }`,
	} {
		f := filepath.Join(dir, name+".hcl")
		if err := os.WriteFile(f, []byte(rules), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, code := s.run(mgmt, "acl", "policy", "apply", name, f); code != 0 {
			t.Fatalf("acl policy apply %s: %d\n%s", name, code, out)
		}
	}
	token := func(policy string) string {
		out, code := s.run(mgmt, "acl", "token", "create", "-name", policy, "-policy", policy)
		secret := field(out, "Secret ID")
		if code != 0 || secret == "" {
			t.Fatalf("acl token create -policy %s: %d\n%s", policy, code, out)
		}
		return secret
	}
	submitter, reader := token("submit"), token("readonly")

	jobFile := filepath.Join(dir, "secure.nomad.hcl")
	if err := os.WriteFile(jobFile, []byte(`job "secure" {
  datacenters = ["*"]
  group "g" {
    task "sleep" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := s.run(reader, "job", "run", "-detach", jobFile); code == 0 || !strings.Contains(out, "Permission denied") {
		t.Fatalf("job run with a read-only token: exit %d\n%s", code, out)
	}
	if _, _, err := apiClient(mgmt).Jobs().Info("secure", nil); err == nil {
		t.Fatal("a refused job run registered the job")
	}
	if out, code := s.run(submitter, "job", "run", "-detach", jobFile); code != 0 {
		t.Fatalf("job run with a submit token: exit %d\n%s", code, out)
	}
	waitFor(t, 60*time.Second, "the job's allocation to run", func() bool {
		allocs, _, err := apiClient(reader).Jobs().Allocations("secure", false, nil)
		return err == nil && len(allocs) == 1 && allocs[0].ClientStatus == "running"
	})
	// A server agent forwards client requests, over mutual TLS, to the
	// client agent running the allocation (the api package sends them to
	// the address it was given, a server here).
	allocs, _, err := apiClient(mgmt).Jobs().Allocations("secure", false, nil)
	if err != nil || len(allocs) != 1 {
		t.Fatalf("job allocations: %v %v", allocs, err)
	}
	alloc, _, err := apiClient(mgmt).Allocations().Info(allocs[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := apiClient(mgmt).AllocFS().List(alloc, "/", nil)
	if err != nil || len(files) == 0 {
		t.Fatalf("alloc fs through a server agent: %v %v", files, err)
	}
	if _, _, err := apiClient(reader).AllocFS().List(alloc, "/", nil); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("alloc fs with a token without read-fs: %v", err)
	}
	if out, code := s.run(reader, "job", "stop", "secure"); code == 0 || !strings.Contains(out, "Permission denied") {
		t.Fatalf("job stop with a read-only token: exit %d\n%s", code, out)
	}

	// HTTPS without a client certificate fails in the handshake.
	pool, err := tlsRoots(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	bare := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if resp, err := bare.Get(s.addr + "/v1/status/leader"); err == nil {
		resp.Body.Close()
		t.Fatalf("an HTTPS call without a client certificate was answered: %s", resp.Status)
	}

	// A client agent without a certificate (plaintext RPC) is refused by
	// every server it tries and never registers.
	var rpcAddrs []string
	for _, srv := range c.servers {
		rpcAddrs = append(rpcAddrs, fmt.Sprintf("%q", srv.rpcAddr()))
	}
	p := freePorts(t, 3)
	stranger := newAgent(t, "client-uncertified", ports{HTTP: p[0], RPC: p[1], Serf: p[2]}, fmt.Sprintf(`
client {
  enabled = true
  servers = [%s]
}
`, strings.Join(rpcAddrs, ", ")))
	stranger.start()
	waitFor(t, 30*time.Second, "a server to refuse the uncertified client", func() bool {
		for _, srv := range c.servers {
			if log, _ := os.ReadFile(filepath.Join(srv.dir, "agent.log")); bytes.Contains(log, []byte("refusing a plaintext connection")) {
				return true
			}
		}
		return false
	})
	nodes, _, err := apiClient(mgmt).Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes after the uncertified client tried: %d %v", len(nodes), err)
	}
}

// secureCLI runs the nomad CLI over HTTPS with a CLI certificate, as an
// operator's shell with NOMAD_CACERT and friends set would.
type secureCLI struct {
	t    *testing.T
	addr string
	ca   string
	cert tlsconftest.Pair
}

func (s secureCLI) run(token string, args ...string) (string, int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nomadBin, args...)
	cmd.Env = append(os.Environ(), "NOMAD_ADDR="+s.addr, "NOMAD_CACERT="+s.ca,
		"NOMAD_CLIENT_CERT="+s.cert.CertFile, "NOMAD_CLIENT_KEY="+s.cert.KeyFile, "NOMAD_TOKEN="+token)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatalf("running nomad %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), code
}

// field reads "Name = value" from a CLI's key/value output.
func field(out, name string) string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*=\s*(\S+)`).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// tlsRoots reads a CA file into a pool.
func tlsRoots(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", file)
	}
	return pool, nil
}
