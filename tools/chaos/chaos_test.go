package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// nomadBin is the binary the short run starts, built by TestMain.
var nomadBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	nomadBin = filepath.Join(dir, "nomad")
	build := exec.Command("go", "build", "-o", nomadBin, ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building nomad: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// A short chaos run: three servers, two leader kills and a follower
// kill, a stall, a partition of the leader, the flaky nodes gone and
// back, a server's clock jump, and (as root) a full Raft disk, under
// load; every invariant is
// checked and holds.
func TestShortRun(t *testing.T) {
	o := &options{
		bin: nomadBin, servers: 3, seed: 1,
		sched:    scheduleConfig{Kills: 3, Partitions: 1, Stops: 1, Flaps: 1, ClockJumps: 1, FlapHold: 12 * time.Second},
		duration: 5 * time.Minute, nodes: 6, flakyNodes: 2, workers: 2, settle: 60 * time.Second,
	}
	want := map[faultKind]int{killLeader: 2, killFollower: 1, stopServer: 1, partitionLeader: 1, nodeFlap: 1, clockJump: 1}
	if os.Geteuid() == 0 {
		// Root can mount the tmpfs the full-disk fault fills.
		o.sched.FullDisks = 1
		want[fullDisk] = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out strings.Builder
	res, err := runChaos(ctx, o, &out)
	if res != nil {
		res.print(&out)
	}
	t.Log(out.String())
	must.NoError(t, err)

	must.Eq(t, want, res.injected)
	for _, inv := range invariants {
		must.Positive(t, res.verdict.checked[inv], must.Sprintf("invariant %q never checked", inv))
	}
	must.SliceEmpty(t, res.verdict.violations)
	must.Positive(t, res.ops["register"][0])
}
