package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// queue puts updates in the pending set at once, as if the alloc runners
// reported them between two syncs.
func queue(c *Client, updates ...*structs.Allocation) {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	for _, u := range updates {
		c.pending[u.ID] = u
	}
}

func update(id, status string) *structs.Allocation {
	return &structs.Allocation{ID: id, ClientStatus: status}
}

// updateBatches returns the alloc IDs and statuses of each UpdateAlloc
// the twin saw.
func updateBatches(w *twin) [][]string {
	var out [][]string
	for _, call := range w.callsOf("Node.UpdateAlloc") {
		var batch []string
		for _, a := range call.args.(*structs.AllocUpdateRequest).Alloc {
			batch = append(batch, a.ID+"="+a.ClientStatus)
		}
		out = append(out, batch)
	}
	return out
}

func TestAllocSync_BatchesChangesIntoOneCall(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	// The servers skip updates of allocs they do not know, so any IDs do.
	queue(c, update("a", "running"), update("c", "running"), update("b", "pending"))
	c.allocUpdated(update("b", "running")) // newer change of b replaces the older
	eventually(t, "one batch sent", func() bool { return len(w.callsOf("Node.UpdateAlloc")) == 1 })
	must.Eq(t, [][]string{{"a=running", "b=running", "c=running"}}, updateBatches(w))
}

func TestAllocSync_RetriesFailedBatchesBehindNewerChanges(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	w.setFail(func(method string, n int) error {
		if method == "Node.UpdateAlloc" && n < 2 {
			return fmt.Errorf("Node.UpdateAlloc: %w", ErrServerUnreachable)
		}
		return nil
	})
	queue(c, update("a", "running"), update("b", "running"))
	eventually(t, "first attempt", func() bool { return len(w.callsOf("Node.UpdateAlloc")) >= 1 })
	// a completes while its running status waits for a retry: only the
	// newer status may be sent.
	c.allocUpdated(update("a", "complete"))
	eventually(t, "third attempt", func() bool { return len(w.callsOf("Node.UpdateAlloc")) == 3 })
	batches := updateBatches(w)
	must.Eq(t, []string{"a=running", "b=running"}, batches[0])
	must.Eq(t, []string{"a=complete", "b=running"}, batches[2])
	must.NoError(t, w.callsOf("Node.UpdateAlloc")[2].err)
}

func TestAllocSync_DropsBatchesTheServersRefuse(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	queue(c, update("a", "bogus"))
	eventually(t, "sent", func() bool { return len(w.callsOf("Node.UpdateAlloc")) == 1 })
	var invalid *structs.ValidationError
	must.True(t, errors.As(w.callsOf("Node.UpdateAlloc")[0].err, &invalid))
	queue(c, update("b", "running"))
	eventually(t, "next batch", func() bool { return len(w.callsOf("Node.UpdateAlloc")) == 2 })
	must.Eq(t, []string{"b=running"}, updateBatches(w)[1])
}

func TestAllocSync_WaitsForRegistration(t *testing.T) {
	w := &twin{fail: func(method string, n int) error {
		return fmt.Errorf("%s: %w", method, structs.ErrNoLeader)
	}}
	c := testClient(t, testClientConfig(t, local(w)))
	queue(c, update("a", "running"))
	eventually(t, "registration retried", func() bool { return len(w.callsOf("Node.Register")) >= 3 })
	must.SliceEmpty(t, w.callsOf("Node.UpdateAlloc"))
}
