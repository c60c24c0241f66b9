package command

import (
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/version"
)

func TestEveryCommandHasHelpAndSynopsis(t *testing.T) {
	for name, factory := range Commands(Meta{}) {
		cmd, err := factory()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		help := cmd.Help()
		target := name
		if full, alias := topLevelAliases[name]; alias {
			target = full
		}
		if !strings.HasPrefix(help, "Usage: nomad "+target) {
			t.Errorf("%s: help does not start with its usage line:\n%s", name, help)
		}
		if cmd.Synopsis() == "" {
			t.Errorf("%s: no synopsis", name)
		}
		// Commands that talk to an agent document the common flags.
		if strings.Contains(help, "-address") != strings.Contains(help, "General Options:") {
			t.Errorf("%s: -address without the General Options block", name)
		}
	}
}

func TestDispatch(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
		outHas   []string
		errHas   []string
		outNot   []string
	}{
		{name: "version", args: []string{"version"}, outHas: []string{"Nomad v" + version.String()}},
		{name: "-version", args: []string{"-version"}, outHas: []string{"Nomad v"}},
		{name: "-v", args: []string{"-v"}, outHas: []string{"Nomad v"}},
		{name: "version takes no arguments", args: []string{"version", "x"}, wantCode: 1, errHas: []string{"no arguments"}},
		{name: "no command prints help and exits 1", args: nil, wantCode: 1,
			errHas: []string{"Usage: nomad [-version] [-help] <command> [args]", "    job ", "    operator "}},
		{name: "-help lists the top-level commands but not the aliases", args: []string{"-help"},
			outHas: []string{"Commands:", "    alloc ", "    eval ", "    job ", "    node ", "    server ", "    system ", "    version "}},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 127, errHas: []string{"Usage: nomad"}},
		{name: "a group prints its subcommands", args: []string{"operator", "scheduler"}, wantCode: 1,
			errHas: []string{"Usage: nomad operator scheduler <subcommand>", "Subcommands:", "get-config", "set-config", "workers"}},
		{name: "command help", args: []string{"job", "run", "-help"},
			outHas: []string{"Usage: nomad job run [options] <path>", "Exit codes:", "-check-index=<index>", "General Options:"}},
		{name: "alias help is the command's", args: []string{"run", "-h"}, outHas: []string{"Usage: nomad job run"}},
		{name: "workers help documents every flag", args: []string{"operator", "scheduler", "workers", "-help"},
			outHas: []string{"-pause", "-resume", "-num=<n>", "-schedulers=<list>", "WaitingToDequeue"}},
		{name: "set-config help documents every flag", args: []string{"operator", "scheduler", "set-config", "-help"},
			outHas: []string{"-check-index", "-scheduler-algorithm", "-memory-oversubscription", "-reject-job-registration",
				"-pause-eval-broker", "-preempt-batch-scheduler", "-preempt-service-scheduler",
				"-preempt-sysbatch-scheduler", "-preempt-system-scheduler"}},
		{name: "drain help documents every flag", args: []string{"node", "drain", "-help"},
			outHas: []string{"-enable", "-disable", "-deadline", "-force", "-no-deadline", "-ignore-system",
				"-keep-ineligible", "-detach", "-monitor", "-m=", "-meta", "-self", "-yes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, "http://127.0.0.1:1", runOpts{}, tc.args...)
			if res.code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstdout:%s\nstderr:%s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			for _, s := range tc.outHas {
				if !strings.Contains(res.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, res.stdout)
				}
			}
			for _, s := range tc.errHas {
				if !strings.Contains(res.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, res.stderr)
				}
			}
		})
	}
	res := runCommand(t, "http://127.0.0.1:1", runOpts{}, "-help")
	for alias := range topLevelAliases {
		if strings.Contains(res.stdout, "    "+alias+" ") {
			t.Errorf("alias %q is listed in the help", alias)
		}
	}
}

// TestOddArgumentsNeverPanic runs every command with argument lists a
// user might fumble into, against a populated agent: each must end with
// an exit code and a message, never a panic.
func TestOddArgumentsNeverPanic(t *testing.T) {
	// `job init` with an odd argument writes a file of that name.
	t.Chdir(t.TempDir())
	f := newFakeAgent(t)
	twoNodesOneAlloc(t, f)
	odd := [][]string{
		nil, {""}, {"-"}, {"x", "y", "z"}, {"-json"}, {"-t", "{{"}, {"-verbose", "ffff"},
		{"-json", "-t", "x"}, {"--", "web"}, {"web"}, {"aaaa0001"}, {node1}, {"-self"}, {"-enable", "-disable"},
		{"-num", "x"}, {"-deadline", ""}, {"-check-index", "-1"},
	}
	for name := range Commands(Meta{}) {
		for _, args := range odd {
			words := append(strings.Fields(name), args...)
			res := runCommand(t, f.Addr(), runOpts{stdin: "", timeout: 2 * time.Second}, words...)
			if res.code != 0 && res.stderr == "" && res.stdout == "" {
				t.Errorf("nomad %s: exit %d without a word of explanation", strings.Join(words, " "), res.code)
			}
		}
	}
}
