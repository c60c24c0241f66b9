package command

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

func TestFormatKV(t *testing.T) {
	cases := []struct {
		rows []string
		want string
	}{
		{[]string{"ID|web", "Status|"}, "ID     = web\nStatus = <none>"},
		{[]string{"A|x|y"}, "A = x|y"},
		{[]string{"Long Key Name|1", "K|2"}, "Long Key Name = 1\nK             = 2"},
		{nil, ""},
	}
	for _, tc := range cases {
		if got := formatKV(tc.rows); got != tc.want {
			t.Errorf("formatKV(%q) =\n%s\nwant\n%s", tc.rows, got, tc.want)
		}
	}
}

func TestFormatList(t *testing.T) {
	cases := []struct {
		rows []string
		want string
	}{
		{[]string{"ID|Status", "a|running", "bbbb|dead"}, "ID    Status\na     running\nbbbb  dead"},
		// An empty last cell leaves no trailing space.
		{[]string{"A|B", "x|"}, "A  B\nx"},
		// Rows may have fewer cells than the header.
		{[]string{"A|B|C", "x"}, "A  B  C\nx"},
	}
	for _, tc := range cases {
		if got := formatList(tc.rows); got != tc.want {
			t.Errorf("formatList(%q) =\n%q\nwant\n%q", tc.rows, got, tc.want)
		}
	}
}

func TestSmallFormatters(t *testing.T) {
	cases := []struct{ got, want string }{
		{plural(0, "node"), "0 nodes"},
		{plural(1, "node"), "1 node"},
		{plural(2, "allocation"), "2 allocations"},
		{formatMB(512), "512 MiB"},
		{formatMB(1536), "1.5 GiB"},
		{formatMB(3 * 1024 * 1024), "3.0 TiB"},
		{limit("abcdefghij", 8), "abcdefgh"},
		{limit("abc", 8), "abc"},
		{formatTime(time.Time{}), ""},
		{formatTime(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)), "2024-05-01T10:00:00Z"},
		{formatUnixNano(0), ""},
		{formatUnixNano(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC).UnixNano()), "2024-05-01T10:00:00Z"},
		{capitalize("node"), "Node"},
		{capitalize(""), ""},
	}
	for i, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("case %d: got %q, want %q", i, tc.got, tc.want)
		}
	}
}

