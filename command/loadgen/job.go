package loadgen

import (
	"fmt"
	"strconv"

	"github.com/opennomad/nomad/api"
)

// buildJob returns job number i of the run: one group of cfg.Count
// allocations of one task.
func buildJob(cfg *Config, prefix string, i int) *api.Job {
	id := jobID(prefix, i)
	config := map[string]any{}
	if cfg.Driver == "raw_exec" {
		config = map[string]any{"command": "sleep", "args": []string{"3600"}}
	}
	if cfg.Type == "batch" {
		config = map[string]any{"run_for": "1s"}
		if cfg.Driver == "raw_exec" {
			config = map[string]any{"command": "sleep", "args": []string{"1"}}
		}
	}
	return &api.Job{
		ID:          &id,
		Name:        &id,
		Type:        &cfg.Type,
		Datacenters: cfg.Datacenters,
		TaskGroups: []*api.TaskGroup{{
			Name:          ptr("load"),
			Count:         &cfg.Count,
			EphemeralDisk: &api.EphemeralDisk{SizeMB: &cfg.DiskMB},
			Tasks: []*api.Task{{
				Name:   "work",
				Driver: cfg.Driver,
				Config: config,
				Resources: &api.Resources{
					CPU:      &cfg.CPU,
					MemoryMB: &cfg.MemoryMB,
				},
			}},
		}},
	}
}

// jobID names job i of a run.
func jobID(prefix string, i int) string {
	return prefix + "-" + strconv.Itoa(i)
}

// jobIndex is the inverse of jobID: the number of a job of this run, or
// false for any other job.
func jobIndex(prefix, id string) (int, bool) {
	if len(id) <= len(prefix)+1 || id[:len(prefix)] != prefix || id[len(prefix)] != '-' {
		return 0, false
	}
	n, err := strconv.Atoi(id[len(prefix)+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != id[len(prefix)+1:] {
		return 0, false
	}
	return n, true
}

func ptr[T any](v T) *T { return &v }

// describeJob renders the job shape for reports.
func describeJob(cfg *Config) string {
	return fmt.Sprintf("%s job, 1 group × %d, task %s %d MHz / %d MB, disk %d MB",
		cfg.Type, cfg.Count, cfg.Driver, cfg.CPU, cfg.MemoryMB, cfg.DiskMB)
}
