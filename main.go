// Command nomad is the single binary of the scheduler: agent (server and
// client) and command-line interface at once.
package main

import (
	"os"

	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/command"
)

func main() {
	// A task supervisor is this same binary re-executed by a client; it
	// must take over before any CLI parsing happens.
	executor.Init()

	os.Exit(command.Main(os.Args[1:]))
}
