package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Node.Usage sums the live allocations per node, leaves out terminal
// ones, lists each allocation only when asked, and answers a token only
// the allocations of the namespaces it may read jobs in.
func TestNodeEndpoint_Usage(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	defaultReader := aclTestToken(t, s, boot.SecretID, "default-reader", `namespace "default" { policy = "read" }
node { policy = "read" }`, 0)
	nodeOnly := aclTestToken(t, s, boot.SecretID, "node-only", `node { policy = "read" }`, 0)
	nsOnly := aclTestToken(t, s, boot.SecretID, "ns-only", `namespace "*" { policy = "read" }`, 0)

	n1, n2 := mock.Node(), mock.Node()
	must.NoError(t, s.State().UpsertNamespaces(latestIndex(t, s)+1, []*structs.Namespace{{Name: "prod"}}))
	// A new allocation is stored only for a job that is.
	jobIn := map[string]*structs.Job{}
	for _, ns := range []string{"default", "prod"} {
		job := mock.Job()
		job.Namespace = ns
		must.NoError(t, s.State().UpsertJob(latestIndex(t, s)+1, job))
		stored, err := s.State().JobByID(nil, ns, job.ID)
		must.NoError(t, err)
		jobIn[ns] = stored
	}
	alloc := func(node *structs.Node, ns string, cpu, mem int64) *structs.Allocation {
		a := mock.Alloc(mock.OnNode(node), mock.ForJob(jobIn[ns], 0))
		a.AllocatedResources = &structs.AllocatedResources{
			Tasks:  map[string]*structs.AllocatedTaskResources{"web": {Cpu: structs.AllocatedCpuResources{CpuShares: cpu}, Memory: structs.AllocatedMemoryResources{MemoryMB: mem}}},
			Shared: structs.AllocatedSharedResources{DiskMB: 10},
		}
		return a
	}
	a1 := alloc(n1, "default", 100, 256)
	a2 := alloc(n1, "prod", 500, 1024)
	a3 := alloc(n2, "default", 200, 128)
	done := alloc(n2, "default", 900, 900)
	done.ClientStatus = structs.AllocClientStatusComplete
	must.NoError(t, s.State().UpsertAllocs(latestIndex(t, s)+1, []*structs.Allocation{a1, a2, a3, done}))

	usage := func(secret string, allocs bool, minIndex uint64) (*structs.NodeUsageResponse, error) {
		var out structs.NodeUsageResponse
		err := s.RPC("Node.Usage", &structs.NodeUsageRequest{Allocs: allocs,
			QueryOptions: structs.QueryOptions{AuthToken: secret, MinQueryIndex: minIndex, MaxQueryTime: 5 * time.Second}}, &out)
		return &out, err
	}
	byNode := func(out *structs.NodeUsageResponse) map[string]*structs.NodeUsage {
		m := map[string]*structs.NodeUsage{}
		for _, u := range out.Nodes {
			m[u.NodeID] = u
		}
		return m
	}

	cases := []struct {
		name      string
		secret    string
		allocs    bool
		denied    bool
		n1CPU     int64
		n1Count   int
		n2Present bool
	}{
		{name: "management sees every namespace", secret: boot.SecretID, allocs: true, n1CPU: 600, n1Count: 2, n2Present: true},
		{name: "a default reader sees default only", secret: defaultReader, n1CPU: 100, n1Count: 1, n2Present: true},
		{name: "node read without jobs sees no allocation", secret: nodeOnly},
		{name: "job read without node read is refused", secret: nsOnly, denied: true},
		{name: "the anonymous token is refused", secret: "", denied: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := usage(c.secret, c.allocs, 0)
			if c.denied {
				must.True(t, structs.IsKind(err, structs.ErrPermissionDenied), must.Sprint(err))
				return
			}
			must.NoError(t, err)
			must.Positive(t, out.Index)
			got := byNode(out)
			if c.n1Count == 0 {
				must.MapEmpty(t, got)
				return
			}
			must.Eq(t, c.n1CPU, got[n1.ID].CPU)
			must.Eq(t, c.n1Count, got[n1.ID].AllocCount)
			must.Eq(t, c.n2Present, got[n2.ID] != nil)
			// The completed allocation holds nothing.
			must.Eq(t, int64(200), got[n2.ID].CPU)
			must.Eq(t, int64(128), got[n2.ID].MemoryMB)
			must.Eq(t, int64(10), got[n2.ID].DiskMB)
			if c.allocs {
				must.Len(t, 2, got[n1.ID].Allocs)
				for _, a := range got[n1.ID].Allocs {
					must.True(t, (a.ID == a1.ID && a.CPU == 100 && a.Namespace == "default") || (a.ID == a2.ID && a.CPU == 500 && a.Namespace == "prod"), must.Sprint(a))
				}
			} else {
				must.SliceEmpty(t, got[n1.ID].Allocs)
			}
		})
	}

	t.Run("a blocking query wakes on an allocation change", func(t *testing.T) {
		first, err := usage(boot.SecretID, false, 0)
		must.NoError(t, err)
		a4 := alloc(n2, "default", 50, 50)
		go func() {
			time.Sleep(50 * time.Millisecond)
			_ = s.State().UpsertAllocs(first.Index+1, []*structs.Allocation{a4})
		}()
		out, err := usage(boot.SecretID, false, first.Index)
		must.NoError(t, err)
		must.Greater(t, first.Index, out.Index)
		must.Eq(t, int64(250), byNode(out)[n2.ID].CPU)
	})
}
