package ui_test

import (
	"os"
	"testing"

	"github.com/opennomad/nomad/client/driver/executor"
)

func TestMain(m *testing.M) {
	// The dev agent's raw_exec tasks run under a supervisor that is this
	// test binary.
	executor.Init()
	os.Exit(m.Run())
}
