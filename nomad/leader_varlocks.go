package nomad

import (
	"sync"

	"github.com/opennomad/nomad/nomad/endpoints"
	"github.com/opennomad/nomad/nomad/varlocks"
	"github.com/opennomad/nomad/structs"
)

// varLockTimers holds the leader's timers of variable locks for the
// current term; nil while this server does not lead.
type varLockTimers struct {
	mu     sync.Mutex
	timers *varlocks.Timers
}

// startVarLocks arms a timer for every lock held in state: a lock taken
// under an earlier leader expires unless renewed with this one.
func (s *Server) startVarLocks() error {
	timers := varlocks.New(s.clock, s.releaseExpiredVarLock)
	vars, err := s.State().Variables(nil, "*", "")
	if err != nil {
		return err
	}
	for _, v := range vars {
		if v.IsLocked() {
			timers.Arm(v.Namespace, v.Path, v.Lock)
		}
	}
	s.varLocks.mu.Lock()
	defer s.varLocks.mu.Unlock()
	if s.varLocks.timers != nil {
		s.varLocks.timers.Stop()
	}
	s.varLocks.timers = timers
	return nil
}

// stopVarLocks stops the term's timers.
func (s *Server) stopVarLocks() {
	s.varLocks.mu.Lock()
	defer s.varLocks.mu.Unlock()
	if s.varLocks.timers != nil {
		s.varLocks.timers.Stop()
		s.varLocks.timers = nil
	}
}

// variableLocks is the term's timers as the endpoints use them; a nil
// interface while this server does not lead.
func (s *Server) variableLocks() endpoints.VariableLocks {
	s.varLocks.mu.Lock()
	defer s.varLocks.mu.Unlock()
	if s.varLocks.timers == nil {
		return nil
	}
	return s.varLocks.timers
}

// releaseExpiredVarLock clears a lock whose holder stopped renewing it
// and whose lock delay has passed. A failure (leadership lost meanwhile)
// is logged: the next leader arms the lock's timer again.
func (s *Server) releaseExpiredVarLock(ns, path, lockID string) {
	req := &structs.VarApplyStateRequest{
		Op: structs.VarOpLockRelease,
		Var: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{
			Namespace: ns, Path: path, Lock: &structs.VariableLock{ID: lockID}, ModifyTime: s.now().UnixNano()}},
	}
	raw, _, err := s.raftApply(structs.VarApplyStateRequestType, req)
	if err != nil {
		s.logger.Warn("releasing an expired variable lock", "namespace", ns, "path", path, "error", err)
		return
	}
	if resp, ok := raw.(*structs.VarApplyStateResponse); ok && resp.Result != structs.VarOpResultOk {
		s.logger.Debug("expired variable lock was already replaced", "namespace", ns, "path", path)
	}
}
