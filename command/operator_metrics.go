package command

import (
	"strings"
)

// OperatorMetricsCommand prints the agent's metrics.
type OperatorMetricsCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorMetricsCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator metrics [options]

  Print the metrics of the agent the command talks to: its in-memory
  gauges, counters and timers as JSON, or in the Prometheus text format.

  When ACLs are enabled, this command needs no particular capability.

` + generalOptionsUsage() + `

Metrics Options:

  -format <json|prometheus>
    The format of the metrics. Prometheus needs the agent's
    telemetry.prometheus_metrics. Default = json

  -pretty
    Indent the JSON (the default output is indented already; accepted
    for compatibility).

  -json
    Print the metrics as JSON (the same as -format json).

  -t <template>
    Format the metrics with a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorMetricsCommand) Synopsis() string { return "Retrieve Nomad metrics" }

// Run implements cli.Command.
func (c *OperatorMetricsCommand) Run(args []string) int {
	const name = "operator metrics"
	var format, tmpl string
	var pretty, asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&format, "format", "json", "")
	fs.StringVar(&tmpl, "t", "", "")
	fs.BoolVar(&pretty, "pretty", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	switch {
	case format == "prometheus" && (asJSON || tmpl != ""):
		return c.usageError(name, "-format prometheus cannot be used with -json or -t")
	case format == "prometheus":
		out, err := client.MetricsPrometheus(c.query())
		if c.callFailed(err, "getting metrics") {
			return 1
		}
		c.Ui.Output(strings.TrimRight(string(out), "\n"))
		return 0
	case format != "json":
		return c.usageError(name, `-format must be "json" or "prometheus"`)
	}
	summary, err := client.Metrics(c.query())
	if c.callFailed(err, "getting metrics") {
		return 1
	}
	return printData(&c.Meta, summary, tmpl == "", tmpl)
}
