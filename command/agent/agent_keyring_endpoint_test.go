package agent

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

func gossipKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	must.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// startEncryptedServer starts a server agent (not -dev: it gossips) on
// dir with server.encrypt = key, and waits until it leads. Its logs go
// to logs when set.
func startEncryptedServer(t *testing.T, dir, key string, logs io.Writer) *realAgent {
	t.Helper()
	ra := startGossipServer(t, "s1", 1, dir, key, logs)
	ra.waitForLeader()
	return ra
}

// startGossipServer starts a server agent named name expecting expect
// servers, on dir with server.encrypt = key, on free ports.
func startGossipServer(t *testing.T, name string, expect int, dir, key string, logs io.Writer) *realAgent {
	t.Helper()
	cfg, err := LoadConfig([]string{"-server", "-bootstrap-expect", strconv.Itoa(expect), "-data-dir", dir,
		"-bind", "127.0.0.1", "-node", name}, io.Discard)
	must.NoError(t, err)
	cfg.Ports.HTTP, cfg.Ports.RPC, cfg.Ports.Serf = 0, 0, 0
	cfg.Server.EncryptKey = key
	if logs == nil {
		logs = testLogOutput()
	}
	a, err := NewAgent(cfg, logs)
	must.NoError(t, err)
	t.Cleanup(func() { a.Shutdown() })
	return &realAgent{t: t, agent: a, base: "http://" + a.HTTPAddr()}
}

// serfAddr is the agent's gossip address, as its member reports it.
func (ra *realAgent) serfAddr() string {
	ra.t.Helper()
	_, body := ra.do("GET", "/v1/agent/self", "")
	var self struct {
		Member api.AgentMember `json:"member"`
	}
	must.NoError(ra.t, json.Unmarshal([]byte(body), &self))
	must.NotEq(ra.t, 0, self.Member.Port, must.Sprint(body))
	return net.JoinHostPort(self.Member.Addr, strconv.Itoa(int(self.Member.Port)))
}

// join asks ra's server to join the gossip at addr and returns the
// answer.
func (ra *realAgent) join(addr string) (int, string) {
	ra.t.Helper()
	resp, body := ra.do("PUT", "/v1/agent/join?address="+addr, "")
	must.Eq(ra.t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var out struct {
		NumJoined int    `json:"num_joined"`
		Error     string `json:"error"`
	}
	must.NoError(ra.t, json.Unmarshal([]byte(body), &out))
	return out.NumJoined, out.Error
}

func (ra *realAgent) listGossipKeys() api.KeyringResponse {
	ra.t.Helper()
	resp, body := ra.do("GET", "/v1/agent/keyring/list", "")
	must.Eq(ra.t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var out api.KeyringResponse
	must.NoError(ra.t, json.Unmarshal([]byte(body), &out))
	return out
}

func keyringFile(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "server", "serf.keyring"))
	must.NoError(t, err)
	var keys []string
	must.NoError(t, json.Unmarshal(b, &keys))
	return keys
}

// The configured key seeds <data_dir>/server/serf.keyring; the keyring
// endpoints rotate it (install, use, remove), the file follows, and on
// restart the file wins over a stale encrypt setting.
func TestAgentKeyring_RotateAndRestart(t *testing.T) {
	dir := t.TempDir()
	k1, k2 := gossipKey(t), gossipKey(t)
	ra := startEncryptedServer(t, dir, k1, nil)
	must.Eq(t, []string{k1}, keyringFile(t, dir))

	list := ra.listGossipKeys()
	must.Eq(t, map[string]int{k1: 1}, list.Keys)
	must.Eq(t, 1, list.NumNodes)
	must.MapEmpty(t, list.Messages)

	for _, step := range []struct{ op, key string }{{"install", k2}, {"use", k2}, {"remove", k1}} {
		resp, body := ra.do("PUT", "/v1/agent/keyring/"+step.op, `{"Key":"`+step.key+`"}`)
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprintf("%s: %s", step.op, body))
		var out api.KeyringResponse
		must.NoError(t, json.Unmarshal([]byte(body), &out))
		must.Eq(t, 1, out.NumNodes)
	}
	must.Eq(t, map[string]int{k2: 1}, ra.listGossipKeys().Keys)
	must.Eq(t, []string{k2}, keyringFile(t, dir))
	must.NoError(t, ra.agent.Shutdown())

	logs := &syncBuffer{}
	ra = startEncryptedServer(t, dir, k1, logs)
	must.Eq(t, map[string]int{k2: 1}, ra.listGossipKeys().Keys)
	must.StrContains(t, logs.String(), "server.encrypt is not the primary key of the gossip keyring file")
	must.StrNotContains(t, logs.String(), k1, must.Sprint("keys are never logged"))
	must.StrNotContains(t, logs.String(), k2, must.Sprint("keys are never logged"))
}

