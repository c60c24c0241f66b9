package nomad

import (
	"fmt"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// OperatorEndpoint serves the Operator.* RPCs: the cluster-wide scheduler
// configuration and the Raft configuration.
type OperatorEndpoint struct {
	srv *Server
}

// SchedulerGetConfiguration returns the cluster's scheduler configuration.
func (o *OperatorEndpoint) SchedulerGetConfiguration(args *structs.GenericRequest, reply *structs.SchedulerConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.SchedulerGetConfiguration", args, args, reply); done {
		return err
	}
	return o.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		index, cfg, err := store.SchedulerConfig(ws)
		if err != nil {
			return 0, err
		}
		reply.SchedulerConfig = cfg
		if cfg == nil {
			return store.Index(state.TableSchedulerConfig)
		}
		return index, nil
	})
}

// SchedulerSetConfiguration replaces the scheduler configuration, with CAS
// only if its ModifyIndex is still Config.ModifyIndex; Updated reports
// whether a CAS write applied. Pausing or resuming the eval broker takes
// effect on the leader at once.
func (o *OperatorEndpoint) SchedulerSetConfiguration(args *structs.SchedulerSetConfigRequest, reply *structs.SchedulerSetConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.SchedulerSetConfiguration", args, args, reply); done {
		return err
	}
	if err := args.Config.Validate(); err != nil {
		return &structs.ValidationError{Problems: []string{err.Error()}}
	}
	resp, index, err := o.srv.raftApply(structs.SchedulerConfigRequestType, args)
	if err != nil {
		return err
	}
	if args.CAS {
		reply.Updated, _ = resp.(bool)
	}
	reply.Index = index
	return o.srv.handleSchedulerConfigChange()
}

// RaftGetConfiguration returns the Raft configuration: the servers, their
// RPC addresses, voting rights and the leader.
func (o *OperatorEndpoint) RaftGetConfiguration(args *structs.GenericRequest, reply *structs.RaftConfigurationResponse) error {
	if args.Region != "" && args.Region != o.srv.config.Region {
		_, err := o.srv.forward("Operator.RaftGetConfiguration", args, args, reply)
		return err
	}
	return o.srv.raftConfiguration(reply)
}

// RaftRemovePeerByID removes a server from the Raft configuration. It is
// for servers that are gone for good and that gossip cannot remove; a
// running server removed this way stays outside until it restarts (and
// gossip adds it back).
func (o *OperatorEndpoint) RaftRemovePeerByID(args *structs.RaftPeerByIDRequest, reply *structs.GenericResponse) error {
	if done, err := o.srv.forward("Operator.RaftRemovePeerByID", args, args, reply); done {
		return err
	}
	if args.ID == "" {
		return &structs.ValidationError{Problems: []string{"missing peer ID to remove"}}
	}
	f := o.srv.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	found := false
	for _, s := range f.Configuration().Servers {
		found = found || string(s.ID) == args.ID
	}
	if !found {
		return structs.KindErrorf(structs.ErrInvalid, "id %q was not found in the Raft configuration", args.ID)
	}
	future := o.srv.raft.RemoveServer(raft.ServerID(args.ID), 0, 0)
	if err := future.Error(); err != nil {
		return fmt.Errorf("removing raft peer %q: %w", args.ID, err)
	}
	o.srv.logger.Warn("removed raft peer", "id", args.ID)
	reply.Index = future.Index()
	return nil
}
