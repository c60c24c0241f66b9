package state

import (
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestNodesByDrain(t *testing.T) {
	s := testStore(t)
	a, b, c := mockNode(), mockNode(), mockNode()
	for i, n := range []*structs.Node{a, b, c} {
		must.NoError(t, s.UpsertNode(uint64(i+1), n))
	}
	must.NoError(t, s.UpdateNodeDrain(4, b.ID, &structs.DrainStrategy{}, false, 1, nil, nil))

	ws := memdb.NewWatchSet()
	draining, err := s.NodesByDrain(ws, true)
	must.NoError(t, err)
	must.Len(t, 1, draining)
	must.Eq(t, b.ID, draining[0].ID)
	others, _ := s.NodesByDrain(nil, false)
	must.Len(t, 2, others)

	// A change to a node that does not drain leaves the watch alone.
	must.NoError(t, s.UpdateNodeStatus(5, a.ID, structs.NodeStatusDown, 2, nil))
	must.False(t, fired(ws))

	// A node starting to drain fires it.
	must.NoError(t, s.UpdateNodeDrain(6, c.ID, &structs.DrainStrategy{}, false, 3, nil, nil))
	must.True(t, fired(ws))
	draining, _ = s.NodesByDrain(nil, true)
	must.Len(t, 2, draining)
}

// fired reports, without waiting, whether anything in ws changed.
func fired(ws memdb.WatchSet) bool {
	for ch := range ws {
		select {
		case <-ch:
			return true
		default:
		}
	}
	return false
}
