package state

import (
	"bytes"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func poolNames(t *testing.T, s *StateStore, prefix string) []string {
	t.Helper()
	list, err := s.NodePools(nil, prefix)
	must.NoError(t, err)
	var names []string
	for _, p := range list {
		names = append(names, p.Name)
	}
	return names
}

func TestNodePools_UpsertListGet(t *testing.T) {
	s := testStore(t)
	ws := memdb.NewWatchSet()
	_, err := s.NodePools(ws, "")
	must.NoError(t, err)

	gpu := &structs.NodePool{Name: "gpu", Description: "gpus", Meta: map[string]string{"k": "v"}}
	must.NoError(t, s.UpsertNodePools(10, append(structs.BuiltInNodePools(), gpu, &structs.NodePool{Name: "dev-1"})))
	must.False(t, ws.Watch(time.After(5*time.Second)), must.Sprint("the list's watch fires"))
	must.Eq(t, uint64(10), mustIndex(t, s, TableNodePools))
	must.Eq(t, uint64(0), gpu.CreateIndex, must.Sprint("the caller's objects are not written into"))

	changed := gpu.Copy()
	changed.Description = "changed"
	changed.NodeIdentityTTL = 720 * time.Hour
	must.NoError(t, s.UpsertNodePools(11, []*structs.NodePool{changed}))
	got, err := s.NodePoolByName(nil, "gpu")
	must.NoError(t, err)
	must.Eq(t, "changed", got.Description)
	must.Eq(t, 720*time.Hour, got.NodeIdentityTTL)
	must.Eq(t, uint64(10), got.CreateIndex)
	must.Eq(t, uint64(11), got.ModifyIndex)
	must.NotEq(t, 0, len(got.Hash))

	dev, err := s.NodePoolByName(nil, "dev-1")
	must.NoError(t, err)
	must.Eq(t, structs.DefaultNodeIdentityTTL, dev.NodeIdentityTTL, must.Sprint("the TTL defaults"))

	must.Eq(t, []string{"all", "default", "dev-1", "gpu"}, poolNames(t, s, ""))
	must.Eq(t, []string{"default", "dev-1"}, poolNames(t, s, "d"))
	must.Eq(t, []string(nil), poolNames(t, s, "nope"))
}

func TestNodePools_UpsertRefused(t *testing.T) {
	cases := []struct {
		name string
		pool *structs.NodePool
		want string
	}{
		{"invalid name", &structs.NodePool{Name: "a/b"}, `invalid name "a/b"`},
		{"scheduler configuration", &structs.NodePool{Name: "a", SchedulerConfiguration: &structs.NodePoolSchedulerConfiguration{}},
			`Feature "Node Pools Governance" is unlicensed`},
		{"built-in", &structs.NodePool{Name: "default", Description: "mine"}, `modifying node pool "default" is not allowed`},
		{"all", &structs.NodePool{Name: "all"}, `modifying node pool "all" is not allowed`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testStore(t)
			must.NoError(t, s.UpsertNodePools(5, structs.BuiltInNodePools()))
			err := s.UpsertNodePools(10, []*structs.NodePool{{Name: "fine"}, c.pool})
			must.ErrorIs(t, err, structs.ErrInvalid)
			must.ErrorContains(t, err, c.want)
			got, err := s.NodePoolByName(nil, "fine")
			must.NoError(t, err)
			must.Nil(t, got, must.Sprint("the write is refused whole"))
		})
	}
}

// TestNodePools_BuiltInRewrittenAsIs: writing a built-in pool exactly as
// it is (the leader racing a node that created it) changes nothing and is
// no error.
func TestNodePools_BuiltInRewrittenAsIs(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertNode(3, mockNode()))
	must.NoError(t, s.UpsertNodePools(4, structs.BuiltInNodePools()))
	def, err := s.NodePoolByName(nil, "default")
	must.NoError(t, err)
	must.Eq(t, uint64(3), def.ModifyIndex)
	all, err := s.NodePoolByName(nil, "all")
	must.NoError(t, err)
	must.Eq(t, uint64(4), all.CreateIndex)
}

// TestNodePools_NodeCreatesPool: a node registering in a pool nobody
// created creates it in the registration's transaction; a built-in pool
// so created is the built-in one.
func TestNodePools_NodeCreatesPool(t *testing.T) {
	s := testStore(t)
	n := mockNode()
	n.NodePool = "gpu"
	must.NoError(t, s.UpsertNode(7, n))
	got, err := s.NodePoolByName(nil, "gpu")
	must.NoError(t, err)
	must.NotNil(t, got)
	must.Eq(t, uint64(7), got.CreateIndex)
	must.Eq(t, uint64(7), mustIndex(t, s, TableNodePools))

	// Re-registering leaves the pool as it is.
	must.NoError(t, s.UpsertNode(8, n.Copy()))
	got, err = s.NodePoolByName(nil, "gpu")
	must.NoError(t, err)
	must.Eq(t, uint64(7), got.ModifyIndex)

	plain := mockNode()
	plain.NodePool = ""
	must.NoError(t, s.UpsertNode(9, plain))
	def, err := s.NodePoolByName(nil, "default")
	must.NoError(t, err)
	must.Eq(t, structs.NodePoolDefaultDescription, def.Description)
}

