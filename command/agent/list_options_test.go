package agent

import (
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestListOptions(t *testing.T) {
	stubs := []*structs.JobListStub{
		{ID: "c", Namespace: "default", Status: "running", Priority: 50},
		{ID: "a", Namespace: "default", Status: "dead", Priority: 70},
		{ID: "d", Namespace: "prod", Status: "running", Priority: 90},
		{ID: "b", Namespace: "default", Status: "running", Priority: 10},
	}
	cases := []struct {
		name     string
		q        structs.QueryOptions
		allNs    bool
		wantIDs  []string
		wantNext string
		wantErr  string
	}{
		{name: "nothing keeps the server's order", wantIDs: []string{"c", "a", "d", "b"}},
		{name: "filter", q: structs.QueryOptions{Filter: `Status == "running" and Priority > 20`}, wantIDs: []string{"c", "d"}},
		{name: "filter on a selector that matches nothing", q: structs.QueryOptions{Filter: `ID matches "^[ab]"`}, wantIDs: []string{"a", "b"}},
		{name: "reverse", q: structs.QueryOptions{Reverse: true}, wantIDs: []string{"b", "d", "a", "c"}},
		{name: "first page", q: structs.QueryOptions{PerPage: 2}, wantIDs: []string{"a", "b"}, wantNext: "c"},
		{name: "second page", q: structs.QueryOptions{PerPage: 2, NextToken: "c"}, wantIDs: []string{"c", "d"}},
		{name: "token between keys", q: structs.QueryOptions{PerPage: 1, NextToken: "bb"}, wantIDs: []string{"c"}, wantNext: "d"},
		{name: "token past the end", q: structs.QueryOptions{PerPage: 1, NextToken: "z"}, wantIDs: []string{}},
		{name: "reverse pages", q: structs.QueryOptions{PerPage: 3, Reverse: true}, wantIDs: []string{"d", "c", "b"}, wantNext: "a"},
		{name: "reverse from token", q: structs.QueryOptions{PerPage: 3, Reverse: true, NextToken: "a"}, wantIDs: []string{"a"}},
		{name: "filter then page", q: structs.QueryOptions{PerPage: 1, Filter: `Status == "running"`}, wantIDs: []string{"b"}, wantNext: "c"},
		{name: "all namespaces key", q: structs.QueryOptions{PerPage: 3}, allNs: true, wantIDs: []string{"a", "b", "c"}, wantNext: "prod.d"},
		{name: "bad expression", q: structs.QueryOptions{Filter: `Status ==`}, wantErr: "failed to read filter expression"},
		{name: "unknown field", q: structs.QueryOptions{Filter: `Nope == "x"`}, wantErr: "failed to apply filter"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			lo, err := takeListOptions(&q)
			if err == nil {
				must.Eq(t, structs.QueryOptions{}, q, must.Sprint("list options are taken out of the request"))
				var page []*structs.JobListStub
				var next string
				page, next, err = applyListOptions(lo, stubs, jobStubKey(tc.allNs))
				if err == nil {
					ids := []string{}
					for _, s := range page {
						ids = append(ids, s.ID)
					}
					must.Eq(t, tc.wantIDs, ids)
					must.Eq(t, tc.wantNext, next)
					return
				}
			}
			must.ErrorContains(t, err, tc.wantErr)
			code, _ := errorStatus(err)
			must.Eq(t, http.StatusBadRequest, code)
		})
	}
}

func TestListOptions_OverHTTP(t *testing.T) {
	h := newTestHTTP(t)
	seed(t, h)
	// Allocation, job and node lists are filtered by the server, over
	// whole objects: their filter reaches it untouched.
	resp, _ := h.do("GET", `/v1/allocations?filter=ClientStatus%20%3D%3D%20%22nope%22&per_page=2`, "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	q := h.rpc.lastCall(t, "Alloc.List").(*structs.AllocListRequest).QueryOptions
	must.Eq(t, `ClientStatus == "nope"`, q.Filter)
	must.Eq(t, 0, q.PerPage)
	resp, _ = h.do("GET", `/v1/nodes?filter=Status%20%3D%3D%20%22ready%22`, "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, `Status == "ready"`, h.rpc.lastCall(t, "Node.List").(*structs.NodeListRequest).Filter)
	resp, body := h.do("GET", `/v1/evaluations?filter=bad%20%3D%3D`, "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrHasPrefix(t, "failed to read filter expression", body)
}
