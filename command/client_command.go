package command

import (
	"flag"
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// Most commands that talk to the cluster go the same way: parse the flags,
// refuse the wrong number of arguments, get a client, make one call, then
// report its error or print its answer (as JSON with -json, as text
// otherwise). The helpers below are those steps, so that a command keeps
// only what is its own: its flags, its call, its columns and its messages.

// argCountProblem is the usage error of a command that takes exactly the
// arguments argNames names.
func argCountProblem(argNames []string) string {
	switch len(argNames) {
	case 0:
		return "This command takes no arguments"
	case 1:
		return "This command takes one argument: " + argNames[0]
	case 2:
		return "This command takes two arguments: " + argNames[0] + " and " + argNames[1]
	}
	return fmt.Sprintf("This command takes %d arguments: %s", len(argNames), strings.Join(argNames, ", "))
}

// parseArgs parses args with fs, made by flagSet with the command's name,
// and checks that exactly the arguments argNames names (such as
// "<role id>") follow the flags. It reports a problem through the Ui and
// returns false when the command must stop with exit code 1.
func (m *Meta) parseArgs(fs *flag.FlagSet, args []string, argNames ...string) bool {
	if !m.parseFlags(fs, args, fs.Name()) {
		return false
	}
	if fs.NArg() != len(argNames) {
		m.usageError(fs.Name(), argCountProblem(argNames))
		return false
	}
	return true
}

// clientForArgs is parseArgs followed by getting a client: it returns
// false when the command must stop with exit code 1.
func (m *Meta) clientForArgs(fs *flag.FlagSet, args []string, argNames ...string) (*api.Client, bool) {
	if !m.parseArgs(fs, args, argNames...) {
		return nil, false
	}
	return m.clientOrError()
}

// callFailed reports a failed call as "Error <doing>: <why>" and returns
// whether there was one.
func (m *Meta) callFailed(err error, doing string) bool {
	if err == nil {
		return false
	}
	m.Ui.Error(fmt.Sprintf("Error %s: %s", doing, m.describe(err)))
	return true
}

// reportChange ends a command that changes something: the call's error,
// or done (nothing when done is empty).
func (m *Meta) reportChange(err error, doing, done string) int {
	if m.callFailed(err, doing) {
		return 1
	}
	if done != "" {
		m.Ui.Output(done)
	}
	return 0
}

// showResult ends a command whose call answers with one object: the
// call's error, or the object as JSON with -json and as text otherwise.
func showResult[T any](m *Meta, v T, err error, doing string, asJSON bool, text func(T) string) int {
	if m.callFailed(err, doing) {
		return 1
	}
	if asJSON {
		return printData(m, v, true, "")
	}
	m.Ui.Output(text(v))
	return 0
}

// showList ends a command whose call answers with a list: the call's
// error; with -json the items as JSON ([] rather than null when there are
// none); otherwise none when there are no items and none is not empty, and
// the table the items make.
func showList[T any](m *Meta, items []T, err error, doing string, asJSON bool, none string, table func([]T) string) int {
	if m.callFailed(err, doing) {
		return 1
	}
	if asJSON {
		if items == nil {
			items = []T{}
		}
		return printData(m, items, true, "")
	}
	if len(items) == 0 && none != "" {
		m.Ui.Output(none)
		return 0
	}
	m.Ui.Output(table(items))
	return 0
}
