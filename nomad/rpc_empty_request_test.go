package nomad

import (
	"fmt"
	"net"
	"net/rpc"
	"reflect"
	"slices"
	"testing"
	"time"

	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// A request whose body is msgpack nil decodes to a nil pointer; it is
// refused with a 400 instead of crashing the server on the goroutine
// serving it, and the connection keeps serving.
func TestRPC_NilRequestBodyIsRefused(t *testing.T) {
	s := newTestServer(t, nil)
	srvConn, cliConn := net.Pipe()
	go s.ServeRPCConn(srvConn)
	client := rpc.NewClientWithCodec(msgpackrpc.NewCodecFromHandle(true, true, cliConn, structs.MsgpackHandle))
	defer cliConn.Close()

	var reply structs.JobRegisterResponse
	err := client.Call("Job.Register", nil, &reply)
	code, msg, ok := structs.ErrorCode(err)
	must.True(t, ok, must.Sprintf("%v", err))
	must.Eq(t, 400, code)
	must.StrContains(t, msg, "empty")

	var leader string
	must.NoError(t, client.Call("Status.Leader", &structs.GenericRequest{}, &leader))
}

// Every method answers a request with nothing set, and a nil one, with
// an error or a reply, never a panic: a client may send either.
func TestRPC_EveryMethodSurvivesAnEmptyRequest(t *testing.T) {
	s := newTestServer(t, nil)
	methods := slices.Sorted(func(yield func(string) bool) {
		for name := range s.rpc.methods {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range methods {
		m := s.rpc.methods[name]
		args := []reflect.Value{reflect.New(m.argType)}
		if m.argType.Kind() == reflect.Pointer {
			args = append(args, reflect.Zero(m.argType))
			args[0].Elem().Set(reflect.New(m.argType.Elem()))
		}
		for i, argp := range args {
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) {
				argv := argp
				if i == 0 {
					argv = argp.Elem()
				}
				done := make(chan any, 1)
				go func() {
					defer func() { done <- recover() }()
					_ = s.call(name, m, argv, reflect.New(m.replyType.Elem()))
				}()
				select {
				case p := <-done:
					if p != nil {
						t.Fatalf("panic: %v", p)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no answer in 10s")
				}
			})
		}
	}
}
