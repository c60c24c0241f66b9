package endpoints

import (
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Operator serves the Operator.* RPCs: the cluster-wide scheduler
// configuration and the Raft configuration.
type Operator struct {
	srv Server
}

// operatorRules says what each Operator.* method needs of the caller's
// token.
var operatorRules = Rules{
	"RaftGetConfiguration":      Management(),
	"RaftRemovePeerByID":        Management(),
	"SchedulerGetConfiguration": OperatorRead(),
	"SchedulerSetConfiguration": OperatorWrite(),
	"AutopilotGetConfiguration": OperatorRead(),
	"AutopilotSetConfiguration": OperatorWrite(),
	"ServerHealth":              OperatorRead(),
	"RaftTransferLeadership":    OperatorWrite(),
}

// SchedulerGetConfiguration returns the cluster's scheduler configuration.
func (o *Operator) SchedulerGetConfiguration(args *structs.GenericRequest, reply *structs.SchedulerConfigurationResponse) error {
	if done, err := o.srv.Forward("Operator.SchedulerGetConfiguration", args, args, reply); done {
		return err
	}
	return blockingQuery(o.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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
// whether the write applied (always for a plain write, as Nomad answers). Pausing or resuming the eval broker takes
// effect on the leader at once.
func (o *Operator) SchedulerSetConfiguration(args *structs.SchedulerSetConfigRequest, reply *structs.SchedulerSetConfigurationResponse) error {
	if done, err := o.srv.Forward("Operator.SchedulerSetConfiguration", args, args, reply); done {
		return err
	}
	if err := args.Config.Validate(); err != nil {
		return &structs.ValidationError{Problems: []string{err.Error()}}
	}
	resp, index, err := o.srv.RaftApply(structs.SchedulerConfigRequestType, args)
	if err != nil {
		return err
	}
	reply.Updated = true
	if args.CAS {
		reply.Updated, _ = resp.(bool)
	}
	reply.Index = index
	return o.srv.SchedulerConfigChanged()
}

// RaftGetConfiguration returns the Raft configuration: the servers, their
// RPC addresses, voting rights and the leader.
func (o *Operator) RaftGetConfiguration(args *structs.GenericRequest, reply *structs.RaftConfigurationResponse) error {
	if args.Region != "" && args.Region != o.srv.Settings().Region {
		_, err := o.srv.Forward("Operator.RaftGetConfiguration", args, args, reply)
		return err
	}
	return o.srv.RaftConfiguration(reply)
}

// RaftRemovePeerByID removes a server from the Raft configuration. It is
// for servers that are gone for good and that gossip cannot remove; a
// running server removed this way stays outside until it restarts (and
// gossip adds it back).
func (o *Operator) RaftRemovePeerByID(args *structs.RaftPeerByIDRequest, reply *structs.GenericResponse) error {
	if done, err := o.srv.Forward("Operator.RaftRemovePeerByID", args, args, reply); done {
		return err
	}
	if args.ID == "" {
		return &structs.ValidationError{Problems: []string{"missing peer ID to remove"}}
	}
	index, err := o.srv.RemoveRaftPeer(args.ID)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
