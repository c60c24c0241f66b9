package agent

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs/mock"
)

// testBackend is the fake server of handler tests with a shutdown that
// records being called.
type testBackend struct {
	*testRPC
	*testServer
	mu       sync.Mutex
	shutdown int
	leaves   int
}

func (b *testBackend) Leave() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.leaves++
	return nil
}

func (b *testBackend) Shutdown() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.shutdown++
	return nil
}

func newTestBackend(t *testing.T, a *Agent) *testBackend {
	rpc := newTestRPC(t)
	// The agent's own broker is the one the store publishes to, as with
	// the real server.
	rpc.broker = a.broker
	rpc.state = stateWithPublisher(t, a.broker)
	return &testBackend{testRPC: rpc, testServer: &testServer{broker: a.broker,
		workers: api.AgentSchedulerWorkerConfigRequest{NumSchedulers: 1, EnabledSchedulers: worker.AllSchedulers()}}}
}

// syncBuffer is a log sink safe for the agent's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func devConfig(t testing.TB) *Config {
	c, err := LoadConfig([]string{"-dev", "-node", "a1"}, io.Discard)
	must.NoError(t, err)
	c.Ports.HTTP = 0
	return c
}

func TestAgent_StartServeReloadShutdown(t *testing.T) {
	logs := &syncBuffer{}
	var backend *testBackend
	a, err := newAgent(devConfig(t), logs, func(a *Agent) (serverBackend, error) {
		backend = newTestBackend(t, a)
		return backend, nil
	})
	must.NoError(t, err)
	defer a.Shutdown()

	must.StrHasPrefix(t, "127.0.0.1:", a.HTTPAddr())
	client, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	must.NoError(t, err)
	must.NoError(t, backend.state.UpsertJob(3, mock.Job(mock.JobID("web"))))
	jobs, meta, err := client.Jobs().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, jobs)
	must.Eq(t, 3, meta.LastIndex)
	self, err := client.Agent().Self()
	must.NoError(t, err)
	must.Eq[any](t, "a1", self.Config["Name"])
	must.StrContains(t, logs.String(), "HTTP API listening")
	must.StrContains(t, logs.String(), "client started")

	// Reload: the log level changes at once; other changes wait for a
	// restart and say so.
	must.False(t, a.logger.IsTrace())
	next := devConfig(t)
	next.LogLevel = "TRACE"
	next.Region = "elsewhere"
	must.NoError(t, a.Reload(next))
	must.True(t, a.logger.IsTrace())
	must.Eq(t, "global", a.Config().Region)
	must.StrContains(t, logs.String(), `configuration change needs a restart to take effect: key=region`)
	bad := devConfig(t)
	bad.LogLevel = "LOUD"
	must.Error(t, a.Reload(bad))

	// Shutdown ends the event streams, the API and the server, once.
	must.NoError(t, a.Shutdown())
	must.NoError(t, a.Shutdown())
	must.Eq(t, 1, backend.shutdown)
	_, err = http.Get("http://" + a.HTTPAddr() + "/v1/jobs")
	must.Error(t, err)
}

func TestAgent_StartErrors(t *testing.T) {
	// A server that fails to start leaves nothing running.
	_, err := newAgent(devConfig(t), io.Discard, func(*Agent) (serverBackend, error) {
		return nil, os.ErrPermission
	})
	must.ErrorIs(t, err, os.ErrPermission)
	must.ErrorContains(t, err, "starting server")

	// The HTTP port is taken: the server started first is stopped again.
	ln := listen(t)
	defer ln.Close()
	cfg := devConfig(t)
	cfg.Ports.HTTP = ln.Addr().(*net.TCPAddr).Port
	var backend *testBackend
	_, err = newAgent(cfg, io.Discard, func(a *Agent) (serverBackend, error) {
		backend = newTestBackend(t, a)
		return backend, nil
	})
	must.ErrorContains(t, err, "starting HTTP API")
	must.Eq(t, 1, backend.shutdown)
}

func TestCommand_ConfigErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-server"}, "==> Error loading configuration: data_dir: required unless running -dev"},
		{[]string{"-dev", "-log-level", "loud"}, `flag -log-level: log_level: unknown level "LOUD"`},
	}
	for _, tc := range cases {
		ui := cli.NewMockUi()
		code := (&Command{Ui: ui}).Run(tc.args)
		must.Eq(t, 1, code)
		must.StrContains(t, ui.ErrorWriter.String(), tc.want)
	}
}

