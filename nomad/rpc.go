package nomad

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/rpc"
	"reflect"
	"time"

	"github.com/hashicorp/go-metrics"
	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// ErrNoRegionPath answers requests for a region this server cannot reach.
var ErrNoRegionPath = errors.New("No path to region")

// rpcMethod is one endpoint method: func (e *XEndpoint) M(args A, reply *R) error.
type rpcMethod struct {
	rcvr      reflect.Value
	fn        reflect.Value
	argType   reflect.Type
	replyType reflect.Type
}

// rpcRegistry holds the endpoints. They are served twice over the same
// receivers: in process by Server.RPC, which calls the method directly and
// so keeps error values intact (a *structs.ValidationError stays one), and
// over connections by a net/rpc server with the msgpack codec, where
// errors travel as text.
type rpcRegistry struct {
	methods map[string]*rpcMethod
	server  *rpc.Server
}

var errorType = reflect.TypeOf((*error)(nil)).Elem()

// newRPCRegistry registers every endpoint of s.
func newRPCRegistry(s *Server) (*rpcRegistry, error) {
	r := &rpcRegistry{methods: make(map[string]*rpcMethod), server: rpc.NewServer()}
	endpoints := []struct {
		name string
		rcvr interface{}
	}{
		{"Job", &JobEndpoint{srv: s}},
		{"Node", &NodeEndpoint{srv: s}},
		{"Eval", &EvalEndpoint{srv: s}},
		{"Plan", &PlanEndpoint{srv: s}},
		{"Alloc", &AllocEndpoint{srv: s}},
		{"Deployment", &DeploymentEndpoint{srv: s}},
		{"Operator", &OperatorEndpoint{srv: s}},
		{"Status", &StatusEndpoint{srv: s}},
		{"System", &SystemEndpoint{srv: s}},
	}
	for _, e := range endpoints {
		if err := r.register(e.name, e.rcvr); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// register adds every method of rcvr that has net/rpc's shape under
// "name.Method". Endpoint types are expected to have no other exported
// methods; one of another shape is a programming error.
func (r *rpcRegistry) register(name string, rcvr interface{}) error {
	if err := r.server.RegisterName(name, rcvr); err != nil {
		return fmt.Errorf("registering RPC endpoint %s: %w", name, err)
	}
	v := reflect.ValueOf(rcvr)
	t := v.Type()
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		mt := m.Type
		if mt.NumIn() != 3 || mt.NumOut() != 1 || mt.Out(0) != errorType || mt.In(2).Kind() != reflect.Pointer {
			return fmt.Errorf("RPC endpoint %s.%s: want func(args, *reply) error", name, m.Name)
		}
		r.methods[name+"."+m.Name] = &rpcMethod{
			rcvr: v, fn: m.Func, argType: mt.In(1), replyType: mt.In(2),
		}
	}
	return nil
}

// RPC calls an endpoint in process, as a remote caller would over the
// network: method is "Endpoint.Method" (for example "Job.Register"), args
// the request (a pointer, or the value for endpoints taking one) and reply
// a pointer the endpoint fills. The endpoint owns args for the call and
// may modify it. Errors are returned as the endpoint returned them.
func (s *Server) RPC(method string, args, reply interface{}) error {
	m, ok := s.rpc.methods[method]
	if !ok {
		return fmt.Errorf("%w: %s", structs.ErrUnknownMethod, method)
	}
	argv := reflect.ValueOf(args)
	if argv.Type() != m.argType {
		if argv.Kind() == reflect.Pointer && argv.Type().Elem() == m.argType {
			argv = argv.Elem()
		} else {
			return fmt.Errorf("RPC %s: args are %T, want %s", method, args, m.argType)
		}
	}
	replyv := reflect.ValueOf(reply)
	if replyv.Type() != m.replyType {
		return fmt.Errorf("RPC %s: reply is %T, want %s", method, reply, m.replyType)
	}
	metrics.IncrCounterWithLabels([]string{"nomad", "rpc", "request"}, 1,
		[]metrics.Label{{Name: "method", Value: method}})
	out := m.fn.Call([]reflect.Value{m.rcvr, argv, replyv})
	if err, _ := out[0].Interface().(error); err != nil {
		metrics.IncrCounterWithLabels([]string{"nomad", "rpc", "request_error"}, 1,
			[]metrics.Label{{Name: "method", Value: method}})
		return err
	}
	return nil
}

// ServeRPCConn serves msgpack-RPC requests read from conn until it
// closes, with the same endpoints as RPC. The network layer calls it for
// each accepted connection (or multiplexed stream).
func (s *Server) ServeRPCConn(conn io.ReadWriteCloser) {
	s.rpc.server.ServeCodec(msgpackrpc.NewCodecFromHandle(true, true, conn, structs.MsgpackHandle))
}

// forward decides where a request is served; every endpoint calls it
// first. It returns false when this server must serve the request itself:
// it leads, or the request is a read that accepts stale data. Otherwise it
// returns true with the outcome of serving it elsewhere. Only one region
// exists, and until servers talk to each other, a follower answers
// structs.ErrNoLeader for what only the leader may serve; forwarding to
// the leader belongs here.
func (s *Server) forward(method string, info structs.RPCInfo, args, reply interface{}) (bool, error) {
	if region := info.RequestRegion(); region != "" && region != s.config.Region {
		return true, fmt.Errorf("%w %q", ErrNoRegionPath, region)
	}
	if info.IsRead() && info.AllowStaleRead() {
		return false, nil
	}
	if s.IsLeader() {
		return false, nil
	}
	return true, fmt.Errorf("%s: %w", method, structs.ErrNoLeader)
}

// blockingQuery runs a read endpoint's query as a blocking query: at once
// when opts.MinQueryIndex is 0, otherwise until the result's index passes
// it or the wait (opts.MaxQueryTime, default structs.DefaultBlockingWait,
// capped at structs.MaxBlockingWait, plus up to 1/16 of it as jitter so
// that many waiters do not return together) runs out on the server's
// clock. It fills meta. query must overwrite the reply on every run.
func (s *Server) blockingQuery(opts *structs.QueryOptions, meta *structs.QueryMeta, query state.QueryFunc) error {
	ctx := s.shutdownCtx
	if opts.MinQueryIndex > 0 {
		wait := opts.MaxQueryTime
		if wait <= 0 {
			wait = structs.DefaultBlockingWait
		}
		if wait > structs.MaxBlockingWait {
			wait = structs.MaxBlockingWait
		}
		wait += rand.N(wait/16 + 1)
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		t := s.clock.AfterFunc(wait, cancel)
		defer t.Stop()
	}
	index, err := state.BlockingQuery(ctx, s.State, opts.MinQueryIndex, query)
	if err != nil {
		return err
	}
	meta.Index = index
	s.setQueryMeta(meta)
	return nil
}

// setQueryMeta records how fresh this server's answer is.
func (s *Server) setQueryMeta(meta *structs.QueryMeta) {
	if s.IsLeader() {
		meta.LastContact = 0
		meta.KnownLeader = true
		return
	}
	// Raft keeps wall-clock time, not the server's clock.
	meta.LastContact = time.Since(s.raft.LastContact())
	meta.KnownLeader = s.Leader() != ""
}

// maxTableIndex returns the highest index among tables, for queries that
// read several.
func maxTableIndex(store *state.StateStore, tables ...string) (uint64, error) {
	var max uint64
	for _, t := range tables {
		idx, err := store.Index(t)
		if err != nil {
			return 0, err
		}
		if idx > max {
			max = idx
		}
	}
	return max, nil
}
