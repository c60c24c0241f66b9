package endpoints

import (
	"fmt"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// The ACL objects written by name or ID (roles, auth methods, binding
// rules) share two steps: a delete is refused whole unless every object
// it names exists, and an upsert answers the objects as stored (with the
// indexes the write gave them).

// copier is an ACL object that copies itself.
type copier[T any] interface {
	*T
	Copy() *T
}

// storedCopies looks up every key with get and returns copies of what is
// stored, in key order. A key with nothing stored is missing (a kinded
// not-found error) wrapped with the key.
func storedCopies[T any, Ptr copier[T]](keys []string, get func(string) (Ptr, error), missing error) ([]Ptr, error) {
	out := make([]Ptr, 0, len(keys))
	for _, k := range keys {
		v, err := get(k)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, fmt.Errorf("%w: %s", missing, k)
		}
		out = append(out, Ptr(v.Copy()))
	}
	return out, nil
}

// keysOf returns key(o) of every object, in order.
func keysOf[T any](objs []T, key func(T) string) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = key(o)
	}
	return out
}

// The lookups storedCopies takes, each reading store without a watch.

func roleByID(store *state.StateStore) func(string) (*structs.ACLRole, error) {
	return func(id string) (*structs.ACLRole, error) { return store.ACLRoleByID(nil, id) }
}

func authMethodByName(store *state.StateStore) func(string) (*structs.ACLAuthMethod, error) {
	return func(name string) (*structs.ACLAuthMethod, error) { return store.ACLAuthMethodByName(nil, name) }
}

func bindingRuleByID(store *state.StateStore) func(string) (*structs.ACLBindingRule, error) {
	return func(id string) (*structs.ACLBindingRule, error) { return store.ACLBindingRuleByID(nil, id) }
}
