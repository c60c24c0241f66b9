package structs

import "math"

// binPackingMaxFitScore is the largest raw fit score; scores are divided
// by it so every scorer's output is comparable in [0, 1].
const binPackingMaxFitScore = 18.0

// AllocsFit reports whether the non-terminal allocs fit on the node, and
// if not, which dimension is exhausted: "cpu", "cores", "memory", "disk",
// or "network: <reason>" for a port collision (see NetworkIndex.AddAllocs).
// It also returns the resources the allocs use. The scheduler uses it to
// propose and the plan applier to verify, so both see the same arithmetic.
// Terminal allocs are skipped: they no longer hold anything.
func AllocsFit(node *Node, allocs []*Allocation) (bool, string, *ComparableResources) {
	used := &ComparableResources{}
	hasPorts := false
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		if a.AllocatedResources != nil {
			a.AllocatedResources.addTo(used)
		}
		hasPorts = hasPorts || holdsPorts(a)
	}
	if ok, dim := node.comparable(len(used.Flattened.Cpu.ReservedCores) > 0).Superset(used); !ok {
		return false, dim, used
	}
	if hasPorts {
		idx, err := NewNetworkIndex(node)
		if err != nil {
			return false, DimensionNetwork + ": " + err.Error(), used
		}
		if collide, reason := idx.AddAllocs(allocs); collide {
			return false, DimensionNetwork + ": " + reason, used
		}
	}
	return true, "", used
}

// freePercentages returns the fraction of schedulable CPU and memory left
// on the node once util is placed. It runs for every scored node, so it
// reads the capacity in place rather than through Node.Comparable.
func freePercentages(node *Node, util *ComparableResources) (cpu, mem float64) {
	var nodeCPU, nodeMem float64
	if nr := node.NodeResources; nr != nil {
		nodeCPU, nodeMem = float64(nr.Cpu.CpuShares), float64(nr.Memory.MemoryMB)
	}
	if rr := node.ReservedResources; rr != nil {
		nodeCPU -= float64(rr.Cpu.CpuShares)
		nodeMem -= float64(rr.Memory.MemoryMB)
	}
	if nodeCPU > 0 {
		cpu = 1 - float64(util.Flattened.Cpu.CpuShares)/nodeCPU
	}
	if nodeMem > 0 {
		mem = 1 - float64(util.Flattened.Memory.MemoryMB)/nodeMem
	}
	return cpu, mem
}

// ScoreFitBinPack scores how tightly util packs the node, in [0, 18]:
//
//	score = 20 - (10^freeCpu + 10^freeMem)
//
// A full node scores 18 (20 - 1 - 1), an empty one 0 (20 - 10 - 10), so
// the scheduler fills busy nodes first and keeps empty ones free.
func ScoreFitBinPack(node *Node, util *ComparableResources) float64 {
	cpu, mem := freePercentages(node, util)
	return clampScore(20 - (math.Pow(10, cpu) + math.Pow(10, mem)))
}

// ScoreFitSpread is the mirror image of ScoreFitBinPack, in [0, 18]:
//
//	score = (10^freeCpu + 10^freeMem) - 2
//
// An empty node scores 18, a full one 0, so work spreads across nodes.
func ScoreFitSpread(node *Node, util *ComparableResources) float64 {
	cpu, mem := freePercentages(node, util)
	return clampScore(math.Pow(10, cpu) + math.Pow(10, mem) - 2)
}

// NormalizeFitScore maps a raw fit score into [0, 1].
func NormalizeFitScore(score float64) float64 { return score / binPackingMaxFitScore }

func clampScore(s float64) float64 {
	return math.Max(0, math.Min(binPackingMaxFitScore, s))
}