func TestNodePools_Delete(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertNodePools(10, append(structs.BuiltInNodePools(),
		&structs.NodePool{Name: "empty"}, &structs.NodePool{Name: "busy"}, &structs.NodePool{Name: "done"})))
	live := mockJob()
	live.NodePool = "busy"
	must.NoError(t, s.UpsertJob(11, live))
	dead := mockJob()
	dead.NodePool = "done"
	must.NoError(t, s.UpsertJob(12, dead))
	dead = dead.Copy()
	dead.Status = structs.JobStatusDead
	must.NoError(t, s.WithWriteTxn(13, func(tx *Txn) error { return tx.insert(TableJobs, dead) }))
	node := mockNode()
	node.NodePool = "gpu"
	must.NoError(t, s.UpsertNode(14, node))

	cases := []struct {
		names []string
		kind  error
		want  string
	}{
		{[]string{"default"}, structs.ErrInvalid, `deleting node pool "default" is not allowed`},
		{[]string{"all"}, structs.ErrInvalid, `deleting node pool "all" is not allowed`},
		{[]string{"nope"}, structs.ErrNotFound, "node pool not found"},
		{[]string{"empty", "busy"}, structs.ErrInvalid, `node pool "busy" has non-terminal jobs`},
		{[]string{"gpu"}, structs.ErrInvalid, `node pool "gpu" has nodes`},
	}
	for _, c := range cases {
		err := s.DeleteNodePools(20, c.names)
		must.ErrorIs(t, err, c.kind, must.Sprintf("%v", c.names))
		must.ErrorContains(t, err, c.want)
	}
	must.Eq(t, []string{"all", "busy", "default", "done", "empty", "gpu"}, poolNames(t, s, ""),
		must.Sprint("a refused delete removes nothing"))

	must.NoError(t, s.DeleteNodePools(21, []string{"empty", "done"}))
	must.Eq(t, []string{"all", "busy", "default", "gpu"}, poolNames(t, s, ""))
	must.Eq(t, uint64(21), mustIndex(t, s, TableNodePools))

	jobs, err := s.JobsByNodePool(nil, "*", "busy")
	must.NoError(t, err)
	must.Len(t, 1, jobs)
	must.Eq(t, live.ID, jobs[0].ID)
}

func TestNodePools_SnapshotRoundTrip(t *testing.T) {
	s := testStore(t)
	on := time.Hour
	must.NoError(t, s.UpsertNodePools(3, append(structs.BuiltInNodePools(),
		&structs.NodePool{Name: "gpu", Description: "d", Meta: map[string]string{"a": "b"}, NodeIdentityTTL: on})))
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	restored, err := Restore(&buf, nil)
	must.NoError(t, err)
	mustEqualStores(t, s, restored)
	got, err := restored.NodePoolByName(nil, "gpu")
	must.NoError(t, err)
	must.Eq(t, map[string]string{"a": "b"}, got.Meta)
	must.Eq(t, time.Hour, got.NodeIdentityTTL)
}

// TestNodePools_Events: writes and removals publish NodePool events keyed
// by name; a refused write publishes nothing.
func TestNodePools_Events(t *testing.T) {
	pub := &recordingPublisher{}
	s, err := NewStateStore(&Config{Publisher: pub})
	must.NoError(t, err)

	must.NoError(t, s.UpsertNodePools(3, []*structs.NodePool{{Name: "gpu", Description: "d"}}))
	b := pub.take()
	must.Len(t, 1, b)
	must.Eq(t, []eventKey{{structs.TopicNodePool, structs.TypeNodePoolUpserted, "gpu"}}, keys(b[0]))
	must.Eq(t, "d", b[0].Events[0].Payload.(*structs.NodePoolEvent).NodePool.Description)

	must.Error(t, s.UpsertNodePools(4, []*structs.NodePool{{Name: "a*"}}))
	must.Len(t, 0, pub.take())

	must.NoError(t, s.DeleteNodePools(5, []string{"gpu"}))
	b = pub.take()
	must.Len(t, 1, b)
	must.Eq(t, []eventKey{{structs.TopicNodePool, structs.TypeNodePoolDeleted, "gpu"}}, keys(b[0]))
}
