package agent

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// execClient is Nomad's own api package pointed at the agent.
func execClient(t testing.TB, ra *realAgent) *nomadapi.Client {
	t.Helper()
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	return c
}

// TestAllocExec_RawExec runs commands through Nomad's api package in a
// raw_exec task of a real agent: output, stdin, the task's environment,
// the exit code.
func TestAllocExec_RawExec(t *testing.T) {
	ra, alloc := startClientAgentRunning(t, "raw_exec",
		map[string]interface{}{"command": "/bin/sleep", "args": []interface{}{"3600"}}, nil)
	c := execClient(t, ra)
	apiAlloc, _, err := c.Allocations().Info(alloc.ID, nil)
	must.NoError(t, err)

	cases := []struct {
		name       string
		command    []string
		stdin      string
		tty        bool
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "exit code and streams", command: []string{"/bin/sh", "-c", "echo hi; echo oops >&2; exit 3"}, wantCode: 3, wantStdout: "hi\n", wantStderr: "oops\n"},
		{name: "exit 0", command: []string{"/bin/true"}},
		{name: "stdin", command: []string{"cat"}, stdin: "round trip\n", wantStdout: "round trip\n"},
		{name: "task env", command: []string{"/bin/sh", "-c", "echo $NOMAD_TASK_NAME $NOMAD_ALLOC_ID"}, wantStdout: "web " + alloc.ID + "\n"},
		{name: "tty", command: []string{"/bin/sh", "-c", "test -t 1 && echo tty"}, tty: true, wantStdout: "tty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			code, err := c.Allocations().Exec(ctx, apiAlloc, "web", tc.tty, tc.command,
				strings.NewReader(tc.stdin), &stdout, &stderr, nil, nil)
			must.NoError(t, err)
			must.Eq(t, tc.wantCode, code)
			got := stdout.String()
			if tc.tty {
				got = strings.TrimSpace(got)
			}
			must.Eq(t, tc.wantStdout, got)
			must.Eq(t, tc.wantStderr, stderr.String())
		})
	}
}

// TestAllocExec_Errors: refusals arrive as close frames with Nomad's
// texts, which Nomad's api package returns with exit code -2.
func TestAllocExec_Errors(t *testing.T) {
	ra, alloc := startClientAgentRunning(t, "mock_driver", map[string]interface{}{}, nil)
	c := execClient(t, ra)
	apiAlloc, _, err := c.Allocations().Info(alloc.ID, nil)
	must.NoError(t, err)
	unknown := *apiAlloc
	unknown.ID = "11111111-2222-3333-4444-555555555555"

	cases := []struct {
		name    string
		alloc   *nomadapi.Allocation
		task    string
		command []string
		want    string
	}{
		{"unknown alloc", &unknown, "web", []string{"ls"}, `Unknown allocation "` + unknown.ID + `"`},
		{"no task", apiAlloc, "", []string{"ls"}, "must provide task name"},
		{"unknown task", apiAlloc, "db", []string{"ls"}, `unknown task name "db"`},
		{"no command", apiAlloc, "web", []string{}, "command is not present"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			code, err := c.Allocations().Exec(ctx, tc.alloc, tc.task, false, tc.command,
				strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, nil, nil)
			must.Eq(t, -2, code)
			must.EqError(t, err, tc.want)
		})
	}

	// Mock tasks echo their stdin with "showinput".
	var stdout bytes.Buffer
	code, err := c.Allocations().Exec(context.Background(), apiAlloc, "web", false, []string{"showinput"},
		strings.NewReader("hello"), &stdout, &bytes.Buffer{}, nil, nil)
	must.NoError(t, err)
	must.Zero(t, code)
	must.Eq(t, "TTY: false\nStdin:\nhello\n", stdout.String())
}

// TestAllocExec_Disabled: a client with disable_remote_exec refuses every
// exec, as Nomad's do.
func TestAllocExec_Disabled(t *testing.T) {
	ra, alloc := startClientAgentRunning(t, "mock_driver", map[string]interface{}{},
		func(c *Config) { c.Client.DisableRemoteExec = true })
	c := execClient(t, ra)
	code, err := c.Allocations().Exec(context.Background(), &nomadapi.Allocation{ID: alloc.ID}, "web", false,
		[]string{"showinput"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, nil, nil)
	must.Eq(t, -2, code)
	must.EqError(t, err, "Permission denied")
}

// TestAllocExec_BadRequests: what is wrong before the upgrade is a plain
// HTTP answer.
func TestAllocExec_BadRequests(t *testing.T) {
	ra, alloc := startClientAgentRunning(t, "mock_driver", map[string]interface{}{}, nil)
	base := "/v1/client/allocation/" + alloc.ID + "/exec?task=web"
	cases := []struct {
		name  string
		query string
		code  int
		has   string
	}{
		{"command not JSON", "&command=" + url.QueryEscape("ls"), http.StatusBadRequest, "command: must be a JSON array"},
		{"tty not a boolean", "&command=" + url.QueryEscape(`["ls"]`) + "&tty=maybe", http.StatusBadRequest, "tty value is not a boolean"},
		{"no websocket", "&command=" + url.QueryEscape(`["ls"]`), http.StatusBadRequest, "websocket"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := ra.do("GET", base+tc.query, "")
			must.Eq(t, tc.code, resp.StatusCode)
			must.StrContains(t, body, tc.has)
		})
	}
}

