package nomad

import (
	"bytes"
	"net/rpc"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// rpcStream is a connection's inbound bytes; what the server writes back
// is dropped.
type rpcStream struct{ *bytes.Reader }

func (rpcStream) Write(p []byte) (int, error) { return len(p), nil }
func (rpcStream) Close() error                { return nil }

// encodeRPCRequest is what a msgpack-RPC client sends for one call.
func encodeRPCRequest(tb testing.TB, method string, seq uint64, args interface{}) []byte {
	var buf bytes.Buffer
	enc := codec.NewEncoder(&buf, structs.MsgpackHandle)
	if err := enc.Encode(&rpc.Request{ServiceMethod: method, Seq: seq}); err != nil {
		tb.Fatal(err)
	}
	if err := enc.Encode(args); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzRPCRequestStream reads a connection's bytes as ServeRPCConn does:
// request headers, each followed by a body decoded into the argument
// type of the method the header names (every registered method's type
// is reachable). Then it does what the server does with a request before
// the endpoint runs: the argument must be usable (a pointer argument not
// nil) and its token and namespace are read for the method's rule.
// Decoding may fail; nothing may panic.
func FuzzRPCRequestStream(f *testing.F) {
	reg, err := newRPCRegistry(&Server{})
	if err != nil {
		f.Fatal(err)
	}
	methods := slices.Sorted(func(yield func(string) bool) {
		for m := range reg.methods {
			if !yield(m) {
				return
			}
		}
	})
	// One zero request per method, as a client built from scratch sends.
	for i, name := range methods {
		f.Add(encodeRPCRequest(f, name, uint64(i), reflect.New(reg.methods[name].argType).Elem().Interface()))
	}
	f.Add(encodeRPCRequest(f, "Job.Register", 1, &structs.JobRegisterRequest{Job: mock.Job()}))
	f.Add(encodeRPCRequest(f, "Node.Register", 2, &structs.NodeRegisterRequest{Node: mock.Node()}))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := rpcnet.NewServerCodec(rpcStream{bytes.NewReader(data)})
		for range 8 {
			var req rpc.Request
			if err := c.ReadRequestHeader(&req); err != nil {
				return
			}
			m, ok := reg.methods[req.ServiceMethod]
			if !ok {
				if err := c.ReadRequestBody(nil); err != nil {
					return
				}
				continue
			}
			argp := reflect.New(m.argType)
			if err := c.ReadRequestBody(argp.Interface()); err != nil {
				return
			}
			argv := argp.Elem()
			if err := checkRPCArgs(req.ServiceMethod, argv); err != nil {
				continue // answered with a 400
			}
			if info, ok := rpcAuthInfo(argv); ok {
				_, _ = info.RequestToken(), info.RequestNamespace()
			}
		}
	})
}
