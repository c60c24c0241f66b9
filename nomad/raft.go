package nomad

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"

	"github.com/opennomad/nomad/structs"
)

// devRaftTimeout is the heartbeat, election and lease timeout of a dev
// mode server.
const devRaftTimeout = 20 * time.Millisecond

// raftEnqueueLimit bounds how long a write waits for Raft to accept it
// (not to commit it) before failing.
const raftEnqueueLimit = 30 * time.Second

// raftStores are the storage behind Raft: a durable log, stable store
// and snapshot store under the data dir, or in-memory ones in dev mode.
type raftStores struct {
	logs   raft.LogStore
	stable raft.StableStore
	snaps  raft.SnapshotStore
	// closer releases the durable stores on shutdown; nil in memory.
	closer io.Closer
	// dir is <data_dir>/raft; empty in memory.
	dir string
}

// openRaftStores opens the stores. On disk, raft-wal holds the log and
// the stable store in <data_dir>/raft/wal (every append is fsync'd before
// Raft considers it stored) and snapshots live in <data_dir>/raft/snapshots.
func openRaftStores(cfg *Config) (*raftStores, error) {
	if cfg.DevMode {
		store := raft.NewInmemStore()
		return &raftStores{logs: store, stable: store, snaps: raft.NewInmemSnapshotStore()}, nil
	}
	base := filepath.Join(cfg.DataDir, "raft")
	walDir := filepath.Join(base, "wal")
	if err := os.MkdirAll(walDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating raft directory: %w", diskFullHint(err, base))
	}
	logger := cfg.Logger.Named("raft")
	// The WAL does not close a metadata store it opened itself, which
	// would keep the directory locked for the process's lifetime: open it
	// here and close it after the WAL.
	meta := &metadb.BoltMetaDB{}
	log, err := wal.Open(walDir, wal.WithLogger(logger.Named("wal")), wal.WithMetaStore(meta))
	if err != nil {
		meta.Close()
		return nil, fmt.Errorf("opening raft log in %s: %w", walDir, diskFullHint(err, walDir))
	}
	closer := closerFunc(func() error { return errors.Join(log.Close(), meta.Close()) })
	snaps, err := raft.NewFileSnapshotStoreWithLogger(base, cfg.RaftSnapshotsRetained, logger.Named("snapshots"))
	if err != nil {
		closer.Close()
		return nil, fmt.Errorf("opening raft snapshots in %s: %w", base, diskFullHint(err, base))
	}
	// Raft reads back every entry it has just stored: the leader to send
	// it to the followers, a follower to hand it to the FSM. Without a
	// cache each read is a file read and a decode of the WAL's frame.
	cached, err := raft.NewLogCache(raftLogCacheSize, log)
	if err != nil {
		closer.Close()
		return nil, fmt.Errorf("opening raft log cache: %w", err)
	}
	return &raftStores{logs: cached, stable: log, snaps: snaps, closer: closer, dir: base}, nil
}

// raftLogCacheSize is how many of the latest Raft entries are kept in
// memory for Raft's reads. It covers what a follower a few hundred
// entries behind still needs, as in Nomad; an entry further back is read
// from the WAL.
const raftLogCacheSize = 512

// closerFunc adapts a function to io.Closer.
type closerFunc func() error

// Close calls the function.
func (f closerFunc) Close() error { return f() }

// serverID returns the server's Raft ID. It must survive restarts, since
// the Raft configuration names servers by it: in dev mode it is fresh,
// otherwise it is read from (or first written to) <data_dir>/node-id.
func serverID(cfg *Config) (string, error) {
	if cfg.DevMode {
		return structs.GenerateUUID(), nil
	}
	path := filepath.Join(cfg.DataDir, "node-id")
	buf, err := os.ReadFile(path)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(buf))
		if id == "" {
			return "", fmt.Errorf("server ID file %s is empty: write this server's ID into it (the ID the other servers list for it in `nomad operator raft list-peers`), or remove it together with %s when the server holds no state worth keeping", path, filepath.Join(cfg.DataDir, "raft"))
		}
		return id, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("reading server ID: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return "", fmt.Errorf("creating data dir: %w", err)
	}
	id := structs.GenerateUUID()
	// Synced before the rename: a crash must not leave an empty ID file
	// behind a Raft log that names this server.
	tmp := path + ".tmp"
	if err := writeFileSync(tmp, []byte(id)); err != nil {
		return "", fmt.Errorf("writing server ID: %w", diskFullHint(err, cfg.DataDir))
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("writing server ID: %w", err)
	}
	return id, nil
}

