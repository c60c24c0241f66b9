package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/client"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/structs"
)

// routeCase is one request to a route, and which of the test's tokens
// may make it: the letters of allowed are the tokens answered anything
// but 403 (n: no token, u: an unknown token, r: the read-only token, R:
// the route's own token, m: management); every other token must get
// 403.
type routeCase struct {
	method, path, body string
	// rules of the route's own token; "" means the management token.
	rules   string
	allowed string
}

const (
	allowAll     = "nurRm"
	allowReaders = "rRm"
	allowRight   = "Rm"
)

// readOnlyRules is the read-only token: namespace read, node read, agent
// read.
const readOnlyRules = `namespace "default" { policy = "read" }
node { policy = "read" }
agent { policy = "read" }`

const (
	nsRead   = `namespace "default" { policy = "read" }`
	nodeRead = `node { policy = "read" }`
	poolRead = `node_pool "default" { policy = "read" }`
	agentRd  = `agent { policy = "read" }`
	agentWr  = `agent { policy = "write" }`
	noID     = "00000000-0000-4000-8000-000000000001"
)

func nsCaps(caps ...string) string {
	b, _ := json.Marshal(caps)
	return `namespace "default" { capabilities = ` + string(b) + ` }`
}

func varCaps(caps ...string) string {
	b, _ := json.Marshal(caps)
	return `namespace "default" { variables { path "app/*" { capabilities = ` + string(b) + ` } } }`
}

func operatorCaps(caps ...string) string {
	b, _ := json.Marshal(caps)
	return `operator { capabilities = ` + string(b) + ` }`
}

