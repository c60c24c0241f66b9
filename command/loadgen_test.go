package command

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestLoadGenCommand_BadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"argument", []string{"loadgen", "x"}, "This command takes no arguments"},
		{"pid", []string{"loadgen", "-server-pids", "1,abc"}, `-server-pids: "abc" is not a process ID`},
		{"shape", []string{"loadgen", "-jobs", "0", "-type", "system", "-driver", "docker"},
			"jobs must be > 0"},
		{"flag", []string{"loadgen", "-jobs", "many"}, "Error parsing flags"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// No agent listens there: every case must fail before the
			// first request.
			res := runCommand(t, "http://127.0.0.1:1", runOpts{}, c.args...)
			must.Eq(t, 1, res.code)
			must.StrContains(t, res.stderr, c.want)
		})
	}
}

func TestSplitList(t *testing.T) {
	must.Eq(t, []string{"a", "b"}, splitList(" a, ,b,"))
	must.Nil(t, splitList(""))
}
