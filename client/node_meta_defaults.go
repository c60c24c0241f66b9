package client

import "maps"

// defaultNodeMeta is the metadata every node registers unless the
// client's configuration sets the key: Nomad's defaults for Consul
// Connect sidecars and gateways (the Envoy image, whose version Nomad
// fills in from Consul, log level and worker threads, and the user and
// outbound port of transparent proxies). This server runs no Connect
// sidecars; the values are plain metadata, there for the jobs and tools
// that read them as they do on Nomad's nodes.
var defaultNodeMeta = map[string]string{
	"connect.sidecar_image":                           "docker.io/envoyproxy/envoy:v${NOMAD_envoy_version}",
	"connect.gateway_image":                           "docker.io/envoyproxy/envoy:v${NOMAD_envoy_version}",
	"connect.log_level":                               "info",
	"connect.proxy_concurrency":                       "1",
	"connect.transparent_proxy.default_uid":           "101",
	"connect.transparent_proxy.default_outbound_port": "15001",
}

// withDefaultNodeMeta is the configuration's meta with the defaults it
// does not set added; meta itself is left alone.
func withDefaultNodeMeta(meta map[string]string) map[string]string {
	out := maps.Clone(defaultNodeMeta)
	maps.Copy(out, meta)
	return out
}
