package nomad

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
)

func TestResolveAdvertise(t *testing.T) {
	bound := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 34567}
	wildcard := &net.TCPAddr{IP: net.IPv4zero, Port: 4647}
	cases := []struct {
		name      string
		advertise string
		bound     *net.TCPAddr
		want      string
		err       string
	}{
		{name: "the listener's address", bound: bound, want: "127.0.0.1:34567"},
		{name: "as configured", advertise: "10.0.0.1:4647", bound: bound, want: "10.0.0.1:4647"},
		{name: "port 0 takes the listener's", advertise: "10.0.0.1:0", bound: bound, want: "10.0.0.1:34567"},
		{name: "a wildcard bind needs an advertise address", bound: wildcard, err: "must be advertised"},
		{name: "a wildcard advertise address", advertise: "0.0.0.0:4647", bound: wildcard, err: "cannot dial a wildcard"},
		{name: "no port", advertise: "10.0.0.1", bound: bound, err: "missing port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveAdvertise(tc.advertise, tc.bound)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

func TestRetryForward(t *testing.T) {
	read := &structs.QueryOptions{}
	write := &structs.WriteRequest{}
	refused := fmt.Errorf("%w (%w): dial: %w", rpcnet.ErrConnection, rpcnet.ErrNotSent, syscall.ECONNREFUSED)
	broken := fmt.Errorf("%w: read: EOF", rpcnet.ErrConnection)
	cases := []struct {
		name  string
		err   error
		read  bool
		write bool
	}{
		{"no leader known yet", errLeaderUnknown, true, true},
		{"the leader lost its leadership", rpcnet.DecodeError("Job.Register: No cluster leader"), true, true},
		{"the leader is gone (not sent)", refused, true, true},
		{"the connection broke after sending", broken, true, false},
		{"the request was refused", rpcnet.DecodeError("RPC Error:: 400,job \"x\": bad"), false, false},
		{"another error", errors.New("boom"), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.read, retryForward(tc.err, read), must.Sprint("read"))
			must.Eq(t, tc.write, retryForward(tc.err, write), must.Sprint("write"))
		})
	}
}
