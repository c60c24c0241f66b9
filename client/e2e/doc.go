// Package e2e holds the client's end-to-end tests: they build the nomad
// binary, start real agents on 127.0.0.1 and drive them through the CLI
// and the HTTP API, checking the processes tasks leave on the machine.
// The package has no code of its own.
package e2e
