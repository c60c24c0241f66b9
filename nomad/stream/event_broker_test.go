package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// ev builds an event; FilterKeys are optional extra keys.
func ev(topic structs.Topic, key, ns string, filterKeys ...string) structs.Event {
	return structs.Event{Topic: topic, Type: "T", Key: key, Namespace: ns, FilterKeys: filterKeys}
}

func batch(index uint64, events ...structs.Event) *structs.Events {
	for i := range events {
		events[i].Index = index
	}
	return &structs.Events{Index: index, Events: events}
}

// keysOf renders a batch as "Topic:Key" strings for compact assertions.
func keysOf(b *structs.Events) []string {
	var out []string
	for _, e := range b.Events {
		out = append(out, fmt.Sprintf("%s:%s", e.Topic, e.Key))
	}
	return out
}

// next reads one batch that must already be available: the context is
// already cancelled, so Next returns at once instead of waiting.
func next(t *testing.T, s *Subscription) (*structs.Events, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return s.Next(ctx)
}

func TestBroker_FilterByTopicKeyNamespace(t *testing.T) {
	published := []*structs.Events{
		batch(10,
			ev(structs.TopicJob, "web", "default"),
			ev(structs.TopicEvaluation, "e1", "default", "web"),
		),
		batch(11, ev(structs.TopicAllocation, "a1", "default", "web", "dep1")),
		batch(12, ev(structs.TopicJob, "db", "prod")),
		batch(13, ev(structs.TopicNode, "n1", "")),
	}
	cases := []struct {
		name string
		req  SubscribeRequest
		want [][]string
	}{
		{
			name: "no topics means everything in the default namespace plus nodes",
			req:  SubscribeRequest{},
			want: [][]string{{"Job:web", "Evaluation:e1"}, {"Allocation:a1"}, {"Node:n1"}},
		},
		{
			name: "wildcard namespace",
			req:  SubscribeRequest{Namespace: "*"},
			want: [][]string{{"Job:web", "Evaluation:e1"}, {"Allocation:a1"}, {"Job:db"}, {"Node:n1"}},
		},
		{
			name: "one namespace",
			req:  SubscribeRequest{Namespace: "prod"},
			want: [][]string{{"Job:db"}, {"Node:n1"}},
		},
		{
			name: "topic with all keys",
			req:  SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}},
			want: [][]string{{"Job:web"}},
		},
		{
			name: "topic with no key list means all keys",
			req:  SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicEvaluation: nil}},
			want: [][]string{{"Evaluation:e1"}},
		},
		{
			name: "filter key matches an alloc by its job and deployment",
			req: SubscribeRequest{Topics: map[structs.Topic][]string{
				structs.TopicAllocation: {"dep1"},
				structs.TopicEvaluation: {"web"},
			}},
			want: [][]string{{"Evaluation:e1"}, {"Allocation:a1"}},
		},
		{
			name: "wildcard topic with a key",
			req:  SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicAll: {"web"}}},
			want: [][]string{{"Job:web", "Evaluation:e1"}, {"Allocation:a1"}},
		},
		{
			name: "wildcard topic and key",
			req:  SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicAll: {"*"}}},
			want: [][]string{{"Job:web", "Evaluation:e1"}, {"Allocation:a1"}, {"Node:n1"}},
		},
		{
			name: "replay from an index",
			req:  SubscribeRequest{Index: 11},
			want: [][]string{{"Allocation:a1"}, {"Node:n1"}},
		},
		{
			name: "replay from an index between batches",
			req:  SubscribeRequest{Index: 12, Namespace: "*"},
			want: [][]string{{"Job:db"}, {"Node:n1"}},
		},
		{
			name: "index after everything buffered waits for new batches",
			req:  SubscribeRequest{Index: 14},
			want: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := NewEventBroker(Config{})
			for _, p := range published {
				b.Publish(p)
			}
			sub, err := b.Subscribe(&tc.req)
			must.NoError(t, err)
			defer sub.Unsubscribe()
			var got [][]string
			for {
				out, err := next(t, sub)
				if errors.Is(err, context.Canceled) {
					break
				}
				must.NoError(t, err)
				got = append(got, keysOf(out))
			}
			must.Eq(t, tc.want, got)
		})
	}
}

func TestBroker_UnfilteredBatchIsShared(t *testing.T) {
	b := NewEventBroker(Config{})
	in := batch(1, ev(structs.TopicJob, "web", "default"))
	b.Publish(in)
	sub, err := b.Subscribe(&SubscribeRequest{})
	must.NoError(t, err)
	out, err := next(t, sub)
	must.NoError(t, err)
	must.True(t, out == in, must.Sprint("a fully matching batch is handed out without copying"))
}

func TestBroker_UnsupportedTopic(t *testing.T) {
	b := NewEventBroker(Config{})
	_, err := b.Subscribe(&SubscribeRequest{Topics: map[structs.Topic][]string{"ACLToken": nil}})
	must.ErrorContains(t, err, `unsupported event topic "ACLToken"`)
	must.ErrorContains(t, err, "Allocation, Deployment, Evaluation, Job, Node")
}

