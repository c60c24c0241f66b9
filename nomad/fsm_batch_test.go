package nomad

import (
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/fsm/fsmtest"
	"github.com/opennomad/nomad/structs"
)

// The Raft entries of a pipeline run (jobs registered, scheduled,
// their plans committed, clients reporting, deployment health and
// success recorded), replayed in ApplyBatch calls of random sizes, leave
// every table, event and side effect as replaying them one by one does.
// The server that wrote them applied them through Raft's batches too.
func TestApplyBatch_PipelineRunSameAsOneByOne(t *testing.T) {
	run := runJobCost(t, 40)
	commands, healthBatches := 0, 0
	for _, l := range run.entries {
		if l.Type == raft.LogCommand {
			commands++
			if structs.MessageType(l.Data[0]) == structs.DeploymentAllocHealthBatchRequestType {
				healthBatches++
			}
		}
	}
	// Two or more entries a job: registration, placement; the health
	// verdicts and successes of many deployments share entries.
	must.Greater(t, 2*40-1, commands, must.Sprint("the run's entries"))
	must.Positive(t, healthBatches, must.Sprint("health verdicts in batch entries"))
	for _, maxBatch := range []int{2, 8, 64, len(run.entries)} {
		for seed := range uint64(3) {
			resps := fsmtest.SameAsSequential(t, run.setup, run.entries, seed, maxBatch)
			for i, r := range resps {
				if err, ok := r.(error); ok {
					t.Fatalf("entry %d: %v", run.entries[i].Index, err)
				}
			}
		}
	}
}
