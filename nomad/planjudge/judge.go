package planjudge

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/opennomad/nomad/structs"
)

// parallelMinNodes is the smallest plan whose per-node checks Judge
// spreads over goroutines. Below it the fan-out costs more than it saves
// (see BenchmarkEvaluatePlan).
const parallelMinNodes = 128

// View is what a plan is judged against: a snapshot of committed state
// and, on top of it, what the results still in Raft will add. Neither
// part changes while a plan is judged, so per-node checks may run
// concurrently.
type View struct {
	State State
	// InFlight may be nil: nothing is in flight.
	InFlight *InFlight
}

// Verdict is Judge's answer.
type Verdict struct {
	// Result is what may be committed. It shares the plan's allocs and
	// stops, and has no AllocIndex yet.
	Result *structs.PlanResult
	// Reasons says why each rejected node was rejected; it is aligned
	// with Result.RejectedNodes.
	Reasons []string
	// WaitFor, when non-zero, is the newest in-flight result (its
	// InFlight sequence number) whose stops or preemptions on a rejected
	// node could turn that rejection around once committed. Judge never
	// counts on capacity an uncommitted result frees, since the commit may
	// fail; the caller waits for that result's outcome and judges again.
	WaitFor uint64
}

// nodeVerdict is the judgement of one node of a plan.
type nodeVerdict struct {
	// judged is false for a node an AllAtOnce plan never got to.
	judged  bool
	fits    bool
	reason  string
	waitFor uint64
	err     error
}