// routeCases has the requests made to each registered route, by the
// route's pattern. A route registered without an entry here fails
// TestHTTPACL_EveryRoute.
var routeCases = map[string][]routeCase{
	"/v1/jobs": {
		{method: "GET", path: "/v1/jobs", rules: nsRead, allowed: allowReaders},
		{method: "PUT", path: "/v1/jobs", body: unplaceableBody, rules: nsCaps("submit-job"), allowed: allowRight},
	},
	"/v1/jobs/parse": {{method: "PUT", path: "/v1/jobs/parse", body: `{"JobHCL":"job \"x\" {}"}`, rules: nsCaps("parse-job"), allowed: allowReaders}},
	"/v1/job/": {
		{method: "GET", path: "/v1/job/nosuch", rules: nsRead, allowed: allowReaders},
		{method: "DELETE", path: "/v1/job/nosuch", rules: nsCaps("deregister-job"), allowed: allowRight},
		{method: "GET", path: "/v1/job/nosuch/allocations", rules: nsCaps("read-job"), allowed: allowReaders},
		{method: "GET", path: "/v1/job/nosuch/versions", rules: nsCaps("read-job"), allowed: allowReaders},
		{method: "PUT", path: "/v1/job/web/plan", body: unplaceableBody, rules: nsCaps("plan-job"), allowed: allowRight},
		{method: "PUT", path: "/v1/job/nosuch/evaluate", rules: nsCaps("evaluate-job"), allowed: allowRight},
		{method: "PUT", path: "/v1/job/nosuch/dispatch", body: `{}`, rules: nsCaps("dispatch-job"), allowed: allowRight},
		{method: "PUT", path: "/v1/job/nosuch/periodic/force", rules: nsCaps("force-periodic-job"), allowed: allowRight},
		{method: "PUT", path: "/v1/job/nosuch/revert", body: `{"JobID":"nosuch","JobVersion":1}`, rules: nsCaps("revert-job"), allowed: allowRight},
		{method: "PUT", path: "/v1/job/nosuch/revert", body: `{"JobID":"nosuch","JobVersion":1}`, rules: nsCaps("submit-job"), allowed: allowRight},
		{method: "PUT", path: "/v1/job/nosuch/stable", body: `{"JobID":"nosuch","JobVersion":1}`, rules: nsCaps("stable-job"), allowed: allowRight},
		{method: "GET", path: "/v1/job/nosuch/scale", rules: nsCaps("read-job-scaling"), allowed: allowReaders},
		{method: "GET", path: "/v1/job/nosuch/services", rules: nsCaps("read-job"), allowed: allowReaders},
		{method: "GET", path: "/v1/job/nosuch/actions", rules: nsCaps("read-job"), allowed: allowReaders},
		{method: "PUT", path: "/v1/job/nosuch/scale", body: `{"Count":1,"Target":{"Group":"web"}}`, rules: nsCaps("scale-job"), allowed: allowRight},
		{method: "PUT", path: "/v1/job/nosuch/scale", body: `{"Count":1,"Target":{"Group":"web"}}`, rules: `namespace "default" { policy = "scale" }`, allowed: allowRight},
		{method: "PUT", path: "/v1/job/nosuch/versions/v1/tag", body: `{"Version":0}`, rules: nsCaps("tag-job-version"), allowed: allowRight},
		{method: "DELETE", path: "/v1/job/nosuch/versions/v1/tag", rules: nsCaps("tag-job-version"), allowed: allowRight},
	},
	"/v1/validate/job": {{method: "PUT", path: "/v1/validate/job", body: unplaceableBody, rules: nsRead, allowed: allowReaders}},
	"/v1/nodes":        {{method: "GET", path: "/v1/nodes", rules: nodeRead, allowed: allowReaders}},
	"/v1/nodes/usage":  {{method: "GET", path: "/v1/nodes/usage?allocs=true", rules: nodeRead, allowed: allowReaders}},
	"/v1/node/": {
		{method: "GET", path: "/v1/node/" + noID, rules: nodeRead, allowed: allowReaders},
		{method: "GET", path: "/v1/node/" + noID + "/allocations", rules: nodeRead, allowed: allowReaders},
		{method: "PUT", path: "/v1/node/" + noID + "/drain", body: `{"DrainSpec":{"Deadline":1000000000}}`, rules: `node { policy = "write" }`, allowed: allowRight},
		{method: "PUT", path: "/v1/node/" + noID + "/eligibility", body: `{"Eligibility":"ineligible"}`, rules: `node { policy = "write" }`, allowed: allowRight},
		{method: "PUT", path: "/v1/node/" + noID + "/evaluate", rules: `node { policy = "write" }`, allowed: allowRight},
		{method: "PUT", path: "/v1/node/" + noID + "/purge", rules: `node { policy = "write" }`, allowed: allowRight},
	},
	// Listing node pools filters them by the token: without one, or
	// without node_pool rules, the list is empty.
	"/v1/node/pools": {
		{method: "GET", path: "/v1/node/pools", rules: poolRead, allowed: "nrRm"},
		{method: "PUT", path: "/v1/node/pools", body: `{"Name":"gpu"}`, rules: `node_pool "gpu" { policy = "write" }`, allowed: allowRight},
	},
	"/v1/node/pool/": {
		{method: "GET", path: "/v1/node/pool/default", rules: poolRead, allowed: allowRight},
		{method: "PUT", path: "/v1/node/pool/gpu2", body: `{"Name":"gpu2"}`, rules: `node_pool "gpu*" { policy = "write" }`, allowed: allowRight},
		{method: "DELETE", path: "/v1/node/pool/nosuch", rules: `node_pool "nosuch" { capabilities = ["delete"] }`, allowed: allowRight},
		{method: "GET", path: "/v1/node/pool/default/nodes", rules: poolRead + "\n" + nodeRead, allowed: allowRight},
		{method: "GET", path: "/v1/node/pool/default/jobs", rules: poolRead + "\n" + nsRead, allowed: allowRight},
	},
	"/v1/scaling/policies": {{method: "GET", path: "/v1/scaling/policies", rules: nsCaps("list-scaling-policies"), allowed: allowReaders}},
	"/v1/scaling/policy/":  {{method: "GET", path: "/v1/scaling/policy/" + noID, rules: nsCaps("read-scaling-policy"), allowed: allowReaders}},
	// A search of one context the token cannot read is refused.
	"/v1/search":       {{method: "PUT", path: "/v1/search", body: `{"Prefix":"a","Context":"jobs"}`, rules: nsRead, allowed: allowReaders}},
	"/v1/search/fuzzy": {{method: "PUT", path: "/v1/search/fuzzy", body: `{"Text":"ab","Context":"jobs"}`, rules: nsRead, allowed: allowReaders}},
	"/v1/evaluations": {
		{method: "GET", path: "/v1/evaluations", rules: nsRead, allowed: allowReaders},
		{method: "DELETE", path: "/v1/evaluations", body: `{"EvalIDs":["` + noID + `"]}`, rules: nsCaps("submit-job"), allowed: "m"},
	},
	"/v1/evaluation/": {
		{method: "GET", path: "/v1/evaluation/" + noID, rules: nsRead, allowed: allowReaders},
		{method: "GET", path: "/v1/evaluation/" + noID + "/allocations", rules: nsRead, allowed: allowReaders},
		{method: "GET", path: "/v1/evaluation/" + noID + "/timeline", rules: nsRead, allowed: allowReaders},
	},
	"/v1/deployments": {{method: "GET", path: "/v1/deployments", rules: nsRead, allowed: allowReaders}},
	"/v1/deployment/": {
		{method: "GET", path: "/v1/deployment/" + noID, rules: nsRead, allowed: allowReaders},
		{method: "GET", path: "/v1/deployment/allocations/" + noID, rules: nsRead, allowed: allowReaders},
		{method: "PUT", path: "/v1/deployment/fail/" + noID, rules: nsCaps("fail-deployment"), allowed: allowRight},
		{method: "PUT", path: "/v1/deployment/pause/" + noID, body: `{"Pause":true}`, rules: nsCaps("pause-deployment"), allowed: allowRight},
	},
	"/v1/allocations": {{method: "GET", path: "/v1/allocations", rules: nsRead, allowed: allowReaders}},
	"/v1/allocation/": {
		{method: "GET", path: "/v1/allocation/" + noID, rules: nsRead, allowed: allowReaders},
		{method: "PUT", path: "/v1/allocation/" + noID + "/stop", rules: nsCaps("alloc-lifecycle"), allowed: allowRight},
		{method: "GET", path: "/v1/allocation/" + noID + "/services", rules: nsCaps("read-job"), allowed: allowReaders},
	},
	"/v1/agent/self":    {{method: "GET", path: "/v1/agent/self", rules: agentRd, allowed: allowReaders}},
	"/v1/agent/members": {{method: "GET", path: "/v1/agent/members", rules: nodeRead, allowed: allowReaders}},
	"/v1/agent/servers": {
		{method: "GET", path: "/v1/agent/servers", rules: agentRd, allowed: allowReaders},
		{method: "PUT", path: "/v1/agent/servers?address=127.0.0.1:1", rules: agentWr, allowed: allowRight},
	},
	"/v1/agent/join":        {{method: "PUT", path: "/v1/agent/join", rules: agentWr, allowed: allowRight}},
	"/v1/agent/force-leave": {{method: "PUT", path: "/v1/agent/force-leave?node=nosuch", rules: agentWr, allowed: allowRight}},
	"/v1/agent/health":      {{method: "GET", path: "/v1/agent/health", allowed: allowAll}},
	"/v1/client/stats":      {{method: "GET", path: "/v1/client/stats", rules: nodeRead, allowed: allowReaders}},
	"/v1/client/metadata": {
		{method: "GET", path: "/v1/client/metadata", rules: nodeRead, allowed: allowReaders},
		{method: "POST", path: "/v1/client/metadata", body: `{"Meta":{"a":"b"}}`, rules: `node { policy = "write" }`, allowed: allowRight},
	},
	"/v1/client/identity":       {{method: "GET", path: "/v1/client/identity", rules: nodeRead, allowed: allowReaders}},
	"/v1/client/identity/renew": {{method: "POST", path: "/v1/client/identity/renew", body: `{}`, rules: `node { policy = "write" }`, allowed: allowRight}},
	"/v1/agent/monitor":         {{method: "GET", path: "/v1/agent/monitor?log_level=debug", rules: agentRd, allowed: allowReaders}},
	"/v1/agent/schedulers": {
		{method: "GET", path: "/v1/agent/schedulers", rules: agentRd, allowed: allowReaders},
		{method: "GET", path: "/v1/agent/schedulers?server_id=nowhere.global", rules: agentRd, allowed: allowReaders},
	},
	"/v1/agent/schedulers/config": {
		{method: "GET", path: "/v1/agent/schedulers/config", rules: agentRd, allowed: allowReaders},
		{method: "POST", path: "/v1/agent/schedulers/config", body: `{"num_schedulers":-1}`, rules: agentWr, allowed: allowRight},
	},
	"/v1/agent/schedulers/pause": {
		{method: "PUT", path: "/v1/agent/schedulers/pause", body: `{"paused":false}`, rules: agentWr, allowed: allowRight},
		{method: "PUT", path: "/v1/agent/schedulers/pause?server_id=nowhere.global", body: `{"paused":false}`, rules: agentWr, allowed: allowRight},
	},
	// Listing the gossip keys needs agent write too, as in Nomad.
	"/v1/agent/keyring/": {
		{method: "GET", path: "/v1/agent/keyring/list", rules: agentWr, allowed: allowRight},
		{method: "PUT", path: "/v1/agent/keyring/install", body: `{"Key":"AAAAAAAAAAAAAAAAAAAAAA=="}`, rules: agentWr, allowed: allowRight},
	},
	"/v1/status/leader": {{method: "GET", path: "/v1/status/leader", allowed: allowAll}},
	"/v1/status/peers":  {{method: "GET", path: "/v1/status/peers", allowed: allowAll}},
	"/v1/regions":       {{method: "GET", path: "/v1/regions", allowed: allowAll}},
	"/v1/operator/scheduler/configuration": {
		{method: "GET", path: "/v1/operator/scheduler/configuration", rules: `operator { policy = "read" }`, allowed: allowRight},
		{method: "PUT", path: "/v1/operator/scheduler/configuration", body: `{}`, rules: `operator { policy = "write" }`, allowed: allowRight},
	},
	"/v1/operator/raft/configuration": {{method: "GET", path: "/v1/operator/raft/configuration", allowed: allowRight}},
	"/v1/operator/raft/peer":          {{method: "DELETE", path: "/v1/operator/raft/peer?id=nosuch", allowed: allowRight}},
	"/v1/operator/raft/transfer-leadership": {
		{method: "PUT", path: "/v1/operator/raft/transfer-leadership?id=nosuch", rules: `operator { policy = "write" }`, allowed: allowRight},
	},
	"/v1/operator/autopilot/configuration": {
		{method: "GET", path: "/v1/operator/autopilot/configuration", rules: `operator { policy = "read" }`, allowed: allowRight},
		{method: "PUT", path: "/v1/operator/autopilot/configuration", body: `{"CleanupDeadServers":true}`, rules: `operator { policy = "write" }`, allowed: allowRight},
	},
	"/v1/operator/autopilot/health": {
		{method: "GET", path: "/v1/operator/autopilot/health", rules: `operator { policy = "read" }`, allowed: allowRight},
	},
	"/v1/operator/snapshot": {
		{method: "GET", path: "/v1/operator/snapshot", rules: operatorCaps("snapshot-save"), allowed: allowRight},
		{method: "PUT", path: "/v1/operator/snapshot", body: "not an archive", allowed: allowRight},
	},
	"/v1/operator/keyring/keys":         {{method: "GET", path: "/v1/operator/keyring/keys", rules: operatorCaps("keyring-read"), allowed: allowRight}},
	"/v1/operator/keyring/rotate":       {{method: "PUT", path: "/v1/operator/keyring/rotate", rules: operatorCaps("keyring-rotate"), allowed: allowRight}},
	"/v1/operator/keyring/key/":         {{method: "DELETE", path: "/v1/operator/keyring/key/" + noID, rules: operatorCaps("keyring-delete"), allowed: allowRight}},
	"/.well-known/jwks.json":            {{method: "GET", path: "/.well-known/jwks.json", allowed: allowAll}},
	"/.well-known/openid-configuration": {{method: "GET", path: "/.well-known/openid-configuration", allowed: allowAll}},
	"/v1/acl/bootstrap":                 {{method: "PUT", path: "/v1/acl/bootstrap", allowed: allowAll}},
	// Listing policies or roles shows a token its own; no token lists
	// the anonymous token's (none).
	"/v1/acl/policies": {{method: "GET", path: "/v1/acl/policies", allowed: "nrRm"}},
	"/v1/acl/policy/":  {{method: "GET", path: "/v1/acl/policy/other", allowed: allowRight}},
	"/v1/acl/tokens":   {{method: "GET", path: "/v1/acl/tokens", allowed: allowRight}},
	"/v1/acl/token":    {{method: "PUT", path: "/v1/acl/token", body: `{"Type":"client","Policies":["x"]}`, allowed: allowRight}},
	"/v1/acl/token/":   {{method: "GET", path: "/v1/acl/token/" + noID, allowed: allowRight}},
	"/v1/acl/roles":    {{method: "GET", path: "/v1/acl/roles", allowed: "nrRm"}},
	"/v1/acl/role":     {{method: "PUT", path: "/v1/acl/role", body: `{"Name":"r","Policies":[{"Name":"x"}]}`, allowed: allowRight}},
	"/v1/acl/role/":    {{method: "GET", path: "/v1/acl/role/" + noID, allowed: allowRight}},
	// Anyone lists auth methods (a login page reads the list); the rest
	// is for management tokens.
	"/v1/acl/auth-methods":  {{method: "GET", path: "/v1/acl/auth-methods", allowed: allowAll}},
	"/v1/acl/auth-method":   {{method: "PUT", path: "/v1/acl/auth-method", body: `{"Name":"x"}`, allowed: allowRight}},
	"/v1/acl/auth-method/":  {{method: "GET", path: "/v1/acl/auth-method/x", allowed: allowRight}},
	"/v1/acl/binding-rules": {{method: "GET", path: "/v1/acl/binding-rules", allowed: allowRight}},
	"/v1/acl/binding-rule":  {{method: "PUT", path: "/v1/acl/binding-rule", body: `{"AuthMethod":"x"}`, allowed: allowRight}},
	"/v1/acl/binding-rule/": {{method: "GET", path: "/v1/acl/binding-rule/" + noID, allowed: allowRight}},
	"/v1/acl/identity/client-introduction-token": {{method: "PUT", path: "/v1/acl/identity/client-introduction-token",
		body: `{}`, rules: `node { policy = "write" }`, allowed: allowRight}},
	// Logging in is how a caller gets a token: anyone may try (here
	// with a method that does not exist: 400 for everyone).
	"/v1/acl/login": {{method: "POST", path: "/v1/acl/login", body: `{"AuthMethodName":"x","LoginToken":"t"}`,
		allowed: allowAll}},
	"/v1/acl/oidc/auth-url": {{method: "POST", path: "/v1/acl/oidc/auth-url",
		body: `{"AuthMethodName":"x","RedirectURI":"http://localhost/cb","ClientNonce":"n"}`, allowed: allowAll}},
	"/v1/acl/oidc/complete-auth": {{method: "POST", path: "/v1/acl/oidc/complete-auth",
		body:    `{"AuthMethodName":"x","ClientNonce":"n","State":"s","Code":"c","RedirectURI":"http://localhost/cb"}`,
		allowed: allowAll}},
	"/v1/acl/identity/": {{method: "POST", path: "/v1/acl/identity/other", allowed: allowAll}},
	"/v1/client/fs/": {
		{method: "GET", path: "/v1/client/fs/ls/" + noID, rules: nsCaps("read-fs"), allowed: allowRight},
		{method: "GET", path: "/v1/client/fs/logs/" + noID + "?task=t&type=stdout", rules: nsCaps("read-logs"), allowed: allowRight},
	},
	"/v1/client/allocation/": {
		{method: "GET", path: "/v1/client/allocation/" + noID + "/stats", rules: nsRead, allowed: allowReaders},
		{method: "GET", path: "/v1/client/allocation/" + noID + "/checks", rules: nsCaps("read-job"), allowed: allowReaders},
		{method: "PUT", path: "/v1/client/allocation/" + noID + "/restart", rules: nsCaps("alloc-lifecycle"), allowed: allowRight},
		{method: "PUT", path: "/v1/client/allocation/" + noID + "/signal", rules: nsCaps("alloc-lifecycle"), allowed: allowRight},
		// Refused without a websocket once the token passed; exec into
		// raw_exec tasks needs alloc-node-exec too (TestAllocExec_ACL).
		{method: "GET", path: "/v1/client/allocation/" + noID + "/exec?task=web&command=%5B%22ls%22%5D", rules: nsCaps("alloc-exec"), allowed: allowRight},
	},
	"/v1/system/gc":                  {{method: "PUT", path: "/v1/system/gc", allowed: allowRight}},
	"/v1/system/reconcile/summaries": {{method: "PUT", path: "/v1/system/reconcile/summaries", allowed: allowRight}},
	// Listing namespaces filters them by the token: without one the list
	// is empty, not refused.
	"/v1/namespaces": {{method: "GET", path: "/v1/namespaces", rules: nsRead, allowed: "nrRm"}},
	"/v1/namespace":  {{method: "PUT", path: "/v1/namespace", body: `{"Name":"team-a"}`, allowed: allowRight}},
	// Variables: lists filter by the token (no token lists nothing);
	// reads need read on the path, writes write, deletes destroy.
	"/v1/vars": {{method: "GET", path: "/v1/vars", rules: varCaps("read"), allowed: "nrRm"}},
	"/v1/var/": {
		{method: "GET", path: "/v1/var/app/x", rules: varCaps("read"), allowed: allowRight},
		{method: "PUT", path: "/v1/var/app/x", body: `{"Items":{"k":"v"}}`, rules: varCaps("write"), allowed: allowRight},
		{method: "DELETE", path: "/v1/var/app/x", rules: varCaps("destroy"), allowed: allowRight},
	},
	"/v1/services": {{method: "GET", path: "/v1/services", rules: nsCaps("read-job"), allowed: allowReaders}},
	"/v1/service/": {
		{method: "GET", path: "/v1/service/web", rules: nsCaps("read-job"), allowed: allowReaders},
		{method: "GET", path: "/v1/service/web?choose=1%7Ckey", rules: nsCaps("read-job"), allowed: allowReaders},
		{method: "DELETE", path: "/v1/service/web/nosuch", rules: nsCaps("submit-job"), allowed: allowRight},
		{method: "DELETE", path: "/v1/service/web/nosuch", rules: nsCaps("delete-service-registration"), allowed: allowRight},
	},
	// Host volumes: the host-volume namespace capabilities; CSI volumes
	// and claims are not served (501 for everyone).
	"/v1/volumes":        {{method: "GET", path: "/v1/volumes?type=host", rules: nsCaps("host-volume-read"), allowed: allowReaders}},
	"/v1/volumes/claims": {{method: "GET", path: "/v1/volumes/claims", allowed: allowAll}},
	"/v1/volumes/claim/": {{method: "DELETE", path: "/v1/volumes/claim/x", allowed: allowAll}},
	"/v1/volume/": {
		{method: "GET", path: "/v1/volume/host/nosuch", rules: nsCaps("host-volume-read"), allowed: allowReaders},
		{method: "PUT", path: "/v1/volume/host/create", body: `{"Volume":{"Name":"a b"}}`, rules: nsCaps("host-volume-create"), allowed: allowRight},
		{method: "PUT", path: "/v1/volume/host/register", body: `{"Volume":{"Name":"a b"}}`, rules: nsCaps("host-volume-register"), allowed: allowRight},
		{method: "DELETE", path: "/v1/volume/host/nosuch", rules: nsCaps("host-volume-delete"), allowed: allowRight},
		{method: "GET", path: "/v1/volume/csi/x", allowed: allowAll},
	},
	"/v1/namespace/": {
		{method: "GET", path: "/v1/namespace/default", rules: nsRead, allowed: allowReaders},
		{method: "DELETE", path: "/v1/namespace/nosuch", allowed: allowRight},
	},
	"/v1/metrics": {{method: "GET", path: "/v1/metrics", allowed: allowAll}},
	"/v1/event/stream": {
		{method: "GET", path: "/v1/event/stream?topic=Job", rules: nsRead, allowed: allowReaders},
		{method: "GET", path: "/v1/event/stream?topic=Node", rules: nodeRead, allowed: allowReaders},
		{method: "GET", path: "/v1/event/stream?topic=Service", rules: nsCaps("read-job"), allowed: allowReaders},
		{method: "GET", path: "/v1/event/stream?topic=ACLToken", allowed: allowRight},
		{method: "GET", path: "/v1/event/stream?topic=NodePool", rules: poolRead, allowed: "m"},
		{method: "GET", path: "/v1/event/stream", allowed: allowRight},
	},
	"/v1/agent/debug/clock":   {{method: "GET", path: "/v1/agent/debug/clock", rules: agentWr, allowed: allowRight}},
	"/v1/agent/pprof/":        {{method: "GET", path: "/v1/agent/pprof/heap", rules: agentWr, allowed: allowRight}},
	"/v1/agent/pprof/cmdline": {{method: "GET", path: "/v1/agent/pprof/cmdline", rules: agentWr, allowed: allowRight}},
	"/v1/agent/pprof/profile": {{method: "GET", path: "/v1/agent/pprof/profile?seconds=1", rules: agentWr, allowed: allowRight}},
	"/v1/agent/pprof/symbol":  {{method: "GET", path: "/v1/agent/pprof/symbol", rules: agentWr, allowed: allowRight}},
	"/v1/agent/pprof/trace":   {{method: "GET", path: "/v1/agent/pprof/trace?seconds=0.1", rules: agentWr, allowed: allowRight}},
	"/ui/":                    {{method: "GET", path: "/ui/", allowed: allowAll}},
	"/ui":                     {{method: "GET", path: "/ui", allowed: allowAll}},
	"/":                       {{method: "GET", path: "/", allowed: allowAll}},
}

