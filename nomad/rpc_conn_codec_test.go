package nomad

import (
	"net"
	"net/rpc"
	"testing"

	"github.com/shoenig/test/must"
)

// A response that cannot be written closes the connection: the reading
// side ends, and later responses fail at once instead of writing into a
// stream that is out of step.
func TestConnCodec_FailedWriteClosesConn(t *testing.T) {
	server, client := net.Pipe()
	c := newConnCodec(server)

	readErr := make(chan error, 1)
	go func() {
		var req rpc.Request
		readErr <- c.readHeader(&req)
	}()

	must.NoError(t, client.Close()) // the peer is gone
	err := c.writeResponse(&rpc.Response{ServiceMethod: "Status.Ping", Seq: 1}, struct{}{})
	must.ErrorContains(t, err, "writing response to Status.Ping")
	must.Error(t, <-readErr)
	must.Error(t, c.writeResponse(&rpc.Response{ServiceMethod: "Status.Ping", Seq: 2}, struct{}{}))
}
