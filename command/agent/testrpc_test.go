package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/endpoints"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
)

// testRPC stands in for the server in handler tests. Reads are answered
// from a real state store with real blocking queries, so that a test can
// write to the store and watch a blocked HTTP request wake up. Writes are
// only recorded; their replies come from the writes map when set.
type testRPC struct {
	state  *state.StateStore
	broker *stream.EventBroker

	mu     sync.Mutex
	calls  []rpcCall
	writes map[string]func(args, reply interface{}) error
	// err, when set, fails every call.
	err error
}

type rpcCall struct {
	Method string
	Args   interface{}
}

func newTestRPC(t *testing.T) *testRPC {
	t.Helper()
	broker := stream.NewEventBroker(stream.Config{})
	t.Cleanup(broker.Close)
	return &testRPC{state: stateWithPublisher(t, broker), broker: broker, writes: map[string]func(args, reply interface{}) error{}}
}

// stateWithPublisher returns an empty store publishing to pub.
func stateWithPublisher(t testing.TB, pub state.EventPublisher) *state.StateStore {
	t.Helper()
	st, err := state.NewStateStore(&state.Config{Publisher: pub})
	must.NoError(t, err)
	return st
}

// onWrite sets the reply of a write method.
func (f *testRPC) onWrite(method string, fn func(args, reply interface{}) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes[method] = fn
}

// lastCall returns the arguments of the last call of method.
func (f *testRPC) lastCall(t *testing.T, method string) interface{} {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.calls) - 1; i >= 0; i-- {
		if f.calls[i].Method == method {
			return f.calls[i].Args
		}
	}
	t.Fatalf("no call of %s (calls: %v)", method, f.calls)
	return nil
}

func (f *testRPC) RPC(method string, args, reply interface{}) error {
	f.mu.Lock()
	f.calls = append(f.calls, rpcCall{Method: method, Args: args})
	write, isWrite := f.writes[method]
	failure := f.err
	f.mu.Unlock()
	if failure != nil {
		return failure
	}
	if done, err := f.checkJob(method, args, reply); done || err != nil {
		return err
	}
	if isWrite {
		return write(args, reply)
	}
	if fn, ok := testReads[method]; ok {
		return fn(f, args, reply)
	}
	switch method {
	case "Status.Leader":
		*reply.(*string) = "127.0.0.1:4647"
	case "Status.Peers":
		*reply.(*[]string) = []string{"127.0.0.1:4647"}
	case "Region.List":
		*reply.(*[]string) = []string{"global"}
	case "Status.Members":
		*reply.(*structs.ServerMembersResponse) = structs.ServerMembersResponse{
			ServerName: "n1", ServerRegion: "global", ServerDC: "dc1",
			Members: []*structs.ServerMember{{Name: "n1.global", Addr: "127.0.0.1", Port: 4648, Status: "alive",
				Tags: map[string]string{"role": "nomad", "region": "global", "dc": "dc1", "port": "4647"}}},
		}
	case "Operator.RaftGetConfiguration":
		*reply.(*structs.RaftConfigurationResponse) = structs.RaftConfigurationResponse{
			Servers: []*structs.RaftServer{{ID: "id1", Node: "n1.global", Address: "127.0.0.1:4647", Leader: true, Voter: true, RaftProtocol: "3"}},
			Index:   7,
		}
	}
	// Any other method is a write nobody configured: it succeeds with a
	// zero reply.
	return nil
}

// checkJob does what the server does first with a submitted job: canonicalize
// and validate it (endpoints.PrepareJob), refusing it as the server would.
// Job.Validate is answered here; done reports that.
func (f *testRPC) checkJob(method string, args, reply interface{}) (bool, error) {
	existing := func(ns, id string) (*structs.Job, error) { return f.state.JobByID(nil, ns, id) }
	switch method {
	case "Job.Register":
		a := args.(*structs.JobRegisterRequest)
		_, err := endpoints.PrepareJob(a.Job, a.Namespace, a.EvalPriority, 0, existing)
		return false, err
	case "Job.Plan":
		a := args.(*structs.JobPlanRequest)
		_, err := endpoints.PrepareJob(a.Job, a.Namespace, 0, 0, existing)
		return false, err
	case "Job.Validate":
		a := args.(*structs.JobValidateRequest)
		out := reply.(*structs.JobValidateResponse)
		_, err := endpoints.PrepareJob(a.Job, a.Namespace, 0, 0, existing)
		var v *structs.ValidationError
		if errors.As(err, &v) {
			out.ValidationErrors, out.Error = v.Problems, v.Error()
			return true, nil
		}
		return true, err
	}
	return false, nil
}

