package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// AllocStatusCommand shows one allocation in detail.
type AllocStatusCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AllocStatusCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad alloc status [options] <allocation>

  Show an allocation (by ID or unique prefix): where it was placed, its
  desired and client status, and for each task its state, resources and
  recent events. With -verbose, also how the scheduler chose the node.

` + generalOptionsUsage() + `

Alloc Status Options:

  -short
    Show only the allocation's attributes and task states.

  -verbose
    Show full IDs, every task event and the placement metrics.
` + formatOutputFlagsUsage)
}

// Synopsis implements cli.Command.
func (c *AllocStatusCommand) Synopsis() string {
	return "Display allocation status information and metadata"
}

// Run implements cli.Command.
func (c *AllocStatusCommand) Run(args []string) int {
	const name = "alloc status"
	var short, verbose, asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&short, "short", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <allocation>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	alloc, err := resolveAlloc(&c.Meta, client, fs.Arg(0), length)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, alloc, asJSON, tmpl)
	}
	c.Ui.Output(formatKV(allocBasics(alloc, length)))
	for _, task := range sortedKeys(alloc.TaskStates) {
		c.Ui.Output("")
		c.Ui.Output(formatTaskState(alloc, task, short, verbose))
	}
	if verbose && alloc.Metrics != nil {
		c.Ui.Output("\nPlacement Metrics")
		c.Ui.Output(formatPlacementMetrics(alloc.Metrics, length))
	}
	return 0
}

// allocBasics is the allocation's key/value block.
func allocBasics(a *api.Allocation, length int) []string {
	var version uint64
	if a.Job != nil {
		version = derefUint64(a.Job.Version)
	}
	rows := []string{
		"ID|" + limit(a.ID, length),
		"Eval ID|" + limit(a.EvalID, length),
		"Name|" + a.Name,
		"Node ID|" + limit(a.NodeID, length),
		"Node Name|" + a.NodeName,
		"Job ID|" + a.JobID,
		"Job Version|" + strconv.FormatUint(version, 10),
		"Client Status|" + a.ClientStatus,
		"Client Description|" + a.ClientDescription,
		"Desired Status|" + a.DesiredStatus,
		"Desired Description|" + a.DesiredDescription,
		"Created|" + formatUnixNano(a.CreateTime),
		"Modified|" + formatUnixNano(a.ModifyTime),
	}
	if a.DeploymentID != "" {
		rows = append(rows, "Deployment ID|"+limit(a.DeploymentID, length))
		if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil {
			rows = append(rows, fmt.Sprintf("Deployment Health|%s", map[bool]string{true: "healthy", false: "unhealthy"}[*ds.Healthy]))
		}
	}
	if a.PreviousAllocation != "" {
		rows = append(rows, "Replaces Alloc ID|"+limit(a.PreviousAllocation, length))
	}
	if a.NextAllocation != "" {
		rows = append(rows, "Replaced By Alloc ID|"+limit(a.NextAllocation, length))
	}
	if a.FollowupEvalID != "" {
		rows = append(rows, "Reschedule Eval ID|"+limit(a.FollowupEvalID, length))
	}
	if a.PreemptedByAllocation != "" {
		rows = append(rows, "Preempted By Alloc ID|"+limit(a.PreemptedByAllocation, length))
	}
	return rows
}

// formatTaskState renders one task: its state, resources and events.
func formatTaskState(a *api.Allocation, task string, short, verbose bool) string {
	st := a.TaskStates[task]
	var b strings.Builder
	fmt.Fprintf(&b, "Task %q is %q", task, st.State)
	if short {
		return b.String()
	}
	if a.AllocatedResources != nil {
		if tr := a.AllocatedResources.Tasks[task]; tr != nil {
			b.WriteString("\nTask Resources:\n")
			b.WriteString(formatList([]string{"CPU|Memory|Disk",
				fmt.Sprintf("%d MHz|%s|%s", tr.Cpu.CpuShares, formatMB(tr.Memory.MemoryMB), formatMB(a.AllocatedResources.Shared.DiskMB))}))
		}
	}
	b.WriteString("\n\nTask Events:\n")
	b.WriteString(formatKV([]string{
		"Started At|" + formatTimeOrNA(st.StartedAt),
		"Finished At|" + formatTimeOrNA(st.FinishedAt),
		fmt.Sprintf("Total Restarts|%d", st.Restarts),
		"Last Restart|" + formatTimeOrNA(st.LastRestart),
	}))
	b.WriteString("\n\nRecent Events:\n")
	b.WriteString(formatTaskEvents(st.Events, verbose))
	return b.String()
}

func formatTimeOrNA(t time.Time) string {
	if t.IsZero() {
		return "N/A"
	}
	return formatTime(t)
}

// formatTaskEvents lists task events newest first; without verbose only
// the ten most recent.
func formatTaskEvents(events []*api.TaskEvent, verbose bool) string {
	sorted := append([]*api.TaskEvent(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time > sorted[j].Time })
	if !verbose && len(sorted) > 10 {
		sorted = sorted[:10]
	}
	rows := []string{"Time|Type|Description"}
	for _, e := range sorted {
		desc := e.DisplayMessage
		if desc == "" {
			desc = e.Message
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s", formatUnixNano(e.Time), e.Type, strings.ReplaceAll(desc, "|", "/")))
	}
	return formatList(rows)
}

// formatPlacementMetrics explains how the scheduler chose the node: the
// funnel of nodes, any filters and exhaustion on the way, and the scores
// of the best candidates.
func formatPlacementMetrics(m *api.AllocationMetric, length int) string {
	lines := []string{fmt.Sprintf("* Nodes evaluated: %d, filtered: %d, exhausted: %d, in pool %q: %d",
		m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted, m.NodePool, m.NodesInPool)}
	for _, l := range explainMetric(m) {
		// The verdict speaks of failures; this placement succeeded.
		if !strings.HasPrefix(l, "Why: ") {
			lines = append(lines, l)
		}
	}
	if m.AllocationTime > 0 {
		lines = append(lines, fmt.Sprintf("* Placement took %s", m.AllocationTime))
	}
	out := strings.Join(lines, "\n")
	if len(m.ScoreMetaData) == 0 {
		return out
	}
	scorers := map[string]bool{}
	for _, s := range m.ScoreMetaData {
		for k := range s.Scores {
			scorers[k] = true
		}
	}
	names := sortedKeys(scorers)
	rows := []string{"Node|" + strings.Join(names, "|") + "|final score"}
	for _, s := range m.ScoreMetaData {
		cols := []string{limit(s.NodeID, length)}
		for _, n := range names {
			cols = append(cols, strconv.FormatFloat(s.Scores[n], 'g', 3, 64))
		}
		cols = append(cols, strconv.FormatFloat(s.NormScore, 'g', 3, 64))
		rows = append(rows, strings.Join(cols, "|"))
	}
	return out + "\n\n" + formatList(rows)
}
