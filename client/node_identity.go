package client

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/opennomad/nomad/client/state"
)

// identityRenewFraction is the part of a node identity's life left at
// which the client asks for a new one with its next heartbeat: early
// enough that a few missed heartbeats never leave it expired.
const identityRenewFraction = 3

// nodeIdentity is a node identity the servers signed, with the claims
// the client reads from it. The client does not verify the signature:
// the token came from the servers over the client's own connection, and
// whoever is shown it verifies it against the cluster's published keys.
type nodeIdentity struct {
	token   string
	claims  map[string]any
	issued  time.Time
	expires time.Time
}

// parseNodeIdentity reads the claims of a compact JWT.
func parseNodeIdentity(token string) (*nodeIdentity, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("node identity: not a compact JWT (%d parts)", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("node identity: claims: %w", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, fmt.Errorf("node identity: claims: %w", err)
	}
	id := &nodeIdentity{token: token, claims: claims}
	if v, ok := claims["iat"].(float64); ok {
		id.issued = time.Unix(int64(v), 0)
	}
	if v, ok := claims["exp"].(float64); ok {
		id.expires = time.Unix(int64(v), 0)
	}
	return id, nil
}

// nearExpiry reports whether less than 1/identityRenewFraction of the
// identity's life is left at now.
func (id *nodeIdentity) nearExpiry(now time.Time) bool {
	if id.expires.IsZero() {
		return false
	}
	life := id.expires.Sub(id.issued)
	return id.expires.Sub(now) < life/identityRenewFraction
}

// loadNodeIdentity restores the identity a previous run kept; one that
// cannot be read is dropped, and the next heartbeat asks for another.
func (c *Client) loadNodeIdentity() error {
	token, err := state.LoadNodeIdentityToken(c.cfg.StateDir)
	if err != nil || token == "" {
		return err
	}
	id, err := parseNodeIdentity(token)
	if err != nil {
		c.logger.Warn("dropping the stored node identity", "error", err)
		return nil
	}
	c.identity = id
	return nil
}

// keepNodeIdentity stores an identity the servers issued; nil (none
// issued) changes nothing.
func (c *Client) keepNodeIdentity(token *string) {
	if token == nil || *token == "" {
		return
	}
	id, err := parseNodeIdentity(*token)
	if err != nil {
		c.logger.Error("the servers issued an unreadable node identity", "error", err)
		return
	}
	if err := state.SaveNodeIdentityToken(c.cfg.StateDir, *token); err != nil {
		// Kept in memory all the same: a restart asks for a new one.
		c.logger.Error("storing the node identity", "error", err)
	}
	c.idMu.Lock()
	c.identity = id
	c.renewIdentity = false
	c.idMu.Unlock()
	c.logger.Debug("node identity renewed", "expires", id.expires)
}

// wantsNodeIdentity reports whether the next heartbeat asks for a new
// identity: there is none, it nears expiry, or renewal was asked for.
func (c *Client) wantsNodeIdentity() bool {
	c.idMu.Lock()
	defer c.idMu.Unlock()
	return c.identity == nil || c.renewIdentity || c.identity.nearExpiry(c.clock.Now())
}

// NodeIdentityClaims returns the claims of the node's current identity;
// ErrNotFound before the servers issued one.
func (c *Client) NodeIdentityClaims() (map[string]any, error) {
	c.idMu.Lock()
	id := c.identity
	c.idMu.Unlock()
	if id == nil {
		return nil, notFound("node %s has no identity yet", c.NodeID())
	}
	// An identity is never changed once parsed; the map is cloned so
	// that the caller may.
	return maps.Clone(id.claims), nil
}

// RenewNodeIdentity makes the next heartbeat ask the servers for a new
// identity, whatever the current one's age.
func (c *Client) RenewNodeIdentity() {
	c.idMu.Lock()
	c.renewIdentity = true
	c.idMu.Unlock()
}
