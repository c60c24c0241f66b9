package evaltrace

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// tick is a clock that moves a millisecond per reading.
func tick() func() time.Time {
	n := 0
	return func() time.Time { n++; return t0.Add(time.Duration(n) * time.Millisecond) }
}

func TestTrace_RecordsInOrder(t *testing.T) {
	tr := New(10, 10, tick())
	tr.Record("e1", StageEnqueued, "")
	tr.Record("e1", StageDequeued, "worker w1")
	tr.Record("e2", StageEnqueued, "")
	tr.Record("e1", StageAcked, "")
	got := tr.Events("e1")
	must.Len(t, 3, got)
	must.Eq(t, []string{StageEnqueued, StageDequeued, StageAcked}, []string{got[0].Stage, got[1].Stage, got[2].Stage})
	must.Eq(t, t0.Add(1*time.Millisecond), got[0].Time)
	must.Eq(t, t0.Add(4*time.Millisecond), got[2].Time)
	must.Eq(t, "worker w1", got[1].Detail)
	must.Nil(t, tr.Events("unknown"))

	// The copy is the caller's.
	got[0].Stage = "changed"
	must.Eq(t, StageEnqueued, tr.Events("e1")[0].Stage)
}

func TestTrace_Bounds(t *testing.T) {
	cases := []struct {
		name               string
		maxEvals, maxEvent int
		evals, perEval     int
		wantLen            int
		wantFirstKept      string // the oldest eval still held
		wantEvents         int    // events of the newest eval
	}{
		{"under both bounds", 5, 5, 3, 2, 3, "e0", 2},
		{"the oldest evals are forgotten", 3, 5, 5, 1, 3, "e2", 1},
		{"an eval keeps its newest events", 5, 3, 1, 7, 1, "e0", 3},
		{"the ring wraps more than once", 2, 2, 7, 1, 2, "e5", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := New(c.maxEvals, c.maxEvent, tick())
			for i := 0; i < c.evals; i++ {
				for j := 0; j < c.perEval; j++ {
					tr.Record(fmt.Sprintf("e%d", i), StageNacked, fmt.Sprint(j))
				}
			}
			must.Eq(t, c.wantLen, tr.Len())
			must.NotNil(t, tr.Events(c.wantFirstKept))
			newest := tr.Events(fmt.Sprintf("e%d", c.evals-1))
			must.Len(t, c.wantEvents, newest)
			// The newest events are the ones kept.
			must.Eq(t, fmt.Sprint(c.perEval-1), newest[len(newest)-1].Detail)
		})
	}
}

func TestTrace_NilAndEmptyID(t *testing.T) {
	var tr *Trace
	tr.Record("e", StageEnqueued, "")
	must.Nil(t, tr.Events("e"))
	tr = New(1, 1, tick())
	tr.Record("", StageEnqueued, "")
	must.Eq(t, 0, tr.Len())
}

func BenchmarkRecord(b *testing.B) {
	tr := New(DefaultEvals, DefaultEventsPerEval, time.Now)
	ids := make([]string, 50000)
	for i := range ids {
		ids[i] = fmt.Sprintf("eval-%d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tr.Record(ids[i%len(ids)], StageDequeued, "w")
		i++
	}
}
