package taskrunner

import (
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/taskenv"
	"github.com/opennomad/nomad/structs"
)

// buildTaskConfig describes the next instance of the task to its driver:
// environment and config interpolated against the alloc and the node.
func (tr *TaskRunner) buildTaskConfig() *driver.TaskConfig {
	a, t := tr.alloc, tr.task
	env := taskenv.New(taskenv.Params{
		Alloc:   a,
		Task:    t,
		Node:    tr.node,
		Region:  a.Job.Region,
		HostEnv: tr.hostEnv,
		Dirs: taskenv.Dirs{
			AllocDir:   tr.taskDir.SharedDir,
			TaskDir:    tr.taskDir.LocalDir,
			SecretsDir: tr.taskDir.SecretsDir,
		},
	})
	cfg := &driver.TaskConfig{
		ID:        a.ID + "/" + t.Name + "/" + structs.GenerateUUID()[:8],
		AllocID:   a.ID,
		Namespace: a.Namespace,
		JobName:   a.Job.Name,
		Group:     a.TaskGroup,
		Name:      t.Name,
		Config:    env.ReplaceConfig(t.Config),
		Env:       env.Map(),
		User:      t.User,
		Dirs: driver.TaskDirs{
			Dir:        tr.taskDir.Dir,
			LocalDir:   tr.taskDir.LocalDir,
			SecretsDir: tr.taskDir.SecretsDir,
			TmpDir:     tr.taskDir.TmpDir,
			AllocDir:   tr.taskDir.SharedDir,
			LogDir:     tr.taskDir.LogDir,
		},
		StateDir: tr.stateDir,
	}
	if ar := a.AllocatedResources; ar != nil && ar.Tasks[t.Name] != nil {
		r := ar.Tasks[t.Name]
		cfg.Resources = driver.Resources{CPUShares: r.Cpu.CpuShares, MemoryMB: r.Memory.MemoryMB, MemoryMaxMB: r.Memory.MemoryMaxMB}
	} else if r := t.Resources; r != nil {
		cfg.Resources = driver.Resources{CPUShares: int64(r.CPU), MemoryMB: int64(r.MemoryMB), MemoryMaxMB: int64(r.MemoryMaxMB)}
	}
	lc := t.LogConfig
	if lc == nil {
		lc = structs.DefaultLogConfig()
	}
	cfg.Logs = driver.LogConfig{
		Disabled:    lc.Disabled,
		MaxFiles:    max(lc.MaxFiles, 1),
		MaxFileSize: int64(max(lc.MaxFileSizeMB, 1)) << 20,
	}
	return cfg
}
