package nomad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// ErrRaftDataUnrecoverable is the kind of a start-up failure that no
// restart can fix: the data dir no longer holds a complete history (a
// damaged snapshot whose entries the log has already dropped). The
// error's text says what the operator must do.
var ErrRaftDataUnrecoverable = errors.New("raft data cannot rebuild this server's state")

// damagedSnapshotsDir is where snapshots that fail their checksum are
// moved, under <data_dir>/raft: outside the snapshot store's own folder,
// so it neither lists nor reaps them, and kept for the operator to look at.
const damagedSnapshotsDir = "snapshots-damaged"

// checkRaftData runs before raft.NewRaft on a durable data dir and makes
// sure the state Raft is about to rebuild is whole.
//
// Raft restores the newest snapshot that opens and replays the log after
// it. Two things defeat that. A snapshot cut short or corrupted (its
// checksum fails): Raft skips it and falls back to an older one, and
// fails to start when none is left. And a gap between the snapshot it
// restores and the first entry still in the log: Raft then panics when it
// replays the missing entry ("failed to get log"). So: a damaged snapshot
// is moved aside when the log (or an older snapshot plus the log) still
// covers everything it held, and start-up stops with
// ErrRaftDataUnrecoverable, naming what to do, when nothing does.
func checkRaftData(stores *raftStores, base string, logger hclog.Logger) error {
	metas, err := stores.snaps.List()
	if err != nil {
		return fmt.Errorf("listing raft snapshots in %s: %w", base, err)
	}
	first, err := stores.logs.FirstIndex()
	if err != nil {
		return fmt.Errorf("reading raft log: %w", err)
	}
	last, err := stores.logs.LastIndex()
	if err != nil {
		return fmt.Errorf("reading raft log: %w", err)
	}

	var restorable *raft.SnapshotMeta
	var damaged []*raft.SnapshotMeta
	for _, meta := range metas {
		// Opening a file snapshot reads it whole and checks its CRC.
		_, rc, err := stores.snaps.Open(meta.ID)
		if err == nil {
			rc.Close()
			restorable = meta
			break
		}
		logger.Error("raft snapshot is damaged", "snapshot", meta.ID, "index", meta.Index, "error", err)
		damaged = append(damaged, meta)
	}

	// The state starts at the restorable snapshot (or empty) and the log
	// must continue right after it.
	var from uint64
	if restorable != nil {
		from = restorable.Index
	}
	switch {
	case last > 0 && first > from+1:
		return raftGapError(base, from, first, damaged)
	case last == 0 && len(damaged) > 0 && restorable == nil:
		// The damaged snapshot was the whole state: the log holds nothing.
		return raftGapError(base, 0, damaged[0].Index+1, damaged)
	}

	for _, meta := range damaged {
		if err := moveSnapshotAside(base, meta.ID); err != nil {
			return err
		}
		logger.Warn("moved a damaged raft snapshot aside; the state is rebuilt from the log and any older snapshot",
			"snapshot", meta.ID, "to", filepath.Join(base, damagedSnapshotsDir, meta.ID))
	}
	return nil
}

// raftGapError explains a history with a hole in it and the way out.
func raftGapError(base string, from, first uint64, damaged []*raft.SnapshotMeta) error {
	cause := "no snapshot covers the entries the log has already dropped"
	if len(damaged) > 0 {
		cause = fmt.Sprintf("snapshot %s is damaged and the log no longer holds the entries it covered", damaged[0].ID)
	}
	return fmt.Errorf("%w: %s (state would resume at index %d, the log starts at %d). "+
		"In a cluster: stop this server, move %s aside and start it again with the same configuration; "+
		"it rejoins and receives the state from the leader. "+
		"A single server: restore a backup taken with `nomad operator snapshot save` into a fresh data dir",
		ErrRaftDataUnrecoverable, cause, from, first, base)
}

// moveSnapshotAside moves one snapshot folder out of the store's folder.
func moveSnapshotAside(base, id string) error {
	dst := filepath.Join(base, damagedSnapshotsDir)
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return fmt.Errorf("moving damaged snapshot %s aside: %w", id, err)
	}
	if err := os.Rename(filepath.Join(base, "snapshots", id), filepath.Join(dst, id)); err != nil {
		return fmt.Errorf("moving damaged snapshot %s aside: %w", id, err)
	}
	return nil
}

// diskFullHint adds the operator's way out to an error caused by a full
// disk; other errors come back as they are.
func diskFullHint(err error, dir string) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: the disk holding %s is full; free space on it and start the server again (nothing was lost: entries are acknowledged only once written)", err, dir)
	}
	return err
}
