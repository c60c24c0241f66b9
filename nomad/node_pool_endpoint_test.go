package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestNodePoolEndpoint_BuiltInsWrittenAtStart: a new cluster's leader
// writes the "all" and "default" pools before it serves anything, once,
// and nobody can change or delete them.
func TestNodePoolEndpoint_BuiltInsWrittenAtStart(t *testing.T) {
	s := newTestServer(t, nil)
	var list structs.NodePoolListResponse
	must.NoError(t, s.RPC("NodePool.List", &structs.NodePoolListRequest{}, &list))
	must.Eq(t, []string{"all", "default"}, nodePoolNames(list.NodePools))
	must.Eq(t, structs.NodePoolAllDescription, list.NodePools[0].Description)
	must.Positive(t, list.Index)

	before := list.NodePools[1].ModifyIndex
	must.NoError(t, s.ensureBuiltInNodePools())
	after, err := s.State().NodePoolByName(nil, "default")
	must.NoError(t, err)
	must.Eq(t, before, after.ModifyIndex, must.Sprint("taking office again rewrites nothing"))

	var wr structs.GenericResponse
	err = s.RPC("NodePool.DeleteNodePools", &structs.NodePoolDeleteRequest{Names: []string{"all"}}, &wr)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, `deleting node pool "all" is not allowed`)
	err = s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "default", Description: "mine"}}}, &wr)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, `modifying node pool "default" is not allowed`)
}

// TestNodePoolEndpoint_Lifecycle writes, reads, lists and deletes pools,
// with the refusals on the way, and lists a pool's nodes and jobs.
func TestNodePoolEndpoint_Lifecycle(t *testing.T) {
	s := newTestServer(t, nil)
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{
		{Name: "gpu", Description: "GPUs", Meta: map[string]string{"rack": "r1"}, NodeIdentityTTL: 720 * time.Hour},
		{Name: "dev-1"},
	}}, &wr))
	must.Positive(t, wr.Index)

	invalid := []struct {
		name  string
		pools []*structs.NodePool
		want  string
	}{
		{"none", nil, "must specify at least one node pool"},
		{"wildcard", []*structs.NodePool{{Name: "*"}}, `invalid node pool "*": invalid name "*"`},
		{"governance", []*structs.NodePool{{Name: "g", SchedulerConfiguration: &structs.NodePoolSchedulerConfiguration{}}},
			`invalid node pool "g": Feature "Node Pools Governance" is unlicensed`},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			err := s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{NodePools: c.pools}, &wr)
			must.ErrorIs(t, err, structs.ErrInvalid)
			must.ErrorContains(t, err, c.want)
		})
	}

	var list structs.NodePoolListResponse
	must.NoError(t, s.RPC("NodePool.List", &structs.NodePoolListRequest{}, &list))
	must.Eq(t, []string{"all", "default", "dev-1", "gpu"}, nodePoolNames(list.NodePools))
	must.NoError(t, s.RPC("NodePool.List", &structs.NodePoolListRequest{
		QueryOptions: structs.QueryOptions{Prefix: "d"}}, &list))
	must.Eq(t, []string{"default", "dev-1"}, nodePoolNames(list.NodePools))

	var got structs.SingleNodePoolResponse
	must.NoError(t, s.RPC("NodePool.GetNodePool", &structs.NodePoolSpecificRequest{Name: "gpu"}, &got))
	must.Eq(t, "GPUs", got.NodePool.Description)
	must.Eq(t, 720*time.Hour, got.NodePool.NodeIdentityTTL)
	must.NoError(t, s.RPC("NodePool.GetNodePool", &structs.NodePoolSpecificRequest{Name: "nope"}, &got))
	must.Nil(t, got.NodePool)

	// A node in gpu and a job in dev-1 keep them from being deleted.
	node := mock.Node(mock.NodePool("gpu"))
	var nr structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &nr))
	job := mock.Job()
	job.NodePool = "dev-1"
	var reg structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reg))

	var nodes structs.NodePoolNodesResponse
	must.NoError(t, s.RPC("NodePool.ListNodes", &structs.NodePoolNodesRequest{Name: "gpu"}, &nodes))
	must.Len(t, 1, nodes.Nodes)
	must.Eq(t, node.ID, nodes.Nodes[0].ID)
	must.NoError(t, s.RPC("NodePool.ListNodes", &structs.NodePoolNodesRequest{Name: "all"}, &nodes))
	must.Len(t, 1, nodes.Nodes)
	must.NoError(t, s.RPC("NodePool.ListNodes", &structs.NodePoolNodesRequest{Name: "nope"}, &nodes))
	must.Len(t, 0, nodes.Nodes)

	var jobs structs.NodePoolJobsResponse
	must.NoError(t, s.RPC("NodePool.ListJobs", &structs.NodePoolJobsRequest{Name: "dev-1"}, &jobs))
	must.Len(t, 1, jobs.Jobs)
	must.Eq(t, job.ID, jobs.Jobs[0].ID)
	must.NoError(t, s.RPC("NodePool.ListJobs", &structs.NodePoolJobsRequest{Name: "gpu"}, &jobs))
	must.Len(t, 0, jobs.Jobs)

	deletes := []struct {
		names []string
		kind  error
		want  string
	}{
		{nil, structs.ErrInvalid, "must specify at least one node pool to delete"},
		{[]string{"nope"}, structs.ErrNotFound, "node pool not found"},
		{[]string{"gpu"}, structs.ErrInvalid, `node pool "gpu" has nodes in regions: [global]`},
		{[]string{"dev-1"}, structs.ErrInvalid, `node pool "dev-1" has non-terminal jobs in regions: [global]`},
	}
	for _, c := range deletes {
		err := s.RPC("NodePool.DeleteNodePools", &structs.NodePoolDeleteRequest{Names: c.names}, &wr)
		must.ErrorIs(t, err, c.kind, must.Sprintf("%v", c.names))
		must.ErrorContains(t, err, c.want)
	}

	must.NoError(t, s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "spare"}}}, &wr))
	must.NoError(t, s.RPC("NodePool.DeleteNodePools", &structs.NodePoolDeleteRequest{Names: []string{"spare"}}, &wr))
	must.NoError(t, s.RPC("NodePool.GetNodePool", &structs.NodePoolSpecificRequest{Name: "spare"}, &got))
	must.Nil(t, got.NodePool)
}

