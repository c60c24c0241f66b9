package keyring

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestSealOpenVariable(t *testing.T) {
	k, err := New(rand.Reader, epoch, structs.RootKeyStateActive, 0)
	must.NoError(t, err)
	v := &structs.VariableDecrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "app/db", ModifyIndex: 7},
		Items:            structs.VariableItems{"password": "hunter2-secret"},
	}

	sealed, err := SealVariable(rand.Reader, k, v)
	must.NoError(t, err)
	must.Eq(t, k.Meta.KeyID, sealed.KeyID)
	must.Eq(t, v.VariableMetadata, sealed.VariableMetadata)
	// Neither the key nor the value is in the clear.
	must.False(t, bytes.Contains(sealed.Data, []byte("hunter2-secret")))
	must.False(t, bytes.Contains(sealed.Data, []byte("password")))

	back, err := OpenVariable(k, sealed)
	must.NoError(t, err)
	must.Eq(t, v, back)

	// Another key, or a changed byte, does not open it.
	other, err := New(rand.Reader, epoch, structs.RootKeyStateActive, 0)
	must.NoError(t, err)
	_, err = OpenVariable(other, sealed)
	must.ErrorIs(t, err, structs.ErrRootKeyNotFound)
	moved := sealed.Copy()
	moved.KeyID = other.Meta.KeyID
	_, err = OpenVariable(other, moved)
	must.Error(t, err)
	tampered := sealed.Copy()
	tampered.Data = bytes.Clone(sealed.Data)
	tampered.Data[len(tampered.Data)-1] ^= 1
	_, err = OpenVariable(k, tampered)
	must.Error(t, err)
}

func TestResealVariable(t *testing.T) {
	from, err := New(rand.Reader, epoch, structs.RootKeyStateInactive, 0)
	must.NoError(t, err)
	to, err := New(rand.Reader, epoch, structs.RootKeyStateActive, 0)
	must.NoError(t, err)
	v := &structs.VariableDecrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "a", ModifyIndex: 3,
			Lock: &structs.VariableLock{ID: "l"}},
		Items: structs.VariableItems{"k": "v"},
	}
	sealed, err := SealVariable(rand.Reader, from, v)
	must.NoError(t, err)
	moved, err := ResealVariable(rand.Reader, from, to, sealed)
	must.NoError(t, err)
	must.Eq(t, to.Meta.KeyID, moved.KeyID)
	must.Eq(t, sealed.VariableMetadata, moved.VariableMetadata)
	back, err := OpenVariable(to, moved)
	must.NoError(t, err)
	must.Eq(t, v, back)
}
