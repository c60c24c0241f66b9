package agent

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// startDevAgentWith starts a dev agent whose configuration mod changes
// first.
func startDevAgentWith(t *testing.T, mod func(*Config)) *realAgent {
	t.Helper()
	cfg := devConfig(t)
	cfg.LogLevel = "WARN"
	mod(cfg)
	a, err := NewAgent(cfg, testLogOutput())
	must.NoError(t, err)
	t.Cleanup(func() { a.Shutdown() })
	ra := &realAgent{t: t, agent: a, base: "http://" + a.HTTPAddr()}
	ra.waitForLeader()
	return ra
}

// keys lists the root keys and the index of the answer.
func (ra *realAgent) keys(query string) ([]*structs.RootKeyMeta, uint64) {
	ra.t.Helper()
	resp, body := ra.do("GET", "/v1/operator/keyring/keys"+query, "")
	must.Eq(ra.t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var keys []*structs.RootKeyMeta
	must.NoError(ra.t, json.Unmarshal([]byte(body), &keys))
	index, err := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
	must.NoError(ra.t, err)
	return keys, index
}

// waitForRootKey waits, with blocking queries, until the leader has made
// the first root key, and returns the keyring then.
func (ra *realAgent) waitForRootKey() []*structs.RootKeyMeta {
	ra.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	keys, index := ra.keys("")
	for len(keys) == 0 {
		if time.Now().After(deadline) {
			ra.t.Fatal("the leader never made the first root key")
		}
		keys, index = ra.keys("?wait=2s&index=" + strconv.FormatUint(index, 10))
	}
	return keys
}

func keyByID(keys []*structs.RootKeyMeta, id string) *structs.RootKeyMeta {
	for _, k := range keys {
		if k.KeyID == id {
			return k
		}
	}
	return nil
}

func rotate(t *testing.T, ra *realAgent, query string) *structs.RootKeyMeta {
	t.Helper()
	resp, body := ra.do("PUT", "/v1/operator/keyring/rotate"+query, "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"))
	var out struct {
		Key   *structs.RootKeyMeta
		Index uint64
	}
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.NotNil(t, out.Key)
	must.Positive(t, out.Index)
	return out.Key
}

// The keyring through the HTTP API of a real server: the first key, a
// rotation, a prepublished key, the refusals, and removing a key.
func TestRealServer_Keyring(t *testing.T) {
	ra := startDevAgent(t)
	keys := ra.waitForRootKey()
	must.Len(t, 1, keys)
	first := keys[0]
	must.Eq(t, structs.RootKeyStateActive, first.State)
	must.Eq(t, structs.EncryptionAlgorithmAES256GCM, first.Algorithm)
	must.True(t, structs.IsUUID(first.KeyID))
	must.Positive(t, first.CreateTime)

	// A rotation makes a new active key; the old one is inactive.
	second := rotate(t, ra, "")
	must.Eq(t, structs.RootKeyStateActive, second.State)
	must.NotEq(t, first.KeyID, second.KeyID)
	keys, _ = ra.keys("")
	must.Len(t, 2, keys)
	must.Eq(t, structs.RootKeyStateInactive, keyByID(keys, first.KeyID).State)
	must.Eq(t, structs.RootKeyStateActive, keyByID(keys, second.KeyID).State)

	// A prepublished key waits for its time; the active key stays.
	publish := time.Now().Add(time.Hour).UnixNano()
	third := rotate(t, ra, "?publish_time="+strconv.FormatInt(publish, 10))
	must.Eq(t, structs.RootKeyStatePrepublished, third.State)
	must.Eq(t, publish, third.PublishTime)
	keys, _ = ra.keys("")
	must.Len(t, 3, keys)
	must.Eq(t, structs.RootKeyStateActive, keyByID(keys, second.KeyID).State)

	cases := []struct {
		name, method, path string
		code               int
		body               string
	}{
		{"full and prepublished", "PUT", "/v1/operator/keyring/rotate?full=true&publish_time=" + strconv.FormatInt(publish, 10),
			http.StatusBadRequest, "keyring cannot be prepublished and full rotated at the same time"},
		{"bad full", "PUT", "/v1/operator/keyring/rotate?full=maybe", http.StatusBadRequest, "invalid full parameter"},
		{"bad publish_time", "POST", "/v1/operator/keyring/rotate?publish_time=soon", http.StatusBadRequest, "invalid publish_time parameter"},
		{"negative publish_time", "PUT", "/v1/operator/keyring/rotate?publish_time=-5", http.StatusBadRequest, "invalid publish_time parameter"},
		{"bad algorithm", "PUT", "/v1/operator/keyring/rotate?algo=rot13", http.StatusBadRequest, "unsupported algorithm"},
		{"delete the active key", "DELETE", "/v1/operator/keyring/key/" + second.KeyID, http.StatusBadRequest,
			"active root key cannot be deleted - call rotate first"},
		{"delete an unknown key", "DELETE", "/v1/operator/keyring/key/" + "00000000-0000-0000-0000-000000000000",
			http.StatusNotFound, "root key not found"},
		{"force not a bool", "DELETE", "/v1/operator/keyring/key/" + first.KeyID + "?force=notabool",
			http.StatusUnprocessableEntity, "invalid force parameter"},
		{"delete without an ID", "DELETE", "/v1/operator/keyring/key/", http.StatusNotFound, ""},
		{"keys by PUT", "PUT", "/v1/operator/keyring/keys", http.StatusMethodNotAllowed, "Invalid method"},
		{"keys by DELETE", "DELETE", "/v1/operator/keyring/keys", http.StatusMethodNotAllowed, "Invalid method"},
		{"rotate by GET", "GET", "/v1/operator/keyring/rotate", http.StatusMethodNotAllowed, "Invalid method"},
		{"rotate by DELETE", "DELETE", "/v1/operator/keyring/rotate", http.StatusMethodNotAllowed, "Invalid method"},
		{"key by GET", "GET", "/v1/operator/keyring/key/" + first.KeyID, http.StatusMethodNotAllowed, "Invalid method"},
		{"key by PUT", "PUT", "/v1/operator/keyring/key/" + first.KeyID, http.StatusMethodNotAllowed, "Invalid method"},
		{"jwks by PUT", "PUT", "/.well-known/jwks.json", http.StatusMethodNotAllowed, "Invalid method"},
		{"openid-configuration by POST", "POST", "/.well-known/openid-configuration", http.StatusMethodNotAllowed, "Invalid method"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := ra.do(tc.method, tc.path, "")
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.body)
		})
	}
	// None of the refusals changed the keyring.
	keys, _ = ra.keys("")
	must.Len(t, 3, keys)

	// The old key goes.
	resp, body := ra.do("DELETE", "/v1/operator/keyring/key/"+first.KeyID+"?force=true", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.StrContains(t, body, `"Index"`)
	keys, _ = ra.keys("")
	must.Len(t, 2, keys)
	must.Nil(t, keyByID(keys, first.KeyID))
}

