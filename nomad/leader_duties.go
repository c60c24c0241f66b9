package nomad

import (
	"github.com/opennomad/nomad/nomad/deploymentwatcher"
	"github.com/opennomad/nomad/nomad/drainer"
	"github.com/opennomad/nomad/nomad/periodic"
	"github.com/opennomad/nomad/structs"
)

// leaderDuties are the leader's watchers: the node drainer, the
// deployment watcher and the periodic dispatcher. Each decides from the
// state store alone and writes through dutyRaft, so it needs nothing from
// the previous leader. They run only while this server leads: enabled
// after the broker (so the evals they write are enqueued), disabled
// before it.
type leaderDuties struct {
	drainer  *drainer.Drainer
	deploys  *deploymentwatcher.Watcher
	periodic *periodic.Dispatcher
}

// newLeaderDuties builds the duties, disabled, on the server's clock.
func newLeaderDuties(s *Server) (*leaderDuties, error) {
	r := &dutyRaft{s: s}
	d, err := drainer.New(drainer.Config{
		Logger: s.logger, Clock: s.clock, State: s.State, Raft: r, MinPassInterval: -1,
	})
	if err != nil {
		return nil, err
	}
	healthBatch := newVersionGate(s.clock, func() bool {
		return s.serversMeetMinimumVersion(structs.MinVersionAllocHealthBatch)
	})
	w, err := deploymentwatcher.New(deploymentwatcher.Config{
		Logger: s.logger, Clock: s.clock, State: s.State, Raft: r, MinPassInterval: -1,
		AllocHealthBatch: healthBatch.Open, Schedulers: s.config.Schedulers,
	})
	if err != nil {
		return nil, err
	}
	p, err := periodic.New(periodic.Config{Logger: s.logger, Clock: s.clock, State: s.State, Raft: r})
	if err != nil {
		return nil, err
	}
	return &leaderDuties{drainer: d, deploys: w, periodic: p}, nil
}

// setEnabled starts or stops every duty. Stopping waits for each pass in
// progress, so no duty writes after it returns.
func (d *leaderDuties) setEnabled(enabled bool) {
	d.drainer.SetEnabled(enabled)
	d.deploys.SetEnabled(enabled)
	d.periodic.SetEnabled(enabled)
}

// dutyRaft writes the duties' decisions as Raft entries on the leader.
// Each call returns once the entry is applied to this server's state
// store; the FSM hands the evals an entry carries to the broker.
type dutyRaft struct {
	s *Server
}

var (
	_ drainer.Raft           = (*dutyRaft)(nil)
	_ deploymentwatcher.Raft = (*dutyRaft)(nil)
	_ periodic.Raft          = (*dutyRaft)(nil)
)

func (r *dutyRaft) apply(t structs.MessageType, req interface{}) (uint64, error) {
	_, index, err := r.s.raftApply(t, req)
	return index, err
}

// AllocUpdateDesiredTransition marks allocs to migrate, with their evals.
func (r *dutyRaft) AllocUpdateDesiredTransition(allocs map[string]*structs.DesiredTransition, evals []*structs.Evaluation) (uint64, error) {
	return r.apply(structs.AllocUpdateDesiredTransitionRequestType,
		&structs.AllocUpdateDesiredTransitionRequest{Allocs: allocs, Evals: evals})
}

// NodesDrainComplete ends the drains of nodes, leaving them ineligible.
func (r *dutyRaft) NodesDrainComplete(nodeIDs []string, event *structs.NodeEvent) (uint64, error) {
	req := &structs.BatchNodeUpdateDrainRequest{
		Updates:    make(map[string]*structs.DrainUpdate, len(nodeIDs)),
		NodeEvents: make(map[string]*structs.NodeEvent, len(nodeIDs)),
		UpdatedAt:  event.Timestamp.Unix(),
	}
	for _, id := range nodeIDs {
		req.Updates[id] = &structs.DrainUpdate{}
		req.NodeEvents[id] = event
	}
	return r.apply(structs.BatchNodeUpdateDrainRequestType, req)
}

// UpdateDeploymentStatus changes a deployment's status, with the job
// version it reverts to and its eval.
func (r *dutyRaft) UpdateDeploymentStatus(u *structs.DeploymentStatusUpdate, job *structs.Job, eval *structs.Evaluation) (uint64, error) {
	return r.apply(structs.DeploymentStatusUpdateRequestType,
		&structs.DeploymentStatusUpdateRequest{DeploymentUpdate: u, Job: job, Eval: eval})
}

// UpdateDeploymentPromotion promotes canaries.
func (r *dutyRaft) UpdateDeploymentPromotion(req *structs.ApplyDeploymentPromoteRequest) (uint64, error) {
	return r.apply(structs.DeploymentPromoteRequestType, req)
}

// UpdateDeploymentAllocHealth records alloc health verdicts.
func (r *dutyRaft) UpdateDeploymentAllocHealth(req *structs.ApplyDeploymentAllocHealthRequest) (uint64, error) {
	return r.apply(structs.DeploymentAllocHealthRequestType, req)
}

// UpdateDeploymentAllocHealthBatch records the verdicts of many
// deployments in one entry.
func (r *dutyRaft) UpdateDeploymentAllocHealthBatch(reqs []*structs.ApplyDeploymentAllocHealthRequest) (uint64, error) {
	return r.apply(structs.DeploymentAllocHealthBatchRequestType,
		&structs.DeploymentAllocHealthBatchRequest{Requests: reqs})
}

// UpsertEvals writes evals.
func (r *dutyRaft) UpsertEvals(evals []*structs.Evaluation) (uint64, error) {
	return r.apply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
}

// RegisterChild registers a periodic job's child with its eval.
func (r *dutyRaft) RegisterChild(child *structs.Job, eval *structs.Evaluation) (uint64, error) {
	return r.apply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: child, Eval: eval})
}
