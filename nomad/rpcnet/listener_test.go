package rpcnet

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// A plain (0x01) connection carries one msgpack-RPC conversation.
func TestListener_PlainRPC(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	conn, err := net.Dial("tcp", srv.Addr().String())
	must.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte{byte(ProtoRPC)})
	must.NoError(t, err)
	codec := msgpackrpc.NewCodecFromHandle(true, true, conn, structs.MsgpackHandle)
	for _, msg := range []string{"one", "two"} {
		var reply EchoReply
		must.NoError(t, msgpackrpc.CallWithCodec(codec, "Echo.Echo", &EchoArgs{Msg: msg}, &reply))
		must.Eq(t, msg, reply.Msg)
	}
}

// A connection that opens with a byte the listener does not know is
// closed without an answer, and the listener keeps serving.
func TestListener_RejectsUnknownProtocol(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	for _, b := range []byte{0x00, 0x04, 0x7f, 0xff} {
		conn, err := net.Dial("tcp", srv.Addr().String())
		must.NoError(t, err)
		_, err = conn.Write([]byte{b, 1, 2, 3})
		must.NoError(t, err)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(make([]byte, 1))
		must.Eq(t, 0, n)
		must.Error(t, err, must.Sprintf("byte 0x%02x: the connection must be closed", b))
		conn.Close()
	}
	p := newTestPool(t, PoolConfig{})
	must.NoError(t, p.RPC(srv.Addr().String(), "Echo.Echo", &EchoArgs{}, &EchoReply{}))
}

// A connection that never sends its protocol byte is dropped after
// FirstByteTimeout.
func TestListener_FirstByteTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	l, err := NewListener(ln, ListenerConfig{
		ServeRPC:         func(io.ReadWriteCloser) { t.Error("nothing should be served") },
		FirstByteTimeout: 50 * time.Millisecond,
	})
	must.NoError(t, err)
	go l.Serve()
	defer l.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	must.NoError(t, err)
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	must.ErrorIs(t, err, io.EOF)
}

// Raft and RPC share each server's one port: three Raft servers on
// network transports over Listeners elect a leader and replicate while
// the same ports answer RPCs.
func TestListener_RaftAndRPCShareThePort(t *testing.T) {
	servers := make([]*testServer, 3)
	for i := range servers {
		servers[i] = startTestServer(t, "127.0.0.1:0")
	}
	runRaftCluster(t, servers)

	// The same ports still serve RPC.
	p := newTestPool(t, PoolConfig{})
	for _, srv := range servers {
		var reply EchoReply
		must.NoError(t, p.RPC(srv.Addr().String(), "Echo.Echo", &EchoArgs{Msg: "hi"}, &reply))
		must.Eq(t, "hi", reply.Msg)
	}
}

// runRaftCluster runs Raft on network transports over the servers'
// listeners, waits for a leader, applies ten entries and waits until
// every server applied them.
func runRaftCluster(t *testing.T, servers []*testServer) {
	t.Helper()
	n := len(servers)
	rafts := make([]*raft.Raft, n)
	fsms := make([]*counterFSM, n)
	var configuration raft.Configuration
	for i := range servers {
		configuration.Servers = append(configuration.Servers, raft.Server{
			ID:      raft.ServerID(fmt.Sprintf("server-%d", i)),
			Address: raft.ServerAddress(servers[i].Addr().String()),
		})
	}
	for i, srv := range servers {
		conf := raft.DefaultConfig()
		conf.LocalID = configuration.Servers[i].ID
		conf.HeartbeatTimeout = 200 * time.Millisecond
		conf.ElectionTimeout = 200 * time.Millisecond
		conf.LeaderLeaseTimeout = 200 * time.Millisecond
		conf.LogLevel = "ERROR"
		trans := NewRaftTransport(srv.RaftLayer(), 2*time.Second, nil)
		must.Eq(t, configuration.Servers[i].Address, trans.LocalAddr())
		store := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		must.NoError(t, raft.BootstrapCluster(conf, store, store, snaps, trans, configuration))
		fsms[i] = &counterFSM{}
		r, err := raft.NewRaft(conf, fsms[i], store, store, snaps, trans)
		must.NoError(t, err)
		rafts[i] = r
		t.Cleanup(func() {
			must.NoError(t, r.Shutdown().Error())
			trans.Close()
		})
	}

	var leader *raft.Raft
	waitFor(t, func() bool {
		for _, r := range rafts {
			if r.State() == raft.Leader {
				leader = r
				return true
			}
		}
		return false
	})
	for i := 0; i < 10; i++ {
		must.NoError(t, leader.Apply([]byte{1}, 5*time.Second).Error())
	}
	waitFor(t, func() bool {
		for _, f := range fsms {
			if f.get() != 10 {
				return false
			}
		}
		return true
	})
}

// Close ends every connection, Raft's and multiplexed sessions included,
// and waits for the RPCs in flight.
func TestListener_CloseEndsConnections(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	addr := srv.Addr().String()
	p := newTestPool(t, PoolConfig{})
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{}, &EchoReply{}))

	raftConn, err := srv.RaftLayer().Dial(raft.ServerAddress(addr), time.Second)
	must.NoError(t, err)
	defer raftConn.Close()
	accepted, err := srv.RaftLayer().Accept()
	must.NoError(t, err)
	defer accepted.Close()

	var wg sync.WaitGroup
	wg.Add(1)
	var slowErr error
	go func() {
		defer wg.Done()
		slowErr = p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "slow", Sleep: 200 * time.Millisecond}, &EchoReply{})
	}()
	waitFor(t, func() bool { return srv.echo.calls.Load() == 2 })
	srv.stop(t)
	wg.Wait()
	// The call in flight finished before Close returned; its answer may
	// or may not have made it out before the connection closed.
	must.Eq(t, int64(2), srv.echo.calls.Load())
	_ = slowErr

	_ = raftConn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = raftConn.Read(make([]byte, 1))
	must.Error(t, err, must.Sprint("the Raft connection is closed"))
	_, err = srv.RaftLayer().Accept()
	must.ErrorIs(t, err, ErrRaftLayerClosed)
}

// counterFSM counts applied entries.
type counterFSM struct {
	mu sync.Mutex
	n  uint64
}

func (f *counterFSM) Apply(*raft.Log) interface{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return nil
}

func (f *counterFSM) get() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *counterFSM) Snapshot() (raft.FSMSnapshot, error) {
	return &counterSnapshot{n: f.get()}, nil
}

func (f *counterFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var buf [8]byte
	if _, err := io.ReadFull(rc, buf[:]); err != nil {
		return err
	}
	f.mu.Lock()
	f.n = binary.BigEndian.Uint64(buf[:])
	f.mu.Unlock()
	return nil
}

type counterSnapshot struct{ n uint64 }

func (s *counterSnapshot) Persist(sink raft.SnapshotSink) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], s.n)
	if _, err := sink.Write(buf[:]); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *counterSnapshot) Release() {}
