package nomad

import (
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"testing"

	metrics "github.com/hashicorp/go-metrics"
)

// batchSizes records, through the global go-metrics instance, how many
// entries Raft handed the FSM per ApplyBatch call
// (nomad.fsm.apply_batch_size) and how many of them shared a state
// transaction (nomad.fsm.apply_batch_entries), as histograms in powers
// of two.
type batchSizes struct {
	metrics.BlackholeSink
	mu     sync.Mutex
	calls  map[string]*[17]int // per metric, calls by bucket
	totals map[string]*[2]int  // per metric, calls and entries
}

// recordBatchSizes points the global go-metrics instance at a new
// batchSizes until the benchmark ends.
func recordBatchSizes(b *testing.B) *batchSizes {
	r := &batchSizes{calls: map[string]*[17]int{}, totals: map[string]*[2]int{}}
	cfg := metrics.DefaultConfig("nomad")
	cfg.EnableHostname = false
	cfg.EnableRuntimeMetrics = false
	if _, err := metrics.NewGlobal(cfg, r); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = metrics.NewGlobal(cfg, &metrics.BlackholeSink{}) })
	return r
}

func (r *batchSizes) AddSample(key []string, val float32) {
	r.AddSampleWithLabels(key, val, nil)
}

func (r *batchSizes) AddSampleWithLabels(key []string, val float32, _ []metrics.Label) {
	if len(key) < 2 || key[len(key)-2] != "fsm" {
		return
	}
	name := key[len(key)-1]
	if name != "apply_batch_size" && name != "apply_batch_entries" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls[name] == nil {
		r.calls[name] = new([17]int)
		r.totals[name] = new([2]int)
	}
	n := int(val)
	r.calls[name][min(bits.Len(uint(n)), 16)]++
	r.totals[name][0]++
	r.totals[name][1] += n
}

// report logs both histograms and reports the mean ApplyBatch size and
// the share of entries that shared a transaction.
func (r *batchSizes) report(b *testing.B) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sb strings.Builder
	for _, name := range []string{"apply_batch_size", "apply_batch_entries"} {
		h := r.calls[name]
		if h == nil {
			continue
		}
		fmt.Fprintf(&sb, "\n  %s: %d calls, %d entries:", name, r.totals[name][0], r.totals[name][1])
		for i, c := range h {
			if c > 0 && i > 0 {
				fmt.Fprintf(&sb, " [%d,%d):%d", 1<<(i-1), 1<<i, c)
			}
		}
	}
	if b.N > 1 {
		b.Logf("FSM batches%s", sb.String())
	}
	if t := r.totals["apply_batch_size"]; t != nil && t[0] > 0 {
		b.ReportMetric(float64(t[1])/float64(t[0]), "entries/ApplyBatch")
		if s := r.totals["apply_batch_entries"]; s != nil {
			b.ReportMetric(float64(s[1])/float64(t[1]), "sharedTxn/entry")
		}
	}
}
