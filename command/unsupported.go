package command

import (
	"fmt"
	"strings"
)

// unsupportedCommands are Nomad's commands for features this server does
// not have, keyed by command, valued by the feature. They are registered
// so that they answer with what is missing instead of "unknown command".
var unsupportedCommands = map[string]string{
	"license":                 "Nomad Enterprise",
	"license get":             "Nomad Enterprise",
	"quota":                   "Nomad Enterprise",
	"quota apply":             "Nomad Enterprise",
	"quota delete":            "Nomad Enterprise",
	"quota init":              "Nomad Enterprise",
	"quota inspect":           "Nomad Enterprise",
	"quota list":              "Nomad Enterprise",
	"quota status":            "Nomad Enterprise",
	"sentinel":                "Nomad Enterprise",
	"sentinel apply":          "Nomad Enterprise",
	"sentinel delete":         "Nomad Enterprise",
	"sentinel list":           "Nomad Enterprise",
	"sentinel read":           "Nomad Enterprise",
	"recommendation":          "Nomad Enterprise",
	"recommendation apply":    "Nomad Enterprise",
	"recommendation dismiss":  "Nomad Enterprise",
	"recommendation info":     "Nomad Enterprise",
	"recommendation list":     "Nomad Enterprise",
	"operator utilization":    "Nomad Enterprise",
	"alloc pause":             "Nomad Enterprise",
	"deployment unblock":      "Nomad Enterprise (multiregion deployments)",
	"volume init":             "volume specification templates",
	"volume deregister":       "CSI",
	"volume detach":           "CSI",
	"volume snapshot":         "CSI",
	"volume snapshot create":  "CSI",
	"volume snapshot delete":  "CSI",
	"volume snapshot list":    "CSI",
	"volume claim":            "sticky host volume claims",
	"volume claim list":       "sticky host volume claims",
	"volume claim delete":     "sticky host volume claims",
	"plugin":                  "CSI",
	"plugin status":           "CSI",
	"setup":                   "Consul and Vault",
	"setup consul":            "Consul",
	"setup vault":             "Vault",
	"operator snapshot agent": "Nomad Enterprise",
}

// UnsupportedCommand stands for a Nomad command of a feature this server
// does not have: it says so and exits with code 1.
type UnsupportedCommand struct {
	Meta
	name    string
	feature string
}

// Help implements cli.Command.
func (c *UnsupportedCommand) Help() string {
	return fmt.Sprintf("Usage: nomad %s\n\n  %s", c.name, c.message())
}

// Synopsis implements cli.Command.
func (c *UnsupportedCommand) Synopsis() string {
	return "Not supported by this server (" + c.feature + ")"
}

// Run implements cli.Command.
func (c *UnsupportedCommand) Run([]string) int {
	c.Ui.Error(c.message())
	return 1
}

func (c *UnsupportedCommand) message() string {
	return fmt.Sprintf("%s: not supported by this server (%s feature)", c.name, strings.TrimSpace(c.feature))
}
