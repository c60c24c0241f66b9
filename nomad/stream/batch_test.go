package stream

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// encodeKey is a stand-in encoding that counts its calls.
func encodeKey(calls *atomic.Int32) func(*structs.Event) ([]byte, error) {
	return func(e *structs.Event) ([]byte, error) {
		calls.Add(1)
		return []byte(string(e.Topic) + ":" + e.Key), nil
	}
}

// Subscribers that keep different events of the same batch each get the
// bytes of their own events, and every event is encoded once in all.
func TestBatch_SubscribersShareEncodings(t *testing.T) {
	broker := NewEventBroker(Config{})
	defer broker.Close()
	subscribe := func(topics map[structs.Topic][]string) *Subscription {
		sub, err := broker.Subscribe(&SubscribeRequest{Topics: topics})
		must.NoError(t, err)
		return sub
	}
	subs := []*Subscription{
		subscribe(nil), // everything
		subscribe(map[structs.Topic][]string{structs.TopicJob: {"web"}}),
		subscribe(map[structs.Topic][]string{structs.TopicEvaluation: nil}),
		subscribe(map[structs.Topic][]string{structs.TopicJob: nil, structs.TopicEvaluation: {"web"}}),
	}
	broker.Publish(batch(7,
		ev(structs.TopicJob, "web", "default"),
		ev(structs.TopicEvaluation, "e1", "default", "web"),
		ev(structs.TopicJob, "db", "default"),
		ev(structs.TopicEvaluation, "e2", "default", "db"),
	))
	want := [][]string{
		{"Job:web", "Evaluation:e1", "Job:db", "Evaluation:e2"},
		{"Job:web"},
		{"Evaluation:e1", "Evaluation:e2"},
		{"Job:web", "Evaluation:e1", "Job:db"},
	}
	var calls atomic.Int32
	for i, sub := range subs {
		b, err := sub.NextBatch(context.Background())
		must.NoError(t, err)
		must.Eq(t, 7, b.Index)
		var got []string
		for j := range b.Events {
			data, err := b.Encoded(j, encodeKey(&calls))
			must.NoError(t, err)
			got = append(got, string(data))
		}
		must.Eq(t, want[i], got, must.Sprintf("subscriber %d", i))
	}
	must.Eq(t, 4, calls.Load(), must.Sprint("four events, each encoded once"))
}

// A batch published while nobody subscribed has nothing to share: each
// reader encodes for itself.
func TestBatch_PublishedBeforeAnySubscriber(t *testing.T) {
	broker := NewEventBroker(Config{})
	defer broker.Close()
	broker.Publish(batch(3, ev(structs.TopicJob, "web", "default")))
	var calls atomic.Int32
	for range 2 {
		sub, err := broker.Subscribe(&SubscribeRequest{})
		must.NoError(t, err)
		b, err := sub.NextBatch(context.Background())
		must.NoError(t, err)
		for range 2 {
			data, err := b.Encoded(0, encodeKey(&calls))
			must.NoError(t, err)
			must.Eq(t, "Job:web", string(data))
		}
		sub.Unsubscribe()
	}
	must.Eq(t, 4, calls.Load())
}

// With one subscriber there is nobody to share with: the batch carries
// no encodings.
func TestBatch_OneSubscriberSharesNothing(t *testing.T) {
	broker := NewEventBroker(Config{})
	defer broker.Close()
	sub, err := broker.Subscribe(&SubscribeRequest{})
	must.NoError(t, err)
	broker.Publish(batch(3, ev(structs.TopicJob, "web", "default")))
	b, err := sub.NextBatch(context.Background())
	must.NoError(t, err)
	must.False(t, b.Shared())
}

func TestBatch_Keep(t *testing.T) {
	whole := &Batch{Index: 1, Events: batch(1,
		ev(structs.TopicJob, "a", "default"),
		ev(structs.TopicJob, "b", "default"),
		ev(structs.TopicJob, "c", "default"),
	).Events, shared: make([]encoding, 3)}
	keys := func(b *Batch) []string {
		if b == nil {
			return nil
		}
		var out []string
		for _, e := range b.Events {
			out = append(out, e.Key)
		}
		return out
	}
	not := func(key string) func(*structs.Event) bool {
		return func(e *structs.Event) bool { return e.Key != key }
	}
	cases := []struct {
		name string
		keep func(*structs.Event) bool
		want []string
		pos  []int
	}{
		{"all kept: the batch itself", func(*structs.Event) bool { return true }, []string{"a", "b", "c"}, nil},
		{"none kept", func(*structs.Event) bool { return false }, nil, nil},
		{"first left out", not("a"), []string{"b", "c"}, []int{1, 2}},
		{"middle left out", not("b"), []string{"a", "c"}, []int{0, 2}},
		{"last left out", not("c"), []string{"a", "b"}, []int{0, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := whole.Keep(tc.keep)
			must.Eq(t, tc.want, keys(got))
			if got != nil {
				must.Eq(t, tc.pos, got.pos)
			}
		})
	}
	// Keeping from a kept batch maps back to the published positions.
	twice := whole.Keep(not("a")).Keep(not("b"))
	must.Eq(t, []string{"c"}, keys(twice))
	must.Eq(t, []int{2}, twice.pos)
}
