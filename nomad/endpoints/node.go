package endpoints

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Node serves the Node.* RPCs: what clients call to register,
// heartbeat and report their allocs, and what operators call to drain,
// toggle eligibility and read nodes.
type Node struct {
	srv Server
}

// nodeRules says what each Node.* method needs of the caller's token.
// The client nodes' own calls are Internal.
var nodeRules = Rules{
	"Register":          Internal(),
	"UpdateStatus":      Internal(),
	"UpdateAlloc":       Internal(),
	"GetClientAllocs":   Internal(),
	"Deregister":        NodeWrite(),
	"UpdateDrain":       NodeWrite(),
	"UpdateEligibility": NodeWrite(),
	"Evaluate":          NodeWrite(),
	"GetNode":           NodeRead(),
	"GetAllocs":         NodeRead(),
	"List":              NodeRead(),
	"Usage":             NodeRead(),
}

// errSecretMismatch refuses a node write that does not carry the node's
// secret.
var errSecretMismatch = fmt.Errorf("node secret ID does not match")

// Register registers a client node, or re-registers it. A registration
// never changes a known node's status: only heartbeats do. The node's
// jobs are re-evaluated when it registers as ready or changed what
// feasibility checks read, and a live node gets a heartbeat TTL.
func (n *Node) Register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.Forward("Node.Register", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "client", "register"}, time.Now())
	node := args.Node
	if err := validateNodeRegistration(node); err != nil {
		return err
	}
	node.Canonicalize()
	if node.Status == "" {
		node.Status = structs.NodeStatusInit
	}
	store := n.srv.State()
	old, err := store.NodeByID(nil, node.ID)
	if err != nil {
		return err
	}
	if old != nil {
		if old.SecretID != node.SecretID {
			return fmt.Errorf("node %q: %w. Not registering node.", node.ID, errSecretMismatch)
		}
		node.Status = old.Status
	}
	node.StatusUpdatedAt = n.srv.Clock().Now().Unix()

	_, index, err := n.srv.RaftApply(structs.NodeRegisterRequestType, args)
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = index
	reply.Index = index

	if registrationNeedsEvals(old, node) {
		stored, err := n.srv.State().NodeByID(nil, node.ID)
		if err != nil {
			return err
		}
		if err := n.createNodeEvals(stored, reply); err != nil {
			return err
		}
	}
	if !node.TerminalStatus() {
		ttl, err := n.srv.ResetHeartbeat(node.ID)
		if err != nil {
			return err
		}
		reply.HeartbeatTTL = ttl
		// A registration proved the node's secret: it gets a fresh
		// identity, which also carries a changed pool, class or
		// datacenter.
		n.issueNodeIdentity(node, true, reply)
	}
	n.setServerInfo(reply)
	return nil
}

// validateNodeRegistration lists every problem of a registering node.
func validateNodeRegistration(node *structs.Node) error {
	if node == nil {
		return &structs.ValidationError{Problems: []string{"missing node for client registration"}}
	}
	var problems []string
	if node.ID == "" {
		problems = append(problems, "missing node ID for client registration")
	}
	if node.SecretID == "" {
		problems = append(problems, "missing node secret ID for client registration")
	}
	if node.Datacenter == "" {
		problems = append(problems, "missing datacenter for client registration")
	}
	if node.Name == "" {
		problems = append(problems, "missing node name for client registration")
	}
	if node.Status != "" && !structs.ValidNodeStatus(node.Status) {
		problems = append(problems, fmt.Sprintf("invalid status %q for node", node.Status))
	}
	switch {
	case node.NodePool == structs.NodePoolAll:
		problems = append(problems, fmt.Sprintf("node is not allowed to register in node pool %q", structs.NodePoolAll))
	case node.NodePool != "" && !structs.ValidNodePoolName(node.NodePool):
		problems = append(problems, fmt.Sprintf("invalid node pool %q: only letters, digits, '-' and '_' are allowed, at most 128", node.NodePool))
	}
	problems = append(problems, node.NULProblems()...)
	if len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	return nil
}

