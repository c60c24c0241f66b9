package command

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// JobScaleCommand changes the count of a job's task group.
type JobScaleCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobScaleCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job scale [options] <job> [<group>] <count>

  Set the count of a task group of a job, registering a new version of
  the job, and follow the evaluation it creates like 'nomad job run'
  does. The group may be left out when the job has only one.

  When ACLs are enabled, this command needs the 'scale-job' or
  'submit-job' capability in the job's namespace.

` + generalOptionsUsage() + `

Scale Options:

  -detach
    Return immediately, printing the evaluation's ID.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *JobScaleCommand) Synopsis() string { return "Change the count of a Nomad job group" }

// scaleMessage is recorded with every scaling event the CLI makes.
const scaleMessage = "submitted using the Nomad CLI"

// Run implements cli.Command.
func (c *JobScaleCommand) Run(args []string) int {
	const name = "job scale"
	var detach, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	var group, countArg string
	switch fs.NArg() {
	case 2:
		countArg = fs.Arg(1)
	case 3:
		group, countArg = fs.Arg(1), fs.Arg(2)
	default:
		c.Ui.Error("Command requires at least two arguments and no more than three")
		return 1
	}
	count, err := strconv.Atoi(countArg)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Failed to convert count string to int: %s", err))
		return 1
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, strings.TrimSpace(fs.Arg(0)))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	status, _, err := client.Jobs().ScaleStatus(id, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying job: %s", c.describe(err)))
		return 1
	}
	if group, err = scaleGroup(status.TaskGroups, group); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	resp, _, err := client.Jobs().Scale(id, group, &count, scaleMessage, false, nil, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error submitting scaling request: %s", c.describe(err)))
		return 1
	}
	if resp.Warnings != "" {
		c.Ui.Output(fmt.Sprintf("Job Warnings:\n%s\n", resp.Warnings))
	}
	// Templates (periodic, parameterized) get no evaluation.
	if resp.EvalID == "" {
		return 0
	}
	if detach {
		c.Ui.Output("Evaluation ID: " + resp.EvalID)
		return 0
	}
	return newEvalMonitor(&c.Meta, client, verbose).monitor(resp.EvalID)
}

// scaleGroup is the group to scale: the one named, which must exist, or
// the job's only group when none is named.
func scaleGroup(groups map[string]api.TaskGroupScaleStatus, group string) (string, error) {
	if group == "" {
		if len(groups) != 1 {
			return "", errors.New("Group name required")
		}
		for name := range groups {
			return name, nil
		}
	}
	if _, ok := groups[group]; !ok {
		return "", fmt.Errorf("Group %v not found within job", group)
	}
	return group, nil
}

// JobScalingEventsCommand lists a job's recent scaling events.
type JobScalingEventsCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobScalingEventsCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job scaling-events [options] <job>

  List the job's recent scaling events, newest first: the last 20 of each
  task group, whether made with 'nomad job scale', the API or an
  autoscaler.

` + generalOptionsUsage() + `

Scaling-Events Options:

  -verbose
    Also show each event's error flag, message and evaluation ID.
`)
}

// Synopsis implements cli.Command.
func (c *JobScalingEventsCommand) Synopsis() string {
	return "Display the most recent scaling events for a job"
}

// Run implements cli.Command.
func (c *JobScalingEventsCommand) Run(args []string) int {
	const name = "job scaling-events"
	var verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <job_id>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, strings.TrimSpace(fs.Arg(0)))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	status, _, err := client.Jobs().ScaleStatus(id, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error listing scaling events: %s", c.describe(err)))
		return 1
	}
	type groupEvent struct {
		group string
		event api.ScalingEvent
	}
	var events []groupEvent
	for g, tg := range status.TaskGroups {
		for _, e := range tg.Events {
			events = append(events, groupEvent{g, e})
		}
	}
	if len(events) == 0 {
		c.Ui.Output("No events found")
		return 0
	}
	sort.SliceStable(events, func(i, j int) bool {
		if events[i].event.Time != events[j].event.Time {
			return events[i].event.Time > events[j].event.Time
		}
		return events[i].group < events[j].group
	})
	header := "Task Group|Count|PrevCount"
	if verbose {
		header += "|Error|Message|Eval ID"
	}
	rows := []string{header + "|Date"}
	for _, ge := range events {
		e := ge.event
		row := fmt.Sprintf("%s|%s|%d", ge.group, optionalInt64(e.Count), e.PreviousCount)
		if verbose {
			evalID := ""
			if e.EvalID != nil {
				evalID = *e.EvalID
			}
			row += fmt.Sprintf("|%t|%s|%s", e.Error, e.Message, evalID)
		}
		rows = append(rows, row+"|"+formatUnixNano(int64(e.Time)))
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// optionalInt64 renders a count that may be absent as "" when it is.
func optionalInt64(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}
