package agent

import (
	"context"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkAllocExec runs short commands in a raw_exec task of a real dev
// agent through Nomad's api package, one after the other, as a code
// runner such as Poseidon does: a websocket per exec, `echo`, exit code.
// It reports execs per second and the time to the first output byte
// (p50, p99).
func BenchmarkAllocExec(b *testing.B) {
	ra, alloc := startClientAgentRunning(b, "raw_exec",
		map[string]interface{}{"command": "/bin/sleep", "args": []interface{}{"3600"}}, nil)
	c := execClient(b, ra)
	apiAlloc, _, err := c.Allocations().Info(alloc.ID, nil)
	if err != nil {
		b.Fatal(err)
	}
	var firstByte []time.Duration
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		w := &firstByteWriter{start: time.Now()}
		code, err := c.Allocations().Exec(context.Background(), apiAlloc, "web", false,
			[]string{"/bin/echo", "hi"}, strings.NewReader(""), w, io.Discard, nil, nil)
		if err != nil || code != 0 {
			b.Fatalf("exec: code %d, %v", code, err)
		}
		firstByte = append(firstByte, w.first)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(firstByte, func(i, j int) bool { return firstByte[i] < firstByte[j] })
	b.ReportMetric(float64(len(firstByte))/elapsed.Seconds(), "execs/s")
	b.ReportMetric(float64(firstByte[len(firstByte)/2].Microseconds())/1000, "first-byte-p50-ms")
	b.ReportMetric(float64(firstByte[len(firstByte)*99/100].Microseconds())/1000, "first-byte-p99-ms")
}

// firstByteWriter notes when its first byte arrives after start.
type firstByteWriter struct {
	start time.Time
	once  sync.Once
	first time.Duration
}

func (w *firstByteWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { w.first = time.Since(w.start) })
	return len(p), nil
}
