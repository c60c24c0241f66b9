package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// defaultNodeLimitForFeasibilityChecks is what the servers use when the
// configuration says 0.
const defaultNodeLimitForFeasibilityChecks = 100

// OperatorSchedulerGetConfigCommand prints the cluster scheduler
// configuration.
type OperatorSchedulerGetConfigCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorSchedulerGetConfigCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator scheduler get-config [options]

  Show the cluster-wide scheduler configuration: the placement algorithm,
  preemption per scheduler type, memory oversubscription, whether job
  registration is refused and whether the evaluation broker is paused.
  It is stored in Raft and the same on every server.

` + generalOptionsUsage() + `

Scheduler Get Config Options:
` + formatOutputFlagsUsage)
}

// Synopsis implements cli.Command.
func (c *OperatorSchedulerGetConfigCommand) Synopsis() string {
	return "Display the current scheduler configuration"
}

// Run implements cli.Command.
func (c *OperatorSchedulerGetConfigCommand) Run(args []string) int {
	var asJSON bool
	var tmpl string
	fs := c.flagSet("operator scheduler get-config", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	resp, _, err := client.Operator().SchedulerGetConfiguration(c.query())
	if c.callFailed(err, "querying scheduler configuration") {
		return 1
	}
	if resp.SchedulerConfig == nil {
		c.Ui.Error("Error querying scheduler configuration: the answer has no configuration")
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, resp.SchedulerConfig, asJSON, tmpl)
	}
	c.Ui.Output(formatSchedulerConfig(resp.SchedulerConfig))
	return 0
}

// formatSchedulerConfig renders the configuration as a KV block.
func formatSchedulerConfig(s *api.SchedulerConfiguration) string {
	limit := fmt.Sprint(s.NodeLimitForFeasibilityChecks)
	if s.NodeLimitForFeasibilityChecks == 0 {
		limit = fmt.Sprintf("%d (default)", defaultNodeLimitForFeasibilityChecks)
	}
	lines := []string{
		"Scheduler Algorithm|" + s.SchedulerAlgorithm,
		fmt.Sprintf("Memory Oversubscription|%t", s.MemoryOversubscriptionEnabled),
		fmt.Sprintf("Reject Job Registration|%t", s.RejectJobRegistration),
		fmt.Sprintf("Pause Eval Broker|%t", s.PauseEvalBroker),
		fmt.Sprintf("Preemption System Scheduler|%t", s.PreemptionConfig.SystemSchedulerEnabled),
		fmt.Sprintf("Preemption Service Scheduler|%t", s.PreemptionConfig.ServiceSchedulerEnabled),
		fmt.Sprintf("Preemption Batch Scheduler|%t", s.PreemptionConfig.BatchSchedulerEnabled),
		fmt.Sprintf("Preemption SysBatch Scheduler|%t", s.PreemptionConfig.SysBatchSchedulerEnabled),
		"Node Limit For Feasibility Checks|" + limit,
	}
	// Only our servers report the limit; Nomad's output stays Nomad's.
	if s.EvalBacklogLimit != nil {
		lines = append(lines, "Eval Backlog Limit|"+formatEvalBacklogLimit(*s.EvalBacklogLimit))
	}
	return formatKV(append(lines, fmt.Sprintf("Modify Index|%d", s.ModifyIndex)))
}

// formatEvalBacklogLimit shows the limit, "none" for 0.
func formatEvalBacklogLimit(limit uint) string {
	if limit == 0 {
		return "none"
	}
	return fmt.Sprint(limit)
}

// OperatorSchedulerSetConfigCommand changes the cluster scheduler
// configuration.
type OperatorSchedulerSetConfigCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorSchedulerSetConfigCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator scheduler set-config [options]

  Change the cluster-wide scheduler configuration. Only the settings named
  by flags change; the rest keep their current values. Boolean flags take
  true or false ("-pause-eval-broker" alone means true).

` + generalOptionsUsage() + `

Scheduler Set Config Options:

  -check-index=<index>
    Write only if the configuration's modify index is still <index>
    (check-and-set); 'get-config' prints it. Without it the write is
    unconditional.

  -scheduler-algorithm=<binpack|spread>
    How nodes are ranked: binpack fills nodes up, spread spreads
    allocations across nodes.

  -memory-oversubscription=<bool>
    Let tasks set memory_max above their memory reservation.

  -reject-job-registration=<bool>
    Refuse job registrations, dispatches and scaling from anyone but
    management tokens.

  -pause-eval-broker=<bool>
    Pause the evaluation broker on the leader: new evaluations wait and
    no scheduler worker gets work until it is resumed.

  -preempt-batch-scheduler=<bool>
  -preempt-service-scheduler=<bool>
  -preempt-sysbatch-scheduler=<bool>
  -preempt-system-scheduler=<bool>
    Allow that scheduler to preempt lower-priority allocations.

  -node-limit-for-feasibility-checks=<n>
    How many feasible nodes are scored for groups with affinities or
    spreads; 0 means the default (100).

  -eval-backlog-limit=<n>
    Refuse job registrations, dispatches and scalings with HTTP 429 while
    the leader holds n or more ready and blocked evaluations; 0 means no
    limit.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorSchedulerSetConfigCommand) Synopsis() string {
	return "Modify the current scheduler configuration"
}

// Run implements cli.Command.
func (c *OperatorSchedulerSetConfigCommand) Run(args []string) int {
	const name = "operator scheduler set-config"
	var (
		checkIndex, nodeLimit, backlogLimit           optionalUint
		algorithm                                     string
		memOversub, rejectReg, pauseBroker            optionalBool
		preemptBatch, preemptService, preemptSysbatch optionalBool
		preemptSystem                                 optionalBool
	)
	fs := c.flagSet(name, flagsClient)
	fs.Var(&checkIndex, "check-index", "")
	fs.StringVar(&algorithm, "scheduler-algorithm", "", "")
	fs.Var(&memOversub, "memory-oversubscription", "")
	fs.Var(&rejectReg, "reject-job-registration", "")
	fs.Var(&pauseBroker, "pause-eval-broker", "")
	fs.Var(&preemptBatch, "preempt-batch-scheduler", "")
	fs.Var(&preemptService, "preempt-service-scheduler", "")
	fs.Var(&preemptSysbatch, "preempt-sysbatch-scheduler", "")
	fs.Var(&preemptSystem, "preempt-system-scheduler", "")
	fs.Var(&nodeLimit, "node-limit-for-feasibility-checks", "")
	fs.Var(&backlogLimit, "eval-backlog-limit", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	switch algorithm {
	case "", api.SchedulerAlgorithmBinpack, api.SchedulerAlgorithmSpread:
	default:
		return c.usageError(name, fmt.Sprintf("Invalid -scheduler-algorithm %q: must be %q or %q",
			algorithm, api.SchedulerAlgorithmBinpack, api.SchedulerAlgorithmSpread))
	}
	changed := algorithm != "" || nodeLimit.set || backlogLimit.set
	for _, b := range []*optionalBool{&memOversub, &rejectReg, &pauseBroker, &preemptBatch, &preemptService, &preemptSysbatch, &preemptSystem} {
		changed = changed || b.set
	}
	if !changed {
		return c.usageError(name, "No setting to change: give at least one flag such as -scheduler-algorithm or -pause-eval-broker")
	}

	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	current, _, err := client.Operator().SchedulerGetConfiguration(c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying scheduler configuration: %s", c.describe(err)))
		return 1
	}
	if current.SchedulerConfig == nil {
		c.Ui.Error("Error querying scheduler configuration: the answer has no configuration")
		return 1
	}
	conf := *current.SchedulerConfig
	if algorithm != "" {
		conf.SchedulerAlgorithm = algorithm
	}
	memOversub.apply(&conf.MemoryOversubscriptionEnabled)
	rejectReg.apply(&conf.RejectJobRegistration)
	pauseBroker.apply(&conf.PauseEvalBroker)
	preemptBatch.apply(&conf.PreemptionConfig.BatchSchedulerEnabled)
	preemptService.apply(&conf.PreemptionConfig.ServiceSchedulerEnabled)
	preemptSysbatch.apply(&conf.PreemptionConfig.SysBatchSchedulerEnabled)
	preemptSystem.apply(&conf.PreemptionConfig.SystemSchedulerEnabled)
	if nodeLimit.set {
		conf.NodeLimitForFeasibilityChecks = uint(nodeLimit.value)
	}
	if backlogLimit.set {
		limit := uint(backlogLimit.value)
		conf.EvalBacklogLimit = &limit
	}

	if checkIndex.set {
		conf.ModifyIndex = checkIndex.value
		resp, _, err := client.Operator().SchedulerCASConfiguration(&conf, c.write())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error setting scheduler configuration: %s", c.describe(err)))
			return 1
		}
		if !resp.Updated {
			c.Ui.Error(fmt.Sprintf("Scheduler configuration not updated: its modify index is no longer %d "+
				"(someone changed it); run get-config and try again", checkIndex.value))
			return 1
		}
	} else if _, _, err := client.Operator().SchedulerSetConfiguration(&conf, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error setting scheduler configuration: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output("Scheduler configuration updated!")
	return 0
}
