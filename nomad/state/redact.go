package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/structs"
)

// RedactKeyMaterial copies a persisted store (what Persist wrote) from r
// to w without the root keys' material: each root key keeps its metadata
// and the public half of its signing key, so what it signed can still be
// verified, but its key-encryption key and the sealed data and signing
// keys are dropped, so nothing sealed or signed with it can be opened or
// forged by whoever holds the copy. Every other record is copied byte
// for byte. It returns how many keys it redacted.
//
// A cluster restored from such a copy cannot open its old keys: the
// variables they sealed stay unreadable, and it must rotate to a new key
// before it signs anything.
func RedactKeyMaterial(r io.Reader, w io.Writer) (int, error) {
	dec := codec.NewDecoder(bufio.NewReaderSize(r, 64<<10), structs.MsgpackHandle)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := codec.NewEncoder(bw, structs.MsgpackHandle)

	var header codec.Raw
	if err := dec.Decode(&header); err != nil {
		return 0, fmt.Errorf("reading snapshot header: %w", err)
	}
	if _, err := bw.Write(header); err != nil {
		return 0, err
	}
	redacted := 0
	for n := 0; ; n++ {
		var typ uint8
		if err := dec.Decode(&typ); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, fmt.Errorf("reading type of snapshot record %d: %w", n, err)
		}
		if err := bw.WriteByte(typ); err != nil {
			return 0, err
		}
		if SnapshotType(typ) != RootKeySnapshot {
			var raw codec.Raw
			if err := dec.Decode(&raw); err != nil {
				return 0, fmt.Errorf("snapshot record %d: %w", n, err)
			}
			if _, err := bw.Write(raw); err != nil {
				return 0, err
			}
			continue
		}
		var key structs.RootKey
		if err := dec.Decode(&key); err != nil {
			return 0, fmt.Errorf("snapshot record %d: root key: %w", n, err)
		}
		key.KEK, key.DataKey, key.SigningKey = nil, nil, nil
		if err := enc.Encode(&key); err != nil {
			return 0, fmt.Errorf("snapshot record %d: root key: %w", n, err)
		}
		redacted++
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return redacted, nil
}
