package structs

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// A Raft entry is encoded straight into a slice allocated at about its
// final size. Encoding into a bytes.Buffer through an io.Writer encoder
// went through the codec's 1 KiB staging buffer and grew the Buffer by
// doubling: three or four allocations and copies for a 2 KiB entry, plus
// a new encoder each time. Entries of one type are of similar sizes
// (a plan result that places an alloc, one that only updates a
// deployment), so the recent largest of its type sizes the next; an entry
// that outgrows it is grown by append as before.

// entrySizes is, by message type, the largest recent entry: it follows a
// larger entry at once and a smaller one slowly (by 1/16 of itself per
// entry), so that entries of two sizes taking turns both fit.
var entrySizes [256]atomic.Uint32

// firstEntrySize sizes the first entry of a type.
const firstEntrySize = 512

// entrySlack is room left beyond the last size, as a shift of it (1/8),
// for entries of a type that grow a little (a longer ID, one more map
// key).
const entrySlack = 3

// maxEntryWaste bounds the unused capacity of the slice handed to Raft,
// which may keep it in its log cache: an entry much smaller than the one
// before it of its type is copied to a slice of its own size when more
// than this would be wasted.
const maxEntryWaste = 4 << 10

// entryEncoder is a reusable encoder with the slice it writes to. Only
// the encoder (its state and driver) is reused; every entry's bytes are
// newly allocated and handed over to the caller.
type entryEncoder struct {
	enc *codec.Encoder
	out []byte
}

var entryEncoders = sync.Pool{New: func() any {
	e := &entryEncoder{out: []byte{}}
	e.enc = codec.NewEncoderBytes(&e.out, MsgpackHandle)
	return e
}}

// encodeEntry returns the type byte followed by msg's msgpack encoding:
// the same bytes as codec.NewEncoder(w, MsgpackHandle).Encode(msg) after
// the byte, in a slice the caller owns.
func encodeEntry(t MessageType, msg interface{}) ([]byte, error) {
	size := int(entrySizes[t].Load())
	if size == 0 {
		size = firstEntrySize
	}
	buf := make([]byte, 1, size+size>>entrySlack)
	buf[0] = byte(t)

	e := entryEncoders.Get().(*entryEncoder)
	// The encoder appends after the type byte, in buf's array while it
	// fits.
	e.out = buf[1:1]
	e.enc.ResetBytes(&e.out)
	if err := e.enc.Encode(msg); err != nil {
		// An encoder that failed part way is not reused.
		return nil, err
	}
	body := e.out
	// The pooled encoder still refers to the entry's array, but writes
	// only after ResetBytes gives it a new one: it never writes here
	// again.
	e.out = nil
	entryEncoders.Put(e)

	n := 1 + len(body)
	entrySizes[t].Store(uint32(min(max(n, size-size>>4), 1<<30)))
	if n <= cap(buf) && cap(buf)-n <= maxEntryWaste {
		// Appends never left buf's array: the body is in place.
		return buf[:n], nil
	}
	// The body outgrew buf (append moved it), or fills little of it.
	entry := make([]byte, n)
	entry[0] = byte(t)
	copy(entry[1:], body)
	return entry, nil
}
