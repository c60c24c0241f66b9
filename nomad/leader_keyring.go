package nomad

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/structs"
)

// The leader tends the keyring: when it takes office and every
// KeyringCheckInterval after, it asks keyring.Tick what is due (the first
// key of a new cluster, a prepublished key whose time came, a rotation of
// an old key) and writes it. The first look runs at once but on its own
// goroutine: making an RSA key takes tens of milliseconds, which
// establishing leadership need not wait for.

// tendKeyringLoop runs tendKeyring now and at every tick until ctx ends.
func (s *Server) tendKeyringLoop(ctx context.Context, ticks <-chan struct{}) {
	for {
		if err := s.tendKeyring(); err != nil && ctx.Err() == nil {
			s.logger.Error("keyring", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
	}
}

// tendKeyring writes what keyring.Tick finds due, in one entry.
func (s *Server) tendKeyring() error {
	keys, err := s.State().RootKeys(nil)
	if err != nil {
		return err
	}
	d := keyring.Tick(keys, s.now(), s.config.RootKeyRotationThreshold)
	if !d.Due() {
		return nil
	}
	write := d.Updates
	if d.NewKey {
		fresh, err := keyring.New(rand.Reader, s.now(), structs.RootKeyStateActive, 0)
		if err != nil {
			return err
		}
		// Rotate demotes the active key; Tick's updates may already name
		// it (never both: Tick asks for a new key only without a
		// prepublished one to promote).
		write = append(keyring.Rotate(keys, fresh, keyring.Rotation{}), d.Updates...)
		s.logger.Info("keyring: new root key", "key_id", fresh.Meta.KeyID, "reason", d.Reason)
	} else {
		s.logger.Info("keyring: root key states change", "reason", d.Reason, "keys", len(d.Updates))
	}
	if _, _, err := s.raftApply(structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{Keys: write}); err != nil {
		return fmt.Errorf("writing root keys: %w", err)
	}
	return nil
}
