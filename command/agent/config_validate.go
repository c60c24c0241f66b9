package agent

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/structs"
)

var (
	validNodePool       = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,128}$`)
	validHostVolumeName = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,128}$`)
)

// configProblems collects validation problems, each prefixed with where
// the offending key was set.
type configProblems struct {
	c    *Config
	list []string
}

func (p *configProblems) add(key, format string, args ...any) {
	msg := key + ": " + fmt.Sprintf(format, args...)
	if where := p.c.origin(key); where != "" {
		msg = where + ": " + msg
	}
	p.list = append(p.list, msg)
}

// Validate checks the merged configuration and returns a *ConfigError
// listing every problem, each naming the file:line (or flag) that set the
// key when it did not come from the defaults.
func (c *Config) Validate() error {
	p := &configProblems{c: c}
	if !c.Server.Enabled && !c.Client.Enabled {
		p.list = append(p.list, "must enable the server (-server, server { enabled = true }) or the client (-client, client { enabled = true }), or run -dev")
	}
	if c.DataDir == "" && !c.DevMode {
		p.list = append(p.list, "data_dir: required unless running -dev (-data-dir or data_dir = \"/path\")")
	}
	for _, k := range []struct{ key, val string }{{"name", c.Name}, {"region", c.Region}, {"datacenter", c.Datacenter}} {
		if k.val == "" {
			p.add(k.key, "must not be empty")
		} else if strings.ContainsAny(k.val, " \t\n\x00") {
			p.add(k.key, "%q must not contain spaces", k.val)
		}
	}
	if hclog.LevelFromString(c.LogLevel) == hclog.NoLevel {
		p.add("log_level", "unknown level %q (use TRACE, DEBUG, INFO, WARN or ERROR)", c.LogLevel)
	}
	if net.ParseIP(c.BindAddr) == nil {
		p.add("bind_addr", "%q is not an IP address", c.BindAddr)
	}
	for _, port := range []struct {
		key string
		val int
	}{{"ports.http", c.Ports.HTTP}, {"ports.rpc", c.Ports.RPC}, {"ports.serf", c.Ports.Serf}} {
		if port.val < 0 || port.val > 65535 {
			p.add(port.key, "must be within [0, 65535] (0 picks a free port), got %d", port.val)
		}
	}
	for _, a := range []struct{ key, val string }{
		{"addresses.http", c.Addresses.HTTP}, {"addresses.rpc", c.Addresses.RPC}, {"addresses.serf", c.Addresses.Serf},
	} {
		if a.val != "" && net.ParseIP(a.val) == nil {
			p.add(a.key, "%q is not an IP address", a.val)
		}
	}
	for _, a := range []struct{ key, val string }{
		{"advertise.http", c.Advertise.HTTP}, {"advertise.rpc", c.Advertise.RPC}, {"advertise.serf", c.Advertise.Serf},
	} {
		if a.val != "" {
			if _, _, err := splitHostPortDefault(a.val, 1); err != nil {
				p.add(a.key, "%v", err)
			}
		}
	}
	c.validateServer(p)
	c.validateClient(p)
	c.validateTelemetry(p)
	c.Limits.validate(p)
	for name := range c.Plugins {
		if c.Plugins[name] == nil {
			continue
		}
		if v, ok := c.Plugins[name].Config["enabled"]; ok {
			if _, isBool := v.(bool); !isBool {
				p.add("plugin."+name+".config.enabled", "must be a bool, got %v", v)
			}
		}
	}
	if c.ACL.TokenMinExpirationTTL < 0 {
		p.add("acl.token_min_expiration_ttl", "must be >= 0, got %s", c.ACL.TokenMinExpirationTTL)
	}
	if c.ACL.TokenMaxExpirationTTL < 0 {
		p.add("acl.token_max_expiration_ttl", "must be >= 0, got %s", c.ACL.TokenMaxExpirationTTL)
	}
	if lo, hi := c.ACL.TokenMinExpirationTTL, c.ACL.TokenMaxExpirationTTL; lo > 0 && hi > 0 && lo >= hi {
		p.add("acl.token_max_expiration_ttl", "must be greater than token_min_expiration_ttl (%s), got %s", lo, hi)
	}
	for _, tp := range c.TLS.Problems() {
		p.add("tls."+tp.Key, "%s", tp.Problem)
	}
	if c.Vault.Enabled {
		p.add("vault.enabled", "Vault integration is not built; remove the vault block or set enabled = false")
	}
	if len(p.list) == 0 {
		return nil
	}
	return &ConfigError{Problems: p.list}
}

