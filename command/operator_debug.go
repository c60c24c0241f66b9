package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/version"
)

// OperatorDebugCommand gathers what an operator attaches to a bug report
// into one directory or tar.gz archive: the cluster's state and
// membership, every -interval until -duration the lists and metrics that
// change, and from each chosen agent its logs and profiles.
type OperatorDebugCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorDebugCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator debug [options]

  Build an archive of the cluster's state for a bug report: the agent's
  configuration (secrets redacted), members, Raft peers, regions,
  namespaces and scheduler configuration once; metrics, nodes, jobs,
  allocations, evaluations and deployments every -interval for
  -duration; and from each chosen server and client its log lines for
  -duration (the monitor) and its CPU, heap and goroutine profiles.

  This server's agents serve logs and profiles of themselves only: a
  server or client other than the agent addressed is listed in the
  archive's errors.txt; run the command against each agent to capture it.

  When ACLs are enabled, this command needs a management token (agent
  read for the monitor, agent write for the profiles, and the read
  capabilities of what it lists).

` + generalOptionsUsage() + `

Debug Options:

  -duration=<duration>
    How long to capture logs and interval data. Default = 2m

  -interval=<duration>
    How often to capture the interval data within -duration.
    Default = 30s

  -log-level=<level>
    The level of the monitor's log lines. Default = TRACE

  -max-nodes=<n>
    Capture at most this many clients (0: no limit). Default = 10

  -node-id=<id>,<id>|all
    The clients (node IDs or prefixes) to capture logs and profiles of.
    Default = none

  -output=<dir>
    Write the capture as a directory under this one instead of a tar.gz
    archive in the current directory.

  -pprof-duration=<duration>
    How long the CPU profile runs. Default = 1s

  -server-id=<name>,<name>|leader|all
    The servers to capture logs and profiles of. Default = all

  -stale
    Let any server answer the cluster queries (when there is no leader).

  -verbose
    Print each file written.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorDebugCommand) Synopsis() string { return "Build a debug archive" }

// debugTarget is an agent whose logs and profiles are captured: a server
// (by name) or a client (by node ID).
type debugTarget struct {
	kind string // "server" or "client"
	id   string
}

// param is the query parameter that routes a request to the target.
func (t debugTarget) param() (string, string) {
	if t.kind == "server" {
		return "server_id", t.id
	}
	return "node_id", t.id
}

// debugCapture is one run of the command.
type debugCapture struct {
	meta    *Meta
	client  *api.Client
	dir     string
	stale   bool
	verbose bool

	mu     sync.Mutex
	errors []string
}

// Run implements cli.Command.
func (c *OperatorDebugCommand) Run(args []string) int {
	const name = "operator debug"
	var duration, interval, pprofDuration time.Duration
	var serverIDs, nodeIDs, output, logLevel string
	var maxNodes int
	var stale, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.DurationVar(&duration, "duration", 2*time.Minute, "")
	fs.DurationVar(&interval, "interval", 30*time.Second, "")
	fs.DurationVar(&pprofDuration, "pprof-duration", time.Second, "")
	fs.StringVar(&serverIDs, "server-id", "all", "")
	fs.StringVar(&nodeIDs, "node-id", "", "")
	fs.StringVar(&output, "output", "", "")
	fs.StringVar(&logLevel, "log-level", "TRACE", "")
	fs.IntVar(&maxNodes, "max-nodes", 10, "")
	fs.BoolVar(&stale, "stale", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseArgs(fs, args) {
		return 1
	}
	switch {
	case duration <= 0 || interval <= 0:
		return c.usageError(name, "-duration and -interval must be positive")
	case interval > duration:
		return c.usageError(name, "-interval must not be longer than -duration")
	case pprofDuration <= 0:
		return c.usageError(name, "-pprof-duration must be positive")
	case maxNodes < 0:
		return c.usageError(name, "-max-nodes must not be negative")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}

	stamp := c.now().UTC().Format("2006-01-02-150405Z")
	parent := output
	if parent == "" {
		var err error
		if parent, err = os.MkdirTemp("", "nomad-debug-"); err != nil {
			c.Ui.Error(fmt.Sprintf("Error creating a temporary directory: %s", err))
			return 1
		}
		defer os.RemoveAll(parent)
	}
	d := &debugCapture{meta: &c.Meta, client: client, dir: filepath.Join(parent, "nomad-debug-"+stamp), stale: stale, verbose: verbose}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		c.Ui.Error(fmt.Sprintf("Error creating the output directory: %s", err))
		return 1
	}

	servers, allServers, err := d.servers(serverIDs)
	if c.callFailed(err, "listing servers") {
		return 1
	}
	nodes, allNodes, err := d.nodes(nodeIDs, maxNodes)
	if c.callFailed(err, "listing nodes") {
		return 1
	}
	c.Ui.Output("Starting debugger...\n")
	c.Ui.Output(formatKV([]string{
		"Nomad CLI Version|" + version.String(),
		"Region|" + d.region(),
		"Namespace|" + c.namespaceOrDefault(),
		fmt.Sprintf("Servers|(%d/%d) %v", len(servers), allServers, targetIDs(servers)),
		fmt.Sprintf("Clients|(%d/%d) %v", len(nodes), allNodes, targetIDs(nodes)),
		"Interval|" + interval.String(),
		"Duration|" + duration.String(),
		"pprof Duration|" + pprofDuration.String(),
	}))

	c.Ui.Output("\nCapturing cluster data...")
	d.captureCluster()

	// The monitors run for the whole capture, beside the profiles and
	// the interval data; -duration counts from the first interval, so
	// slow profiles do not eat into it.
	monitorCtx, stopMonitors := context.WithCancel(c.ctx())
	defer stopMonitors()
	targets := append(append([]debugTarget{}, servers...), nodes...)
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Go(func() { d.monitor(monitorCtx, t, logLevel) })
	}
	for _, t := range targets {
		c.Ui.Output(fmt.Sprintf("    Capturing pprof data for %s %s", t.kind, t.id))
		d.profiles(t, pprofDuration)
	}
	intervalCtx, cancel := context.WithTimeout(c.ctx(), duration)
	defer cancel()
	d.intervals(intervalCtx, interval)
	stopMonitors()
	wg.Wait()
	if c.ctx().Err() != nil {
		c.Ui.Error("Debug capture interrupted; writing what was captured")
	}
	d.writeErrors()

	if output != "" {
		c.Ui.Output(fmt.Sprintf("Created debug directory: %s", d.dir))
		return 0
	}
	archive := "nomad-debug-" + stamp + ".tar.gz"
	if err := writeTarGz(archive, d.dir); err != nil {
		c.Ui.Error(fmt.Sprintf("Error creating the debug archive: %s", err))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Created debug archive: %s", archive))
	return 0
}

