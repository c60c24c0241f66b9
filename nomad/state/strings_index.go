package state

import "fmt"

// stringsIndex indexes several strings of an object as one key: byte for
// byte what a memdb.CompoundIndex of stringIndexes builds (each string
// NUL-terminated; a prefix lookup leaves the last one open), made in one
// allocation instead of one per field and more for the concatenation.
// The (namespace, ID) keys of jobs, summaries, allocs, evals and
// deployments are built on every write and lookup of those rows, several
// times per Raft entry. Like that compound index without AllowMissing, an
// object with an empty field is left out of the index.
type stringsIndex[T any] struct {
	gets []func(T) string
}

// strFields builds a stringsIndex of the fields gets read, in order.
func strFields[T any](gets ...func(T) string) *stringsIndex[T] {
	return &stringsIndex[T]{gets: gets}
}

// FromObject implements memdb.SingleIndexer.
func (s *stringsIndex[T]) FromObject(obj interface{}) (bool, []byte, error) {
	o, ok := obj.(T)
	if !ok {
		var zero T
		return false, nil, fmt.Errorf("indexer for %T got %T", zero, obj)
	}
	n := 0
	for _, get := range s.gets {
		v := get(o)
		if v == "" {
			return false, nil, nil
		}
		n += len(v) + 1
	}
	key := make([]byte, 0, n)
	for _, get := range s.gets {
		key = append(append(key, get(o)...), 0)
	}
	return true, key, nil
}

// FromArgs implements memdb.Indexer: one string per field.
func (s *stringsIndex[T]) FromArgs(args ...interface{}) ([]byte, error) {
	if len(args) != len(s.gets) {
		return nil, fmt.Errorf("index of %d fields takes %d arguments, got %d", len(s.gets), len(s.gets), len(args))
	}
	return stringsKey(args, true)
}

// PrefixFromArgs implements memdb.PrefixIndexer: the leading fields, the
// last of them a prefix.
func (s *stringsIndex[T]) PrefixFromArgs(args ...interface{}) ([]byte, error) {
	if len(args) > len(s.gets) {
		return nil, fmt.Errorf("index of %d fields takes at most %d arguments, got %d", len(s.gets), len(s.gets), len(args))
	}
	return stringsKey(args, false)
}

// stringsKey joins string arguments, each NUL-terminated except, unless
// closed, the last.
func stringsKey(args []interface{}, closed bool) ([]byte, error) {
	if len(args) == 0 {
		return nil, nil
	}
	n := 0
	for _, a := range args {
		v, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("string index argument must be a string, got %T", a)
		}
		n += len(v) + 1
	}
	key := make([]byte, 0, n)
	for i, a := range args {
		key = append(key, a.(string)...)
		if closed || i < len(args)-1 {
			key = append(key, 0)
		}
	}
	return key, nil
}
