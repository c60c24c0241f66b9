package stream

import (
	"context"
	"sync/atomic"

	"github.com/opennomad/nomad/structs"
)

// Subscription is one subscriber's cursor over the broker's ring. Next is
// called by one goroutine (the HTTP handler streaming to one client);
// Unsubscribe may be called from any goroutine.
type Subscription struct {
	broker *EventBroker
	cursor uint64
	filter *filter
	done   atomic.Bool
	// closeCh is closed by Unsubscribe so a waiting Next returns.
	closeCh chan struct{}
}

// Next blocks until a batch with at least one event matching the
// subscription is available and returns those events (sharing the
// broker's event values; callers must not modify them). It returns
// ErrSubscriptionClosed after Unsubscribe or broker close,
// ErrSubscriptionLagged when events were lost to a full buffer, and the
// context's error when ctx ends first.
func (s *Subscription) Next(ctx context.Context) (*structs.Events, error) {
	b, err := s.NextBatch(ctx)
	if err != nil {
		return nil, err
	}
	return b.asEvents(), nil
}

// NextBatch is Next, with the events' shared encodings (Batch.Encoded):
// what a subscriber that renders the events uses.
func (s *Subscription) NextBatch(ctx context.Context) (*Batch, error) {
	for {
		if s.done.Load() {
			return nil, ErrSubscriptionClosed
		}
		slot, ok, wait, err := s.broker.read(s.cursor)
		if err != nil {
			return nil, err
		}
		if ok {
			s.cursor++
			if out := s.filter.apply(slot); out != nil {
				return out, nil
			}
			continue
		}
		select {
		case <-wait:
		case <-s.closeCh:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Unsubscribe ends the subscription; a concurrent Next returns
// ErrSubscriptionClosed. Calling it more than once is harmless.
func (s *Subscription) Unsubscribe() {
	if s.done.Swap(true) {
		return
	}
	close(s.closeCh)
	s.broker.unsubscribe()
}
