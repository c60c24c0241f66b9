package jobspec

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse measures parsing job files of increasing size: the
// example, a file using most blocks, and one with variables, locals and
// dynamic blocks.
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"example", "not_acted.nomad.hcl", "dynamic.nomad.hcl", "variables.nomad.hcl"} {
		src := ExampleJob()
		path := ExampleJobFileName
		if name != "example" {
			path = filepath.Join("testdata", name)
			var err error
			if src, err = os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(path, src, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
