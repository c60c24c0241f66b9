package nomad

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/nomad/snapshot"
	"github.com/opennomad/nomad/structs"
)

// Streaming calls of snapshot save and restore.
const (
	streamSnapshotSave    = "Operator.SnapshotSave"
	streamSnapshotRestore = "Operator.SnapshotRestore"
)

// snapshotRestoreTimeout bounds the leader's restore of an archive.
const snapshotRestoreTimeout = 5 * time.Minute

// SnapshotSave writes an archive (see package snapshot) of the cluster's
// state to w. The leader takes it, through a streaming call when this
// server does not lead; with stale, this server takes it from its own
// state. onIndex, when set, is told the Raft index the archive reflects
// before any byte is written (the HTTP API puts it in a header).
//
// The streams bypass the RPC registry, so they check the caller's token
// themselves: saving needs the operator capability snapshot-save, here
// and again on the leader the token is forwarded to.
func (s *Server) SnapshotSave(w io.Writer, token string, stale bool, onIndex func(uint64)) error {
	if err := s.authorizeSnapshot(streamSnapshotSave, token); err != nil {
		return err
	}
	if stale || s.IsLeader() {
		return s.saveLocalSnapshot(w, onIndex)
	}
	addr, err := s.waitForLeader(streamSnapshotSave)
	if err != nil {
		return err
	}
	conn, err := s.net.pool.Stream(addr, streamSnapshotSave, snapshotArgs(token, stale))
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := conn.ReadResponse()
	if err != nil {
		return err
	}
	if onIndex != nil {
		onIndex(resp.Index)
	}
	if _, err := io.Copy(w, conn); err != nil {
		return fmt.Errorf("copying snapshot from the leader: %w", err)
	}
	return nil
}

// saveLocalSnapshot snapshots this server's state and writes the archive.
func (s *Server) saveLocalSnapshot(w io.Writer, onIndex func(uint64)) error {
	meta, rc, err := s.openSnapshot()
	if err != nil {
		return err
	}
	defer rc.Close()
	if onIndex != nil {
		onIndex(meta.Index)
	}
	return snapshot.Write(w, meta, rc)
}

// openSnapshot takes a Raft snapshot now, or opens the newest one when
// nothing was written since it.
func (s *Server) openSnapshot() (*raft.SnapshotMeta, io.ReadCloser, error) {
	f := s.raft.Snapshot()
	err := f.Error()
	if err == nil {
		return f.Open()
	}
	if !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil, nil, fmt.Errorf("taking a snapshot: %w", err)
	}
	list, err := s.raftStores.snaps.List()
	if err != nil {
		return nil, nil, fmt.Errorf("listing snapshots: %w", err)
	}
	if len(list) == 0 {
		return nil, nil, errors.New("no snapshot to save: the log is empty")
	}
	return s.raftStores.snaps.Open(list[0].ID)
}

// SnapshotRestore replaces the cluster's state with the archive read
// from r. The leader restores it (this server forwards the archive when
// it does not lead); the followers then install it from the leader. An
// archive that fails its checks changes nothing. It needs a management
// token, checked here and on the leader.
func (s *Server) SnapshotRestore(r io.Reader, token string) error {
	if err := s.authorizeSnapshot(streamSnapshotRestore, token); err != nil {
		return err
	}
	if s.IsLeader() {
		return s.restoreLocal(r)
	}
	addr, err := s.waitForLeader(streamSnapshotRestore)
	if err != nil {
		return err
	}
	conn, err := s.net.pool.Stream(addr, streamSnapshotRestore, snapshotArgs(token, false))
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := io.Copy(conn, r); err != nil {
		return fmt.Errorf("sending snapshot to the leader: %w", err)
	}
	if err := conn.CloseWrite(); err != nil {
		return fmt.Errorf("sending snapshot to the leader: %w", err)
	}
	_, err = conn.ReadResponse()
	return err
}

// snapshotArgs are the arguments of a forwarded snapshot stream.
func snapshotArgs(token string, stale bool) *structs.GenericRequest {
	return &structs.GenericRequest{QueryOptions: structs.QueryOptions{AuthToken: token, AllowStale: stale}}
}

