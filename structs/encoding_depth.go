package structs

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDecodeDepth is the deepest nesting of maps and arrays the msgpack
// decoder of the Raft log, snapshots and RPC accepts. An entry deeper than
// this could be written but never applied, so CheckEntry refuses it before
// it reaches the log.
const MaxDecodeDepth = 1024

// ErrEntryTooDeep is the kind of CheckEntry's refusal.
var ErrEntryTooDeep = errors.New("nests deeper than the log's decoder accepts")

// CheckEntry reports whether a Raft log entry (type byte and msgpack
// body) could be decoded: its nesting stays within MaxDecodeDepth and its
// encoding is complete. It walks the encoding without decoding it, so it
// costs one pass over the entry's items and allocates only its stack.
func CheckEntry(entry []byte) error {
	if len(entry) < 2 {
		return nil
	}
	depth, err := msgpackDepth(entry[1:], MaxDecodeDepth)
	if err != nil {
		return fmt.Errorf("%s entry: %w", MessageType(entry[0]), err)
	}
	if depth > MaxDecodeDepth {
		msg := fmt.Sprintf("%s entry %v (%d levels)", MessageType(entry[0]), ErrEntryTooDeep, MaxDecodeDepth)
		return &entryTooDeep{ValidationError{Problems: []string{msg}}}
	}
	return nil
}

// entryTooDeep is a validation failure (the request is the caller's to
// fix: a 400) of kind ErrEntryTooDeep.
type entryTooDeep struct{ v ValidationError }

func (e *entryTooDeep) Error() string   { return e.v.Error() }
func (e *entryTooDeep) Unwrap() []error { return []error{&e.v, ErrEntryTooDeep} }

// msgpackDepth returns the nesting depth of one msgpack value in buf,
// counting maps and arrays, and stops once it passes limit.
func msgpackDepth(buf []byte, limit int) (int, error) {
	// pending[i] is how many items the container open at level i still
	// holds; a map holds two per entry.
	pending := []uint64{1}
	deepest := 0
	i := 0
	for len(pending) > 0 {
		if pending[len(pending)-1] == 0 {
			pending = pending[:len(pending)-1]
			continue
		}
		pending[len(pending)-1]--
		if i >= len(buf) {
			return 0, errors.New("msgpack encoding is truncated")
		}
		b := buf[i]
		i++
		var skip, items uint64
		container := false
		switch {
		case b <= 0x7f, b >= 0xe0, b == 0xc0, b == 0xc2, b == 0xc3:
			// fixints, nil, booleans
		case b >= 0x80 && b <= 0x8f:
			items, container = uint64(b&0x0f)*2, true
		case b >= 0x90 && b <= 0x9f:
			items, container = uint64(b&0x0f), true
		case b >= 0xa0 && b <= 0xbf:
			skip = uint64(b & 0x1f)
		default:
			n, size, c, err := msgpackHeader(b, buf[i:])
			if err != nil {
				return 0, err
			}
			i += size
			if c {
				items, container = n, true
			} else {
				skip = n
			}
		}
		if skip > uint64(len(buf)-i) {
			return 0, errors.New("msgpack encoding is truncated")
		}
		i += int(skip)
		if container {
			pending = append(pending, items)
			if d := len(pending) - 1; d > deepest {
				deepest = d
				if deepest > limit {
					return deepest, nil
				}
			}
		}
	}
	return deepest, nil
}

// msgpackHeader reads the length field after a type byte b: the payload
// bytes to skip, or (container) the items that follow. size is the length
// field's own size.
func msgpackHeader(b byte, rest []byte) (n uint64, size int, container bool, err error) {
	read := func(width int) (uint64, error) {
		if len(rest) < width {
			return 0, errors.New("msgpack encoding is truncated")
		}
		switch width {
		case 1:
			return uint64(rest[0]), nil
		case 2:
			return uint64(binary.BigEndian.Uint16(rest)), nil
		case 4:
			return uint64(binary.BigEndian.Uint32(rest)), nil
		}
		return binary.BigEndian.Uint64(rest), nil
	}
	var width int
	switch b {
	case 0xcc, 0xd0: // uint8, int8
		return 1, 0, false, nil
	case 0xcd, 0xd1, 0xd4: // uint16, int16, fixext1
		return 2, 0, false, nil
	case 0xd5: // fixext2
		return 3, 0, false, nil
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return 4, 0, false, nil
	case 0xd6: // fixext4
		return 5, 0, false, nil
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		return 8, 0, false, nil
	case 0xd7: // fixext8
		return 9, 0, false, nil
	case 0xd8: // fixext16
		return 17, 0, false, nil
	case 0xc4, 0xd9: // bin8, str8
		width = 1
	case 0xc5, 0xda, 0xdc, 0xde: // bin16, str16, array16, map16
		width = 2
	case 0xc6, 0xdb, 0xdd, 0xdf: // bin32, str32, array32, map32
		width = 4
	case 0xc7, 0xc8, 0xc9: // ext8/16/32: length, then a type byte
		w := 1 << (b - 0xc7)
		l, err := read(w)
		return l + 1, w, false, err
	default:
		return 0, 0, false, fmt.Errorf("msgpack type byte %#x is not valid", b)
	}
	l, err := read(width)
	switch b {
	case 0xdc, 0xdd:
		return l, width, true, err
	case 0xde, 0xdf:
		return l * 2, width, true, err
	}
	return l, width, false, err
}
