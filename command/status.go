package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/api"
)

// StatusCommand shows any object by ID or prefix: it finds which kind
// the identifier names (job, node, allocation, evaluation, deployment,
// namespace) and runs that kind's status command; without one it lists
// the jobs.
type StatusCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *StatusCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad status [options] [<identifier>]

  Show the status of the object an ID or ID prefix names, whatever its
  kind: a job, node, allocation, evaluation, deployment or namespace.
  Without an identifier, list the jobs ('nomad job status').

  When ACLs are enabled, only the kinds of object the token may read are
  looked through.

` + generalOptionsUsage() + `

Status Options:

  -verbose
    Show full IDs and more details.
`)
}

// Synopsis implements cli.Command.
func (c *StatusCommand) Synopsis() string { return "Display the status output for a resource" }

// statusCommands are the commands an object's kind routes to, in the
// order an exact match is preferred.
var statusCommands = []struct {
	context string
	command func(Meta) cli.Command
}{
	{api.SearchContextJobs, func(m Meta) cli.Command { return &JobStatusCommand{Meta: m} }},
	{api.SearchContextNodes, func(m Meta) cli.Command { return &NodeStatusCommand{Meta: m} }},
	{api.SearchContextAllocs, func(m Meta) cli.Command { return &AllocStatusCommand{Meta: m} }},
	{api.SearchContextEvals, func(m Meta) cli.Command { return &EvalStatusCommand{Meta: m} }},
	{api.SearchContextDeployments, func(m Meta) cli.Command { return &DeploymentStatusCommand{Meta: m} }},
	{api.SearchContextNamespaces, func(m Meta) cli.Command { return &NamespaceStatusCommand{Meta: m} }},
}

// Run implements cli.Command.
func (c *StatusCommand) Run(args []string) int {
	const name = "status"
	var verbose bool
	m := c.Meta // the routed command parses the flags again, from a fresh copy
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	switch fs.NArg() {
	case 0:
		return (&JobStatusCommand{Meta: m}).Run(args)
	case 1:
	default:
		return c.usageError(name, "This command takes at most one argument: <identifier>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	id := strings.TrimSpace(fs.Arg(0))
	res, _, err := client.Search().PrefixSearch(id, api.SearchContextAll, c.query())
	if c.callFailed(err, fmt.Sprintf("querying search with id %q", id)) {
		return 1
	}
	context, fullID, problem := pickStatusMatch(id, res.Matches)
	if problem != "" {
		c.Ui.Error(problem)
		return 1
	}
	for _, s := range statusCommands {
		if s.context == context {
			routed := append(append([]string{}, args[:len(args)-1]...), fullID)
			return s.command(m).Run(routed)
		}
	}
	c.Ui.Error(fmt.Sprintf("Unable to resolve ID: %q", id))
	return 1
}

// pickStatusMatch chooses the one object id names: an exact ID wins;
// otherwise exactly one match over every kind. It returns a problem to
// report when there is none or more than one.
func pickStatusMatch(id string, matches map[string][]string) (string, string, string) {
	for _, s := range statusCommands {
		for _, m := range matches[s.context] {
			if m == id {
				return s.context, m, ""
			}
		}
	}
	var context, fullID string
	var all []string
	for _, s := range statusCommands {
		for _, m := range matches[s.context] {
			context, fullID = s.context, m
			all = append(all, fmt.Sprintf("%s (%s)", m, s.context))
		}
	}
	switch len(all) {
	case 0:
		return "", "", fmt.Sprintf("No matches returned for query: %q", id)
	case 1:
		return context, fullID, ""
	}
	sort.Strings(all)
	return "", "", fmt.Sprintf("Multiple matches found for id %q:\n  %s", id, strings.Join(all, "\n  "))
}
