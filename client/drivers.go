package client

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/driver/exec"
	"github.com/opennomad/nomad/client/driver/mock"
	"github.com/opennomad/nomad/client/driver/rawexec"
)

// rawExecPlugin is raw_exec's `plugin "raw_exec" { config {...} }`.
type rawExecPlugin struct {
	Enabled bool `json:"enabled"`
}

// execPlugin is exec's plugin configuration; it has no settings yet, so
// any key is reported as unknown rather than silently ignored.
type execPlugin struct{}

// buildDrivers returns the drivers the configuration offers: exec always
// (its fingerprint says whether the host can isolate tasks), raw_exec
// and mock_driver only when enabled, all subject to the allow and deny
// lists. A driver left out is simply unknown to the client, so the
// servers never place its tasks here.
func buildDrivers(c *Config) (driver.Catalog, error) {
	var raw rawExecPlugin
	if err := decodePlugin(c.Plugins, rawexec.Name, &raw); err != nil {
		return nil, err
	}
	var ex execPlugin
	if err := decodePlugin(c.Plugins, exec.Name, &ex); err != nil {
		return nil, err
	}
	rawOpt, _ := c.boolOption(OptionRawExecEnable)
	mockOpt, _ := c.boolOption(OptionMockDriverEnable)

	offered := []driver.Driver{
		exec.New(exec.Config{ExecutorPath: c.ExecutorPath}),
		rawexec.New(rawexec.Config{Enabled: raw.Enabled || rawOpt, ExecutorPath: c.ExecutorPath}),
	}
	if mockOpt {
		offered = append(offered, mock.New())
	}
	known := map[string]bool{exec.Name: true, rawexec.Name: true, mock.Name: true}
	for _, name := range slices.Sorted(maps.Keys(c.Plugins)) {
		if !known[name] {
			c.Logger.Warn("plugin configured for a driver this client does not have", "plugin", name)
		}
	}

	allow := nameSet(c.Options[OptionDriverAllowlist])
	deny := nameSet(c.Options[OptionDriverDenylist])
	var kept []driver.Driver
	for _, d := range offered {
		if (len(allow) > 0 && !allow[d.Name()]) || deny[d.Name()] {
			continue
		}
		kept = append(kept, d)
	}
	return driver.NewCatalog(kept...)
}

// decodePlugin decodes the plugin block of a driver, if any, naming the
// driver in errors.
func decodePlugin(plugins map[string]map[string]interface{}, name string, out interface{}) error {
	cfg, ok := plugins[name]
	if !ok || cfg == nil {
		return nil
	}
	if err := driver.DecodeConfig(cfg, out); err != nil {
		return fmt.Errorf("client: plugin %q: %w", name, err)
	}
	return nil
}

// nameSet parses a comma-separated list of names.
func nameSet(list string) map[string]bool {
	out := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out[n] = true
		}
	}
	return out
}
