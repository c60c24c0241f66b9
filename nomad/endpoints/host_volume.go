package endpoints

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// HostVolume serves the HostVolume.* RPCs: dynamic host volumes. The
// servers record a volume and its node through Raft; the node's client
// makes (create) or checks (register) it and reports it in its node's
// HostVolumes, which turns the volume ready (see package state).
type HostVolume struct {
	srv Server
}

// hostVolumeRules: the namespace capabilities of Nomad's host volume
// endpoints. ListForNode is the clients' own read, checked against the
// node's secret.
var hostVolumeRules = Rules{
	"Create":      NamespaceAny(acl.NamespaceCapabilityHostVolumeCreate),
	"Register":    NamespaceAny(acl.NamespaceCapabilityHostVolumeRegister),
	"Get":         NamespaceAny(acl.NamespaceCapabilityHostVolumeRead),
	"List":        NamespaceAny(acl.NamespaceCapabilityHostVolumeRead),
	"Delete":      NamespaceAny(acl.NamespaceCapabilityHostVolumeDelete),
	"ListForNode": Internal(),
}

// Create records a volume for the mkdir plugin of its node's client to
// make. The node is the one named, or one ready node of the pool that
// meets the constraints.
func (h *HostVolume) Create(args *structs.HostVolumeCreateRequest, reply *structs.HostVolumeCreateResponse) error {
	if done, err := h.srv.Forward("HostVolume.Create", args, args, reply); done {
		return err
	}
	return h.write(args, reply, false)
}

// Register records a volume that already exists at HostPath on its node.
func (h *HostVolume) Register(args *structs.HostVolumeCreateRequest, reply *structs.HostVolumeCreateResponse) error {
	if done, err := h.srv.Forward("HostVolume.Register", args, args, reply); done {
		return err
	}
	return h.write(args, reply, true)
}

func (h *HostVolume) write(args *structs.HostVolumeCreateRequest, reply *structs.HostVolumeCreateResponse, registered bool) error {
	if args.Volume == nil {
		return structs.KindErrorf(structs.ErrInvalid, "missing volume definition")
	}
	v := args.Volume.Copy()
	v.Namespace = args.RequestNamespace()
	if err := v.Validate(registered); err != nil {
		return structs.KindErrorf(structs.ErrInvalid, "host volume %q: %w", v.Name, err)
	}
	store := h.srv.State()
	if ns, err := store.NamespaceByName(nil, v.Namespace); err != nil {
		return err
	} else if ns == nil {
		return structs.KindErrorf(structs.ErrInvalid, "host volume %q is in nonexistent namespace %q", v.Name, v.Namespace)
	}
	if !registered && v.PluginID == "" {
		v.PluginID = structs.HostVolumePluginMkdir
	}
	if v.ID != "" {
		existing, err := store.HostVolumeByID(nil, v.ID)
		if err != nil {
			return err
		}
		if existing == nil || existing.Namespace != v.Namespace {
			return fmt.Errorf("host volume %q: %w", v.ID, structs.ErrNotFound)
		}
		if v.NodeID == "" {
			v.NodeID = existing.NodeID
		}
		if v.NodeID != existing.NodeID {
			return structs.KindErrorf(structs.ErrInvalid, "host volume %q: node_id cannot change (%q to %q)", v.ID, existing.NodeID, v.NodeID)
		}
		if existing.PluginID != v.PluginID {
			// Created and registered volumes do not turn into each other.
			return structs.KindErrorf(structs.ErrInvalid, "host volume %q: plugin_id cannot change (%q to %q)", v.ID, existing.PluginID, v.PluginID)
		}
	} else {
		v.ID = structs.GenerateUUID()
	}
	node, err := h.placeVolume(store, v)
	if err != nil {
		return err
	}
	v.NodeID, v.NodePool = node.ID, node.NodePool
	now := h.srv.Clock().Now().UnixNano()
	v.CreateTime, v.ModifyTime = now, now
	if !registered {
		// The client's plugin reports where it made the volume.
		v.HostPath = ""
	}
	_, index, err := h.srv.RaftApply(structs.HostVolumeApplyRequestType, &structs.HostVolumeApplyRequest{
		Op: structs.HostVolumeOpUpsert, Volumes: []*structs.HostVolume{v}, WriteRequest: args.WriteRequest})
	if err != nil {
		return err
	}
	stored, err := h.srv.State().HostVolumeByID(nil, v.ID)
	if err != nil {
		return err
	}
	reply.Volume, reply.Index = stored, index
	return nil
}

// placeVolume picks the volume's node: the one it names (checked against
// its pool and constraints), or the first ready node, by ID, of its pool
// that meets them.
func (h *HostVolume) placeVolume(store *state.StateStore, v *structs.HostVolume) (*structs.Node, error) {
	if v.NodeID != "" {
		node, err := store.NodeByID(nil, v.NodeID)
		if err != nil {
			return nil, err
		}
		if node == nil {
			return nil, structs.KindErrorf(structs.ErrInvalid, "host volume %q: node %q does not exist", v.Name, v.NodeID)
		}
		if v.NodePool != "" && v.NodePool != node.NodePool {
			return nil, structs.KindErrorf(structs.ErrInvalid, "host volume %q: node %q is in node pool %q, not %q",
				v.Name, node.ID, node.NodePool, v.NodePool)
		}
		if r := scheduler.NodeConstraintFailure(node, v.Constraints); r != "" {
			return nil, structs.KindErrorf(structs.ErrInvalid, "host volume %q: node %q does not meet constraint %q", v.Name, node.ID, r)
		}
		return node, nil
	}
	pool := v.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	nodes, err := store.Nodes(nil)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(nodes, func(a, b *structs.Node) int { return strings.Compare(a.ID, b.ID) })
	for _, n := range nodes {
		if n.NodePool == pool && n.Ready() && scheduler.NodeConstraintFailure(n, v.Constraints) == "" {
			return n, nil
		}
	}
	return nil, structs.KindErrorf(structs.ErrInvalid, "host volume %q: no ready node in node pool %q meets its constraints", v.Name, pool)
}