// TestNodePoolEndpoint_Registration: a node registers in the default
// pool unless it names one, creates a pool nobody created, and may not
// join "all"; a job naming a missing pool is refused at register and
// plan.
func TestNodePoolEndpoint_Registration(t *testing.T) {
	s := newTestServer(t, nil)
	var nr structs.NodeUpdateResponse

	plain := mock.Node(mock.NodePool(""))
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: plain}, &nr))
	stored, err := s.State().NodeByID(nil, plain.ID)
	must.NoError(t, err)
	must.Eq(t, "default", stored.NodePool)

	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mock.Node(mock.NodePool("batch"))}, &nr))
	pool, err := s.State().NodePoolByName(nil, "batch")
	must.NoError(t, err)
	must.NotNil(t, pool, must.Sprint("the node's registration created its pool"))
	must.Eq(t, structs.DefaultNodeIdentityTTL, pool.NodeIdentityTTL)

	before, _ := s.State().LatestIndex()
	err = s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mock.Node(mock.NodePool("all"))}, &nr)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, `node is not allowed to register in node pool "all"`)
	err = s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mock.Node(mock.NodePool("a/b"))}, &nr)
	must.ErrorContains(t, err, `invalid node pool "a/b"`)
	after, _ := s.State().LatestIndex()
	must.Eq(t, before, after, must.Sprint("a refused registration writes nothing"))

	job := mock.Job()
	job.NodePool = "nope"
	want := `job "` + job.ID + `" is in nonexistent node pool "nope"`
	var reg structs.JobRegisterResponse
	err = s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job.Copy()}, &reg)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, want)
	var plan structs.JobPlanResponse
	err = s.RPC("Job.Plan", &structs.JobPlanRequest{Job: job.Copy()}, &plan)
	must.ErrorContains(t, err, want)

	job.NodePool = "all"
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job.Copy()}, &reg))
	job.NodePool = "batch"
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job.Copy()}, &reg))
}