// createNodeEvals writes the node's re-evaluations in their own Raft
// entry and records them in the reply.
func (n *Node) createNodeEvals(node *structs.Node, reply *structs.NodeUpdateResponse) error {
	evals, err := nodeEvals(n.srv.State(), node, n.srv.Clock().Now())
	if err != nil || len(evals) == 0 {
		return err
	}
	_, index, err := n.srv.RaftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
	if err != nil {
		return err
	}
	reply.EvalIDs = evalIDs(evals)
	reply.EvalCreateIndex = index
	reply.Index = index
	return nil
}

// setServerInfo tells a client which servers it may talk to: the alive
// servers of the region, and the leader's RPC address.
func (n *Node) setServerInfo(reply *structs.NodeUpdateResponse) {
	reply.LeaderRPCAddr = n.srv.LeaderRPCAddr()
	reply.NumNodes = int32(n.srv.HeartbeatCount())
	reply.Servers = n.srv.ClientServers()
	n.srv.SetQueryMeta(&reply.QueryMeta)
}

// Deregister removes nodes and re-evaluates the jobs that still had work
// on them. Every node must exist.
func (n *Node) Deregister(args *structs.NodeDeregisterRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.Forward("Node.Deregister", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "client", "deregister"}, time.Now())
	if len(args.NodeIDs) == 0 {
		return &structs.ValidationError{Problems: []string{"must specify at least one node ID to deregister"}}
	}
	store := n.srv.State()
	nodes := make([]*structs.Node, 0, len(args.NodeIDs))
	for _, id := range args.NodeIDs {
		node, err := store.NodeByID(nil, id)
		if err != nil {
			return err
		}
		if node == nil {
			return fmt.Errorf("node %q: %w", id, structs.ErrUnknownNode)
		}
		nodes = append(nodes, node)
	}
	_, index, err := n.srv.RaftApply(structs.NodeBatchDeregisterRequestType, args)
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = index
	reply.Index = index
	now := n.srv.Clock().Now()
	var evals []*structs.Evaluation
	for _, node := range nodes {
		n.srv.ClearHeartbeat(node.ID)
		// The node is gone: only jobs with allocs on it need another look.
		ev, err := allocEvalsOnly(n.srv.State(), node, now)
		if err != nil {
			return err
		}
		evals = append(evals, ev...)
	}
	if len(evals) > 0 {
		_, evalIndex, err := n.srv.RaftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
		if err != nil {
			return err
		}
		reply.EvalIDs = evalIDs(evals)
		reply.EvalCreateIndex = evalIndex
		reply.Index = evalIndex
	}
	n.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// allocEvalsOnly is nodeEvals without the system jobs, for a node that no
// longer exists.
func allocEvalsOnly(store *state.StateStore, node *structs.Node, now time.Time) ([]*structs.Evaluation, error) {
	evals, err := nodeEvals(store, node, now)
	if err != nil {
		return nil, err
	}
	allocs, err := store.AllocsByNode(nil, node.ID)
	if err != nil {
		return nil, err
	}
	withAllocs := make(map[structs.NamespacedID]bool, len(allocs))
	for _, a := range allocs {
		withAllocs[a.NamespacedJobID()] = true
	}
	out := evals[:0]
	for _, e := range evals {
		if withAllocs[e.NamespacedJobID()] {
			out = append(out, e)
		}
	}
	return out, nil
}

