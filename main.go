// Command nomad is the single binary of the scheduler: agent (server and
// client) and command-line interface at once.
package main

import (
	"os"

	"github.com/opennomad/nomad/command"
)

func main() {
	os.Exit(command.Main(os.Args[1:]))
}
