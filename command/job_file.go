package command

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/jobspec"
)

// jobSource holds the flags that say how to read a job file (shared by
// job run, plan and validate) and reads it.
type jobSource struct {
	vars     stringSlice
	varFiles stringSlice
	json     bool
}

// addFlags registers -var, -var-file and -json.
func (s *jobSource) addFlags(fs *flag.FlagSet) {
	fs.Var(&s.vars, "var", "")
	fs.Var(&s.varFiles, "var-file", "")
	fs.BoolVar(&s.json, "json", false, "")
}

// jobSourceUsage documents the flags of addFlags.
const jobSourceUsage = `
  -json
    Read the job file as JSON in the API's format instead of HCL. If the
    top-level object has a "Job" field, as the output of 'nomad job
    inspect' and 'nomad job run -output' does, its value is the job.

  -var 'key=value'
    Set a variable declared in the job file. Repeatable; takes precedence
    over -var-file and NOMAD_VAR_<name> environment variables.

  -var-file=path
    Read variable values from an HCL (or .json) file. Repeatable; a later
    file overrides an earlier one.`

// loadedJob is a parsed job with what the parser wants the user to know
// and the source kept for the server.
type loadedJob struct {
	job        *api.Job
	warnings   []string
	submission *api.JobSubmission
}

// load reads the job at path ("-" for stdin) and parses it.
func (s *jobSource) load(m *Meta, path string) (*loadedJob, error) {
	var src []byte
	var err error
	name := path
	if path == "-" {
		name = "<stdin>"
		src, err = io.ReadAll(m.stdin())
	} else {
		src, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading job file %q: %w", name, err)
	}
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, fmt.Errorf("job file %q is empty", name)
	}
	if s.json {
		if len(s.vars) > 0 || len(s.varFiles) > 0 {
			return nil, fmt.Errorf("-var and -var-file apply to HCL job files only, not with -json")
		}
		job, err := parseJSONJob(name, src)
		if err != nil {
			return nil, err
		}
		return &loadedJob{job: job, submission: &api.JobSubmission{Source: string(src), Format: "json"}}, nil
	}

	varFiles, err := jobspec.ReadVarFiles(s.varFiles...)
	if err != nil {
		return nil, err
	}
	// Ctrl-C stops an evaluation that runs long, as it stops a wait.
	opts := jobspec.Options{ArgVars: s.vars, VarFiles: varFiles, Env: m.environ(), AllowFS: true, Context: m.ctx()}
	if path == "-" {
		if wd, err := os.Getwd(); err == nil {
			opts.BaseDir = wd
		}
	}
	res, err := jobspec.Parse(name, src, opts)
	if err != nil {
		return nil, fmt.Errorf("parsing job file %s:\n%w", name, err)
	}
	sub := &api.JobSubmission{Source: string(src), Format: "hcl2"}
	if len(s.vars) > 0 {
		sub.VariableFlags = map[string]string{}
		for _, kv := range s.vars {
			k, v, _ := strings.Cut(kv, "=")
			sub.VariableFlags[k] = v
		}
	}
	var varText []string
	for _, f := range varFiles {
		varText = append(varText, string(f.Content))
	}
	sub.Variables = strings.Join(varText, "\n")
	return &loadedJob{job: res.Job, warnings: res.Warnings, submission: sub}, nil
}

// parseJSONJob decodes a job in the API's JSON format, bare or wrapped in
// {"Job": ...}.
func parseJSONJob(name string, src []byte) (*api.Job, error) {
	var wrapper struct {
		Job *api.Job
	}
	if err := json.Unmarshal(src, &wrapper); err != nil {
		return nil, fmt.Errorf("parsing JSON job file %s: %w", name, err)
	}
	if wrapper.Job != nil {
		return wrapper.Job, nil
	}
	var job api.Job
	if err := json.Unmarshal(src, &job); err != nil {
		return nil, fmt.Errorf("parsing JSON job file %s: %w", name, err)
	}
	if job.ID == nil && job.Name == nil && len(job.TaskGroups) == 0 {
		return nil, fmt.Errorf("JSON job file %s has no job: expected a job object or {\"Job\": {...}}", name)
	}
	return &job, nil
}

// jobID returns the job's ID, or its name when the ID is unset.
func jobID(job *api.Job) string {
	switch {
	case job.ID != nil && *job.ID != "":
		return *job.ID
	case job.Name != nil:
		return *job.Name
	}
	return ""
}