// statusOf makes a request and returns its status without waiting for
// the body of a stream.
func (ra *realAgent) statusOf(method, path, body, token string) (int, string) {
	ra.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, ra.base+path, rd)
	must.NoError(ra.t, err)
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	must.NoError(ra.t, err)
	defer resp.Body.Close()
	var msg []byte
	if resp.StatusCode != http.StatusOK {
		msg, _ = io.ReadAll(io.LimitReader(resp.Body, 200))
	}
	return resp.StatusCode, string(msg)
}

// mustToken creates a client token holding a new policy of rules and
// returns its secret.
func (ra *realAgent) mustToken(mgmt, name, rules string) string {
	ra.t.Helper()
	pol, _ := json.Marshal(map[string]string{"Name": name, "Rules": rules})
	resp, body := ra.doWithHeaders("PUT", "/v1/acl/policy/"+name, string(pol), map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(ra.t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	tok, _ := json.Marshal(map[string]interface{}{"Name": name, "Type": "client", "Policies": []string{name}})
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/token", string(tok), map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(ra.t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var out structs.ACLToken
	must.NoError(ra.t, json.Unmarshal([]byte(body), &out))
	return out.SecretID
}

// bootstrapACLs bootstraps the agent's ACLs and returns the management
// secret.
func (ra *realAgent) bootstrapACLs() string {
	ra.t.Helper()
	resp, body := ra.do("PUT", "/v1/acl/bootstrap", "")
	must.Eq(ra.t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var boot structs.ACLToken
	must.NoError(ra.t, json.Unmarshal([]byte(body), &boot))
	return boot.SecretID
}

// TestHTTPACL_EveryRoute walks every route the agent registers, with no
// token, an unknown token, a read-only token, the route's own token and
// a management token, on a dev agent with ACLs on: each is refused (403)
// or not as the route's need says. The routes answered by RPCs exercise
// the servers' rules through HTTP.
func TestHTTPACL_EveryRoute(t *testing.T) {
	ra := startDevAgentWithACLs(t)
	mgmt := ra.bootstrapACLs()
	readOnly := ra.mustToken(mgmt, "read-only", readOnlyRules)
	tokens := map[byte]string{'n': "", 'u': "11111111-2222-4333-8444-555555555555", 'r': readOnly, 'm': mgmt}

	routes := ra.agent.http.registeredRoutes()
	must.SliceNotEmpty(t, routes)
	seen := map[string]bool{}
	for i, rt := range routes {
		seen[rt.Path] = true
		cases, ok := routeCases[rt.Path]
		if !ok {
			t.Errorf("route %s (needs %q) has no case in routeCases", rt.Path, rt.Need.Doc)
			continue
		}
		for j, c := range cases {
			right := mgmt
			if c.rules != "" {
				right = ra.mustToken(mgmt, fmt.Sprintf("right-%d-%d", i, j), c.rules)
			}
			if rt.Need.Public {
				must.Eq(t, allowAll, c.allowed, must.Sprintf("%s is public", rt.Path))
			}
			for _, who := range []byte("nurRm") {
				tok := tokens[who]
				if who == 'R' {
					tok = right
				}
				code, msg := ra.statusOf(c.method, c.path, c.body, tok)
				wantOK := strings.IndexByte(c.allowed, who) >= 0
				if wantOK && code == http.StatusForbidden {
					t.Errorf("%s %s with token %c: 403 %q, want it served", c.method, c.path, who, msg)
				}
				if !wantOK && code != http.StatusForbidden {
					t.Errorf("%s %s with token %c: %d %q, want 403", c.method, c.path, who, code, msg)
				}
				if who == 'u' && code == http.StatusForbidden && rt.Need.check != nil && msg != "ACL token not found" {
					t.Errorf("%s %s with an unknown token: %q, want \"ACL token not found\"", c.method, c.path, msg)
				}
			}
		}
	}
	for p := range routeCases {
		if !seen[p] {
			t.Errorf("routeCases has %s, which is not registered", p)
		}
	}
}

// TestHTTPACL_ClientOnlyAgent: an agent without a server resolves tokens
// through the servers' ACL RPCs (token, roles, policies), caches them
// for the configured lifetimes, and answers an unknown token with "ACL
// token not found".
func TestHTTPACL_ClientOnlyAgent(t *testing.T) {
	ra := startDevAgentWithACLs(t)
	mgmt := ra.bootstrapACLs()
	reader := ra.mustToken(mgmt, "agent-reader", agentRd)
	nodeOnly := ra.mustToken(mgmt, "node-reader", nodeRead)

	// A role granting agent read, on a token with no policy of its own.
	resp, body := ra.doWithHeaders("PUT", "/v1/acl/role", `{"Name":"ops","Policies":[{"Name":"agent-reader"}]}`,
		map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var role structs.ACLRole
	must.NoError(t, json.Unmarshal([]byte(body), &role))
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/token", `{"Name":"by-role","Type":"client","Roles":[{"ID":"`+role.ID+`"}]}`,
		map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var byRole structs.ACLToken
	must.NoError(t, json.Unmarshal([]byte(body), &byRole))

	cfg := devConfig(t)
	cfg.ACL.Enabled = true
	cfg.ACL.TokenTTL = time.Hour
	cfg.ACL.PolicyTTL = time.Hour
	srv, err := NewHTTPServer(HTTPServerConfig{Agent: cfg, RPC: ra.agent.server})
	must.NoError(t, err)
	must.NotNil(t, srv.remoteACLs)
	get := func(token string) (int, string) {
		req := httptest.NewRequest("GET", "/v1/agent/self", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	code, _ := get(reader)
	must.Eq(t, http.StatusOK, code)
	code, _ = get(byRole.SecretID)
	must.Eq(t, http.StatusOK, code)
	code, msg := get(nodeOnly)
	must.Eq(t, http.StatusForbidden, code)
	must.Eq(t, "Permission denied", msg)
	code, msg = get("")
	must.Eq(t, http.StatusForbidden, code)
	must.Eq(t, "Permission denied", msg)
	unknown := "11111111-2222-4333-8444-555555555555"
	code, msg = get(unknown)
	must.Eq(t, http.StatusForbidden, code)
	must.Eq(t, "ACL token not found", msg)
	must.StrNotContains(t, msg, unknown)

	// The policy's new rules are not seen until the cached policy
	// expires.
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/policy/agent-reader", `{"Name":"agent-reader","Rules":"node { policy = \"read\" }"}`,
		map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	code, _ = get(reader)
	must.Eq(t, http.StatusOK, code)
	srv.remoteACLs.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	code, _ = get(reader)
	must.Eq(t, http.StatusForbidden, code)
}

// TestHTTPACL_EventStreamFiltered: a token that may read jobs but not
// nodes, asking for both, gets the job events and no node events; when
// it loses its access the stream ends.
func TestHTTPACL_EventStreamFiltered(t *testing.T) {
	ra := startDevAgentWithACLs(t)
	mgmt := ra.bootstrapACLs()
	jobsOnly := ra.mustToken(mgmt, "jobs-only", nsRead)

	code, _ := ra.statusOf("GET", "/v1/event/stream?topic=Node", "", jobsOnly)
	must.Eq(t, http.StatusForbidden, code)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", ra.base+"/v1/event/stream?topic=Job&topic=Node", nil)
	must.NoError(t, err)
	req.Header.Set("X-Nomad-Token", jobsOnly)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)

	ra.registerNode()
	r, body := ra.doWithHeaders("PUT", "/v1/jobs", unplaceableBody, map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(t, http.StatusOK, r.StatusCode, must.Sprint(body))

	dec := json.NewDecoder(resp.Body)
	for {
		var line eventsLine
		must.NoError(t, dec.Decode(&line), must.Sprint("the stream ended before the job's event"))
		sawJob := false
		for _, e := range line.Events {
			must.NotEq(t, structs.TopicNode, e.Topic, must.Sprint("a node event reached a token without node read"))
			if e.Topic == structs.TopicJob {
				sawJob = true
			}
		}
		if sawJob {
			break
		}
	}

	// Once its policy is gone the token may read nothing: the next
	// event ends the stream.
	r, body = ra.doWithHeaders("DELETE", "/v1/acl/policy/jobs-only", "", map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(t, http.StatusOK, r.StatusCode, must.Sprint(body))
	r, body = ra.doWithHeaders("PUT", "/v1/jobs", strings.Replace(unplaceableBody, `"web"`, `"web2"`, 1), map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(t, http.StatusOK, r.StatusCode, must.Sprint(body))
	for {
		var line eventsLine
		if err := dec.Decode(&line); err != nil {
			must.ErrorIs(t, err, io.EOF)
			return
		}
		// Events sent before the deletion may still be in flight.
		for _, e := range line.Events {
			must.Eq(t, structs.TopicJob, e.Topic)
		}
	}
}

// TestHTTPACL_ReadableEvents: events of namespaces the token may not read
// are left out.
func TestHTTPACL_ReadableEvents(t *testing.T) {
	p, err := acl.Parse(`namespace "default" { policy = "read" }`)
	must.NoError(t, err)
	a, err := acl.NewACL(false, []*acl.Policy{p})
	must.NoError(t, err)
	batch := &stream.Batch{Index: 7, Events: []structs.Event{
		{Topic: structs.TopicJob, Namespace: "default", Key: "a"},
		{Topic: structs.TopicJob, Namespace: "other", Key: "b"},
		{Topic: structs.TopicNode, Key: "n"},
		{Topic: "ACLToken", Key: "t"},
	}}
	got := readableEvents(a, batch)
	must.Len(t, 1, got.Events)
	must.Eq(t, "a", got.Events[0].Key)
	must.Nil(t, readableEvents(a, &stream.Batch{Events: batch.Events[1:]}))
	must.Eq(t, batch, readableEvents(acl.ManagementACL, batch))
}

// docsFile holds the "Who may call what" table, generated from the
// routes' declarations between the markers below.
const (
	docsFile        = "../../website/content/http-api.md"
	docsTableStart  = "<!-- route needs: generated by TestHTTPACL_DocsListEveryRoute -->\n"
	docsTableEnd    = "<!-- end of route needs -->\n"
	docsUpdateEnvVr = "UPDATE_ROUTE_DOCS"
)

type noRPC struct{}

func (noRPC) RPC(string, interface{}, interface{}) error { return nil }

// TestHTTPACL_DocsListEveryRoute: the documentation lists every route
// with the need it declares; with UPDATE_ROUTE_DOCS=1 the test rewrites
// the table.
func TestHTTPACL_DocsListEveryRoute(t *testing.T) {
	srv, err := NewHTTPServer(HTTPServerConfig{RPC: noRPC{}})
	must.NoError(t, err)
	var b strings.Builder
	b.WriteString(docsTableStart)
	b.WriteString("| route | needs, with ACLs on |\n|---|---|\n")
	for _, rt := range srv.registeredRoutes() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", rt.Path, strings.ReplaceAll(rt.Need.Doc, "|", "\\|"))
	}
	b.WriteString(docsTableEnd)
	want := b.String()

	raw, err := os.ReadFile(docsFile)
	must.NoError(t, err)
	doc := string(raw)
	start := strings.Index(doc, docsTableStart)
	end := strings.Index(doc, docsTableEnd)
	must.True(t, start >= 0 && end > start, must.Sprint("the route needs table's markers are missing"))
	got := doc[start : end+len(docsTableEnd)]
	if os.Getenv(docsUpdateEnvVr) != "" {
		must.NoError(t, os.WriteFile(docsFile, []byte(doc[:start]+want+doc[end+len(docsTableEnd):]), 0o644))
		return
	}
	must.Eq(t, want, got, must.Sprint("the route needs table is stale: run with UPDATE_ROUTE_DOCS=1"))
}

// aclByToken is a LocalServer whose tokens are fixed ACLs.
type aclByToken struct {
	*testServer
	acls map[string]*acl.ACL
}

func (a *aclByToken) ResolveACL(secret string) (*acl.ACL, error) {
	if x, ok := a.acls[secret]; ok {
		return x, nil
	}
	return nil, structs.ErrPermissionDenied
}

// oneAllocClient runs one allocation, in namespace "other".
type oneAllocClient struct{ ClientAPI }

func (oneAllocClient) AllocState(id string) (*structs.Allocation, error) {
	if id != noID {
		return nil, errors.New("unknown allocation")
	}
	return &structs.Allocation{ID: noID, Namespace: "other"}, nil
}

func (oneAllocClient) ListDir(string, string) ([]*client.AllocFileInfo, error) { return nil, nil }

func (oneAllocClient) AllocStats(string) (*client.AllocResourceUsage, error) {
	return &client.AllocResourceUsage{}, nil
}

func (oneAllocClient) AllocChecks(string) (map[string]client.CheckResult, error) {
	return map[string]client.CheckResult{}, nil
}

// TestHTTPACL_ClientRoutesUseTheAllocNamespace: the /v1/client routes
// check the token in the namespace of the allocation, whatever the
// request's ?namespace says.
func TestHTTPACL_ClientRoutesUseTheAllocNamespace(t *testing.T) {
	policy := func(rules string) *acl.ACL {
		p, err := acl.Parse(rules)
		must.NoError(t, err)
		a, err := acl.NewACL(false, []*acl.Policy{p})
		must.NoError(t, err)
		return a
	}
	h := newTestHTTP(t, func(c *HTTPServerConfig) {
		c.Server = &aclByToken{testServer: c.Server.(*testServer), acls: map[string]*acl.ACL{
			"default-fs": policy(`namespace "default" { capabilities = ["read-fs", "read-job"] }`),
			"other-fs":   policy(`namespace "other" { capabilities = ["read-fs"] }`),
			"other-read": policy(`namespace "other" { policy = "read" }`),
		}}
		c.Client = oneAllocClient{}
	})
	cases := []struct {
		path, token string
		want        int
	}{
		{"/v1/client/fs/ls/" + noID, "default-fs", http.StatusForbidden},
		{"/v1/client/fs/ls/" + noID + "?namespace=default", "default-fs", http.StatusForbidden},
		{"/v1/client/fs/ls/" + noID + "?namespace=default", "other-fs", http.StatusOK},
		{"/v1/client/fs/ls/" + noID, "other-read", http.StatusForbidden},
		{"/v1/client/allocation/" + noID + "/stats", "default-fs", http.StatusForbidden},
		{"/v1/client/allocation/" + noID + "/stats", "other-read", http.StatusOK},
		{"/v1/client/allocation/" + noID + "/checks", "default-fs", http.StatusForbidden},
		{"/v1/client/allocation/" + noID + "/checks", "other-read", http.StatusOK},
		{"/v1/client/fs/ls/" + noID, "nope", http.StatusForbidden},
	}
	for _, c := range cases {
		resp, body := h.do("GET", c.path, "", "X-Nomad-Token", c.token)
		must.Eq(t, c.want, resp.StatusCode, must.Sprintf("%s with %s: %s", c.path, c.token, body))
	}
	_, body := h.do("GET", "/v1/client/fs/ls/"+noID, "", "X-Nomad-Token", "nope")
	must.Eq(t, "ACL token not found", body)
}
