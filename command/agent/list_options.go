package agent

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hashicorp/go-bexpr"

	"github.com/opennomad/nomad/structs"
)

// List endpoints take Nomad's ?filter, ?reverse, ?per_page and
// ?next_token. The servers return whole lists, so the agent applies them
// to the answer: lists are a few thousand stubs at most, and an
// expression evaluated per stub costs microseconds. Where Nomad
// evaluates the filter over the whole object and the list holds stubs
// (jobs, allocations, nodes), the server filters and the agent pages.
//
// Pagination: with per_page, items are sorted by their key (the ID, or
// "namespace.ID" for jobs of all namespaces), the page starts at the
// first key >= next_token (<= with reverse), and the key of the first
// item of the following page is returned as X-Nomad-NextToken.

// listOptions are the list parameters, taken out of the query options
// so the server is not asked to apply them too.
type listOptions struct {
	filter    *bexpr.Evaluator
	reverse   bool
	perPage   int
	nextToken string
}

// takePagingOptions is takeListOptions for the lists whose server
// applies the filter itself, over whole objects rather than stubs (jobs,
// allocations, nodes, as Nomad's): the filter stays in q.
func takePagingOptions(q *structs.QueryOptions) *listOptions {
	lo := &listOptions{reverse: q.Reverse, perPage: int(q.PerPage), nextToken: q.NextToken}
	q.Reverse, q.PerPage, q.NextToken = false, 0, ""
	return lo
}

// takeListOptions moves the list parameters out of q.
func takeListOptions(q *structs.QueryOptions) (*listOptions, error) {
	lo := &listOptions{reverse: q.Reverse, perPage: int(q.PerPage), nextToken: q.NextToken}
	if q.Filter != "" {
		eval, err := bexpr.CreateEvaluator(q.Filter)
		if err != nil {
			return nil, codedError(http.StatusBadRequest, fmt.Sprintf("failed to read filter expression: %v", err))
		}
		lo.filter = eval
	}
	q.Filter, q.Reverse, q.PerPage, q.NextToken = "", false, 0, ""
	return lo, nil
}

// apply filters, orders and pages items; key gives an item's pagination
// key. It returns the page and the next page's token ("" on the last).
func applyListOptions[T any](lo *listOptions, items []T, key func(T) string) ([]T, string, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		if lo.filter != nil {
			ok, err := lo.filter.Evaluate(it)
			if err != nil {
				return nil, "", codedError(http.StatusBadRequest, fmt.Sprintf("failed to apply filter: %v", err))
			}
			if !ok {
				continue
			}
		}
		out = append(out, it)
	}
	if lo.perPage > 0 || lo.nextToken != "" {
		slices.SortStableFunc(out, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	}
	if lo.reverse {
		slices.Reverse(out)
	}
	if lo.nextToken != "" {
		start := len(out)
		for i, it := range out {
			c := strings.Compare(key(it), lo.nextToken)
			if (!lo.reverse && c >= 0) || (lo.reverse && c <= 0) {
				start = i
				break
			}
		}
		out = out[start:]
	}
	next := ""
	if lo.perPage > 0 && len(out) > lo.perPage {
		next = key(out[lo.perPage])
		out = out[:lo.perPage]
	}
	return out, next, nil
}

func jobStubKey(allNamespaces bool) func(*structs.JobListStub) string {
	return func(j *structs.JobListStub) string {
		if allNamespaces {
			return j.Namespace + "." + j.ID
		}
		return j.ID
	}
}

func nodeStubKey(n *structs.NodeListStub) string   { return n.ID }
func evalKey(e *structs.Evaluation) string         { return e.ID }
func allocStubKey(a *structs.AllocListStub) string { return a.ID }
func allocKey(a *structs.Allocation) string        { return a.ID }
