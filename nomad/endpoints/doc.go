// Package endpoints holds the server's RPC endpoints: Job, Node, Eval,
// Plan, Alloc, Deployment, Periodic, Operator, Status, Region and System,
// served as "Job.Register", "Node.UpdateStatus", ... by the RPC registry
// of package nomad, in process (Server.RPC) and over connections
// (Server.ServeRPCConn).
//
// # What lives here
//
// One file per endpoint (job.go, node.go, eval.go, ...), with the checks
// and the building of Raft entries they need: job validation and the
// evals a job change creates (job.go), dispatch (job_dispatch.go), the
// dry-run planner of Job.Plan (job_plan.go), the evals a node change
// creates (node_evals.go), the client alloc updates (node_alloc_updates.go)
// and the garbage collector's deletions (gc.go). blocking.go runs a read
// as a blocking query on the server's clock. All returns every endpoint
// with the name its methods are served under; package nomad registers
// them.
//
// # The shape of an endpoint method
//
// Every method has net/rpc's shape, func(args *A, reply *R) error, and
// begins by asking the server where the request is served:
//
//	if done, err := j.srv.Forward("Job.Register", args, args, reply); done {
//		return err
//	}
//
// then does its work on this server. Reads run through blockingQuery;
// writes through Server.RaftApply. That first step is the one place a
// check that applies to every request (authorization) goes. The few
// methods any server answers itself (Status.*, Region.List,
// Operator.RaftGetConfiguration forward only another region's requests;
// Job.Validate and Status.Ping never) are listed in forward_test.go,
// which checks every other method forwards first. Exported
// methods of an endpoint are all served: helpers are unexported, and
// Dequeue, the in-process Eval.Dequeue the server's own workers call with
// their context, is a function.
//
// # Errors
//
// Endpoints return errors of a structs error kind (structs.ErrUnknownJob,
// *structs.ValidationError, structs.ErrBrokerDisabled, ...); the registry
// classifies them for their HTTP status. RPC method names, error kinds,
// metric names (nomad.job.register, ...) and wire formats are Nomad's and
// must not change.
//
// # Imports
//
// This package imports structs, scheduler, nomad/state, nomad/clock,
// nomad/fsm (the enforce-index check Job.Register shares with the FSM)
// and nomad/periodic (the launch Periodic.Force reports), and never
// package nomad: it reaches the server only through the Server interface
// (server.go), whose comments are the contract package nomad keeps
// (nomad/endpoints_server.go). The leader's components are reached
// through the small interfaces EvalBroker, BlockedEvals, PlanFuture and
// DeploymentWatcher, so the plan queue and applier, the broker and the
// watchers can change package without touching the endpoints. The
// endpoints' tests run against a real server through Server.RPC and live
// in package nomad (job_endpoint_test.go, node_endpoint_test.go,
// deployment_endpoint_test.go).
package endpoints
