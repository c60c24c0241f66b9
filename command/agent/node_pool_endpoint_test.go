package agent

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestHTTP_NodePools drives the node pool routes of a real dev agent:
// Nomad's paths, statuses, bodies and texts, beside the node routes
// that share their prefix.
func TestHTTP_NodePools(t *testing.T) {
	ra := startDevAgent(t)
	ra.registerNode()
	batchNode := mock.Node(mock.NodePool("batch"))
	var reg structs.NodeUpdateResponse
	must.NoError(t, ra.agent.server.RPC("Node.Register", &structs.NodeRegisterRequest{Node: batchNode}, &reg))
	const job = `{"Job":{"ID":"j","Name":"j","Type":"batch","Datacenters":["dc1"],"NodePool":"%s","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"mock_driver","Config":{"run_for":"1s"}}]}]}}`

	steps := []struct {
		name, method, path, body string
		status                   int
		// want is in the body; for 200 writes the body is empty.
		want string
	}{
		{"built-in default", "GET", "/v1/node/pool/default", "", 200, `"Description":"Default node pool."`},
		{"built-in all", "GET", "/v1/node/pool/all", "", 200, `"Description":"Node pool with all nodes in the cluster."`},
		{"create by body", "PUT", "/v1/node/pools", `{"Name":"gpu","Description":"GPUs","Meta":{"rack":"r1"},"NodeIdentityTTL":"720h"}`, 200, ""},
		{"create by path", "POST", "/v1/node/pool/dev-1", `{"Name":"dev-1","NodeIdentityTTL":3600000000000}`, 200, ""},
		{"path and body differ", "PUT", "/v1/node/pool/x", `{"Name":"y"}`, 400, "Node pool name does not match request path"},
		{"invalid name", "PUT", "/v1/node/pools", `{"Name":"a*"}`, 400, `invalid node pool "a*": invalid name "a*"`},
		{"bad ttl", "PUT", "/v1/node/pools", `{"Name":"a","NodeIdentityTTL":"soon"}`, 400, "NodeIdentityTTL"},
		{"governance", "PUT", "/v1/node/pools", `{"Name":"g","SchedulerConfiguration":{"SchedulerAlgorithm":"spread"}}`, 400,
			`Feature "Node Pools Governance" is unlicensed`},
		{"built-in refused", "PUT", "/v1/node/pool/default", `{"Name":"default","Description":"mine"}`, 400,
			`modifying node pool "default" is not allowed`},
		{"read one", "GET", "/v1/node/pool/gpu", "", 200, `"NodeIdentityTTL":2592000000000`},
		{"ttl as number", "GET", "/v1/node/pool/dev-1", "", 200, `"NodeIdentityTTL":3600000000000`},
		{"missing", "GET", "/v1/node/pool/nope", "", 404, "node pool not found"},
		{"list by prefix", "GET", "/v1/node/pools?prefix=g", "", 200, `"Meta":{"rack":"r1"}`},
		{"a node is still a node", "GET", "/v1/node/" + noID, "", 404, "node not found"},
		{"nodes of all", "GET", "/v1/node/pool/all/nodes", "", 200, `"NodePool":"default"`},
		{"nodes of a missing pool", "GET", "/v1/node/pool/nope/nodes", "", 200, "[]"},
		{"nodes take no prefix", "GET", "/v1/node/pool/all/nodes?prefix=a", "", 400, "prefix argument not allowed"},
		{"job in a missing pool", "PUT", "/v1/jobs", strings.Replace(job, "%s", "nope", 1), 400,
			`job "j" is in nonexistent node pool "nope"`},
		{"job in gpu", "PUT", "/v1/jobs", strings.Replace(job, "%s", "gpu", 1), 200, `"EvalID"`},
		{"jobs of gpu", "GET", "/v1/node/pool/gpu/jobs", "", 200, `"ID":"j"`},
		{"jobs of all namespaces", "GET", "/v1/node/pool/gpu/jobs?namespace=*&meta=true", "", 200, `"ID":"j"`},
		{"jobs take no prefix", "GET", "/v1/node/pool/gpu/jobs?prefix=j", "", 400, "prefix argument not allowed"},
		{"delete built-in", "DELETE", "/v1/node/pool/all", "", 400, `deleting node pool "all" is not allowed`},
		{"delete with jobs", "DELETE", "/v1/node/pool/gpu", "", 400, `node pool "gpu" has non-terminal jobs in regions: [global]`},
		{"the node created its pool", "GET", "/v1/node/pool/batch/nodes", "", 200, batchNode.ID},
		{"delete with nodes", "DELETE", "/v1/node/pool/batch", "", 400, `node pool "batch" has nodes in regions: [global]`},
		{"delete missing", "DELETE", "/v1/node/pool/nope", "", 404, "node pool not found"},
		{"delete", "DELETE", "/v1/node/pool/dev-1", "", 200, ""},
		{"wrong method", "PATCH", "/v1/node/pool/gpu", "", 405, ""},
		{"wrong list method", "DELETE", "/v1/node/pools", "", 405, ""},
	}
	for _, st := range steps {
		resp, body := ra.do(st.method, st.path, st.body)
		must.Eq(t, st.status, resp.StatusCode, must.Sprintf("%s: %s", st.name, body))
		if st.status == 200 && st.method != "GET" && st.path != "/v1/jobs" {
			must.Eq(t, "", strings.TrimSpace(body), must.Sprint(st.name))
			must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"), must.Sprint(st.name))
		}
		must.StrContains(t, body, st.want, must.Sprint(st.name))
	}

	resp, body := ra.do("GET", "/v1/node/pools", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"))
	var list []*structs.NodePool
	must.NoError(t, json.Unmarshal([]byte(body), &list))
	names := make([]string, 0, len(list))
	for _, p := range list {
		names = append(names, p.Name)
	}
	must.Eq(t, []string{"all", "batch", "default", "gpu"}, names)
	must.Eq(t, 720*time.Hour, list[3].NodeIdentityTTL)

	// Pages, as every list: by name, the next page's first name as token.
	resp, body = ra.do("GET", "/v1/node/pools?per_page=2&next_token=b", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "gpu", resp.Header.Get("X-Nomad-NextToken"))
	must.StrContains(t, body, `"Name":"default"`)
	resp, body = ra.do("GET", `/v1/node/pools?filter=Description+contains+"GPU"`, "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.NoError(t, json.Unmarshal([]byte(body), &list))
	must.Len(t, 1, list)
}

// TestRealServer_NomadAPINodePools runs what Nomad's own api tests ask
// of node pools (TestNodePools_List, _PrefixList, _Info, _Register,
// _Delete) with HashiCorp's Go client against a real dev agent.
func TestRealServer_NomadAPINodePools(t *testing.T) {
	ra := startDevAgent(t)
	ra.registerNode()
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	pools := client.NodePools()
	names := func(list []*nomadapi.NodePool) []string {
		out := make([]string, 0, len(list))
		for _, p := range list {
			out = append(out, p.Name)
		}
		return out
	}

	// TestNodePools_List.
	list, qm, err := pools.List(nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.SliceContainsAll(t, names(list), []string{nomadapi.NodePoolAll, nomadapi.NodePoolDefault})
	list, _, err = pools.List(&nomadapi.QueryOptions{PerPage: 1})
	must.NoError(t, err)
	must.Eq(t, []string{nomadapi.NodePoolAll}, names(list))

	// TestNodePools_Register: the TTL round-trips.
	dev1 := &nomadapi.NodePool{Name: "dev-1", NodeIdentityTTL: 720 * time.Hour}
	_, err = pools.Register(dev1, nil)
	must.NoError(t, err)
	got, _, err := pools.Info(dev1.Name, nil)
	must.NoError(t, err)
	must.Eq(t, dev1.NodeIdentityTTL, got.NodeIdentityTTL)
	dev1.Description = "test"
	_, err = pools.Register(dev1, nil)
	must.NoError(t, err)
	got, _, err = pools.Info(dev1.Name, nil)
	must.NoError(t, err)
	must.Eq(t, "test", got.Description)
	must.Eq(t, dev1.NodeIdentityTTL, got.NodeIdentityTTL)

	// TestNodePools_PrefixList.
	list, _, err = pools.PrefixList("d", nil)
	must.NoError(t, err)
	must.Eq(t, []string{nomadapi.NodePoolDefault, "dev-1"}, names(list))
	list, _, err = pools.PrefixList("d", &nomadapi.QueryOptions{PerPage: 1})
	must.NoError(t, err)
	must.Eq(t, []string{nomadapi.NodePoolDefault}, names(list))

	// TestNodePools_Info.
	got, _, err = pools.Info(nomadapi.NodePoolDefault, nil)
	must.NoError(t, err)
	must.Eq(t, nomadapi.NodePoolDefault, got.Name)
	_, _, err = pools.Info("node/pool", nil)
	must.ErrorContains(t, err, "not found")
	var ure nomadapi.UnexpectedResponseError
	must.True(t, errors.As(err, &ure))
	must.Eq(t, http.StatusNotFound, ure.StatusCode())

	// TestNodePools_Delete.
	_, err = pools.Delete(dev1.Name, nil)
	must.NoError(t, err)
	_, _, err = pools.Info(dev1.Name, nil)
	must.ErrorContains(t, err, "not found")
	_, err = pools.Delete("node/pool", nil)
	must.ErrorContains(t, err, "not found")

	// The lists of a pool.
	nodes, _, err := pools.ListNodes(nomadapi.NodePoolAll, nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, nodes)
	jobs, _, err := pools.ListJobs(nomadapi.NodePoolDefault, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, jobs)
}

// TestEventStream_NodePool: pool writes and removals are on the NodePool
// topic, keyed by name, with the pool as payload.
func TestEventStream_NodePool(t *testing.T) {
	h := newTestHTTP(t)
	sc := openStream(t, h, "?topic=NodePool")
	must.NoError(t, h.rpc.state.UpsertNodePools(5, []*structs.NodePool{{Name: "gpu", NodeIdentityTTL: time.Hour}}))
	must.NoError(t, h.rpc.state.DeleteNodePools(6, []string{"gpu"}))

	ev := decodeLine(t, nextLine(t, sc))
	must.Eq(t, 5, ev.Index)
	must.Eq(t, "NodePool", string(ev.Events[0].Topic))
	must.Eq(t, "NodePoolUpserted", ev.Events[0].Type)
	must.Eq(t, "gpu", ev.Events[0].Key)
	pool, err := ev.Events[0].NodePool()
	must.NoError(t, err)
	must.Eq(t, time.Hour, pool.NodeIdentityTTL)

	ev = decodeLine(t, nextLine(t, sc))
	must.Eq(t, 6, ev.Index)
	must.Eq(t, "NodePoolDeleted", ev.Events[0].Type)
}
