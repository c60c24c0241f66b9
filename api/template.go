package api

import (
	"path"
	"strings"
	"time"
)

// Template renders a file into the task directory (the `template` block).
type Template struct {
	SourcePath    *string        `hcl:"source,optional"`
	DestPath      *string        `hcl:"destination,optional"`
	EmbeddedTmpl  *string        `hcl:"data,optional"`
	ChangeMode    *string        `hcl:"change_mode,optional"`
	ChangeScript  *ChangeScript  `hcl:"change_script,block"`
	ChangeSignal  *string        `hcl:"change_signal,optional"`
	Once          *bool          `hcl:"once,optional"`
	Splay         *time.Duration `hcl:"splay,optional"`
	Perms         *string        `hcl:"perms,optional"`
	Uid           *int           `hcl:"uid,optional"`
	Gid           *int           `hcl:"gid,optional"`
	LeftDelim     *string        `hcl:"left_delimiter,optional"`
	RightDelim    *string        `hcl:"right_delimiter,optional"`
	Envvars       *bool          `hcl:"env,optional"`
	VaultGrace    *time.Duration `hcl:"vault_grace,optional"`
	Wait          *WaitConfig    `hcl:"wait,block"`
	ErrMissingKey *bool          `hcl:"error_on_missing_key,optional"`
}

// Canonicalize fills Nomad's template defaults: restart on change, SIGHUP
// for signal mode, 5s splay, mode 0644, {{ }} delimiters.
func (t *Template) Canonicalize() {
	if t == nil {
		return
	}
	if t.SourcePath == nil {
		t.SourcePath = new("")
	}
	if t.DestPath == nil {
		t.DestPath = new("")
	}
	if t.EmbeddedTmpl == nil {
		t.EmbeddedTmpl = new("")
	}
	if t.ChangeMode == nil {
		t.ChangeMode = new("restart")
	}
	if t.ChangeSignal == nil {
		if *t.ChangeMode == "signal" {
			t.ChangeSignal = new("SIGHUP")
		} else {
			t.ChangeSignal = new("")
		}
	} else {
		t.ChangeSignal = new(strings.ToUpper(*t.ChangeSignal))
	}
	if t.ChangeScript != nil {
		t.ChangeScript.Canonicalize()
	}
	if t.Once == nil {
		t.Once = new(false)
	}
	if t.Splay == nil {
		t.Splay = new(5 * time.Second)
	}
	if t.Perms == nil {
		t.Perms = new("0644")
	}
	if t.LeftDelim == nil {
		t.LeftDelim = new("{{")
	}
	if t.RightDelim == nil {
		t.RightDelim = new("}}")
	}
	if t.Envvars == nil {
		t.Envvars = new(false)
	}
	if t.ErrMissingKey == nil {
		t.ErrMissingKey = new(false)
	}
	if t.VaultGrace == nil {
		t.VaultGrace = new(time.Duration(0))
	}
}

// ChangeScript runs a command when a template changes (the `change_script`
// block).
type ChangeScript struct {
	Command          *string        `hcl:"command"`
	Args             []string       `hcl:"args,optional"`
	Timeout          *time.Duration `hcl:"timeout,optional"`
	FailOnError      *bool          `hcl:"fail_on_error,optional"`
	RunOnFirstRender *bool          `hcl:"run_on_first_render,optional"`
}

// Canonicalize fills a 5s timeout and false flags.
func (c *ChangeScript) Canonicalize() {
	if c.Command == nil {
		c.Command = new("")
	}
	if c.Args == nil {
		c.Args = []string{}
	}
	if c.Timeout == nil {
		c.Timeout = new(5 * time.Second)
	}
	if c.FailOnError == nil {
		c.FailOnError = new(false)
	}
	if c.RunOnFirstRender == nil {
		c.RunOnFirstRender = new(false)
	}
}

// WaitConfig bounds how long a template waits for its data to settle (the
// `wait` block).
type WaitConfig struct {
	Min *time.Duration `hcl:"min,optional"`
	Max *time.Duration `hcl:"max,optional"`
}

// TaskArtifact is a file or archive fetched before the task starts (the
// `artifact` block).
type TaskArtifact struct {
	GetterSource   *string           `hcl:"source,optional"`
	GetterOptions  map[string]string `hcl:"options,block"`
	GetterHeaders  map[string]string `hcl:"headers,block"`
	GetterMode     *string           `hcl:"mode,optional"`
	GetterInsecure *bool             `hcl:"insecure,optional"`
	RelativeDest   *string           `hcl:"destination,optional"`
	Chown          bool              `hcl:"chown,optional"`
}

// Canonicalize fills mode "any" and a destination of "local/" (or
// "local/<file name>" in file mode).
func (a *TaskArtifact) Canonicalize() {
	if a == nil {
		return
	}
	if a.GetterMode == nil {
		a.GetterMode = new("any")
	}
	if a.GetterInsecure == nil {
		a.GetterInsecure = new(false)
	}
	if a.GetterSource == nil {
		a.GetterSource = new("")
	}
	if len(a.GetterOptions) == 0 {
		a.GetterOptions = nil
	}
	if len(a.GetterHeaders) == 0 {
		a.GetterHeaders = nil
	}
	if a.RelativeDest == nil {
		if *a.GetterMode == "file" {
			a.RelativeDest = new(path.Join("local", path.Base(*a.GetterSource)))
		} else {
			a.RelativeDest = new("local/")
		}
	}
}
