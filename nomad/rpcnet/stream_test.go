package rpcnet

import (
	"bytes"
	"io"
	"net"
	"testing"

	"github.com/shoenig/test/must"
)

// A streaming call sends arguments and data, and reads the server's
// response and data back, on a connection of its own.
func TestStream_RoundTrip(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	l, err := NewListener(ln, ListenerConfig{
		ServeRPC: func(io.ReadWriteCloser) {},
		ServeStream: func(method string, conn *StreamConn) {
			var args EchoArgs
			if err := conn.DecodeArgs(&args); err != nil {
				t.Error(err)
				return
			}
			if method != "Test.Upper" {
				_ = conn.WriteResponse(StreamResponse{Error: "Test.Upper only: unknown RPC method"})
				return
			}
			data, err := io.ReadAll(conn)
			if err != nil {
				t.Error(err)
				return
			}
			_ = conn.WriteResponse(StreamResponse{Index: uint64(len(data))})
			_, _ = conn.Write(append([]byte(args.Msg), bytes.ToUpper(data)...))
		},
	})
	must.NoError(t, err)
	go l.Serve()
	defer l.Close()

	p := newTestPool(t, PoolConfig{})
	conn, err := p.Stream(ln.Addr().String(), "Test.Upper", &EchoArgs{Msg: ">"})
	must.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("snapshot bytes"))
	must.NoError(t, err)
	must.NoError(t, conn.CloseWrite())
	resp, err := conn.ReadResponse()
	must.NoError(t, err)
	must.Eq(t, uint64(14), resp.Index)
	out, err := io.ReadAll(conn)
	must.NoError(t, err)
	must.Eq(t, ">SNAPSHOT BYTES", string(out))

	// A server error arrives decoded.
	conn2, err := p.Stream(ln.Addr().String(), "Test.Other", &EchoArgs{})
	must.NoError(t, err)
	defer conn2.Close()
	_, err = conn2.ReadResponse()
	must.ErrorContains(t, err, "unknown RPC method")
}

// A listener without a stream handler refuses streaming calls with an
// error, not silence.
func TestStream_Refused(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	p := newTestPool(t, PoolConfig{})
	conn, err := p.Stream(srv.Addr().String(), "Operator.SnapshotSave", &EchoArgs{})
	must.NoError(t, err)
	defer conn.Close()
	_, err = conn.ReadResponse()
	must.ErrorContains(t, err, "serves no streaming calls")
}
