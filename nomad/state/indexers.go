package state

import (
	"encoding/binary"
	"fmt"
)

// The memdb field indexers find their field by reflection on every insert
// and lookup. The indexers here read the field through a typed accessor
// instead, which matters when one plan result writes thousands of
// allocations, each indexed six ways.

// stringIndex indexes a string read by get. An empty string is treated
// as missing, so the object is left out of the index (or, inside a
// compound index with AllowMissing, ends the key there). Keys carry a
// NUL terminator so that an exact lookup never matches a longer value
// with the same prefix; prefix lookups drop it.
type stringIndex struct {
	get func(obj interface{}) (string, error)
}

// strField builds a stringIndex for objects of type T.
func strField[T any](get func(T) string) *stringIndex {
	return &stringIndex{get: func(obj interface{}) (string, error) {
		o, ok := obj.(T)
		if !ok {
			var zero T
			return "", fmt.Errorf("indexer for %T got %T", zero, obj)
		}
		return get(o), nil
	}}
}

// FromObject implements memdb.SingleIndexer.
func (s *stringIndex) FromObject(obj interface{}) (bool, []byte, error) {
	v, err := s.get(obj)
	if err != nil || v == "" {
		return false, nil, err
	}
	return true, append([]byte(v), 0), nil
}

// FromArgs implements memdb.Indexer.
func (s *stringIndex) FromArgs(args ...interface{}) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("string index takes one argument, got %d", len(args))
	}
	v, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("string index argument must be a string, got %T", args[0])
	}
	return append([]byte(v), 0), nil
}

// PrefixFromArgs implements memdb.PrefixIndexer.
func (s *stringIndex) PrefixFromArgs(args ...interface{}) ([]byte, error) {
	b, err := s.FromArgs(args...)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

// uintIndex indexes a uint64 read by get, big-endian so that iteration
// order is numeric order.
type uintIndex struct {
	get func(obj interface{}) (uint64, error)
}

// uintField builds a uintIndex for objects of type T.
func uintField[T any](get func(T) uint64) *uintIndex {
	return &uintIndex{get: func(obj interface{}) (uint64, error) {
		o, ok := obj.(T)
		if !ok {
			var zero T
			return 0, fmt.Errorf("indexer for %T got %T", zero, obj)
		}
		return get(o), nil
	}}
}

// FromObject implements memdb.SingleIndexer.
func (u *uintIndex) FromObject(obj interface{}) (bool, []byte, error) {
	v, err := u.get(obj)
	if err != nil {
		return false, nil, err
	}
	return true, binary.BigEndian.AppendUint64(nil, v), nil
}

// FromArgs implements memdb.Indexer.
func (u *uintIndex) FromArgs(args ...interface{}) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("uint index takes one argument, got %d", len(args))
	}
	v, ok := args[0].(uint64)
	if !ok {
		return nil, fmt.Errorf("uint index argument must be a uint64, got %T", args[0])
	}
	return binary.BigEndian.AppendUint64(nil, v), nil
}

// boolIndex indexes a condition of the object as one byte. Unlike
// memdb.ConditionalIndex it never reports the value missing, so both
// true and false rows can be looked up, unless onlyTrue: then rows where
// the condition is false are left out of the index (its schema must
// AllowMissing), which saves a tree insert on every write of them.
type boolIndex struct {
	get      func(obj interface{}) (bool, error)
	onlyTrue bool
}

// boolField builds a boolIndex for objects of type T.
func boolField[T any](get func(T) bool) *boolIndex {
	return &boolIndex{get: func(obj interface{}) (bool, error) {
		o, ok := obj.(T)
		if !ok {
			var zero T
			return false, fmt.Errorf("indexer for %T got %T", zero, obj)
		}
		return get(o), nil
	}}
}

// flagField builds a boolIndex for objects of type T that holds only the
// rows where get is true: for lookups that only ever ask for those (the
// few periodic templates among thousands of jobs).
func flagField[T any](get func(T) bool) *boolIndex {
	b := boolField(get)
	b.onlyTrue = true
	return b
}

// FromObject implements memdb.SingleIndexer.
func (b *boolIndex) FromObject(obj interface{}) (bool, []byte, error) {
	v, err := b.get(obj)
	if err != nil || (b.onlyTrue && !v) {
		return false, nil, err
	}
	return true, boolKey(v), nil
}

// FromArgs implements memdb.Indexer.
func (b *boolIndex) FromArgs(args ...interface{}) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("bool index takes one argument, got %d", len(args))
	}
	v, ok := args[0].(bool)
	if !ok {
		return nil, fmt.Errorf("bool index argument must be a bool, got %T", args[0])
	}
	return boolKey(v), nil
}

func boolKey(v bool) []byte {
	if v {
		return []byte{1}
	}
	return []byte{0}
}
