package stream

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/opennomad/nomad/structs"
)

// BenchmarkPublish measures the publisher's cost with N subscribers
// reading as fast as they can. The publisher never waits for them, so
// the cost should stay flat as N grows (apart from waking them).
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{0, 1, 10, 100} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			broker := NewEventBroker(Config{})
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				sub, err := broker.Subscribe(&SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"web"}}})
				if err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						if _, err := sub.Next(ctx); err != nil {
							// Lagging is expected when the publisher
							// outruns a reader; resume from the newest.
							if ctx.Err() != nil {
								return
							}
							sub.Unsubscribe()
							sub, err = broker.Subscribe(&SubscribeRequest{Index: ^uint64(0)})
							if err != nil {
								return
							}
						}
					}
				}()
			}
			events := make([]*structs.Events, 1024)
			for i := range events {
				events[i] = batch(uint64(i+1),
					ev(structs.TopicJob, "web", "default"),
					ev(structs.TopicEvaluation, "e", "default", "web"))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				broker.Publish(events[i%len(events)])
			}
			b.StopTimer()
			cancel()
			broker.Close()
			wg.Wait()
		})
	}
}
