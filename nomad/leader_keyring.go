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
//
// After a full rotation the older keys are rekeying: each look first
// seals the variables still sealed with them again with the active key,
// one Raft entry per variable, and a rekeying key becomes inactive once
// none is left.

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
		case <-s.keyringKick:
		}
	}
}

// kickKeyring has the leader look at the keyring now, without blocking:
// after a full rotation, so that variables are sealed again at once.
func (s *Server) kickKeyring() {
	select {
	case s.keyringKick <- struct{}{}:
	default:
	}
}

// tendKeyring writes what keyring.Tick finds due, in one entry.
func (s *Server) tendKeyring() error {
	keys, err := s.State().RootKeys(nil)
	if err != nil {
		return err
	}
	if err := s.rekeyVariables(keys); err != nil {
		return err
	}
	sealing := func(keyID string) bool {
		vars, err := s.State().VariablesByKeyID(nil, keyID)
		return err != nil || len(vars) > 0
	}
	d := keyring.Tick(keys, s.now(), s.config.RootKeyRotationThreshold, sealing)
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

// rekeyVariables seals every variable sealed with a rekeying key again
// with the active key. Each is written with a check-and-set on its modify
// index, keeping its lock and times: a variable written meanwhile was
// sealed with the active key by that write, and its conflict is skipped.
func (s *Server) rekeyVariables(keys []*structs.RootKey) error {
	var active *structs.RootKey
	for _, k := range keys {
		if k.Meta.Active() {
			active = k
		}
	}
	if active == nil {
		return nil
	}
	for _, k := range keys {
		if k.Meta.State != structs.RootKeyStateRekeying {
			continue
		}
		vars, err := s.State().VariablesByKeyID(nil, k.Meta.KeyID)
		if err != nil {
			return err
		}
		for _, v := range vars {
			resealed, err := keyring.ResealVariable(rand.Reader, k, active, v)
			if err != nil {
				return fmt.Errorf("rekeying variable %q in namespace %q: %w", v.Path, v.Namespace, err)
			}
			req := &structs.VarApplyStateRequest{Op: structs.VarOpCAS, Var: resealed}
			if _, _, err := s.raftApply(structs.VarApplyStateRequestType, req); err != nil {
				return fmt.Errorf("rekeying variable %q in namespace %q: %w", v.Path, v.Namespace, err)
			}
		}
		if len(vars) > 0 {
			s.logger.Info("keyring: variables sealed again with the active key", "from_key_id", k.Meta.KeyID, "count", len(vars))
		}
	}
	return nil
}