// query runs fn as a blocking query against the store, as the server
// does, and fills the reply's meta.
func (f *testRPC) query(q *structs.QueryOptions, meta *structs.QueryMeta, fn state.QueryFunc) error {
	ctx := context.Background()
	if q.MinQueryIndex > 0 {
		wait := q.MaxQueryTime
		if wait == 0 {
			wait = structs.DefaultBlockingWait
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	idx, err := state.BlockingQuery(ctx, func() *state.StateStore { return f.state }, q.MinQueryIndex, fn)
	if err != nil {
		return err
	}
	meta.Index = idx
	meta.KnownLeader = true
	return nil
}

func tableIndex(s *state.StateStore, table string) uint64 {
	idx, _ := s.Index(table)
	return idx
}

// testReads answers the read methods from the store.
var testReads = map[string]func(f *testRPC, args, reply interface{}) error{
	"Job.List": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.JobListRequest), reply.(*structs.JobListResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			jobs, err := s.JobsByIDPrefix(ws, a.RequestNamespace(), a.Prefix)
			out.Jobs = nil
			for _, j := range jobs {
				sum, _ := s.JobSummaryByID(ws, j.Namespace, j.ID)
				out.Jobs = append(out.Jobs, j.Stub(sum))
			}
			return tableIndex(s, state.TableJobs), err
		})
	},
	"Job.GetJob": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.JobSpecificRequest), reply.(*structs.SingleJobResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			j, err := s.JobByID(ws, a.RequestNamespace(), a.JobID)
			out.Job = j
			if j != nil {
				return j.ModifyIndex, err
			}
			return tableIndex(s, state.TableJobs), err
		})
	},
	"Job.Summary": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.JobSpecificRequest), reply.(*structs.JobSummaryResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			sum, err := s.JobSummaryByID(ws, a.RequestNamespace(), a.JobID)
			out.JobSummary = sum
			return tableIndex(s, state.TableJobSummary), err
		})
	},
	"Job.GetJobVersions": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.JobVersionsRequest), reply.(*structs.JobVersionsResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			vs, err := s.JobVersionsByID(ws, a.RequestNamespace(), a.JobID)
			out.Versions = vs
			return tableIndex(s, state.TableJobVersion), err
		})
	},
	"Job.Allocations": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.JobSpecificRequest), reply.(*structs.JobAllocationsResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			allocs, err := s.AllocsByJob(ws, a.RequestNamespace(), a.JobID, a.All)
			out.Allocations = nil
			for _, al := range allocs {
				out.Allocations = append(out.Allocations, al.Stub())
			}
			return tableIndex(s, state.TableAllocs), err
		})
	},
	"Job.Evaluations": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.JobSpecificRequest), reply.(*structs.JobEvaluationsResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			evals, err := s.EvalsByJob(ws, a.RequestNamespace(), a.JobID)
			out.Evaluations = evals
			return tableIndex(s, state.TableEvals), err
		})
	},
	"Node.List": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.NodeListRequest), reply.(*structs.NodeListResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			nodes, err := s.NodesByIDPrefix(ws, a.Prefix)
			out.Nodes = nil
			for _, n := range nodes {
				out.Nodes = append(out.Nodes, n.Stub())
			}
			return tableIndex(s, state.TableNodes), err
		})
	},
	"Node.GetNode": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.NodeSpecificRequest), reply.(*structs.SingleNodeResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			n, err := s.NodeByID(ws, a.NodeID)
			out.Node = n
			return tableIndex(s, state.TableNodes), err
		})
	},
	"Node.GetAllocs": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.NodeSpecificRequest), reply.(*structs.NodeAllocsResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			allocs, err := s.AllocsByNode(ws, a.NodeID)
			out.Allocs = allocs
			return tableIndex(s, state.TableAllocs), err
		})
	},
	"Eval.List": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.EvalListRequest), reply.(*structs.EvalListResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			evals, err := s.EvalsByIDPrefix(ws, a.RequestNamespace(), a.Prefix)
			out.Evaluations = nil
			for _, e := range evals {
				if (a.FilterJobID == "" || e.JobID == a.FilterJobID) && (a.FilterEvalStatus == "" || e.Status == a.FilterEvalStatus) {
					out.Evaluations = append(out.Evaluations, e)
				}
			}
			return tableIndex(s, state.TableEvals), err
		})
	},
	"Eval.GetEval": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.EvalSpecificRequest), reply.(*structs.SingleEvalResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			e, err := s.EvalByID(ws, a.EvalID)
			out.Eval = e
			return tableIndex(s, state.TableEvals), err
		})
	},
	"Eval.Allocations": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.EvalSpecificRequest), reply.(*structs.EvalAllocationsResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			allocs, err := s.AllocsByEval(ws, a.EvalID)
			out.Allocations = nil
			for _, al := range allocs {
				out.Allocations = append(out.Allocations, al.Stub())
			}
			return tableIndex(s, state.TableAllocs), err
		})
	},
	"Alloc.List": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.AllocListRequest), reply.(*structs.AllocListResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			allocs, err := s.AllocsByIDPrefix(ws, a.RequestNamespace(), a.Prefix)
			out.Allocations = nil
			for _, al := range allocs {
				out.Allocations = append(out.Allocations, al.Stub())
			}
			return tableIndex(s, state.TableAllocs), err
		})
	},
	"Alloc.GetAlloc": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.AllocSpecificRequest), reply.(*structs.SingleAllocResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			al, err := s.AllocByID(ws, a.AllocID)
			out.Alloc = al
			return tableIndex(s, state.TableAllocs), err
		})
	},
	"Operator.SchedulerGetConfiguration": func(f *testRPC, args, reply interface{}) error {
		a, out := args.(*structs.GenericRequest), reply.(*structs.SchedulerConfigurationResponse)
		return f.query(&a.QueryOptions, &out.QueryMeta, func(ws memdb.WatchSet, s *state.StateStore) (uint64, error) {
			idx, cfg, err := s.SchedulerConfig(ws)
			if cfg == nil {
				cfg = structs.DefaultSchedulerConfiguration()
			}
			out.SchedulerConfig = cfg
			return idx, err
		})
	},
}

