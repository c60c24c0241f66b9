package agent

import (
	"net/http"
	"strings"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/membership"
)

// GossipKeyringServer is what a server agent offers to manage the gossip
// encryption keys of its region's servers. Each operation asks every
// server through gossip and answers what they said; the HTTP handler
// finds it on HTTPServerConfig.Server by type assertion. Errors: the
// refusals (no gossip, gossip not encrypted, a malformed key) are of
// kind structs.ErrInvalid; a server's failure is answered with what the
// servers said.
type GossipKeyringServer interface {
	ListGossipKeys() (*api.KeyringResponse, error)
	InstallGossipKey(key string) (*api.KeyringResponse, error)
	UseGossipKey(key string) (*api.KeyringResponse, error)
	RemoveGossipKey(key string) (*api.KeyringResponse, error)
}

// agentKeyringRequest serves /v1/agent/keyring/<op>: GET list, PUT or
// POST install, use and remove with a body {"Key": "<base64>"}.
func (s *HTTPServer) agentKeyringRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	op := strings.TrimPrefix(r.URL.Path, "/v1/agent/keyring/")
	var run func(GossipKeyringServer, string) (*api.KeyringResponse, error)
	switch op {
	case "list":
		run = func(g GossipKeyringServer, _ string) (*api.KeyringResponse, error) { return g.ListGossipKeys() }
	case "install":
		run = GossipKeyringServer.InstallGossipKey
	case "use":
		run = GossipKeyringServer.UseGossipKey
	case "remove":
		run = GossipKeyringServer.RemoveGossipKey
	default:
		return nil, codedError(http.StatusNotFound, "resource not found")
	}
	var args api.KeyringRequest
	if op == "list" {
		if err := requireMethod(r, http.MethodGet); err != nil {
			return nil, err
		}
	} else {
		if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
			return nil, err
		}
		if err := decodeBody(r, &args); err != nil {
			return nil, err
		}
	}
	if s.cfg.Server == nil {
		return nil, codedError(http.StatusBadRequest, "Server only endpoint")
	}
	g, ok := s.cfg.Server.(GossipKeyringServer)
	if !ok {
		return nil, codedError(http.StatusNotImplemented, "this server does not support gossip keyring operations")
	}
	out, err := run(g, args.Key)
	if refused := refusedMembership(err); refused != nil {
		return nil, refused
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// keyringResponse is the servers' answer in the shape of the api package.
func keyringResponse(r *membership.KeyringResponse) *api.KeyringResponse {
	if r == nil {
		return nil
	}
	return &api.KeyringResponse{Messages: r.Messages, Keys: r.Keys, NumNodes: r.NumNodes}
}

// ListGossipKeys lists the gossip keys the servers hold.
func (l *localServer) ListGossipKeys() (*api.KeyringResponse, error) {
	r, err := l.srv.ListGossipKeys()
	return keyringResponse(r), err
}

// InstallGossipKey adds a gossip key to every server's keyring.
func (l *localServer) InstallGossipKey(key string) (*api.KeyringResponse, error) {
	r, err := l.srv.InstallGossipKey(key)
	return keyringResponse(r), err
}

// UseGossipKey makes an installed gossip key the primary one.
func (l *localServer) UseGossipKey(key string) (*api.KeyringResponse, error) {
	r, err := l.srv.UseGossipKey(key)
	return keyringResponse(r), err
}

// RemoveGossipKey removes a gossip key from every server's keyring.
func (l *localServer) RemoveGossipKey(key string) (*api.KeyringResponse, error) {
	r, err := l.srv.RemoveGossipKey(key)
	return keyringResponse(r), err
}
