package state

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestNodeMeta_RoundTrip(t *testing.T) {
	dir := t.TempDir()

	empty, err := LoadNodeMeta(dir)
	must.NoError(t, err)
	must.MapEmpty(t, empty)

	v := "blue"
	must.NoError(t, SaveNodeMeta(dir, map[string]*string{"color": &v, "rack": nil}))
	got, err := LoadNodeMeta(dir)
	must.NoError(t, err)
	must.MapLen(t, 2, got)
	must.Eq(t, "blue", *got["color"])
	must.Nil(t, got["rack"])
	_, kept := got["rack"]
	must.True(t, kept, must.Sprint("a removal is remembered as a nil value"))
}
