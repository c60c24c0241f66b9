package agent

import (
	"os"
	"testing"

	"github.com/opennomad/nomad/client/driver/executor"
)

// TestMain lets this test binary act as the task supervisor of the
// raw_exec tasks its agents run.
func TestMain(m *testing.M) {
	executor.Init()
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}
