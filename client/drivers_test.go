package client

import (
	"maps"
	"slices"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
)

func TestBuildDrivers(t *testing.T) {
	cases := []struct {
		name    string
		options map[string]string
		plugins map[string]map[string]interface{}
		offered []string
		rawExec bool // raw_exec healthy
		err     string
	}{
		{name: "defaults", offered: []string{"exec", "raw_exec"}},
		{name: "raw_exec by option", options: map[string]string{OptionRawExecEnable: "1"},
			offered: []string{"exec", "raw_exec"}, rawExec: true},
		{name: "raw_exec by plugin", plugins: map[string]map[string]interface{}{"raw_exec": {"enabled": true}},
			offered: []string{"exec", "raw_exec"}, rawExec: true},
		{name: "mock by option", options: map[string]string{OptionMockDriverEnable: "true"},
			offered: []string{"exec", "mock_driver", "raw_exec"}},
		{name: "allowlist", options: map[string]string{OptionMockDriverEnable: "true", OptionDriverAllowlist: "mock_driver, raw_exec"},
			offered: []string{"mock_driver", "raw_exec"}},
		{name: "denylist", options: map[string]string{OptionDriverDenylist: "exec"},
			offered: []string{"raw_exec"}},
		{name: "unknown plugin key", plugins: map[string]map[string]interface{}{"exec": {"no_pivot_root": true}},
			err: `client: plugin "exec": task config: unknown field "no_pivot_root"`},
		{name: "plugin of another driver", plugins: map[string]map[string]interface{}{"docker": {"x": 1}},
			offered: []string{"exec", "raw_exec"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{Options: tc.options, Plugins: tc.plugins, Logger: hclog.NewNullLogger()}
			cat, err := buildDrivers(cfg)
			if tc.err != "" {
				must.EqError(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.offered, slices.Sorted(maps.Keys(cat)))
			if d, ok := cat["raw_exec"]; ok {
				must.Eq(t, tc.rawExec, d.Fingerprint().Healthy)
			}
		})
	}
}
