package agent

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestHTTP_Namespaces drives the namespace routes of a real dev agent:
// Nomad's paths, statuses, bodies and texts.
func TestHTTP_Namespaces(t *testing.T) {
	ra := startDevAgent(t)

	steps := []struct {
		name, method, path, body string
		status                   int
		// want is in the body; for 200 writes the body is empty.
		want string
	}{
		{"the default namespace exists", "GET", "/v1/namespace/default", "", 200, `"Description":"Default shared namespace"`},
		{"create by path", "PUT", "/v1/namespace/team-a", `{"Name":"team-a","Description":"A","Meta":{"owner":"a"}}`, 200, ""},
		{"create by body", "POST", "/v1/namespace", `{"Name":"team-b","Capabilities":{"EnabledTaskDrivers":["exec"]}}`, 200, ""},
		{"path and body differ", "PUT", "/v1/namespace/x", `{"Name":"y"}`, 400, "Namespace name does not match request path"},
		{"invalid name", "PUT", "/v1/namespace", `{"Name":"*"}`, 400, `Invalid namespace "*": invalid name "*". Must match regex ^[a-zA-Z0-9-]{1,128}$`},
		{"quota refused", "PUT", "/v1/namespace", `{"Name":"q","Quota":"gold"}`, 400, `namespace "q" using non-existent quota "gold"`},
		{"read one", "GET", "/v1/namespace/team-a", "", 200, `"Meta":{"owner":"a"}`},
		{"missing", "GET", "/v1/namespace/nope", "", 404, "Namespace not found"},
		{"list by prefix", "GET", "/v1/namespaces?prefix=team-b", "", 200, `"EnabledTaskDrivers":["exec"]`},
		{"job into a missing namespace", "PUT", "/v1/jobs?namespace=nope",
			`{"Job":{"ID":"j","Name":"j","Type":"batch","Datacenters":["dc1"],"TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"mock_driver","Config":{"run_for":"1s"}}]}]}}`,
			400, `job "j" is in nonexistent namespace "nope"`},
		{"delete default", "DELETE", "/v1/namespace/default", "", 400, "can not delete default namespace"},
		{"delete missing", "DELETE", "/v1/namespace/nope", "", 404, "namespace not found"},
		{"delete", "DELETE", "/v1/namespace/team-b", "", 200, ""},
		{"wrong method", "PATCH", "/v1/namespace/team-a", "", 405, ""},
	}
	for _, st := range steps {
		resp, body := ra.do(st.method, st.path, st.body)
		must.Eq(t, st.status, resp.StatusCode, must.Sprintf("%s: %s", st.name, body))
		if st.status == 200 && st.method != "GET" {
			must.Eq(t, "", strings.TrimSpace(body), must.Sprint(st.name))
			must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"), must.Sprint(st.name))
		}
		must.StrContains(t, body, st.want, must.Sprint(st.name))
	}

	resp, body := ra.do("GET", "/v1/namespaces", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"))
	var list []*structs.Namespace
	must.NoError(t, json.Unmarshal([]byte(body), &list))
	names := make([]string, 0, len(list))
	for _, n := range list {
		names = append(names, n.Name)
	}
	must.Eq(t, []string{"default", "team-a"}, names)
	must.Positive(t, list[1].CreateIndex)
	must.Eq(t, list[1].CreateIndex, list[1].ModifyIndex)
}

// TestRealServer_NomadAPINamespaces runs what Nomad's own api tests ask
// of namespaces (TestNamespaces_Register, _Register_Invalid, _Info,
// _Delete, _List, TestNamespace_NotFound) with HashiCorp's Go client
// against a real dev agent.
func TestRealServer_NomadAPINamespaces(t *testing.T) {
	ra := startDevAgent(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	namespaces := client.Namespaces()

	_, _, err = namespaces.Info("foo", nil)
	must.ErrorContains(t, err, "not found")
	var ure nomadapi.UnexpectedResponseError
	must.True(t, errors.As(err, &ure))
	must.Eq(t, http.StatusNotFound, ure.StatusCode())

	_, err = namespaces.Register(&nomadapi.Namespace{Name: "*"}, nil)
	must.ErrorContains(t, err, `invalid name "*".`)

	wm, err := namespaces.Register(&nomadapi.Namespace{Name: "foobbb", Description: "b",
		Capabilities: &nomadapi.NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}}}, nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)
	_, err = namespaces.Register(&nomadapi.Namespace{Name: "fooaaa", Meta: map[string]string{"k": "v"}}, nil)
	must.NoError(t, err)

	// Nomad's client sorts newest first.
	list, qm, err := namespaces.List(nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.Len(t, 3, list)
	must.Eq(t, "fooaaa", list[0].Name)
	must.Eq(t, "default", list[2].Name)
	prefixed, _, err := namespaces.PrefixList("foob", nil)
	must.NoError(t, err)
	must.Len(t, 1, prefixed)
	must.Eq(t, []string{"raw_exec"}, prefixed[0].Capabilities.DisabledTaskDrivers)

	info, _, err := namespaces.Info("fooaaa", nil)
	must.NoError(t, err)
	must.Eq(t, "v", info.Meta["k"])

	_, err = namespaces.Delete("fooaaa", nil)
	must.NoError(t, err)
	list, _, err = namespaces.List(nil)
	must.NoError(t, err)
	must.Len(t, 2, list)
}
