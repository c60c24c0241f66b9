package agent

import (
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// FuzzListFilter compiles a ?filter expression as the list endpoints do
// and applies it, with the other list parameters, to the objects they
// list: full ones and ones with their optional parts unset, so selectors
// walk through nil pointers, empty maps and empty slices. Compiling or
// applying may fail (a 400) but never panic, and a page never holds more
// than per_page items nor any item that was not listed.
func FuzzListFilter(f *testing.F) {
	f.Add(`Status == "running"`, uint8(0), false, "")
	f.Add(`Meta.team contains "a" and not (ID matches "^x")`, uint8(2), true, "b")
	node := mock.Node()
	job := mock.Job()
	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	eval := mock.Eval(mock.EvalForJob(job))
	jobs := []*structs.JobListStub{job.Stub(nil), (&structs.Job{ID: "empty"}).Stub(&structs.JobSummary{})}
	nodes := []*structs.NodeListStub{node.Stub(), (&structs.Node{ID: "empty"}).Stub()}
	allocs := []*structs.Allocation{alloc, {ID: "empty"}}
	allocStubs := []*structs.AllocListStub{alloc.Stub(), (&structs.Allocation{ID: "empty"}).Stub()}
	evals := []*structs.Evaluation{eval, {ID: "empty"}}
	namespaces := []*structs.Namespace{{Name: "default", Meta: map[string]string{"team": "a"}}, {Name: "empty"}}
	pools := []*structs.NodePool{{Name: "default"}, {Name: "empty"}}
	vars := []*structs.VariableMetadata{{Namespace: "default", Path: "a/b"}, {}}
	policies := []*structs.ACLPolicyListStub{{Name: "p"}, {}}
	f.Fuzz(func(t *testing.T, filter string, perPage uint8, reverse bool, nextToken string) {
		q := &structs.QueryOptions{Filter: filter, PerPage: int32(perPage), Reverse: reverse, NextToken: nextToken}
		lo, err := takeListOptions(q)
		if err != nil {
			mustBeClientError(t, err)
			return
		}
		if q.Filter != "" || q.PerPage != 0 || q.NextToken != "" || q.Reverse {
			t.Fatal("list parameters left in the query for the server")
		}
		checkPage(t, lo, jobs, jobStubKey(false))
		checkPage(t, lo, jobs, jobStubKey(true))
		checkPage(t, lo, nodes, nodeStubKey)
		checkPage(t, lo, allocs, allocKey)
		checkPage(t, lo, allocStubs, allocStubKey)
		checkPage(t, lo, evals, evalKey)
		checkPage(t, lo, namespaces, func(n *structs.Namespace) string { return n.Name })
		checkPage(t, lo, pools, func(p *structs.NodePool) string { return p.Name })
		checkPage(t, lo, vars, func(m *structs.VariableMetadata) string { return m.Path })
		checkPage(t, lo, policies, func(p *structs.ACLPolicyListStub) string { return p.Name })
	})
}

func checkPage[T comparable](t *testing.T, lo *listOptions, items []T, key func(T) string) {
	t.Helper()
	page, _, err := applyListOptions(lo, items, key)
	if err != nil {
		mustBeClientError(t, err)
		return
	}
	if lo.perPage > 0 && len(page) > lo.perPage {
		t.Fatalf("a page of %d items, per_page %d", len(page), lo.perPage)
	}
	for _, it := range page {
		found := false
		for _, in := range items {
			found = found || in == it
		}
		if !found {
			t.Fatalf("the page holds an item that was not listed: %v", it)
		}
	}
}