// UpdateStatus is a client's heartbeat, or a status change (the leader
// marks a node down when its heartbeat is missed). A heartbeat that
// changes nothing is answered without a Raft write; a change is written
// with the node's re-evaluations in one Raft entry. The reply carries the
// next heartbeat TTL.
//
// Transitions: a node initializing stays so when asked to become ready
// while it holds allocs its client has not reported since it last missed
// a heartbeat; a disconnected node asking to be ready becomes
// initializing first; a down node coming back records "Node reregistered
// by heartbeat".
func (n *Node) UpdateStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.Forward("Node.UpdateStatus", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "client", "update_status"}, time.Now())
	var problems []string
	if args.NodeID == "" {
		problems = append(problems, "missing node ID for client status update")
	}
	if !structs.ValidNodeStatus(args.Status) {
		problems = append(problems, fmt.Sprintf("invalid status %q for node", args.Status))
	}
	if len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	store := n.srv.State()
	node, err := store.NodeByID(nil, args.NodeID)
	if err != nil {
		return err
	}
	if node == nil {
		return fmt.Errorf("node %q: %w", args.NodeID, structs.ErrUnknownNode)
	}
	if args.SecretID != "" && args.SecretID != node.SecretID {
		return fmt.Errorf("node %q: %w", args.NodeID, errSecretMismatch)
	}

	next := args.Status
	switch node.Status {
	case structs.NodeStatusInit:
		if next == structs.NodeStatusReady {
			live, err := store.AllocsByNodeTerminal(nil, node.ID, false)
			if err != nil {
				return err
			}
			synced := node.LastAllocUpdateIndex > node.LastMissedHeartbeatIndex
			if len(live) > 0 && !synced {
				next = structs.NodeStatusInit
			}
		}
	case structs.NodeStatusDisconnected:
		if next == structs.NodeStatusReady {
			next = structs.NodeStatusInit
		}
	}
	event := args.NodeEvent
	if node.Status == structs.NodeStatusDown && next != structs.NodeStatusDown && event == nil {
		event = structs.NewNodeEvent(structs.NodeEventSubsystemCluster, structs.NodeEventMsgReregistered, n.srv.Clock().Now())
	}

	if node.Status != next || event != nil {
		req := &structs.NodeUpdateStatusRequest{
			NodeID: node.ID, Status: next, NodeEvent: event, UpdatedAt: n.srv.Clock().Now().Unix(),
			WriteRequest: args.WriteRequest,
		}
		if statusChangeNeedsEvals(node.Status, next) {
			// The evals name the node as it will be after this write.
			changed := node.Copy()
			changed.Status = next
			if req.Evals, err = nodeEvals(store, changed, n.srv.Clock().Now()); err != nil {
				return err
			}
		}
		_, index, err := n.srv.RaftApply(structs.NodeUpdateStatusRequestType, req)
		if err != nil {
			return err
		}
		reply.NodeModifyIndex = index
		reply.Index = index
		if len(req.Evals) > 0 {
			reply.EvalIDs = evalIDs(req.Evals)
			reply.EvalCreateIndex = index
		}
		metrics.IncrCounterWithLabels([]string{"nomad", "client", "status_change"}, 1,
			[]metrics.Label{{Name: "status", Value: next}})
		n.srv.Logger().Debug("node status changed", "node_id", node.ID, "from", node.Status, "to", next)
	} else {
		reply.NodeModifyIndex = node.ModifyIndex
		reply.Index = node.ModifyIndex
	}

	switch next {
	case structs.NodeStatusDown:
		n.srv.ClearHeartbeat(node.ID)
	case structs.NodeStatusDisconnected:
	default:
		ttl, err := n.srv.ResetHeartbeat(node.ID)
		if err != nil {
			return err
		}
		reply.HeartbeatTTL = ttl
		// Only the node itself, proving its secret, is issued an
		// identity; the leader's own status changes carry no secret.
		if args.ForceIdentityRenewal && args.SecretID != "" {
			n.issueNodeIdentity(node, false, reply)
		}
	}
	n.setServerInfo(reply)
	return nil
}

// UpdateDrain starts or cancels a drain. Starting one makes the node
// ineligible; cancelling makes it eligible again only with MarkEligible,
// and then re-evaluates its jobs.
func (n *Node) UpdateDrain(args *structs.NodeUpdateDrainRequest, reply *structs.NodeDrainUpdateResponse) error {
	if done, err := n.srv.Forward("Node.UpdateDrain", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "client", "update_drain"}, time.Now())
	if args.NodeID == "" {
		return &structs.ValidationError{Problems: []string{"missing node ID for drain update"}}
	}
	node, err := n.srv.State().NodeByID(nil, args.NodeID)
	if err != nil {
		return err
	}
	if node == nil {
		return fmt.Errorf("node %q: %w", args.NodeID, structs.ErrUnknownNode)
	}
	now := n.srv.Clock().Now()
	msg := structs.NodeEventMsgDrainCanceled
	if ds := args.DrainStrategy; ds != nil {
		msg = structs.NodeEventMsgDrainStarted
		ds.StartedAt = now
		if node.DrainStrategy != nil && !node.DrainStrategy.StartedAt.IsZero() {
			ds.StartedAt = node.DrainStrategy.StartedAt
		}
		ds.ForceDeadline = time.Time{}
		if ds.Deadline > 0 {
			ds.ForceDeadline = now.Add(ds.Deadline)
		}
		args.MarkEligible = false
	}
	if args.NodeEvent == nil {
		args.NodeEvent = structs.NewNodeEvent(structs.NodeEventSubsystemDrain, msg, now)
	}
	args.UpdatedAt = now.Unix()
	_, index, err := n.srv.RaftApply(structs.NodeUpdateDrainRequestType, args)
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = index
	reply.Index = index
	becameEligible := node.SchedulingEligibility == structs.NodeSchedulingIneligible &&
		args.DrainStrategy == nil && args.MarkEligible
	if becameEligible {
		return n.writeEligibleEvals(node.ID, &reply.EvalIDs, &reply.EvalCreateIndex, &reply.Index)
	}
	return nil
}

