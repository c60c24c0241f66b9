package agent

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// stringList is a repeatable flag (-config a -config b).
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// agentFlags are the command-line flags of `nomad agent`. Only flags the
// user actually gave override the configuration files.
type agentFlags struct {
	set map[string]bool

	dev             bool
	server          bool
	client          bool
	configPaths     stringList
	dataDir         string
	bind            string
	bootstrapExpect int
	retryJoin       stringList
	servers         string
	node            string
	dc              string
	region          string
	logLevel        string
	logJSON         bool
	numSchedulers   int
	nodeClass       string
	nodePool        string
	meta            stringList
	networkIface    string
}

func newAgentFlagSet(f *agentFlags, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.BoolVar(&f.dev, "dev", false, "")
	fs.BoolVar(&f.server, "server", false, "")
	fs.BoolVar(&f.client, "client", false, "")
	fs.Var(&f.configPaths, "config", "")
	fs.StringVar(&f.dataDir, "data-dir", "", "")
	fs.StringVar(&f.bind, "bind", "", "")
	fs.IntVar(&f.bootstrapExpect, "bootstrap-expect", 0, "")
	fs.Var(&f.retryJoin, "retry-join", "")
	fs.StringVar(&f.servers, "servers", "", "")
	fs.StringVar(&f.node, "node", "", "")
	fs.StringVar(&f.dc, "dc", "", "")
	fs.StringVar(&f.region, "region", "", "")
	fs.StringVar(&f.logLevel, "log-level", "", "")
	fs.BoolVar(&f.logJSON, "log-json", false, "")
	fs.IntVar(&f.numSchedulers, "num-schedulers", 0, "")
	fs.StringVar(&f.nodeClass, "node-class", "", "")
	fs.StringVar(&f.nodePool, "node-pool", "", "")
	fs.Var(&f.meta, "meta", "")
	fs.StringVar(&f.networkIface, "network-interface", "", "")
	return fs
}

// parseAgentFlags parses args; usage errors are written to out as well
// as returned.
func parseAgentFlags(args []string, out io.Writer) (*agentFlags, error) {
	f := &agentFlags{set: map[string]bool{}}
	fs := newAgentFlagSet(f, out)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return f, nil
}

// LoadConfig builds the agent's configuration from its command-line
// arguments: the defaults (-dev ones with -dev), then every -config path
// in order, then the other flags. The result is validated.
func LoadConfig(args []string, out io.Writer) (*Config, error) {
	f, err := parseAgentFlags(args, out)
	if err != nil {
		return nil, err
	}
	c := DefaultConfig()
	if f.dev {
		c = DevConfig()
	}
	if err := LoadConfigFiles(c, f.configPaths); err != nil {
		return nil, err
	}
	if f.dev {
		// A dev agent is a server and a client whatever its files say:
		// Nomad merges `enabled = false` as "not set", so a file cannot
		// turn off what -dev turned on (the api package's test harness
		// writes client { enabled = false } and starts it with -dev).
		c.Server.Enabled, c.Client.Enabled = true, true
	}
	if err := f.apply(c); err != nil {
		return nil, err
	}
	c.normalize()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// apply overrides c with the flags that were given.
func (f *agentFlags) apply(c *Config) error {
	str := func(flagName, key string, dst *string, val string) {
		if f.set[flagName] {
			*dst = val
			c.setOrigin(key, "flag -"+flagName)
		}
	}
	str("data-dir", "data_dir", &c.DataDir, f.dataDir)
	str("bind", "bind_addr", &c.BindAddr, f.bind)
	str("node", "name", &c.Name, f.node)
	str("dc", "datacenter", &c.Datacenter, f.dc)
	str("region", "region", &c.Region, f.region)
	str("log-level", "log_level", &c.LogLevel, f.logLevel)
	str("node-class", "client.node_class", &c.Client.NodeClass, f.nodeClass)
	str("node-pool", "client.node_pool", &c.Client.NodePool, f.nodePool)
	str("network-interface", "client.network_interface", &c.Client.NetworkInterface, f.networkIface)
	if f.set["server"] {
		c.Server.Enabled = f.server
		c.setOrigin("server.enabled", "flag -server")
	}
	if f.set["client"] {
		c.Client.Enabled = f.client
		c.setOrigin("client.enabled", "flag -client")
	}
	if f.set["log-json"] {
		c.LogJSON = f.logJSON
	}
	if f.set["bootstrap-expect"] {
		c.Server.BootstrapExpect = f.bootstrapExpect
		c.setOrigin("server.bootstrap_expect", "flag -bootstrap-expect")
	}
	if f.set["num-schedulers"] {
		c.Server.NumSchedulers = f.numSchedulers
		c.setOrigin("server.num_schedulers", "flag -num-schedulers")
	}
	if f.set["retry-join"] {
		c.Server.ServerJoin.RetryJoin = slices.Clone(f.retryJoin)
		c.setOrigin("server.server_join.retry_join", "flag -retry-join")
	}
	if f.set["servers"] {
		c.Client.Servers = nil
		for _, s := range strings.Split(f.servers, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.Client.Servers = append(c.Client.Servers, s)
			}
		}
		c.setOrigin("client.servers", "flag -servers")
	}
	for _, kv := range f.meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("flag -meta: %q must be key=value", kv)
		}
		if c.Client.Meta == nil {
			c.Client.Meta = map[string]string{}
		}
		c.Client.Meta[k] = v
	}
	return nil
}

// normalize folds older spellings into the current keys once every layer
// is applied.
func (c *Config) normalize() {
	s := &c.Server
	for _, a := range s.RetryJoin {
		if !slices.Contains(s.ServerJoin.RetryJoin, a) {
			s.ServerJoin.RetryJoin = append(s.ServerJoin.RetryJoin, a)
		}
	}
	for _, a := range s.StartJoin {
		if !slices.Contains(s.ServerJoin.StartJoin, a) {
			s.ServerJoin.StartJoin = append(s.ServerJoin.StartJoin, a)
		}
	}
	s.RetryJoin, s.StartJoin = nil, nil
	c.LogLevel = strings.ToUpper(c.LogLevel)
}