// Refusals: unknown operations, wrong methods, bad keys, and agents
// whose gossip is not encrypted or that run none.
func TestAgentKeyring_Errors(t *testing.T) {
	k1 := gossipKey(t)
	ra := startEncryptedServer(t, t.TempDir(), k1, nil)
	cases := []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"unknown operation", "GET", "/v1/agent/keyring/rotate", "", 404, "resource not found"},
		{"no operation", "GET", "/v1/agent/keyring/", "", 404, "resource not found"},
		{"list is a GET", "PUT", "/v1/agent/keyring/list", "", 405, "Invalid method"},
		{"install is a PUT", "GET", "/v1/agent/keyring/install", "", 405, "Invalid method"},
		{"no body", "PUT", "/v1/agent/keyring/install", "", 400, "Request body is empty"},
		{"no key", "PUT", "/v1/agent/keyring/use", `{}`, 400, "missing gossip key (Key)"},
		{"not base64", "POST", "/v1/agent/keyring/install", `{"Key":"???"}`, 400, "invalid gossip key: not base64"},
		{"wrong length", "PUT", "/v1/agent/keyring/install", `{"Key":"YWJj"}`, 400, "invalid gossip key: must decode to 16, 24 or 32 bytes, got 3"},
		{"the primary key cannot go", "PUT", "/v1/agent/keyring/remove", `{"Key":"` + k1 + `"}`, 500, "1/1 nodes reported failure: s1.global: removing the primary key is not allowed"},
		{"using a key not installed", "PUT", "/v1/agent/keyring/use", `{"Key":"` + gossipKey(t) + `"}`, 500, "1/1 nodes reported failure: s1.global: requested key is not in the keyring"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := ra.do(tc.method, tc.path, tc.body)
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.msg)
		})
	}
	must.Eq(t, map[string]int{k1: 1}, ra.listGossipKeys().Keys)

	plain := startEncryptedServer(t, t.TempDir(), "", nil)
	resp, body := plain.do("GET", "/v1/agent/keyring/list", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, "gossip encryption is not enabled")

	dev := startDevAgent(t)
	resp, body = dev.do("GET", "/v1/agent/keyring/list", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, "runs no gossip")
}

// Two server agents with the same key form one encrypted cluster; a
// third with another key cannot join it. A key rotated through one
// agent's endpoints reaches the other server and its keyring file.
func TestAgentKeyring_TwoServers(t *testing.T) {
	k1, k2 := gossipKey(t), gossipKey(t)
	dir1, dir2 := t.TempDir(), t.TempDir()
	s1 := startEncryptedServer(t, dir1, k1, nil)
	s2 := startGossipServer(t, "s2", 0, dir2, k1, nil)
	n, msg := s2.join(s1.serfAddr())
	must.Eq(t, 1, n, must.Sprint(msg))
	waitForBody(t, s1, "/v1/agent/members", `"Name":"s2.global"`)

	wrong := startGossipServer(t, "wrong", 0, t.TempDir(), gossipKey(t), nil)
	n, msg = wrong.join(s1.serfAddr())
	must.Eq(t, 0, n)
	must.StrContains(t, msg, "no installed keys could decrypt the message")
	plain := startGossipServer(t, "plain", 0, t.TempDir(), "", nil)
	n, msg = plain.join(s1.serfAddr())
	must.Eq(t, 0, n)
	must.StrContains(t, msg, "remote state is encrypted and encryption is not configured")

	list := s2.listGossipKeys()
	must.Eq(t, 2, list.NumNodes)
	must.Eq(t, map[string]int{k1: 2}, list.Keys)
	for _, step := range []struct{ op, key string }{{"install", k2}, {"use", k2}, {"remove", k1}} {
		resp, body := s1.do("PUT", "/v1/agent/keyring/"+step.op, `{"Key":"`+step.key+`"}`)
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprintf("%s: %s", step.op, body))
	}
	must.Eq(t, map[string]int{k2: 2}, s2.listGossipKeys().Keys)
	must.Eq(t, []string{k2}, keyringFile(t, dir1))
	must.Eq(t, []string{k2}, keyringFile(t, dir2))
}
