package structs_test

import (
	"math"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// fitNode is a node with exactly the given capacity and nothing reserved.
func fitNode(cpu, memMB, diskMB int64) *structs.Node {
	return &structs.Node{
		ID:     "node-1",
		Status: structs.NodeStatusReady,
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: cpu, TotalCpuCores: 4},
			Memory: structs.NodeMemoryResources{MemoryMB: memMB},
			Disk:   structs.NodeDiskResources{DiskMB: diskMB},
		},
	}
}

func withReserved(n *structs.Node, cpu, memMB, diskMB int64, ports string, cores ...uint16) *structs.Node {
	n.ReservedResources = &structs.NodeReservedResources{
		Cpu:      structs.NodeReservedCpuResources{CpuShares: cpu, ReservedCpuCores: cores},
		Memory:   structs.NodeReservedMemoryResources{MemoryMB: memMB},
		Disk:     structs.NodeReservedDiskResources{DiskMB: diskMB},
		Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: ports},
	}
	return n
}

// fitAlloc asks for one task of cpu MHz and mem MB plus disk MB.
func fitAlloc(id string, cpu, memMB, diskMB int64) *structs.Allocation {
	return &structs.Allocation{
		ID:            id,
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusRunning,
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{"main": {
				Cpu:    structs.AllocatedCpuResources{CpuShares: cpu},
				Memory: structs.AllocatedMemoryResources{MemoryMB: memMB},
			}},
			Shared: structs.AllocatedSharedResources{DiskMB: diskMB},
		},
	}
}

func withCores(a *structs.Allocation, cores ...uint16) *structs.Allocation {
	a.AllocatedResources.Tasks["main"].Cpu.ReservedCores = cores
	return a
}

func withPorts(a *structs.Allocation, ports ...int) *structs.Allocation {
	for _, p := range ports {
		a.AllocatedResources.Shared.Ports = append(a.AllocatedResources.Shared.Ports,
			structs.AllocatedPortMapping{Label: "p", Value: p})
	}
	return a
}

func withStatus(a *structs.Allocation, desired, client string) *structs.Allocation {
	a.DesiredStatus, a.ClientStatus = desired, client
	return a
}

