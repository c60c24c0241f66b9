package command

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/structs"
)

// OperatorClientStateCommand prints what a client keeps in its state
// directory, without an agent.
type OperatorClientStateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorClientStateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator client-state <path_to_client_state_dir>

  Print as JSON what a client keeps in its state directory
  (<data_dir>/client; the data_dir itself is accepted too): every
  allocation it runs, with its deployment status and, for each task that
  has a running instance, the task's stored state and its driver handle.
  No agent is contacted; stop the client first for a consistent reading.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorClientStateCommand) Synopsis() string { return "Dump the nomad client state" }

// clientStateDump is the command's output, in Nomad's key names.
type clientStateDump struct {
	Allocations map[string]*clientStateAlloc
}

type clientStateAlloc struct {
	Alloc        *structs.Allocation
	DeployStatus *structs.AllocDeploymentStatus
	Tasks        map[string]*clientStateTask
}

type clientStateTask struct {
	LocalState  *clientStateLocal
	RemoteState *structs.TaskState
	// DriverState is the driver's own handle data, decoded when it is
	// JSON, else its bytes.
	DriverState any
}

type clientStateLocal struct {
	TaskHandle *driver.HandleState
}

// Run implements cli.Command.
func (c *OperatorClientStateCommand) Run(args []string) int {
	const name = "operator client-state"
	fs := c.flagSet(name, flagsNone)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <nomad-data-dir>")
	}
	dump, bad, err := readClientState(fs.Arg(0))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	for _, id := range slices.Sorted(maps.Keys(bad)) {
		c.Ui.Warn(fmt.Sprintf("skipping allocation %s, whose state cannot be read: %v", id, bad[id]))
	}
	out, err := json.Marshal(dump)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("failed to serialize client state: %v", err))
		return 1
	}
	c.Ui.Output(string(out))
	return 0
}

// readClientState reads the state store under dir (a client state
// directory, or a data directory holding one), and names the allocations
// whose state cannot be decoded. It never creates a store.
func readClientState(dir string) (*clientStateDump, map[string]error, error) {
	dbDir := ""
	for _, candidate := range []string{filepath.Join(dir, "state"), filepath.Join(dir, "client", "state")} {
		if st, err := os.Stat(filepath.Join(candidate, "allocs")); err == nil && st.IsDir() {
			dbDir = candidate
			break
		}
	}
	if dbDir == "" {
		return nil, nil, fmt.Errorf("failed to open client state: no client state under %s", dir)
	}
	db, err := state.NewFileDB(dbDir)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to open client state: %v", err)
	}
	defer db.Close()
	allocs, bad, err := db.GetAllAllocations()
	if err != nil {
		return nil, nil, fmt.Errorf("failed to get allocations: %v", err)
	}
	out := &clientStateDump{Allocations: map[string]*clientStateAlloc{}}
	for _, alloc := range allocs {
		entry := &clientStateAlloc{Alloc: alloc, DeployStatus: alloc.DeploymentStatus, Tasks: map[string]*clientStateTask{}}
		var tasks []*structs.Task
		if alloc.Job != nil {
			if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
				tasks = tg.Tasks
			}
		}
		for _, t := range tasks {
			st, err := db.GetTaskRunnerState(alloc.ID, t.Name)
			if err != nil {
				return nil, nil, fmt.Errorf("failed to get task runner state %s: %v", alloc.ID, err)
			}
			// As Nomad's, only tasks with a running instance are shown.
			if st == nil || st.Handle == nil {
				continue
			}
			entry.Tasks[t.Name] = &clientStateTask{
				LocalState:  &clientStateLocal{TaskHandle: st.Handle},
				RemoteState: st.TaskState,
				DriverState: driverState(st.Handle.Data),
			}
		}
		out.Allocations[alloc.ID] = entry
	}
	return out, bad, nil
}

// driverState decodes a driver's handle data when it is JSON.
func driverState(data []byte) any {
	var v any
	if len(data) > 0 && json.Unmarshal(data, &v) == nil {
		return v
	}
	return data
}
