package rpcnet

import (
	"net"
	"net/rpc"
	"testing"

	"github.com/shoenig/test/must"
)

// A response that cannot be written closes the connection: the reading
// side ends, and later responses fail at once instead of writing into a
// stream that is out of step.
func TestServerCodec_FailedWriteClosesConn(t *testing.T) {
	server, client := net.Pipe()
	c := NewServerCodec(server)

	readErr := make(chan error, 1)
	go func() {
		var req rpc.Request
		readErr <- c.ReadRequestHeader(&req)
	}()

	must.NoError(t, client.Close()) // the peer is gone
	err := c.WriteResponse(&rpc.Response{ServiceMethod: "Status.Ping", Seq: 1}, struct{}{})
	must.ErrorContains(t, err, "writing response to Status.Ping")
	must.Error(t, <-readErr)
	must.Error(t, c.WriteResponse(&rpc.Response{ServiceMethod: "Status.Ping", Seq: 2}, struct{}{}))
}