func TestAllocsFit(t *testing.T) {
	cases := []struct {
		name    string
		node    *structs.Node
		allocs  []*structs.Allocation
		fit     bool
		dim     string
		usedCPU int64
		usedMem int64
	}{
		{"nothing placed", fitNode(4000, 2048, 10000), nil, true, "", 0, 0},
		{"half full", fitNode(4000, 2048, 10000),
			[]*structs.Allocation{fitAlloc("a", 2000, 1024, 100)}, true, "", 2000, 1024},
		{"exactly full", fitNode(4000, 2048, 10000),
			// 2000 + 2000 = 4000 <= 4000; 1024 + 1024 = 2048 <= 2048
			[]*structs.Allocation{fitAlloc("a", 2000, 1024, 100), fitAlloc("b", 2000, 1024, 100)}, true, "", 4000, 2048},
		{"cpu exhausted", fitNode(4000, 2048, 10000),
			// 2500 + 2500 = 5000 > 4000
			[]*structs.Allocation{fitAlloc("a", 2500, 512, 100), fitAlloc("b", 2500, 512, 100)}, false, "cpu", 5000, 1024},
		{"memory exhausted", fitNode(4000, 2048, 10000),
			// 1500 + 1500 = 3000 > 2048
			[]*structs.Allocation{fitAlloc("a", 100, 1500, 100), fitAlloc("b", 100, 1500, 100)}, false, "memory", 200, 3000},
		{"disk exhausted", fitNode(4000, 2048, 1000),
			// 600 + 600 = 1200 > 1000
			[]*structs.Allocation{fitAlloc("a", 100, 100, 600), fitAlloc("b", 100, 100, 600)}, false, "disk", 200, 200},
		{"cpu is reported before memory", fitNode(4000, 2048, 10000),
			[]*structs.Allocation{fitAlloc("a", 5000, 5000, 100)}, false, "cpu", 5000, 5000},
		{"reserved capacity is not schedulable", withReserved(fitNode(4000, 2048, 10000), 1000, 0, 0, ""),
			// 4000 - 1000 = 3000 < 3500
			[]*structs.Allocation{fitAlloc("a", 3500, 100, 100)}, false, "cpu", 3500, 100},
		{"reserved memory", withReserved(fitNode(4000, 2048, 10000), 0, 1048, 0, ""),
			// 2048 - 1048 = 1000 < 1024
			[]*structs.Allocation{fitAlloc("a", 100, 1024, 100)}, false, "memory", 100, 1024},
		{"terminal allocs hold nothing", fitNode(4000, 2048, 10000), []*structs.Allocation{
			fitAlloc("a", 4000, 2048, 100),
			withStatus(fitAlloc("done", 4000, 2048, 100), "run", "complete"),
			withStatus(fitAlloc("failed", 4000, 2048, 100), "run", "failed"),
			withStatus(fitAlloc("lost", 4000, 2048, 100), "run", "lost"),
			withStatus(fitAlloc("stopped", 4000, 2048, 100), "stop", "running"),
			withStatus(fitAlloc("evicted", 4000, 2048, 100), "evict", "running"),
		}, true, "", 4000, 2048},
		{"unknown allocs still hold resources", fitNode(4000, 2048, 10000), []*structs.Allocation{
			fitAlloc("a", 4000, 1024, 100), withStatus(fitAlloc("b", 1, 1, 1), "run", "unknown"),
		}, false, "cpu", 4001, 1025},
		{"free cores", fitNode(4000, 2048, 10000),
			[]*structs.Allocation{withCores(fitAlloc("a", 2000, 100, 100), 1, 2)}, true, "", 2000, 100},
		{"core taken twice", fitNode(4000, 2048, 10000), []*structs.Allocation{
			withCores(fitAlloc("a", 1000, 100, 100), 1), withCores(fitAlloc("b", 1000, 100, 100), 1),
		}, false, "cores", 2000, 200},
		{"core reserved by the node", withReserved(fitNode(4000, 2048, 10000), 0, 0, 0, "", 0),
			[]*structs.Allocation{withCores(fitAlloc("a", 1000, 100, 100), 0)}, false, "cores", 1000, 100},
		{"core the node lacks", fitNode(4000, 2048, 10000),
			// TotalCpuCores 4: cores 0..3 exist, 7 does not
			[]*structs.Allocation{withCores(fitAlloc("a", 1000, 100, 100), 7)}, false, "cores", 1000, 100},
		{"distinct ports", fitNode(4000, 2048, 10000), []*structs.Allocation{
			withPorts(fitAlloc("a", 100, 100, 100), 8080), withPorts(fitAlloc("b", 100, 100, 100), 8081),
		}, true, "", 200, 200},
		{"port used twice", fitNode(4000, 2048, 10000), []*structs.Allocation{
			withPorts(fitAlloc("a", 100, 100, 100), 8080), withPorts(fitAlloc("b", 100, 100, 100), 8080),
		}, false, "network: port 8080 used by an allocation", 200, 200},
		{"port reserved by the node", withReserved(fitNode(4000, 2048, 10000), 0, 0, 0, "22,8000-8100"),
			[]*structs.Allocation{withPorts(fitAlloc("a", 100, 100, 100), 8050)},
			false, "network: port 8050 reserved by the node", 100, 100},
		{"port of a terminal alloc is free", fitNode(4000, 2048, 10000), []*structs.Allocation{
			withStatus(withPorts(fitAlloc("a", 100, 100, 100), 8080), "stop", "complete"),
			withPorts(fitAlloc("b", 100, 100, 100), 8080),
		}, true, "", 100, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fit, dim, used := structs.AllocsFit(c.node, c.allocs)
			if fit != c.fit || dim != c.dim {
				t.Errorf("AllocsFit = %v, %q; want %v, %q", fit, dim, c.fit, c.dim)
			}
			if got := used.Flattened.Cpu.CpuShares; got != c.usedCPU {
				t.Errorf("used cpu = %d, want %d", got, c.usedCPU)
			}
			if got := used.Flattened.Memory.MemoryMB; got != c.usedMem {
				t.Errorf("used memory = %d, want %d", got, c.usedMem)
			}
		})
	}
}

// A port recorded both in the shared ports and on the group network of the
// same alloc is one port, not a collision with itself; ports on task
// networks count too.
func TestAllocsFit_PortsInEveryPlace(t *testing.T) {
	node := fitNode(4000, 2048, 10000)
	a := withPorts(fitAlloc("a", 100, 100, 100), 8080)
	a.AllocatedResources.Shared.Networks = structs.Networks{{ReservedPorts: []structs.Port{{Label: "p", Value: 8080}}}}
	if fit, dim, _ := structs.AllocsFit(node, []*structs.Allocation{a}); !fit {
		t.Fatalf("alloc collides with itself: %s", dim)
	}
	b := fitAlloc("b", 100, 100, 100)
	b.AllocatedResources.Tasks["main"].Networks = structs.Networks{{DynamicPorts: []structs.Port{{Label: "q", Value: 8080}}}}
	fit, dim, _ := structs.AllocsFit(node, []*structs.Allocation{a, b})
	if fit || dim != "network: port 8080 used by an allocation" {
		t.Fatalf("task network port not counted: %v %q", fit, dim)
	}
}

