//go:build unix

package driver

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
)

// signals names the signals a task may be sent (kill_signal, `alloc
// signal`). The set is the one every supported Unix has.
var signals = map[string]syscall.Signal{
	"SIGABRT":   syscall.SIGABRT,
	"SIGALRM":   syscall.SIGALRM,
	"SIGBUS":    syscall.SIGBUS,
	"SIGCHLD":   syscall.SIGCHLD,
	"SIGCONT":   syscall.SIGCONT,
	"SIGFPE":    syscall.SIGFPE,
	"SIGHUP":    syscall.SIGHUP,
	"SIGILL":    syscall.SIGILL,
	"SIGINT":    syscall.SIGINT,
	"SIGIO":     syscall.SIGIO,
	"SIGKILL":   syscall.SIGKILL,
	"SIGPIPE":   syscall.SIGPIPE,
	"SIGPROF":   syscall.SIGPROF,
	"SIGQUIT":   syscall.SIGQUIT,
	"SIGSEGV":   syscall.SIGSEGV,
	"SIGSTOP":   syscall.SIGSTOP,
	"SIGSYS":    syscall.SIGSYS,
	"SIGTERM":   syscall.SIGTERM,
	"SIGTRAP":   syscall.SIGTRAP,
	"SIGTSTP":   syscall.SIGTSTP,
	"SIGTTIN":   syscall.SIGTTIN,
	"SIGTTOU":   syscall.SIGTTOU,
	"SIGURG":    syscall.SIGURG,
	"SIGUSR1":   syscall.SIGUSR1,
	"SIGUSR2":   syscall.SIGUSR2,
	"SIGVTALRM": syscall.SIGVTALRM,
	"SIGWINCH":  syscall.SIGWINCH,
	"SIGXCPU":   syscall.SIGXCPU,
	"SIGXFSZ":   syscall.SIGXFSZ,
}

// DefaultKillSignal is sent to a task being stopped when the task names
// no kill_signal.
const DefaultKillSignal = "SIGINT"

// ParseSignal resolves a signal name ("SIGTERM", "sigterm" or "TERM").
// An empty name is DefaultKillSignal.
func ParseSignal(name string) (syscall.Signal, error) {
	if name == "" {
		name = DefaultKillSignal
	}
	n := strings.ToUpper(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "SIG") {
		n = "SIG" + n
	}
	s, ok := signals[n]
	if !ok {
		return 0, fmt.Errorf("unknown signal %q", name)
	}
	return s, nil
}

// SignalNames lists the supported signal names, sorted; the client
// reports them as the os.signals node attribute.
func SignalNames() []string {
	out := make([]string, 0, len(signals))
	for n := range signals {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