// writeFileSync writes a new file and fsyncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// setupRaft opens the stores, builds the transport and starts Raft,
// bootstrapping a single-server cluster when the data dir holds no Raft
// state yet. A server restarted from its data dir restores its last
// snapshot and replays the log after it. hadState reports Raft state
// found at start: such a server never bootstraps again.
func (s *Server) setupRaft() (hadState bool, err error) {
	conf := DefaultRaftConfig()
	switch {
	case s.config.RaftConfig != nil:
		c := *s.config.RaftConfig
		conf = &c
	case s.config.DevMode && s.config.BootstrapExpect == 1:
		// A lone in-memory server has no peer to wait for: electing
		// itself after 20 ms rather than 1-2 s gets a dev agent going at
		// once, and a single voter never loses its lease.
		conf.HeartbeatTimeout = devRaftTimeout
		conf.ElectionTimeout = devRaftTimeout
		conf.LeaderLeaseTimeout = devRaftTimeout
	}
	conf.LocalID = raft.ServerID(s.id)
	conf.Logger = s.logger.Named("raft")
	conf.NotifyCh = s.raftNotifyCh
	if s.config.RaftSnapshotThreshold > 0 {
		conf.SnapshotThreshold = s.config.RaftSnapshotThreshold
	}
	if s.config.RaftSnapshotInterval > 0 {
		conf.SnapshotInterval = s.config.RaftSnapshotInterval
	}
	if s.config.RaftTrailingLogs > 0 {
		conf.TrailingLogs = s.config.RaftTrailingLogs
	}

	stores, err := openRaftStores(s.config)
	if err != nil {
		return false, err
	}
	if stores.dir != "" {
		if err := checkRaftData(stores, stores.dir, s.logger.Named("raft")); err != nil {
			stores.closer.Close()
			return false, err
		}
	}
	trans := s.config.RaftTransport
	if trans == nil {
		trans = s.networkTransport()
	}
	if trans == nil {
		_, trans = raft.NewInmemTransport(raft.ServerAddress(s.id))
	}
	hadState, err = raft.HasExistingState(stores.logs, stores.stable, stores.snaps)
	if err != nil {
		closeRaft(stores, trans)
		return false, fmt.Errorf("reading raft state: %w", err)
	}

	// A single server bootstraps itself; larger clusters wait for the
	// membership layer to bootstrap them with every expected server.
	if s.config.BootstrapExpect == 1 && !hadState {
		if err := bootstrapSingle(conf, stores, trans); err != nil {
			closeRaft(stores, trans)
			return false, err
		}
	}
	// The FSM is a raft.BatchingFSM: Raft hands it the entries it
	// commits together, and it applies runs of them in one state
	// transaction.
	r, err := raft.NewRaft(conf, s.fsm, stores.logs, stores.stable, stores.snaps, trans)
	if err != nil {
		closeRaft(stores, trans)
		return false, fmt.Errorf("starting raft: %w", err)
	}
	s.raft = r
	s.raftStores = stores
	s.raftTransport = trans
	return hadState, nil
}

// bootstrapSingle makes this server the only voter of a new cluster. A
// data dir that already holds Raft state keeps its configuration.
func bootstrapSingle(conf *raft.Config, stores *raftStores, trans raft.Transport) error {
	exists, err := raft.HasExistingState(stores.logs, stores.stable, stores.snaps)
	if err != nil {
		return fmt.Errorf("reading raft state: %w", err)
	}
	if exists {
		return nil
	}
	configuration := raft.Configuration{Servers: []raft.Server{{
		ID: conf.LocalID, Address: trans.LocalAddr(), Suffrage: raft.Voter,
	}}}
	if err := raft.BootstrapCluster(conf, stores.logs, stores.stable, stores.snaps, trans, configuration); err != nil {
		return fmt.Errorf("bootstrapping raft: %w", err)
	}
	return nil
}

// closeRaft releases stores and transport after Raft stopped (or failed
// to start).
func closeRaft(stores *raftStores, trans raft.Transport) error {
	var errs []error
	if c, ok := trans.(raft.WithClose); ok {
		errs = append(errs, c.Close())
	}
	if stores != nil && stores.closer != nil {
		errs = append(errs, stores.closer.Close())
	}
	return errors.Join(errs...)
}

// raftApply replicates one entry and waits until this server's FSM applied
// it. It returns the FSM's response and the entry's index. An error the
// FSM returned (a refused entry) comes back as the error; losing
// leadership meanwhile is reported as structs.ErrNoLeader, which callers
// may retry.
func (s *Server) raftApply(t structs.MessageType, msg interface{}) (interface{}, uint64, error) {
	buf, err := structs.Encode(t, msg)
	if err != nil {
		return nil, 0, err
	}
	// An entry every server fails to decode would still be committed;
	// jobs carry free-form driver configs, so their entries are checked
	// before they reach the log (validation bounds the config far below
	// the decoder's limit; this is the last line), and so do scaling
	// events, whose Meta is free-form. Other entries hold only typed
	// fields of bounded depth.
	if t == structs.JobRegisterRequestType || t == structs.ScalingEventRegisterRequestType {
		if err := structs.CheckEntry(buf); err != nil {
			return nil, 0, err
		}
	}
	start := time.Now()
	future := s.raft.Apply(buf, raftEnqueueLimit)
	if err := future.Error(); err != nil {
		return nil, 0, raftApplyError(t, err)
	}
	metrics.MeasureSinceWithLabels([]string{"nomad", "raft", "apply"}, start,
		[]metrics.Label{{Name: "type", Value: t.String()}})
	resp := future.Response()
	if err, ok := resp.(error); ok {
		return nil, future.Index(), err
	}
	return resp, future.Index(), nil
}

// raftApplyError names the entry in an error of raft.Apply, and turns the
// errors that mean "this server does not (or no longer) lead" into
// structs.ErrNoLeader, which workers and clients retry.
func raftApplyError(t structs.MessageType, err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("%w: %s: %v", structs.ErrNoLeader, t, err)
	}
	return fmt.Errorf("raft apply of %s: %w", t, err)
}
