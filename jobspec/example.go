package jobspec

import _ "embed"

// ExampleJobFileName is the file `job init` writes.
const ExampleJobFileName = "example.nomad.hcl"

//go:embed example.nomad.hcl
var exampleJob []byte

// ExampleJob returns the example job written by `job init`: a service job
// whose raw_exec task prints a greeting every ten seconds, runnable on a
// dev agent as is.
func ExampleJob() []byte {
	return append([]byte(nil), exampleJob...)
}
