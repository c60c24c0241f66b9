package main

import (
	"fmt"
	"sort"
	"strings"
)

// Invariant names, in the order summaries print them.
const (
	invAcknowledged = "acknowledged writes present"
	invAllocCount   = "count of live allocations, distinct names"
	invOvercommit   = "no node overcommitted"
	invEvalsSettle  = "no evaluation pending past the deadline"
	invConverge     = "servers converge"
	invMinority     = "partitioned minority never commits"
	invRecovery     = "cluster recovers after each fault"
	invServersUp    = "servers stay up (no exit but SIGKILL)"
	invMajority     = "majority elects a leader while the leader is cut off"
	invNodes        = "vanished nodes go down, and every node is ready at the end"
)

var invariants = []string{invAcknowledged, invAllocCount, invOvercommit, invEvalsSettle, invConverge, invMinority, invRecovery, invServersUp, invMajority, invNodes}

// violation is one broken invariant, with what showed it.
type violation struct {
	Invariant, Server, Detail string
}

func (v violation) String() string {
	if v.Server == "" {
		return fmt.Sprintf("[%s] %s", v.Invariant, v.Detail)
	}
	return fmt.Sprintf("[%s] %s: %s", v.Invariant, v.Server, v.Detail)
}

// verdict counts the checks made and the violations found.
type verdict struct {
	checked    map[string]int
	violations []violation
	// short counts, per explanation, the jobs the final checks found
	// with fewer live allocations than their count, and accepted.
	short map[string]int
}

func newVerdict() *verdict { return &verdict{checked: map[string]int{}, short: map[string]int{}} }

// check counts one check of inv; when ok is false it records a
// violation described by the format.
func (vd *verdict) check(inv, server string, ok bool, format string, args ...any) {
	vd.checked[inv]++
	if !ok {
		vd.violations = append(vd.violations, violation{inv, server, fmt.Sprintf(format, args...)})
	}
}

// checkAcknowledged: every job whose last operation was acknowledged is
// as that answer said: registered with the acknowledged count, or
// stopped. Jobs with an unanswered operation are not judged.
func (vd *verdict) checkAcknowledged(v *view, jobs []jobRecord) {
	for _, r := range jobs {
		if r.Uncertain {
			continue
		}
		j := v.jobs[r.ID]
		switch {
		case r.Stopped:
			// A stopped job may also have been garbage collected.
			vd.check(invAcknowledged, v.server, j == nil || deref(j.Stop), "job %s: stop was acknowledged but the job runs", r.ID)
		case j == nil:
			vd.check(invAcknowledged, v.server, false, "job %s: registration was acknowledged but the job is missing", r.ID)
		default:
			vd.check(invAcknowledged, v.server, !deref(j.Stop) && groupCount(j) == r.Count,
				"job %s: acknowledged count %d, server has count %d stop=%t", r.ID, r.Count, groupCount(j), deref(j.Stop))
		}
	}
}

// checkAllocs: every running job has exactly its count of live
// allocations, or fewer with a blocked evaluation that explains why (or
// a failed deployment of its version, after which nothing new is placed),
// and never two live allocations of one name; a stopped job has none.
// Jobs that want allocations while none at all is live mean the cluster
// placed nothing, and every placement check passed for nothing.
func (vd *verdict) checkAllocs(v *view) {
	vd.checkDuplicates(v)
	live, blocked, failed := v.liveAllocs(), v.blocked(), v.failedDeployment()
	wanted := 0
	for id, j := range v.jobs {
		allocs := live[id]
		want := groupCount(j)
		if deref(j.Stop) {
			want = 0
		}
		wanted += want
		ok := len(allocs) == want || (len(allocs) < want && (blocked[id] || failed[id]))
		switch {
		case len(allocs) >= want:
		case blocked[id]:
			vd.short["blocked evaluation"]++
		case failed[id]:
			vd.short["failed deployment"]++
		}
		vd.check(invAllocCount, v.server, ok, "job %s: %d live allocations, count %d, blocked evaluation %t, failed deployment %t",
			id, len(allocs), want, blocked[id], failed[id])
	}
	vd.check(invAllocCount, v.server, wanted == 0 || len(live) > 0,
		"%d allocations wanted and none live on any node: nothing could be placed", wanted)
}

