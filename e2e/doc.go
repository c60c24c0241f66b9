// Package e2e holds end-to-end tests: they build the nomad binary once
// and run real agent processes on 127.0.0.1 with free ports, talking to
// them only as users do, over the HTTP API and the CLI.
package e2e
