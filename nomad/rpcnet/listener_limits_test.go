package rpcnet

import (
	"io"
	"net"
	"net/rpc"
	"testing"
	"time"

	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/structs"
)

// With rpc_max_conns_per_client at 2, a client's third connection is
// closed unanswered and counted; closing one of the two makes room.
func TestListener_MaxConnsPerClient(t *testing.T) {
	sink := metricstest.WithInmem(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	rs := rpc.NewServer()
	must.NoError(t, rs.RegisterName("Echo", &Echo{}))
	l, err := NewListener(ln, ListenerConfig{
		ServeRPC:          func(conn io.ReadWriteCloser) { rs.ServeCodec(NewServerCodec(conn)) },
		MaxConnsPerClient: 2,
	})
	must.NoError(t, err)
	go l.Serve()
	defer l.Close()

	open := func() (net.Conn, *rpc.Client) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		must.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		_, err = conn.Write([]byte{byte(ProtoRPC)})
		must.NoError(t, err)
		return conn, rpc.NewClientWithCodec(msgpackrpc.NewCodecFromHandle(true, true, conn, structs.MsgpackHandle))
	}
	echo := func(c *rpc.Client) error { return c.Call("Echo.Echo", &EchoArgs{Msg: "hi"}, &EchoReply{}) }

	first, firstClient := open()
	_, second := open()
	must.NoError(t, echo(firstClient))
	must.NoError(t, echo(second))

	third, _ := open()
	_ = third.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := third.Read(make([]byte, 1))
	must.Eq(t, 0, n)
	must.Error(t, err, must.Sprint("the third connection must be closed"))
	must.Eq(t, 1.0, metricstest.Counter(t, sink, "nomad.nomad.rpc.conn_refused"))

	// The server sees the close when its read ends: until then a new
	// connection may still be refused.
	first.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, fourth := open()
		err := echo(fourth)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed connection never gave its place back: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