// checkDuplicates: no job has two live allocations of one name.
func (vd *verdict) checkDuplicates(v *view) {
	for id, allocs := range v.liveAllocs() {
		names := map[string]int{}
		for _, a := range allocs {
			names[a.Name]++
		}
		var dup []string
		for n, k := range names {
			if k > 1 {
				dup = append(dup, fmt.Sprintf("%s×%d", n, k))
			}
		}
		sort.Strings(dup)
		vd.check(invAllocCount, v.server, len(dup) == 0, "job %s: live allocations share names %s", id, strings.Join(dup, ", "))
	}
}

// checkNodesReady: once every simulator runs again, every node is
// ready.
func (vd *verdict) checkNodesReady(v *view) {
	for _, n := range v.nodes {
		vd.check(invNodes, v.server, n.Status == "ready", "node %s (%s) is %s at the end", n.Name, n.ID, n.Status)
	}
}

// checkOvercommit: on every node, the allocations that hold resources
// (desired run, not finished on the client) fit the node's capacity less
// its reservation, in CPU, memory and disk.
func (vd *verdict) checkOvercommit(v *view) {
	type usage struct{ cpu, mem, disk int64 }
	used := map[string]*usage{}
	for _, a := range v.allocs {
		if a.DesiredStatus != "run" || a.ClientStatus == "complete" || a.ClientStatus == "failed" || a.ClientStatus == "lost" {
			continue
		}
		u := used[a.NodeID]
		if u == nil {
			u = &usage{}
			used[a.NodeID] = u
		}
		if a.AllocatedResources == nil {
			vd.check(invOvercommit, v.server, false, "allocation %s lists no resources", a.ID)
			continue
		}
		for _, t := range a.AllocatedResources.Tasks {
			u.cpu += t.Cpu.CpuShares
			u.mem += t.Memory.MemoryMB
		}
		u.disk += a.AllocatedResources.Shared.DiskMB
	}
	for _, n := range v.nodes {
		if n.NodeResources == nil {
			vd.check(invOvercommit, v.server, false, "node %s lists no resources", n.ID)
			continue
		}
		capCPU, capMem, capDisk := n.NodeResources.Cpu.CpuShares, n.NodeResources.Memory.MemoryMB, n.NodeResources.Disk.DiskMB
		if r := n.ReservedResources; r != nil {
			capCPU -= int64(r.Cpu.CpuShares)
			capMem -= int64(r.Memory.MemoryMB)
			capDisk -= int64(r.Disk.DiskMB)
		}
		u := used[n.ID]
		if u == nil {
			u = &usage{}
		}
		vd.check(invOvercommit, v.server, u.cpu <= capCPU && u.mem <= capMem && u.disk <= capDisk,
			"node %s (%s): allocated cpu %d/%d MHz, memory %d/%d MB, disk %d/%d MB", n.Name, n.ID, u.cpu, capCPU, u.mem, capMem, u.disk, capDisk)
	}
}

// checkEvals: once the cluster had its settle time, no evaluation is
// still pending (blocked ones wait for capacity, which is fine).
func (vd *verdict) checkEvals(v *view) {
	for _, e := range v.evals {
		vd.check(invEvalsSettle, v.server, e.Status != "pending", "evaluation %s of job %s (%s) still pending", e.ID, e.JobID, e.TriggeredBy)
	}
}

// checkMinority: no write sent to an isolated server was acknowledged,
// and none sent early enough to have been refused for good before the
// partition healed shows up afterwards.
func (vd *verdict) checkMinority(v *view, probes []probe) {
	for _, p := range probes {
		if p.Acked {
			continue // counted once, when it happened
		}
		if !p.Final {
			continue
		}
		_, present := v.jobs[p.JobID]
		vd.check(invMinority, v.server, !present, "job %s, written to isolated %s and refused, was committed", p.JobID, p.Server)
	}
}

// checkConverged: every server's view has the leader's applied index
// and the same objects.
func (vd *verdict) checkConverged(views []*view) {
	for _, v := range views[1:] {
		vd.check(invConverge, v.server, v.applied == views[0].applied && v.digest() == views[0].digest(),
			"applied index %d digest %s, %s has %d digest %s", v.applied, v.digest(), views[0].server, views[0].applied, views[0].digest())
	}
}
