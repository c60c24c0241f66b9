package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// The deployment commands: list, status, and the operator's controls of a
// running deployment (promote, pause, resume, fail). Each control prints
// what it did and, unless -detach, follows the evaluation it created as
// `job run` does.

const deploymentGroupHelp = `
Usage: nomad deployment <subcommand> [options] [args]

  Inspect and steer deployments: the rollouts of a service job's new
  version, with canaries, health checks and auto-revert.

      $ nomad deployment list
      $ nomad deployment status <deployment-id>
      $ nomad deployment promote <deployment-id>
      $ nomad deployment pause <deployment-id>
      $ nomad deployment resume <deployment-id>
      $ nomad deployment fail <deployment-id>

  Run 'nomad deployment <subcommand> -help' for a subcommand's flags.
`

// resolveDeployment returns the deployment whose ID starts with prefix.
func resolveDeployment(m *Meta, c *api.Client, prefix string, length int) (*api.Deployment, error) {
	sent, err := uuidPrefix(prefix)
	if err != nil {
		return nil, err
	}
	q := m.query()
	q.Prefix = sent
	list, _, err := c.Deployments().List(q)
	if err != nil {
		return nil, fmt.Errorf("querying deployments: %s", m.describe(err))
	}
	var matches []*api.Deployment
	for _, d := range list {
		if strings.HasPrefix(d.ID, prefix) {
			matches = append(matches, d)
		}
	}
	switch len(matches) {
	case 0:
		return nil, &notFoundError{kind: "deployment", prefix: prefix}
	case 1:
	default:
		return nil, &ambiguousError{kind: "deployments", list: formatDeploymentList(matches, length)}
	}
	d, _, err := c.Deployments().Info(matches[0].ID, m.query())
	if err != nil {
		return nil, fmt.Errorf("querying deployment %q: %s", matches[0].ID, m.describe(err))
	}
	return d, nil
}

// formatDeploymentList is the table of `deployment list` and `job
// deployments`.
func formatDeploymentList(list []*api.Deployment, length int) string {
	rows := []string{"ID|Job ID|Job Version|Status|Description"}
	for _, d := range list {
		rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s", limit(d.ID, length), d.JobID, d.JobVersion, d.Status, d.StatusDescription))
	}
	return formatList(rows)
}

// formatDeploymentFull is a deployment's key/value block and, when it has
// groups, its "Deployed" table.
func formatDeploymentFull(d *api.Deployment, length int) string {
	out := formatDeploymentKV(d, length, true)
	if len(d.TaskGroups) > 0 {
		out += "\n\nDeployed\n" + formatDeploymentGroups(d)
	}
	return out
}

// DeploymentListCommand lists deployments.
type DeploymentListCommand struct {
	Meta
}

func (c *DeploymentListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad deployment list [options]

  List deployments, newest first.

` + generalOptionsUsage() + `

List Options:

  -filter=<expression>
    A server-side filter expression.

  -per-page=<n>
    How many deployments to return per page.

  -page-token=<token>
    Where to resume a paged listing (printed at the end of a page).

  -verbose
    Show full IDs.
` + formatOutputFlagsUsage)
}

func (c *DeploymentListCommand) Synopsis() string { return "List all deployments" }

func (c *DeploymentListCommand) Run(args []string) int {
	const name = "deployment list"
	var filter, pageToken, tmpl string
	var perPage int
	var verbose, asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&filter, "filter", "", "")
	fs.StringVar(&pageToken, "page-token", "", "")
	fs.IntVar(&perPage, "per-page", 0, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	if perPage < 0 {
		return c.usageError(name, fmt.Sprintf("Invalid -per-page %d: must be positive", perPage))
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	q := c.query()
	q.Filter, q.NextToken, q.PerPage = filter, pageToken, int32(perPage)
	list, qm, err := client.Deployments().List(q)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving deployments: %s", c.describe(err)))
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, list, asJSON, tmpl)
	}
	if len(list) == 0 {
		c.Ui.Output("No deployments found")
		return 0
	}
	c.Ui.Output(formatDeploymentList(list, idLength(verbose)))
	if qm.NextToken != "" {
		c.Ui.Output(fmt.Sprintf("\nResults have been paginated. To get the next page run:\n\nnomad deployment list -page-token %s", qm.NextToken))
	}
	return 0
}

// DeploymentStatusCommand shows one deployment.
type DeploymentStatusCommand struct {
	Meta
}

func (c *DeploymentStatusCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad deployment status [options] <deployment id>

  Show a deployment: its job and version, status, and per task group the
  desired, placed, healthy and unhealthy allocations (and canaries).

` + generalOptionsUsage() + `

Status Options:

  -monitor
    Follow the deployment until it ends.

  -verbose
    Show full IDs.
` + formatOutputFlagsUsage)
}

