package rpcnet

import (
	"testing"

	"github.com/opennomad/nomad/structs/mock"
)

func benchServer(b *testing.B) string {
	return startTestServer(b, "127.0.0.1:0").Addr().String()
}

// BenchmarkPool_RPC is one call at a time on a pooled stream carrying a
// job: the per-call cost of a forwarded registration (encode, loopback
// round trip, decode).
func BenchmarkPool_RPC(b *testing.B) {
	addr := benchServer(b)
	p := NewPool(PoolConfig{})
	defer p.Close()
	job := mock.Job()
	var reply EchoReply
	if err := p.RPC(addr, "Echo.Echo", &EchoArgs{}, &reply); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var r EchoReply
		if err := p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: job.ID, Payload: job}, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPool_RPCParallel runs calls from many goroutines over the one
// multiplexed connection.
func BenchmarkPool_RPCParallel(b *testing.B) {
	addr := benchServer(b)
	p := NewPool(PoolConfig{})
	defer p.Close()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var r EchoReply
			if err := p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "x"}, &r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
