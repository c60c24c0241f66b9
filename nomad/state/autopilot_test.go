package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestAutopilotConfig_SetAndCAS(t *testing.T) {
	s := testStore(t)
	idx, cfg, err := s.AutopilotConfig(nil)
	must.NoError(t, err)
	must.Nil(t, cfg)
	must.Eq(t, uint64(0), idx)

	applied, err := s.AutopilotCASConfig(3, 0, structs.DefaultAutopilotConfig())
	must.NoError(t, err)
	must.True(t, applied, must.Sprint("CAS on 0 writes when none was ever written"))

	changed := structs.DefaultAutopilotConfig()
	changed.MinQuorum = 3
	cases := []struct {
		name    string
		index   uint64
		cas     uint64
		applied bool
	}{
		{"stale index refused", 5, 1, false},
		{"none-yet refused once written", 6, 0, false},
		{"current index applies", 7, 3, true},
	}
	for _, tc := range cases {
		applied, err := s.AutopilotCASConfig(tc.index, tc.cas, changed)
		must.NoError(t, err, must.Sprint(tc.name))
		must.Eq(t, tc.applied, applied, must.Sprint(tc.name))
	}
	idx, cfg, err = s.AutopilotConfig(nil)
	must.NoError(t, err)
	must.Eq(t, uint64(7), idx)
	must.Eq(t, uint64(3), cfg.CreateIndex)
	must.Eq(t, uint(3), cfg.MinQuorum)

	bad := structs.DefaultAutopilotConfig()
	bad.LastContactThreshold = -time.Second
	must.ErrorContains(t, s.AutopilotSetConfig(9, bad), "LastContactThreshold must be >= 0")
	idx, _, _ = s.AutopilotConfig(nil)
	must.Eq(t, uint64(7), idx, must.Sprint("a refused write changes nothing"))
}
