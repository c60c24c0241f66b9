package nomad

import (
	"path/filepath"

	"github.com/opennomad/nomad/nomad/membership"
)

// gossipKeyring sets the gossip encryption keys of mc: those of the
// keyring file in the data directory when it exists, else the configured
// key (server.encrypt), which then seeds the file. Without either,
// gossip is in the clear.
func (s *Server) gossipKeyring(mc *membership.Config) error {
	path := ""
	if !s.config.DevMode && s.config.DataDir != "" {
		path = filepath.Join(s.config.DataDir, membership.KeyringFileName)
	}
	keys, conflict, err := membership.InitKeyring(path, s.config.Cluster.GossipKey)
	if err != nil {
		return err
	}
	if conflict {
		// Keys changed at run time live in the file; a stale encrypt
		// setting must not undo a rotation.
		s.logger.Warn("server.encrypt is not the primary key of the gossip keyring file; using the keyring file", "keyring", path)
	}
	if len(keys) == 0 {
		return nil
	}
	mc.Keys = keys
	mc.KeyringFile = path
	return nil
}

// ListGossipKeys asks every server which gossip keys it holds.
func (s *Server) ListGossipKeys() (*membership.KeyringResponse, error) {
	if s.net.membership == nil {
		return nil, ErrNoGossip
	}
	return s.net.membership.ListKeys()
}

// InstallGossipKey adds a gossip key (base64) to every server's keyring.
func (s *Server) InstallGossipKey(key string) (*membership.KeyringResponse, error) {
	if s.net.membership == nil {
		return nil, ErrNoGossip
	}
	return s.net.membership.InstallKey(key)
}

// UseGossipKey makes an installed gossip key the one every server
// encrypts with.
func (s *Server) UseGossipKey(key string) (*membership.KeyringResponse, error) {
	if s.net.membership == nil {
		return nil, ErrNoGossip
	}
	return s.net.membership.UseKey(key)
}

// RemoveGossipKey removes a gossip key that is not the primary one from
// every server's keyring.
func (s *Server) RemoveGossipKey(key string) (*membership.KeyringResponse, error) {
	if s.net.membership == nil {
		return nil, ErrNoGossip
	}
	return s.net.membership.RemoveKey(key)
}
