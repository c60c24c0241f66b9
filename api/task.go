package api

import "time"

// Task lifecycle hooks.
const (
	TaskLifecycleHookPrestart  = "prestart"
	TaskLifecycleHookPoststart = "poststart"
	TaskLifecycleHookPoststop  = "poststop"
)

// Task is one process (or container) run by a driver (the `task` block).
type Task struct {
	Name      string         `hcl:"name,label"`
	Driver    string         `hcl:"driver,optional"`
	User      string         `hcl:"user,optional"`
	Lifecycle *TaskLifecycle `hcl:"lifecycle,block"`
	// Config is the driver's free-form configuration. Nested blocks are
	// kept as lists of maps, as Nomad does: `port_map { http = 80 }`
	// becomes "port_map": [{"http": 80}].
	Config          map[string]any         `hcl:"config,block"`
	Constraints     []*Constraint          `hcl:"constraint,block"`
	Affinities      []*Affinity            `hcl:"affinity,block"`
	Env             map[string]string      `hcl:"env,block"`
	Services        []*Service             `hcl:"service,block"`
	Resources       *Resources             `hcl:"resources,block"`
	RestartPolicy   *RestartPolicy         `hcl:"restart,block"`
	Meta            map[string]string      `hcl:"meta,block"`
	KillTimeout     *time.Duration         `hcl:"kill_timeout,optional"`
	LogConfig       *LogConfig             `hcl:"logs,block"`
	Artifacts       []*TaskArtifact        `hcl:"artifact,block"`
	Vault           *Vault                 `hcl:"vault,block"`
	Consul          *Consul                `hcl:"consul,block"`
	Templates       []*Template            `hcl:"template,block"`
	DispatchPayload *DispatchPayloadConfig `hcl:"dispatch_payload,block"`
	VolumeMounts    []*VolumeMount         `hcl:"volume_mount,block"`
	CSIPluginConfig *TaskCSIPluginConfig   `hcl:"csi_plugin,block" json:",omitempty"`
	Leader          bool                   `hcl:"leader,optional"`
	ShutdownDelay   time.Duration          `hcl:"shutdown_delay,optional"`
	KillSignal      string                 `hcl:"kill_signal,optional"`
	Kind            string                 `hcl:"kind,optional"`
	// ScalingPolicies holds the task's `scaling "cpu"` and `scaling "mem"`
	// blocks (vertical scaling policies).
	ScalingPolicies []*ScalingPolicy `hcl:"scaling,block"`
	// Identity is the default workload identity; Identities the named ones.
	Identity   *WorkloadIdentity
	Identities []*WorkloadIdentity `hcl:"identity,block"`
	Actions    []*Action           `hcl:"action,block"`
}

// Action is a command a task offers to run on demand (`action "name"`).
type Action struct {
	Name    string   `hcl:"name,label"`
	Command string   `hcl:"command"`
	Args    []string `hcl:"args,optional"`
}

// NewTask returns a task with a name and driver.
func NewTask(name, driver string) *Task {
	return &Task{Name: name, Driver: driver}
}

// Canonicalize fills the task's defaults: resources (100 MHz, 300 MB), a 5s
// kill timeout, the default log rotation, and the group's restart policy
// merged under the task's own.
func (t *Task) Canonicalize(tg *TaskGroup, job *Job) {
	if t == nil {
		return
	}
	if t.Resources == nil {
		t.Resources = &Resources{}
	}
	t.Resources.Canonicalize()
	if t.KillTimeout == nil {
		t.KillTimeout = new(5 * time.Second)
	}
	if t.LogConfig == nil {
		t.LogConfig = DefaultLogConfig()
	} else {
		t.LogConfig.Canonicalize()
	}
	for _, a := range t.Artifacts {
		a.Canonicalize()
	}
	if t.Vault != nil {
		t.Vault.Canonicalize()
	}
	if t.Consul != nil {
		t.Consul.Canonicalize()
	}
	for _, tmpl := range t.Templates {
		tmpl.Canonicalize()
	}
	for _, s := range t.Services {
		s.Canonicalize(t, tg, job)
	}
	for _, a := range t.Affinities {
		a.Canonicalize()
	}
	for _, vm := range t.VolumeMounts {
		vm.Canonicalize()
	}
	if t.CSIPluginConfig != nil {
		t.CSIPluginConfig.Canonicalize()
	}
	if t.RestartPolicy == nil {
		t.RestartPolicy = tg.RestartPolicy
	} else {
		r := &RestartPolicy{}
		r.Merge(tg.RestartPolicy)
		r.Merge(t.RestartPolicy)
		t.RestartPolicy = r
	}
}

// TaskLifecycle orders a task relative to the group's main tasks (the
// `lifecycle` block).
type TaskLifecycle struct {
	Hook    string `hcl:"hook"`
	Sidecar bool   `hcl:"sidecar,optional"`
}

// LogConfig bounds the stdout/stderr a client keeps for a task (the `logs`
// block).
type LogConfig struct {
	MaxFiles      *int  `hcl:"max_files,optional"`
	MaxFileSizeMB *int  `hcl:"max_file_size,optional"`
	Enabled       *bool `hcl:"enabled,optional"`
	Disabled      *bool `hcl:"disabled,optional"`
}

// DefaultLogConfig keeps 10 files of 10 MB.
func DefaultLogConfig() *LogConfig {
	return &LogConfig{MaxFiles: new(10), MaxFileSizeMB: new(10), Disabled: new(false)}
}

// Canonicalize fills unset fields from DefaultLogConfig.
func (l *LogConfig) Canonicalize() {
	if l.MaxFiles == nil {
		l.MaxFiles = new(10)
	}
	if l.MaxFileSizeMB == nil {
		l.MaxFileSizeMB = new(10)
	}
	if l.Disabled == nil {
		l.Disabled = new(false)
	}
}

// DispatchPayloadConfig says where a dispatched job's payload is written
// (the `dispatch_payload` block).
type DispatchPayloadConfig struct {
	File string `hcl:"file,optional"`
}
