package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// nomadBin is the binary under test, built once by TestMain.
var nomadBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "nomad-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	nomadBin = filepath.Join(dir, "nomad")
	build := exec.Command("go", "build", "-o", nomadBin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building nomad: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// ports are one agent's listening ports.
type ports struct {
	HTTP, RPC, Serf int
}

// freePorts reserves n distinct free ports on 127.0.0.1. The ports are
// released before the agents bind them; collisions with other processes
// are unlikely on a test machine.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var lns []net.Listener
	var out []int
	for len(out) < n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// agent is one nomad agent process.
type agent struct {
	t      *testing.T
	name   string
	dir    string
	ports  ports
	config string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// newAgent prepares an agent named name whose configuration file body is
// config (ports and data dir are added). It is not started.
func newAgent(t *testing.T, name string, p ports, config string) *agent {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	a := &agent{t: t, name: name, dir: dir, ports: p}
	a.config = fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "DEBUG"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
%s
`, name, filepath.Join(dir, "data"), p.HTTP, p.RPC, p.Serf, config)
	if err := os.WriteFile(filepath.Join(dir, "agent.hcl"), []byte(a.config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.kill()
		a.killTasks()
		if t.Failed() {
			a.dumpLog()
		}
	})
	return a
}

// killTasks kills the task supervisors a client agent started. They run
// in sessions of their own so that tasks outlive a client restart; a
// killed agent therefore leaves them behind, and the test must not. A
// supervisor's task dies with it.
func (a *agent) killTasks() {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) < 3 || args[1] != "executor" || !strings.HasPrefix(args[2], a.dir+string(filepath.Separator)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// start runs the agent process; its output goes to agent.log in its dir
// (appended across restarts).
func (a *agent) start() {
	a.t.Helper()
	log, err := os.OpenFile(filepath.Join(a.dir, "agent.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		a.t.Fatal(err)
	}
	cmd := exec.Command(nomadBin, "agent", "-config="+filepath.Join(a.dir, "agent.hcl"))
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so a killed agent's tasks can be found.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		a.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(done)
	}()
	a.mu.Lock()
	a.cmd, a.done, a.log = cmd, done, log
	a.mu.Unlock()
}

// kill sends SIGKILL and waits for the process to exit.
func (a *agent) kill() {
	a.signal(syscall.SIGKILL)
}

// stop sends SIGINT and waits for a graceful exit.
func (a *agent) stop() {
	a.signal(syscall.SIGINT)
}

func (a *agent) signal(sig syscall.Signal) {
	a.mu.Lock()
	cmd, done := a.cmd, a.done
	a.cmd = nil
	a.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// running reports whether the process is up.
func (a *agent) running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cmd != nil
}

// dumpLog prints the end of the agent's log.
func (a *agent) dumpLog() {
	buf, err := os.ReadFile(filepath.Join(a.dir, "agent.log"))
	if err != nil {
		return
	}
	const max = 20000
	if len(buf) > max {
		buf = buf[len(buf)-max:]
	}
	a.t.Logf("---- log of %s ----\n%s", a.name, buf)
}

// api returns a client of the agent's HTTP API.
func (a *agent) api() *api.Client {
	c, err := api.NewClient(&api.Config{Address: fmt.Sprintf("http://127.0.0.1:%d", a.ports.HTTP)})
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// rpcAddr is the agent's RPC address.
func (a *agent) rpcAddr() string { return fmt.Sprintf("127.0.0.1:%d", a.ports.RPC) }

// serfAddr is the agent's gossip address.
func (a *agent) serfAddr() string { return fmt.Sprintf("127.0.0.1:%d", a.ports.Serf) }

// cli runs the nomad CLI against the agent and returns its combined
// output and exit code.
func (a *agent) cli(args ...string) (string, int) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nomadBin, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("NOMAD_ADDR=http://127.0.0.1:%d", a.ports.HTTP))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		a.t.Fatalf("running nomad %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), code
}

// waitFor polls cond every 20 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sleepJob is a service job running `sleep` under raw_exec.
func sleepJob(id string) *api.Job {
	task := api.NewTask("sleep", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"3600"}}
	task.Resources = &api.Resources{CPU: new(20), MemoryMB: new(16)}
	tg := api.NewTaskGroup("g", 1)
	tg.Tasks = []*api.Task{task}
	return &api.Job{
		ID:          new(id),
		Name:        new(id),
		Type:        new("service"),
		Datacenters: []string{"dc1"},
		TaskGroups:  []*api.TaskGroup{tg},
	}
}
