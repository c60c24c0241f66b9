package raftutil_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/raftutil"
	"github.com/opennomad/nomad/nomad/servertest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// stoppedServer runs a server on a data directory, registers a job
// before and one after a Raft snapshot, and stops it; it returns the data
// directory and the two jobs.
func stoppedServer(t *testing.T) (string, *structs.Job, *structs.Job) {
	t.Helper()
	dir := t.TempDir()
	cfg := servertest.Config("offline")
	cfg.DevMode = false
	cfg.DataDir = dir
	srv := servertest.Start(t, cfg)
	register := func() *structs.Job {
		job := mock.Job()
		var reply structs.JobRegisterResponse
		must.NoError(t, srv.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reply))
		return job
	}
	before := register()
	must.NoError(t, srv.Raft().Snapshot().Error())
	after := register()

	// While the server runs its store is locked.
	_, err := raftutil.Open(dir)
	must.ErrorIs(t, err, raftutil.ErrLocked)

	must.NoError(t, srv.Shutdown())
	return dir, before, after
}

func TestStore_InfoLogsState(t *testing.T) {
	dir, before, after := stoppedServer(t)
	listing := func() []string {
		var names []string
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil {
				fi, _ := d.Info()
				names = append(names, p+" "+fi.ModTime().String())
			}
			return nil
		})
		return names
	}
	was := listing()

	for _, path := range []string{dir, filepath.Join(dir, "raft"), filepath.Join(dir, "raft", "wal")} {
		found, err := raftutil.Locate(path)
		must.NoError(t, err, must.Sprint(path))
		must.Eq(t, filepath.Join(dir, "raft"), found)
	}
	_, err := raftutil.Locate(t.TempDir())
	must.ErrorContains(t, err, "no Raft store found")

	s, err := raftutil.Open(dir)
	must.NoError(t, err)
	defer s.Close()

	info, err := s.Info()
	must.NoError(t, err)
	must.Positive(t, info.LastIndex)
	must.Eq(t, info.LastIndex-info.FirstIndex+1, info.Entries)
	must.Positive(t, info.CurrentTerm)
	must.Len(t, 1, info.Snapshots)

	var registers int
	var sawConfiguration bool
	must.NoError(t, s.Entries(0, func(l *raft.Log, e *raftutil.Entry) error {
		if e.MessageType == structs.JobRegisterRequestType.String() {
			registers++
			body := e.Body.(map[string]interface{})
			must.MapContainsKey(t, body, "Job")
		}
		sawConfiguration = sawConfiguration || l.Type == raft.LogConfiguration
		return nil
	}))
	must.Positive(t, registers)
	must.True(t, sawConfiguration || info.FirstIndex > 1)

	store, index, err := s.State(0)
	must.NoError(t, err)
	must.Eq(t, info.LastIndex, index)
	for _, j := range []*structs.Job{before, after} {
		got, err := store.JobByID(nil, j.Namespace, j.ID)
		must.NoError(t, err)
		must.NotNil(t, got, must.Sprintf("job %s", j.ID))
	}
	dump, err := raftutil.DumpState(store, index)
	must.NoError(t, err)
	must.Len(t, 2, dump.Jobs)
	must.NotNil(t, dump.AutopilotConfig)

	// Stopping before the second registration leaves it out.
	var afterIndex uint64
	must.NoError(t, s.Entries(0, func(l *raft.Log, e *raftutil.Entry) error {
		if e.MessageType == structs.JobRegisterRequestType.String() {
			afterIndex = l.Index
		}
		return nil
	}))
	early, _, err := s.State(afterIndex - 1)
	must.NoError(t, err)
	got, err := early.JobByID(nil, after.Namespace, after.ID)
	must.NoError(t, err)
	must.Nil(t, got)

	must.Eq(t, was, listing(), must.Sprint("reading changes none of the server's files"))
}