// A blocking query on the keys wakes when the keyring changes.
func TestRealServer_KeyringBlockingQuery(t *testing.T) {
	ra := startDevAgent(t)
	ra.waitForRootKey()
	_, index := ra.keys("")
	done := make(chan []*structs.RootKeyMeta, 1)
	go func() {
		keys, _ := ra.keys("?wait=10s&index=" + strconv.FormatUint(index, 10))
		done <- keys
	}()
	rotate(t, ra, "")
	select {
	case keys := <-done:
		must.Len(t, 2, keys)
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query did not wake")
	}
}

// The JWKS lists the public half of every published key, and nothing
// private, with how long it may be cached.
func TestRealServer_JWKS(t *testing.T) {
	ra := startDevAgent(t)
	first := ra.waitForRootKey()[0]
	second := rotate(t, ra, "")
	third := rotate(t, ra, "?publish_time="+strconv.FormatInt(time.Now().Add(time.Hour).UnixNano(), 10))

	resp, body := ra.do("GET", "/.well-known/jwks.json", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	cc := resp.Header.Get("Cache-Control")
	must.StrHasPrefix(t, "max-age=", cc)
	age, err := strconv.Atoi(strings.TrimPrefix(cc, "max-age="))
	must.NoError(t, err)
	must.GreaterEq(t, 900, age)

	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	must.NoError(t, json.Unmarshal([]byte(body), &set))
	must.Len(t, 3, set.Keys)
	seen := map[string]bool{}
	for _, k := range set.Keys {
		kid, _ := k["kid"].(string)
		seen[kid] = true
		must.Eq[any](t, "RSA", k["kty"])
		must.Eq[any](t, "RS256", k["alg"])
		must.Eq[any](t, "sig", k["use"])
		must.NotEq[any](t, "", k["n"])
		must.Eq[any](t, "AQAB", k["e"])
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			_, ok := k[private]
			must.False(t, ok, must.Sprintf("JWK %s has private member %q", kid, private))
		}
	}
	for _, id := range []string{first.KeyID, second.KeyID, third.KeyID} {
		must.True(t, seen[id], must.Sprintf("key %s is not in the JWKS", id))
	}
}

func TestRealServer_OpenIDConfiguration(t *testing.T) {
	cases := []struct {
		name   string
		issuer string
		code   int
		body   string
	}{
		{"disabled", "", http.StatusNotFound, "OIDC Discovery endpoint disabled"},
		{"enabled", "https://nomad.example.com:4646/", http.StatusOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ra := startDevAgentWith(t, func(c *Config) { c.Server.OIDCIssuer = tc.issuer })
			resp, body := ra.do("GET", "/.well-known/openid-configuration", "")
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.body)
			if tc.code != http.StatusOK {
				return
			}
			var doc struct {
				Issuer        string   `json:"issuer"`
				JWKSURI       string   `json:"jwks_uri"`
				SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
				ResponseTypes []string `json:"response_types_supported"`
				SubjectTypes  []string `json:"subject_types_supported"`
			}
			must.NoError(t, json.Unmarshal([]byte(body), &doc))
			must.Eq(t, tc.issuer, doc.Issuer)
			must.Eq(t, "https://nomad.example.com:4646/.well-known/jwks.json", doc.JWKSURI)
			must.Eq(t, []string{"RS256", "EdDSA"}, doc.SigningAlgs)
			must.Eq(t, []string{"code"}, doc.ResponseTypes)
			must.Eq(t, []string{"public"}, doc.SubjectTypes)
		})
	}
}
