package command

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/worker"
)

// OperatorSchedulerWorkersCommand lists and controls the scheduler workers
// of one server.
type OperatorSchedulerWorkersCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorSchedulerWorkersCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator scheduler workers [options]

  List the scheduler workers of one server - the server whose agent the
  command talks to (choose it with -address) - and optionally pause,
  resume or resize them. Each worker dequeues one evaluation at a time,
  runs the scheduler on a snapshot of the state and submits the plan.

  For each worker the list shows:
    Status           Starting, Started, Pausing, Paused, Resuming,
                     Stopping or Stopped.
    Workload Status  what a running worker is doing: WaitingToDequeue,
                     WaitingForRaft, Scheduling, Submitting, Backoff.

  The leader pauses most of its own workers to keep CPU for the broker
  and the plan applier; they show as Paused while it leads, and -resume
  does not take them from it.

  Changes apply to this server only and last until it restarts (the agent
  configuration's num_schedulers and enabled_schedulers win then). To stop
  scheduling in the whole cluster, pause the evaluation broker instead:
  'nomad operator scheduler set-config -pause-eval-broker'.

  Examples:

      $ nomad operator scheduler workers
      $ nomad operator scheduler workers -pause
      $ nomad operator scheduler workers -resume
      $ nomad operator scheduler workers -num 2 -schedulers service,batch,_core

` + generalOptionsUsage() + `

Scheduler Workers Options:

  -pause
    Pause every worker of the server. A worker busy with an evaluation
    finishes it first, then takes no new one.

  -resume
    Resume the workers paused with -pause.

  -num=<n>
    Replace the worker pool with <n> workers (0 stops scheduling on this
    server; at most the server's CPU count). Workers busy with an
    evaluation finish it first.

  -schedulers=<list>
    Comma-separated scheduler types the workers take evaluations of, from
    service, batch, system, sysbatch and _core; _core is required.

  -verbose
    Show full worker IDs and each worker's scheduler types.

  -json
    Output the workers and the pool configuration in JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorSchedulerWorkersCommand) Synopsis() string {
	return "List, pause, resume or resize a server's scheduler workers"
}

// workersOutput is the -json output: the pool configuration and the
// workers.
type workersOutput struct {
	Config  *api.AgentSchedulerWorkerConfigResponse
	Workers *api.AgentSchedulerWorkersInfo
}

// Run implements cli.Command.
func (c *OperatorSchedulerWorkersCommand) Run(args []string) int {
	const name = "operator scheduler workers"
	var pause, resume, verbose, asJSON bool
	var num int
	var schedulers string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&pause, "pause", false, "")
	fs.BoolVar(&resume, "resume", false, "")
	fs.IntVar(&num, "num", -1, "")
	fs.StringVar(&schedulers, "schedulers", "", "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	if pause && resume {
		return c.usageError(name, "Error: -pause and -resume cannot be used together")
	}
	numSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "num" {
			numSet = true
		}
	})
	if numSet && num < 0 {
		return c.usageError(name, fmt.Sprintf("Error: invalid -num %d: must be 0 or more", num))
	}
	enabled, err := parseSchedulerList(schedulers)
	if err != nil {
		return c.usageError(name, "Error: "+err.Error())
	}

	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	config, err := client.Agent().SchedulerWorkerConfig(c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying scheduler workers: %s", c.describe(err)))
		return 1
	}

	if pause || resume || numSet || enabled != nil {
		req := api.AgentSchedulerWorkerConfigRequest{NumSchedulers: config.NumSchedulers, EnabledSchedulers: config.EnabledSchedulers}
		var did []string
		if numSet {
			req.NumSchedulers = num
			did = append(did, fmt.Sprintf("pool resized from %d to %d workers", config.NumSchedulers, num))
		}
		if enabled != nil {
			req.EnabledSchedulers = enabled
			did = append(did, "schedulers set to "+strings.Join(enabled, ", "))
		}
		if pause || resume {
			req.Paused = new(pause)
			if pause {
				did = append(did, "workers pausing (each finishes the evaluation in hand)")
			} else {
				did = append(did, "workers resuming")
			}
		}
		updated, err := client.Agent().SetSchedulerWorkerConfig(req, c.write())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error updating scheduler workers: %s", c.describe(err)))
			return 1
		}
		if (pause || resume) && updated.Paused == nil {
			c.Ui.Error(fmt.Sprintf("Error: the server %q does not support pausing workers; nothing was paused or resumed", updated.ServerID))
			return 1
		}
		config = updated
		if !asJSON {
			c.Ui.Output(fmt.Sprintf("Server %q: %s", config.ServerID, strings.Join(did, "; ")))
			c.Ui.Output("")
		}
	}

	workers, err := client.Agent().Schedulers(c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying scheduler workers: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		return printData(&c.Meta, workersOutput{Config: config, Workers: workers}, true, "")
	}
	c.Ui.Output(formatWorkerConfig(config))
	c.Ui.Output("")
	if len(workers.Schedulers) == 0 {
		c.Ui.Output("No scheduler workers: this server does not schedule")
		return 0
	}
	c.Ui.Output(formatWorkers(workers.Schedulers, verbose))
	return 0
}

// parseSchedulerList checks a -schedulers list; nil means not given.
func parseSchedulerList(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		if !contains(worker.AllSchedulers(), name) {
			return nil, fmt.Errorf("invalid -schedulers: unknown scheduler %q (known: %s)", name, strings.Join(worker.AllSchedulers(), ", "))
		}
		seen[name] = true
		out = append(out, name)
	}
	if !seen["_core"] {
		return nil, fmt.Errorf("invalid -schedulers: must include _core, the garbage collection scheduler")
	}
	return out, nil
}

// formatWorkerConfig renders the pool configuration.
func formatWorkerConfig(c *api.AgentSchedulerWorkerConfigResponse) string {
	rows := []string{
		"Server|" + c.ServerID,
		fmt.Sprintf("Workers|%d", c.NumSchedulers),
		"Enabled Schedulers|" + strings.Join(c.EnabledSchedulers, ", "),
	}
	if c.Paused != nil {
		rows = append(rows, fmt.Sprintf("Paused By Operator|%t", *c.Paused))
	}
	return formatKV(rows)
}

// formatWorkers renders the workers, grouped by status.
func formatWorkers(ws []api.AgentSchedulerWorkerInfo, verbose bool) string {
	sorted := append([]api.AgentSchedulerWorkerInfo(nil), ws...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Status != sorted[j].Status {
			return sorted[i].Status < sorted[j].Status
		}
		return sorted[i].ID < sorted[j].ID
	})
	header := "ID|Status|Workload Status|Started"
	if verbose {
		header += "|Schedulers"
	}
	rows := []string{header}
	length := idLength(verbose)
	for _, w := range sorted {
		started := w.Started
		if t, err := time.Parse(time.RFC3339Nano, w.Started); err == nil {
			started = formatTime(t)
		}
		row := fmt.Sprintf("%s|%s|%s|%s", limit(w.ID, length), w.Status, w.WorkloadStatus, started)
		if verbose {
			row += "|" + strings.Join(w.EnabledSchedulers, ",")
		}
		rows = append(rows, row)
	}
	return formatList(rows)
}
