package command

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

// apiRecorder answers every request with status and body, recording the
// requests.
type apiRecorder struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []string
	status int
	answer string
}

func (a *apiRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.reqs = append(a.reqs, r)
	a.bodies = append(a.bodies, string(b))
	status, answer := a.status, a.answer
	a.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("X-Nomad-Index", "7")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

func (a *apiRecorder) last(t *testing.T) (*http.Request, string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	must.SliceNotEmpty(t, a.reqs)
	return a.reqs[len(a.reqs)-1], a.bodies[len(a.bodies)-1]
}

func TestOperatorAPI(t *testing.T) {
	rec := &apiRecorder{answer: `[{"ID":"web"}]`}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	env := map[string]string{api.EnvToken: "secret-1", api.EnvRegion: "global"}
	run := func(opts runOpts, args ...string) cmdResult {
		if opts.env == nil {
			opts.env = env
		}
		return runCommand(t, srv.URL, opts, append([]string{"operator", "api"}, args...)...)
	}

	res := run(runOpts{}, "-filter", `Status == "running"`, "/v1/jobs")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, `[{"ID":"web"}]`+"\n", res.stdout)
	req, _ := rec.last(t)
	must.Eq(t, "GET", req.Method)
	must.Eq(t, "/v1/jobs", req.URL.Path)
	must.Eq(t, `Status == "running"`, req.URL.Query().Get("filter"))
	must.Eq(t, "global", req.URL.Query().Get("region"))
	must.Eq(t, "secret-1", req.Header.Get("X-Nomad-Token"))

	// A body makes a POST; -X and -H are sent as given.
	res = run(runOpts{}, "-d", `{"a":1}`, "/v1/search")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	req, body := rec.last(t)
	must.Eq(t, "POST", req.Method)
	must.Eq(t, `{"a":1}`, body)

	file := filepath.Join(t.TempDir(), "job.json")
	must.NoError(t, os.WriteFile(file, []byte(`{"Job":{}}`), 0o600))
	res = run(runOpts{}, "-X", "put", "-H", "X-Extra: yes", "-d", "@"+file, "/v1/jobs?region=other")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	req, body = rec.last(t)
	must.Eq(t, "PUT", req.Method)
	must.Eq(t, "yes", req.Header.Get("X-Extra"))
	must.Eq(t, `{"Job":{}}`, body)
	must.Eq(t, "other", req.URL.Query().Get("region"), must.Sprint("the path's own query wins"))

	// A body piped to standard input.
	res = run(runOpts{stdin: `{"piped":true}`}, "/v1/search")
	must.Eq(t, 0, res.code)
	req, body = rec.last(t)
	must.Eq(t, "POST", req.Method)
	must.Eq(t, `{"piped":true}`, body)

	// An error answer: exit 1, the body on standard error.
	rec.mu.Lock()
	rec.status, rec.answer = http.StatusNotFound, "job not found"
	rec.mu.Unlock()
	res = run(runOpts{}, "/v1/job/nosuch")
	must.Eq(t, 1, res.code)
	must.StrContains(t, res.stderr, "404 Not Found: job not found")

	usage := [][]string{{}, {"jobs"}, {"-H", "novalue", "/v1/jobs"}, {"/v1/a", "/v1/b"}}
	for _, args := range usage {
		res := run(runOpts{}, args...)
		must.Eq(t, 1, res.code, must.Sprintf("%v", args))
	}
}

func TestOperatorAPI_DryRun(t *testing.T) {
	env := map[string]string{api.EnvToken: "secret-1", api.EnvNamespace: "team-a", api.EnvCACert: "/etc/ca.pem"}
	res := runCommand(t, "https://nomad.example:4646", runOpts{env: env},
		"operator", "api", "-dryrun", "-X", "PUT", "-d", `{"it's":1}`, "/v1/var/app")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, `curl \
  -X PUT \
  -H "X-Nomad-Token: ${NOMAD_TOKEN}" \
  --cacert '/etc/ca.pem' \
  --data-binary '{"it'\''s":1}' \
  'https://nomad.example:4646/v1/var/app?namespace=team-a'
`, res.stdout)
	must.StrNotContains(t, res.stdout, "secret-1")

	res = runCommand(t, "https://nomad.example:4646", runOpts{env: env},
		"operator", "api", "-dryrun", "-show-token", "/v1/jobs")
	must.Eq(t, 0, res.code)
	must.StrContains(t, res.stdout, `-H 'X-Nomad-Token: secret-1'`)

	// A full URL replaces the address.
	res = runCommand(t, "https://nomad.example:4646", runOpts{},
		"operator", "api", "-dryrun", "http://other:4646/v1/nodes?prefix=ab")
	must.Eq(t, 0, res.code)
	must.StrContains(t, res.stdout, `'http://other:4646/v1/nodes?prefix=ab'`)
}
