package agent

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkEventStreamFanout measures what the event stream costs the
// agent per published batch when N clients follow it: every subscriber
// takes the batch from the broker and renders its line, as the handler
// does. One op is one batch of ten allocation events (a placement of a
// ten-allocation job) delivered to all N subscribers, serially, so ns/op
// is CPU, not parallelism.
func BenchmarkEventStreamFanout(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			broker := stream.NewEventBroker(stream.Config{})
			defer broker.Close()
			subs := make([]*stream.Subscription, n)
			for i := range subs {
				sub, err := broker.Subscribe(&stream.SubscribeRequest{Namespace: "*"})
				if err != nil {
					b.Fatal(err)
				}
				defer sub.Unsubscribe()
				subs[i] = sub
			}
			batches := make([]*structs.Events, 64)
			for i := range batches {
				batches[i] = fanoutBatch(uint64(i + 1))
			}
			ctx := context.Background()
			var line bytes.Buffer
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				broker.Publish(batches[i%len(batches)])
				for _, sub := range subs {
					batch, err := sub.NextBatch(ctx)
					if err != nil {
						b.Fatal(err)
					}
					line.Reset()
					if err := appendEventsLine(&line, batch); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// fanoutBatch is ten allocation events at index, as a plan result of a
// ten-allocation job publishes them.
func fanoutBatch(index uint64) *structs.Events {
	out := &structs.Events{Index: index}
	for range 10 {
		a := mock.Alloc()
		a.Job = nil
		out.Events = append(out.Events, structs.Event{
			Topic: structs.TopicAllocation, Type: structs.TypeAllocationUpdated, Key: a.ID,
			Namespace: a.Namespace, FilterKeys: []string{a.JobID}, Index: index,
			Payload: &structs.AllocationEvent{Allocation: a},
		})
	}
	return out
}
