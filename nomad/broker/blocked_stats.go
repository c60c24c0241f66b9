package broker

import (
	"context"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// BlockedStats is a snapshot of the tracker.
type BlockedStats struct {
	// TotalEscaped counts tracked evals that escaped computed classes.
	TotalEscaped int
	// TotalBlocked counts every tracked eval, escaped ones included.
	TotalBlocked int
	// TotalQuotaLimit counts tracked evals blocked on a quota.
	TotalQuotaLimit int
	// BlockedResources sums what the tracked evals failed to place.
	BlockedResources *BlockedResourcesStats
}

// BlockedResourcesStats sums the CPU and memory blocked evals could not
// place, by job and by (datacenter, node class). Entries that drop to zero
// stay until pruned, so a gauge reads 0 before it disappears.
type BlockedResourcesStats struct {
	ByJob       map[structs.NamespacedID]BlockedResourcesSummary
	ByClassInDC map[ClassInDC]BlockedResourcesSummary
}

// ClassInDC is a node class within a datacenter. Class is "" for evals
// whose failures name no exhausted class.
type ClassInDC struct {
	Datacenter string
	Class      string
}

// BlockedResourcesSummary is blocked CPU (MHz) and memory (MB), and when
// it last changed.
type BlockedResourcesSummary struct {
	Timestamp time.Time
	CPU       int
	MemoryMB  int
}

// IsZero reports whether nothing is blocked.
func (s BlockedResourcesSummary) IsZero() bool { return s.CPU == 0 && s.MemoryMB == 0 }

func newBlockedResourcesStats() *BlockedResourcesStats {
	return &BlockedResourcesStats{
		ByJob:       make(map[structs.NamespacedID]BlockedResourcesSummary),
		ByClassInDC: make(map[ClassInDC]BlockedResourcesSummary),
	}
}

// Copy returns a deep copy.
func (r *BlockedResourcesStats) Copy() *BlockedResourcesStats {
	c := newBlockedResourcesStats()
	for k, v := range r.ByJob {
		c.ByJob[k] = v
	}
	for k, v := range r.ByClassInDC {
		c.ByClassInDC[k] = v
	}
	return c
}

func (r *BlockedResourcesStats) add(e *structs.Evaluation, now time.Time) {
	r.apply(e, now, 1)
}

func (r *BlockedResourcesStats) remove(e *structs.Evaluation, now time.Time) {
	r.apply(e, now, -1)
}

// apply adds (sign 1) or subtracts (sign -1) what e failed to place. As in
// Nomad, the eval's total over all its task groups is charged to the job
// and to every (datacenter, class) pair its failures mention: the
// datacenters that had nodes available and the classes found exhausted.
func (r *BlockedResourcesStats) apply(e *structs.Evaluation, now time.Time, sign int) {
	cpu, mem := 0, 0
	dcs := make(map[string]struct{})
	classes := make(map[string]struct{})
	for _, m := range e.FailedTGAllocs {
		if m == nil {
			continue
		}
		for dc := range m.NodesAvailable {
			dcs[dc] = struct{}{}
		}
		for class := range m.ClassExhausted {
			classes[class] = struct{}{}
		}
		if len(m.ClassExhausted) == 0 {
			classes[""] = struct{}{}
		}
		for _, res := range m.ResourcesExhausted {
			if res != nil {
				cpu += res.CPU
				mem += res.MemoryMB
			}
		}
	}
	cpu, mem = sign*cpu, sign*mem

	job := e.NamespacedJobID()
	s := r.ByJob[job]
	r.ByJob[job] = BlockedResourcesSummary{Timestamp: now, CPU: s.CPU + cpu, MemoryMB: s.MemoryMB + mem}
	for dc := range dcs {
		for class := range classes {
			k := ClassInDC{Datacenter: dc, Class: class}
			s := r.ByClassInDC[k]
			r.ByClassInDC[k] = BlockedResourcesSummary{Timestamp: now, CPU: s.CPU + cpu, MemoryMB: s.MemoryMB + mem}
		}
	}
}

// prune drops zero entries last changed before cutoff.
func (r *BlockedResourcesStats) prune(cutoff time.Time) {
	for k, v := range r.ByJob {
		if v.IsZero() && v.Timestamp.Before(cutoff) {
			delete(r.ByJob, k)
		}
	}
	for k, v := range r.ByClassInDC {
		if v.IsZero() && v.Timestamp.Before(cutoff) {
			delete(r.ByClassInDC, k)
		}
	}
}

// Stats returns a copy of the tracker's counters. Calls still in the inbox
// are not reflected yet.
func (b *BlockedEvals) Stats() *BlockedStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &BlockedStats{
		TotalEscaped:     len(b.escaped),
		TotalBlocked:     len(b.captured) + len(b.escaped),
		TotalQuotaLimit:  b.totalQuotaLimit,
		BlockedResources: b.resources.Copy(),
	}
}

// TotalBlocked is Stats().TotalBlocked without copying the rest: the
// leader reads it on every write that adds an eval (backpressure).
func (b *BlockedEvals) TotalBlocked() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.captured) + len(b.escaped)
}

// EmitStats publishes the tracker's gauges every period until ctx ends
// (at once if period <= 0). The leader runs it in its own goroutine.
func (b *BlockedEvals) EmitStats(ctx context.Context, period time.Duration) {
	clock.Every(ctx, b.clock, period, b.emitStats)
}

// emitStats publishes nomad.blocked_evals.total_* and the blocked CPU and
// memory per job (job.cpu, job.memory) and per class in a datacenter.
func (b *BlockedEvals) emitStats() {
	s := b.Stats()
	metrics.SetGauge([]string{"nomad", "blocked_evals", "total_quota_limit"}, float32(s.TotalQuotaLimit))
	metrics.SetGauge([]string{"nomad", "blocked_evals", "total_blocked"}, float32(s.TotalBlocked))
	metrics.SetGauge([]string{"nomad", "blocked_evals", "total_escaped"}, float32(s.TotalEscaped))
	for job, v := range s.BlockedResources.ByJob {
		labels := []metrics.Label{{Name: "namespace", Value: job.Namespace}, {Name: "job", Value: job.ID}}
		metrics.SetGaugeWithLabels([]string{"nomad", "blocked_evals", "job", "cpu"}, float32(v.CPU), labels)
		metrics.SetGaugeWithLabels([]string{"nomad", "blocked_evals", "job", "memory"}, float32(v.MemoryMB), labels)
	}
	for k, v := range s.BlockedResources.ByClassInDC {
		labels := []metrics.Label{{Name: "datacenter", Value: k.Datacenter}, {Name: "node_class", Value: k.Class}}
		metrics.SetGaugeWithLabels([]string{"nomad", "blocked_evals", "cpu"}, float32(v.CPU), labels)
		metrics.SetGaugeWithLabels([]string{"nomad", "blocked_evals", "memory"}, float32(v.MemoryMB), labels)
	}
}
