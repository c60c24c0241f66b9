package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
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
	dir, err := os.MkdirTemp("", "nomad-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nomadBin = filepath.Join(dir, "nomad")
	build := exec.Command("go", "build", "-o", nomadBin, "github.com/opennomad/nomad")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building nomad:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agent is a running `nomad agent` process.
type agent struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	logs *syncBuffer
	api  *api.Client
	done chan struct{}
}

// startAgent runs `nomad agent <args>` with a configuration giving it a
// free HTTP port (plus extra HCL), waits until its API answers, and stops
// it when the test ends.
func startAgent(t *testing.T, extraHCL string, args ...string) *agent {
	t.Helper()
	port := freePort(t)
	cfgFile := filepath.Join(t.TempDir(), "agent.hcl")
	hcl := fmt.Sprintf("ports {\n  http = %d\n}\n%s", port, extraHCL)
	if err := os.WriteFile(cfgFile, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &agent{t: t, addr: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &syncBuffer{}, done: make(chan struct{})}
	a.cmd = exec.Command(nomadBin, append([]string{"agent", "-config", cfgFile}, args...)...)
	a.cmd.Stdout, a.cmd.Stderr = a.logs, a.logs
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		a.cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		a.stop()
		if t.Failed() {
			t.Logf("agent output:\n%s", a.logs.String())
		}
	})
	c, err := api.NewClient(&api.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	a.api = c
	waitFor(t, 30*time.Second, "the agent's API and leader", func() bool {
		leader, err := c.Status().Leader()
		return err == nil && leader != ""
	})
	return a
}

// stop interrupts the agent and waits for it to exit (killing it after a
// grace period).
func (a *agent) stop() {
	select {
	case <-a.done:
		return
	default:
	}
	a.cmd.Process.Signal(os.Interrupt)
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		a.cmd.Process.Kill()
		<-a.done
	}
}

// nomad runs the CLI against the agent and returns its stdout.
func (a *agent) nomad(args ...string) (string, error) {
	cmd := exec.Command(nomadBin, args...)
	cmd.Env = append(os.Environ(), "NOMAD_ADDR="+a.addr)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("nomad %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// schedules reports whether the agent's server runs scheduler workers;
// without them no job is ever placed.
func (a *agent) schedules() bool {
	resp, err := http.Get(a.addr + "/v1/agent/schedulers")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// requireScheduling skips the test when the server places nothing.
func requireScheduling(t *testing.T, a *agent) {
	t.Helper()
	if !a.schedules() {
		t.Skip("the server runs no scheduler workers yet (/v1/agent/schedulers is not served), so no job is placed")
	}
}

// runJob writes a job file and runs it through the CLI without waiting.
func (a *agent) runJob(hcl string) {
	a.t.Helper()
	f := filepath.Join(a.t.TempDir(), "job.nomad.hcl")
	if err := os.WriteFile(f, []byte(hcl), 0o644); err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.nomad("job", "run", "-detach", f); err != nil {
		a.t.Fatal(err)
	}
}

// allocs lists a job's allocations.
func (a *agent) allocs(job string) []*api.AllocationListStub {
	a.t.Helper()
	out, _, err := a.api.Jobs().Allocations(job, true, nil)
	if err != nil {
		a.t.Fatalf("listing allocations of %s: %v", job, err)
	}
	return out
}

// alloc reads one allocation.
func (a *agent) alloc(id string) *api.Allocation {
	a.t.Helper()
	out, _, err := a.api.Allocations().Info(id, nil)
	if err != nil {
		a.t.Fatalf("reading allocation %s: %v", id, err)
	}
	return out
}

// taskPIDs returns the pids of a task's processes, from the stats API.
func (a *agent) taskPIDs(allocID, task string) []int {
	a.t.Helper()
	usage, err := a.api.Allocations().Stats(&api.Allocation{ID: allocID}, nil)
	if err != nil {
		a.t.Fatalf("stats of %s: %v", allocID, err)
	}
	var pids []int
	if tu := usage.Tasks[task]; tu != nil {
		for p := range tu.Pids {
			n, err := strconv.Atoi(p)
			if err != nil {
				a.t.Fatalf("pid %q: %v", p, err)
			}
			pids = append(pids, n)
		}
	}
	return pids
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// cmdline is a process's command line, arguments joined by spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// killOnCleanup makes sure test processes never outlive the test.
func killOnCleanup(t *testing.T, pids ...int) {
	t.Cleanup(func() {
		for _, p := range pids {
			if alive(p) {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond every 50ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for the agent's two output streams.
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
