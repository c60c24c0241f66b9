package ui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestBrowser walks the UI in headless Chromium against one dev agent:
// the cases share the agent and the browser (starting each takes most
// of the time) and run in order, the worker pause last.
func TestBrowser(t *testing.T) {
	findBrowser(t) // skip (or fail under make) before starting anything
	d := startAgent(t)
	ctx := newBrowser(t, 1280, 900)
	const wait = 20 * time.Second

	d.runHCL(t, sleepJob("web", 1, 100, 64))
	var allocID string
	d.waitFor(t, "web's allocation running", func() bool {
		var allocs []map[string]any
		if d.getJSON("/v1/job/web/allocations", &allocs) != nil || len(allocs) != 1 {
			return false
		}
		allocID, _ = allocs[0]["ID"].(string)
		if allocs[0]["ClientStatus"] == "failed" {
			t.Fatalf("web's allocation failed: %v", allocs[0]["TaskStates"])
		}
		return allocs[0]["ClientStatus"] == "running"
	})

	t.Run("job list shows a registered job", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs"),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/jobs/web@default"]`)),
			textContains("#jobs-table", "running"),
			// The search filters the list.
			chromedp.SendKeys(chromedp.CSS("#f-search"), "nomatch"),
			textContains("#jobs-table", "No job matches"),
		)
	})

	t.Run("job page shows its running allocation", func(t *testing.T) {
		// The CLI's form of the link, <id>@<namespace>.
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs/web@default"),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/allocations/`+allocID+`"]`)),
			textContains("#s-allocations + .table-wrap", "running"),
			textContains("#s-task-groups + .table-wrap", "main"),
		)
		// The plain form without a namespace too.
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs/web"),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/allocations/`+allocID+`"]`)),
		)
	})

	t.Run("allocation page shows task events and logs", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/allocations/"+allocID),
			textContains("main", "Task sleep"),
			textContains("main", "Started"),
			textContains("#log-output", "started web"),
			// The files of the alloc dir, and into a task's directory.
			textContains("#s-files + div", "sleep/"),
			chromedp.Click(chromedp.Search(`//button[text()="sleep/"]`)),
			textContains("#s-files + div", "local/"),
		)
	})

	t.Run("exec terminal runs commands in the task", func(t *testing.T) {
		// typeLine types into the focused terminal as a paste would (key
		// events reach xterm twice, as a key and as input) and presses
		// Enter.
		typeLine := func(text string) chromedp.Action[chromedp.Void] {
			return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
				if _, err := cdp.Call(ctx, tgt, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
					return err
				}
				_, err := chromedp.KeyEvent("\r")(ctx, tgt)
				return err
			})
		}
		termText := `document.querySelector("#exec-terminal .xterm-rows")?.textContent || ""`
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/allocations/"+allocID),
			chromedp.WaitVisible(chromedp.CSS("#exec-connect")),
			waitJS(`document.querySelector("#exec-task").value === "sleep" && document.querySelector("#exec-command").value === "/bin/sh"`),
			chromedp.Click(chromedp.CSS("#exec-connect")),
			textContains("#exec-status", "Connected to task sleep"),
			waitJS(`document.activeElement?.classList.contains("xterm-helper-textarea")`),
			// The shell's prompt.
			waitJS(`/[#$]/.test(`+termText+`)`),
			// The shell computes the answer, so that the text is its output
			// and not the echo of what was typed.
			typeLine("echo hello-$((6*7))"),
			waitJS(termText+`.includes("hello-42")`),
			// The terminal's size reached the task's terminal: stty
			// reports as many rows as xterm draws.
			typeLine("stty size"),
			waitJS(`(() => { const rows = document.querySelectorAll("#exec-terminal .xterm-rows > div").length; return new RegExp("(^|[^0-9])" + rows + " [0-9]+").test(`+termText+`); })()`),
			typeLine("exit 3"),
			textContains("#exec-status", "Exited with code 3"),
			chromedp.WaitVisible(chromedp.CSS("#exec-connect")),
		)
		// A command with arguments, stdin to cat and the end of input.
		run(t, ctx, wait,
			chromedp.SetValue(chromedp.CSS("#exec-command"), `/bin/sh -c "cat; echo cat-done"`),
			chromedp.Click(chromedp.CSS("#exec-connect")),
			textContains("#exec-status", "Connected"),
			waitJS(`document.activeElement?.classList.contains("xterm-helper-textarea")`),
			typeLine("meow"),
			waitJS(termText+`.includes("meow")`),
			// Ctrl-D ends cat's input; the shell then says it is done.
			chromedp.KeyEvent("d", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
			waitJS(termText+`.includes("cat-done")`),
			textContains("#exec-status", "Exited with code 0"),
		)
	})

	t.Run("restarting the allocation from its page", func(t *testing.T) {
		run(t, ctx, wait, chromedp.Click(chromedp.CSS("#restart-alloc")))
		d.waitFor(t, "the task restarted", func() bool {
			var a struct {
				TaskStates map[string]struct{ Restarts int }
			}
			return d.getJSON("/v1/allocation/"+allocID, &a) == nil && a.TaskStates["sleep"].Restarts == 1
		})
		run(t, ctx, wait, textContains("article.task", "Restart Signaled"))
	})

	t.Run("stopping the job from its page stops it", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs/web@default"),
			chromedp.WaitVisible(chromedp.CSS("#stop-job")),
			chromedp.Click(chromedp.CSS("#stop-job")),
			chromedp.WaitVisible(chromedp.CSS("#stop-confirm")),
			chromedp.Click(chromedp.CSS("#stop-confirm")),
		)
		d.waitFor(t, "the job stopped", func() bool {
			var job map[string]any
			return d.getJSON("/v1/job/web", &job) == nil && job["Stop"] == true
		})
		// The page follows: the allocation completes and Start appears.
		run(t, ctx, wait,
			chromedp.WaitVisible(chromedp.CSS("#start-job")),
			textContains("#s-allocations + .table-wrap", "complete"),
		)
	})

	t.Run("starting the stopped job from its page", func(t *testing.T) {
		run(t, ctx, wait, chromedp.Click(chromedp.CSS("#start-job")))
		d.waitFor(t, "the job started", func() bool {
			var job map[string]any
			return d.getJSON("/v1/job/web", &job) == nil && job["Stop"] == false
		})
		run(t, ctx, wait, chromedp.WaitVisible(chromedp.CSS("#stop-job")))
	})

	t.Run("a failed placement shows its reason", func(t *testing.T) {
		d.runHCL(t, sleepJob("huge", 1, 100, 10_000_000))
		var evalID string
		d.waitFor(t, "huge's evaluation with a placement failure", func() bool {
			var evals []map[string]any
			if d.getJSON("/v1/job/huge/evaluations", &evals) != nil {
				return false
			}
			for _, e := range evals {
				if f, _ := e["FailedTGAllocs"].(map[string]any); len(f) > 0 {
					evalID, _ = e["ID"].(string)
					return true
				}
			}
			return false
		})
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs/huge@default"),
			chromedp.WaitVisible(chromedp.CSS("#s-placement-failures")),
			textContains(".failure .reason", "memory"),
			// The agent's own node came closest; it lacked memory.
			textContains(".failure .closest", "ui-test lacked"),
			textContains(".failure .closest", "MB memory"),
			chromedp.Navigate(d.addr+"/ui/evaluations/"+evalID),
			textContains(".failure", "not placed"),
			textContains(".failure .reason", "resources exhausted: memory"),
			// The leader's timeline of the blocked evaluation.
			textContains("#s-timeline + .table-wrap", "blocked"),
			textContains("#s-timeline + .table-wrap", "waiting for capacity"),
		)
	})

	t.Run("run a job from HCL with a plan preview", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs/run"),
			chromedp.WaitVisible(chromedp.CSS("#job-hcl")),
			chromedp.SetValue(chromedp.CSS("#job-hcl"), sleepJob("planned", 1, 100, 32)),
			chromedp.Click(chromedp.CSS("#plan-job")),
			textContains("#plan-out", "Added job planned"),
			textContains("#plan-out", "All allocations can be placed"),
			chromedp.Click(chromedp.CSS("#run-job")),
			waitJS(`location.pathname === "/ui/jobs/planned@default"`),
			textContains("#s-allocations + .table-wrap", "running"),
		)
	})

	// The deployment of the run is failed first: a job is not scaled
	// while a deployment of it is running (as in Nomad).
	t.Run("failing a deployment from the job page", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs/planned@default"),
			chromedp.WaitVisible(chromedp.CSS(`button[aria-label^="Fail deployment"]`)),
			chromedp.Click(chromedp.CSS(`button[aria-label^="Fail deployment"]`)),
		)
		d.waitFor(t, "the deployment failed", func() bool {
			var dep struct{ Status string }
			return d.getJSON("/v1/job/planned/deployment", &dep) == nil && dep.Status == "failed"
		})
		run(t, ctx, wait, textContains("#s-deployments + .table-wrap", "failed"))
	})

	t.Run("scaling a group from the job page", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs/planned@default"),
			textContains("#s-allocations + .table-wrap", "running"),
			chromedp.SetValue(chromedp.CSS("#scale-main"), "2"),
			chromedp.Click(chromedp.CSS(`button[aria-label="Scale group main"]`)),
		)
		d.waitFor(t, "planned scaled to 2", func() bool {
			var job struct{ TaskGroups []struct{ Count int } }
			return d.getJSON("/v1/job/planned", &job) == nil && len(job.TaskGroups) == 1 && job.TaskGroups[0].Count == 2
		})
		run(t, ctx, wait, waitJS(`document.querySelectorAll("#s-allocations + .table-wrap tbody tr").length === 2`))
	})

	t.Run("reverting to an earlier version from the job page", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/jobs/planned@default"),
			chromedp.WaitVisible(chromedp.CSS("#revert-0")),
			// The versions list is redrawn as the job's data arrives: click
			// whichever button is there when the click happens.
			clickNow("#revert-0"),
			textContains("#toast", "reverted to version 0"),
		)
		d.waitFor(t, "planned reverted to count 1", func() bool {
			var job struct {
				Version    int
				TaskGroups []struct{ Count int }
			}
			return d.getJSON("/v1/job/planned", &job) == nil && job.Version == 2 && job.TaskGroups[0].Count == 1
		})
	})

	t.Run("topology draws every node", func(t *testing.T) {
		var nodes []map[string]any
		if err := d.getJSON("/v1/nodes", &nodes); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/topology"),
			chromedp.WaitVisible(chromedp.CSS(".tnode")),
			// planned's allocation fills part of the node's bars.
			chromedp.WaitVisible(chromedp.CSS(`.tseg[data-job="planned"]`)),
		)
		drawn, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".tnode").length`))
		if err != nil {
			t.Fatal(err)
		}
		if drawn != len(nodes) {
			t.Fatalf("topology drew %d nodes, the cluster has %d", drawn, len(nodes))
		}
		for _, n := range nodes {
			run(t, ctx, wait, chromedp.WaitVisible(chromedp.CSS(`.tnode[data-node="`+n["ID"].(string)+`"]`)))
		}
	})

	t.Run("node page: eligibility and drain", func(t *testing.T) {
		// Nomad's CLI prints /ui/clients links; they are the node pages.
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/clients"),
			chromedp.WaitVisible(chromedp.CSS(`a[href^="/ui/nodes/"]`)),
			chromedp.Click(chromedp.CSS(`main a[href^="/ui/nodes/"]`)),
			chromedp.WaitVisible(chromedp.CSS("#s-how-full + .fill .meter")),
			textContains("#toggle-eligibility", "Mark ineligible"),
			chromedp.Click(chromedp.CSS("#toggle-eligibility")),
		)
		eligibility := func(want string) func() bool {
			return func() bool {
				var nodes []map[string]any
				return d.getJSON("/v1/nodes", &nodes) == nil && len(nodes) == 1 && nodes[0]["SchedulingEligibility"] == want
			}
		}
		d.waitFor(t, "the node ineligible", eligibility("ineligible"))
		run(t, ctx, wait, textContains("#toggle-eligibility", "Mark eligible"), chromedp.Click(chromedp.CSS("#toggle-eligibility")))
		d.waitFor(t, "the node eligible again", eligibility("eligible"))

		// Drain, then stop draining (the node stays ineligible), then
		// mark it eligible again.
		draining := func(want bool) func() bool {
			return func() bool {
				var nodes []map[string]any
				if d.getJSON("/v1/nodes", &nodes) != nil || len(nodes) != 1 {
					return false
				}
				var node map[string]any
				return d.getJSON("/v1/node/"+nodes[0]["ID"].(string), &node) == nil && (node["DrainStrategy"] != nil) == want
			}
		}
		run(t, ctx, wait,
			textContains("#toggle-eligibility", "Mark ineligible"),
			chromedp.SetValue(chromedp.CSS("#drain-deadline"), "2h"),
			chromedp.Click(chromedp.CSS("#drain-node")),
		)
		d.waitFor(t, "the node draining", draining(true))
		run(t, ctx, wait, chromedp.WaitVisible(chromedp.CSS("#stop-drain")), textContains("main", "deadline"),
			chromedp.Click(chromedp.CSS("#stop-drain")))
		d.waitFor(t, "the drain stopped", draining(false))
		run(t, ctx, wait, chromedp.WaitVisible(chromedp.CSS("#drain-node")), textContains("#toggle-eligibility", "Mark eligible"),
			chromedp.Click(chromedp.CSS("#toggle-eligibility")))
		d.waitFor(t, "the node eligible after the drain", eligibility("eligible"))
	})

	t.Run("pausing the eval broker from the scheduler page", func(t *testing.T) {
		paused := func(want bool) func() bool {
			return func() bool {
				var cfg struct {
					SchedulerConfig struct{ PauseEvalBroker bool }
				}
				return d.getJSON("/v1/operator/scheduler/configuration", &cfg) == nil && cfg.SchedulerConfig.PauseEvalBroker == want
			}
		}
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/scheduler"),
			textContains("#toggle-broker", "Pause the broker"),
			// The queues by scheduler type, one row per type.
			textContains("#by-type", "By scheduler type"),
			textContains("#by-type", "sysbatch"),
			chromedp.Click(chromedp.CSS("#toggle-broker")),
		)
		d.waitFor(t, "the broker paused", paused(true))
		run(t, ctx, wait, textContains("#broker-state", "paused"), textContains("#toggle-broker", "Resume the broker"),
			chromedp.Click(chromedp.CSS("#toggle-broker")))
		d.waitFor(t, "the broker resumed", paused(false))
	})

	t.Run("servers shows the raft leader", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/servers"),
			textContains("#s-raft-peers + *", "leader"),
		)
	})

	t.Run("pausing the workers from the scheduler page pauses them", func(t *testing.T) {
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/scheduler"),
			textContains("#toggle-workers", "Pause workers"),
			clickNow("#toggle-workers"),
		)
		var lastStatus string
		d.waitFor(t, "every worker paused", func() bool {
			var cfg map[string]any
			var info struct {
				Schedulers []struct {
					Status string `json:"status"`
				} `json:"schedulers"`
			}
			if d.getJSON("/v1/agent/schedulers/config", &cfg) != nil || cfg["paused"] != true {
				return false
			}
			if d.getJSON("/v1/agent/schedulers", &info) != nil || len(info.Schedulers) == 0 {
				return false
			}
			for _, w := range info.Schedulers {
				if w.Status != "Paused" {
					lastStatus = fmt.Sprint(info.Schedulers)
					return false
				}
			}
			return true
		}, func() string { return lastStatus })
		run(t, ctx, wait,
			textContains("#toggle-workers", "Resume workers"),
			clickNow("#toggle-workers"),
		)
		d.waitFor(t, "the workers resumed", func() bool {
			var cfg map[string]any
			return d.getJSON("/v1/agent/schedulers/config", &cfg) == nil && cfg["paused"] == false
		})

		// One worker alone: its own Pause button, then Resume.
		var info struct {
			Schedulers []struct {
				ID             string `json:"id"`
				Status         string `json:"status"`
				OperatorPaused bool   `json:"operator_paused"`
			} `json:"schedulers"`
		}
		if err := d.getJSON("/v1/agent/schedulers", &info); err != nil || len(info.Schedulers) == 0 {
			t.Fatalf("workers: %v %v", info, err)
		}
		id := info.Schedulers[len(info.Schedulers)-1].ID
		worker := func(paused bool) func() bool {
			return func() bool {
				// A fresh value each time: operator_paused is left out
				// when false.
				info.Schedulers = nil
				if d.getJSON("/v1/agent/schedulers", &info) != nil {
					return false
				}
				for _, w := range info.Schedulers {
					if w.ID == id {
						return w.OperatorPaused == paused && (w.Status == "Paused") == paused
					}
				}
				return false
			}
		}
		button := `#workers button[data-worker="` + id + `"]`
		run(t, ctx, wait, textContains(button, "Pause"), clickNow(button))
		d.waitFor(t, "the worker paused alone", worker(true))
		run(t, ctx, wait, textContains(button, "Resume"), textContains("#workers", "by an operator"), clickNow(button))
		d.waitFor(t, "the worker resumed", worker(false), func() string {
			text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#workers")))
			return fmt.Sprintf("%+v\n%s", info, text)
		})
	})

	// Last: it adds nodes, which the cases above count.
	t.Run("the node list shows a page of nodes at a time", func(t *testing.T) {
		for i := range 150 {
			registerSimNode(t, d, fmt.Sprintf("sim-%03d", i), "dc2", "sim", 4000, 8192)
		}
		rows := `document.querySelectorAll("main tbody tr").length`
		run(t, ctx, wait,
			chromedp.Navigate(d.addr+"/ui/nodes"),
			textContains("main .count", "151 of 151 nodes, the first 100 shown"),
			waitJS(rows+` === 100`),
			textContains("#nodes-more", "Show 51 more"),
			chromedp.Click(chromedp.CSS("#nodes-more")),
			waitJS(rows+` === 151`),
			waitJS(`!document.querySelector("#nodes-more")`),
			// The search covers every node, not only those shown.
			chromedp.SendKeys(chromedp.CSS("#n-search"), "sim-149"),
			textContains("main .count", "1 of 151 nodes"),
			waitJS(rows+` === 1`),
		)
	})

	t.Run("every page loads without a script error", func(t *testing.T) {
		for _, p := range []string{"/ui/", "/ui/jobs", "/ui/nodes", "/ui/evaluations", "/ui/scheduler", "/ui/servers", "/ui/topology", "/ui/settings/tokens", "/ui/variables", "/ui/nowhere"} {
			run(t, ctx, wait, chromedp.Navigate(d.addr+p), waitJS(`!document.querySelector("main .loading") && !!document.querySelector("main h1")`))
			title, err := chromedp.Run(ctx, chromedp.Title())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(title, "Nomad") {
				t.Errorf("%s: title %q", p, title)
			}
		}
		if errs := pageErrors.take(); len(errs) > 0 {
			t.Errorf("uncaught script errors: %q", errs)
		}
	})
}
