package client

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// healthServer answers /health with 200 and anything else with 503.
func healthServer(t *testing.T) (string, int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	must.NoError(t, err)
	host, port, err := net.SplitHostPort(u.Host)
	must.NoError(t, err)
	p, err := strconv.Atoi(port)
	must.NoError(t, err)
	return host, p
}

// closedPort is a local port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	must.NoError(t, l.Close())
	return port
}

func TestProber(t *testing.T) {
	host, port := healthServer(t)
	closed := closedPort(t)
	cases := []struct {
		name   string
		check  structs.ServiceCheck
		port   int
		status string
		code   int
		output string
	}{
		{"http ok", structs.ServiceCheck{Type: "http", Path: "/health"}, port, CheckSuccess, 200, "nomad: http ok"},
		{"http 503", structs.ServiceCheck{Type: "http", Path: "/other"}, port, CheckFailure, 503, "nomad: http status 503"},
		{"http refused", structs.ServiceCheck{Type: "http", Path: "/health"}, closed, CheckFailure, 0, "nomad: "},
		{"tcp ok", structs.ServiceCheck{Type: "tcp"}, port, CheckSuccess, 0, "nomad: tcp ok"},
		{"tcp refused", structs.ServiceCheck{Type: "tcp"}, closed, CheckFailure, 0, "nomad: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.check.Name, tc.check.Timeout = "alive", 2*time.Second
			spec := checkSpec{id: "c1", group: "web.web[0]", service: "web", check: tc.check, addr: host, port: tc.port}
			now := time.Unix(1_700_000_000, 0)
			res := newProber(spec).run(now)
			must.Eq(t, tc.status, res.Status)
			must.Eq(t, tc.code, res.StatusCode)
			must.StrHasPrefix(t, tc.output, res.Output)
			must.Eq(t, now.Unix(), res.Timestamp)
			must.Eq(t, CheckModeHealthiness, res.Mode)
			must.Eq(t, "alive", res.Check)
			must.Eq(t, "web.web[0]", res.Group)
		})
	}
}

// A running alloc's service check runs and reports; stopping the alloc
// drops its results.
func TestClient_RunsServiceChecks(t *testing.T) {
	host, port := healthServer(t)
	s := testServer(t, nil)
	c := testClient(t, testClientConfig(t, local(s)))
	eventually(t, "node ready", func() bool { return nodeStatus(t, s, c.NodeID()) == structs.NodeStatusReady })

	job := serviceJob()
	job.TaskGroups[0].Services = []*structs.Service{{Name: "web", PortLabel: strconv.Itoa(port), Address: host,
		Provider: structs.ServiceProviderNomad, Checks: []*structs.ServiceCheck{
			{Name: "alive", Type: "http", Path: "/health", Interval: time.Second, Timeout: time.Second},
			{Name: "port", Type: "tcp", Interval: time.Second, Timeout: time.Second, OnUpdate: "ignore"},
		}}}
	job = registerJob(t, s, job)
	alloc := place(t, s, job, c.NodeID(), 1)[0]

	eventually(t, "both checks pass", func() bool {
		res, err := c.AllocChecks(alloc.ID)
		if err != nil {
			return false // not on the client yet
		}
		ok := 0
		for _, r := range res {
			if r.Status == CheckSuccess {
				ok++
			}
		}
		return ok == 2
	})
	res, err := c.AllocChecks(alloc.ID)
	must.NoError(t, err)
	modes := map[string]string{}
	for id, r := range res {
		must.Eq(t, id, r.ID)
		must.Eq(t, 32, len(id))
		must.Eq(t, "web", r.Service)
		must.Eq(t, alloc.Name, r.Group)
		must.Eq(t, "", r.Task)
		modes[r.Check] = r.Mode
	}
	must.Eq(t, map[string]string{"alive": CheckModeHealthiness, "port": CheckModeReadiness}, modes)

	_, err = c.AllocChecks("nope")
	must.Error(t, err)

	stop(t, s, alloc.ID)
	eventually(t, "results dropped", func() bool {
		res, err := c.AllocChecks(alloc.ID)
		return err != nil || len(res) == 0
	})
}
