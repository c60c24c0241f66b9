package agent

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client"
	"github.com/opennomad/nomad/structs"
)

// serviceJobJSON is a mock_driver job with a nomad group service "web"
// on a dynamic port; provider is spliced in.
func serviceJobJSON(provider string) string {
	return `{"Job":{"ID":"svc","Name":"svc","Type":"service","Datacenters":["dc1"],
  "TaskGroups":[{"Name":"g","Count":1,
    "Networks":[{"DynamicPorts":[{"Label":"http"}]}],
    "Services":[{"Name":"web","PortLabel":"http","Tags":["v1"]` + provider + `}],
    "Tasks":[{"Name":"t","Driver":"mock_driver","Config":{"run_for":"1h"},"Resources":{"CPU":100,"MemoryMB":64}}]}]}}`
}

// TestHTTP_ServicesEndToEnd runs a job with a native service on a dev
// agent with a client, and reads, chooses and deletes its registration
// through the routes; stopping the job removes what is left.
func TestHTTP_ServicesEndToEnd(t *testing.T) {
	cfg := devConfig(t)
	cfg.LogLevel = "WARN"
	cfg.Client.Options = map[string]string{client.OptionMockDriverEnable: "true"}
	a, err := NewAgent(cfg, testLogOutput())
	must.NoError(t, err)
	t.Cleanup(func() { a.Shutdown() })
	ra := &realAgent{t: t, agent: a, base: "http://" + a.HTTPAddr()}
	ra.waitForLeader()

	// Consul is refused by name, and nothing is registered.
	resp, body := ra.do("PUT", "/v1/jobs", serviceJobJSON(""))
	must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(body))
	must.StrContains(t, body, `group "g": service "web": provider: "consul" is not supported by this server`)

	resp, body = ra.do("PUT", "/v1/jobs", serviceJobJSON(`,"Provider":"nomad"`))
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	var regs []*structs.ServiceRegistration
	deadline := time.Now().Add(20 * time.Second)
	for len(regs) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the service was never registered")
		}
		time.Sleep(20 * time.Millisecond)
		resp, body = ra.do("GET", "/v1/service/web", "")
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
		must.NoError(t, json.Unmarshal([]byte(body), &regs))
	}
	must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"))
	reg := regs[0]
	must.Eq(t, "svc", reg.JobID)
	must.Eq(t, "default", reg.Namespace)
	must.Eq(t, []string{"v1"}, reg.Tags)
	must.Positive(t, reg.Port)
	must.NotEq(t, "", reg.Address)

	steps := []struct {
		name, method, path string
		status             int
		want               string
	}{
		{"list", "GET", "/v1/services", 200, `[{"Namespace":"default","Services":[{"ServiceName":"web","Tags":["v1"]}]}]`},
		{"list every namespace", "GET", "/v1/services?namespace=*", 200, `"ServiceName":"web"`},
		{"list another namespace", "GET", "/v1/services?namespace=other", 200, `[]`},
		{"unknown name", "GET", "/v1/service/nope", 200, `[]`},
		{"choose", "GET", "/v1/service/web?choose=1%7Cclient-a", 200, `"ID":"` + reg.ID + `"`},
		{"bad choose", "GET", "/v1/service/web?choose=x", 400,
			"failed to choose services: Parameter for choose must be in form '<number>|<key>'"},
		{"filter", "GET", "/v1/service/web?filter=" + strings.ReplaceAll(`Port == 1`, " ", "%20"), 200, `[]`},
		{"delete without id", "DELETE", "/v1/service/web/", 400, "missing service id"},
		{"delete unknown", "DELETE", "/v1/service/web/nope", 404, "service registration not found"},
		{"wrong method", "PUT", "/v1/service/web", 405, ""},
		{"job services", "GET", "/v1/job/svc/services", 200, `"ID":"` + reg.ID + `"`},
		{"unknown job services", "GET", "/v1/job/nope/services", 404, "job not found"},
		{"alloc services", "GET", "/v1/allocation/" + reg.AllocID + "/services", 200, `"ID":"` + reg.ID + `"`},
		{"unknown alloc services", "GET", "/v1/allocation/" + structs.GenerateUUID() + "/services", 404, "alloc not found"},
		{"delete", "DELETE", "/v1/service/web/" + reg.ID, 200, ""},
		{"gone", "GET", "/v1/service/web", 200, `[]`},
	}
	for _, st := range steps {
		resp, body := ra.do(st.method, st.path, "")
		must.Eq(t, st.status, resp.StatusCode, must.Sprintf("%s: %s", st.name, body))
		must.StrContains(t, body, st.want, must.Sprint(st.name))
	}
}

// TestHTTP_AllocChecks runs a job whose service points at the agent's
// own HTTP port with an http check of /v1/agent/health, and reads the
// check's result from the client route.
func TestHTTP_AllocChecks(t *testing.T) {
	cfg := devConfig(t)
	cfg.LogLevel = "WARN"
	cfg.Client.Options = map[string]string{client.OptionMockDriverEnable: "true"}
	a, err := NewAgent(cfg, testLogOutput())
	must.NoError(t, err)
	t.Cleanup(func() { a.Shutdown() })
	ra := &realAgent{t: t, agent: a, base: "http://" + a.HTTPAddr()}
	ra.waitForLeader()
	host, port, err := net.SplitHostPort(a.HTTPAddr())
	must.NoError(t, err)

	job := `{"Job":{"ID":"chk","Name":"chk","Type":"service","Datacenters":["dc1"],
  "TaskGroups":[{"Name":"g","Count":1,
    "Services":[{"Name":"api","PortLabel":"` + port + `","Address":"` + host + `","Provider":"nomad",
      "Checks":[{"Name":"health","Type":"http","Path":"/v1/agent/health","Interval":1000000000,"Timeout":1000000000}]}],
    "Tasks":[{"Name":"t","Driver":"mock_driver","Config":{"run_for":"1h"},"Resources":{"CPU":100,"MemoryMB":64}}]}]}}`
	resp, body := ra.do("PUT", "/v1/jobs", job)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	var checks map[string]client.CheckResult
	deadline := time.Now().Add(20 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the check never passed: %v", checks)
		}
		time.Sleep(20 * time.Millisecond)
		var regs []*structs.ServiceRegistration
		_, body := ra.do("GET", "/v1/service/api", "")
		must.NoError(t, json.Unmarshal([]byte(body), &regs))
		if len(regs) == 0 {
			continue
		}
		resp, body = ra.do("GET", "/v1/client/allocation/"+regs[0].AllocID+"/checks", "")
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
		must.NoError(t, json.Unmarshal([]byte(body), &checks))
		passed := false
		for id, c := range checks {
			if c.Status != client.CheckSuccess {
				continue
			}
			must.Eq(t, id, c.ID)
			must.Eq(t, "health", c.Check)
			must.Eq(t, "api", c.Service)
			must.Eq(t, 200, c.StatusCode)
			must.Eq(t, "healthiness", c.Mode)
			must.Eq(t, "chk.g[0]", c.Group)
			passed = true
		}
		if passed {
			must.MapLen(t, 1, checks)
			break
		}
	}
	resp, body = ra.do("GET", "/v1/client/allocation/"+structs.GenerateUUID()+"/checks", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode, must.Sprint(body))
}
