package command

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAllocChecksCommand(t *testing.T) {
	const allocID = "5a2dcf32-0000-0000-0000-000000000001"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/allocations":
			_, _ = w.Write([]byte(`[{"ID":"` + allocID + `","Name":"example.cache[0]"}]`))
		case "/v1/allocation/" + allocID:
			_, _ = w.Write([]byte(`{"ID":"` + allocID + `","Name":"example.cache[0]","Namespace":"default"}`))
		case "/v1/client/allocation/" + allocID + "/checks":
			_, _ = w.Write([]byte(`{
			  "9f4e18fd0867cebb19a8fac3d7a1cf27":{"ID":"9f4e18fd0867cebb19a8fac3d7a1cf27","Check":"alive",
			    "Group":"example.cache[0]","Mode":"healthiness","Output":"nomad: tcp ok","Service":"redis-cache",
			    "Task":"","Status":"success","StatusCode":0,"Timestamp":1678374623},
			  "0b1c":{"ID":"0b1c","Check":"http","Group":"example.cache[0]","Mode":"readiness",
			    "Output":"nomad: http status 503","Service":"api","Task":"server","Status":"failure","StatusCode":503,
			    "Timestamp":1678374623}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)

	res := runCommand(t, srv.URL, runOpts{}, "alloc", "checks", "5a2d")
	if res.code != 0 {
		t.Fatalf("exit %d: %s %s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"Status of 2 Nomad Service Checks",
		"ID         = 0b1c\nName       = http\nGroup      = example.cache[0]\nTask       = server\nService    = api\n" +
			"Status     = failure\nStatusCode = 503\nMode       = readiness",
		"ID        = 9f4e18fd0867cebb19a8fac3d7a1cf27\nName      = alive\nGroup     = example.cache[0]\nTask      = (group)\n" +
			"Service   = redis-cache\nStatus    = success\nMode      = healthiness\nTimestamp = ",
		"Output    = nomad: tcp ok",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
	// api before redis-cache: ordered by service.
	if strings.Index(res.stdout, "Service    = api") > strings.Index(res.stdout, "Service   = redis-cache") {
		t.Errorf("checks not ordered by service:\n%s", res.stdout)
	}

	res = runCommand(t, srv.URL, runOpts{}, "alloc", "checks", "-json", allocID)
	if res.code != 0 || !strings.Contains(res.stdout, `"Status": "success"`) {
		t.Fatalf("json: %+v", res)
	}
	res = runCommand(t, srv.URL, runOpts{}, "alloc", "checks")
	if res.code != 1 || !strings.Contains(res.stderr, "This command takes one argument: <allocation>") {
		t.Fatalf("no args: %+v", res)
	}
	res = runCommand(t, srv.URL, runOpts{}, "alloc", "checks", "ffff")
	if res.code != 1 {
		t.Fatalf("unknown alloc: %+v", res)
	}
}
