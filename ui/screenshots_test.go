package ui_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestScreenshots writes PNGs of the main pages into the directory
// $NOMAD_UI_SCREENSHOTS (`make ui-screenshots` sets website/static/ui),
// from a dev agent with a few jobs and three simulated nodes besides its
// own. Without the variable it does nothing.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("NOMAD_UI_SCREENSHOTS")
	if dir == "" {
		t.Skip("set NOMAD_UI_SCREENSHOTS to a directory to write the UI's screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	findBrowser(t)
	d := startAgent(t)

	// Simulated nodes: registered with the servers as a client would,
	// with nobody running their allocations (those stay pending), which
	// is enough for a picture of the cluster.
	for i, n := range []struct{ name, dc, class string }{{"sim-a", "dc1", "small"}, {"sim-b", "dc1", "small"}, {"sim-c", "dc2", "large"}} {
		registerSimNode(t, d, n.name, n.dc, n.class, int64(4000*(i+1)), int64(8192*(i+1)))
	}
	d.runHCL(t, sleepJob("web", 4, 500, 512))
	d.runHCL(t, sleepJob("api", 3, 800, 1024))
	d.runHCL(t, sleepJob("cache", 2, 1500, 4096))
	d.runHCL(t, sleepJob("search", 1, 2000, 6144))
	d.runHCL(t, sleepJob("huge", 1, 100, 10_000_000))
	d.waitFor(t, "huge's placement failure", func() bool {
		var evals []map[string]any
		if d.getJSON("/v1/job/huge/evaluations", &evals) != nil {
			return false
		}
		for _, e := range evals {
			if f, _ := e["FailedTGAllocs"].(map[string]any); len(f) > 0 {
				return true
			}
		}
		return false
	})
	var allocs []map[string]any
	var webAlloc, hugeEval string
	d.waitFor(t, "web running on the dev agent's own node", func() bool {
		if d.getJSON("/v1/job/web/allocations", &allocs) != nil {
			return false
		}
		for _, a := range allocs {
			if a["NodeName"] == "ui-test" && a["ClientStatus"] == "running" {
				webAlloc = a["ID"].(string)
				return true
			}
		}
		return false
	})
	var evals []map[string]any
	if err := d.getJSON("/v1/job/huge/evaluations", &evals); err != nil {
		t.Fatal(err)
	}
	hugeEval = evals[0]["ID"].(string)
	var nodes []map[string]any
	if err := d.getJSON("/v1/nodes", &nodes); err != nil {
		t.Fatal(err)
	}
	var ownNode string
	for _, n := range nodes {
		if n["Name"] == "ui-test" {
			ownNode = n["ID"].(string)
		}
	}

	ctx := newBrowser(t, 1280, 900)
	ready := waitJS(`!document.querySelector("main .loading") && !!document.querySelector("main h1")`)
	shot := func(name, path string, width, height int64, scale float64, extra ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		steps := []chromedp.Action[chromedp.Void]{
			chromedp.EmulateViewport(width, height, chromedp.EmulateScale(scale)),
			chromedp.Navigate(d.addr + path), ready,
		}
		steps = append(steps, extra...)
		run(t, ctx, 30*time.Second, steps...)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shot("jobs", "/ui/jobs", 1280, 720, 1, textContains("main", "huge"))
	shot("job", "/ui/jobs/web@default", 1280, 1100, 1, textContains("#s-allocations + .table-wrap", "running"))
	shot("job-placement-failure", "/ui/jobs/huge@default", 1280, 1400, 1, chromedp.WaitVisible(chromedp.CSS(".failure")))
	shot("evaluations", "/ui/evaluations", 1280, 600, 1, textContains("main", "huge"))
	shot("evaluation", "/ui/evaluations/"+hugeEval, 1280, 900, 1, chromedp.WaitVisible(chromedp.CSS(".failure")))
	shot("allocation", "/ui/allocations/"+webAlloc, 1280, 1350, 1, textContains("#log-output", "started web"))
	shot("nodes", "/ui/nodes", 1280, 600, 1, chromedp.WaitVisible(chromedp.CSS(".meter")))
	shot("node", "/ui/nodes/"+ownNode, 1280, 1200, 1, textContains("main", "How full"))
	shot("topology", "/ui/topology", 1280, 800, 1, chromedp.WaitVisible(chromedp.CSS(".tseg")),
		// Hover an allocation: its tooltip names the job.
		chromedp.Func(func(ctx2 context.Context, tgt *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`(() => { const s = document.querySelector('.tseg[data-job="cache"]') || document.querySelector('.tseg'); s.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})); return true; })()`)(ctx2, tgt)
			return err
		}))
	// One worker paused by an operator, beside the one the leader keeps.
	var workers struct {
		Schedulers []struct {
			ID string `json:"id"`
		} `json:"schedulers"`
	}
	if err := d.getJSON("/v1/agent/schedulers", &workers); err != nil || len(workers.Schedulers) == 0 {
		t.Fatalf("workers: %v", err)
	}
	last := workers.Schedulers[len(workers.Schedulers)-1].ID
	d.send(t, "PUT", "/v1/agent/schedulers/pause", map[string]any{"paused": true, "worker_id": last})
	shot("scheduler", "/ui/scheduler", 1280, 1100, 1, chromedp.WaitVisible(chromedp.CSS("#toggle-workers")), chromedp.WaitVisible(chromedp.CSS("ul.stats")),
		textContains("#workers", "by an operator"))
	d.send(t, "PUT", "/v1/agent/schedulers/pause", map[string]any{"paused": false, "worker_id": last})
	shot("servers", "/ui/servers", 1280, 500, 1, textContains("#leader", "127.0.0.1"))
	// The exec terminal of an allocation, after a command ran in it.
	shot("exec", "/ui/allocations/"+webAlloc, 1280, 1500, 1,
		chromedp.WaitVisible(chromedp.CSS("#exec-connect")),
		chromedp.SetValue(chromedp.CSS("#exec-command"), `/bin/sh -c "echo hello from $(hostname); ls -l; uname -sm"`),
		chromedp.Click(chromedp.CSS("#exec-connect")),
		textContains("#exec-status", "Exited with code 0"))
	d.send(t, "PUT", "/v1/var/app/web/config", map[string]any{"Path": "app/web/config", "Items": map[string]string{"user": "admin", "log_level": "debug"}})
	d.send(t, "PUT", "/v1/var/nomad/jobs/web", map[string]any{"Path": "nomad/jobs/web", "Items": map[string]string{"db_password": "s3cret"}})
	shot("variables", "/ui/variables", 1280, 500, 1, textContains("#vars-table", "app/web/config"))
	shot("tokens", "/ui/settings/tokens", 1280, 600, 1, chromedp.WaitVisible(chromedp.CSS("#token-secret")))
	shot("run", "/ui/jobs/run", 1280, 900, 1,
		chromedp.SetValue(chromedp.CSS("#job-hcl"), sleepJob("web", 6, 500, 512)),
		chromedp.Click(chromedp.CSS("#plan-job")), textContains("#plan-out", "Scheduler"))
	// Dark mode (the system's preference), for the colours' contrast.
	dark := func(on bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			value := "light"
			if on {
				value = "dark"
			}
			_, err := cdp.Call(ctx, tgt, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}},
			})
			return err
		})
	}
	run(t, ctx, 10*time.Second, dark(true))
	shot("dark-job-placement-failure", "/ui/jobs/huge@default", 1280, 900, 1, chromedp.WaitVisible(chromedp.CSS(".failure")))
	shot("dark-topology", "/ui/topology", 1280, 700, 1, chromedp.WaitVisible(chromedp.CSS(".tseg")))
	run(t, ctx, 10*time.Second, dark(false))
	shot("phone-jobs", "/ui/jobs", 390, 844, 2, textContains("main", "huge"))
	shot("phone-job", "/ui/jobs/web@default", 390, 844, 2, textContains("#s-allocations + .table-wrap", "running"))
}
