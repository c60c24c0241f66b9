package nomad

import (
	"context"
	"errors"

	"github.com/opennomad/nomad/nomad/coresched"
	"github.com/opennomad/nomad/structs"
)

// coreJobTicks arms the timers of the periodic garbage collections, one
// per kind on its own interval of the server's clock, until ctx ends.
func (s *Server) coreJobTicks(ctx context.Context) map[string]<-chan struct{} {
	return map[string]<-chan struct{}{
		structs.CoreJobEvalGC:       clockTicks(ctx, s.clock, s.config.EvalGCInterval),
		structs.CoreJobJobGC:        clockTicks(ctx, s.clock, s.config.JobGCInterval),
		structs.CoreJobNodeGC:       clockTicks(ctx, s.clock, s.config.NodeGCInterval),
		structs.CoreJobDeploymentGC: clockTicks(ctx, s.clock, s.config.DeploymentGCInterval),
		structs.CoreJobACLExpiredGC: clockTicks(ctx, s.clock, s.config.ACLExpiredGCInterval),
	}
}

// scheduleCoreJobs enqueues a garbage collection of a kind whenever its
// timer ticks, while this server leads.
func (s *Server) scheduleCoreJobs(ctx context.Context, ticks map[string]<-chan struct{}) {
	for {
		var kind string
		select {
		case <-ctx.Done():
			return
		case <-ticks[structs.CoreJobEvalGC]:
			kind = structs.CoreJobEvalGC
		case <-ticks[structs.CoreJobJobGC]:
			kind = structs.CoreJobJobGC
		case <-ticks[structs.CoreJobNodeGC]:
			kind = structs.CoreJobNodeGC
		case <-ticks[structs.CoreJobDeploymentGC]:
			kind = structs.CoreJobDeploymentGC
		case <-ticks[structs.CoreJobACLExpiredGC]:
			kind = structs.CoreJobACLExpiredGC
		}
		if _, err := s.enqueueCoreJob(kind); err != nil && !errors.Is(err, structs.ErrBrokerDisabled) {
			s.logger.Error("failed to schedule garbage collection", "kind", kind, "error", err)
		}
	}
}

// enqueueCoreJob puts a core eval of the given kind in the leader's broker.
func (s *Server) enqueueCoreJob(kind string) (*structs.Evaluation, error) {
	if s.evalBroker == nil || !s.evalBroker.Enabled() {
		return nil, structs.ErrBrokerDisabled
	}
	index, err := s.State().LatestIndex()
	if err != nil {
		return nil, err
	}
	eval := coresched.NewEval(kind, index, s.now())
	s.evalBroker.Enqueue(eval)
	return eval, nil
}
