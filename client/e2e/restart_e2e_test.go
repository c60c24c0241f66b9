package e2e

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

const keepJob = `
job "survivor" {
  datacenters = ["dc1"]
  group "g" {
    task "sleep" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`

// TestClientRestartKeepsTasks restarts an agent that runs a server and a
// client on a data dir (a dev agent keeps its server state in memory, so
// it cannot come back to the same cluster): the task keeps running while
// the agent is down, and the restarted client reattaches to the same
// process instead of starting another.
func TestClientRestartKeepsTasks(t *testing.T) {
	dataDir := t.TempDir()
	plugins := "plugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n"
	args := []string{"-server", "-client", "-bootstrap-expect", "1", "-data-dir", dataDir, "-bind", "127.0.0.1", "-node", "survivor-node"}

	a := startAgent(t, plugins, args...)
	requireScheduling(t, a)
	waitFor(t, 30*time.Second, "the node ready", func() bool {
		nodes, _, err := a.api.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	a.runJob(keepJob)
	var allocID string
	waitFor(t, 30*time.Second, "the alloc running", func() bool {
		allocs := a.allocs("survivor")
		if len(allocs) == 1 && allocs[0].ClientStatus == api.AllocClientStatusRunning {
			allocID = allocs[0].ID
			return true
		}
		return false
	})
	var pids []int
	waitFor(t, 10*time.Second, "the task's process measured", func() bool {
		pids = a.taskPIDs(allocID, "sleep")
		return len(pids) == 1
	})
	pid := pids[0]
	killOnCleanup(t, pid)

	// The agent stops; its task does not.
	a.stop()
	time.Sleep(500 * time.Millisecond)
	if !alive(pid) {
		t.Fatalf("the task (pid %d) died with the agent", pid)
	}

	b := startAgent(t, plugins, args...)
	waitFor(t, 30*time.Second, "the restarted node ready", func() bool {
		nodes, _, err := b.api.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	waitFor(t, 10*time.Second, "the same process reattached", func() bool {
		p := b.taskPIDs(allocID, "sleep")
		return len(p) == 1 && p[0] == pid
	})
	allocs := b.allocs("survivor")
	if len(allocs) != 1 || allocs[0].ID != allocID {
		t.Fatalf("allocs after the restart: %+v", allocs)
	}
	alloc := b.alloc(allocID)
	if alloc.ClientStatus != api.AllocClientStatusRunning {
		t.Fatalf("alloc status after the restart: %s", alloc.ClientStatus)
	}
	started := 0
	for _, e := range alloc.TaskStates["sleep"].Events {
		if e.Type == "Started" {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("the task started %d times", started)
	}

	// Stopping the job stops the reattached process.
	if _, err := b.nomad("job", "stop", "-detach", "survivor"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the process killed", func() bool { return !alive(pid) })
}
