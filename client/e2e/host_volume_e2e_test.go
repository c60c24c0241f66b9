package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// hostVolumeJob writes a line into its host volume through the mount, with
// the given driver, and reads a file of a read-only volume.
func hostVolumeJob(name, driver string) string {
	return fmt.Sprintf(`
job %[1]q {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    volume "shared" {
      type   = "host"
      source = "shared"
    }
    volume "certs" {
      type      = "host"
      source    = "certs"
      read_only = true
    }
    task "write" {
      driver = %[2]q
      config {
        command = "/bin/sh"
        args    = ["-c", "cat etc/certs/ca.pem && echo written by %[1]s > srv/shared/%[1]s.txt"]
      }
      volume_mount {
        volume      = "shared"
        destination = "/srv/shared"
      }
      volume_mount {
        volume      = "certs"
        destination = "/etc/certs"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, name, driver)
}

// TestDevAgentHostVolumes: a dev agent offers the host volumes of its
// configuration, shows them in node status, and a job mounting one writes
// a file that appears at the host path, with raw_exec and (where the host
// can isolate tasks) exec. A volume made with `nomad volume create` is
// made by the client, mounted by a job the same way, and removed with its
// directory by `nomad volume delete`. A job asking for a volume no node
// offers is not placed, and says why.
func TestDevAgentHostVolumes(t *testing.T) {
	shared, certs := t.TempDir(), t.TempDir()
	os.Chmod(shared, 0o777)
	if err := os.WriteFile(filepath.Join(certs, "ca.pem"), []byte("CA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, fmt.Sprintf(`
client {
  host_volume "shared" {
    path = %q
  }
  host_volume "certs" {
    path      = %q
    read_only = true
  }
}
`, shared, certs), "-dev")
	requireScheduling(t, a)
	var node *api.Node
	waitFor(t, 30*time.Second, "the dev node ready", func() bool {
		nodes, _, err := a.api.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" {
			return false
		}
		node, _, err = a.api.Nodes().Info(nodes[0].ID, nil)
		return err == nil
	})
	if v := node.HostVolumes["certs"]; v == nil || v.Path != certs || !v.ReadOnly {
		t.Fatalf("node host volumes: %+v", node.HostVolumes)
	}
	out, err := a.nomad("node", "status", "-verbose", node.ID)
	if err != nil || !strings.Contains(out, "certs   true      "+certs) || !strings.Contains(out, "shared  false     "+shared) {
		t.Fatalf("node status -verbose: %v\n%s", err, out)
	}

	drivers := []string{"raw_exec"}
	if d := node.Drivers["exec"]; d != nil && d.Healthy {
		drivers = append(drivers, "exec")
	} else {
		t.Log("exec is not healthy on this host; only raw_exec mounts are run")
	}
	for _, driver := range drivers {
		t.Run(driver, func(t *testing.T) {
			a.t = t
			name := "hv-" + strings.ReplaceAll(driver, "_", "-")
			a.runJob(hostVolumeJob(name, driver))
			waitFor(t, 30*time.Second, "the batch alloc complete", func() bool {
				allocs := a.allocs(name)
				if len(allocs) == 1 && allocs[0].ClientStatus == api.AllocClientStatusFailed {
					t.Fatalf("alloc failed: %+v", a.alloc(allocs[0].ID).TaskStates)
				}
				return len(allocs) == 1 && allocs[0].ClientStatus == api.AllocClientStatusComplete
			})
			b, err := os.ReadFile(filepath.Join(shared, name+".txt"))
			if err != nil || string(b) != "written by "+name+"\n" {
				t.Fatalf("file on the host path: %q, %v", b, err)
			}
		})
	}

	t.Run("dynamic volume made by the client", func(t *testing.T) {
		a.t = t
		spec := filepath.Join(t.TempDir(), "scratch.volume.hcl")
		if err := os.WriteFile(spec, []byte("name = \"scratch\"\ntype = \"host\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := a.nomad("volume", "create", spec)
		if err != nil || !strings.Contains(out, "==> Created host volume scratch with ID") || !strings.Contains(out, "ready") {
			t.Fatalf("volume create: %v\n%s", err, out)
		}
		vols, _, err := a.api.HostVolumes().List(nil, nil)
		if err != nil || len(vols) != 1 {
			t.Fatalf("volumes: %+v %v", vols, err)
		}
		vol, _, err := a.api.HostVolumes().Get(vols[0].ID, nil)
		if err != nil || vol.State != api.HostVolumeStateReady {
			t.Fatalf("volume: %+v %v", vol, err)
		}
		os.Chmod(vol.HostPath, 0o777)
		job := strings.ReplaceAll(hostVolumeJob("hv-dynamic", "raw_exec"), `source = "shared"`, `source = "scratch"`)
		a.runJob(job)
		waitFor(t, 30*time.Second, "the batch alloc complete", func() bool {
			allocs := a.allocs("hv-dynamic")
			return len(allocs) == 1 && allocs[0].ClientStatus == api.AllocClientStatusComplete
		})
		b, err := os.ReadFile(filepath.Join(vol.HostPath, "hv-dynamic.txt"))
		if err != nil || string(b) != "written by hv-dynamic\n" {
			t.Fatalf("file in the dynamic volume: %q, %v", b, err)
		}
		// Once no live alloc mounts it, it can go, and its directory
		// with it.
		if out, err := a.nomad("volume", "delete", "-type", "host", vol.ID); err != nil {
			t.Fatalf("volume delete: %v\n%s", err, out)
		}
		waitFor(t, 30*time.Second, "the volume's directory removed", func() bool {
			_, err := os.Stat(vol.HostPath)
			return os.IsNotExist(err)
		})
	})

	t.Run("no node offers the volume", func(t *testing.T) {
		a.t = t
		a.runJob(strings.ReplaceAll(hostVolumeJob("hv-missing", "raw_exec"), `source = "shared"`, `source = "nowhere"`))
		waitFor(t, 30*time.Second, "the placement failure", func() bool {
			evals, _, err := a.api.Jobs().Evaluations("hv-missing", nil)
			if err != nil {
				return false
			}
			for _, e := range evals {
				if m := e.FailedTGAllocs["g"]; m != nil {
					if m.ConstraintFiltered["missing compatible host volumes"] != 1 {
						t.Fatalf("failure metric %+v", m)
					}
					return true
				}
			}
			return false
		})
	})
}
