package jobspec

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes the parser panic: bad input must
// come back as an error.
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
		res, err := Parse("fuzz.nomad.hcl", src, Options{ArgVars: []string{"count=2"}})
		if err == nil {
			res.Job.Canonicalize()
		}
	})
}
