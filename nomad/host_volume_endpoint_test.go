package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestHostVolumeEndpoint_Lifecycle creates a volume on a node picked by
// pool, registers one at a path, lists and reads them, sees a volume turn
// ready when its node reports it, is refused deleting a volume in use,
// and deletes one.
func TestHostVolumeEndpoint_Lifecycle(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)

	var created structs.HostVolumeCreateResponse
	must.NoError(t, s.RPC("HostVolume.Create", &structs.HostVolumeCreateRequest{Volume: &structs.HostVolume{
		Name: "data", RequestedCapabilities: []*structs.HostVolumeCapability{{
			AttachmentMode: structs.VolumeAttachmentModeFilesystem, AccessMode: structs.VolumeAccessModeSingleNodeWriter}}},
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &created))
	v := created.Volume
	must.NotNil(t, v)
	must.Eq(t, node.ID, v.NodeID)
	must.Eq(t, structs.HostVolumePluginMkdir, v.PluginID)
	must.Eq(t, structs.HostVolumeStatePending, v.State)
	must.Eq(t, "default", v.NodePool)
	must.Positive(t, created.Index)

	var reg structs.HostVolumeCreateResponse
	must.NoError(t, s.RPC("HostVolume.Register", &structs.HostVolumeCreateRequest{Volume: &structs.HostVolume{
		Name: "logs", NodeID: node.ID, HostPath: "/srv/logs"}}, &reg))
	must.Eq(t, "/srv/logs", reg.Volume.HostPath)
	must.Eq(t, "", reg.Volume.PluginID)

	invalid := []struct {
		name string
		rpc  string
		vol  *structs.HostVolume
		want string
	}{
		{"bad name", "HostVolume.Create", &structs.HostVolume{Name: "a b"}, `name "a b" must be`},
		{"register without path", "HostVolume.Register", &structs.HostVolume{Name: "x", NodeID: node.ID}, "host_path is required"},
		{"register without node", "HostVolume.Register", &structs.HostVolume{Name: "x", HostPath: "/x"}, "node_id is required"},
		{"unknown plugin", "HostVolume.Create", &structs.HostVolume{Name: "x", PluginID: "ceph"}, `plugin_id "ceph" is not supported`},
		{"unknown node", "HostVolume.Create", &structs.HostVolume{Name: "x", NodeID: "nope"}, `node "nope" does not exist`},
		{"no node meets the constraints", "HostVolume.Create", &structs.HostVolume{Name: "x",
			Constraints: []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "plan9", Operand: "="}}},
			`no ready node in node pool "default" meets its constraints`},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			var resp structs.HostVolumeCreateResponse
			err := s.RPC(c.rpc, &structs.HostVolumeCreateRequest{Volume: c.vol}, &resp)
			must.ErrorIs(t, err, structs.ErrInvalid)
			must.ErrorContains(t, err, c.want)
		})
	}

	var list structs.HostVolumeListResponse
	must.NoError(t, s.RPC("HostVolume.List", &structs.HostVolumeListRequest{}, &list))
	must.Len(t, 2, list.Volumes)
	must.NoError(t, s.RPC("HostVolume.List", &structs.HostVolumeListRequest{NodePool: "gpu"}, &list))
	must.Len(t, 0, list.Volumes)

	// The node reports the created volume: ready, at the node's path.
	reporting := node.Copy()
	reporting.HostVolumes = map[string]*structs.ClientHostVolumeConfig{"data": {Name: "data", Path: "/hv/" + v.ID, ID: v.ID}}
	registerNode(t, s, reporting)
	var got structs.HostVolumeGetResponse
	must.NoError(t, s.RPC("HostVolume.Get", &structs.HostVolumeGetRequest{ID: v.ID}, &got))
	must.Eq(t, structs.HostVolumeStateReady, got.Volume.State)
	must.Eq(t, "/hv/"+v.ID, got.Volume.HostPath)
	must.SliceEmpty(t, got.Volume.Allocations)
	must.NoError(t, s.RPC("HostVolume.Get", &structs.HostVolumeGetRequest{ID: v.ID,
		QueryOptions: structs.QueryOptions{Namespace: "other"}}, &got))
	must.Nil(t, got.Volume)

	// A running alloc mounting it keeps it.
	job := mock.Job()
	job.TaskGroups[0].Volumes = map[string]*structs.VolumeRequest{"d": {Name: "d", Type: "host", Source: "data"}}
	must.NoError(t, s.State().UpsertJob(latestIndex(t, s)+1, job))
	alloc := placeAlloc(t, s, job, node, 0)
	must.NoError(t, s.RPC("HostVolume.Get", &structs.HostVolumeGetRequest{ID: v.ID}, &got))
	must.Len(t, 1, got.Volume.Allocations)
	var del structs.HostVolumeDeleteResponse
	err := s.RPC("HostVolume.Delete", &structs.HostVolumeDeleteRequest{VolumeID: v.ID}, &del)
	must.ErrorIs(t, err, structs.ErrConflict)
	must.ErrorContains(t, err, "in use by allocation "+alloc.ID)

	must.NoError(t, s.RPC("HostVolume.Delete", &structs.HostVolumeDeleteRequest{VolumeID: reg.Volume.ID}, &del))
	must.ErrorIs(t, s.RPC("HostVolume.Delete", &structs.HostVolumeDeleteRequest{VolumeID: reg.Volume.ID}, &del), structs.ErrNotFound)

	// The node's own read, with its secret.
	var mine structs.HostVolumeNodeResponse
	must.NoError(t, s.RPC("HostVolume.ListForNode", &structs.HostVolumeNodeRequest{NodeID: node.ID, SecretID: node.SecretID}, &mine))
	must.Len(t, 1, mine.Volumes)
	must.Error(t, s.RPC("HostVolume.ListForNode", &structs.HostVolumeNodeRequest{NodeID: node.ID, SecretID: "wrong"}, &mine))
}

