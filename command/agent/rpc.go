package agent

import (
	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/stream"
)

// RPCer is how HTTP handlers reach the servers. On a server agent it is the
// local server (which forwards to the leader or another region itself);
// on a client-only agent it will be the client's connection to its
// servers. Handlers call it from their request goroutine, concurrently.
//
// RPC must fill reply and return nil, or return an error. An error that
// carries an HTTP status (structs.ErrorCode: the server codes validation
// failures 400, unknown objects 404, disabled registration 403, in
// process or as "RPC Error:: <code>,<message>" text) answers with that
// status; anything else answers 500 with the error's text.
//
// The methods called, with their argument and reply types (all from
// package structs):
//
//	Job.List                  JobListRequest               JobListResponse
//	Job.Register              JobRegisterRequest           JobRegisterResponse
//	Job.GetJob                JobSpecificRequest           SingleJobResponse
//	Job.GetJobVersions        JobVersionsRequest           JobVersionsResponse
//	Job.Summary               JobSpecificRequest           JobSummaryResponse
//	Job.Allocations           JobSpecificRequest           JobAllocationsResponse
//	Job.Evaluations           JobSpecificRequest           JobEvaluationsResponse
//	Job.Deregister            JobDeregisterRequest         JobDeregisterResponse
//	Job.Plan                  JobPlanRequest               JobPlanResponse
//	Job.Evaluate              JobEvaluateRequest           JobRegisterResponse
//	Job.Validate              JobValidateRequest           JobValidateResponse
//	Job.Deployments           JobSpecificRequest           DeploymentListResponse
//	Job.LatestDeployment      JobSpecificRequest           SingleDeploymentResponse
//	Job.Dispatch              JobDispatchRequest           JobDispatchResponse
//	Periodic.Force            PeriodicForceRequest         PeriodicForceResponse
//	Deployment.List           DeploymentListRequest        DeploymentListResponse
//	Deployment.GetDeployment  DeploymentSpecificRequest    SingleDeploymentResponse
//	Deployment.Allocations    DeploymentSpecificRequest    AllocListResponse
//	Deployment.Promote        DeploymentPromoteRequest     DeploymentUpdateResponse
//	Deployment.Fail           DeploymentFailRequest        DeploymentUpdateResponse
//	Deployment.Pause          DeploymentPauseRequest       DeploymentUpdateResponse
//	Deployment.SetAllocHealth DeploymentAllocHealthRequest DeploymentUpdateResponse
//	Node.List                 NodeListRequest              NodeListResponse
//	Node.GetNode              NodeSpecificRequest          SingleNodeResponse
//	Node.GetAllocs            NodeSpecificRequest          NodeAllocsResponse
//	Node.UpdateDrain          NodeUpdateDrainRequest       NodeDrainUpdateResponse
//	Node.UpdateEligibility    NodeUpdateEligibilityRequest NodeEligibilityUpdateResponse
//	Node.Evaluate             NodeEvaluateRequest          NodeUpdateResponse
//	Eval.List                 EvalListRequest              EvalListResponse
//	Eval.GetEval              EvalSpecificRequest          SingleEvalResponse
//	Eval.Allocations          EvalSpecificRequest          EvalAllocationsResponse
//	Alloc.List                AllocListRequest             AllocListResponse
//	Alloc.GetAlloc            AllocSpecificRequest         SingleAllocResponse
//	Alloc.Stop                AllocStopRequest             AllocStopResponse
//	Operator.SchedulerGetConfiguration  GenericRequest     SchedulerConfigurationResponse
//	Operator.SchedulerSetConfiguration  SchedulerSetConfigRequest SchedulerSetConfigurationResponse
//	Operator.RaftGetConfiguration       GenericRequest     RaftConfigurationResponse
//	Status.Leader             GenericRequest               string
//	Status.Peers              GenericRequest               []string
//	Status.Members            GenericRequest               ServerMembersResponse
//	Region.List               GenericRequest               []string
//	System.GarbageCollect     GenericRequest               GenericResponse
//
// Reads carry MinQueryIndex/MaxQueryTime for blocking queries; the server
// blocks. List reads never carry Filter, PerPage, NextToken or Reverse:
// the agent applies those to the whole list (list_options.go). A read of a single object that does not exist returns a nil
// object and no error; the handler answers 404.
type RPCer interface {
	RPC(method string, args, reply interface{}) error
}

// LocalServer is what the agent endpoints read from the server running in
// this agent's process, nil on a client-only agent (those endpoints then
// answer 400 "Server only endpoint"). Methods are called from request
// goroutines, concurrently.
type LocalServer interface {
	// SchedulerWorkers describes each scheduler worker of this server.
	SchedulerWorkers() ([]api.AgentSchedulerWorkerInfo, error)
	// SchedulerWorkerConfig is the worker pool configuration in effect.
	SchedulerWorkerConfig() (api.AgentSchedulerWorkerConfigRequest, error)
	// SetSchedulerWorkerConfig replaces the worker pool (runtime only) and
	// returns the configuration now in effect. The caller has validated
	// the request. A non-nil Paused pauses or resumes every worker; a
	// server that supports it reports Paused in what it returns. Errors
	// of these three are answered like RPC errors.
	SetSchedulerWorkerConfig(api.AgentSchedulerWorkerConfigRequest) (api.AgentSchedulerWorkerConfigRequest, error)
	// Stats are the server's own counters for /v1/agent/self, by section
	// ("nomad", "raft", ...).
	Stats() map[string]map[string]string
	// Subscribe opens an event stream subscription on the server's event
	// broker. A *CodedError answers with its status (501 when the broker
	// is disabled); stream.ErrSubscriptionClosed means the server is
	// stopping; any other error is a request the broker refuses (400).
	Subscribe(req *stream.SubscribeRequest) (*stream.Subscription, error)
	// ResolveACL returns what the token with secret may do (everything
	// while ACLs are off): the authorization of the routes the agent
	// answers itself. A secret no token has is
	// structs.ErrPermissionDenied, an expired token
	// structs.ErrACLTokenExpired.
	ResolveACL(secret string) (*acl.ACL, error)
}
