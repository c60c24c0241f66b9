package stream

import (
	"sync"

	"github.com/opennomad/nomad/structs"
)

// Batch is a published batch as one subscription receives it: the events
// its filter kept, each with the slot where subscribers share its encoded
// form. Every subscriber of an agent renders an event the same way (the
// event stream's JSON), so the first one to need it encodes it and the
// others reuse the bytes: a batch costs one encoding per event, not one
// per event and subscriber.
type Batch struct {
	Index  uint64
	Events []structs.Event

	// src is the published batch; pos[i] is the position in it of
	// Events[i] (nil: the same positions, every event kept).
	src *structs.Events
	pos []int
	// shared holds the encodings by position in src; nil when the batch
	// was published with one subscriber or none, and then each
	// subscriber encodes for itself.
	shared []encoding
}

// encoding is one event's encoded form, made once.
type encoding struct {
	once sync.Once
	data []byte
	err  error
}

// Shared reports whether subscribers share the batch's encodings. A
// batch is shared only when it was published with more than one
// subscriber; otherwise a subscriber does best to encode its events
// straight into what it writes, and Encoded has nothing to save.
func (b *Batch) Shared() bool { return b.shared != nil }

// Encoded returns Events[i] encoded by encode, which must depend on the
// event alone and be the one encoding every subscriber of the broker
// uses: the bytes (or the error) of the first call for an event are what
// every later call for it gets. The bytes are shared; callers must not
// modify them.
func (b *Batch) Encoded(i int, encode func(*structs.Event) ([]byte, error)) ([]byte, error) {
	if b.shared == nil {
		return encode(&b.Events[i])
	}
	at := i
	if b.pos != nil {
		at = b.pos[i]
	}
	e := &b.shared[at]
	e.once.Do(func() { e.data, e.err = encode(&b.Events[i]) })
	return e.data, e.err
}

// Keep returns the batch with only the events keep accepts, sharing the
// encodings; nil when none is kept, b itself when all are.
func (b *Batch) Keep(keep func(*structs.Event) bool) *Batch {
	var out *Batch
	for i := range b.Events {
		if keep(&b.Events[i]) {
			if out != nil {
				out.appendFrom(b, i)
			}
			continue
		}
		if out == nil {
			// The first event left out: the ones before it are kept.
			out = &Batch{Index: b.Index, src: b.src, shared: b.shared, pos: []int{}}
			for j := range i {
				out.appendFrom(b, j)
			}
		}
	}
	switch {
	case out == nil:
		return b
	case len(out.Events) == 0:
		return nil
	}
	return out
}

// appendFrom appends event i of from, a batch of the same published one.
func (b *Batch) appendFrom(from *Batch, i int) {
	b.Events = append(b.Events, from.Events[i])
	at := i
	if from.pos != nil {
		at = from.pos[i]
	}
	b.pos = append(b.pos, at)
}

// asEvents is the batch as a structs.Events: the published value itself
// when every event was kept.
func (b *Batch) asEvents() *structs.Events {
	if b.pos == nil {
		return b.src
	}
	return &structs.Events{Index: b.Index, Events: b.Events}
}
