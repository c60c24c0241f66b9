package nomad

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math/rand"
	"slices"
	"time"

	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// racingMaxPlans bounds how often one eval re-plans after partial
// commits; far more than contention should ever need.
const racingMaxPlans = 100

// newRacingScheduler is a scheduler.Factory for a deliberately simple
// service scheduler, for tests. For each missing alloc of the job's single
// group it takes the fullest node with room in its snapshot, ties broken
// at random: bin packing, so workers running it concurrently all go for
// the same few nodes, and the plan applier has to reject and partially
// commit their plans. It re-plans on the fresh state the worker hands
// back.
func newRacingScheduler(cfg *scheduler.Config, st scheduler.State, p scheduler.Planner) scheduler.Scheduler {
	return &racingScheduler{state: st, planner: p, now: cfg.Now}
}

type racingScheduler struct {
	state   scheduler.State
	planner scheduler.Planner
	now     func() time.Time
	rng     *rand.Rand
}

func (s *racingScheduler) Process(eval *structs.Evaluation) error {
	h := fnv.New64a()
	h.Write([]byte(eval.ID))
	s.rng = rand.New(rand.NewSource(int64(h.Sum64())))
	for range racingMaxPlans {
		job, err := s.state.JobByID(eval.Namespace, eval.JobID)
		if err != nil {
			return err
		}
		if job == nil || job.Stop {
			return s.finish(eval)
		}
		plan, missing, err := s.plan(eval, job)
		if err != nil {
			return err
		}
		if missing == 0 {
			return s.finish(eval)
		}
		placed := len(plan.NodeAllocation)
		if placed == 0 {
			return s.block(eval) // no room anywhere in this snapshot
		}
		result, fresh, err := s.planner.SubmitPlan(plan)
		if err != nil {
			return err
		}
		if fresh != nil {
			s.state = fresh // partially rejected: plan again on newer state
			continue
		}
		if full, _, _ := result.FullCommit(plan); !full {
			return fmt.Errorf("eval %q: partial commit without a refresh", eval.ID)
		}
		if planned := countPlaced(plan); planned < missing {
			return s.block(eval)
		}
		return s.finish(eval)
	}
	return fmt.Errorf("eval %q: still conflicting after %d plans", eval.ID, racingMaxPlans)
}

// plan places what is missing; it returns the plan and how many allocs
// were missing.
func (s *racingScheduler) plan(eval *structs.Evaluation, job *structs.Job) (*structs.Plan, int, error) {
	tg := job.TaskGroups[0]
	allocs, err := s.state.AllocsByJob(job.Namespace, job.ID, false)
	if err != nil {
		return nil, 0, err
	}
	taken := make(map[int]bool)
	for _, a := range allocs {
		if !a.TerminalStatus() {
			taken[a.Index()] = true
		}
	}
	missing := tg.Count - len(taken)
	plan := eval.MakePlan(job)
	if missing <= 0 {
		return plan, 0, nil
	}
	shared, err := s.state.Nodes()
	if err != nil {
		return nil, 0, err
	}
	// The view's node list is shared with every other reader: shuffle a
	// copy.
	nodes := slices.Clone(shared)
	s.rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	used := make(map[string]int64, len(nodes))
	for _, n := range nodes {
		live, err := s.state.AllocsByNodeTerminal(n.ID, false)
		if err != nil {
			return nil, 0, err
		}
		_, _, u := structs.AllocsFit(n, live)
		used[n.ID] = u.Flattened.Cpu.CpuShares
	}
	slices.SortStableFunc(nodes, func(a, b *structs.Node) int { return cmp.Compare(used[b.ID], used[a.ID]) })
	for idx := 0; idx < tg.Count; idx++ {
		if taken[idx] {
			continue
		}
		a := racingAlloc(eval, job, idx)
		node, err := s.pick(nodes, plan, a)
		if err != nil {
			return nil, 0, err
		}
		if node == nil {
			break
		}
		a.NodeID, a.NodeName = node.ID, node.Name
		plan.AppendAlloc(a)
	}
	return plan, missing, nil
}

// pick returns the first ready node that fits a on top of what it runs
// and what the plan already puts there.
func (s *racingScheduler) pick(nodes []*structs.Node, plan *structs.Plan, a *structs.Allocation) (*structs.Node, error) {
	for _, n := range nodes {
		if !n.Ready() {
			continue
		}
		existing, err := s.state.AllocsByNodeTerminal(n.ID, false)
		if err != nil {
			return nil, err
		}
		proposed := append(append(existing, plan.NodeAllocation[n.ID]...), a)
		if fit, _, _ := structs.AllocsFit(n, proposed); fit {
			return n, nil
		}
	}
	return nil, nil
}

func racingAlloc(eval *structs.Evaluation, job *structs.Job, idx int) *structs.Allocation {
	tg := job.TaskGroups[0]
	ar := &structs.AllocatedResources{
		Tasks:  make(map[string]*structs.AllocatedTaskResources, len(tg.Tasks)),
		Shared: structs.AllocatedSharedResources{DiskMB: int64(tg.EphemeralDisk.SizeMB)},
	}
	for _, t := range tg.Tasks {
		ar.Tasks[t.Name] = &structs.AllocatedTaskResources{
			Cpu:    structs.AllocatedCpuResources{CpuShares: int64(t.Resources.CPU)},
			Memory: structs.AllocatedMemoryResources{MemoryMB: int64(t.Resources.MemoryMB)},
		}
	}
	return &structs.Allocation{
		ID:                 structs.GenerateUUID(),
		Namespace:          job.Namespace,
		EvalID:             eval.ID,
		Name:               structs.AllocName(job.ID, tg.Name, idx),
		JobID:              job.ID,
		Job:                job,
		TaskGroup:          tg.Name,
		AllocatedResources: ar,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
		Metrics:            &structs.AllocMetric{},
	}
}

func countPlaced(plan *structs.Plan) int {
	n := 0
	for _, allocs := range plan.NodeAllocation {
		n += len(allocs)
	}
	return n
}

func (s *racingScheduler) finish(eval *structs.Evaluation) error {
	e := eval.Copy()
	e.Status = structs.EvalStatusComplete
	return s.planner.UpdateEval(e)
}

// block leaves the rest to a blocked eval: a new one, or the same one
// again when this eval is a blocked eval released too early.
func (s *racingScheduler) block(eval *structs.Evaluation) error {
	if eval.Status == structs.EvalStatusBlocked {
		return s.planner.ReblockEval(eval.Copy())
	}
	b := eval.CreateBlockedEval(nil, true, nil, s.now())
	if err := s.planner.CreateEval(b); err != nil {
		return err
	}
	e := eval.Copy()
	e.Status = structs.EvalStatusComplete
	e.BlockedEval = b.ID
	return s.planner.UpdateEval(e)
}
