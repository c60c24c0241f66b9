package state

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestNamespaces_UpsertListGet(t *testing.T) {
	s := testStore(t)
	ws := memdb.NewWatchSet()
	_, err := s.Namespaces(ws, "")
	must.NoError(t, err)

	a := &structs.Namespace{Name: "team-a", Description: "a", Meta: map[string]string{"k": "v"}}
	b := &structs.Namespace{Name: "team-b"}
	must.NoError(t, s.UpsertNamespaces(10, []*structs.Namespace{structs.NewDefaultNamespace(), b, a}))
	must.False(t, ws.Watch(time.After(5*time.Second)), must.Sprint("the list's watch fires"))
	must.Eq(t, uint64(10), mustIndex(t, s, TableNamespaces))
	must.Eq(t, uint64(0), a.CreateIndex, must.Sprint("the caller's objects are not written into"))

	changed := a.Copy()
	changed.Description = "changed"
	must.NoError(t, s.UpsertNamespaces(11, []*structs.Namespace{changed}))
	got, err := s.NamespaceByName(nil, "team-a")
	must.NoError(t, err)
	must.Eq(t, "changed", got.Description)
	must.Eq(t, uint64(10), got.CreateIndex)
	must.Eq(t, uint64(11), got.ModifyIndex)
	must.NotEq(t, 0, len(got.Hash))
	must.Eq(t, map[string]string{"k": "v"}, got.Meta)

	cases := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"default", "team-a", "team-b"}},
		{"team", []string{"team-a", "team-b"}},
		{"team-b", []string{"team-b"}},
		{"nope", nil},
	}
	for _, c := range cases {
		list, err := s.Namespaces(nil, c.prefix)
		must.NoError(t, err)
		var names []string
		for _, n := range list {
			names = append(names, n.Name)
		}
		must.Eq(t, c.want, names, must.Sprintf("prefix %q", c.prefix))
	}
}

func TestNamespaces_UpsertInvalid(t *testing.T) {
	cases := []struct {
		name string
		ns   *structs.Namespace
		want string
	}{
		{"wildcard", &structs.Namespace{Name: "*"}, `invalid name "*". Must match regex ^[a-zA-Z0-9-]{1,128}$`},
		{"empty", &structs.Namespace{}, `invalid name ""`},
		{"long description", &structs.Namespace{Name: "a", Description: string(make([]byte, 257))}, "description longer than 256"},
		{"quota", &structs.Namespace{Name: "a", Quota: "q"}, `namespace "a" using non-existent quota "q"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testStore(t)
			err := s.UpsertNamespaces(10, []*structs.Namespace{{Name: "fine"}, c.ns})
			must.ErrorIs(t, err, structs.ErrInvalid)
			must.ErrorContains(t, err, c.want)
			got, err := s.NamespaceByName(nil, "fine")
			must.NoError(t, err)
			must.Nil(t, got, must.Sprint("the write is refused whole"))
		})
	}
}

func TestNamespaces_Delete(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertNamespaces(10, []*structs.Namespace{structs.NewDefaultNamespace(),
		{Name: "empty"}, {Name: "busy"}, {Name: "done"}, {Name: "draining"}, {Name: "vars"}}))
	_, err := s.VarApply(17, structs.VarOpSet, sealedVar("vars", "a", 0))
	must.NoError(t, err)
	live := mockJob()
	live.Namespace = "busy"
	must.NoError(t, s.UpsertJob(11, live))
	dead := mockJob()
	dead.Namespace = "done"
	must.NoError(t, s.UpsertJob(12, dead))
	dead = dead.Copy()
	dead.Status = structs.JobStatusDead
	must.NoError(t, s.WithWriteTxn(13, func(tx *Txn) error { return tx.insert(TableJobs, dead) }))
	// A dead job whose alloc still runs on its client.
	stopping := mockJob()
	stopping.Namespace = "draining"
	must.NoError(t, s.UpsertJob(14, stopping))
	running := mockAlloc(stopping, mockNode())
	running.ClientStatus = structs.AllocClientStatusRunning
	must.NoError(t, s.UpsertAllocs(15, []*structs.Allocation{running}))
	stopping = stopping.Copy()
	stopping.Status = structs.JobStatusDead
	must.NoError(t, s.WithWriteTxn(16, func(tx *Txn) error { return tx.insert(TableJobs, stopping) }))

	cases := []struct {
		names []string
		kind  error
		want  string
	}{
		{[]string{"default"}, structs.ErrInvalid, "can not delete default namespace"},
		{[]string{"nope"}, structs.ErrNotFound, "namespace not found"},
		{[]string{"empty", "busy"}, structs.ErrInvalid, `namespace "busy" has non-terminal jobs`},
		{[]string{"draining"}, structs.ErrInvalid, `namespace "draining" has non-terminal allocations`},
		{[]string{"vars"}, structs.ErrInvalid, `namespace "vars" has variables associated with it`},
	}
	for _, c := range cases {
		err := s.DeleteNamespaces(20, c.names)
		must.ErrorIs(t, err, c.kind, must.Sprintf("%v", c.names))
		must.ErrorContains(t, err, c.want)
	}
	got, err := s.NamespaceByName(nil, "empty")
	must.NoError(t, err)
	must.NotNil(t, got, must.Sprint("a refused delete removes nothing"))

	must.NoError(t, s.DeleteNamespaces(21, []string{"empty", "done"}))
	list, err := s.Namespaces(nil, "")
	must.NoError(t, err)
	must.Len(t, 4, list)
	must.Eq(t, uint64(21), mustIndex(t, s, TableNamespaces))
}
