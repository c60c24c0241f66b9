package endpoints

import (
	"fmt"

	"github.com/opennomad/nomad/client/driver/exec"
	"github.com/opennomad/nomad/client/driver/mock"
	"github.com/opennomad/nomad/client/driver/rawexec"
	"github.com/opennomad/nomad/structs"
)

// driverConfigChecks are the config checks of the drivers built into the
// binary, by driver name. A server knows these without asking a client;
// a job using any other driver is checked by the client that runs it.
var driverConfigChecks = map[string]func(map[string]interface{}) error{
	rawexec.Name: rawexec.ValidateConfig,
	exec.Name:    exec.ValidateConfig,
	mock.Name:    mock.ValidateConfig,
}

// checkDriverConfigs checks the config block of every task whose driver
// the server knows, for Job.Validate. It returns one problem per bad
// block, named by group and task as the job's other validation problems
// are, and whether every task's block was checked (Nomad's
// DriverConfigValidated: only then can `job validate` say the drivers
// accept the job).
func checkDriverConfigs(job *structs.Job) (problems []string, allChecked bool) {
	allChecked = true
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			check, ok := driverConfigChecks[t.Driver]
			if !ok {
				allChecked = false
				continue
			}
			if err := check(t.Config); err != nil {
				problems = append(problems, fmt.Sprintf("group %q: task %q: driver %q: %v", tg.Name, t.Name, t.Driver, err))
			}
		}
	}
	return problems, allChecked
}
