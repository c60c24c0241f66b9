package client

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/structs"
)

// answer is an RPCer that answers every call with err and counts them.
type answer struct {
	err   error
	calls int
}

func (a *answer) RPC(string, interface{}, interface{}) error {
	a.calls++
	return a.err
}

func TestServerList_RotatesPastServersThatCannotServe(t *testing.T) {
	a := &answer{err: fmt.Errorf("Node.Register: %w", structs.ErrNoLeader)}
	b := &answer{}
	c := &answer{}
	l := newServerList([]ServerEndpoint{{"a", a}, {"b", b}, {"c", c}}, hclog.NewNullLogger())

	if err := l.call("Node.Register", nil, nil); err != nil {
		t.Fatalf("call: %v", err)
	}
	if a.calls != 1 || b.calls != 1 || c.calls != 0 {
		t.Fatalf("calls a=%d b=%d c=%d, want 1 1 0", a.calls, b.calls, c.calls)
	}
	// b is now preferred: the next call does not try a again.
	if err := l.call("Node.UpdateStatus", nil, nil); err != nil {
		t.Fatalf("call: %v", err)
	}
	if a.calls != 1 || b.calls != 2 {
		t.Fatalf("after rotation calls a=%d b=%d, want 1 2", a.calls, b.calls)
	}
	if got := l.names(); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Fatalf("names = %v", got)
	}
}

func TestServerList_RequestErrorsDoNotRotate(t *testing.T) {
	refusal := &structs.ValidationError{Problems: []string{"missing node ID"}}
	a := &answer{err: refusal}
	b := &answer{}
	l := newServerList([]ServerEndpoint{{"a", a}, {"b", b}}, hclog.NewNullLogger())
	err := l.call("Node.Register", nil, nil)
	if !errors.Is(err, refusal) {
		t.Fatalf("err = %v, want the refusal", err)
	}
	if b.calls != 0 || l.names()[0] != "a" {
		t.Fatalf("a refusal moved on to b (calls %d, order %v)", b.calls, l.names())
	}
}

func TestServerList_AllUnavailable(t *testing.T) {
	a := &answer{err: ErrServerUnreachable}
	b := &answer{err: fmt.Errorf("dial: %w", syscall.ECONNREFUSED)}
	l := newServerList([]ServerEndpoint{{"a", a}, {"b", b}}, hclog.NewNullLogger())
	err := l.call("Node.Register", nil, nil)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want the last server's", err)
	}
	if a.calls != 1 || b.calls != 1 {
		t.Fatalf("each server once: a=%d b=%d", a.calls, b.calls)
	}
	if err := newServerList(nil, hclog.NewNullLogger()).call("Node.Register", nil, nil); !errors.Is(err, ErrNoServers) {
		t.Fatalf("no servers: %v", err)
	}
}

func TestServerUnavailable(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{structs.ErrNoLeader, true},
		{fmt.Errorf("Job.Register: %w", structs.ErrNoLeader), true},
		{errors.New("rpc error: No cluster leader"), true}, // text after a network hop
		{ErrServerUnreachable, true},
		{io.EOF, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{fmt.Errorf(`node "x": %w`, structs.ErrUnknownNode), false},
		{&structs.ValidationError{Problems: []string{"bad"}}, false},
		{errors.New("node secret ID does not match"), false},
	}
	for _, tc := range cases {
		if got := serverUnavailable(tc.err); got != tc.want {
			t.Errorf("serverUnavailable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestIsUnknownNode(t *testing.T) {
	for err, want := range map[error]bool{
		fmt.Errorf(`node "x": %w`, structs.ErrUnknownNode): true,
		errors.New(`rpc: node "x": node not found`):        true,
		errors.New("No cluster leader"):                    false,
	} {
		if got := isUnknownNode(err); got != want {
			t.Errorf("isUnknownNode(%v) = %v", err, got)
		}
	}
}
