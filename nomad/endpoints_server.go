package nomad

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/endpoints"
	"github.com/opennomad/nomad/nomad/evaltrace"
	"github.com/opennomad/nomad/nomad/periodic"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
)

// endpointServer is the server as the RPC endpoints (package
// nomad/endpoints) see it: each method hands the call to the part of the
// server that owns it.
type endpointServer struct {
	s *Server
}

var _ endpoints.Server = (*endpointServer)(nil)

func (e *endpointServer) Forward(method string, info structs.RPCInfo, args, reply interface{}) (bool, error) {
	return e.s.forward(method, info, args, reply)
}

func (e *endpointServer) State() *state.StateStore { return e.s.State() }

func (e *endpointServer) RaftApply(t structs.MessageType, msg interface{}) (interface{}, uint64, error) {
	return e.s.raftApply(t, msg)
}

func (e *endpointServer) Clock() clock.Clock                       { return e.s.clock }
func (e *endpointServer) ShutdownContext() context.Context         { return e.s.shutdownCtx }
func (e *endpointServer) SetQueryMeta(meta *structs.QueryMeta)     { e.s.setQueryMeta(meta) }
func (e *endpointServer) Logger() hclog.Logger                     { return e.s.logger }
func (e *endpointServer) IsEstablishedLeader() bool                { return e.s.isEstablishedLeader() }
func (e *endpointServer) KickCancelableReaper()                    { e.s.kickCancelableReaper() }
func (e *endpointServer) KickKeyring()                             { e.s.kickKeyring() }
func (e *endpointServer) SchedulerConfigChanged() error            { return e.s.handleSchedulerConfigChange() }
func (e *endpointServer) LeaderRPCAddr() string                    { return e.s.leaderRPCAddr() }
func (e *endpointServer) ClientServers() []*structs.NodeServerInfo { return e.s.clientServers() }
func (e *endpointServer) RaftPeers() ([]string, error)             { return e.s.raftPeers() }
func (e *endpointServer) RemoveRaftPeer(id string) (uint64, error) { return e.s.removeRaftPeer(id) }
func (e *endpointServer) Members() []*structs.ServerMember         { return e.s.members() }
func (e *endpointServer) Regions() []string                        { return e.s.Regions() }
func (e *endpointServer) MemberName() string                       { return e.s.memberName() }
func (e *endpointServer) SchedulerWorkers() *worker.Pool           { return e.s.workers }

func (e *endpointServer) ForwardToServer(method, serverID string, info structs.RPCInfo, args, reply interface{}) (bool, error) {
	return e.s.forwardToServer(method, serverID, info, args, reply)
}

func (e *endpointServer) ServerHealth() (*structs.OperatorHealthReply, error) {
	return e.s.serverHealth()
}

func (e *endpointServer) LocalRaftStats() structs.RaftStats { return e.s.localRaftStats() }

func (e *endpointServer) LocalMemory() structs.ServerMemory { return e.s.localMemory() }

func (e *endpointServer) MemoryPressure() (bool, structs.ServerMemory) { return e.s.memory.Refusing() }

func (e *endpointServer) TransferLeadership(id, address string) error {
	return e.s.transferLeadership(id, address)
}

func (e *endpointServer) ResolveACL(secretID string) (*acl.ACL, error) {
	return e.s.ResolveACL(secretID)
}

func (e *endpointServer) Settings() endpoints.Settings {
	c := e.s.config
	return endpoints.Settings{
		Region: c.Region, Datacenter: c.Datacenter, NodeName: c.NodeName,
		JobMaxCount: c.JobMaxCount, JobMaxSourceSize: c.JobMaxSourceSize, Schedulers: c.Schedulers,
		ACLEnabled: c.ACLEnabled, ACLTokenMinExpirationTTL: c.ACLTokenMinExpirationTTL,
		ACLTokenMaxExpirationTTL: c.ACLTokenMaxExpirationTTL, DataDir: c.DataDir,
		AuthoritativeRegion: e.s.authoritativeRegion(),
	}
}

func (e *endpointServer) EvalTrace() *evaltrace.Trace { return e.s.evalTrace }

func (e *endpointServer) EvalBroker() endpoints.EvalBroker {
	if e.s.evalBroker == nil {
		return nil
	}
	return e.s.evalBroker
}

func (e *endpointServer) BlockedEvals() endpoints.BlockedEvals {
	if e.s.blockedEvals == nil {
		return nil
	}
	return e.s.blockedEvals
}

func (e *endpointServer) EvalBacklog() int {
	n := 0
	if e.s.evalBroker != nil {
		n += e.s.evalBroker.TotalReady()
	}
	if e.s.blockedEvals != nil {
		n += e.s.blockedEvals.TotalBlocked()
	}
	return n
}

func (e *endpointServer) EnqueuePlan(plan *structs.Plan) (endpoints.PlanFuture, error) {
	if e.s.planQueue == nil {
		return nil, structs.ErrPlanQueueDisabled
	}
	return e.s.planQueue.Enqueue(plan)
}

func (e *endpointServer) EnqueueCoreJob(kind string) (*structs.Evaluation, error) {
	return e.s.enqueueCoreJob(kind)
}

func (e *endpointServer) ResetHeartbeat(nodeID string) (time.Duration, error) {
	return e.s.heartbeats.reset(nodeID)
}

func (e *endpointServer) ClearHeartbeat(nodeID string) { e.s.heartbeats.clear(nodeID) }
func (e *endpointServer) HeartbeatCount() int          { return e.s.heartbeats.count() }

func (e *endpointServer) BatchAllocUpdates(updates []*structs.Allocation, evals []*structs.Evaluation) (uint64, error) {
	return e.s.allocUpdates.add(updates, evals).wait()
}

func (e *endpointServer) RaftConfiguration(reply *structs.RaftConfigurationResponse) error {
	return e.s.raftConfiguration(reply)
}

func (e *endpointServer) Deployments() endpoints.DeploymentWatcher { return e.s.duties.deploys }
func (e *endpointServer) VariableLocks() endpoints.VariableLocks   { return e.s.variableLocks() }

func (e *endpointServer) ForcePeriodicRun(namespace, jobID string) (*periodic.Launched, error) {
	return e.s.duties.periodic.ForceRun(namespace, jobID)
}
