package endpoints

import (
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// AutopilotGetConfiguration returns the autopilot configuration (the
// default before the first leader stored one).
func (o *Operator) AutopilotGetConfiguration(args *structs.GenericRequest, reply *structs.AutopilotConfigResponse) error {
	if done, err := o.srv.Forward("Operator.AutopilotGetConfiguration", args, args, reply); done {
		return err
	}
	return blockingQuery(o.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		index, cfg, err := store.AutopilotConfig(ws)
		if err != nil {
			return 0, err
		}
		if cfg == nil {
			reply.Config = structs.DefaultAutopilotConfig()
			return store.Index(state.TableAutopilotConfig)
		}
		reply.Config = cfg
		return index, nil
	})
}

// AutopilotSetConfiguration replaces the autopilot configuration, with
// CAS only if its ModifyIndex is still Config.ModifyIndex; Updated
// reports whether the write applied (always for a plain write). The
// dead-server cleanup reads it at its next round.
func (o *Operator) AutopilotSetConfiguration(args *structs.AutopilotSetConfigRequest, reply *structs.AutopilotSetConfigResponse) error {
	if done, err := o.srv.Forward("Operator.AutopilotSetConfiguration", args, args, reply); done {
		return err
	}
	if err := args.Config.Validate(); err != nil {
		return err
	}
	resp, index, err := o.srv.RaftApply(structs.AutopilotRequestType, args)
	if err != nil {
		return err
	}
	reply.Updated = true
	if args.CAS {
		reply.Updated, _ = resp.(bool)
	}
	reply.Index = index
	return nil
}

// ServerHealth reports every server's health as the leader judges it;
// it is always answered by the leader, stale or not.
func (o *Operator) ServerHealth(args *structs.GenericRequest, reply *structs.OperatorHealthReply) error {
	args.AllowStale = false
	if done, err := o.srv.Forward("Operator.ServerHealth", args, args, reply); done {
		return err
	}
	health, err := o.srv.ServerHealth()
	if err != nil {
		return err
	}
	*reply = *health
	o.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// RaftTransferLeadership hands the leadership to another voter.
func (o *Operator) RaftTransferLeadership(args *structs.LeadershipTransferRequest, reply *structs.GenericResponse) error {
	if done, err := o.srv.Forward("Operator.RaftTransferLeadership", args, args, reply); done {
		return err
	}
	if args.ID != "" && args.Address != "" {
		return &structs.ValidationError{Problems: []string{"must specify either id or address, not both"}}
	}
	return o.srv.TransferLeadership(args.ID, args.Address)
}
