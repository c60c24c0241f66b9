package structs_test

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestComputeClass(t *testing.T) {
	base := mock.Node()
	cases := []struct {
		name   string
		change func(n *structs.Node)
		same   bool
	}{
		{"identical node", func(n *structs.Node) {}, true},
		{"different ID, name and secret", func(n *structs.Node) {
			n.ID, n.Name, n.SecretID = structs.GenerateUUID(), "other", structs.GenerateUUID()
		}, true},
		{"different unique attribute", func(n *structs.Node) {
			n.Attributes["unique.hostname"] = "elsewhere"
			n.Attributes["unique.network.ip-address"] = "10.9.9.9"
		}, true},
		{"different unique meta", func(n *structs.Node) { n.Meta["unique.serial"] = "abc" }, true},
		{"different status and resources", func(n *structs.Node) {
			n.Status = structs.NodeStatusDown
			n.NodeResources.Cpu.CpuShares = 1
		}, true},
		{"driver health description only", func(n *structs.Node) {
			n.Drivers["exec"].HealthDescription = "still fine"
			n.Drivers["exec"].UpdateTime = time.Now()
		}, true},
		{"datacenter", func(n *structs.Node) { n.Datacenter = "dc2" }, false},
		{"node class", func(n *structs.Node) { n.NodeClass = "gpu" }, false},
		{"node pool", func(n *structs.Node) { n.NodePool = "batch" }, false},
		{"attribute value", func(n *structs.Node) { n.Attributes["kernel.name"] = "darwin" }, false},
		{"extra attribute", func(n *structs.Node) { n.Attributes["gpu.count"] = "1" }, false},
		{"meta value", func(n *structs.Node) { n.Meta["rack"] = "r2" }, false},
		{"driver unhealthy", func(n *structs.Node) { n.Drivers["exec"].Healthy = false }, false},
		{"driver missing", func(n *structs.Node) { delete(n.Drivers, "mock") }, false},
		// An attribute key moved to meta must not hash the same.
		{"same pair in attributes vs meta", func(n *structs.Node) {
			delete(n.Meta, "rack")
			n.Attributes["rack"] = "r1"
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := base.Copy()
			c.change(n)
			n.ComputeClass()
			if same := n.ComputedClass == base.ComputedClass; same != c.same {
				t.Errorf("class %s vs %s: same = %v, want %v", n.ComputedClass, base.ComputedClass, same, c.same)
			}
		})
	}
	if len(base.ComputedClass) < 4 || base.ComputedClass[:3] != "v1:" {
		t.Errorf("class %q lacks the version prefix", base.ComputedClass)
	}
}

func TestIsUniqueNamespace(t *testing.T) {
	for key, want := range map[string]bool{
		"unique.hostname": true, "unique.network.ip-address": true,
		"kernel.name": false, "uniqueness": false, "not.unique.x": false,
	} {
		if got := structs.IsUniqueNamespace(key); got != want {
			t.Errorf("%q: %v, want %v", key, got, want)
		}
	}
}

func TestNodeReady(t *testing.T) {
	cases := []struct {
		name   string
		change func(n *structs.Node)
		ready  bool
	}{
		{"ready and eligible", func(n *structs.Node) {}, true},
		{"initializing", func(n *structs.Node) { n.Status = structs.NodeStatusInit }, false},
		{"down", func(n *structs.Node) { n.Status = structs.NodeStatusDown }, false},
		{"disconnected", func(n *structs.Node) { n.Status = structs.NodeStatusDisconnected }, false},
		{"ineligible", func(n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible }, false},
		{"draining", func(n *structs.Node) { n.DrainStrategy = &structs.DrainStrategy{} }, false},
	}
	for _, c := range cases {
		n := mock.Node()
		c.change(n)
		if got := n.Ready(); got != c.ready {
			t.Errorf("%s: Ready = %v, want %v", c.name, got, c.ready)
		}
	}
	n := mock.Node()
	if n.TerminalStatus() {
		t.Error("ready node is terminal")
	}
	n.Status = structs.NodeStatusDown
	if !n.TerminalStatus() {
		t.Error("down node is not terminal")
	}
}

func TestNodeCanonicalize(t *testing.T) {
	n := &structs.Node{ID: "n", Datacenter: "dc1", Status: structs.NodeStatusInit}
	n.Canonicalize()
	if n.NodePool != "default" || n.SchedulingEligibility != "eligible" || n.ComputedClass == "" {
		t.Errorf("got pool %q eligibility %q class %q", n.NodePool, n.SchedulingEligibility, n.ComputedClass)
	}
	if n.Status != structs.NodeStatusInit {
		t.Errorf("status changed to %q", n.Status)
	}
	draining := &structs.Node{ID: "d", DrainStrategy: &structs.DrainStrategy{}, SchedulingEligibility: "eligible"}
	draining.Canonicalize()
	if draining.SchedulingEligibility != "ineligible" {
		t.Errorf("draining node eligibility %q", draining.SchedulingEligibility)
	}
}

func TestNodeHasDriver(t *testing.T) {
	n := mock.Node()
	n.Drivers["exec"].Healthy = false
	n.Attributes["driver.legacy"] = "1"
	for name, want := range map[string]bool{"raw_exec": true, "exec": false, "legacy": true, "docker": false} {
		if got := n.HasDriver(name); got != want {
			t.Errorf("HasDriver(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestDrainDeadline(t *testing.T) {
	force := time.Unix(1000, 0)
	cases := []struct {
		deadline time.Duration
		infinite bool
		at       time.Time
	}{
		{-time.Second, false, time.Time{}}, // forced: stop now
		{0, true, time.Time{}},             // no deadline
		{time.Hour, false, force},
	}
	for _, c := range cases {
		d := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: c.deadline}, ForceDeadline: force}
		inf, at := d.DeadlineTime()
		if inf != c.infinite || !at.Equal(c.at) {
			t.Errorf("deadline %s: %v %v, want %v %v", c.deadline, inf, at, c.infinite, c.at)
		}
	}
}

func TestNodeAppendEventsKeepsTheLatest(t *testing.T) {
	n := mock.Node()
	for i := range 15 {
		n.AppendEvents(uint64(i), structs.NewNodeEvent("Cluster", "e", time.Unix(int64(i), 0)))
	}
	if len(n.Events) != 10 || n.Events[0].CreateIndex != 5 || n.Events[9].CreateIndex != 14 {
		t.Fatalf("kept %d events from index %d", len(n.Events), n.Events[0].CreateIndex)
	}
}

func TestNodeSanitizeAndCopy(t *testing.T) {
	n := mock.Node()
	s := n.Sanitize()
	if s.SecretID != "" || n.SecretID == "" {
		t.Fatal("Sanitize must clear the copy's secret only")
	}
	c := n.Copy()
	c.Attributes["kernel.name"] = "changed"
	c.Drivers["exec"].Healthy = false
	c.NodeResources.Cpu.ReservableCpuCores[0] = 9
	if n.Attributes["kernel.name"] != "linux" || !n.Drivers["exec"].Healthy || n.NodeResources.Cpu.ReservableCpuCores[0] != 0 {
		t.Fatal("Copy shares state with the original")
	}
}