func (c *DeploymentStatusCommand) Synopsis() string { return "Display the status of a deployment" }

func (c *DeploymentStatusCommand) Run(args []string) int {
	const name = "deployment status"
	var tmpl string
	var verbose, asJSON, follow bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&follow, "monitor", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <deployment id>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	d, err := resolveDeployment(&c.Meta, client, fs.Arg(0), length)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving deployment: %s", err))
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, d, asJSON, tmpl)
	}
	if follow {
		return newEvalMonitor(&c.Meta, client, verbose).followDeployment(d.ID)
	}
	c.Ui.Output(formatDeploymentFull(d, length))
	return 0
}

// deploymentAction is the shared shape of promote, pause, resume and
// fail: resolve the deployment, act, print what happened, follow the
// evaluation the action created unless -detach.
type deploymentAction struct {
	Meta
	name     string // "deployment pause"
	synopsis string
	help     string
	// groups takes -group flags (promote only).
	groups bool
	act    func(c *api.Client, d *api.Deployment, groups []string, w *api.WriteOptions) (*api.DeploymentUpdateResponse, error)
	// done is the line printed on success, given the deployment's short ID.
	done func(shortID string) string
}

func (c *deploymentAction) Help() string {
	extra := ""
	if c.groups {
		extra = `
  -group=<name>
    Promote only this task group's canaries; repeat for several. Without
    it every group is promoted.
`
	}
	return strings.TrimSpace(`
Usage: nomad `+c.name+` [options] <deployment id>

  `+c.help+`

`+generalOptionsUsage()+`

Options:
`+extra+`
  -detach
    Return at once instead of following the evaluation the action creates.

  -verbose
    Show full IDs.
`) + "\n"
}

func (c *deploymentAction) Synopsis() string { return c.synopsis }

func (c *deploymentAction) Run(args []string) int {
	var detach, verbose bool
	var groups stringSlice
	fs := c.flagSet(c.name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if c.groups {
		fs.Var(&groups, "group", "")
	}
	if !c.parseFlags(fs, args, c.name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(c.name, "This command takes one argument: <deployment id>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	d, err := resolveDeployment(&c.Meta, client, fs.Arg(0), length)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving deployment: %s", err))
		return 1
	}
	return c.perform(client, d, groups, detach, verbose)
}

// perform acts on d, prints the outcome and follows the evaluation the
// action created unless detach.
func (c *deploymentAction) perform(client *api.Client, d *api.Deployment, groups []string, detach, verbose bool) int {
	resp, err := c.act(client, d, groups, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error %s deployment: %s", gerund(c.name), c.describe(err)))
		return 1
	}
	c.Ui.Output(c.done(limit(d.ID, idLength(verbose))))
	if detach || resp.EvalID == "" {
		return 0
	}
	c.Ui.Output("")
	return newEvalMonitor(&c.Meta, client, verbose).monitor(resp.EvalID)
}

// gerund turns "deployment pause" into "pausing".
func gerund(name string) string {
	verb := name[strings.LastIndex(name, " ")+1:]
	switch verb {
	case "pause":
		return "pausing"
	case "resume":
		return "resuming"
	case "promote":
		return "promoting"
	case "fail":
		return "failing"
	}
	return verb
}

func newDeploymentPromote(m Meta) *deploymentAction {
	return &deploymentAction{Meta: m, name: "deployment promote", groups: true,
		synopsis: "Promote a deployment's canaries",
		help: `Promote the canaries of a deployment: once promoted, the rest of the
  new version is rolled out. Canaries must be healthy first.`,
		act: func(c *api.Client, d *api.Deployment, groups []string, w *api.WriteOptions) (*api.DeploymentUpdateResponse, error) {
			if len(groups) > 0 {
				r, _, err := c.Deployments().PromoteGroups(d.ID, groups, w)
				return r, err
			}
			r, _, err := c.Deployments().PromoteAll(d.ID, w)
			return r, err
		},
		done: func(id string) string { return fmt.Sprintf("Deployment %q promoted", id) },
	}
}