// validateServer checks the server block. The settings the server itself
// takes are checked by the server package (nomad.Config.SettingProblems),
// on the configuration this agent would start its server with; the rules
// here are the agent file's own, such as a zero that the file may not
// use for "the default".
func (c *Config) validateServer(p *configProblems) {
	s := &c.Server
	if s.Enabled && c.DevMode && s.BootstrapExpect != 1 {
		p.add("server.bootstrap_expect", "must be 1 in -dev mode, got %d", s.BootstrapExpect)
	}
	for _, sp := range serverConfig(c).SettingProblems() {
		p.add("server."+sp.Key, "%s", sp.Problem)
	}
	for _, d := range []struct {
		key string
		val time.Duration
	}{
		// Negative values are the server's to report.
		{"server.eval_gc_threshold", s.EvalGCThreshold},
		{"server.batch_eval_gc_threshold", s.BatchEvalGCThreshold},
		{"server.job_gc_threshold", s.JobGCThreshold},
		{"server.node_gc_threshold", s.NodeGCThreshold},
		{"server.deployment_gc_threshold", s.DeploymentGCThreshold},
	} {
		if d.val == 0 {
			p.add(d.key, "must be a positive duration, got %s", d.val)
		}
	}
	if s.ServerJoin.RetryInterval <= 0 {
		p.add("server.server_join.retry_interval", "must be a positive duration, got %s", s.ServerJoin.RetryInterval)
	}
	if s.JobMaxCount < 1 {
		p.add("server.job_max_count", "must be >= 1, got %d", s.JobMaxCount)
	}
	if _, err := humanize.ParseBytes(s.JobMaxSourceSize); err != nil {
		p.add("server.job_max_source_size", "must be a size such as \"1M\" or \"512KiB\", got %q", s.JobMaxSourceSize)
	}
	if s.MemoryLimit != "" {
		if _, err := humanize.ParseBytes(s.MemoryLimit); err != nil {
			p.add("server.memory_limit", "must be a size such as \"2GB\" or \"1536MiB\", got %q", s.MemoryLimit)
		}
	}
	if s.ServerJoin.RetryMax < 0 {
		p.add("server.server_join.retry_max", "must be >= 0, got %d", s.ServerJoin.RetryMax)
	}
	if s.PlanApplyPipeline == 0 {
		// Negative values are the server's to report.
		p.add("server.plan_apply_pipeline", "must be >= 1, got %d", s.PlanApplyPipeline)
	}
	if s.RaftMultiplier < 0 || s.RaftMultiplier > 10 {
		p.add("server.raft_multiplier", "must be between 1 and 10 (0 for the default), got %d", s.RaftMultiplier)
	}
	if s.RaftSnapshotThreshold < 0 {
		p.add("server.raft_snapshot_threshold", "must be >= 0, got %d", s.RaftSnapshotThreshold)
	}
	if s.RaftTrailingLogs < 0 {
		p.add("server.raft_trailing_logs", "must be >= 0, got %d", s.RaftTrailingLogs)
	}
	if s.RaftProtocol != 3 {
		p.add("server.raft_protocol", "only Raft protocol 3 is supported, got %d", s.RaftProtocol)
	}
	if s.EnableEventBroker && s.EventBufferSize < 1 {
		p.add("server.event_buffer_size", "must be >= 1, got %d", s.EventBufferSize)
	}
	sc := s.DefaultSchedulerConfig
	switch sc.SchedulerAlgorithm {
	case structs.SchedulerAlgorithmBinpack, structs.SchedulerAlgorithmSpread:
	default:
		p.add("server.default_scheduler_config.scheduler_algorithm", "must be %q or %q, got %q",
			structs.SchedulerAlgorithmBinpack, structs.SchedulerAlgorithmSpread, sc.SchedulerAlgorithm)
	}
	if sc.NodeLimitForFeasibilityChecks < 0 {
		p.add("server.default_scheduler_config.node_limit_for_feasibility_checks", "must be >= 0, got %d", sc.NodeLimitForFeasibilityChecks)
	}
	if sc.EvalBacklogLimit < 0 {
		p.add("server.default_scheduler_config.eval_backlog_limit", "must be >= 0 (0: no limit), got %d", sc.EvalBacklogLimit)
	}
}

