package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// JobInspectCommand prints a job as the API stores it.
type JobInspectCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobInspectCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job inspect [options] <job>
Alias: nomad inspect

  Print the job as the servers store it, with every default filled in, as
  JSON wrapped in {"Job": ...}. The output can be edited and registered
  again with 'nomad job run -json'.

` + generalOptionsUsage() + `

Inspect Options:

  -version=<n>
    Print version <n> of the job instead of the current one.

  -json
    Output JSON (the default).

  -t=<template>
    Format and display the job using a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *JobInspectCommand) Synopsis() string { return "Inspect a submitted job" }

// Run implements cli.Command.
func (c *JobInspectCommand) Run(args []string) int {
	const name = "job inspect"
	var version optionalUint
	var asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.Var(&version, "version", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <job>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, fs.Arg(0))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	var job *api.Job
	if version.set {
		job, err = jobVersion(&c.Meta, client, id, version.value)
	} else {
		job, _, err = client.Jobs().Info(id, c.query())
		if err != nil {
			err = fmt.Errorf("querying job %q: %s", id, c.describe(err))
		}
	}
	if err != nil {
		c.Ui.Error("Error " + err.Error())
		return 1
	}
	var data any = map[string]*api.Job{"Job": job}
	if tmpl != "" {
		data = job
	}
	out, err := dataFormat(data, false, tmpl)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	c.Ui.Output(out)
	return 0
}

// jobVersion returns one stored version of a job.
func jobVersion(m *Meta, c *api.Client, id string, version uint64) (*api.Job, error) {
	versions, _, _, err := c.Jobs().Versions(id, false, m.query())
	if err != nil {
		return nil, fmt.Errorf("querying versions of job %q: %s", id, m.describe(err))
	}
	for _, v := range versions {
		if v.Version != nil && *v.Version == version {
			return v, nil
		}
	}
	return nil, fmt.Errorf("finding version %d of job %q: no such version", version, id)
}
