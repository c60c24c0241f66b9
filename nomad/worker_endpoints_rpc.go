package nomad

import (
	"context"

	"github.com/opennomad/nomad/nomad/endpoints"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
)

// rpcWorkerEndpoints are the server's own worker.Endpoints: every call is
// the RPC a remote worker would make (Eval.*, Plan.Submit), through
// Server.RPC, so it is forwarded to the leader wherever the worker runs
// and its errors keep their text ("No cluster leader", "plan queue is
// disabled"). Dequeue alone calls the endpoint with the worker's context,
// so that pausing or stopping a worker ends its wait at once.
type rpcWorkerEndpoints struct {
	s *Server
}

var _ worker.Endpoints = (*rpcWorkerEndpoints)(nil)

func (e *rpcWorkerEndpoints) Dequeue(ctx context.Context, req *structs.EvalDequeueRequest) (*structs.EvalDequeueResponse, error) {
	var reply structs.EvalDequeueResponse
	if err := structs.ClassifyError(endpoints.Dequeue(ctx, &endpointServer{s: e.s}, req, &reply)); err != nil {
		return nil, err
	}
	return &reply, nil
}

func (e *rpcWorkerEndpoints) Ack(req *structs.EvalAckRequest) error {
	return e.s.RPC("Eval.Ack", req, &structs.GenericResponse{})
}

func (e *rpcWorkerEndpoints) Nack(req *structs.EvalAckRequest) error {
	return e.s.RPC("Eval.Nack", req, &structs.GenericResponse{})
}

func (e *rpcWorkerEndpoints) UpdateEval(req *structs.EvalUpdateRequest) error {
	return e.s.RPC("Eval.Update", req, &structs.GenericResponse{})
}

func (e *rpcWorkerEndpoints) CreateEval(req *structs.EvalUpdateRequest) error {
	return e.s.RPC("Eval.Create", req, &structs.GenericResponse{})
}

func (e *rpcWorkerEndpoints) ReblockEval(req *structs.EvalUpdateRequest) error {
	return e.s.RPC("Eval.Reblock", req, &structs.GenericResponse{})
}

func (e *rpcWorkerEndpoints) SubmitPlan(req *structs.PlanRequest) (*structs.PlanResponse, error) {
	var reply structs.PlanResponse
	if err := e.s.RPC("Plan.Submit", req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}
