package periodic

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkPlanLaunches measures one dispatcher pass over 1,000 periodic
// templates, none of them due.
func BenchmarkPlanLaunches(b *testing.B) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	s, err := state.NewStateStore(nil)
	if err != nil {
		b.Fatal(err)
	}
	err = s.WithWriteTxn(2, func(tx *state.Txn) error {
		for i := 0; i < 1000; i++ {
			j := mock.BatchJob(mock.JobID(fmt.Sprintf("report-%04d", i)))
			j.Periodic = &structs.PeriodicConfig{Enabled: true, SpecType: structs.PeriodicSpecCron,
				Spec: fmt.Sprintf("%d */2 * * *", i%60), TimeZone: "Europe/Berlin"}
			j.SubmitTime = now.UnixNano()
			if err := tx.UpsertJob(j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	snap := &s.Snapshot().StateStore
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := planLaunches(snap, nil, now, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.launches) != 0 {
			b.Fatal("nothing is due")
		}
	}
}
