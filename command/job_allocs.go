package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// JobAllocsCommand lists the allocations of one job.
type JobAllocsCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobAllocsCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job allocs [options] <job>

  List the allocations of a job, given by its ID or a unique prefix of it.

  When ACLs are enabled, this command needs the 'read-job' capability in
  the job's namespace ('list-jobs' too for a prefix).

` + generalOptionsUsage() + `

Allocs Options:

  -all
    Also list the allocations of an earlier job that had the same ID.

  -json
    Print the allocations as JSON.

  -t <template>
    Format the allocations with a Go template.

  -verbose
    Show full IDs, the evaluation and node name of each allocation.
`)
}

// Synopsis implements cli.Command.
func (c *JobAllocsCommand) Synopsis() string { return "List allocations for a job" }

// Run implements cli.Command.
func (c *JobAllocsCommand) Run(args []string) int {
	const name = "job allocs"
	var all, asJSON, verbose bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&all, "all", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	client, ok := c.clientForArgs(fs, args, "<job>")
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, strings.TrimSpace(fs.Arg(0)))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	allocs, _, err := client.Jobs().Allocations(id, all, c.query())
	if c.callFailed(err, "retrieving allocations") {
		return 1
	}
	if asJSON || tmpl != "" {
		if allocs == nil {
			allocs = []*api.AllocationListStub{}
		}
		return printData(&c.Meta, allocs, asJSON, tmpl)
	}
	if len(allocs) == 0 {
		c.Ui.Output(fmt.Sprintf("No allocations found for job %q", id))
		return 0
	}
	if !verbose {
		c.Ui.Output(formatAllocStubs(allocs, idLength(false), false))
		return 0
	}
	c.Ui.Output(formatAllocStubsVerbose(allocs))
	return 0
}

// formatAllocStubsVerbose is the -verbose table of job allocs: full IDs,
// with the evaluation and node name of each allocation.
func formatAllocStubsVerbose(allocs []*api.AllocationListStub) string {
	sort.Slice(allocs, func(i, j int) bool {
		if allocs[i].CreateIndex != allocs[j].CreateIndex {
			return allocs[i].CreateIndex > allocs[j].CreateIndex
		}
		return allocs[i].ID < allocs[j].ID
	})
	rows := []string{"ID|Eval ID|Node ID|Node Name|Task Group|Version|Desired|Status|Created|Modified"}
	for _, a := range allocs {
		rows = append(rows, strings.Join([]string{a.ID, a.EvalID, a.NodeID, a.NodeName, a.TaskGroup,
			strconv.FormatUint(a.JobVersion, 10), a.DesiredStatus, a.ClientStatus,
			formatUnixNano(a.CreateTime), formatUnixNano(a.ModifyTime)}, "|"))
	}
	return formatList(rows)
}