// Get reads one volume of the request's namespace, with the allocations
// that mount it.
func (h *HostVolume) Get(args *structs.HostVolumeGetRequest, reply *structs.HostVolumeGetResponse) error {
	if done, err := h.srv.Forward("HostVolume.Get", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(h.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		v, err := store.HostVolumeByID(ws, args.ID)
		if err != nil {
			return 0, err
		}
		reply.Volume = nil
		if v == nil || v.Namespace != ns {
			return hostVolumeIndex(store)
		}
		c := v.Copy()
		if c.Allocations, err = volumeAllocs(store, ws, v); err != nil {
			return 0, err
		}
		reply.Volume = c
		return max(v.ModifyIndex, 1), nil
	})
}

// volumeAllocs lists the non-terminal allocs of the volume's node whose
// group mounts a host volume of the volume's name.
func volumeAllocs(store *state.StateStore, ws memdb.WatchSet, v *structs.HostVolume) ([]*structs.AllocListStub, error) {
	allocs, err := store.AllocsByNode(ws, v.NodeID)
	if err != nil {
		return nil, err
	}
	out := []*structs.AllocListStub{}
	for _, a := range allocs {
		if a.Namespace != v.Namespace || a.TerminalStatus() || a.Job == nil {
			continue
		}
		tg := a.Job.LookupTaskGroup(a.TaskGroup)
		if tg == nil {
			continue
		}
		for _, r := range tg.HostVolumes() {
			if r.SourceFor(uint(max(0, a.Index()))) == v.Name {
				out = append(out, a.Stub())
				break
			}
		}
	}
	return out, nil
}

// List answers the volumes of the request's namespace ("*": of every
// namespace the token may read), by node or pool when asked, and by ID
// prefix.
func (h *HostVolume) List(args *structs.HostVolumeListRequest, reply *structs.HostVolumeListResponse) error {
	if done, err := h.srv.Forward("HostVolume.List", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	aclObj, err := h.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return blockingQuery(h.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		vols, err := store.HostVolumes(ws)
		if err != nil {
			return 0, err
		}
		reply.Volumes = []*structs.HostVolumeStub{}
		for _, v := range vols {
			switch {
			case ns != "*" && v.Namespace != ns,
				ns == "*" && !aclObj.AllowNsOpAny(v.Namespace, acl.NamespaceCapabilityHostVolumeRead),
				args.NodeID != "" && v.NodeID != args.NodeID,
				args.NodePool != "" && v.NodePool != args.NodePool,
				!strings.HasPrefix(v.ID, args.Prefix):
				continue
			}
			reply.Volumes = append(reply.Volumes, v.Stub())
		}
		return hostVolumeIndex(store)
	})
}

// Delete removes a volume of the request's namespace. A volume that
// allocations still mount is refused; the client of its node then
// removes what its plugin made.
func (h *HostVolume) Delete(args *structs.HostVolumeDeleteRequest, reply *structs.HostVolumeDeleteResponse) error {
	if done, err := h.srv.Forward("HostVolume.Delete", args, args, reply); done {
		return err
	}
	if args.VolumeID == "" {
		return structs.KindErrorf(structs.ErrInvalid, "missing volume ID to delete")
	}
	store := h.srv.State()
	v, err := store.HostVolumeByID(nil, args.VolumeID)
	if err != nil {
		return err
	}
	if v == nil || v.Namespace != args.RequestNamespace() {
		return fmt.Errorf("host volume %q: %w", args.VolumeID, structs.ErrNotFound)
	}
	users, err := volumeAllocs(store, nil, v)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return structs.KindErrorf(structs.ErrConflict, "host volume %q in use by allocation %s", v.ID, users[0].ID)
	}
	_, index, err := h.srv.RaftApply(structs.HostVolumeApplyRequestType, &structs.HostVolumeApplyRequest{
		Op: structs.HostVolumeOpDelete, VolumeID: v.ID, WriteRequest: args.WriteRequest})
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListForNode is a client's blocking read of its own node's volumes,
// checked against the node's secret.
func (h *HostVolume) ListForNode(args *structs.HostVolumeNodeRequest, reply *structs.HostVolumeNodeResponse) error {
	if done, err := h.srv.Forward("HostVolume.ListForNode", args, args, reply); done {
		return err
	}
	if args.NodeID == "" {
		return structs.KindErrorf(structs.ErrInvalid, "missing node ID")
	}
	return blockingQuery(h.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		node, err := store.NodeByID(nil, args.NodeID)
		if err != nil {
			return 0, err
		}
		if node == nil || node.SecretID != args.SecretID {
			return 0, fmt.Errorf("node %q: %w", args.NodeID, errSecretMismatch)
		}
		vols, err := store.HostVolumesByNodeID(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Volumes = vols
		return hostVolumeIndex(store)
	})
}

func hostVolumeIndex(store *state.StateStore) (uint64, error) {
	idx, err := store.Index(state.TableHostVolumes)
	if err != nil {
		return 0, err
	}
	return max(idx, 1), nil
}
