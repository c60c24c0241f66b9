package nomad

import (
	"context"
	"errors"

	"github.com/opennomad/nomad/structs"
)

// scheduleCoreJobs enqueues the periodic garbage collections while this
// server leads, each on its own interval of the server's clock.
func (s *Server) scheduleCoreJobs(ctx context.Context) {
	evalGC := clockTicks(ctx, s.clock, s.config.EvalGCInterval)
	jobGC := clockTicks(ctx, s.clock, s.config.JobGCInterval)
	nodeGC := clockTicks(ctx, s.clock, s.config.NodeGCInterval)
	deploymentGC := clockTicks(ctx, s.clock, s.config.DeploymentGCInterval)
	for {
		var kind string
		select {
		case <-ctx.Done():
			return
		case <-evalGC:
			kind = structs.CoreJobEvalGC
		case <-jobGC:
			kind = structs.CoreJobJobGC
		case <-nodeGC:
			kind = structs.CoreJobNodeGC
		case <-deploymentGC:
			kind = structs.CoreJobDeploymentGC
		}
		if _, err := s.enqueueCoreJob(kind); err != nil && !errors.Is(err, structs.ErrBrokerDisabled) {
			s.logger.Error("failed to schedule garbage collection", "kind", kind, "error", err)
		}
	}
}