// UpdateEligibility marks a node eligible or ineligible for new
// allocations. A draining node cannot be made eligible. A node made
// eligible again has its jobs re-evaluated (system jobs may now place).
func (n *Node) UpdateEligibility(args *structs.NodeUpdateEligibilityRequest, reply *structs.NodeEligibilityUpdateResponse) error {
	if done, err := n.srv.Forward("Node.UpdateEligibility", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "client", "update_eligibility"}, time.Now())
	var problems []string
	if args.NodeID == "" {
		problems = append(problems, "missing node ID for eligibility update")
	}
	msg := ""
	switch args.Eligibility {
	case structs.NodeSchedulingEligible:
		msg = structs.NodeEventMsgEligible
	case structs.NodeSchedulingIneligible:
		msg = structs.NodeEventMsgIneligible
	default:
		problems = append(problems, fmt.Sprintf("invalid scheduling eligibility %q", args.Eligibility))
	}
	if len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	node, err := n.srv.State().NodeByID(nil, args.NodeID)
	if err != nil {
		return err
	}
	if node == nil {
		return fmt.Errorf("node %q: %w", args.NodeID, structs.ErrUnknownNode)
	}
	if node.DrainStrategy != nil && args.Eligibility == structs.NodeSchedulingEligible {
		return fmt.Errorf("node %q: can not set node's scheduling eligibility to eligible while it is draining", node.ID)
	}
	if node.SchedulingEligibility == args.Eligibility {
		reply.NodeModifyIndex = node.ModifyIndex
		reply.Index = node.ModifyIndex
		return nil
	}
	now := n.srv.Clock().Now()
	if args.NodeEvent == nil {
		args.NodeEvent = structs.NewNodeEvent(structs.NodeEventSubsystemCluster, msg, now)
	}
	args.UpdatedAt = now.Unix()
	_, index, err := n.srv.RaftApply(structs.NodeUpdateEligibilityRequestType, args)
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = index
	reply.Index = index
	if args.Eligibility == structs.NodeSchedulingEligible {
		return n.writeEligibleEvals(node.ID, &reply.EvalIDs, &reply.EvalCreateIndex, &reply.Index)
	}
	return nil
}

// writeEligibleEvals re-evaluates the jobs of a node made eligible again.
func (n *Node) writeEligibleEvals(nodeID string, ids *[]string, createIndex, index *uint64) error {
	node, err := n.srv.State().NodeByID(nil, nodeID)
	if err != nil || node == nil {
		return err
	}
	evals, err := nodeEvals(n.srv.State(), node, n.srv.Clock().Now())
	if err != nil || len(evals) == 0 {
		return err
	}
	_, evalIndex, err := n.srv.RaftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
	if err != nil {
		return err
	}
	*ids = evalIDs(evals)
	*createIndex = evalIndex
	*index = evalIndex
	return nil
}

