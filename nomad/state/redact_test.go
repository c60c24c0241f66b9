package state

import (
	"bytes"
	"testing"

	"github.com/shoenig/test/must"
)

// TestRedactKeyMaterial: the redacted copy restores to the same store but
// for the root keys, which keep their metadata and public key and lose
// their key-encryption key and sealed material.
func TestRedactKeyMaterial(t *testing.T) {
	s := populatedStore(t, 100)
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))

	var out bytes.Buffer
	n, err := RedactKeyMaterial(bytes.NewReader(buf.Bytes()), &out)
	must.NoError(t, err)
	must.Eq(t, 2, n)
	redacted := bytes.Clone(out.Bytes())

	restored, err := Restore(&out, nil)
	must.NoError(t, err)
	keys, err := s.RootKeys(nil)
	must.NoError(t, err)
	got, err := restored.RootKeys(nil)
	must.NoError(t, err)
	must.Len(t, len(keys), got)
	for i, k := range got {
		must.Eq(t, keys[i].Meta, k.Meta)
		must.Eq(t, keys[i].PublicKey, k.PublicKey)
		must.SliceEmpty(t, k.KEK)
		must.SliceEmpty(t, k.DataKey)
		must.SliceEmpty(t, k.SigningKey)
	}

	// Everything else is as it was: put the original keys back and the
	// stores are equal.
	latest, _ := restored.LatestIndex()
	txn := restored.db.Txn(true)
	for _, k := range keys {
		must.NoError(t, txn.Insert(TableRootKeys, k))
	}
	txn.Commit()
	after, _ := restored.LatestIndex()
	must.Eq(t, latest, after)
	mustEqualStores(t, s, restored)

	// Redacting twice changes nothing more.
	var twice bytes.Buffer
	_, err = RedactKeyMaterial(bytes.NewReader(redacted), &twice)
	must.NoError(t, err)
	must.Eq(t, redacted, twice.Bytes())

	_, err = RedactKeyMaterial(bytes.NewReader([]byte{0x80, 7, 0xc1}), &bytes.Buffer{})
	must.Error(t, err)
}
