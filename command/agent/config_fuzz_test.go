package agent

import (
	"testing"
)

// FuzzParseConfig decodes agent configuration bytes, as HCL and as JSON,
// onto the defaults and validates the result, as the agent does with its
// -config files. Neither step may panic; a refusal is a *ConfigError or a
// validation error naming the key.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("data_dir = \"/tmp/nomad\"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n}\n"), false)
	f.Add([]byte(`{"data_dir":"/tmp/nomad","client":{"enabled":true,"meta":{"rack":"r1"}}}`), true)
	f.Fuzz(func(t *testing.T, src []byte, asJSON bool) {
		name := "fuzz.hcl"
		if asJSON {
			name = "fuzz.json"
		}
		c := DefaultConfig()
		if err := ParseConfig(c, name, src); err != nil {
			if err.Error() == "" {
				t.Fatal("a config error without a message")
			}
			return
		}
		_ = c.Validate()
	})
}
