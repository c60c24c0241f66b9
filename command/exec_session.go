package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opennomad/nomad/api"
)

// execTerminal is what the operator asked of the local side of an exec
// session (alloc exec, job action): whether to send stdin (-i), run on a
// pseudo-terminal (-t), and the escape character (-e).
type execTerminal struct {
	stdin    io.Reader
	stdinTTY bool
	input    bool
	tty      bool
	escape   string
}

// execTerminalFlags registers -i, -t and -e on fs for a session reading
// stdin; -t defaults to whether stdin is a terminal.
func execTerminalFlags(fs *flag.FlagSet, stdin io.Reader) *execTerminal {
	t := &execTerminal{stdin: stdin, stdinTTY: isTerminal(stdin)}
	fs.BoolVar(&t.input, "i", true, "")
	fs.BoolVar(&t.tty, "t", t.stdinTTY, "")
	fs.StringVar(&t.escape, "e", "~", "")
	return t
}

// escapeOK says whether -e is "none" or a single character.
func (t *execTerminal) escapeOK() bool { return t.escape == "none" || len(t.escape) == 1 }

// runExec wires the local terminal to the session exec starts: stdin
// only with -i, raw mode and size updates only when -t runs on a real
// terminal, the escape sequence only with -t. It returns the exit code
// the command should end with: the remote one, 0 when the operator left
// with the escape sequence, 1 on error.
func (m *Meta) runExec(t *execTerminal, exec func(in io.Reader, sizes <-chan api.TerminalSize) (int, error)) int {
	var in io.Reader = strings.NewReader("")
	if t.input {
		in = t.stdin
	}
	var sizes <-chan api.TerminalSize
	if t.tty {
		if f, ok := t.stdin.(*os.File); ok && t.stdinTTY {
			restore, err := makeRaw(f)
			if err != nil {
				m.Ui.Error(fmt.Sprintf("Failed to set the terminal to raw mode: %v", err))
				return 1
			}
			defer restore()
			sizes = watchTerminalSize(m.Ctx, f)
		}
		if t.escape != "none" {
			in = newEscapeReader(in, t.escape[0])
		}
	}
	code, err := exec(in, sizes)
	if err != nil {
		if errors.Is(err, errEscapeExit) {
			return 0
		}
		m.Ui.Error(fmt.Sprintf("failed to exec into task: %v", m.describe(err)))
		return 1
	}
	return code
}
