package client

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// taskPID is the pid of a running task's process.
func taskPID(t *testing.T, c *Client, allocID, task string) int {
	t.Helper()
	ar := c.allocs.Runner(allocID)
	must.NotNil(t, ar)
	h := ar.TaskRunner(task).Handle()
	must.NotNil(t, h)
	pid, err := strconv.Atoi(h.Inspect().Attributes["pid"])
	must.NoError(t, err)
	return pid
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st, err := parseProcState(b)
	return err == nil && st != 'Z' && st != 'X'
}

func parseProcState(b []byte) (byte, error) {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return b[i+2], nil
		}
	}
	return 0, os.ErrInvalid
}

func countEvents(st *structs.TaskState, typ string) int {
	n := 0
	for _, e := range st.Events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestClient_RestartReattachesAndReportsTheDead(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	cfg.Options[OptionRawExecEnable] = "true"
	c1, err := NewClient(cfg)
	must.NoError(t, err)
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c1.NodeID()) == structs.NodeStatusReady })

	job := mock.Job(mock.Count(2)) // raw_exec: /bin/sleep 3600
	job.TaskGroups[0].Networks = nil
	job = registerJob(t, srv, job)
	allocs := place(t, srv, job, c1.NodeID(), 2)
	keep, lose := allocs[0].ID, allocs[1].ID
	for _, id := range []string{keep, lose} {
		eventually(t, "running", clientStatusIs(t, srv, id, structs.AllocClientStatusRunning))
	}
	keepPID, losePID := taskPID(t, c1, keep, "web"), taskPID(t, c1, lose, "web")
	loseSupervisor := c1.allocs.Runner(lose).TaskRunner("web").Handle().(*executor.TaskHandle).Process().State().SupervisorPID

	// The client goes away; its tasks do not.
	must.NoError(t, c1.Shutdown())
	must.True(t, alive(keepPID))
	must.True(t, alive(losePID))
	// One task dies while nobody watches.
	must.NoError(t, syscall.Kill(losePID, syscall.SIGKILL))
	// Its supervisor records the exit and leaves; a supervisor still
	// there would hand the exit to the next client as it happens, and the
	// restart policy would apply instead.
	eventually(t, "killed task and its supervisor gone", func() bool { return !alive(losePID) && !alive(loseSupervisor) })

	c2 := testClient(t, cfg)
	must.Eq(t, c1.NodeID(), c2.NodeID())
	// Restored before the servers were asked: the runner is there at once.
	must.NotNil(t, c2.allocs.Runner(keep))
	eventually(t, "reattached", func() bool {
		h := c2.allocs.Runner(keep).TaskRunner("web").Handle()
		return h != nil
	})
	must.Eq(t, keepPID, taskPID(t, c2, keep, "web"))
	must.True(t, alive(keepPID))
	eventually(t, "dead task reported failed", clientStatusIs(t, srv, lose, structs.AllocClientStatusFailed))
	must.Eq(t, structs.AllocClientStatusRunning, serverAlloc(t, srv, keep).ClientStatus)
	st := serverAlloc(t, srv, keep).TaskStates["web"]
	must.Eq(t, 1, countEvents(st, structs.TaskStarted)) // not started twice
	lost := serverAlloc(t, srv, lose).TaskStates["web"]
	must.True(t, lost.Failed)

	// Destroy stops what Shutdown left running.
	must.NoError(t, c2.Destroy())
	eventually(t, "task stopped", func() bool { return !alive(keepPID) })
}

func TestClient_CollectsFinishedAllocsBeyondTheLimit(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	cfg.GCMaxAllocs = 1
	cfg.GCInterval = 20e6 // 20ms
	c := testClient(t, cfg)
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	job := registerJob(t, srv, asBatch(mockDriverJob(3, map[string]interface{}{"run_for": "10ms"})))
	allocs := place(t, srv, job, c.NodeID(), 3)
	dirs := map[string]string{}
	eventually(t, "runners", func() bool {
		for _, a := range allocs {
			if ar := c.allocs.Runner(a.ID); ar != nil {
				dirs[a.ID] = ar.AllocDir().Dir
			}
		}
		return len(dirs) == 3
	})
	for _, a := range allocs {
		eventually(t, "complete", clientStatusIs(t, srv, a.ID, structs.AllocClientStatusComplete))
	}
	eventually(t, "two collected", func() bool { return len(c.allocs.Runners()) == 1 })
	removed := 0
	for _, dir := range dirs {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			removed++
		}
	}
	must.Eq(t, 2, removed)

	var collected []string
	for _, a := range allocs {
		if c.allocs.Runner(a.ID) == nil {
			collected = append(collected, a.ID)
		}
	}
	must.Len(t, 2, collected)

	// A later change to the node does not bring the collected back.
	later := place(t, srv, job, c.NodeID(), 1)[0]
	eventually(t, "new alloc done", clientStatusIs(t, srv, later.ID, structs.AllocClientStatusComplete))
	for _, id := range collected {
		must.Nil(t, c.allocs.Runner(id))
	}
	eventually(t, "back within the limit", func() bool { return len(c.allocs.Runners()) == 1 })
}