// TestHostVolumeEndpoint_ACL: the host volume namespace capabilities
// decide; a list across namespaces keeps those the token may read.
func TestHostVolumeEndpoint_ACL(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	node := mock.Node()
	registerNode(t, s, node)
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{{Name: "other"}},
		WriteRequest: asTokenWrite(mgmt)}, &wr))
	token := func(name, rules string) string {
		must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
			{Name: name, Rules: rules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
		var created structs.ACLTokenUpsertResponse
		must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
			{Name: name, Type: structs.ACLClientToken, Policies: []string{name}}}, WriteRequest: asTokenWrite(mgmt)}, &created))
		return created.Tokens[0].SecretID
	}
	creator := token("creator", `namespace "default" { capabilities = ["host-volume-create"] }`)
	reader := token("reader", `namespace "default" { policy = "read" }`)

	create := func(secret, ns string) error {
		var resp structs.HostVolumeCreateResponse
		return s.RPC("HostVolume.Create", &structs.HostVolumeCreateRequest{Volume: &structs.HostVolume{Name: "v"},
			WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: secret}}, &resp)
	}
	must.NoError(t, create(creator, "default"))
	must.NoError(t, create(mgmt, "other"))
	must.ErrorIs(t, create(reader, "default"), structs.ErrPermissionDenied)
	must.ErrorIs(t, create(creator, "other"), structs.ErrPermissionDenied)

	var list structs.HostVolumeListResponse
	must.NoError(t, s.RPC("HostVolume.List", &structs.HostVolumeListRequest{
		QueryOptions: structs.QueryOptions{Namespace: "*", AuthToken: reader}}, &list))
	must.Len(t, 1, list.Volumes)
	must.Eq(t, "default", list.Volumes[0].Namespace)
	var del structs.HostVolumeDeleteResponse
	err := s.RPC("HostVolume.Delete", &structs.HostVolumeDeleteRequest{VolumeID: list.Volumes[0].ID,
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: reader}}, &del)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
}

// TestSearchEndpoint_HostVolumes: the host_volumes context finds volumes
// by ID prefix, in the request's namespace.
func TestSearchEndpoint_HostVolumes(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)
	var created structs.HostVolumeCreateResponse
	must.NoError(t, s.RPC("HostVolume.Create", &structs.HostVolumeCreateRequest{Volume: &structs.HostVolume{Name: "data"}}, &created))
	id := created.Volume.ID

	var res structs.SearchResponse
	must.NoError(t, s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: id[:5], Context: structs.SearchContextHostVolumes}, &res))
	must.Eq(t, []string{id}, res.Matches[structs.SearchContextHostVolumes])
	must.NoError(t, s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: id[:4], Context: structs.SearchContextAll}, &res))
	must.Eq(t, []string{id}, res.Matches[structs.SearchContextHostVolumes])
	must.NoError(t, s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: id[:4], Context: structs.SearchContextHostVolumes,
		QueryOptions: structs.QueryOptions{Namespace: "other"}}, &res))
	must.SliceEmpty(t, res.Matches[structs.SearchContextHostVolumes])
}

// TestHostVolumeEndpoint_Update: a volume's ID updates it in place; its
// node and its kind (created or registered) do not change.
func TestHostVolumeEndpoint_Update(t *testing.T) {
	s := newTestServer(t, nil)
	node, other := mock.Node(), mock.Node()
	registerNode(t, s, node)
	registerNode(t, s, other)
	var first structs.HostVolumeCreateResponse
	must.NoError(t, s.RPC("HostVolume.Create", &structs.HostVolumeCreateRequest{Volume: &structs.HostVolume{
		Name: "data", NodeID: node.ID}}, &first))
	var again structs.HostVolumeCreateResponse
	must.NoError(t, s.RPC("HostVolume.Create", &structs.HostVolumeCreateRequest{Volume: &structs.HostVolume{
		ID: first.Volume.ID, Name: "data", Parameters: map[string]string{"mode": "0700"}}}, &again))
	must.Eq(t, first.Volume.CreateIndex, again.Volume.CreateIndex)
	must.Eq(t, "0700", again.Volume.Parameters["mode"])
	must.Eq(t, node.ID, again.Volume.NodeID)

	for _, c := range []struct {
		rpc  string
		vol  *structs.HostVolume
		want string
	}{
		{"HostVolume.Create", &structs.HostVolume{ID: first.Volume.ID, Name: "data", NodeID: other.ID}, "node_id cannot change"},
		{"HostVolume.Register", &structs.HostVolume{ID: first.Volume.ID, Name: "data", NodeID: node.ID, HostPath: "/srv"}, "plugin_id cannot change"},
	} {
		var resp structs.HostVolumeCreateResponse
		err := s.RPC(c.rpc, &structs.HostVolumeCreateRequest{Volume: c.vol}, &resp)
		must.ErrorIs(t, err, structs.ErrInvalid)
		must.ErrorContains(t, err, c.want)
	}
	var resp structs.HostVolumeCreateResponse
	err := s.RPC("HostVolume.Create", &structs.HostVolumeCreateRequest{Volume: &structs.HostVolume{ID: "nope", Name: "x"}}, &resp)
	must.ErrorIs(t, err, structs.ErrNotFound)
}
