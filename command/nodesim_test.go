package command

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/servertest"
	"github.com/opennomad/nomad/structs"
)

func TestNodeSimCommand_BadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no servers", []string{"nodesim"}, "-servers is required"},
		{"argument", []string{"nodesim", "-servers", "127.0.0.1:1", "x"}, "This command takes no arguments"},
		{"config", []string{"nodesim", "-servers", "127.0.0.1:1", "-nodes", "0", "-cpu-cores", "0"}, "nodes must be > 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runCommand(t, "http://127.0.0.1:1", runOpts{}, c.args...)
			must.Eq(t, 1, res.code)
			must.StrContains(t, res.stderr, c.want)
		})
	}
}

// The command reaches a server over its RPC port, registers the nodes
// ready and stops when its context ends, printing its totals.
func TestNodeSimCommand_OverTheNetwork(t *testing.T) {
	cfg := servertest.Config("nodesim-command")
	cfg.Cluster.RPCAddr = "127.0.0.1:0"
	srv := servertest.Start(t, cfg)

	res := runCommand(t, "http://127.0.0.1:1", runOpts{timeout: 1500 * time.Millisecond},
		"nodesim", "-servers", srv.RPCAdvertise(), "-nodes", "5", "-name-prefix", "cmd", "-racks", "2", "-stats-interval", "0")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.StrContains(t, res.stdout, "nodesim: 5 nodes ready in")
	must.StrContains(t, res.stdout, "nodesim: nodes=5 ready=5")
	must.StrContains(t, res.stdout, "peak_rss_mb=")

	nodes, err := srv.State().Nodes(nil)
	must.NoError(t, err)
	must.Len(t, 5, nodes)
	for _, n := range nodes {
		must.Eq(t, structs.NodeStatusReady, n.Status)
		must.StrHasPrefix(t, "cmd-", n.Name)
		must.NotEq(t, "", n.Meta["rack"])
	}
}
