package agent

import (
	"reflect"
)

// restartOnlyChanges lists the configuration keys (blocks or top-level
// attributes) that differ between old and new and cannot be applied to a
// running agent. log_level and the tls block's files and settings reload;
// everything else here is read once at startup by the server, the client
// or a listener, and so is turning TLS on or off for HTTP or RPC.
func restartOnlyChanges(old, new *Config) []string {
	type section struct {
		key      string
		old, new any
	}
	sections := []section{
		{"name", old.Name, new.Name},
		{"region", old.Region, new.Region},
		{"datacenter", old.Datacenter, new.Datacenter},
		{"data_dir", old.DataDir, new.DataDir},
		{"bind_addr", old.BindAddr, new.BindAddr},
		{"log_json", old.LogJSON, new.LogJSON},
		{"enable_debug", old.EnableDebug, new.EnableDebug},
		{"ports", old.Ports, new.Ports},
		{"addresses", old.Addresses, new.Addresses},
		{"advertise", old.Advertise, new.Advertise},
		{"server", old.Server, new.Server},
		{"client", old.Client, new.Client},
		{"plugin", old.Plugins, new.Plugins},
		{"telemetry", old.Telemetry, new.Telemetry},
		{"acl", old.ACL, new.ACL},
		{"tls.http", old.TLS.HTTP, new.TLS.HTTP},
		{"tls.rpc", old.TLS.RPC, new.TLS.RPC},
	}
	var out []string
	for _, s := range sections {
		if !reflect.DeepEqual(s.old, s.new) {
			out = append(out, s.key)
		}
	}
	return out
}
