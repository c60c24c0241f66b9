// Package stream is the server's event broker: it keeps the most recent
// batches of state-change events the state store publishes and hands them
// to subscribers (the HTTP event stream) filtered by topic, key and
// namespace.
//
// Publishing never waits for subscribers. The broker holds a fixed-size
// ring of batches; each subscriber walks the ring at its own pace with a
// cursor. A subscriber that falls so far behind that the batch it needs
// next has been overwritten is told so with ErrSubscriptionLagged and must
// resubscribe (from the index it last saw, to replay what is still
// buffered). A publisher is therefore O(1) whatever the number and speed
// of subscribers.
package stream

import (
	"errors"
	"fmt"
	"sync"

	"github.com/opennomad/nomad/structs"
)

// DefaultEventBufferSize is the number of event batches (Raft indexes) kept
// for replay and for slow subscribers, as in Nomad.
const DefaultEventBufferSize = 100

// Errors returned by Subscription.Next.
var (
	// ErrSubscriptionClosed is returned once the broker is closed (server
	// shutdown or leadership of the state store lost) or the subscription
	// was unsubscribed.
	ErrSubscriptionClosed = errors.New("subscription closed by server, client should resubscribe")
	// ErrSubscriptionLagged is returned to a subscriber whose next batch
	// was overwritten before it read it: events were lost for it.
	ErrSubscriptionLagged = errors.New("subscription fell behind the event buffer and missed events, client should resubscribe")
)

// Config configures an EventBroker.
type Config struct {
	// EventBufferSize is the number of batches kept; zero or less means
	// DefaultEventBufferSize.
	EventBufferSize int
}

// EventBroker fans published event batches out to subscribers. It
// implements the state store's EventPublisher. All methods are safe for
// concurrent use.
type EventBroker struct {
	mu sync.Mutex
	// ring holds the newest batches; the batch with sequence number s is
	// at ring[s % len(ring)] while s >= next-len(ring).
	ring []slot
	// next is the sequence number the next published batch gets.
	next uint64
	// notify is closed (and replaced) on every publish and on close, so
	// waiting subscribers wake without the publisher knowing them.
	notify chan struct{}
	closed bool
	subs   int
}

// NewEventBroker returns an empty broker.
func NewEventBroker(cfg Config) *EventBroker {
	size := cfg.EventBufferSize
	if size <= 0 {
		size = DefaultEventBufferSize
	}
	return &EventBroker{
		ring:   make([]slot, size),
		notify: make(chan struct{}),
	}
}

// Publish appends a batch. It is called by the state store's writer (the
// FSM apply goroutine) after each commit, in index order; it never blocks
// on subscribers. The batch is shared with subscribers and must not be
// modified afterwards. Publishing to a closed broker is a no-op; empty
// batches are dropped.
func (b *EventBroker) Publish(events *structs.Events) {
	if events == nil || len(events.Events) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	s := slot{events: events}
	if b.subs > 1 {
		// Several subscribers may render these events: give them a
		// place to share the work. With one subscriber or none (most
		// servers, most of the time) there is nothing to share and a
		// batch costs nothing more.
		s.shared = make([]encoding, len(events.Events))
	}
	b.ring[b.next%uint64(len(b.ring))] = s
	b.next++
	close(b.notify)
	b.notify = make(chan struct{})
}

// Close ends every subscription: their Next returns ErrSubscriptionClosed.
// Later publishes are dropped. Calling Close more than once is harmless.
func (b *EventBroker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	close(b.notify)
}

// Subscribers returns the number of open subscriptions (a metric).
func (b *EventBroker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subs
}

// Subscribe opens a subscription. Buffered batches with an index at or
// after req.Index are replayed first (all buffered batches when req.Index
// is 0); then new batches follow as they are published.
func (b *EventBroker) Subscribe(req *SubscribeRequest) (*Subscription, error) {
	filter, err := newFilter(req)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrSubscriptionClosed
	}
	cursor := b.oldestLocked()
	for cursor < b.next && b.batchLocked(cursor).Index < req.Index {
		cursor++
	}
	b.subs++
	return &Subscription{broker: b, cursor: cursor, filter: filter, closeCh: make(chan struct{})}, nil
}

// oldestLocked returns the sequence number of the oldest buffered batch.
func (b *EventBroker) oldestLocked() uint64 {
	if size := uint64(len(b.ring)); b.next > size {
		return b.next - size
	}
	return 0
}

// slot is a published batch and, when it was published with someone
// subscribed, the encodings its subscribers share (by event position).
type slot struct {
	events *structs.Events
	shared []encoding
}

func (b *EventBroker) batchLocked(seq uint64) *structs.Events {
	return b.ring[seq%uint64(len(b.ring))].events
}

// read returns the slot at cursor if it is buffered (ok), or the channel
// that is closed when something changes.
func (b *EventBroker) read(cursor uint64) (s slot, ok bool, wait <-chan struct{}, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return slot{}, false, nil, ErrSubscriptionClosed
	}
	if cursor < b.oldestLocked() {
		return slot{}, false, nil, fmt.Errorf("%w (%d batches lost, buffer holds %d)", ErrSubscriptionLagged, b.oldestLocked()-cursor, len(b.ring))
	}
	if cursor < b.next {
		return b.ring[cursor%uint64(len(b.ring))], true, nil, nil
	}
	return slot{}, false, b.notify, nil
}

func (b *EventBroker) unsubscribe() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs--
}