func TestUUIDPrefix(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{in: "a", err: "at least two characters"},
		{in: "ab", want: "ab"},
		// An odd number of hex digits is trimmed; the full prefix is then
		// matched on the client.
		{in: "abc", want: "ab"},
		{in: "abcdef12-3", want: "abcdef12-"},
		{in: "abcdef12-34", want: "abcdef12-34"},
	}
	for _, tc := range cases {
		got, err := uuidPrefix(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("uuidPrefix(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("uuidPrefix(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestDataFormat(t *testing.T) {
	out, err := dataFormat(map[string]int{"a": 1}, true, "")
	if err != nil || out != "{\n    \"a\": 1\n}" {
		t.Errorf("json = %q, %v", out, err)
	}
	out, err = dataFormat(struct{ Name string }{"web"}, false, "{{.Name}}!")
	if err != nil || out != "web!" {
		t.Errorf("template = %q, %v", out, err)
	}
	if _, err := dataFormat(1, false, "{{.Nope}}"); err == nil || !strings.Contains(err.Error(), "executing template") {
		t.Errorf("bad field: %v", err)
	}
}

func TestDescribeErrors(t *testing.T) {
	m := &Meta{address: "http://10.1.1.1:4646"}
	dial := &url.Error{Op: "Get", URL: "http://10.1.1.1:4646/v1/jobs", Err: fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED)}
	cases := []struct {
		err  error
		want string
	}{
		{dial, "cannot reach the agent at http://10.1.1.1:4646 (is it running? set -address or NOMAD_ADDR): connection refused"},
		{&url.Error{Op: "Get", URL: "x", Err: errors.New("tls: bad certificate")}, "request to http://10.1.1.1:4646 failed: tls: bad certificate"},
		{&api.UnexpectedResponseError{StatusCode: 404, Body: "job not found"}, "Unexpected response code: 404 (job not found)"},
		{fmt.Errorf("wrapped: %w", errors.New("x")), "wrapped: x"},
	}
	for _, tc := range cases {
		if got := m.describe(tc.err); got != tc.want {
			t.Errorf("describe(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestNextLaunch(t *testing.T) {
	now := time.Date(2024, 5, 1, 10, 7, 0, 0, time.UTC)
	cases := []struct {
		name string
		p    *api.PeriodicConfig
		want string
		err  string
	}{
		{name: "every 15 minutes", p: &api.PeriodicConfig{Spec: new("*/15 * * * *")}, want: "2024-05-01T10:15:00Z"},
		{name: "earliest of several", p: &api.PeriodicConfig{Specs: []string{"0 12 * * *", "30 10 * * *"}}, want: "2024-05-01T10:30:00Z"},
		{name: "in the job's time zone", p: &api.PeriodicConfig{Spec: new("0 9 * * *"), TimeZone: new("America/New_York")},
			want: "2024-05-01T13:00:00Z"},
		{name: "disabled", p: &api.PeriodicConfig{Spec: new("* * * * *"), Enabled: new(false)}, want: ""},
		{name: "bad cron", p: &api.PeriodicConfig{Spec: new("every day")}, err: `cron "every day"`},
		{name: "bad zone", p: &api.PeriodicConfig{Spec: new("* * * * *"), TimeZone: new("Mars/Olympus")}, err: `time zone "Mars/Olympus"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := nextLaunch(tc.p, now)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := formatTime(got); s != tc.want {
				t.Errorf("next = %s, want %s", s, tc.want)
			}
		})
	}
}

func TestDrainFlagsValidate(t *testing.T) {
	cases := []struct {
		name  string
		f     drainFlags
		nargs int
		want  time.Duration
		err   string
	}{
		{name: "enable defaults to an hour", f: drainFlags{enable: true}, nargs: 1, want: time.Hour},
		{name: "deadline", f: drainFlags{enable: true, deadline: "90s"}, nargs: 1, want: 90 * time.Second},
		{name: "force is -1", f: drainFlags{enable: true, force: true}, nargs: 1, want: -1},
		{name: "no deadline is 0", f: drainFlags{enable: true, noDeadline: true}, nargs: 1, want: 0},
		{name: "self", f: drainFlags{disable: true, self: true}, nargs: 0},
		{name: "monitor", f: drainFlags{monitor: true}, nargs: 1},
		{name: "two nodes", f: drainFlags{enable: true}, nargs: 2, err: "either one argument"},
		{name: "negative deadline", f: drainFlags{enable: true, deadline: "-5m"}, nargs: 1, err: "must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f.validate(tc.nargs)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("validate = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestFormatMembersMarksEachRegionsLeader(t *testing.T) {
	a := fakeMember("a", "10.0.0.1")
	b := fakeMember("b", "10.0.0.2")
	c := fakeMember("c", "10.1.0.1")
	c.Tags["region"] = "eu"
	c.Name = "c.eu"
	got := formatMembers([]*api.AgentMember{c, b, a}, map[string]string{"global": "10.0.0.2:4647", "eu": "10.1.0.1:4647"}, false)
	want := `Name      Address   Port  Status  Leader  Raft Version  Build      Datacenter  Region
a.global  10.0.0.1  4648  alive   false   3             0.1.0-dev  dc1         global
b.global  10.0.0.2  4648  alive   true    3             0.1.0-dev  dc1         global
c.eu      10.1.0.1  4648  alive   true    3             0.1.0-dev  dc1         eu`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// A region whose leader is unknown marks nobody.
	if got := formatMembers([]*api.AgentMember{a}, map[string]string{"global": ""}, false); strings.Contains(got, "true") {
		t.Errorf("leader marked without a known leader:\n%s", got)
	}
}

func TestFormatWorkersSortsByStatus(t *testing.T) {
	ws := []api.AgentSchedulerWorkerInfo{
		{ID: "cccc0002", Status: "Started", WorkloadStatus: "Scheduling", Started: "bad time"},
		{ID: "cccc0001", Status: "Paused", WorkloadStatus: "Paused", Started: "2024-05-01T10:00:00.5Z"},
	}
	want := `ID        Status   Workload Status  Started
cccc0001  Paused   Paused           2024-05-01T10:00:00Z
cccc0002  Started  Scheduling       bad time`
	if got := formatWorkers(ws, false); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestPollPause(t *testing.T) {
	// With a cancelled context a pause returns at once with an error, so
	// the error tells whether the loop would have paused.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := &Meta{Ctx: ctx}
	wait := 10 * time.Second
	cases := []struct {
		name      string
		last, idx uint64
		took      time.Duration
		pause     bool
	}{
		{name: "progress", last: 8, idx: 7, took: time.Millisecond, pause: false},
		{name: "blocked the whole wait without change", last: 7, idx: 7, took: wait, pause: false},
		{name: "answered at once without change", last: 7, idx: 7, took: time.Millisecond, pause: true},
		{name: "no index at all", last: 0, idx: 0, took: wait, pause: true},
	}
	for _, tc := range cases {
		err := pollPause(m, &api.QueryMeta{LastIndex: tc.last, RequestTime: tc.took}, tc.idx, wait)
		if (err != nil) != tc.pause {
			t.Errorf("%s: paused = %v, want %v", tc.name, err != nil, tc.pause)
		}
	}
}
