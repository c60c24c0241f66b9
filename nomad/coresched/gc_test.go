package coresched

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestCoreScheduler_ReapsInBoundedBatches(t *testing.T) {
	var calls []*structs.EvalDeleteRequest
	c := &CoreScheduler{rpc: func(method string, args, reply interface{}) error {
		calls = append(calls, args.(*structs.EvalDeleteRequest))
		return nil
	}}
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = structs.GenerateUUID()
		}
		return out
	}
	// maxIDsPerReap+10 allocs and 5 evals: allocs fill the first entry,
	// the remaining 10 allocs and the evals share the second.
	must.NoError(t, c.reapEvals(ids(5), ids(maxIDsPerReap+10)))
	must.Len(t, 2, calls)
	must.Len(t, maxIDsPerReap, calls[0].Allocs)
	must.SliceEmpty(t, calls[0].Evals)
	must.Len(t, 10, calls[1].Allocs)
	must.Len(t, 5, calls[1].Evals)
}