func targetIDs(ts []debugTarget) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.id)
	}
	return out
}

// servers resolves -server-id against the members: "all", "leader", or
// names; it returns the chosen ones and how many there are.
func (d *debugCapture) servers(spec string) ([]debugTarget, int, error) {
	members, err := d.client.Agent().Members()
	if err != nil {
		return nil, 0, err
	}
	var names []string
	for _, m := range members.Members {
		names = append(names, m.Name)
	}
	sort.Strings(names)
	var leader string
	if spec == "leader" {
		addr, err := d.client.Status().Leader()
		if err != nil {
			return nil, 0, err
		}
		for _, m := range members.Members {
			if rpc := m.Tags["rpc_addr"] + ":" + m.Tags["port"]; rpc == addr {
				leader = m.Name
			}
		}
	}
	var out []debugTarget
	for _, n := range names {
		if spec == "all" || n == leader || idListed(spec, n) {
			out = append(out, debugTarget{kind: "server", id: n})
		}
	}
	return out, len(names), nil
}

// nodes resolves -node-id against the node list: "all" or ID prefixes,
// at most max (0: no limit).
func (d *debugCapture) nodes(spec string, max int) ([]debugTarget, int, error) {
	if spec == "" {
		return nil, 0, nil
	}
	q := d.meta.query()
	q.AllowStale = d.stale
	stubs, _, err := d.client.Nodes().List(q)
	if err != nil {
		return nil, 0, err
	}
	sortNodes(stubs)
	var out []debugTarget
	for _, n := range stubs {
		if max > 0 && len(out) == max {
			break
		}
		if spec == "all" || idListed(spec, n.ID) {
			out = append(out, debugTarget{kind: "client", id: n.ID})
		}
	}
	return out, len(stubs), nil
}

// region is the region the command targets: -region, or the agent's.
func (d *debugCapture) region() string {
	if r := d.meta.clientConfig().Region; r != "" {
		return r
	}
	self, err := d.client.Agent().Self()
	if err != nil {
		return "<unknown>"
	}
	return self.Member.Tags["region"]
}