// TestNodePoolEndpoint_ACL: the node_pool rules decide: read to see a
// pool (lists filtered), write to write it, delete to remove it; listing
// a pool's nodes also needs node read and its jobs list-jobs.
func TestNodePoolEndpoint_ACL(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "gpu_big"}, {Name: "gpu_small"}, {Name: "web"}}, WriteRequest: asTokenWrite(mgmt)}, &wr))

	token := func(name, rules string) string {
		must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
			{Name: name, Rules: rules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
		var created structs.ACLTokenUpsertResponse
		must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
			{Name: name, Type: structs.ACLClientToken, Policies: []string{name}}}, WriteRequest: asTokenWrite(mgmt)}, &created))
		return created.Tokens[0].SecretID
	}
	// The glob grants write on gpu_*; the exact label wins for gpu_big.
	gpu := token("gpu", `node_pool "gpu_*" { policy = "write" }
node_pool "gpu_big" { policy = "read" }
node { policy = "read" }
namespace "default" { policy = "read" }`)
	deleter := token("deleter", `node_pool "web" { capabilities = ["delete"] }`)

	lists := []struct {
		name   string
		secret string
		want   []string
		err    error
	}{
		{"management sees all", mgmt, []string{"all", "default", "gpu_big", "gpu_small", "web"}, nil},
		{"gpu token sees gpu pools", gpu, []string{"gpu_big", "gpu_small"}, nil},
		{"delete alone reads nothing", deleter, []string{}, nil},
		{"anonymous sees none", "", []string{}, nil},
		{"unknown secret", structs.GenerateUUID(), nil, structs.ErrPermissionDenied},
	}
	for _, c := range lists {
		t.Run("list/"+c.name, func(t *testing.T) {
			var list structs.NodePoolListResponse
			err := s.RPC("NodePool.List", &structs.NodePoolListRequest{QueryOptions: asTokenQuery(c.secret)}, &list)
			if c.err != nil {
				must.ErrorIs(t, err, c.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, c.want, nodePoolNames(list.NodePools))
		})
	}

	calls := []struct {
		name   string
		method string
		reply  interface{}
		args   interface{}
		err    error
	}{
		{"get own pool", "NodePool.GetNodePool", &structs.SingleNodePoolResponse{}, &structs.NodePoolSpecificRequest{Name: "gpu_big", QueryOptions: asTokenQuery(gpu)}, nil},
		{"get other pool", "NodePool.GetNodePool", &structs.SingleNodePoolResponse{}, &structs.NodePoolSpecificRequest{Name: "web", QueryOptions: asTokenQuery(gpu)}, structs.ErrPermissionDenied},
		{"anonymous get", "NodePool.GetNodePool", &structs.SingleNodePoolResponse{}, &structs.NodePoolSpecificRequest{Name: "default"}, structs.ErrPermissionDenied},
		{"write by glob", "NodePool.UpsertNodePools", &structs.GenericResponse{}, &structs.NodePoolUpsertRequest{
			NodePools: []*structs.NodePool{{Name: "gpu_small", Description: "x"}}, WriteRequest: asTokenWrite(gpu)}, nil},
		{"new pool by glob", "NodePool.UpsertNodePools", &structs.GenericResponse{}, &structs.NodePoolUpsertRequest{
			NodePools: []*structs.NodePool{{Name: "gpu_new"}}, WriteRequest: asTokenWrite(gpu)}, nil},
		{"exact label wins", "NodePool.UpsertNodePools", &structs.GenericResponse{}, &structs.NodePoolUpsertRequest{
			NodePools: []*structs.NodePool{{Name: "gpu_big", Description: "x"}}, WriteRequest: asTokenWrite(gpu)}, structs.ErrPermissionDenied},
		{"write elsewhere", "NodePool.UpsertNodePools", &structs.GenericResponse{}, &structs.NodePoolUpsertRequest{
			NodePools: []*structs.NodePool{{Name: "web"}}, WriteRequest: asTokenWrite(gpu)}, structs.ErrPermissionDenied},
		{"delete needs delete", "NodePool.DeleteNodePools", &structs.GenericResponse{}, &structs.NodePoolDeleteRequest{
			Names: []string{"gpu_big"}, WriteRequest: asTokenWrite(gpu)}, structs.ErrPermissionDenied},
		{"write implies delete", "NodePool.DeleteNodePools", &structs.GenericResponse{}, &structs.NodePoolDeleteRequest{
			Names: []string{"gpu_new"}, WriteRequest: asTokenWrite(gpu)}, nil},
		{"delete capability", "NodePool.DeleteNodePools", &structs.GenericResponse{}, &structs.NodePoolDeleteRequest{
			Names: []string{"web"}, WriteRequest: asTokenWrite(deleter)}, nil},
		{"nodes", "NodePool.ListNodes", &structs.NodePoolNodesResponse{}, &structs.NodePoolNodesRequest{Name: "gpu_big", QueryOptions: asTokenQuery(gpu)}, nil},
		{"nodes without node read", "NodePool.ListNodes", &structs.NodePoolNodesResponse{}, &structs.NodePoolNodesRequest{Name: "web", QueryOptions: asTokenQuery(deleter)}, structs.ErrPermissionDenied},
		{"jobs", "NodePool.ListJobs", &structs.NodePoolJobsResponse{}, &structs.NodePoolJobsRequest{Name: "gpu_big", QueryOptions: asTokenQuery(gpu)}, nil},
		{"jobs without list-jobs", "NodePool.ListJobs", &structs.NodePoolJobsResponse{}, &structs.NodePoolJobsRequest{Name: "gpu_big",
			QueryOptions: structs.QueryOptions{AuthToken: gpu, Namespace: "other"}}, structs.ErrPermissionDenied},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := s.RPC(c.method, c.args, c.reply)
			if c.err != nil {
				must.ErrorIs(t, err, c.err)
				return
			}
			must.NoError(t, err)
		})
	}
}

func nodePoolNames(list []*structs.NodePool) []string {
	names := make([]string, 0, len(list))
	for _, p := range list {
		names = append(names, p.Name)
	}
	return names
}
