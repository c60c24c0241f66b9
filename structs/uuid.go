package structs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// GenerateUUID returns a random RFC 4122 version 4 UUID. IDs of every object
// (jobs excepted) are UUIDs so that prefix lookups and the memdb UUID index
// work the same way for all of them.
func GenerateUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand never fails on supported platforms; a failure here
		// means the process cannot produce safe identifiers at all.
		panic(fmt.Errorf("reading random bytes for a UUID: %w", err))
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	// Hand-formatted rather than through fmt: the broker mints one of these
	// per eval delivery, and fmt's reflection made it the costliest step.
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

// ShortID returns the first eight characters of an ID, the form the CLI
// prints unless asked to be verbose.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// IsUUID reports whether s has the form GenerateUUID returns: 36
// characters, hex digits with dashes at 8, 13, 18 and 23.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
