package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestOperator_SchedulerConfig(t *testing.T) {
	s := testStore(t)
	idx, cfg, err := s.SchedulerConfig(nil)
	must.NoError(t, err)
	must.Nil(t, cfg)
	must.Eq(t, 0, idx)

	must.NoError(t, s.SchedulerSetConfig(5, structs.DefaultSchedulerConfiguration()))
	idx, cfg, _ = s.SchedulerConfig(nil)
	must.Eq(t, 5, idx)
	must.Eq(t, 5, cfg.CreateIndex)
	must.Eq(t, structs.SchedulerAlgorithmBinpack, cfg.SchedulerAlgorithm)

	spread := &structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread}
	cases := []struct {
		name    string
		index   uint64
		cas     uint64
		applied bool
	}{
		{"stale index", 6, 4, false},
		{"zero means never written", 7, 0, false},
		{"current index", 8, 5, true},
		{"now stale", 9, 5, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			applied, err := s.SchedulerCASConfig(tc.index, tc.cas, spread.Copy())
			must.NoError(t, err)
			must.Eq(t, tc.applied, applied)
		})
	}
	idx, cfg, _ = s.SchedulerConfig(nil)
	must.Eq(t, 8, idx)
	must.Eq(t, 5, cfg.CreateIndex)
	must.Eq(t, structs.SchedulerAlgorithmSpread, cfg.SchedulerAlgorithm)

	err = s.SchedulerSetConfig(10, &structs.SchedulerConfiguration{SchedulerAlgorithm: "roulette"})
	must.ErrorContains(t, err, "invalid scheduler algorithm: roulette")
	idx, _, _ = s.SchedulerConfig(nil)
	must.Eq(t, 8, idx)
}

func TestOperator_SchedulerCASOnEmpty(t *testing.T) {
	s := testStore(t)
	applied, err := s.SchedulerCASConfig(3, 0, structs.DefaultSchedulerConfiguration())
	must.NoError(t, err)
	must.True(t, applied)
}

func TestOperator_ClusterMetadata(t *testing.T) {
	s := testStore(t)
	none, err := s.ClusterMetadata(nil)
	must.NoError(t, err)
	must.Nil(t, none)

	meta := &structs.ClusterMetadata{ClusterID: "c1", CreateTime: 7}
	must.NoError(t, s.ClusterSetMetadata(1, meta))
	must.NoError(t, s.ClusterSetMetadata(2, &structs.ClusterMetadata{ClusterID: "c1", CreateTime: 8}))
	got, _ := s.ClusterMetadata(nil)
	must.Eq(t, *meta, *got)
	must.ErrorContains(t, s.ClusterSetMetadata(3, &structs.ClusterMetadata{ClusterID: "c2"}), `already has ID "c1"`)
	must.ErrorContains(t, s.ClusterSetMetadata(3, &structs.ClusterMetadata{}), "ClusterID is required")
}
