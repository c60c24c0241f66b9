package nomad

import (
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"reflect"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/endpoints"
	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
)

// ErrNoRegionPath answers requests for a region this server cannot reach;
// the structs package's sentinel, which the RPC layer codes as a 400.
var ErrNoRegionPath = structs.ErrNoRegionPath

// rpcMethod is one endpoint method: func (e *XEndpoint) M(args A, reply *R) error.
type rpcMethod struct {
	rcvr      reflect.Value
	fn        reflect.Value
	argType   reflect.Type
	replyType reflect.Type
	// rule is what the method needs of its caller's token.
	rule endpoints.Rule
}

// rpcRegistry holds the endpoints. They are served twice over the same
// receivers: in process by Server.RPC, which calls the method directly and
// so keeps error values intact (a *structs.ValidationError stays one), and
// over connections by ServeRPCConn, which speaks net/rpc's protocol with
// the msgpack codec and sends errors as text. Both pass every error
// through structs.ClassifyError, so it carries its HTTP status either way.
type rpcRegistry struct {
	methods map[string]*rpcMethod
}

var (
	errorType    = reflect.TypeOf((*error)(nil)).Elem()
	authInfoType = reflect.TypeOf((*structs.AuthInfo)(nil)).Elem()
)

// newRPCRegistry registers every endpoint (package nomad/endpoints), each
// serving through s.
func newRPCRegistry(s *Server) (*rpcRegistry, error) {
	r := &rpcRegistry{methods: make(map[string]*rpcMethod)}
	for _, e := range endpoints.All(&endpointServer{s: s}) {
		if err := r.register(e.Name, e.Receiver, e.Rules); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// register adds every exported method of rcvr under "name.Method", with
// its rule. Each must have net/rpc's shape and a rule; a method without
// either is a programming error.
func (r *rpcRegistry) register(name string, rcvr interface{}, rules endpoints.Rules) error {
	v := reflect.ValueOf(rcvr)
	t := v.Type()
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		mt := m.Type
		if mt.NumIn() != 3 || mt.NumOut() != 1 || mt.Out(0) != errorType || mt.In(2).Kind() != reflect.Pointer {
			return fmt.Errorf("RPC endpoint %s.%s: want func(args, *reply) error", name, m.Name)
		}
		rule, ok := rules[m.Name]
		if !ok {
			return fmt.Errorf("RPC endpoint %s.%s: no rule says what it needs of the caller's token", name, m.Name)
		}
		if rule.ChecksToken() && !mt.In(1).Implements(authInfoType) {
			return fmt.Errorf("RPC endpoint %s.%s: its rule checks a token, but %s carries none", name, m.Name, mt.In(1))
		}
		r.methods[name+"."+m.Name] = &rpcMethod{
			rcvr: v, fn: m.Func, argType: mt.In(1), replyType: mt.In(2), rule: rule,
		}
	}
	return nil
}

// call runs one endpoint method and counts it; its error is classified.
func (s *Server) call(method string, m *rpcMethod, argv, replyv reflect.Value) error {
	metrics.IncrCounterWithLabels([]string{"nomad", "rpc", "request"}, 1,
		[]metrics.Label{{Name: "method", Value: method}})
	if err := checkRPCArgs(method, argv); err != nil {
		return structs.ClassifyError(err)
	}
	if info, ok := rpcInfo(argv); ok {
		if region := info.RequestRegion(); region != "" && region != s.config.Region {
			// Another region's request is that region's to authorize:
			// the token may be one of its own, unknown here.
			return structs.ClassifyError(s.forwardRegion(method, region, info, argv.Interface(), replyv.Interface()))
		}
	}
	if err := s.authorize(m.rule, argv); err != nil {
		metrics.IncrCounterWithLabels([]string{"nomad", "rpc", "request_denied"}, 1,
			[]metrics.Label{{Name: "method", Value: method}})
		return structs.ClassifyError(err)
	}
	out := m.fn.Call([]reflect.Value{m.rcvr, argv, replyv})
	err, _ := out[0].Interface().(error)
	if err == nil {
		return nil
	}
	metrics.IncrCounterWithLabels([]string{"nomad", "rpc", "request_error"}, 1,
		[]metrics.Label{{Name: "method", Value: method}})
	return structs.ClassifyError(err)
}

// checkRPCArgs refuses a nil request for a method taking a pointer: a
// msgpack nil body decodes to one, and every method reads its request
// (its token first), so it would panic on the goroutine serving the
// request and take the whole server down.
func checkRPCArgs(method string, argv reflect.Value) error {
	if argv.Kind() == reflect.Pointer && argv.IsNil() {
		return fmt.Errorf("%w: RPC %s: the request is empty", structs.ErrInvalid, method)
	}
	return nil
}

// RPC calls an endpoint in process, as a remote caller would over the
// network: method is "Endpoint.Method" (for example "Job.Register"), args
// the request (a pointer, or the value for endpoints taking one) and reply
// a pointer the endpoint fills. The endpoint owns args for the call and
// may modify it. Errors keep their values (errors.Is and errors.As work);
// those with a known meaning also carry their HTTP status
// (structs.ErrorCode).
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
	return s.call(method, m, argv, replyv)
}

// ServeRPCConn serves msgpack-RPC requests (net/rpc's protocol, so a
// net/rpc client with the msgpack codec talks to it) read from conn until
// it closes, with the same endpoints as RPC. Each request runs on its own
// goroutine, since blocking queries may wait for minutes; responses are
// written one at a time. The network layer calls it for each accepted
// connection (or multiplexed stream).
func (s *Server) ServeRPCConn(conn io.ReadWriteCloser) {
	c := rpcnet.NewServerCodec(conn)
	defer c.Close()
	var inflight sync.WaitGroup
	respond := func(req *rpc.Request, reply interface{}, err error) {
		resp := &rpc.Response{ServiceMethod: req.ServiceMethod, Seq: req.Seq}
		if err != nil {
			resp.Error = err.Error()
			reply = struct{}{}
		}
		if werr := c.WriteResponse(resp, reply); werr != nil {
			s.logger.Debug("writing RPC response", "method", req.ServiceMethod, "error", werr)
		}
	}
	defer inflight.Wait()
	for {
		var req rpc.Request
		if err := c.ReadRequestHeader(&req); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
				s.logger.Debug("reading RPC request", "error", err)
			}
			return
		}
		m, ok := s.rpc.methods[req.ServiceMethod]
		if !ok {
			// The body must still be read to stay in step with the stream.
			if err := c.ReadRequestBody(nil); err != nil {
				return
			}
			respond(&req, nil, fmt.Errorf("%w: %s", structs.ErrUnknownMethod, req.ServiceMethod))
			continue
		}
		argp := reflect.New(m.argType)
		if err := c.ReadRequestBody(argp.Interface()); err != nil {
			respond(&req, nil, fmt.Errorf("RPC %s: decoding request: %w", req.ServiceMethod, err))
			return
		}
		// For a pointer argument type the codec allocated the request
		// behind the new pointer; either way the argument is one level in.
		argv := argp.Elem()
		replyv := reflect.New(m.replyType.Elem())
		inflight.Add(1)
		go func(req rpc.Request) {
			defer inflight.Done()
			err := s.call(req.ServiceMethod, m, argv, replyv)
			respond(&req, replyv.Interface(), err)
		}(req)
	}
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
