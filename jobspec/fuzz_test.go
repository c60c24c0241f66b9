package jobspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fuzzEvalTime replaces MaxEvalTime in FuzzParse. The step budget, not
// the clock, must stop every input: with a clock this generous (the step
// budget is a fraction of a second of work), an input that still runs
// out of time has found work the steps do not count.
const fuzzEvalTime = time.Minute

// FuzzParse checks that no input makes the parser panic or overflow its
// stack: bad input comes back as an error, and an input over a limit as
// a *LimitError of the right kind. A job it accepts can be canonicalized.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.nomad.hcl"))
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add(ExampleJob())
	// Inputs at the limits, so that mutations explore both sides.
	f.Add([]byte(job(deep("[", "1", "]", MaxNestingDepth))))
	f.Add([]byte(job("length([for a in range(100) : [for b in range(100) : [for c in range(100) : c]]])")))
	f.Fuzz(func(t *testing.T, src []byte) {
		lim := defaultLimits
		lim.time = fuzzEvalTime
		res, err := Parse("fuzz.nomad.hcl", src, Options{ArgVars: []string{"count=2"}, limits: &lim})
		if err != nil {
			if res != nil {
				t.Fatalf("Parse returned a result and an error: %v", err)
			}
			var limit *LimitError
			if !errors.As(err, &limit) {
				return
			}
			switch limit.Kind {
			case LimitTime:
				t.Fatalf("evaluation ran out of time, not steps: %v", err)
			case LimitSize:
				if len(src) <= MaxSourceBytes {
					t.Fatalf("a %d-byte input refused for its size: %v", len(src), err)
				}
			}
			if strings.TrimSpace(limit.Error()) == "" {
				t.Fatal("a limit error without a message")
			}
			return
		}
		if len(src) > MaxSourceBytes {
			t.Fatalf("a %d-byte input was accepted", len(src))
		}
		if res == nil || res.Job == nil {
			t.Fatal("Parse returned neither a job nor an error")
		}
		res.Job.Canonicalize()
	})
}
