package nomad

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs/mock"
)

// The tests in this file write the durable Raft log on real disk in a
// child process, kill that process with SIGKILL (nothing is closed or
// flushed beyond what the log itself fsync'd), and reopen the log in the
// test process, as a server restarted after a crash does.

// killChildEnv names the data dir the child writes; killStepsEnv the
// writes it makes, as a space-separated list of "store:a-b" (append
// entries a..b) and "truncate:a" (delete the tail from a on, as Raft does
// when a new leader's log conflicts with this server's: "clearing log
// suffix").
const (
	killChildEnv = "NOMAD_TEST_RAFT_KILL_DIR"
	killStepsEnv = "NOMAD_TEST_RAFT_KILL_STEPS"
)

// TestRaftStoreKillChild is the child process's body; it does nothing
// when run as an ordinary test.
func TestRaftStoreKillChild(t *testing.T) {
	dir := os.Getenv(killChildEnv)
	if dir == "" {
		t.Skip("runs only as the child of a kill test")
	}
	stores, err := openRaftStores(&Config{DataDir: dir, Logger: hclog.NewNullLogger(), RaftSnapshotsRetained: 2})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	for _, step := range strings.Fields(os.Getenv(killStepsEnv)) {
		if err := applyKillStep(stores.logs, step); err != nil {
			fmt.Fprintln(os.Stderr, step+":", err)
			os.Exit(4)
		}
	}
	// Die as a killed server does: no Close, no deferred flush.
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

func applyKillStep(logs raft.LogStore, step string) error {
	verb, arg, _ := strings.Cut(step, ":")
	switch verb {
	case "store":
		from, to := parseRange(arg)
		var batch []*raft.Log
		for i := from; i <= to; i++ {
			batch = append(batch, testLogEntry(i))
		}
		return logs.StoreLogs(batch)
	case "truncate":
		from, _ := strconv.ParseUint(arg, 10, 64)
		last, err := logs.LastIndex()
		if err != nil {
			return err
		}
		return logs.DeleteRange(from, last)
	}
	return fmt.Errorf("unknown step %q", step)
}

func parseRange(s string) (uint64, uint64) {
	a, b, _ := strings.Cut(s, "-")
	from, _ := strconv.ParseUint(a, 10, 64)
	to, _ := strconv.ParseUint(b, 10, 64)
	return from, to
}

// testLogEntry is entry i with a body that names it, so a read-back
// shows which write it came from.
func testLogEntry(i uint64) *raft.Log {
	return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("entry-%d-%s", i, strings.Repeat("x", 200)))}
}

// runKilledChild runs the steps in a child process that kills itself.
func runKilledChild(t *testing.T, dir string, steps ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRaftStoreKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+dir, killStepsEnv+"="+strings.Join(steps, " "))
	out, err := cmd.CombinedOutput()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v\n%s", err, out)
	}
}

// TestRaftStore_ReopensAfterKill writes the log in a child that is killed,
// reopens it and reads every entry back, as a restarted server's
// raft.NewRaft does (it reads the first entry at start).
func TestRaftStore_ReopensAfterKill(t *testing.T) {
	cases := []struct {
		name string
		// rounds of child steps; the log is reopened after each kill.
		rounds [][]string
		last   uint64
	}{
		{
			name:   "appends only",
			rounds: [][]string{{"store:1-50", "store:51-100"}},
			last:   100,
		},
		{
			// raft-wal before v0.4.1 sealed the truncated tail segment
			// without its index block: reopening failed on every entry of
			// it ("sealed segment has no index block").
			name:   "tail truncated then killed",
			rounds: [][]string{{"store:1-100", "truncate:61", "store:61-70"}},
			last:   70,
		},
		{
			name:   "tail truncated after a restart, then killed again",
			rounds: [][]string{{"store:1-100"}, {"truncate:81", "store:81-90"}, {"store:91-95"}},
			last:   95,
		},
		{
			name:   "tail truncated twice",
			rounds: [][]string{{"store:1-40", "truncate:31", "store:31-60", "truncate:51", "store:51-55"}},
			last:   55,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, steps := range tc.rounds {
				runKilledChild(t, dir, steps...)
				assertLogReadable(t, dir, lastAfter(steps))
			}
			assertLogReadable(t, dir, tc.last)
		})
	}
}

// lastAfter is the last index a round of steps leaves.
func lastAfter(steps []string) uint64 {
	var last uint64
	for _, step := range steps {
		verb, arg, _ := strings.Cut(step, ":")
		switch verb {
		case "store":
			_, last = parseRange(arg)
		case "truncate":
			from, _ := strconv.ParseUint(arg, 10, 64)
			last = from - 1
		}
	}
	return last
}