// idListed reports whether id matches (by prefix) one of a comma list.
func idListed(list, id string) bool {
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p != "" && strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

// captureCluster writes what is read once.
func (d *debugCapture) captureCluster() {
	for file, endpoint := range map[string]string{
		"agent-self.json":              "/v1/agent/self",
		"members.json":                 "/v1/agent/members",
		"regions.json":                 "/v1/regions",
		"leader.json":                  "/v1/status/leader",
		"raft-configuration.json":      "/v1/operator/raft/configuration",
		"scheduler-configuration.json": "/v1/operator/scheduler/configuration",
		"namespaces.json":              "/v1/namespaces",
	} {
		d.captureJSON(filepath.Join("cluster", file), endpoint)
	}
}

// intervals captures the changing lists now and every interval until ctx
// ends.
func (d *debugCapture) intervals(ctx context.Context, interval time.Duration) {
	for i := 0; ; i++ {
		d.meta.Ui.Output(fmt.Sprintf("    Capture interval %04d", i))
		dir := filepath.Join("interval", fmt.Sprintf("%04d", i))
		for file, endpoint := range map[string]string{
			"metrics.json":     "/v1/metrics",
			"nodes.json":       "/v1/nodes",
			"jobs.json":        "/v1/jobs?namespace=*",
			"allocations.json": "/v1/allocations?namespace=*",
			"evaluations.json": "/v1/evaluations?namespace=*",
			"deployments.json": "/v1/deployments?namespace=*",
		} {
			d.captureJSON(filepath.Join(dir, file), endpoint)
		}
		if sleepCtx(ctx, interval) != nil {
			return
		}
	}
}

// profiles writes the target's CPU profile (for pprofDuration), heap and
// goroutine dumps.
func (d *debugCapture) profiles(t debugTarget, pprofDuration time.Duration) {
	key, id := t.param()
	base := filepath.Join(t.kind, t.id)
	secs := fmt.Sprintf("%g", pprofDuration.Seconds())
	for file, endpoint := range map[string]string{
		"profile.prof":         "/v1/agent/pprof/profile?seconds=" + secs,
		"heap.prof":            "/v1/agent/pprof/heap",
		"goroutine.prof":       "/v1/agent/pprof/goroutine",
		"goroutine-debug1.txt": "/v1/agent/pprof/goroutine?debug=1",
		"goroutine-debug2.txt": "/v1/agent/pprof/goroutine?debug=2",
	} {
		sep := "?"
		if strings.Contains(endpoint, "?") {
			sep = "&"
		}
		d.captureRaw(filepath.Join(base, file), endpoint+sep+key+"="+url.QueryEscape(id))
	}
}

// monitor streams the target's log lines into monitor.log until ctx ends.
func (d *debugCapture) monitor(ctx context.Context, t debugTarget, level string) {
	key, id := t.param()
	endpoint := "/v1/agent/monitor?plain=true&log_level=" + url.QueryEscape(level) + "&" + key + "=" + url.QueryEscape(id)
	path := filepath.Join(t.kind, t.id, "monitor.log")
	body, err := d.client.Raw().Response(endpoint, (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		if ctx.Err() == nil {
			d.fail(path, err)
		}
		return
	}
	defer body.Close()
	f, err := d.create(path)
	if err != nil {
		d.fail(path, err)
		return
	}
	defer f.Close()
	// The stream ends when ctx does; that is the normal end.
	_, _ = io.Copy(f, body)
}

// captureJSON writes the JSON answer of endpoint, indented and with
// secrets redacted, to path under the capture directory.
func (d *debugCapture) captureJSON(path, endpoint string) {
	q := d.meta.query()
	q.AllowStale = d.stale
	var v any
	if _, err := d.client.Raw().Query(endpoint, &v, q); err != nil {
		d.fail(path, err)
		return
	}
	buf, err := json.MarshalIndent(redactSecrets(v), "", "  ")
	if err != nil {
		d.fail(path, err)
		return
	}
	d.write(path, append(buf, '\n'))
}

// captureRaw writes the answer of endpoint as is.
func (d *debugCapture) captureRaw(path, endpoint string) {
	body, err := d.client.Raw().Response(endpoint, d.meta.query())
	if err != nil {
		d.fail(path, err)
		return
	}
	defer body.Close()
	buf, err := io.ReadAll(body)
	if err != nil {
		d.fail(path, err)
		return
	}
	d.write(path, buf)
}

func (d *debugCapture) create(path string) (*os.File, error) {
	full := filepath.Join(d.dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return nil, err
	}
	if d.verbose {
		d.meta.Ui.Output("    Writing " + path)
	}
	return os.Create(full)
}

func (d *debugCapture) write(path string, buf []byte) {
	f, err := d.create(path)
	if err == nil {
		_, err = f.Write(buf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		d.fail(path, err)
	}
}

// fail records a capture that did not work; the capture goes on.
func (d *debugCapture) fail(path string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errors = append(d.errors, fmt.Sprintf("%s: %s", path, d.meta.describe(err)))
}

// writeErrors lists the failed captures in errors.txt and says how many.
func (d *debugCapture) writeErrors() {
	d.mu.Lock()
	errs := append([]string(nil), d.errors...)
	d.mu.Unlock()
	if len(errs) == 0 {
		return
	}
	sort.Strings(errs)
	d.write("errors.txt", []byte(strings.Join(errs, "\n")+"\n"))
	d.meta.Ui.Warn(fmt.Sprintf("%s could not be captured; see errors.txt in the capture", plural(len(errs), "item")))
}
