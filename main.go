// Command nomad is the single binary of the scheduler: agent (server and
// client) and command-line interface at once.
package main

import (
	"fmt"
	"os"

	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/version"
)

func main() {
	// A task supervisor is this same binary re-executed by a client; it
	// must take over before any CLI parsing happens.
	executor.Init()

	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Printf("Nomad v%s\n", version.String())
		return
	}
	fmt.Fprintln(os.Stderr, "usage: nomad version (the agent and CLI are not built yet)")
	os.Exit(1)
}