// authorizeSnapshot checks the token of a snapshot stream: save needs
// the operator capability snapshot-save, restore a management token.
func (s *Server) authorizeSnapshot(method, token string) error {
	a, err := s.ResolveACL(token)
	if err != nil {
		return err
	}
	switch method {
	case streamSnapshotSave:
		if a.AllowOperatorCapability(acl.OperatorCapabilitySnapshotSave) {
			return nil
		}
	case streamSnapshotRestore:
		if a.IsManagement() {
			return nil
		}
	}
	return structs.ErrPermissionDenied
}

// restoreLocal verifies the archive and has Raft restore it; the FSM's
// restore rebuilds the leader's components.
func (s *Server) restoreLocal(r io.Reader) error {
	meta, state, err := snapshot.Read(r, s.spoolDir())
	if err != nil {
		return structs.WithKind(structs.ErrInvalid, err)
	}
	defer state.Close()
	if err := s.raft.Restore(meta, state, snapshotRestoreTimeout); err != nil {
		return fmt.Errorf("restoring snapshot: %w", err)
	}
	s.logger.Info("restored a snapshot", "snapshot_index", meta.Index)
	return nil
}

// spoolDir is where an archive waits for its checks: the data dir, which
// has room for Raft snapshots, else the system's temporary directory.
func (s *Server) spoolDir() string {
	if s.config.DataDir != "" {
		return s.config.DataDir
	}
	return os.TempDir()
}

// waitForLeader returns the leader's RPC address, waiting up to the RPC
// hold timeout for one to be elected. Without a network there is nowhere
// to go.
func (s *Server) waitForLeader(method string) (string, error) {
	if s.net.pool == nil {
		return "", fmt.Errorf("%s: %w", method, structs.ErrNoLeader)
	}
	deadline := time.Now().Add(s.config.Cluster.RPCHoldTimeout)
	for {
		if addr, id := s.raft.LeaderWithID(); id != "" && string(id) != s.id {
			return s.peerAddr(id, addr), nil
		}
		if !time.Now().Before(deadline) || !s.sleepCtx(forwardRetryDelay) {
			return "", fmt.Errorf("%s: %w", method, structs.ErrNoLeader)
		}
	}
}

// serveStream serves a streaming call another server (or agent)
// forwarded here. Only the leader serves them, as forwarded calls are
// not forwarded again.
func (s *Server) serveStream(method string, conn *rpcnet.StreamConn) {
	var args structs.GenericRequest
	if err := conn.DecodeArgs(&args); err != nil {
		_ = conn.WriteResponse(rpcnet.StreamResponse{Error: fmt.Sprintf("%s: decoding arguments: %v", method, err)})
		return
	}
	fail := func(err error) {
		_ = conn.WriteResponse(rpcnet.StreamResponse{Error: structs.ClassifyError(err).Error()})
	}
	if err := s.authorizeSnapshot(method, args.AuthToken); err != nil {
		fail(err)
		return
	}
	switch method {
	case streamSnapshotSave:
		if !args.AllowStale && !s.IsLeader() {
			fail(fmt.Errorf("%s: %w", method, structs.ErrNoLeader))
			return
		}
		meta, rc, err := s.openSnapshot()
		if err != nil {
			fail(err)
			return
		}
		defer rc.Close()
		if err := conn.WriteResponse(rpcnet.StreamResponse{Index: meta.Index}); err != nil {
			return
		}
		if err := snapshot.Write(conn, meta, rc); err != nil {
			s.logger.Error("streaming a snapshot failed", "error", err)
		}
	case streamSnapshotRestore:
		if !s.IsLeader() {
			fail(fmt.Errorf("%s: %w", method, structs.ErrNoLeader))
			return
		}
		if err := s.restoreLocal(conn); err != nil {
			fail(err)
			return
		}
		_ = conn.WriteResponse(rpcnet.StreamResponse{})
	default:
		fail(fmt.Errorf("%w: %s", structs.ErrUnknownMethod, method))
	}
}