// Prestart tasks that are not sidecars exit before the main tasks start,
// so an alloc needs the larger of the two phases, not their sum.
func TestAllocsFit_EphemeralPrestartTasks(t *testing.T) {
	a := fitAlloc("a", 1000, 500, 100)
	a.AllocatedResources.Tasks["init"] = &structs.AllocatedTaskResources{
		Cpu: structs.AllocatedCpuResources{CpuShares: 3000}, Memory: structs.AllocatedMemoryResources{MemoryMB: 200}}
	a.AllocatedResources.Tasks["sidecar"] = &structs.AllocatedTaskResources{
		Cpu: structs.AllocatedCpuResources{CpuShares: 500}, Memory: structs.AllocatedMemoryResources{MemoryMB: 300}}
	a.AllocatedResources.TaskLifecycles = map[string]*structs.TaskLifecycleConfig{
		"init":    {Hook: structs.TaskLifecycleHookPrestart},
		"sidecar": {Hook: structs.TaskLifecycleHookPrestart, Sidecar: true},
	}
	// cpu = max(main 1000 + sidecar 500, init 3000) = 3000
	// mem = max(main 500 + sidecar 300, init 200) = 800
	_, _, used := structs.AllocsFit(fitNode(4000, 2048, 10000), []*structs.Allocation{a})
	if used.Flattened.Cpu.CpuShares != 3000 || used.Flattened.Memory.MemoryMB != 800 {
		t.Fatalf("used = %s, want cpu 3000 memory 800", used)
	}
}

func util(cpu, memMB int64) *structs.ComparableResources {
	u := &structs.ComparableResources{}
	u.Flattened.Cpu.CpuShares = cpu
	u.Flattened.Memory.MemoryMB = memMB
	return u
}

func TestScoreFit(t *testing.T) {
	cases := []struct {
		name            string
		node            *structs.Node
		util            *structs.ComparableResources
		binpack, spread float64
	}{
		// freeCpu = 1 - 2000/4000 = 0.5; freeMem = 1 - 1024/2048 = 0.5
		// binpack = 20 - (10^0.5 + 10^0.5) = 20 - 6.3246 = 13.675
		// spread  = (10^0.5 + 10^0.5) - 2 = 4.3246
		{"half used", fitNode(4000, 2048, 0), util(2000, 1024), 13.6754, 4.3246},
		// free = 1, 1: binpack = 20 - (10 + 10) = 0; spread = 20 - 2 = 18
		{"empty", fitNode(4000, 2048, 0), util(0, 0), 0, 18},
		// free = 0, 0: binpack = 20 - (1 + 1) = 18; spread = 2 - 2 = 0
		{"full", fitNode(4000, 2048, 0), util(4000, 2048), 18, 0},
		// freeCpu = 1 - 1000/4000 = 0.75; freeMem = 1 - 1536/2048 = 0.25
		// binpack = 20 - (5.6234 + 1.7783) = 12.5983; spread = 7.4017 - 2 = 5.4017
		{"uneven", fitNode(4000, 2048, 0), util(1000, 1536), 12.5983, 5.4017},
		// capacity = 4000 - 2000 reserved = 2000: freeCpu = 1 - 1000/2000 = 0.5
		// capacity = 2048 - 1024 reserved = 1024: freeMem = 1 - 512/1024 = 0.5
		{"reserved excluded", withReserved(fitNode(4000, 2048, 0), 2000, 1024, 0, ""), util(1000, 512), 13.6754, 4.3246},
		// free = -1, -1: binpack = 20 - (0.1 + 0.1) = 19.8 -> clamped to 18;
		// spread = 0.2 - 2 = -1.8 -> clamped to 0
		{"overcommitted is clamped", fitNode(4000, 2048, 0), util(8000, 4096), 18, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := structs.ScoreFitBinPack(c.node, c.util); math.Abs(got-c.binpack) > 1e-4 {
				t.Errorf("binpack = %.4f, want %.4f", got, c.binpack)
			}
			if got := structs.ScoreFitSpread(c.node, c.util); math.Abs(got-c.spread) > 1e-4 {
				t.Errorf("spread = %.4f, want %.4f", got, c.spread)
			}
		})
	}
}

func TestNormalizeFitScore(t *testing.T) {
	// 13.6754 / 18 = 0.7597; 18 / 18 = 1; 0 / 18 = 0
	for raw, want := range map[float64]float64{13.6754: 0.7597, 18: 1, 0: 0} {
		if got := structs.NormalizeFitScore(raw); math.Abs(got-want) > 1e-4 {
			t.Errorf("NormalizeFitScore(%v) = %.4f, want %.4f", raw, got, want)
		}
	}
}

func BenchmarkAllocsFit(b *testing.B) {
	node := fitNode(64000, 256*1024, 1<<20)
	allocs := make([]*structs.Allocation, 0, 50)
	for i := range 50 {
		allocs = append(allocs, withPorts(fitAlloc(structs.GenerateUUID(), 500, 1024, 300), 20000+i))
	}
	b.ReportAllocs()
	for b.Loop() {
		if fit, dim, _ := structs.AllocsFit(node, allocs); !fit {
			b.Fatal(dim)
		}
	}
}

func BenchmarkScoreFitBinPack(b *testing.B) {
	node, u := fitNode(4000, 2048, 0), util(2000, 1024)
	b.ReportAllocs()
	for b.Loop() {
		structs.ScoreFitBinPack(node, u)
	}
}

func BenchmarkComputeClass(b *testing.B) {
	n := mock.Node()
	b.ReportAllocs()
	for b.Loop() {
		n.ComputeClass()
	}
}
