package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/opennomad/nomad/command/loadgen"
)

// -restart measures, once a W2 case has committed everything, what a
// server's state costs to save and to come back from: a snapshot taken
// on the leader through the API (what `nomad operator snapshot save`
// does), and a follower killed with SIGKILL and started again on its
// data dir, timed until it has applied everything the leader had
// applied at the kill. A restarted server restores its newest Raft
// snapshot, then applies the log entries after it that the leader's
// commit index covers; the server's log tells which of the two it did
// and how long the restore took.

// restartOutcome is what -restart measured.
type restartOutcome struct {
	// SnapshotBytes and SnapshotTime are the archive the API returned
	// and the time from the request to its last byte; RaftSnapshotTime
	// is the part the leader's Raft spent writing its snapshot (from its
	// log; zero when the log does not say).
	SnapshotBytes    int64
	SnapshotTime     time.Duration
	RaftSnapshotTime time.Duration
	// TargetIndex is the leader's applied index at the kill.
	TargetIndex uint64
	// Answered is the time from the restart to the first answer of the
	// server's HTTP API, CaughtUp to its applied index reaching
	// TargetIndex.
	Answered, CaughtUp time.Duration
	// Restored tells whether the server restored a Raft snapshot at
	// start: of index RestoredIndex, RestoredBytes long, in RestoreTime.
	Restored      bool
	RestoredIndex uint64
	RestoredBytes int64
	RestoreTime   time.Duration
	// RSS and PeakRSS are the restarted server's resident memory once it
	// caught up, and its peak until then; KilledRSS the killed process's
	// just before the kill.
	RSS, PeakRSS, KilledRSS int64
}

