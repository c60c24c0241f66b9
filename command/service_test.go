package command

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serviceAgent answers the service routes with fixed registrations of
// "web" in two namespaces, and records deletions.
func serviceAgent(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	var deleted []string
	web := `{"ID":"_nomad-task-5a2dcf32-0000-0000-0000-000000000001-group-web-web-http","ServiceName":"web",` +
		`"Namespace":"default","NodeID":"0b8af6a0-0000-0000-0000-000000000002","Datacenter":"dc1","JobID":"example",` +
		`"AllocID":"5a2dcf32-0000-0000-0000-000000000001","Tags":["db","cache"],"Address":"127.0.0.1","Port":29718,` +
		`"CreateIndex":10,"ModifyIndex":10}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Nomad-Index", "10")
		switch {
		case r.URL.Path == "/v1/services" && r.URL.Query().Get("namespace") == "*":
			_, _ = w.Write([]byte(`[{"Namespace":"default","Services":[{"ServiceName":"web","Tags":["db","cache"]}]},` +
				`{"Namespace":"team","Services":[{"ServiceName":"api","Tags":[]}]}]`))
		case r.URL.Path == "/v1/services" && r.URL.Query().Get("namespace") == "empty":
			_, _ = w.Write([]byte(`[]`))
		case r.URL.Path == "/v1/services":
			_, _ = w.Write([]byte(`[{"Namespace":"default","Services":[{"ServiceName":"web","Tags":["db","cache"]}]}]`))
		case r.URL.Path == "/v1/service/web" && r.Method == http.MethodGet:
			_, _ = w.Write([]byte("[" + web + "]"))
		case r.URL.Path == "/v1/service/nope":
			_, _ = w.Write([]byte(`[]`))
		case strings.HasPrefix(r.URL.Path, "/v1/service/web/") && r.Method == http.MethodDelete:
			id := strings.TrimPrefix(r.URL.Path, "/v1/service/web/")
			if id == "missing" {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte("service registration not found"))
				return
			}
			deleted = append(deleted, id)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &deleted
}

func TestServiceCommands(t *testing.T) {
	srv, deleted := serviceAgent(t)
	cases := []struct {
		name     string
		args     []string
		wantCode int
		out      []string
		err      string
	}{
		{"list", []string{"service", "list"}, 0, []string{"Service Name  Tags", "web           [cache,db]"}, ""},
		{"list every namespace", []string{"service", "list", "-namespace=*"}, 0,
			[]string{"Service Name  Namespace  Tags", "web           default    [cache,db]", "api           team       []"}, ""},
		{"list none", []string{"service", "list", "-namespace=empty"}, 0, []string{"No service registrations found"}, ""},
		{"list json", []string{"service", "list", "-json"}, 0, []string{`"ServiceName": "web"`}, ""},
		{"list template", []string{"service", "list", "-t", "{{range .}}{{.Namespace}}{{end}}"}, 0, []string{"default"}, ""},
		{"info", []string{"service", "info", "web"}, 0, []string{
			"Job ID   Address          Tags        Node ID   Alloc ID",
			"example  127.0.0.1:29718  [cache,db]  0b8af6a0  5a2dcf32"}, ""},
		{"info verbose", []string{"service", "info", "-verbose", "web"}, 0, []string{
			"ID           = _nomad-task-5a2dcf32-0000-0000-0000-000000000001-group-web-web-http",
			"Service Name = web", "Namespace    = default", "Job ID       = example",
			"Alloc ID     = 5a2dcf32-0000-0000-0000-000000000001", "Node ID      = 0b8af6a0-0000-0000-0000-000000000002",
			"Datacenter   = dc1", "Address      = 127.0.0.1:29718", "Tags         = [cache,db]"}, ""},
		{"info none", []string{"service", "info", "nope"}, 0, []string{"No service registrations found"}, ""},
		{"info without name", []string{"service", "info"}, 1, nil, "This command takes one argument: <service name>"},
		{"delete", []string{"service", "delete", "web", "_nomad-task-x"}, 0, []string{"Successfully deleted service registration"}, ""},
		{"delete missing", []string{"service", "delete", "web", "missing"}, 1, nil, "Error deleting service registration"},
		{"delete one argument", []string{"service", "delete", "web"}, 1, nil, "This command takes two arguments"},
		{"group help", []string{"service"}, 1, nil, "Usage: nomad service <subcommand>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, srv.URL, runOpts{}, tc.args...)
			if res.code != tc.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			for _, s := range tc.out {
				if !strings.Contains(res.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, res.stdout)
				}
			}
			if !strings.Contains(res.stderr, tc.err) {
				t.Errorf("stderr lacks %q:\n%s", tc.err, res.stderr)
			}
		})
	}
	if len(*deleted) != 1 || (*deleted)[0] != "_nomad-task-x" {
		t.Fatalf("deleted = %v", *deleted)
	}
}
