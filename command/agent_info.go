package command

import (
	"fmt"
	"sort"
	"strings"
)

// AgentInfoCommand prints the statistics of the agent it talks to.
type AgentInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AgentInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad agent-info [options]

  Print the status and statistics of the agent the command talks to, by
  section (agent, nomad, raft, runtime): useful when troubleshooting.

  When ACLs are enabled, this command needs the 'agent:read' capability.

` + generalOptionsUsage() + `

Agent Info Options:

  -json
    Print the agent's answer as JSON.

  -t <template>
    Format the agent's answer with a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *AgentInfoCommand) Synopsis() string {
	return "Display status information about the local agent"
}

// Run implements cli.Command.
func (c *AgentInfoCommand) Run(args []string) int {
	var asJSON bool
	var tmpl string
	fs := c.flagSet("agent-info", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	self, err := client.Agent().Self()
	if c.callFailed(err, "querying agent info") {
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, self, asJSON, tmpl)
	}
	sections := make([]string, 0, len(self.Stats))
	for s := range self.Stats {
		sections = append(sections, s)
	}
	sort.Strings(sections)
	var b strings.Builder
	for _, s := range sections {
		b.WriteString(s + "\n")
		keys := make([]string, 0, len(self.Stats[s]))
		for k := range self.Stats[s] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s = %s\n", k, self.Stats[s][k])
		}
	}
	c.Ui.Output(strings.TrimSuffix(b.String(), "\n"))
	return 0
}
