package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

const sleepJob = `
job "sleepers" {
  datacenters = ["dc1"]
  group "g" {
    count = 2
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

const batchJob = `
job "greeter" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    task "hello" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello from the batch job; echo and a warning >&2"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`

const failingJob = `
job "failing" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 1
      interval = "1h"
      delay    = "200ms"
      mode     = "fail"
    }
    reschedule {
      attempts       = 1
      interval       = "1h"
      delay          = "5s"
      delay_function = "constant"
      unlimited      = false
    }
    task "fail" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo trying; exit 3"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`

// TestDevAgent runs the client's whole path in a dev agent: real
// placement, real processes, logs read back, restarts and rescheduling,
// and stopping a job killing its processes.
func TestDevAgent(t *testing.T) {
	a := startAgent(t, "", "-dev")
	requireScheduling(t, a)
	waitFor(t, 30*time.Second, "the dev node ready", func() bool {
		nodes, _, err := a.api.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})

	t.Run("service job with two allocs running sleep", func(t *testing.T) {
		a.t = t
		a.runJob(sleepJob)
		var pids []int
		waitFor(t, 30*time.Second, "two running allocs", func() bool {
			allocs := a.allocs("sleepers")
			running := 0
			for _, al := range allocs {
				if al.ClientStatus == api.AllocClientStatusRunning {
					running++
				}
			}
			return running == 2
		})
		for _, al := range a.allocs("sleepers") {
			var p []int
			waitFor(t, 10*time.Second, "the task's process measured", func() bool {
				p = a.taskPIDs(al.ID, "sleep")
				return len(p) == 1
			})
			killOnCleanup(t, p...)
			if got := cmdline(p[0]); got != "/bin/sleep 300" {
				t.Fatalf("alloc %s runs %q, want /bin/sleep 300", al.ID, got)
			}
			pids = append(pids, p...)
		}
		if pids[0] == pids[1] {
			t.Fatalf("both allocs report pid %d", pids[0])
		}

		// Stopping the job kills both processes.
		if _, err := a.nomad("job", "stop", "-detach", "sleepers"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "the sleep processes killed", func() bool {
			return !alive(pids[0]) && !alive(pids[1])
		})
		waitFor(t, 30*time.Second, "the allocs reported complete", func() bool {
			for _, al := range a.allocs("sleepers") {
				if al.ClientStatus != api.AllocClientStatusComplete {
					return false
				}
			}
			return true
		})
	})

	t.Run("batch job output through the logs API", func(t *testing.T) {
		a.t = t
		a.runJob(batchJob)
		var id string
		waitFor(t, 30*time.Second, "the batch alloc complete", func() bool {
			allocs := a.allocs("greeter")
			if len(allocs) == 1 && allocs[0].ClientStatus == api.AllocClientStatusComplete {
				id = allocs[0].ID
				return true
			}
			return false
		})
		alloc := a.alloc(id)
		frames, errs := a.api.AllocFS().Logs(alloc, false, "hello", "stdout", api.OriginStart, 0, nil, nil)
		var out strings.Builder
		for f := range frames {
			out.Write(f.Data)
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		if out.String() != "hello from the batch job\n" {
			t.Fatalf("stdout through the API = %q", out.String())
		}
		stderr, err := a.nomad("alloc", "logs", "-stderr", id[:8])
		if err != nil {
			t.Fatal(err)
		}
		if stderr != "and a warning\n" {
			t.Fatalf("stderr through the CLI = %q", stderr)
		}
		tail, err := a.nomad("alloc", "logs", "-tail", "-c", "6", id, "hello")
		if err != nil {
			t.Fatal(err)
		}
		// The last 6 bytes of "hello from the batch job\n".
		if tail != "h job\n" {
			t.Fatalf("tail = %q", tail)
		}
	})

	t.Run("failing task restarted per policy then rescheduled", func(t *testing.T) {
		a.t = t
		a.runJob(failingJob)
		var first *api.Allocation
		waitFor(t, 30*time.Second, "the first alloc failed", func() bool {
			for _, stub := range a.allocs("failing") {
				if al := a.alloc(stub.ID); al.PreviousAllocation == "" && al.ClientStatus == api.AllocClientStatusFailed {
					first = al
					return true
				}
			}
			return false
		})
		st := first.TaskStates["fail"]
		if st == nil || st.Restarts != 1 || !st.Failed {
			t.Fatalf("task state of the first alloc: %+v", st)
		}
		var types []string
		for _, e := range st.Events {
			types = append(types, e.Type)
		}
		joined := strings.Join(types, ",")
		if !strings.Contains(joined, "Restarting") || !strings.HasSuffix(joined, "Not Restarting") {
			t.Fatalf("events of the first alloc: %v", types)
		}
		waitFor(t, 30*time.Second, "a replacement placed", func() bool {
			for _, stub := range a.allocs("failing") {
				if a.alloc(stub.ID).PreviousAllocation == first.ID {
					return true
				}
			}
			return false
		})
	})
}