func TestBroker_EmptyBatchesAreDropped(t *testing.T) {
	b := NewEventBroker(Config{EventBufferSize: 2})
	b.Publish(batch(1, ev(structs.TopicJob, "a", "default")))
	b.Publish(&structs.Events{Index: 2})
	b.Publish(nil)
	sub, err := b.Subscribe(&SubscribeRequest{})
	must.NoError(t, err)
	out, err := next(t, sub)
	must.NoError(t, err)
	must.Eq(t, 1, out.Index)
}

func TestBroker_RingKeepsNewest(t *testing.T) {
	b := NewEventBroker(Config{EventBufferSize: 3})
	for i := uint64(1); i <= 5; i++ {
		b.Publish(batch(i, ev(structs.TopicJob, fmt.Sprint(i), "default")))
	}
	// Index 1 is gone: the stream starts at the oldest batch still held.
	sub, err := b.Subscribe(&SubscribeRequest{Index: 1})
	must.NoError(t, err)
	var got []uint64
	for {
		out, err := next(t, sub)
		if err != nil {
			break
		}
		got = append(got, out.Index)
	}
	must.Eq(t, []uint64{3, 4, 5}, got)
}

func TestBroker_SlowSubscriberIsDropped(t *testing.T) {
	b := NewEventBroker(Config{EventBufferSize: 2})
	b.Publish(batch(1, ev(structs.TopicJob, "a", "default")))
	sub, err := b.Subscribe(&SubscribeRequest{})
	must.NoError(t, err)
	// The publisher goes on without waiting and overwrites index 1.
	for i := uint64(2); i <= 4; i++ {
		b.Publish(batch(i, ev(structs.TopicJob, "a", "default")))
	}
	_, err = next(t, sub)
	must.ErrorIs(t, err, ErrSubscriptionLagged)
	must.ErrorContains(t, err, "2 batches lost, buffer holds 2")
}

func TestBroker_NextWakesOnPublish(t *testing.T) {
	b := NewEventBroker(Config{})
	sub, err := b.Subscribe(&SubscribeRequest{})
	must.NoError(t, err)

	got := make(chan *structs.Events)
	go func() {
		out, err := sub.Next(context.Background())
		if err != nil {
			close(got)
			return
		}
		got <- out
	}()
	// Events the subscriber does not want do not wake it with a result.
	b.Publish(batch(1, ev(structs.TopicJob, "other", "prod")))
	b.Publish(batch(2, ev(structs.TopicJob, "web", "default")))
	out, ok := <-got
	must.True(t, ok)
	must.Eq(t, 2, out.Index)
}

func TestBroker_CloseEndsSubscriptions(t *testing.T) {
	b := NewEventBroker(Config{})
	sub, err := b.Subscribe(&SubscribeRequest{})
	must.NoError(t, err)
	errCh := make(chan error)
	go func() {
		_, err := sub.Next(context.Background())
		errCh <- err
	}()
	b.Close()
	must.ErrorIs(t, <-errCh, ErrSubscriptionClosed)

	b.Close() // idempotent
	b.Publish(batch(1, ev(structs.TopicJob, "a", "default")))
	_, err = b.Subscribe(&SubscribeRequest{})
	must.ErrorIs(t, err, ErrSubscriptionClosed)
}

func TestBroker_UnsubscribeEndsNext(t *testing.T) {
	b := NewEventBroker(Config{})
	sub, err := b.Subscribe(&SubscribeRequest{})
	must.NoError(t, err)
	must.Eq(t, 1, b.Subscribers())
	errCh := make(chan error)
	go func() {
		_, err := sub.Next(context.Background())
		errCh <- err
	}()
	sub.Unsubscribe()
	must.ErrorIs(t, <-errCh, ErrSubscriptionClosed)
	sub.Unsubscribe()
	must.Eq(t, 0, b.Subscribers())
}

func TestBroker_ContextEndsNext(t *testing.T) {
	b := NewEventBroker(Config{})
	sub, err := b.Subscribe(&SubscribeRequest{})
	must.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errCh := make(chan error)
	go func() {
		_, err := sub.Next(ctx)
		errCh <- err
	}()
	cancel()
	must.ErrorIs(t, <-errCh, context.Canceled)
}

// TestBroker_ConcurrentPublishAndSubscribe runs under -race: many readers,
// one writer, every reader sees every batch in order.
func TestBroker_ConcurrentPublishAndSubscribe(t *testing.T) {
	const batches, readers = 200, 8
	b := NewEventBroker(Config{EventBufferSize: batches})
	subs := make([]*Subscription, readers)
	for i := range subs {
		s, err := b.Subscribe(&SubscribeRequest{})
		must.NoError(t, err)
		subs[i] = s
	}
	var wg sync.WaitGroup
	results := make([][]uint64, readers)
	for i, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for len(results[i]) < batches {
				out, err := s.Next(context.Background())
				if err != nil {
					return
				}
				results[i] = append(results[i], out.Index)
			}
		}()
	}
	for i := uint64(1); i <= batches; i++ {
		b.Publish(batch(i, ev(structs.TopicJob, "a", "default")))
	}
	wg.Wait()
	for i := range results {
		must.Len(t, batches, results[i])
		for j, idx := range results[i] {
			must.Eq(t, uint64(j+1), idx)
		}
	}
}
