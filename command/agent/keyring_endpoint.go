package agent

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/structs"
)

// operatorKeyringKeysRequest serves GET /v1/operator/keyring/keys: every
// root key's metadata, oldest first; a blocking query.
func (s *HTTPServer) operatorKeyringKeysRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	var out structs.KeyringListResponse
	if err := s.genericRead(r, "Keyring.List", &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return nonNil(out.Keys), nil
}

// operatorKeyringRotateRequest serves PUT/POST
// /v1/operator/keyring/rotate?algo=&full=&publish_time=: a new root key,
// active at once or prepublished until publish_time (Unix nanoseconds).
func (s *HTTPServer) operatorKeyringRotateRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return nil, errInvalidMethod
	}
	q := r.URL.Query()
	args := structs.KeyringRotateRequest{Algorithm: q.Get("algo")}
	var problems []string
	if v := q.Get("full"); v != "" {
		full, err := strconv.ParseBool(v)
		if err != nil {
			problems = append(problems, "invalid full parameter")
		}
		args.Full = full
	}
	if v := q.Get("publish_time"); v != "" {
		pt, err := strconv.ParseInt(v, 10, 64)
		if err != nil || pt < 0 {
			problems = append(problems, "invalid publish_time parameter")
		}
		args.PublishTime = pt
	}
	if len(problems) > 0 {
		return nil, codedError(http.StatusBadRequest, strings.Join(problems, "; "))
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.KeyringRotateResponse
	if err := s.rpc.RPC("Keyring.Rotate", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

// operatorKeyringKeyRequest serves DELETE
// /v1/operator/keyring/key/<id>?force=.
func (s *HTTPServer) operatorKeyringKeyRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if r.Method != http.MethodDelete {
		return nil, errInvalidMethod
	}
	id := strings.TrimPrefix(r.URL.Path, "/v1/operator/keyring/key/")
	if id == "" || strings.Contains(id, "/") {
		return nil, codedError(http.StatusNotFound, "Invalid URL path")
	}
	args := structs.KeyringDeleteRequest{KeyID: id}
	if v := r.URL.Query().Get("force"); v != "" {
		force, err := strconv.ParseBool(v)
		if err != nil {
			// Nomad's status and text.
			return nil, codedError(http.StatusUnprocessableEntity, "invalid force parameter")
		}
		args.Force = force
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.KeyringDeleteResponse
	if err := s.rpc.RPC("Keyring.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

// jwksRequest serves GET /.well-known/jwks.json: the public signing keys
// of every published root key, which anyone may read, with how long they
// may be cached.
func (s *HTTPServer) jwksRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	var out structs.KeyringPublicKeysResponse
	if err := s.genericRead(r, "Keyring.ListPublic", &out); err != nil {
		return nil, err
	}
	set, err := keyring.JWKS(out.Keys)
	if err != nil {
		return nil, err
	}
	age := keyring.JWKSCacheAge(out.Keys, time.Now(), s.agent.Server.RootKeyRotationThreshold)
	w.Header().Set("Cache-Control", "max-age="+strconv.Itoa(int(age.Seconds())))
	setMeta(w, &out.QueryMeta)
	return set, nil
}

// openIDConfigurationRequest serves GET
// /.well-known/openid-configuration: the OIDC discovery document for
// workload identities, only when server.oidc_issuer names the issuer.
func (s *HTTPServer) openIDConfigurationRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	issuer := s.agent.Server.OIDCIssuer
	if issuer == "" {
		return nil, codedError(http.StatusNotFound, "OIDC Discovery endpoint disabled")
	}
	return openIDConfiguration{
		Issuer:        issuer,
		JWKSURI:       strings.TrimSuffix(issuer, "/") + "/.well-known/jwks.json",
		SigningAlgs:   []string{"RS256", "EdDSA"},
		ResponseTypes: []string{"code"},
		SubjectTypes:  []string{"public"},
	}, nil
}

// openIDConfiguration is the OIDC discovery document, with the member
// names OpenID Connect Discovery 1.0 gives them.
type openIDConfiguration struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
}
