package fsm

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestFSM_AutopilotConfig(t *testing.T) {
	f, _ := newTestFSM(t)
	cfg := structs.DefaultAutopilotConfig()

	must.Eq[interface{}](t, true, applyEntry(t, f, 10, structs.AutopilotRequestType,
		&structs.AutopilotSetConfigRequest{Config: *cfg, CAS: true}))
	// CAS with a stale index is not applied, and that is not an error.
	cfg.CleanupDeadServers = false
	cfg.ModifyIndex = 3
	must.Eq[interface{}](t, false, applyEntry(t, f, 11, structs.AutopilotRequestType,
		&structs.AutopilotSetConfigRequest{Config: *cfg, CAS: true}))
	cfg.ModifyIndex = 10
	must.Eq[interface{}](t, true, applyEntry(t, f, 12, structs.AutopilotRequestType,
		&structs.AutopilotSetConfigRequest{Config: *cfg, CAS: true}))
	// A plain write always applies.
	cfg.MinQuorum = 3
	must.Eq[interface{}](t, true, applyEntry(t, f, 13, structs.AutopilotRequestType,
		&structs.AutopilotSetConfigRequest{Config: *cfg}))
	_, got, _ := f.State().AutopilotConfig(nil)
	must.False(t, got.CleanupDeadServers)
	must.Eq(t, uint(3), got.MinQuorum)
	must.Eq(t, 13, got.ModifyIndex)
	must.Eq(t, 10, got.CreateIndex)

	bad := *cfg
	bad.ServerStabilizationTime = -time.Second
	mustFail(t, f, 14, structs.AutopilotRequestType, &structs.AutopilotSetConfigRequest{Config: bad})
}
