package raftutil

import (
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/fsm"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// State rebuilds the state the server had at lastIndex (0: at its last
// entry): its newest snapshot at or before that index restored, then the
// log entries after it applied, as the server itself does on start.
func (s *Store) State(lastIndex uint64) (*state.StateStore, uint64, error) {
	f, err := fsm.New(fsm.Config{})
	if err != nil {
		return nil, 0, err
	}
	snaps, err := s.Snaps.List()
	if err != nil {
		return nil, 0, err
	}
	applied := uint64(0)
	for _, m := range snaps {
		if lastIndex != 0 && m.Index > lastIndex {
			continue
		}
		_, rc, err := s.Snaps.Open(m.ID)
		if err != nil {
			return nil, 0, fmt.Errorf("opening snapshot %s: %w", m.ID, err)
		}
		if err := f.Restore(rc); err != nil {
			return nil, 0, fmt.Errorf("restoring snapshot %s: %w", m.ID, err)
		}
		applied = m.Index
		break
	}
	err = s.Entries(lastIndex, func(l *raft.Log, _ *Entry) error {
		if l.Index <= applied {
			return nil
		}
		// An entry the server refused is refused here too; the FSM
		// answers it with an error and the state stays as the server's.
		f.Apply(l)
		applied = l.Index
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return f.State(), applied, nil
}

// Dump is a state store's objects, for printing. Secrets stay out: node
// secrets are blanked, and ACL tokens, variables and root keys are not
// listed.
type Dump struct {
	Index           uint64
	Nodes           []*structs.Node
	NodePools       []*structs.NodePool
	Namespaces      []*structs.Namespace
	Jobs            []*structs.Job
	Evals           []*structs.Evaluation
	Allocs          []*structs.Allocation
	Deployments     []*structs.Deployment
	ACLPolicies     []*structs.ACLPolicy
	SchedulerConfig *structs.SchedulerConfiguration
	AutopilotConfig *structs.AutopilotConfig
	ClusterMetadata *structs.ClusterMetadata
}

// DumpState lists store's objects.
func DumpState(store *state.StateStore, index uint64) (*Dump, error) {
	d := &Dump{Index: index}
	var err error
	steps := []func() error{
		func() (err error) { d.Nodes, err = store.Nodes(nil); return },
		func() (err error) { d.NodePools, err = store.NodePools(nil, ""); return },
		func() (err error) { d.Namespaces, err = store.Namespaces(nil, ""); return },
		func() (err error) { d.Jobs, err = store.Jobs(nil, structs.AllNamespaces); return },
		func() (err error) { d.Evals, err = store.Evals(nil, structs.AllNamespaces); return },
		func() (err error) { d.Allocs, err = store.Allocs(nil, structs.AllNamespaces); return },
		func() (err error) { d.Deployments, err = store.Deployments(nil, structs.AllNamespaces); return },
		func() (err error) { d.ACLPolicies, err = store.ACLPolicies(nil, ""); return },
		func() (err error) { _, d.SchedulerConfig, err = store.SchedulerConfig(nil); return },
		func() (err error) { _, d.AutopilotConfig, err = store.AutopilotConfig(nil); return },
		func() (err error) { d.ClusterMetadata, err = store.ClusterMetadata(nil); return },
	}
	for _, step := range steps {
		if err = step(); err != nil {
			return nil, err
		}
	}
	for i, n := range d.Nodes {
		d.Nodes[i] = n.Sanitize()
	}
	return d, nil
}
