package command

import (
	"fmt"
	"os"
	"strings"

	"github.com/opennomad/nomad/nomad/snapshot"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// OperatorSnapshotStateCommand prints the cluster state a snapshot file
// holds as JSON.
type OperatorSnapshotStateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorSnapshotStateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator snapshot state <file>

  Print as JSON the cluster state a snapshot file (written by 'nomad
  operator snapshot save') holds: namespaces, node pools, nodes, jobs,
  evaluations, allocations and deployments. The file is checked against
  its checksums first. Secrets (node secret IDs, ACL tokens, keys,
  variables) are not printed. No agent is contacted.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorSnapshotStateCommand) Synopsis() string {
	return "Displays information about a Nomad snapshot file"
}

// snapshotState is what the command prints, in Nomad's key names.
type snapshotState struct {
	Namespaces  []*structs.Namespace
	NodePools   []*structs.NodePool
	Nodes       []*structs.Node
	Jobs        []*structs.Job
	Evals       []*structs.Evaluation
	Allocs      []*structs.Allocation
	Deployments []*structs.Deployment
}

// Run implements cli.Command.
func (c *OperatorSnapshotStateCommand) Run(args []string) int {
	const name = "operator snapshot state"
	fs := c.flagSet(name, flagsNone)
	if !c.parseArgs(fs, args, "<file>") {
		return 1
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error opening snapshot file: %s", err))
		return 1
	}
	defer f.Close()
	_, data, err := snapshot.Read(f, "")
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading snapshot: %s", err))
		return 1
	}
	defer data.Close()
	store, err := state.Restore(data, &state.Config{})
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error restoring the snapshot's state: %s", err))
		return 1
	}
	out, err := readSnapshotState(store)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the snapshot's state: %s", err))
		return 1
	}
	return printData(&c.Meta, out, true, "")
}

// readSnapshotState lists the tables the command prints, node secrets
// blanked.
func readSnapshotState(s *state.StateStore) (*snapshotState, error) {
	var out snapshotState
	var err error
	steps := []func() error{
		func() error { out.Namespaces, err = s.Namespaces(nil, ""); return err },
		func() error { out.NodePools, err = s.NodePools(nil, ""); return err },
		func() error { out.Nodes, err = s.Nodes(nil); return err },
		func() error { out.Jobs, err = s.Jobs(nil, structs.AllNamespaces); return err },
		func() error { out.Evals, err = s.Evals(nil, structs.AllNamespaces); return err },
		func() error { out.Allocs, err = s.Allocs(nil, structs.AllNamespaces); return err },
		func() error { out.Deployments, err = s.Deployments(nil, structs.AllNamespaces); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	for i, n := range out.Nodes {
		redactedNode := *n
		redactedNode.SecretID = ""
		out.Nodes[i] = &redactedNode
	}
	return &out, nil
}
