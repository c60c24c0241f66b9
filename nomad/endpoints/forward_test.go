package endpoints

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// forwardingServer answers every Forward as served elsewhere; any other
// call panics on the nil embedded Server.
type forwardingServer struct {
	Server
	methods []string
}

// ShutdownContext is read by Eval.Dequeue before it forwards.
func (f *forwardingServer) ShutdownContext() context.Context { return context.Background() }

// Settings and State are read by the ACL writes that decide which region
// they are written in before they forward (acl_authoritative.go).
func (f *forwardingServer) Settings() Settings { return Settings{} }

func (f *forwardingServer) State() *state.StateStore {
	store, err := state.NewStateStore(nil)
	if err != nil {
		panic(err)
	}
	return store
}

var errForwarded = errors.New("forwarded")

func (f *forwardingServer) Forward(method string, _ structs.RPCInfo, _, _ interface{}) (bool, error) {
	f.methods = append(f.methods, method)
	return true, errForwarded
}

// ForwardToServer is where the methods meant for one named server (the
// Workers endpoint) ask where they are served, instead of Forward.
func (f *forwardingServer) ForwardToServer(method, _ string, _ structs.RPCInfo, _, _ interface{}) (bool, error) {
	f.methods = append(f.methods, method)
	return true, errForwarded
}

// notForwarded are the methods any server answers itself, without asking
// where the request is served.
var notForwarded = map[string]bool{
	"Job.Validate":                  true, // reads only the registered version
	"Status.Ping":                   true,
	"Status.Leader":                 true, // Status.* forward only another region's
	"Status.Peers":                  true,
	"Status.Members":                true,
	"Status.RaftStats":              true, // each server answers for its own log
	"Status.MemoryStats":            true, // each server answers for its own heap
	"Region.List":                   true,
	"Operator.RaftGetConfiguration": true, // forwards only another region's
}

// Every endpoint method asks Forward (or ForwardToServer) first, under
// its own RPC name, and
// does nothing else when the request is served elsewhere: the one place a
// check common to every request goes.
func TestEndpoints_ForwardFirst(t *testing.T) {
	seen := map[string]bool{}
	for j, e := range All(nil) {
		v := reflect.ValueOf(e.Receiver)
		typ := v.Type()
		for i := 0; i < typ.NumMethod(); i++ {
			m := typ.Method(i)
			name := e.Name + "." + m.Name
			must.False(t, seen[name], must.Sprintf("%s registered twice", name))
			seen[name] = true
			mt := m.Type
			must.Eq(t, 3, mt.NumIn(), must.Sprintf("%s: want func(args, *reply) error", name))
			if notForwarded[name] {
				continue
			}
			srv := &forwardingServer{}
			rcvr := reflect.ValueOf(All(srv)[j].Receiver)
			args := reflect.New(mt.In(1))
			if mt.In(1).Kind() == reflect.Pointer {
				args.Elem().Set(reflect.New(mt.In(1).Elem()))
			}
			reply := reflect.New(mt.In(2).Elem())
			out := m.Func.Call([]reflect.Value{rcvr, args.Elem(), reply})
			err, _ := out[0].Interface().(error)
			must.ErrorIs(t, err, errForwarded, must.Sprintf("%s", name))
			must.Eq(t, []string{name}, srv.methods)
		}
	}
	for name := range notForwarded {
		must.True(t, seen[name], must.Sprintf("%s is not an endpoint method", name))
	}
}