// TestAllocExec_KilledOnDisconnect: when the operator goes away the
// command is killed.
func TestAllocExec_KilledOnDisconnect(t *testing.T) {
	ra, alloc := startClientAgentRunning(t, "raw_exec",
		map[string]interface{}{"command": "/bin/sleep", "args": []interface{}{"3600"}}, nil)
	c := execClient(t, ra)
	apiAlloc, _, err := c.Allocations().Info(alloc.ID, nil)
	must.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Allocations().Exec(ctx, apiAlloc, "web", false,
			[]string{"/bin/sh", "-c", "echo $$ > exec.pid; exec sleep 3600"},
			strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, nil, nil)
		done <- err
	}()
	// The command runs in the task directory: find its pid there.
	var pid string
	deadline := time.Now().Add(15 * time.Second)
	for pid == "" {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		var stdout bytes.Buffer
		c.Allocations().Exec(context.Background(), apiAlloc, "web", false, []string{"/bin/sh", "-c", "cat exec.pid 2>/dev/null"},
			strings.NewReader(""), &stdout, &bytes.Buffer{}, nil, nil)
		pid = strings.TrimSpace(stdout.String())
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	for {
		var stdout bytes.Buffer
		code, err := c.Allocations().Exec(context.Background(), apiAlloc, "web", false, []string{"/bin/sh", "-c", "kill -0 " + pid},
			strings.NewReader(""), &stdout, &bytes.Buffer{}, nil, nil)
		must.NoError(t, err)
		if code != 0 {
			return // gone
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command (pid %s) outlived its session", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAllocExec_ACL: exec needs alloc-exec in the allocation's
// namespace, and alloc-node-exec as well into a task whose driver does
// not isolate the filesystem (raw_exec); mock_driver tasks need only
// alloc-exec.
func TestAllocExec_ACL(t *testing.T) {
	for _, drv := range []struct {
		name   string
		config map[string]interface{}
		// allowed says, per token, whether exec is allowed.
		allowed map[string]bool
	}{
		{"raw_exec", map[string]interface{}{"command": "/bin/sleep", "args": []interface{}{"3600"}},
			map[string]bool{"read": false, "alloc-exec": false, "alloc-node-exec": false, "both": true, "write": false, "management": true}},
		{"mock_driver", map[string]interface{}{},
			map[string]bool{"read": false, "alloc-exec": true, "alloc-node-exec": false, "both": true, "write": true, "management": true}},
	} {
		t.Run(drv.name, func(t *testing.T) {
			ra, alloc := startClientAgentRunning(t, drv.name, drv.config, func(c *Config) { c.ACL.Enabled = true })
			mgmt := ra.mgmt
			tokens := map[string]string{
				"read":            ra.mustToken(mgmt, "read", nsRead),
				"alloc-exec":      ra.mustToken(mgmt, "exec", nsCaps("alloc-exec")),
				"alloc-node-exec": ra.mustToken(mgmt, "node-exec", nsCaps("alloc-node-exec")),
				"both":            ra.mustToken(mgmt, "both", nsCaps("alloc-exec", "alloc-node-exec")),
				"write":           ra.mustToken(mgmt, "write", `namespace "default" { policy = "write" }`),
				"management":      mgmt,
			}
			for name, allowed := range drv.allowed {
				c, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base, SecretID: tokens[name]})
				must.NoError(t, err)
				apiAlloc := &nomadapi.Allocation{ID: alloc.ID, Namespace: alloc.Namespace}
				var stdout bytes.Buffer
				code, err := c.Allocations().Exec(context.Background(), apiAlloc, "web", false, []string{"showinput"},
					strings.NewReader("x"), &stdout, &bytes.Buffer{}, nil, nil)
				if !allowed {
					must.Error(t, err, must.Sprintf("token %s", name))
					must.StrContains(t, err.Error(), "403", must.Sprintf("token %s", name))
					continue
				}
				if drv.name == "raw_exec" {
					// "showinput" is no program: the shell-less exec fails
					// to start, past the ACL check.
					must.StrNotContains(t, fmtErr(err), "403", must.Sprintf("token %s", name))
					continue
				}
				must.NoError(t, err, must.Sprintf("token %s", name))
				must.Zero(t, code)
			}
		})
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
