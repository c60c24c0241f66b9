package aclreplication

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// kind is one kind of shared ACL object: how to list it in the
// authoritative region and here (key → hash), read it in full there, and
// write or delete it here.
type kind struct {
	name string
	// list answers the authoritative list once its index passes
	// q.MinQueryIndex, with that index.
	list func(q structs.QueryOptions) (map[string][]byte, uint64, error)
	// local is this region's copy.
	local func(store *state.StateStore) (map[string][]byte, error)
	// fetch reads the objects named by keys from the authoritative region
	// and returns the Raft entry that writes them here (nil msg: none is
	// left, they were deleted meanwhile).
	fetch func(q structs.QueryOptions, keys []string) (structs.MessageType, interface{}, error)
	// remove is the Raft entry that deletes keys here.
	remove func(keys []string) (structs.MessageType, interface{})
}

// spec describes a kind by its list stub S and its full object T; kind
// turns it into the maps and Raft entries the replicator works with, so
// each kind only names its RPCs, keys and requests.
type spec[S, T any] struct {
	name string
	// list is the authoritative list and its index.
	list func(q structs.QueryOptions) ([]*S, uint64, error)
	// listed is a stub's key and hash; ok false leaves it out.
	listed func(s *S) (key string, hash []byte, ok bool)
	// local is this region's objects.
	local func(store *state.StateStore) ([]*T, error)
	// stored is an object's key and hash; ok false leaves it out.
	stored func(t *T) (key string, hash []byte, ok bool)
	// get reads keys in full from the authoritative region, leaving out
	// the ones that are gone.
	get func(q structs.QueryOptions, keys []string) ([]*T, error)
	// upsert and remove are the Raft entries that write objects and
	// delete keys here.
	upsert func(objs []*T) (structs.MessageType, interface{})
	remove func(keys []string) (structs.MessageType, interface{})
}

func (sp spec[S, T]) kind() kind {
	return kind{
		name: sp.name,
		list: func(q structs.QueryOptions) (map[string][]byte, uint64, error) {
			stubs, index, err := sp.list(q)
			if err != nil {
				return nil, 0, err
			}
			return hashes(stubs, sp.listed), index, nil
		},
		local: func(store *state.StateStore) (map[string][]byte, error) {
			all, err := sp.local(store)
			if err != nil {
				return nil, err
			}
			return hashes(all, sp.stored), nil
		},
		fetch: func(q structs.QueryOptions, keys []string) (structs.MessageType, interface{}, error) {
			objs, err := sp.get(q, keys)
			if err != nil {
				return 0, nil, err
			}
			if len(objs) == 0 {
				return 0, nil, nil
			}
			t, msg := sp.upsert(objs)
			return t, msg, nil
		},
		remove: sp.remove,
	}
}

// hashes maps each kept item's key to its hash.
func hashes[E any](items []*E, key func(*E) (string, []byte, bool)) map[string][]byte {
	out := make(map[string][]byte, len(items))
	for _, it := range items {
		if k, h, ok := key(it); ok {
			out[k] = h
		}
	}
	return out
}

// oneByOne reads keys one RPC each, for kinds whose endpoint has no
// batch read; a nil answer (gone, or not to be copied) is left out.
func oneByOne[T any](keys []string, get func(key string) (*T, error)) ([]*T, error) {
	var out []*T
	for _, key := range keys {
		obj, err := get(key)
		if err != nil {
			return nil, err
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
	return out, nil
}

// kinds are the kinds copied, dependencies first.
func kinds(cfg *Config) []kind {
	return []kind{policies(cfg), roles(cfg), authMethods(cfg), bindingRules(cfg), globalTokens(cfg)}
}
