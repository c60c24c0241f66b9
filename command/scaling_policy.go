package command

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// ScalingPolicyListCommand lists the scaling policies.
type ScalingPolicyListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ScalingPolicyListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad scaling policy list [options]

  List the scaling policies of the jobs (the group 'scaling' blocks and
  the tasks' 'scaling "cpu"' and 'scaling "mem"' blocks).

  When ACLs are enabled, this command needs the 'list-scaling-policies'
  or 'read-job' capability in the namespace.

` + generalOptionsUsage() + `

Policy List Options:

  -job <job>
    Only the policies of this job.

  -type <type>
    Only the policies of this type (horizontal, vertical_cpu, vertical_mem).

  -json
    Print the policies as JSON.

  -t <template>
    Format the policies with a Go template.

  -verbose
    Accepted for compatibility; IDs are always shown in full.
`)
}

// Synopsis implements cli.Command.
func (c *ScalingPolicyListCommand) Synopsis() string { return "Display all Nomad scaling policies" }

// Run implements cli.Command.
func (c *ScalingPolicyListCommand) Run(args []string) int {
	const name = "scaling policy list"
	var job, typ, tmpl string
	var asJSON, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&job, "job", "", "")
	fs.StringVar(&typ, "type", "", "")
	fs.StringVar(&tmpl, "t", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	q := c.query()
	q.Params = map[string]string{}
	if job != "" {
		q.Params["job"] = job
	}
	if typ != "" {
		q.Params["type"] = typ
	}
	policies, _, err := client.Scaling().ListPolicies(q)
	if c.callFailed(err, "listing scaling policies") {
		return 1
	}
	if asJSON || tmpl != "" {
		if policies == nil {
			policies = []*api.ScalingPolicyListStub{}
		}
		return printData(&c.Meta, policies, asJSON, tmpl)
	}
	if len(policies) == 0 {
		c.Ui.Output("No policies found")
		return 0
	}
	sort.Slice(policies, func(i, j int) bool { return policies[i].ID < policies[j].ID })
	rows := []string{"ID|Enabled|Type|Target"}
	for _, p := range policies {
		rows = append(rows, strings.Join([]string{p.ID, strconv.FormatBool(p.Enabled), p.Type, formatScalingTarget(p.Target)}, "|"))
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// formatScalingTarget renders a policy's target as Key:Value pairs, from
// the namespace down to the task, then any other key.
func formatScalingTarget(target map[string]string) string {
	order := []string{"Namespace", "Job", "Group", "Task"}
	var parts []string
	for _, k := range order {
		if v, ok := target[k]; ok {
			parts = append(parts, k+":"+v)
		}
	}
	var rest []string
	for k := range target {
		if !strings.Contains(strings.Join(order, ","), k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, k+":"+target[k])
	}
	return strings.Join(parts, ",")
}

// ScalingPolicyInfoCommand shows one scaling policy.
type ScalingPolicyInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ScalingPolicyInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad scaling policy info [options] <policy>

  Show a scaling policy, given by its ID or a unique prefix of it.

  When ACLs are enabled, this command needs the 'read-scaling-policy' or
  'read-job' capability in the policy's namespace.

` + generalOptionsUsage() + `

Policy Info Options:

  -json
    Print the policy as JSON.

  -t <template>
    Format the policy with a Go template.

  -verbose
    Accepted for compatibility; IDs are always shown in full.
`)
}

// Synopsis implements cli.Command.
func (c *ScalingPolicyInfoCommand) Synopsis() string {
	return "Display an individual Nomad scaling policy"
}

// Run implements cli.Command.
func (c *ScalingPolicyInfoCommand) Run(args []string) int {
	const name = "scaling policy info"
	var tmpl string
	var asJSON, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&tmpl, "t", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	client, ok := c.clientForArgs(fs, args, "<policy>")
	if !ok {
		return 1
	}
	id, err := c.resolvePolicyID(client, strings.TrimSpace(fs.Arg(0)))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	policy, _, err := client.Scaling().GetPolicy(id, c.query())
	if c.callFailed(err, "retrieving scaling policy") {
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, policy, asJSON, tmpl)
	}
	rows := []string{
		"ID|" + policy.ID,
		"Enabled|" + strconv.FormatBool(policy.Enabled != nil && *policy.Enabled),
		"Target|" + formatScalingTarget(policy.Target),
		"Min|" + int64OrNone(policy.Min),
		"Max|" + int64OrNone(policy.Max),
	}
	c.Ui.Output(formatKV(rows))
	body := "<none>"
	if len(policy.Policy) > 0 {
		buf, err := json.MarshalIndent(policy.Policy, "", "  ")
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error formatting the policy: %s", err))
			return 1
		}
		body = string(buf)
	}
	c.Ui.Output("\nPolicy:\n" + body)
	return 0
}

// resolvePolicyID returns the ID of the policy id names, exactly or as
// the only policy whose ID starts with it.
func (c *ScalingPolicyInfoCommand) resolvePolicyID(client *api.Client, id string) (string, error) {
	policies, _, err := client.Scaling().ListPolicies(c.query())
	if err != nil {
		return "", fmt.Errorf("Error listing scaling policies: %s", c.describe(err))
	}
	var matches []string
	for _, p := range policies {
		if p.ID == id {
			return id, nil
		}
		if strings.HasPrefix(p.ID, id) {
			matches = append(matches, p.ID)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("No scaling policy with prefix or ID %q found", id)
	case 1:
		return matches[0], nil
	}
	sort.Strings(matches)
	return "", fmt.Errorf("Prefix %q matched multiple scaling policies:\n\n%s", id, strings.Join(matches, "\n"))
}

// int64OrNone renders a bound that may be absent as "<none>" when it is.
func int64OrNone(v *int64) string {
	if v == nil {
		return "<none>"
	}
	return strconv.FormatInt(*v, 10)
}
