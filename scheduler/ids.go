package scheduler

import (
	"crypto/rand"
	"encoding/hex"
)

// idSource hands out random version 4 UUIDs, the same format as
// structs.GenerateUUID, reading randomness in blocks: a large placement
// creates an ID per alloc, and one read plus one format call each was a
// measurable share of the pass.
type idSource struct {
	buf []byte
}

const idBlock = 64 // UUIDs per read

func (s *idSource) next() string {
	if len(s.buf) < 16 {
		s.buf = make([]byte, 16*idBlock)
		if _, err := rand.Read(s.buf); err != nil {
			// crypto/rand does not fail on supported platforms; if it
			// did, no safe ID could be made at all.
			panic("reading random bytes for alloc IDs: " + err.Error())
		}
	}
	b := s.buf[:16]
	s.buf = s.buf[16:]
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}