func (c *Config) validateClient(p *configProblems) {
	cl := &c.Client
	if cl.Enabled && !c.Server.Enabled && len(cl.Servers) == 0 &&
		len(cl.ServerJoin.RetryJoin) == 0 && len(cl.ServerJoin.StartJoin) == 0 {
		p.list = append(p.list, "client.servers: a client without a local server needs servers to join (-servers or client { servers = [...] })")
	}
	for _, s := range cl.Servers {
		if _, _, err := splitHostPortDefault(s, DefaultRPCPort); err != nil {
			p.add("client.servers", "%v", err)
		}
	}
	switch {
	case !validNodePool.MatchString(cl.NodePool):
		p.add("client.node_pool", "%q is not a valid node pool name (letters, digits, - and _, at most 128)", cl.NodePool)
	case cl.NodePool == structs.NodePoolAll:
		// The servers would refuse the registration; say so at start.
		p.add("client.node_pool", "node is not allowed to register in node pool %q", structs.NodePoolAll)
	}
	for _, v := range []struct {
		key string
		val int
	}{
		{"client.reserved.cpu", cl.Reserved.CPU}, {"client.reserved.memory", cl.Reserved.MemoryMB},
		{"client.reserved.disk", cl.Reserved.DiskMB}, {"client.cpu_total_compute", cl.CPUTotalCompute},
		{"client.memory_total_mb", cl.MemoryTotalMB}, {"client.gc_max_allocs", cl.GCMaxAllocs},
	} {
		if v.val < 0 {
			p.add(v.key, "must be >= 0, got %d", v.val)
		}
	}
	if _, err := ParsePortSpec(cl.Reserved.ReservedPorts); err != nil {
		p.add("client.reserved.reserved_ports", "%v", err)
	}
	if cl.MinDynamicPort < 1 || cl.MaxDynamicPort > 65535 || cl.MinDynamicPort > cl.MaxDynamicPort {
		p.add("client.min_dynamic_port", "dynamic port range [%d, %d] must lie within [1, 65535] and not be empty", cl.MinDynamicPort, cl.MaxDynamicPort)
	}
	if cl.MaxKillTimeout <= 0 {
		p.add("client.max_kill_timeout", "must be a positive duration, got %s", cl.MaxKillTimeout)
	}
	if cl.GCInterval <= 0 {
		p.add("client.gc_interval", "must be a positive duration, got %s", cl.GCInterval)
	}
	if cl.ServerJoin.RetryInterval <= 0 {
		p.add("client.server_join.retry_interval", "must be a positive duration, got %s", cl.ServerJoin.RetryInterval)
	}
	for _, name := range slices.Sorted(maps.Keys(cl.HostVolumes)) {
		key := "client.host_volume." + name
		v := cl.HostVolumes[name]
		switch {
		case !validHostVolumeName.MatchString(name):
			p.add(key, "%q is not a valid host volume name (letters, digits, - and _, at most 128)", name)
		case v == nil || v.Path == "":
			p.add(key+".path", "required: the directory of this host the volume exposes")
		case !filepath.IsAbs(v.Path):
			p.add(key+".path", "%q must be an absolute path", v.Path)
		}
	}
	if cl.HostVolumesDir != "" && !filepath.IsAbs(cl.HostVolumesDir) {
		p.add("client.host_volumes_dir", "%q must be an absolute path", cl.HostVolumesDir)
	}
}

func (c *Config) validateTelemetry(p *configProblems) {
	t := &c.Telemetry
	for _, d := range []struct {
		key string
		val time.Duration
	}{
		{"telemetry.collection_interval", t.CollectionInterval},
		{"telemetry.in_memory_collection_interval", t.InMemoryCollectionInterval},
		{"telemetry.in_memory_retention_period", t.InMemoryRetentionPeriod},
	} {
		if d.val <= 0 {
			p.add(d.key, "must be a positive duration, got %s", d.val)
		}
	}
}

// ParsePortSpec parses a list of ports and ranges such as "22,80,8000-8010"
// into the ports it names, sorted and without repeats.
func ParsePortSpec(spec string) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		start, err := parsePort(lo)
		if err != nil {
			return nil, fmt.Errorf("port %q: %w", part, err)
		}
		end := start
		if isRange {
			if end, err = parsePort(hi); err != nil {
				return nil, fmt.Errorf("port range %q: %w", part, err)
			}
			if end < start {
				return nil, fmt.Errorf("port range %q ends before it starts", part)
			}
		}
		for port := start; port <= end; port++ {
			if !seen[port] {
				seen[port] = true
				out = append(out, port)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%q is not a port number in [1, 65535]", s)
	}
	return n, nil
}

// splitHostPortDefault splits "host:port" or "host", using port when none
// is given.
func splitHostPortDefault(addr string, port int) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		// No port given ("host", "[::1]"): the address splits once the
		// default one is appended.
		if h, _, perr := net.SplitHostPort(addr + ":" + strconv.Itoa(port)); perr == nil {
			return h, port, nil
		}
		return "", 0, fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "" {
		return "", 0, fmt.Errorf("address %q has no host", addr)
	}
	n, err := parsePort(p)
	if err != nil {
		return "", 0, fmt.Errorf("address %q: %w", addr, err)
	}
	return host, n, nil
}
