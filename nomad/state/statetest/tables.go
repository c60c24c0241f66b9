package statetest

import (
	"reflect"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
)

// SameTables fails unless two stores hold, in every table of the schema
// (the index table and derived tables included), the same rows in the
// same order, each deeply equal to its counterpart with every field
// compared, unserialised ones too. It is the check that two servers
// reached the identical state.
func SameTables(t testing.TB, want, got *state.StateStore) {
	t.Helper()
	a, err := want.Dump()
	must.NoError(t, err)
	b, err := got.Dump()
	must.NoError(t, err)
	must.MapLen(t, len(a), b)
	for table, wantRows := range a {
		gotRows, ok := b[table]
		if !ok {
			t.Errorf("table %q missing", table)
			continue
		}
		if len(wantRows) != len(gotRows) {
			t.Errorf("table %q: %d rows, want %d", table, len(gotRows), len(wantRows))
			continue
		}
		for i := range wantRows {
			if reflect.DeepEqual(wantRows[i], gotRows[i]) {
				continue
			}
			// A diff of the serialised fields shows what differs in
			// most cases; the rest differ in fields not serialised.
			must.Eq(t, viaCodec(t, wantRows[i]), viaCodec(t, gotRows[i]),
				must.Sprintf("table %q row %d", table, i))
			t.Errorf("table %q row %d differs in fields the codec does not carry:\nwant %#v\n got %#v",
				table, i, wantRows[i], gotRows[i])
			break
		}
	}
}
