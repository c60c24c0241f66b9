package broker

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/opennomad/nomad/structs"
)

var benchSchedulers = []string{
	structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch,
}

// benchEval builds the i-th eval of a benchmark: its own job, one of
// types scheduler types in turn, priorities spread over 1..100.
func benchEval(i, types int) *structs.Evaluation {
	id := strconv.Itoa(i)
	return &structs.Evaluation{
		ID:          id,
		Namespace:   structs.DefaultNamespace,
		JobID:       "job-" + id,
		Type:        benchSchedulers[i%types],
		Priority:    1 + (i*37)%100,
		TriggeredBy: structs.EvalTriggerJobRegister,
		Status:      structs.EvalStatusPending,
		CreateIndex: uint64(i),
		ModifyIndex: uint64(i),
	}
}

func newBenchBroker(b *testing.B) *Broker {
	b.Helper()
	// The real clock: each delivery arms and stops a real nack timer,
	// as in production.
	broker, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	broker.SetEnabled(true)
	b.Cleanup(func() { broker.SetEnabled(false) })
	return broker
}

// BenchmarkEvalBroker_Serial measures one eval's full trip through the
// broker on one goroutine: Enqueue, Dequeue, Ack.
func BenchmarkEvalBroker_Serial(b *testing.B) {
	broker := newBenchBroker(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		e := benchEval(i, 1)
		broker.Enqueue(e)
		got, token, err := broker.Dequeue(ctx, benchSchedulers[:1], 0)
		if err != nil || got != e {
			b.Fatalf("Dequeue = %v, %v", got, err)
		}
		if err := broker.Ack(got.ID, token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvalBroker_DeepQueue measures Dequeue+Ack with 10,000 evals
// ready across four scheduler types: the cost of the heaps at depth.
func BenchmarkEvalBroker_DeepQueue(b *testing.B) {
	const depth = 10000
	broker := newBenchBroker(b)
	ctx := context.Background()
	for i := range depth {
		broker.Enqueue(benchEval(i, 4))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		got, token, err := broker.Dequeue(ctx, benchSchedulers, 0)
		if err != nil || got == nil {
			b.Fatalf("Dequeue = %v, %v", got, err)
		}
		if err := broker.Ack(got.ID, token); err != nil {
			b.Fatal(err)
		}
		broker.Enqueue(benchEval(depth+i, 4))
	}
}

// BenchmarkEvalBroker_Throughput has one producer enqueueing b.N evals
// while several workers, each listening on every scheduler type in use,
// dequeue and ack them. ns/op is wall time per eval.
func BenchmarkEvalBroker_Throughput(b *testing.B) {
	for _, types := range []int{1, 4} {
		for _, workers := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("types=%d/workers=%d", types, workers), func(b *testing.B) {
				benchThroughput(b, types, workers)
			})
		}
	}
}

func benchThroughput(b *testing.B, types, workers int) {
	broker := newBenchBroker(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, token, err := broker.Dequeue(ctx, benchSchedulers[:types], 0)
				if err != nil {
					return
				}
				if err := broker.Ack(e.ID, token); err != nil {
					b.Error(err)
					return
				}
				if done.Add(1) == int64(b.N) {
					cancel()
				}
			}
		}()
	}
	for i := range b.N {
		broker.Enqueue(benchEval(i, types))
	}
	wg.Wait()
	b.StopTimer()
	if got := done.Load(); got != int64(b.N) {
		b.Fatalf("%d evals acked, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
}
