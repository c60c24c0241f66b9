package command

import (
	"encoding/json"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/servertest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestOperatorRaftOffline(t *testing.T) {
	dir := t.TempDir()
	cfg := servertest.Config("offline")
	cfg.DevMode = false
	cfg.DataDir = dir
	srv := servertest.Start(t, cfg)
	job := mock.Job()
	var reply structs.JobRegisterResponse
	must.NoError(t, srv.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reply))
	run := func(args ...string) cmdResult { return runCommand(t, "http://127.0.0.1:1", runOpts{}, args...) }

	// A running server's store is refused.
	res := run("operator", "raft", "info", dir)
	must.Eq(t, 1, res.code)
	must.StrContains(t, res.stderr, "in use by a running server; stop the server first")

	must.NoError(t, srv.Shutdown())

	res = run("operator", "raft", "info", dir)
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.StrContains(t, res.stdout, "Log Entries")
	must.StrContains(t, res.stdout, "Current Term")
	must.StrContains(t, res.stdout, "No snapshots")

	res = run("operator", "raft", "logs", dir)
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	var entries []map[string]interface{}
	must.NoError(t, json.Unmarshal([]byte(res.stdout), &entries))
	must.SliceNotEmpty(t, entries)
	var registerIndex float64
	for _, e := range entries {
		if e["MessageType"] == "JobRegister" {
			registerIndex = e["Index"].(float64)
		}
	}
	must.Positive(t, registerIndex)

	res = run("operator", "raft", "state", dir)
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	var dump struct {
		Index uint64
		Jobs  []struct{ ID string }
	}
	must.NoError(t, json.Unmarshal([]byte(res.stdout), &dump))
	must.Len(t, 1, dump.Jobs)
	must.Eq(t, job.ID, dump.Jobs[0].ID)

	res = run("operator", "raft", "state", "-last-index", "1", dir)
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.NoError(t, json.Unmarshal([]byte(res.stdout), &dump))
	must.Len(t, 0, dump.Jobs)

	for _, args := range [][]string{
		{"operator", "raft", "info"},
		{"operator", "raft", "logs", t.TempDir()},
		{"operator", "raft", "state", "/no/such/dir"},
	} {
		res := run(args...)
		must.Eq(t, 1, res.code, must.Sprintf("%v", args))
	}
}
