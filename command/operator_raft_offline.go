package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/raftutil"
)

// offlineRaftUsage is the part of the offline tools' help about what
// they read.
const offlineRaftUsage = `
  <path> is a stopped server's data directory, or its raft directory
  (holding wal/). The server must not run: the tool refuses a store a
  running server holds, and reads a private copy of it, so the server's
  files are never changed.`

// OperatorRaftInfoCommand summarises a stopped server's Raft store.
type OperatorRaftInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRaftInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator raft info <path>

  Display summary information about a stopped server's Raft store: the
  log's first and last index, the term and vote it kept, and its
  snapshots. This is a low-level debugging tool.
` + offlineRaftUsage)
}

// Synopsis implements cli.Command.
func (c *OperatorRaftInfoCommand) Synopsis() string {
	return "Display info of the raft log"
}

// Run implements cli.Command.
func (c *OperatorRaftInfoCommand) Run(args []string) int {
	s, ok := c.openOffline("operator raft info", args, nil)
	if !ok {
		return 1
	}
	defer s.Close()
	info, err := s.Info()
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the Raft store: %s", err))
		return 1
	}
	c.Ui.Output(formatKV([]string{
		"Path|" + s.Dir,
		fmt.Sprintf("Log Entries|%d", info.Entries),
		fmt.Sprintf("First Index|%d", info.FirstIndex),
		fmt.Sprintf("Last Index|%d", info.LastIndex),
		fmt.Sprintf("Current Term|%d", info.CurrentTerm),
		fmt.Sprintf("Last Vote Term|%d", info.LastVoteTerm),
		"Last Vote Candidate|" + info.LastVoteCandidate,
	}))
	c.Ui.Output("\nSnapshots")
	if len(info.Snapshots) == 0 {
		c.Ui.Output("No snapshots")
		return 0
	}
	rows := []string{"ID|Index|Term|Size"}
	for _, sn := range info.Snapshots {
		rows = append(rows, fmt.Sprintf("%s|%d|%d|%d", sn.ID, sn.Index, sn.Term, sn.Size))
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// openOffline parses the flags (extra adds the command's own) and the one
// <path> argument, and opens the store.
func (m *Meta) openOffline(name string, args []string, extra func(*flag.FlagSet)) (*raftutil.Store, bool) {
	fs := m.flagSet(name, flagsNone)
	if extra != nil {
		extra(fs)
	}
	if !m.parseArgs(fs, args, "<path>") {
		return nil, false
	}
	s, err := raftutil.Open(fs.Arg(0))
	if err != nil {
		m.Ui.Error(fmt.Sprintf("Error opening the Raft store: %s", err))
		return nil, false
	}
	return s, true
}

// OperatorRaftLogsCommand prints a stopped server's Raft log.
type OperatorRaftLogsCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRaftLogsCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator raft logs [options] <path>

  Print the entries of a stopped server's Raft log as JSON: each entry's
  index, term, kind and, for commands, the request it carries. This is a
  low-level debugging tool; the output may hold sensitive data.
` + offlineRaftUsage + `

Raft Logs Options:

  -last-index=<index>
    Stop after the entry with this index.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorRaftLogsCommand) Synopsis() string {
	return "Display raft log content"
}

// Run implements cli.Command.
func (c *OperatorRaftLogsCommand) Run(args []string) int {
	var lastIndex uint64
	s, ok := c.openOffline("operator raft logs", args, func(fs *flag.FlagSet) {
		fs.Uint64Var(&lastIndex, "last-index", 0, "")
	})
	if !ok {
		return 1
	}
	defer s.Close()
	entries := []*raftutil.Entry{}
	err := s.Entries(lastIndex, func(_ *raft.Log, e *raftutil.Entry) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the Raft log: %s", err))
		return 1
	}
	return c.printJSON(entries)
}

// OperatorRaftStateCommand prints the state a stopped server had.
type OperatorRaftStateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRaftStateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator raft state [options] <path>

  Rebuild the state a stopped server had, from its newest snapshot and
  the log after it, and print it as JSON: nodes (without their secrets),
  node pools, namespaces, jobs, evaluations, allocations, deployments,
  ACL policies and the cluster's configurations. ACL tokens, variables
  and keys are left out. This is a low-level debugging tool.
` + offlineRaftUsage + `

Raft State Options:

  -last-index=<index>
    Rebuild the state as of this index instead of the last one.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorRaftStateCommand) Synopsis() string {
	return "Display raft server state"
}

// Run implements cli.Command.
func (c *OperatorRaftStateCommand) Run(args []string) int {
	var lastIndex uint64
	s, ok := c.openOffline("operator raft state", args, func(fs *flag.FlagSet) {
		fs.Uint64Var(&lastIndex, "last-index", 0, "")
	})
	if !ok {
		return 1
	}
	defer s.Close()
	store, index, err := s.State(lastIndex)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error rebuilding the state: %s", err))
		return 1
	}
	dump, err := raftutil.DumpState(store, index)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the rebuilt state: %s", err))
		return 1
	}
	return c.printJSON(dump)
}

// printJSON prints v as indented JSON.
func (m *Meta) printJSON(v interface{}) int {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		m.Ui.Error(fmt.Sprintf("Error encoding JSON: %s", err))
		return 1
	}
	m.Ui.Output(string(out))
	return 0
}
