package command

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

func TestOperatorAutopilotCommands(t *testing.T) {
	ra := newRealAgent(t)
	run := func(args ...string) cmdResult { return runCommand(t, ra.Addr(), runOpts{}, args...) }

	res := run("operator", "autopilot", "get-config")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, `CleanupDeadServers      = true
LastContactThreshold    = 200ms
MaxTrailingLogs         = 250
MinQuorum               = 0
ServerStabilizationTime = 10s
EnableRedundancyZones   = false
DisableUpgradeMigration = false
EnableCustomUpgrades    = false
`, res.stdout)

	res = run("operator", "autopilot", "set-config", "-cleanup-dead-servers=false", "-min-quorum", "3",
		"-last-contact-threshold", "1s")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, "Configuration updated!\n", res.stdout)

	res = run("operator", "autopilot", "get-config", "-json")
	must.Eq(t, 0, res.code)
	var conf api.AutopilotConfiguration
	must.NoError(t, json.Unmarshal([]byte(res.stdout), &conf))
	must.False(t, conf.CleanupDeadServers)
	must.Eq(t, uint(3), conf.MinQuorum)
	must.Eq(t, time.Second, conf.LastContactThreshold)
	must.Eq(t, uint64(250), conf.MaxTrailingLogs, must.Sprint("settings not named keep their value"))

	res = run("operator", "autopilot", "health")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.StrContains(t, res.stdout, "Healthy          = true")
	must.StrContains(t, res.stdout, "FailureTolerance = 0")
	must.StrContains(t, res.stdout, "Serf Status")

	res = run("operator", "autopilot", "health", "-json")
	must.Eq(t, 0, res.code)
	var health api.OperatorHealthReply
	must.NoError(t, json.Unmarshal([]byte(res.stdout), &health))
	must.Len(t, 1, health.Servers)

	for _, args := range [][]string{
		{"operator", "autopilot", "set-config", "-last-contact-threshold", "soon"},
		{"operator", "autopilot", "set-config", "x"},
		{"operator", "autopilot", "get-config", "x"},
	} {
		res := run(args...)
		must.Eq(t, 1, res.code, must.Sprintf("%v", args))
	}
}

func TestOperatorRaftTransferLeadership(t *testing.T) {
	ra := newRealAgent(t)
	run := func(args ...string) cmdResult {
		return runCommand(t, ra.Addr(), runOpts{}, append([]string{"operator", "raft", "transfer-leadership"}, args...)...)
	}
	res := run("-peer-id", "nosuch")
	must.Eq(t, 1, res.code)
	must.StrContains(t, res.stderr, `Error transferring leadership to peer with id "nosuch"`)
	must.StrContains(t, res.stderr, `id "nosuch" was not found in the Raft configuration`)

	res = run("-peer-address", "10.9.9.9:4647")
	must.Eq(t, 1, res.code)
	must.StrContains(t, res.stderr, `address "10.9.9.9:4647" was not found`)

	for _, args := range [][]string{{}, {"-peer-id", "a", "-peer-address", "b"}, {"x"}} {
		res := run(args...)
		must.Eq(t, 1, res.code, must.Sprintf("%v", args))
	}
}
