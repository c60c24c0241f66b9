package structs_test

import (
	"testing"

	"github.com/opennomad/nomad/structs"
)

func TestSchedulerConfiguration(t *testing.T) {
	def := structs.DefaultSchedulerConfiguration()
	if def.EffectiveSchedulerAlgorithm() != "binpack" || def.NodeLimit() != 100 || def.MemoryOversubscriptionEnabled ||
		def.RejectJobRegistration || def.PauseEvalBroker {
		t.Errorf("defaults %+v", def)
	}
	// Preemption is on by default for system jobs only.
	for typ, want := range map[string]bool{"system": true, "sysbatch": false, "batch": false, "service": false, "_core": false} {
		if got := def.PreemptionEnabled(typ); got != want {
			t.Errorf("default PreemptionEnabled(%s) = %v", typ, got)
		}
	}
	var unset *structs.SchedulerConfiguration
	if unset.EffectiveSchedulerAlgorithm() != "binpack" || unset.NodeLimit() != 100 || !unset.PreemptionEnabled("system") ||
		unset.PreemptionEnabled("service") || unset.Copy() != nil {
		t.Error("a missing configuration must behave as the default one")
	}
	c := &structs.SchedulerConfiguration{SchedulerAlgorithm: "spread", NodeLimitForFeasibilityChecks: 7,
		PreemptionConfig: structs.PreemptionConfig{ServiceSchedulerEnabled: true, BatchSchedulerEnabled: true, SysBatchSchedulerEnabled: true}}
	if c.EffectiveSchedulerAlgorithm() != "spread" || c.NodeLimit() != 7 || c.PreemptionEnabled("system") ||
		!c.PreemptionEnabled("service") || !c.PreemptionEnabled("batch") || !c.PreemptionEnabled("sysbatch") {
		t.Errorf("custom %+v", c)
	}
	for algo, ok := range map[string]bool{"": true, "binpack": true, "spread": true, "random": false} {
		err := (&structs.SchedulerConfiguration{SchedulerAlgorithm: algo}).Validate()
		if (err == nil) != ok {
			t.Errorf("Validate(%q) = %v", algo, err)
		}
		if !ok && err.Error() != "invalid scheduler algorithm: random" {
			t.Errorf("message %q", err)
		}
	}
}
