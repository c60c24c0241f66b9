package endpoints

import (
	"fmt"

	"github.com/opennomad/nomad/structs"
)

// The endpoints the garbage collector deletes through (its workers may
// run on any server; the deletions must go through the leader), and the
// one that starts a forced collection.

// Reap deletes deployments.
func (d *Deployment) Reap(args *structs.DeploymentDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := d.srv.Forward("Deployment.Reap", args, args, reply); done {
		return err
	}
	if len(args.Deployments) == 0 {
		return &structs.ValidationError{Problems: []string{"nothing to reap: no deployment IDs"}}
	}
	_, index, err := d.srv.RaftApply(structs.DeploymentDeleteRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// BatchDeregister stops or purges many jobs in one Raft entry, with the
// evals given.
func (j *Job) BatchDeregister(args *structs.JobBatchDeregisterRequest, reply *structs.GenericResponse) error {
	if done, err := j.srv.Forward("Job.BatchDeregister", args, args, reply); done {
		return err
	}
	if len(args.Jobs) == 0 {
		return &structs.ValidationError{Problems: []string{"nothing to deregister: no jobs"}}
	}
	_, index, err := j.srv.RaftApply(structs.JobBatchDeregisterRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// System serves System.GarbageCollect and System.ReconcileJobSummaries.
type System struct {
	srv Server
}

// systemRules: a forced garbage collection and a summary repair need a
// management token.
var systemRules = Rules{
	"GarbageCollect":        Management(),
	"ReconcileJobSummaries": Management(),
}

// GarbageCollect starts a forced collection of everything terminal,
// whatever its age: a force-gc core eval goes straight to the leader's
// broker.
func (s *System) GarbageCollect(args *structs.GenericRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.Forward("System.GarbageCollect", args, args, reply); done {
		return err
	}
	eval, err := s.srv.EnqueueCoreJob(structs.CoreJobForceGC)
	if err != nil {
		return err
	}
	reply.Index = eval.ModifyIndex
	return nil
}

// ReconcileJobSummaries recomputes every job's summary from its
// allocations: the repair for a summary that drifted from what is
// placed. It goes through Raft so every server repairs at the same index.
func (s *System) ReconcileJobSummaries(args *structs.GenericRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.Forward("System.ReconcileJobSummaries", args, args, reply); done {
		return err
	}
	_, index, err := s.srv.RaftApply(structs.ReconcileJobSummariesRequestType, args)
	if err != nil {
		return fmt.Errorf("reconciling job summaries: %w", err)
	}
	reply.Index = index
	return nil
}
