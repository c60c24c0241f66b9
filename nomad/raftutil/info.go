package raftutil

// Info summarises a Raft store.
type Info struct {
	// FirstIndex and LastIndex bound the log entries kept (0 and 0 for an
	// empty log); Entries is how many there are.
	FirstIndex, LastIndex, Entries uint64
	// CurrentTerm, LastVoteTerm and LastVoteCandidate are the stable
	// store's: the term the server was in and whom it last voted for.
	CurrentTerm       uint64
	LastVoteTerm      uint64
	LastVoteCandidate string
	// Snapshots lists the snapshots kept, newest first.
	Snapshots []SnapshotInfo
}

// SnapshotInfo is one snapshot kept beside the log.
type SnapshotInfo struct {
	ID    string
	Index uint64
	Term  uint64
	Size  int64
}

// Stable store keys, as hashicorp/raft writes them.
var (
	keyCurrentTerm  = []byte("CurrentTerm")
	keyLastVoteTerm = []byte("LastVoteTerm")
	keyLastVoteCand = []byte("LastVoteCand")
)

// Info reads the store's summary.
func (s *Store) Info() (*Info, error) {
	first, err := s.Logs.FirstIndex()
	if err != nil {
		return nil, err
	}
	last, err := s.Logs.LastIndex()
	if err != nil {
		return nil, err
	}
	out := &Info{FirstIndex: first, LastIndex: last}
	if last > 0 {
		out.Entries = last - first + 1
	}
	// A key never written reads as empty: zero.
	if out.CurrentTerm, err = s.stable.GetUint64(keyCurrentTerm); err != nil {
		return nil, err
	}
	if out.LastVoteTerm, err = s.stable.GetUint64(keyLastVoteTerm); err != nil {
		return nil, err
	}
	cand, err := s.stable.Get(keyLastVoteCand)
	if err != nil {
		return nil, err
	}
	out.LastVoteCandidate = string(cand)
	snaps, err := s.Snaps.List()
	if err != nil {
		return nil, err
	}
	for _, m := range snaps {
		out.Snapshots = append(out.Snapshots, SnapshotInfo{ID: m.ID, Index: m.Index, Term: m.Term, Size: m.Size})
	}
	return out, nil
}
