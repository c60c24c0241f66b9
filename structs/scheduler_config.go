package structs

import "fmt"

// Scheduler algorithms for the cluster-wide bin-packing choice.
const (
	SchedulerAlgorithmBinpack = "binpack"
	SchedulerAlgorithmSpread  = "spread"
)

// DefaultNodeLimitForFeasibilityChecks caps how many nodes are scored when
// a group has affinities or spreads and NodeLimitForFeasibilityChecks is 0.
const DefaultNodeLimitForFeasibilityChecks = 100

// DefaultEvalBacklogLimit is the EvalBacklogLimit of a new cluster. A
// healthy cluster drains its broker within seconds and holds hundreds of
// evals, rarely thousands; 100,000 is far above that (the largest
// end-to-end benchmark, 100,000 one-allocation jobs registered at once,
// reaches it only if scheduling stops altogether) yet bounds the broker
// and the evals table to some hundreds of megabytes, where the clusters
// that fell over held millions.
const DefaultEvalBacklogLimit = 100_000

// SchedulerConfiguration is the cluster-wide scheduler configuration,
// stored in Raft so every server schedules by the same rules.
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	// PauseEvalBroker stops the leader handing out evaluations; workers go
	// idle but writes continue to be accepted and queued.
	PauseEvalBroker               bool
	NodeLimitForFeasibilityChecks uint
	// EvalBacklogLimit bounds the evaluations a flood can make the leader
	// hold: once its broker's ready and blocked evals together pass it,
	// job registrations, dispatches and scalings that would add one are
	// refused with ErrBackpressure (HTTP 429) until the backlog drains.
	// 0 is no limit. Nomad has no such field.
	EvalBacklogLimit uint

	CreateIndex uint64
	ModifyIndex uint64
}

// PreemptionConfig enables preemption per scheduler type.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// DefaultSchedulerConfiguration is what a new cluster starts with.
func DefaultSchedulerConfiguration() *SchedulerConfiguration {
	return &SchedulerConfiguration{
		SchedulerAlgorithm: SchedulerAlgorithmBinpack,
		PreemptionConfig:   PreemptionConfig{SystemSchedulerEnabled: true},
		EvalBacklogLimit:   DefaultEvalBacklogLimit,
	}
}

// EffectiveSchedulerAlgorithm returns the algorithm, binpack when unset.
func (s *SchedulerConfiguration) EffectiveSchedulerAlgorithm() string {
	if s == nil || s.SchedulerAlgorithm == "" {
		return SchedulerAlgorithmBinpack
	}
	return s.SchedulerAlgorithm
}

// NodeLimit is the number of nodes scored for groups with affinities or
// spreads.
func (s *SchedulerConfiguration) NodeLimit() int {
	if s == nil || s.NodeLimitForFeasibilityChecks == 0 {
		return DefaultNodeLimitForFeasibilityChecks
	}
	return int(s.NodeLimitForFeasibilityChecks)
}

// PreemptionEnabled reports whether jobs of the type may preempt.
func (s *SchedulerConfiguration) PreemptionEnabled(jobType string) bool {
	if s == nil {
		return jobType == JobTypeSystem
	}
	switch jobType {
	case JobTypeSystem:
		return s.PreemptionConfig.SystemSchedulerEnabled
	case JobTypeSysBatch:
		return s.PreemptionConfig.SysBatchSchedulerEnabled
	case JobTypeBatch:
		return s.PreemptionConfig.BatchSchedulerEnabled
	case JobTypeService:
		return s.PreemptionConfig.ServiceSchedulerEnabled
	}
	return false
}

// Validate rejects unknown algorithms.
func (s *SchedulerConfiguration) Validate() error {
	switch s.SchedulerAlgorithm {
	case "", SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread:
		return nil
	}
	return fmt.Errorf("invalid scheduler algorithm: %s", s.SchedulerAlgorithm)
}

// Indexes returns the Raft indexes of the configuration's first and last
// writes.
func (s *SchedulerConfiguration) Indexes() (create, modify uint64) {
	return s.CreateIndex, s.ModifyIndex
}

// SetIndexes stamps the configuration with the indexes of its writes.
func (s *SchedulerConfiguration) SetIndexes(create, modify uint64) {
	s.CreateIndex, s.ModifyIndex = create, modify
}

// Copy returns a copy.
func (s *SchedulerConfiguration) Copy() *SchedulerConfiguration {
	if s == nil {
		return nil
	}
	n := *s
	return &n
}
