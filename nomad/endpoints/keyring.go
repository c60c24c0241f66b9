package endpoints

import (
	"crypto/rand"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Keyring serves the Keyring.* RPCs: the cluster's root keys. The key
// material never leaves the servers: List answers metadata, ListPublic
// the public signing keys.
type Keyring struct {
	srv Server
}

// keyringRules says what each Keyring.* method needs of the caller's
// token; the public keys are public.
var keyringRules = Rules{
	"Rotate":     OperatorCapability(acl.OperatorCapabilityKeyringRotate),
	"List":       OperatorCapability(acl.OperatorCapabilityKeyringRead),
	"Delete":     OperatorCapability(acl.OperatorCapabilityKeyringDelete),
	"ListPublic": Public(),
}

// Rotate makes a new root key, active at once (the active key becomes
// inactive in the same entry), prepublished until PublishTime, or with
// every older key marked for rekeying (Full).
func (k *Keyring) Rotate(args *structs.KeyringRotateRequest, reply *structs.KeyringRotateResponse) error {
	if done, err := k.srv.Forward("Keyring.Rotate", args, args, reply); done {
		return err
	}
	r := keyring.Rotation{Algorithm: args.Algorithm, Full: args.Full, PublishTime: args.PublishTime}
	if err := r.Check(); err != nil {
		return err
	}
	fresh, err := keyring.New(rand.Reader, k.srv.Clock().Now(), r.NewKeyState(), r.PublishTime)
	if err != nil {
		return err
	}
	keys, err := k.srv.State().RootKeys(nil)
	if err != nil {
		return err
	}
	req := &structs.RootKeyUpsertRequest{Keys: keyring.Rotate(keys, fresh, r), WriteRequest: args.WriteRequest}
	_, index, err := k.srv.RaftApply(structs.RootKeyUpsertRequestType, req)
	if err != nil {
		return fmt.Errorf("rotating the keyring: %w", err)
	}
	// The key's metadata as made, before the state store gave it its
	// indexes: Nomad answers so, and its clients then list the keys with
	// WaitIndex set to the key's CreateIndex, which must not block. The
	// write's index is reply.Index.
	reply.Key = fresh.Meta.Copy()
	reply.Index = index
	if r.Full {
		k.srv.KickKeyring()
	}
	return nil
}

// List returns every root key's metadata, oldest first.
func (k *Keyring) List(args *structs.GenericRequest, reply *structs.KeyringListResponse) error {
	if done, err := k.srv.Forward("Keyring.List", args, args, reply); done {
		return err
	}
	return blockingQuery(k.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		keys, err := store.RootKeys(ws)
		if err != nil {
			return 0, err
		}
		reply.Keys = make([]*structs.RootKeyMeta, 0, len(keys))
		for _, key := range keys {
			reply.Keys = append(reply.Keys, key.Meta.Copy())
		}
		return store.Index(state.TableRootKeys)
	})
}

// ListPublic returns the public signing keys of every published root key:
// what /.well-known/jwks.json serves to anyone.
func (k *Keyring) ListPublic(args *structs.GenericRequest, reply *structs.KeyringPublicKeysResponse) error {
	if done, err := k.srv.Forward("Keyring.ListPublic", args, args, reply); done {
		return err
	}
	return blockingQuery(k.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		keys, err := store.RootKeys(ws)
		if err != nil {
			return 0, err
		}
		reply.Keys = keyring.PublicKeys(keys)
		return store.Index(state.TableRootKeys)
	})
}

// Delete removes a root key; never the active one, nor without Force one
// that still seals variables.
func (k *Keyring) Delete(args *structs.KeyringDeleteRequest, reply *structs.KeyringDeleteResponse) error {
	if done, err := k.srv.Forward("Keyring.Delete", args, args, reply); done {
		return err
	}
	key, err := k.srv.State().RootKeyByID(nil, args.KeyID)
	if err != nil {
		return err
	}
	sealing, err := k.srv.State().VariablesByKeyID(nil, args.KeyID)
	if err != nil {
		return err
	}
	if err := keyring.CanDelete(key, args.Force, len(sealing) > 0); err != nil {
		return fmt.Errorf("root key %q: %w", args.KeyID, err)
	}
	req := &structs.RootKeyDeleteRequest{KeyID: args.KeyID, WriteRequest: args.WriteRequest}
	_, index, err := k.srv.RaftApply(structs.RootKeyDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
