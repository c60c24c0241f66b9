package ui_test

import (
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/opennomad/nomad/command/agent"
)

// TestPageTimesAtScale measures how long the main pages take to show a
// cluster of 1,000 nodes and 10,000 allocations: a dev agent with 1,000
// nodes registered as clients would (nobody runs their allocations, which
// stay pending; heartbeats are not needed for the minute it lasts) and
// 100 jobs of 100 allocations. Each page is timed from navigation until
// its data is drawn. Set NOMAD_UI_SCALE=1 to run it (`make ui-scale`);
// it prints a table for the performance page.
func TestPageTimesAtScale(t *testing.T) {
	if os.Getenv("NOMAD_UI_SCALE") == "" {
		t.Skip("set NOMAD_UI_SCALE=1 to time the pages on 1,000 nodes and 10,000 allocations")
	}
	findBrowser(t)
	const nodes, jobs, perJob = 1000, 100, 100
	d := startAgent(t, func(c *agent.Config) {
		c.Server.HeartbeatGrace = time.Hour
		c.Server.MinHeartbeatTTL = time.Hour
		c.LogLevel = "ERROR"
	})
	start := time.Now()
	for i := 0; i < nodes; i++ {
		registerSimNode(t, d, fmt.Sprintf("sim-%04d", i), fmt.Sprintf("dc%d", 1+i%3), "sim", 16000, 32768)
	}
	for i := 0; i < jobs; i++ {
		d.runHCL(t, sleepJob(fmt.Sprintf("svc-%03d", i), perJob, 100, 64))
	}
	d.waitFor(t, "10,000 allocations placed", func() bool {
		var allocs []map[string]any
		return d.getJSON("/v1/allocations?namespace=*", &allocs) == nil && len(allocs) >= jobs*perJob
	})
	t.Logf("cluster ready in %s: %d nodes (and the agent's own), %d jobs, %d allocations", time.Since(start).Round(time.Second), nodes, jobs, jobs*perJob)

	ctx := newBrowser(t, 1280, 900)
	pages := []struct{ name, path, ready string }{
		{"Jobs", "/ui/jobs", `document.querySelectorAll("#jobs-table tbody tr").length === 100`},
		{"A job (100 allocations)", "/ui/jobs/svc-050@default", `document.querySelectorAll("#s-allocations + .table-wrap tbody tr").length >= 100`},
		// The first page of rows with their fill bars (a node's allocations
		// reserve some CPU), and the count of every node.
		{"Nodes", "/ui/nodes", `document.querySelectorAll("main tbody tr").length >= 100 && (document.querySelector("main .count")?.textContent || "").startsWith("1001 of 1001") && !!document.querySelector('main tbody [role=meter]:not([aria-valuenow="0"])')`},
		{"Topology", "/ui/topology", `document.querySelectorAll(".tnode").length >= 1000 && document.querySelectorAll(".tseg").length >= 20000`},
		{"Evaluations", "/ui/evaluations", `document.querySelectorAll("main tbody tr").length >= 100`},
		{"Scheduler", "/ui/scheduler", `!document.querySelector("main .loading") && !!document.querySelector("main h2")`},
	}
	// A first visit loads the assets; the timed visits follow it.
	run(t, ctx, time.Minute, chromedp.Navigate(d.addr+"/ui/servers"), waitJS(`!!document.querySelector("main h1")`))
	fmt.Fprintf(io.Writer(os.Stdout), "| Page | Time to show the data (best of 3) |\n|---|---|\n")
	for _, p := range pages {
		best := time.Duration(1 << 62)
		for range 3 {
			run(t, ctx, time.Minute, chromedp.Navigate(d.addr+"/ui/servers"), waitJS(`!!document.querySelector("main h1")`))
			began := time.Now()
			run(t, ctx, time.Minute, chromedp.Navigate(d.addr+p.path), waitJS(p.ready))
			best = min(best, time.Since(began))
		}
		fmt.Fprintf(os.Stdout, "| %s (`%s`) | %d ms |\n", p.name, p.path, best.Milliseconds())
		if os.Getenv("NOMAD_UI_SCALE_DEBUG") != "" {
			out, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(performance.getEntriesByType('resource').filter(e => e.name.includes('/v1/')).slice(-4).map(e => [e.name.slice(-70), Math.round(e.duration), e.decodedBodySize]))`))
			fmt.Fprintf(os.Stdout, "|   | %s |\n", out)
		}
	}
}
