package command

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

const serviceGroupHelp = `
Usage: nomad service <subcommand> [options] [args]

  List, inspect and delete the registrations of native (provider
  "nomad") services: the addresses running allocations publish under a
  service name.

      $ nomad service list
      $ nomad service info web
      $ nomad service delete web _nomad-task-...
`

// ServiceListCommand lists the service names of a namespace.
type ServiceListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ServiceListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad service list [options]

  List the services registered in the namespace ("-namespace=*": in every
  namespace the token may read), with the tags their instances carry.
  Needs read-job in the namespace.

` + generalOptionsUsage() + `

List Options:

  -json
    Output the services in their JSON format.

  -t
    Format the output with a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *ServiceListCommand) Synopsis() string { return "List service registrations" }

// Run implements cli.Command.
func (c *ServiceListCommand) Run(args []string) int {
	const name = "service list"
	var asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	list, _, err := client.Services().List(c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error listing service registrations: %s", c.describe(err)))
		return 1
	}
	if asJSON || tmpl != "" {
		if list == nil {
			list = []*api.ServiceRegistrationListStub{}
		}
		return printData(&c.Meta, list, asJSON, tmpl)
	}
	if len(list) == 0 {
		c.Ui.Output("No service registrations found")
		return 0
	}
	all := c.allNamespaces()
	rows := []string{"Service Name|Tags"}
	if all {
		rows = []string{"Service Name|Namespace|Tags"}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Namespace < list[j].Namespace })
	for _, l := range list {
		services := l.Services
		sort.Slice(services, func(i, j int) bool { return services[i].ServiceName < services[j].ServiceName })
		for _, s := range services {
			if all {
				rows = append(rows, fmt.Sprintf("%s|%s|%s", s.ServiceName, l.Namespace, formatTags(s.Tags)))
			} else {
				rows = append(rows, fmt.Sprintf("%s|%s", s.ServiceName, formatTags(s.Tags)))
			}
		}
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// formatTags prints tags as Nomad does: "[a,b]".
func formatTags(tags []string) string {
	sorted := append([]string(nil), tags...)
	sort.Strings(sorted)
	return "[" + strings.Join(sorted, ",") + "]"
}

// ServiceInfoCommand shows the registrations of one service.
type ServiceInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ServiceInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad service info [options] <service name>

  Show the registrations of a service: the address, tags, job, node and
  allocation of each instance. Needs read-job in the namespace.

` + generalOptionsUsage() + `

Info Options:

  -json
    Output the registrations in their JSON format.

  -t
    Format the output with a Go template.

  -verbose
    Show every field of each registration, with full IDs.

  -per-page <n>
    How many registrations to show.

  -page-token <token>
    Where to start the page, from a previous call.

  -filter <expression>
    Show only the registrations the expression selects.
`)
}

// Synopsis implements cli.Command.
func (c *ServiceInfoCommand) Synopsis() string {
	return "Display an individual service's registrations"
}

// Run implements cli.Command.
func (c *ServiceInfoCommand) Run(args []string) int {
	const name = "service info"
	var asJSON, verbose bool
	var tmpl, pageToken, filter string
	var perPage int
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.IntVar(&perPage, "per-page", 0, "")
	fs.StringVar(&pageToken, "page-token", "", "")
	fs.StringVar(&filter, "filter", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <service name>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	q := c.query()
	q.PerPage, q.NextToken, q.Filter = int32(perPage), pageToken, filter
	regs, _, err := client.Services().Get(fs.Arg(0), q)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error listing service registrations: %s", c.describe(err)))
		return 1
	}
	if asJSON || tmpl != "" {
		if regs == nil {
			regs = []*api.ServiceRegistration{}
		}
		return printData(&c.Meta, regs, asJSON, tmpl)
	}
	if len(regs) == 0 {
		c.Ui.Output("No service registrations found")
		return 0
	}
	if verbose {
		blocks := make([]string, 0, len(regs))
		for _, r := range regs {
			blocks = append(blocks, formatKV([]string{
				"ID|" + r.ID,
				"Service Name|" + r.ServiceName,
				"Namespace|" + r.Namespace,
				"Job ID|" + r.JobID,
				"Alloc ID|" + r.AllocID,
				"Node ID|" + r.NodeID,
				"Datacenter|" + r.Datacenter,
				"Address|" + serviceAddr(r),
				"Tags|" + formatTags(r.Tags),
			}))
		}
		c.Ui.Output(strings.Join(blocks, "\n\n"))
		return 0
	}
	n := idLength(false)
	rows := []string{"Job ID|Address|Tags|Node ID|Alloc ID"}
	for _, r := range regs {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s",
			r.JobID, serviceAddr(r), formatTags(r.Tags), limit(r.NodeID, n), limit(r.AllocID, n)))
	}
	c.Ui.Output(formatList(rows))
	return 0
}

func serviceAddr(r *api.ServiceRegistration) string {
	return net.JoinHostPort(r.Address, strconv.Itoa(r.Port))
}

// ServiceDeleteCommand removes one registration.
type ServiceDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ServiceDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad service delete [options] <service name> <service id>

  Delete one registration of a service, for instance one a lost client
  left behind. Needs submit-job (or delete-service-registration) in the
  namespace.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *ServiceDeleteCommand) Synopsis() string { return "Deregister a service registration" }

// Run implements cli.Command.
func (c *ServiceDeleteCommand) Run(args []string) int {
	const name = "service delete"
	fs := c.flagSet(name, flagsClient)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 2 {
		return c.usageError(name, "This command takes two arguments: <service name> and <service id>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if _, err := client.Services().Delete(fs.Arg(0), fs.Arg(1), c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error deleting service registration: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output("Successfully deleted service registration")
	return 0
}
