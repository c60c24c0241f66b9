package state

import (
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestStringsIndex_SameKeysAsCompound: the one-allocation index builds
// exactly the keys of the memdb.CompoundIndex of stringIndexes it
// replaced, so lookups and iteration order are unchanged.
func TestStringsIndex_SameKeysAsCompound(t *testing.T) {
	ns := func(e *structs.Evaluation) string { return e.Namespace }
	job := func(e *structs.Evaluation) string { return e.JobID }
	status := func(e *structs.Evaluation) string { return e.Status }
	ours := strFields(ns, job, status)
	theirs := &memdb.CompoundIndex{Indexes: []memdb.Indexer{strField(ns), strField(job), strField(status)}}

	objects := []*structs.Evaluation{
		{Namespace: "default", JobID: "web", Status: "pending"},
		{Namespace: "default", JobID: "web-2", Status: "blocked"},
		{Namespace: "", JobID: "web", Status: "pending"},      // a missing field
		{Namespace: "default", JobID: "web", Status: ""},      // missing last
		{Namespace: "a\x00b", JobID: "é", Status: "complete"}, // any bytes
	}
	for _, o := range objects {
		okA, keyA, errA := ours.FromObject(o)
		okB, keyB, errB := theirs.FromObject(o)
		must.Eq(t, errB == nil, errA == nil)
		must.Eq(t, okB, okA, must.Sprintf("%+v", o))
		must.Eq(t, keyB, keyA, must.Sprintf("%+v", o))
	}
	_, _, err := ours.FromObject(&structs.Job{})
	must.Error(t, err)

	argSets := [][]interface{}{
		{"default", "web", "pending"},
		{"default", "", ""},
		{"default", "web"},
		{"default"},
		{},
		{"default", "web", "pending", "extra"},
		{"default", 7, "pending"},
	}
	for _, args := range argSets {
		a, errA := ours.FromArgs(args...)
		b, errB := theirs.FromArgs(args...)
		must.Eq(t, errB == nil, errA == nil, must.Sprintf("FromArgs %v: %v / %v", args, errA, errB))
		must.Eq(t, b, a, must.Sprintf("FromArgs %v", args))

		a, errA = ours.PrefixFromArgs(args...)
		b, errB = theirs.PrefixFromArgs(args...)
		must.Eq(t, errB == nil, errA == nil, must.Sprintf("PrefixFromArgs %v: %v / %v", args, errA, errB))
		must.Eq(t, b, a, must.Sprintf("PrefixFromArgs %v", args))
	}
}
