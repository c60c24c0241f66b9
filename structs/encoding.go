package structs

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// MsgpackHandle is the codec shared by the Raft log, snapshots and RPC.
// Decoding generic maps yields map[string]interface{} (driver configs) and
// raw strings stay strings.
//
// Only `codec` struct tags are read. By default the codec also honours
// `json` tags, so a field hidden from HTTP responses with `json:"-"`
// (secrets, internal tokens) would silently vanish from the Raft log and
// from snapshots; the wire and disk format must never depend on how the
// HTTP layer chooses to render a type.
//
// The types on the servers' hot path encode and decode through generated
// codecs (codec_generate.go) instead of reflection; they write exactly the
// bytes reflection writes with these settings, and the tests hold them to
// it: a change here needs the generator run to match (tools/codecgen).
var MsgpackHandle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.MapType = reflect.TypeOf(map[string]interface{}(nil))
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	h.MaxDepth = MaxDecodeDepth
	return h
}()

// Encode prefixes the msgpack encoding of msg with the message type byte,
// producing a Raft log entry. The entry is the caller's to keep: Raft
// holds it until it is applied (and in its log cache after), so its bytes
// are never shared or reused here (entry_buffer.go).
func Encode(t MessageType, msg interface{}) ([]byte, error) {
	buf, err := encodeEntry(t, msg)
	if err != nil {
		return nil, fmt.Errorf("encoding %s message: %w", t, err)
	}
	return buf, nil
}

// Decode reads a msgpack body (without the type byte) into out. Decoding
// is lossless for every request type of this package with two caveats
// callers may rely on: time.Time values come back in UTC (compare them with
// Equal), and free-form driver configs come back with generic element types
// ([]interface{} for []string, int64/uint64 for ints).
func Decode(buf []byte, out interface{}) error {
	d := entryDecoders.Get().(*codec.Decoder)
	d.ResetBytes(buf)
	if err := d.Decode(out); err != nil {
		// A decoder that failed part way is not reused.
		return fmt.Errorf("decoding msgpack: %w", err)
	}
	// Decoded strings and byte slices are copies (the handle does not
	// decode in place), so the decoder may forget buf and be reused.
	d.ResetBytes(noBytes)
	entryDecoders.Put(d)
	return nil
}

// entryDecoders are reused decoders: every server decodes every entry.
var entryDecoders = sync.Pool{New: func() any { return codec.NewDecoderBytes(noBytes, MsgpackHandle) }}

// noBytes is what an idle decoder reads.
var noBytes = []byte{}
