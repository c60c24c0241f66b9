package command

import (
	"fmt"
	"net/url"
	"os/exec"
	"runtime"
	"strings"

	"github.com/opennomad/nomad/api"
)

// UiCommand opens the agent's web UI, on an object's page when given one.
type UiCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *UiCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad ui [options] [<identifier>]

  Open the web UI of the agent in the default browser: its home page, or
  with an identifier the page of that job, allocation or node (a job ID,
  or an ID prefix of an allocation or node).

` + generalOptionsUsage() + `

UI Options:

  -authenticate
    Hand the command's token to the UI through a one-time token. Not
    supported by this server: sign in on the UI's token page instead.

  -show-url
    Print the URL instead of opening it.
`)
}

// Synopsis implements cli.Command.
func (c *UiCommand) Synopsis() string { return "Open the Nomad Web UI" }

// Run implements cli.Command.
func (c *UiCommand) Run(args []string) int {
	const name = "ui"
	var authenticate, showURL bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&authenticate, "authenticate", false, "")
	fs.BoolVar(&showURL, "show-url", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() > 1 {
		return c.usageError(name, "This command takes at most one argument: <identifier>")
	}
	if authenticate {
		c.Ui.Error("The -authenticate option is not supported by this server (no one-time tokens); sign in on the UI's token page")
		return 1
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	page := "/ui/"
	if fs.NArg() == 1 {
		var err error
		if page, err = c.objectPage(client, fs.Arg(0)); err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
	}
	target := strings.TrimSuffix(c.clientConfig().Address, "/") + page
	if showURL {
		c.Ui.Output(target)
		return 0
	}
	c.Ui.Output(fmt.Sprintf("Opening URL %q", target))
	if err := openBrowser(target); err != nil {
		c.Ui.Error(fmt.Sprintf("Error opening URL: %s", err))
		return 1
	}
	return 0
}

// objectPage finds what id names, a job first, then an allocation, then
// a node, and returns its page.
func (c *UiCommand) objectPage(client *api.Client, id string) (string, error) {
	q := c.query()
	q.Prefix = id
	jobs, _, err := client.Jobs().List(q)
	if err != nil {
		return "", fmt.Errorf("Error looking up %q: %s", id, c.describe(err))
	}
	for _, j := range jobs {
		if j.ID == id || len(jobs) == 1 {
			return "/ui/jobs/" + url.PathEscape(j.ID) + "@" + url.PathEscape(j.Namespace), nil
		}
	}
	if sent, err := uuidPrefix(id); err == nil {
		// The servers match whole bytes of an ID: an odd prefix is sent
		// one character short and checked here.
		q := c.query()
		q.Prefix = sent
		var allocIDs, nodeIDs []string
		if allocs, _, err := client.Allocations().List(q); err == nil {
			for _, a := range allocs {
				if strings.HasPrefix(a.ID, id) {
					allocIDs = append(allocIDs, a.ID)
				}
			}
		}
		if len(allocIDs) == 1 {
			return "/ui/allocations/" + allocIDs[0], nil
		}
		if nodes, _, err := client.Nodes().List(q); err == nil {
			for _, n := range nodes {
				if strings.HasPrefix(n.ID, id) {
					nodeIDs = append(nodeIDs, n.ID)
				}
			}
		}
		if len(nodeIDs) == 1 {
			return "/ui/clients/" + nodeIDs[0], nil
		}
	}
	return "", fmt.Errorf("No job, allocation or node found for %q", id)
}

// openBrowser hands the URL to the desktop's opener.
func openBrowser(target string) error {
	opener := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		opener = "open"
	case "windows":
		return exec.Command("rundll32", "url.dll,FileProtocolHandler", target).Start()
	}
	return exec.Command(opener, target).Start()
}