// assertLogReadable opens the stores in dir and reads entries 1..last.
func assertLogReadable(t *testing.T, dir string, last uint64) {
	t.Helper()
	stores, err := openRaftStores(&Config{DataDir: dir, Logger: hclog.NewNullLogger(), RaftSnapshotsRetained: 2})
	must.NoError(t, err)
	defer stores.closer.Close()
	first, err := stores.logs.FirstIndex()
	must.NoError(t, err)
	must.Eq(t, 1, first)
	got, err := stores.logs.LastIndex()
	must.NoError(t, err)
	must.Eq(t, last, got)
	for i := uint64(1); i <= last; i++ {
		var entry raft.Log
		must.NoError(t, stores.logs.GetLog(i, &entry), must.Sprintf("entry %d", i))
		must.Eq(t, string(testLogEntry(i).Data), string(entry.Data), must.Sprintf("entry %d", i))
	}
}

// TestRaftStore_TornTailWrite cuts the newest segment file short, as a
// crash in the middle of a write leaves it: the log reopens with the
// entries whose writes completed and drops the torn one.
func TestRaftStore_TornTailWrite(t *testing.T) {
	dir := t.TempDir()
	runKilledChild(t, dir, "store:1-20", "store:21-21")
	segs, err := filepath.Glob(filepath.Join(dir, "raft", "wal", "*.wal"))
	must.NoError(t, err)
	must.SliceNotEmpty(t, segs)
	tail := segs[len(segs)-1]
	// Segment files are preallocated: find the end of the written data
	// by its last non-zero byte and cut into the last entry's frame.
	buf, err := os.ReadFile(tail)
	must.NoError(t, err)
	end := len(buf)
	for end > 0 && buf[end-1] == 0 {
		end--
	}
	must.NoError(t, os.Truncate(tail, int64(end-20)))

	stores, err := openRaftStores(&Config{DataDir: dir, Logger: hclog.NewNullLogger(), RaftSnapshotsRetained: 2})
	must.NoError(t, err)
	defer stores.closer.Close()
	last, err := stores.logs.LastIndex()
	must.NoError(t, err)
	must.Eq(t, 20, last)
	var entry raft.Log
	must.NoError(t, stores.logs.GetLog(20, &entry))
	// The log takes new writes after the torn one.
	must.NoError(t, stores.logs.StoreLog(testLogEntry(21)))
}

// damageNewestSnapshot flips bytes in the newest snapshot's state file, as
// a torn or bit-rotted write leaves it; the snapshot keeps its metadata,
// so only its checksum tells.
func damageNewestSnapshot(t *testing.T, dataDir string) string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(dataDir, "raft", "snapshots", "*"))
	must.NoError(t, err)
	must.SliceNotEmpty(t, dirs)
	newest := dirs[len(dirs)-1] // names sort by term, index, time
	state := filepath.Join(newest, "state.bin")
	info, err := os.Stat(state)
	must.NoError(t, err)
	must.NoError(t, os.Truncate(state, info.Size()/2))
	f, err := os.OpenFile(state, os.O_WRONLY|os.O_APPEND, 0)
	must.NoError(t, err)
	_, err = f.Write(make([]byte, info.Size()-info.Size()/2))
	must.NoError(t, err)
	must.NoError(t, f.Close())
	return filepath.Base(newest)
}

func TestServer_RestartWithDamagedSnapshot(t *testing.T) {
	t.Run("the log still covers it: moved aside, state rebuilt from the log", func(t *testing.T) {
		dir := t.TempDir()
		onDisk := func(c *Config) { c.DevMode = false; c.DataDir = dir }
		s1 := newTestServer(t, onDisk)
		populate(t, s1)
		must.NoError(t, s1.raft.Snapshot().Error())
		populate(t, s1)
		must.NoError(t, s1.Shutdown())
		id := damageNewestSnapshot(t, dir)

		s2 := newTestServer(t, onDisk)
		statetest.SameState(t, s1.State(), s2.State())
		_, err := os.Stat(filepath.Join(dir, "raft", damagedSnapshotsDir, id, "state.bin"))
		must.NoError(t, err)
		registerJob(t, s2, mock.Job())
	})
	t.Run("the log dropped what it held: start-up stops and says what to do", func(t *testing.T) {
		dir := t.TempDir()
		onDisk := func(c *Config) { c.DevMode = false; c.DataDir = dir; c.RaftTrailingLogs = 1 }
		s1 := newTestServer(t, onDisk)
		populate(t, s1)
		must.NoError(t, s1.raft.Snapshot().Error())
		must.NoError(t, s1.Shutdown())
		damageNewestSnapshot(t, dir)

		cfg := testConfig()
		onDisk(cfg)
		s2, err := newServer(cfg, nil)
		if s2 != nil {
			s2.Shutdown()
		}
		must.ErrorIs(t, err, ErrRaftDataUnrecoverable)
		must.StrContains(t, err.Error(), "move "+filepath.Join(dir, "raft")+" aside")
	})
}