// lines renders the outcome for the log.
func (r *restartOutcome) lines() string {
	var b strings.Builder
	raft := ""
	if r.RaftSnapshotTime > 0 {
		raft = fmt.Sprintf(" (Raft's snapshot %s of it)", r.RaftSnapshotTime.Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "snapshot:        %.1f MB archive from the leader in %s%s\n",
		float64(r.SnapshotBytes)/(1<<20), r.SnapshotTime.Round(time.Millisecond), raft)
	how := "no Raft snapshot to restore"
	if r.Restored {
		how = fmt.Sprintf("restored the snapshot of index %d (%.1f MB) in %s", r.RestoredIndex,
			float64(r.RestoredBytes)/(1<<20), r.RestoreTime.Round(time.Millisecond))
	}
	replayed := r.TargetIndex - min(r.RestoredIndex, r.TargetIndex)
	fmt.Fprintf(&b, "restart:         follower killed and caught up to index %d in %s (API answering after %s); %s, then applied %d log entries; RSS %.0f MB (peak %.0f MB; %.0f MB before the kill)\n",
		r.TargetIndex, r.CaughtUp.Round(time.Millisecond), r.Answered.Round(time.Millisecond), how, replayed,
		float64(r.RSS)/(1<<20), float64(r.PeakRSS)/(1<<20), float64(r.KilledRSS)/(1<<20))
	return b.String()
}

// measureRestart takes the snapshot, then kills and restarts a follower.
func (c *cluster) measureRestart(ctx context.Context, leader *agent) (*restartOutcome, error) {
	out := &restartOutcome{}
	leaderLog := logSize(leader)
	start := time.Now()
	n, err := c.saveSnapshot(ctx, leader)
	if err != nil {
		return nil, err
	}
	out.SnapshotTime, out.SnapshotBytes = time.Since(start), n
	if lines, err := logLinesFrom(leader, leaderLog); err == nil {
		began, okB := findLine(lines, "starting snapshot up to")
		done, okD := findLine(lines, "snapshot complete up to")
		if okB && okD {
			out.RaftSnapshotTime = done.at.Sub(began.at)
		}
	}

	var follower *agent
	for _, s := range c.servers {
		if s != leader {
			follower = s
			break
		}
	}
	stats, err := c.raftStats(ctx, leader)
	if err != nil {
		return nil, err
	}
	if out.TargetIndex, err = strconv.ParseUint(stats["applied_index"], 10, 64); err != nil {
		return nil, fmt.Errorf("leader's applied index %q: %w", stats["applied_index"], err)
	}
	killed, err := loadgen.ReadProcMemory(follower.proc.Pid())
	if err != nil {
		return nil, err
	}
	out.KilledRSS = killed.RSS
	follower.proc.Stop(syscall.SIGKILL, 0)
	followerLog := logSize(follower)
	start = time.Now()
	if err := c.start(follower, follower.config); err != nil {
		return nil, fmt.Errorf("restarting %s: %w", follower.name, err)
	}
	err = poll(ctx, 20*time.Millisecond, follower.name+" to catch up after its restart", func() bool {
		stats, err := c.raftStats(ctx, follower)
		if err != nil {
			return false
		}
		if out.Answered == 0 {
			out.Answered = time.Since(start)
		}
		applied, _ := strconv.ParseUint(stats["applied_index"], 10, 64)
		return applied >= out.TargetIndex
	})
	if err != nil {
		return nil, err
	}
	out.CaughtUp = time.Since(start)
	mem, err := loadgen.ReadProcMemory(follower.proc.Pid())
	if err != nil {
		return nil, err
	}
	out.RSS, out.PeakRSS = mem.RSS, mem.Peak

	lines, err := logLinesFrom(follower, followerLog)
	if err != nil {
		return nil, err
	}
	began, okB := findLine(lines, "starting restore from snapshot")
	done, okD := findLine(lines, "restored from snapshot")
	if okB && okD {
		out.Restored = true
		out.RestoreTime = done.at.Sub(began.at)
		out.RestoredIndex, _ = strconv.ParseUint(done.fields["last-index"], 10, 64)
		out.RestoredBytes, _ = strconv.ParseInt(done.fields["size-in-bytes"], 10, 64)
	}
	return out, nil
}

// saveSnapshot streams a snapshot archive from a into a file of the
// case's directory and returns its size.
func (c *cluster) saveSnapshot(ctx context.Context, a *agent) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.httpAddr()+"/v1/operator/snapshot", nil)
	if err != nil {
		return 0, err
	}
	if c.token != "" {
		req.Header.Set("X-Nomad-Token", c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("saving a snapshot: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("saving a snapshot: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	f, err := os.Create(filepath.Join(c.dir, "snapshot.snap"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.Copy(f, resp.Body)
	if err != nil {
		return n, fmt.Errorf("saving a snapshot: %w", err)
	}
	return n, f.Sync()
}

// raftStats returns the "raft" section of a's /v1/agent/self stats.
func (c *cluster) raftStats(ctx context.Context, a *agent) (map[string]string, error) {
	var self struct {
		Stats map[string]map[string]string `json:"stats"`
	}
	if err := c.getJSON(ctx, a, "/v1/agent/self", &self); err != nil {
		return nil, err
	}
	raft := self.Stats["raft"]
	if raft == nil {
		return nil, fmt.Errorf("%s: no raft stats", a.name)
	}
	return raft, nil
}

// logSize is the length of a's log so far, where the lines of what
// happens next start.
func logSize(a *agent) int64 {
	fi, err := os.Stat(filepath.Join(a.dir, "agent.log"))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logLinesFrom returns the lines of a's log after offset.
func logLinesFrom(a *agent, offset int64) ([]string, error) {
	f, err := os.Open(filepath.Join(a.dir, "agent.log"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// logLine is one line of an agent's log: its time and its key=value
// fields.
type logLine struct {
	at     time.Time
	fields map[string]string
}

// logTimeFormat is how the agent's logger stamps its lines.
const logTimeFormat = "2006-01-02T15:04:05.000Z0700"

// findLine returns the first line holding msg, parsed.
func findLine(lines []string, msg string) (logLine, bool) {
	for _, l := range lines {
		if !strings.Contains(l, msg) {
			continue
		}
		stamp, _, _ := strings.Cut(l, " ")
		at, err := time.Parse(logTimeFormat, stamp)
		if err != nil {
			continue
		}
		out := logLine{at: at, fields: map[string]string{}}
		for _, f := range strings.Fields(l) {
			if k, v, ok := strings.Cut(f, "="); ok {
				out.fields[k] = strings.Trim(v, `"`)
			}
		}
		return out, true
	}
	return logLine{}, false
}
