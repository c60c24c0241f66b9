package command

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/command/agent"
	"github.com/opennomad/nomad/structs"
)

// realAgent is a testCluster backed by a real in-process dev agent: real
// Raft (in memory), state store, eval broker, workers running the builtin
// schedulers, plan applier and HTTP API. Its client is turned off, so
// nodes are those tests add (through the servers' Node.Register RPC, as
// a client would) and allocations stay pending, as no client runs them.
type realAgent struct {
	agent *agent.Agent
}

func newRealAgent(t testing.TB) testCluster {
	t.Helper()
	return newRealAgentWith(t, nil)
}

// newRealAgentWith is newRealAgent with its configuration changed by mod
// first.
func newRealAgentWith(t testing.TB, mod func(*agent.Config)) *realAgent {
	t.Helper()
	cfg, err := agent.LoadConfig([]string{"-dev", "-node", "server-1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(cfg)
	}
	cfg.Client.Enabled = false
	cfg.Ports.HTTP = 0
	cfg.LogLevel = "ERROR"
	a, err := agent.NewAgent(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	r := &realAgent{agent: a}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var leader string
		if err := a.RPC("Status.Leader", &structs.GenericRequest{}, &leader); err == nil && leader != "" {
			// The leader serves once it established itself (with ACLs on,
			// a refusal of this token-less read is an answer too).
			var reply structs.SchedulerConfigurationResponse
			err := a.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &reply)
			if err == nil || structs.IsKind(err, structs.ErrPermissionDenied) {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the dev agent never elected itself")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *realAgent) Addr() string     { return "http://" + r.agent.HTTPAddr() }
func (r *realAgent) fake() *fakeAgent { return nil }

// AddNode registers a node with the fake's defaults: ready, eligible,
// dc1, 4000 MHz, 8 GiB, raw_exec and exec healthy, Linux.
func (r *realAgent) AddNode(t testing.TB, n *api.Node) string {
	t.Helper()
	node := &structs.Node{
		ID: n.ID, SecretID: structs.GenerateUUID(), Name: n.Name, Datacenter: n.Datacenter, NodePool: n.NodePool,
		NodeClass: n.NodeClass, HTTPAddr: "127.0.0.1:4646", Status: n.Status, SchedulingEligibility: n.SchedulingEligibility,
		Attributes: map[string]string{"kernel.name": "linux", "os.name": "linux", "cpu.arch": "amd64",
			"driver.raw_exec": "1", "driver.exec": "1"},
		Meta: n.Meta,
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100 * 1024},
		},
		Drivers: map[string]*structs.DriverInfo{
			"raw_exec": {Detected: true, Healthy: true}, "exec": {Detected: true, Healthy: true},
		},
	}
	for k, v := range n.Attributes {
		node.Attributes[k] = v
	}
	for name, v := range n.HostVolumes {
		if node.HostVolumes == nil {
			node.HostVolumes = map[string]*structs.ClientHostVolumeConfig{}
		}
		node.HostVolumes[name] = &structs.ClientHostVolumeConfig{Name: name, Path: v.Path, ReadOnly: v.ReadOnly, ID: v.ID}
	}
	if node.ID == "" {
		node.ID = structs.GenerateUUID()
	}
	if node.Name == "" {
		node.Name = "node-" + node.ID[:4]
	}
	if node.Datacenter == "" {
		node.Datacenter = "dc1"
	}
	if node.NodePool == "" {
		node.NodePool = structs.NodePoolDefault
	}
	if node.Status == "" {
		node.Status = structs.NodeStatusReady
	}
	if node.SchedulingEligibility == "" {
		node.SchedulingEligibility = structs.NodeSchedulingEligible
	}
	if res := n.NodeResources; res != nil {
		node.NodeResources.Cpu.CpuShares = res.Cpu.CpuShares
		node.NodeResources.Memory.MemoryMB = res.Memory.MemoryMB
	}
	node.ComputeClass()
	var reply structs.NodeUpdateResponse
	if err := r.agent.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &reply); err != nil {
		t.Fatalf("registering node %q: %v", node.Name, err)
	}
	return node.ID
}

// Settle waits until no evaluation is pending: every one the servers had
// was scheduled (blocked ones count as processed).
func (r *realAgent) Settle(t testing.TB) {
	t.Helper()
	client, err := api.NewClient(&api.Config{Address: r.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		evals, _, err := client.Evaluations().List(&api.QueryOptions{Params: map[string]string{"status": api.EvalStatusPending}})
		if err != nil {
			t.Fatal(err)
		}
		if len(evals) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var ids []string
			for _, e := range evals {
				ids = append(ids, e.ID+" ("+e.TriggeredBy+")")
			}
			t.Fatalf("evaluations still pending: %s", strings.Join(ids, ", "))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
