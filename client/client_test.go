package client

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestClient_RegistersAndHeartbeats(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	c := testClient(t, testClientConfig(t, local(w)))

	eventually(t, "node ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })
	n, err := srv.State().NodeByID(nil, c.NodeID())
	must.NoError(t, err)
	must.Eq(t, "test-node", n.Name)
	must.Eq(t, "dc1", n.Datacenter)
	must.True(t, n.Drivers["mock_driver"].Healthy)
	must.Eq(t, "1", n.Attributes["driver.mock_driver"])
	must.Eq(t, "", n.Attributes["driver.raw_exec"]) // disabled unless enabled

	// Heartbeats keep coming at the TTL the server asks for (200-400ms).
	eventually(t, "three heartbeats", func() bool { return len(w.callsOf("Node.UpdateStatus")) >= 3 })
	last, ttl := c.LastHeartbeat()
	must.False(t, last.IsZero())
	must.Between(t, 200*time.Millisecond, ttl, 400*time.Millisecond)
	for _, call := range w.callsOf("Node.UpdateStatus") {
		req := call.args.(*structs.NodeUpdateStatusRequest)
		must.Eq(t, structs.NodeStatusReady, req.Status)
		must.Eq(t, n.SecretID, req.SecretID)
	}
	must.Len(t, 1, w.callsOf("Node.Register"))
}

func TestClient_SameIdentityAfterRestart(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	c1, err := NewClient(cfg)
	must.NoError(t, err)
	id := c1.NodeID()
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, id) == structs.NodeStatusReady })
	must.NoError(t, c1.Shutdown())

	c2 := testClient(t, cfg)
	must.Eq(t, id, c2.NodeID())
	must.Eq(t, c1.Node().SecretID, c2.Node().SecretID)
	// The server accepted the re-registration: the secret matched.
	eventually(t, "registered again", func() bool {
		hb, _ := c2.LastHeartbeat()
		return !hb.IsZero()
	})
}

func TestClient_RegistersAgainWhenForgotten(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	var resp structs.NodeUpdateResponse
	must.NoError(t, srv.RPC("Node.Deregister", &structs.NodeDeregisterRequest{NodeIDs: []string{c.NodeID()}}, &resp))
	must.Eq(t, "", nodeStatus(t, srv, c.NodeID()))

	// The next heartbeat hears "node not found" and registers again; the
	// heartbeat after that makes the node ready.
	eventually(t, "registered again and ready", func() bool {
		return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady
	})
	must.Len(t, 2, w.callsOf("Node.Register"))
	notFound := 0
	for _, call := range w.callsOf("Node.UpdateStatus") {
		if isUnknownNode(call.err) {
			notFound++
		}
	}
	must.Eq(t, 1, notFound)
}

func TestClient_RegistrationRetriesWithBackoff(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	w.setFail(func(method string, n int) error {
		if method == "Node.Register" && n < 3 {
			return fmt.Errorf("Node.Register: %w", structs.ErrNoLeader)
		}
		return nil
	})
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "ready after three refusals", func() bool {
		return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady
	})
	calls := w.callsOf("Node.Register")
	must.Len(t, 4, calls)
	// Each retry waited at least the lower end of its backoff window.
	for i := 1; i < len(calls); i++ {
		floor := backoff(10*time.Millisecond, 100*time.Millisecond, i, 0)
		must.GreaterEq(t, floor, calls[i].at.Sub(calls[i-1].at))
	}
}

func TestClient_HeartbeatFailureRotatesServers(t *testing.T) {
	srv := testServer(t, nil)
	// Both endpoints reach the same server; the first one loses its
	// leader once the node is registered.
	first := &twin{inner: srv}
	second := &twin{inner: srv}
	first.setFail(func(method string, n int) error {
		if method == "Node.UpdateStatus" {
			return fmt.Errorf("%s: %w", method, structs.ErrNoLeader)
		}
		return nil
	})
	c := testClient(t, testClientConfig(t, ServerEndpoint{"first", first}, ServerEndpoint{"second", second}))

	eventually(t, "ready through the second server", func() bool {
		return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady
	})
	must.Len(t, 1, first.callsOf("Node.Register"))
	must.Len(t, 1, first.callsOf("Node.UpdateStatus"))
	must.Eq(t, []string{"second", "first"}, c.Servers())
	eventually(t, "heartbeats stay on the second", func() bool { return len(second.callsOf("Node.UpdateStatus")) >= 2 })
	must.Len(t, 1, first.callsOf("Node.UpdateStatus"))
}

func TestClient_HeartbeatErrorsBackOff(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	refuse := errors.New("heartbeat refused for the test")
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })
	w.setFail(func(method string, n int) error {
		if method == "Node.UpdateStatus" {
			return refuse
		}
		return nil
	})
	start := len(w.callsOf("Node.UpdateStatus"))
	eventually(t, "four failed heartbeats", func() bool { return len(w.callsOf("Node.UpdateStatus")) >= start+4 })
	calls := w.callsOf("Node.UpdateStatus")[start:]
	for i := 1; i < len(calls); i++ {
		must.ErrorIs(t, calls[i].err, refuse)
		floor := backoff(10*time.Millisecond, 100*time.Millisecond, i, 0)
		must.GreaterEq(t, floor, calls[i].at.Sub(calls[i-1].at))
	}
	// A refusal is not a server failure: the client did not register
	// again and kept its one server.
	must.Len(t, 1, w.callsOf("Node.Register"))
}

func TestClient_ConfigErrors(t *testing.T) {
	_, err := NewClient(&Config{
		GCMaxAllocs:    -1,
		MaxKillTimeout: -time.Second,
		Options:        map[string]string{OptionRawExecEnable: "sometimes"},
		Servers:        []ServerEndpoint{{Name: "nil"}},
	})
	must.Error(t, err)
	for _, want := range []string{"data_dir is required", `server 0 ("nil"): no connection`,
		"gc_max_allocs must be positive", "max_kill_timeout must be positive",
		`option "driver.raw_exec.enable": "sometimes" is not a boolean`} {
		must.StrContains(t, err.Error(), want)
	}

	_, err = NewClient(&Config{DataDir: t.TempDir()})
	must.ErrorContains(t, err, "at least one server is required")

	cfg := testClientConfig(t, local(&answer{}))
	cfg.Plugins = map[string]map[string]interface{}{"raw_exec": {"enabled": true, "no_cgroups": true}}
	_, err = NewClient(cfg)
	must.Error(t, err)
	must.True(t, strings.Contains(err.Error(), `plugin "raw_exec"`) && strings.Contains(err.Error(), "no_cgroups"), must.Sprint(err))
}