// testServer is a LocalServer for agent endpoint tests.
type testServer struct {
	mu      sync.Mutex
	workers api.AgentSchedulerWorkerConfigRequest
	broker  *stream.EventBroker
}

func (s *testServer) SchedulerWorkers() ([]api.AgentSchedulerWorkerInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []api.AgentSchedulerWorkerInfo
	for i := 0; i < s.workers.NumSchedulers; i++ {
		out = append(out, api.AgentSchedulerWorkerInfo{
			ID: fmt.Sprintf("w%d", i), EnabledSchedulers: s.workers.EnabledSchedulers,
			Started: "2024-01-01T00:00:00Z", Status: api.WorkerStatusStarted, WorkloadStatus: "WaitingToDequeue",
		})
	}
	return out, nil
}

func (s *testServer) SchedulerWorkerConfig() (api.AgentSchedulerWorkerConfigRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.workers, nil
}

func (s *testServer) SetSchedulerWorkerConfig(c api.AgentSchedulerWorkerConfigRequest) (api.AgentSchedulerWorkerConfigRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workers = c
	return c, nil
}

func (s *testServer) Stats() map[string]map[string]string {
	return map[string]map[string]string{"raft": {"state": "Leader"}}
}

func (s *testServer) Subscribe(req *stream.SubscribeRequest) (*stream.Subscription, error) {
	return s.broker.Subscribe(req)
}

// testHTTP is an API server on httptest with the fakes behind it.
type testHTTP struct {
	t      *testing.T
	rpc    *testRPC
	server *testServer
	http   *HTTPServer
	srv    *httptest.Server
}

func newTestHTTP(t *testing.T, opts ...func(*HTTPServerConfig)) *testHTTP {
	t.Helper()
	rpc := newTestRPC(t)
	ls := &testServer{broker: rpc.broker, workers: api.AgentSchedulerWorkerConfigRequest{
		NumSchedulers: 2, EnabledSchedulers: worker.AllSchedulers(),
	}}
	agentCfg := DevConfig()
	agentCfg.Name = "n1"
	cfg := HTTPServerConfig{
		Agent:          agentCfg,
		RPC:            rpc,
		Server:         ls,
		ClientServers:  func() []string { return []string{"127.0.0.1:4647"} },
		EventHeartbeat: time.Hour,
	}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := NewHTTPServer(cfg)
	must.NoError(t, err)
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)
	return &testHTTP{t: t, rpc: rpc, server: ls, http: h, srv: srv}
}

// do sends a request and returns the response with its body read.
func (h *testHTTP) do(method, path, body string, headers ...string) (*http.Response, string) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	must.NoError(h.t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	must.NoError(h.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must.NoError(h.t, err)
	return resp, string(b)
}

// listen opens a listener on a free loopback port.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	return ln
}

// ResolveACL: the fake server runs with ACLs off.
func (s *testServer) ResolveACL(string) (*acl.ACL, error) { return acl.ACLsDisabled, nil }
