package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/opennomad/nomad/command/agent"
	"github.com/opennomad/nomad/structs"
)

// The browser tests drive headless Chromium against a real in-process
// dev agent (server and client, raw_exec tasks) on a free port.
//
// The browser is $NOMAD_UI_BROWSER, else chromium found on $PATH. When
// there is none the tests skip, unless NOMAD_UI_TESTS_REQUIRE_BROWSER=1
// (set by `make test`), where they fail saying so.

const requireEnv = "NOMAD_UI_TESTS_REQUIRE_BROWSER"

func findBrowser(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("NOMAD_UI_BROWSER"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if os.Getenv(requireEnv) == "1" {
			t.Fatalf("NOMAD_UI_BROWSER=%s does not exist; install Chromium (apt-get install chromium) or run tools/ensure-chromium.sh", p)
		}
		t.Skipf("NOMAD_UI_BROWSER=%s does not exist", p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(requireEnv) == "1" {
		t.Fatal("no Chromium found for the UI browser tests: install it (apt-get install chromium), or set NOMAD_UI_BROWSER to its path")
	}
	t.Skip("no Chromium found (set NOMAD_UI_BROWSER); skipping the UI browser tests")
	return ""
}

// devAgent is a real dev agent: one server, one client, on 127.0.0.1.
type devAgent struct {
	agent *agent.Agent
	addr  string // http://127.0.0.1:port
	// token, when set, goes with every request the test itself makes.
	token string
}

// startAgent starts a dev agent; opts change its configuration first.
func startAgent(t testing.TB, opts ...func(*agent.Config)) *devAgent {
	t.Helper()
	cfg, err := agent.LoadConfig([]string{"-dev", "-node", "ui-test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Ports.HTTP = 0
	cfg.LogLevel = "ERROR"
	cfg.DataDir = t.TempDir()
	for _, o := range opts {
		o(cfg)
	}
	a, err := agent.NewAgent(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Shutdown of a dev agent destroys the client's tasks too.
	t.Cleanup(func() { _ = a.Shutdown() })
	d := &devAgent{agent: a, addr: "http://" + a.HTTPAddr()}
	if cfg.ACL.Enabled {
		var tok struct{ SecretID string }
		d.waitFor(t, "the ACL bootstrap", func() bool {
			out, err := d.try("PUT", "/v1/acl/bootstrap", nil)
			return err == nil && json.Unmarshal(out, &tok) == nil && tok.SecretID != ""
		})
		d.token = tok.SecretID
	}
	d.waitFor(t, "a ready node", func() bool {
		var nodes []map[string]any
		return d.getJSON("/v1/nodes", &nodes) == nil && len(nodes) == 1 && nodes[0]["Status"] == "ready"
	})
	return d
}

func (d *devAgent) getJSON(path string, out any) error {
	req, _ := http.NewRequest("GET", d.addr+path, nil)
	if d.token != "" {
		req.Header.Set("X-Nomad-Token", d.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (d *devAgent) send(t testing.TB, method, path string, body any) []byte {
	t.Helper()
	out, err := d.try(method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// try is send that returns its failure.
func (d *devAgent) try(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		buf, _ := json.Marshal(body)
		rd = bytes.NewReader(buf)
	}
	req, _ := http.NewRequest(method, d.addr+path, rd)
	if d.token != "" {
		req.Header.Set("X-Nomad-Token", d.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	return out, nil
}

// runHCL registers a job file as `nomad job run` does: parse, register.
func (d *devAgent) runHCL(t testing.TB, hcl string) {
	t.Helper()
	var job map[string]any
	if err := json.Unmarshal(d.send(t, "POST", "/v1/jobs/parse", map[string]any{"JobHCL": hcl, "Canonicalize": true}), &job); err != nil {
		t.Fatal(err)
	}
	d.send(t, "PUT", "/v1/jobs", map[string]any{"Job": job})
}

// waitFor polls the API until cond holds (a condition, not a fixed
// delay), failing after 20 seconds.
func (d *devAgent) waitFor(t testing.TB, what string, cond func() bool, detail ...func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			more := ""
			for _, f := range detail {
				more += " " + f()
			}
			t.Fatalf("timed out waiting for %s%s", what, more)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sleepJob is a service job whose task sleeps (raw_exec).
func sleepJob(name string, count, cpu, mem int) string {
	return fmt.Sprintf(`job %q {
  datacenters = ["*"]
  group "main" {
    count = %d
    task "sleep" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo started %s; exec sleep 600"]
      }
      resources {
        cpu    = %d
        memory = %d
      }
    }
  }
}
`, name, count, name, cpu, mem)
}

// newBrowser starts headless Chromium with a fresh profile and no
// network beyond loopback; the returned context drives one tab.
func newBrowser(t testing.TB, width, height int) context.Context {
	t.Helper()
	path := findBrowser(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			msg := e.ExceptionDetails.Text
			if ex := e.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
				msg += " " + ex.Description
			}
			pageErrors.add(fmt.Sprintf("%s (%s:%d)", msg, e.ExceptionDetails.URL, e.ExceptionDetails.LineNumber+1))
		}
	}))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// pageErrors collects the uncaught exceptions of the pages.
var pageErrors errorLog

type errorLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *errorLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, s)
}

// take returns the errors so far and forgets them.
func (l *errorLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.errs
	l.errs = nil
	return out
}

// run runs browser actions with a timeout.
func run(t testing.TB, ctx context.Context, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("browser: %v\nscript errors: %q\npage text:\n%s", err, pageErrors.take(), trim(body, 3000))
	}
}

// waitJS waits until a JavaScript expression is true in the page. It
// evaluates the expression afresh each time, so that it survives the
// page's document changing under it (chromedp's Poll does not).
func waitJS(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			ok, err := chromedp.Evaluate[bool]("!!("+expr+")")(ctx, tgt)
			if err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s: %w (last error: %v)", expr, ctx.Err(), err)
			case <-tick.C:
			}
		}
	})
}

// clickNow clicks the element sel matches at the moment of the click,
// waiting until there is one. chromedp.Click finds the element first and
// fails when the page redraws it in between.
func clickNow(sel string) chromedp.Action[chromedp.Void] {
	return waitJS(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, sel))
}

// textContains waits until the element matched by sel has text.
func textContains(sel, text string) chromedp.Action[chromedp.Void] {
	return waitJS(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, text))
}

func trim(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// registerSimNode registers a node with the servers as a client would,
// with nobody behind it (its allocations stay pending): enough for the
// pages that draw the cluster.
func registerSimNode(t testing.TB, d *devAgent, name, dc, class string, cpu, memMB int64) string {
	t.Helper()
	node := &structs.Node{
		ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Name: name, Datacenter: dc,
		NodePool: structs.NodePoolDefault, NodeClass: class, HTTPAddr: "127.0.0.1:4646",
		Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
		Attributes: map[string]string{"kernel.name": "linux", "os.name": "linux", "cpu.arch": "amd64", "driver.raw_exec": "1", "unique.hostname": name},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: cpu},
			Memory: structs.NodeMemoryResources{MemoryMB: memMB},
			Disk:   structs.NodeDiskResources{DiskMB: 100 * 1024},
		},
		Drivers: map[string]*structs.DriverInfo{"raw_exec": {Detected: true, Healthy: true, HealthDescription: "Healthy"}},
	}
	node.ComputeClass()
	var reply structs.NodeUpdateResponse
	if err := d.agent.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &reply); err != nil {
		t.Fatal(err)
	}
	return node.ID
}