// Judge decides, node by node, which parts of plan still hold against v
// (see the package comment for the rules). A node whose part fails is left
// out of the result (a partial commit) and listed in RejectedNodes; the
// scheduler is then told to refresh its state up to RefreshIndex and try
// again. With AllAtOnce, one failing node rejects the whole plan.
//
// A plan that stops or preempts an alloc v.State does not hold fails with
// structs.ErrUnknownAlloc: its Raft entry could not be applied.
//
// Judge does not modify plan. parallelism > 1 spreads the checks of
// plans of 128 nodes or more (parallelMinNodes) over that many goroutines.
func Judge(v View, plan *structs.Plan, parallelism int) (*Verdict, error) {
	if err := requireStored(v.State, plan); err != nil {
		return nil, err
	}
	nodes := planNodes(plan)
	var verdicts []nodeVerdict
	if parallelism > 1 && len(nodes) >= parallelMinNodes {
		verdicts = judgeParallel(v, plan, nodes, parallelism)
	} else {
		verdicts = judgeSerial(v, plan, nodes)
	}

	result := &structs.PlanResult{
		NodeUpdate:        make(map[string][]*structs.AllocStop),
		NodeAllocation:    make(map[string][]*structs.Allocation),
		NodePreemptions:   make(map[string][]*structs.AllocStop),
		Deployment:        plan.Deployment,
		DeploymentUpdates: plan.DeploymentUpdates,
	}
	verdict := &Verdict{Result: result}
	for i, vd := range verdicts {
		id := nodes[i]
		if vd.err != nil {
			return nil, fmt.Errorf("plan for eval %q: node %q: %w", plan.EvalID, id, vd.err)
		}
		if !vd.judged {
			continue // an AllAtOnce plan stopped at an earlier rejection
		}
		if !vd.fits {
			result.RejectedNodes = append(result.RejectedNodes, id)
			verdict.Reasons = append(verdict.Reasons, vd.reason)
			verdict.WaitFor = max(verdict.WaitFor, vd.waitFor)
			continue
		}
		if u := plan.NodeUpdate[id]; len(u) > 0 {
			result.NodeUpdate[id] = u
		}
		if a := plan.NodeAllocation[id]; len(a) > 0 {
			result.NodeAllocation[id] = a
			preempted, err := livePreemptions(v.State, plan.NodePreemptions[id])
			if err != nil {
				return nil, fmt.Errorf("plan for eval %q: node %q: %w", plan.EvalID, id, err)
			}
			if len(preempted) > 0 {
				result.NodePreemptions[id] = preempted
			}
		}
	}
	if len(result.RejectedNodes) == 0 {
		return verdict, nil
	}

	refresh, err := refreshIndex(v.State)
	if err != nil {
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	result.RefreshIndex = refresh
	if plan.AllAtOnce {
		result.NodeUpdate = nil
		result.NodeAllocation = nil
		result.NodePreemptions = nil
		result.Deployment = nil
		result.DeploymentUpdates = nil
		return verdict, nil
	}
	result.Deployment = trimPlacedCanaries(plan.Deployment, plan.NodeAllocation, result.NodeAllocation)
	return verdict, nil
}

// requireStored fails a plan that stops or preempts an alloc the state
// does not hold (garbage collected, or placed by a result still in
// flight): the state store refuses the whole entry, so it is refused here
// before it costs a Raft commit.
func requireStored(st State, plan *structs.Plan) error {
	for _, part := range []struct {
		verb  string
		stops map[string][]*structs.AllocStop
	}{{"stop", plan.NodeUpdate}, {"preempt", plan.NodePreemptions}} {
		for _, stops := range part.stops {
			for _, s := range stops {
				a, err := st.AllocByID(s.ID)
				if err == nil && a == nil {
					err = structs.ErrUnknownAlloc
				}
				if err != nil {
					return fmt.Errorf("plan for eval %q: alloc %q to %s: %w", plan.EvalID, s.ID, part.verb, err)
				}
			}
		}
	}
	return nil
}

// judgeSerial judges the nodes one after the other; an AllAtOnce plan
// stops at the first rejection.
func judgeSerial(v View, plan *structs.Plan, nodes []string) []nodeVerdict {
	verdicts := make([]nodeVerdict, len(nodes))
	for i, id := range nodes {
		verdicts[i] = v.judgeNode(plan, id)
		if !verdicts[i].fits && plan.AllAtOnce {
			return verdicts[:i+1]
		}
	}
	return verdicts
}

// judgeParallel judges the nodes on n goroutines that take nodes from a
// shared counter, so one slow node does not idle the others. An AllAtOnce
// plan stops handing out nodes after the first rejection; the verdicts not
// reached stay zero (not judged).
func judgeParallel(v View, plan *structs.Plan, nodes []string, n int) []nodeVerdict {
	verdicts := make([]nodeVerdict, len(nodes))
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	for range min(n, len(nodes)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(nodes) || (plan.AllAtOnce && failed.Load()) {
					return
				}
				verdicts[i] = v.judgeNode(plan, nodes[i])
				if !verdicts[i].fits {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return verdicts
}

// planNodes lists the nodes a plan stops or places on, sorted so that
// results and logs do not depend on map order. Preemptions go with the
// placements that need them.
func planNodes(plan *structs.Plan) []string {
	nodes := make([]string, 0, len(plan.NodeUpdate)+len(plan.NodeAllocation))
	for id := range plan.NodeUpdate {
		nodes = append(nodes, id)
	}
	for id := range plan.NodeAllocation {
		if _, dup := plan.NodeUpdate[id]; !dup {
			nodes = append(nodes, id)
		}
	}
	slices.Sort(nodes)
	return nodes
}

// livePreemptions keeps the preemptions of allocs still running in
// committed state; preempting what already stopped is a no-op the Raft
// entry need not carry.
func livePreemptions(st State, preempted []*structs.AllocStop) ([]*structs.AllocStop, error) {
	if len(preempted) == 0 {
		return nil, nil
	}
	out := make([]*structs.AllocStop, 0, len(preempted))
	for _, p := range preempted {
		stored, err := st.AllocByID(p.ID)
		if err != nil {
			return nil, err
		}
		if stored != nil && !stored.TerminalStatus() {
			out = append(out, p)
		}
	}
	return out, nil
}

// refreshIndex is the index a scheduler must reach to see everything a
// rejection was based on: the newest write to allocs or nodes.
func refreshIndex(st State) (uint64, error) {
	idx, err := st.PlacementIndex()
	if err != nil {
		return 0, err
	}
	if idx > 0 {
		return idx, nil
	}
	// A store that never saw a node or an alloc: its newest write will do.
	idx, err = st.LatestIndex()
	if err != nil {
		return 0, err
	}
	if idx == 0 {
		return 0, fmt.Errorf("no state index to refresh to: the state store is empty")
	}
	return idx, nil
}

// trimPlacedCanaries returns the deployment with the canaries this plan
// proposed but did not commit removed from every task group's
// PlacedCanaries, so a partial commit does not count canaries that were
// never placed. Canaries placed by earlier plans are not in this plan's
// allocations and stay. The plan's deployment is copied, not changed.
func trimPlacedCanaries(d *structs.Deployment, proposed, committed map[string][]*structs.Allocation) *structs.Deployment {
	if d == nil {
		return nil
	}
	dropped := make(map[string]struct{})
	for node, allocs := range proposed {
		for _, a := range allocs {
			if !slices.ContainsFunc(committed[node], func(c *structs.Allocation) bool { return c.ID == a.ID }) {
				dropped[a.ID] = struct{}{}
			}
		}
	}
	d = d.Copy()
	for _, tg := range d.TaskGroups {
		tg.PlacedCanaries = slices.DeleteFunc(tg.PlacedCanaries, func(id string) bool {
			_, gone := dropped[id]
			return gone
		})
	}
	return d
}