func newDeploymentPause(m Meta) *deploymentAction {
	return &deploymentAction{Meta: m, name: "deployment pause",
		synopsis: "Pause a deployment",
		help:     `Pause a deployment: no more allocations of the new version are placed until it is resumed.`,
		act: func(c *api.Client, d *api.Deployment, _ []string, w *api.WriteOptions) (*api.DeploymentUpdateResponse, error) {
			r, _, err := c.Deployments().Pause(d.ID, true, w)
			return r, err
		},
		done: func(id string) string { return fmt.Sprintf("Deployment %q paused", id) },
	}
}

func newDeploymentResume(m Meta) *deploymentAction {
	return &deploymentAction{Meta: m, name: "deployment resume",
		synopsis: "Resume a paused deployment",
		help:     `Resume a paused deployment.`,
		act: func(c *api.Client, d *api.Deployment, _ []string, w *api.WriteOptions) (*api.DeploymentUpdateResponse, error) {
			r, _, err := c.Deployments().Pause(d.ID, false, w)
			return r, err
		},
		done: func(id string) string { return fmt.Sprintf("Deployment %q resumed", id) },
	}
}

func newDeploymentFail(m Meta) *deploymentAction {
	return &deploymentAction{Meta: m, name: "deployment fail",
		synopsis: "Manually fail a deployment",
		help: `Mark a running deployment failed. A job whose groups auto-revert is
  rolled back to its last stable version.`,
		act: func(c *api.Client, d *api.Deployment, _ []string, w *api.WriteOptions) (*api.DeploymentUpdateResponse, error) {
			r, _, err := c.Deployments().Fail(d.ID, w)
			return r, err
		},
		done: func(id string) string { return fmt.Sprintf("Deployment %q failed", id) },
	}
}

// JobDeploymentsCommand lists a job's deployments.
type JobDeploymentsCommand struct {
	Meta
}

func (c *JobDeploymentsCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job deployments [options] <job>

  List a job's deployments, newest first.

` + generalOptionsUsage() + `

Deployments Options:

  -latest
    Show only the latest deployment, in full.

  -all
    Include deployments of earlier incarnations of a job with this ID.

  -verbose
    Show full IDs.
` + formatOutputFlagsUsage)
}

func (c *JobDeploymentsCommand) Synopsis() string { return "List deployments for a job" }

func (c *JobDeploymentsCommand) Run(args []string) int {
	const name = "job deployments"
	var tmpl string
	var latest, all, verbose, asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&latest, "latest", false, "")
	fs.BoolVar(&all, "all", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
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
	jobID := fs.Arg(0)
	length := idLength(verbose)
	if latest {
		d, _, err := client.Jobs().LatestDeployment(jobID, c.query())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error retrieving deployments: %s", c.describe(err)))
			return 1
		}
		if asJSON || tmpl != "" {
			return printData(&c.Meta, d, asJSON, tmpl)
		}
		if d == nil {
			c.Ui.Output(fmt.Sprintf("No deployment found for job %q", jobID))
			return 0
		}
		c.Ui.Output(formatDeploymentFull(d, length))
		return 0
	}
	list, _, err := client.Jobs().Deployments(jobID, all, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving deployments: %s", c.describe(err)))
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, list, asJSON, tmpl)
	}
	if len(list) == 0 {
		c.Ui.Output(fmt.Sprintf("No deployments found for job %q", jobID))
		return 0
	}
	c.Ui.Output(formatDeploymentList(list, length))
	return 0
}

// JobPromoteCommand promotes the canaries of a job's latest deployment.
type JobPromoteCommand struct {
	Meta
}

func (c *JobPromoteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job promote [options] <job>

  Promote the canaries of the job's latest deployment; the same as
  'nomad deployment promote' on that deployment.

` + generalOptionsUsage() + `

Promote Options:

  -group=<name>
    Promote only this task group's canaries; repeat for several.

  -detach
    Return at once instead of following the evaluation.

  -verbose
    Show full IDs.
`)
}

func (c *JobPromoteCommand) Synopsis() string { return "Promote a job's canaries" }

func (c *JobPromoteCommand) Run(args []string) int {
	const name = "job promote"
	var detach, verbose bool
	var groups stringSlice
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.Var(&groups, "group", "")
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
	jobID := fs.Arg(0)
	d, _, err := client.Jobs().LatestDeployment(jobID, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving deployment: %s", c.describe(err)))
		return 1
	}
	if d == nil {
		c.Ui.Error(fmt.Sprintf("Job %q has no deployment to promote", jobID))
		return 1
	}
	return newDeploymentPromote(c.Meta).perform(client, d, groups, detach, verbose)
}
