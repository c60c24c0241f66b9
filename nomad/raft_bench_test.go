package nomad

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// benchServer is a single server with its Raft log in raft-wal on a temp
// dir, fsync on, as in production.
func benchServer(b *testing.B) *Server {
	b.Helper()
	dir := b.TempDir()
	cfg := testConfig()
	cfg.DevMode = false
	cfg.DataDir = dir
	s, err := NewServer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Shutdown() })
	deadline := time.Now().Add(10 * time.Second)
	for !s.isEstablishedLeader() {
		if time.Now().After(deadline) {
			b.Fatal("no leader")
		}
		time.Sleep(time.Millisecond)
	}
	return s
}

// benchmarkJobRegister registers b.N distinct jobs through Job.Register
// (validation, one Raft entry with the job and its eval, fsync, FSM apply)
// from parallelism × GOMAXPROCS concurrent callers, and reports
// registrations per second.
func benchmarkJobRegister(b *testing.B, parallelism int) {
	s := benchServer(b)
	jobs := make([]*structs.Job, b.N)
	for i := range jobs {
		jobs[i] = mock.Job()
	}
	var next atomic.Int64
	b.SetParallelism(parallelism)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			job := jobs[next.Add(1)-1]
			var reply structs.JobRegisterResponse
			if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reply); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "registrations/s")
}

// BenchmarkRaftApply_JobRegister_Serial registers jobs one after another:
// each waits for its own fsync'd commit.
func BenchmarkRaftApply_JobRegister_Serial(b *testing.B) {
	s := benchServer(b)
	jobs := make([]*structs.Job, b.N)
	for i := range jobs {
		jobs[i] = mock.Job()
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for _, job := range jobs {
		var reply structs.JobRegisterResponse
		if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reply); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "registrations/s")
}

// The names count callers on a 2-core machine (GOMAXPROCS 2).
func BenchmarkRaftApply_JobRegister_Concurrent16(b *testing.B) { benchmarkJobRegister(b, 8) }
func BenchmarkRaftApply_JobRegister_Concurrent64(b *testing.B) { benchmarkJobRegister(b, 32) }

// BenchmarkRaftApply_EvalUpdate_Concurrent64 measures the bare Raft path
// with a small entry (one eval of a job that is not registered), without
// endpoint work, from 64 concurrent writers.
func BenchmarkRaftApply_EvalUpdate_Concurrent64(b *testing.B) {
	s := benchServer(b)
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e := mock.Eval(mock.EvalStatus(structs.EvalStatusComplete))
			if _, _, err := s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{e}}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
}