// Evaluate re-evaluates every job with work on the node, and the system
// jobs that target it.
func (n *Node) Evaluate(args *structs.NodeEvaluateRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.Forward("Node.Evaluate", args, args, reply); done {
		return err
	}
	if args.NodeID == "" {
		return &structs.ValidationError{Problems: []string{"missing node ID for evaluation"}}
	}
	node, err := n.srv.State().NodeByID(nil, args.NodeID)
	if err != nil {
		return err
	}
	if node == nil {
		return fmt.Errorf("node %q: %w", args.NodeID, structs.ErrUnknownNode)
	}
	reply.NodeModifyIndex = node.ModifyIndex
	if err := n.createNodeEvals(node, reply); err != nil {
		return err
	}
	n.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// GetNode returns a node without its secret, nil when unknown.
func (n *Node) GetNode(args *structs.NodeSpecificRequest, reply *structs.SingleNodeResponse) error {
	if done, err := n.srv.Forward("Node.GetNode", args, args, reply); done {
		return err
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		node, err := store.NodeByID(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Node = node.Sanitize()
		if node != nil {
			return node.ModifyIndex, nil
		}
		return store.Index(state.TableNodes)
	})
}

// List returns node stubs, optionally filtered by ID prefix and with
// resources or OS attributes.
func (n *Node) List(args *structs.NodeListRequest, reply *structs.NodeListResponse) error {
	if done, err := n.srv.Forward("Node.List", args, args, reply); done {
		return err
	}
	filter, err := newListFilter(args.Filter)
	if err != nil {
		return err
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		nodes, err := store.NodesByIDPrefix(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		stubs := make([]*structs.NodeListStub, 0, len(nodes))
		for _, node := range nodes {
			keep, err := filter.match(node)
			if err != nil {
				return 0, err
			}
			if !keep {
				continue
			}
			stubs = append(stubs, nodeStub(node, args.Fields))
		}
		reply.Nodes = stubs
		return store.Index(state.TableNodes)
	})
}

// nodeStub is the node's list stub, with the optional fields asked for.
func nodeStub(node *structs.Node, f *structs.NodeStubFields) *structs.NodeListStub {
	stub := node.Stub()
	if f != nil {
		if f.Resources {
			stub.NodeResources = node.NodeResources
			stub.ReservedResources = node.ReservedResources
		}
		if f.OS {
			stub.Attributes = map[string]string{
				"os.name": node.Attributes["os.name"], "os.version": node.Attributes["os.version"],
			}
		}
	}
	return stub
}

// GetAllocs returns every allocation on a node.
func (n *Node) GetAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
	if done, err := n.srv.Forward("Node.GetAllocs", args, args, reply); done {
		return err
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		allocs, err := store.AllocsByNode(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Allocs = allocs
		return allocsIndex(store, allocs)
	})
}

// GetClientAllocs is what a client polls: its allocations' IDs, each with
// the AllocModifyIndex the servers last changed it at, so the client
// fetches only the allocs that changed server side. It requires the
// node's secret.
func (n *Node) GetClientAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeClientAllocsResponse) error {
	if done, err := n.srv.Forward("Node.GetClientAllocs", args, args, reply); done {
		return err
	}
	if args.NodeID == "" {
		return &structs.ValidationError{Problems: []string{"missing node ID"}}
	}
	return flooredBlockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		node, err := store.NodeByID(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Allocs = make(map[string]uint64)
		if node == nil {
			return store.Index(state.TableAllocs)
		}
		if args.SecretID != node.SecretID {
			return 0, fmt.Errorf("node %q: %w", args.NodeID, errSecretMismatch)
		}
		// Watch the node's own allocation index, not the allocs: an empty
		// node's scan would watch a shared part of the index and wake on
		// every plan. The index is read before the allocs, so the answer
		// is never older than the index it reports.
		index, err := store.NodeAllocIndex(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		allocs, newest, err := store.ClientAllocIndexes(args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Allocs = allocs
		// Allocations restored from a snapshot written before the index
		// existed still count.
		return max(index, newest), nil
	})
}

// allocsIndex is the index a list of allocs reflects: the newest
// ModifyIndex among them, or the allocs table's index for none.
func allocsIndex(store *state.StateStore, allocs []*structs.Allocation) (uint64, error) {
	var max uint64
	for _, a := range allocs {
		if a.ModifyIndex > max {
			max = a.ModifyIndex
		}
	}
	if max == 0 {
		return store.Index(state.TableAllocs)
	}
	return max, nil
}