func TestCommand_RunUntilSignal(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.hcl": "ports {\n  http = 0\n}\n"})
	ui := cli.NewMockUi()
	logs := &syncBuffer{}
	started := make(chan *Agent, 1)
	reloads := make(chan error, 2)
	cmd := &Command{
		reloaded:  func(err error) { reloads <- err },
		Ui:        ui,
		LogOutput: logs,
		signals:   make(chan os.Signal, 2),
		started:   func(a *Agent) { started <- a },
		startServer: func(a *Agent) (serverBackend, error) {
			return newTestBackend(t, a), nil
		},
	}
	code := make(chan int, 1)
	go func() { code <- cmd.Run([]string{"-dev", "-config", dir + "/a.hcl"}) }()
	a := <-started
	resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/agent/health")
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)

	// SIGHUP reloads the same files: a bad edit is reported and ignored.
	must.NoError(t, os.WriteFile(dir+"/a.hcl", []byte("ports {\n  http = 0\n}\nlog_level = \"LOUD\"\n"), 0o644))
	cmd.signals <- syscall.SIGHUP
	must.Error(t, <-reloads)
	must.NoError(t, os.WriteFile(dir+"/a.hcl", []byte("ports {\n  http = 0\n}\nlog_level = \"TRACE\"\n"), 0o644))
	cmd.signals <- syscall.SIGHUP
	must.NoError(t, <-reloads)
	must.True(t, a.logger.IsTrace())
	cmd.signals <- syscall.SIGTERM
	must.Eq(t, 0, <-code)

	out := ui.OutputWriter.String()
	must.StrContains(t, out, "==> Starting Nomad agent...")
	must.StrContains(t, out, "Server: true")
	must.StrContains(t, out, "==> Caught signal: hangup, reloading configuration")
	must.StrContains(t, out, "==> Gracefully shut down agent")
	must.StrContains(t, ui.ErrorWriter.String(), `log_level: unknown level "LOUD"`)
	must.StrContains(t, logs.String(), "log level changed: from=DEBUG to=TRACE")
	must.True(t, strings.Contains(logs.String(), "agent stopped"))
}

func TestGatedWriter(t *testing.T) {
	var out bytes.Buffer
	g := newGatedWriter(&out)
	g.Write([]byte("a\n"))
	must.Eq(t, "", out.String())
	must.NoError(t, g.Flush())
	must.Eq(t, "a\n", out.String())
	g.Write([]byte("b\n"))
	must.Eq(t, "a\nb\n", out.String())
}

// A server leaves its region before shutting down only on the signal its
// configuration names; by default (as Nomad's) it only stops.
func TestCommand_LeaveOnSignal(t *testing.T) {
	cases := []struct {
		name   string
		config string
		sig    os.Signal
		leaves int
	}{
		{"default, interrupt", "", os.Interrupt, 0},
		{"default, terminate", "", syscall.SIGTERM, 0},
		{"leave_on_interrupt, interrupt", "leave_on_interrupt = true\n", os.Interrupt, 1},
		{"leave_on_interrupt, terminate", "leave_on_interrupt = true\n", syscall.SIGTERM, 0},
		{"leave_on_terminate, terminate", "leave_on_terminate = true\n", syscall.SIGTERM, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"a.hcl": "ports {\n  http = 0\n}\n" + tc.config})
			ui := cli.NewMockUi()
			started := make(chan *Agent, 1)
			var backend *testBackend
			cmd := &Command{
				Ui:        ui,
				LogOutput: io.Discard,
				signals:   make(chan os.Signal, 1),
				started:   func(a *Agent) { started <- a },
				startServer: func(a *Agent) (serverBackend, error) {
					backend = newTestBackend(t, a)
					return backend, nil
				},
			}
			code := make(chan int, 1)
			go func() { code <- cmd.Run([]string{"-dev", "-config", dir + "/a.hcl"}) }()
			<-started
			cmd.signals <- tc.sig
			must.Eq(t, 0, <-code)
			backend.mu.Lock()
			defer backend.mu.Unlock()
			must.Eq(t, tc.leaves, backend.leaves)
			must.Eq(t, 1, backend.shutdown)
			must.Eq(t, tc.leaves == 1, strings.Contains(ui.OutputWriter.String(), "Gracefully leaving"))
		})
	}
}
