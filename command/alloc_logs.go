package command

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/api"
)

// defaultTailLines is how many lines -tail shows without -n or -c.
const defaultTailLines = 10

// AllocLogsCommand prints, and with -f follows, a task's output.
type AllocLogsCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AllocLogsCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad alloc logs [options] <allocation> [<task>]

  Print the stdout (or with -stderr the stderr) of a task of an allocation
  (by ID or unique prefix), as the client running it kept it. The task may
  be left out when the allocation has a single task.

` + generalOptionsUsage() + `

Alloc Logs Options:

  -stderr
    Show the task's stderr instead of its stdout.

  -task <task>
    The task whose logs to show; wins over the <task> argument.

  -f
    Follow: keep printing output as the task writes it, until interrupted.

  -tail
    Show the end of the log: the last 10 lines unless -n or -c says
    otherwise.

  -n <lines>
    With -tail, the number of lines to show.

  -c <bytes>
    With -tail, the number of bytes to show.

  -verbose
    Show full IDs in messages.
`)
}

// Synopsis implements cli.Command.
func (c *AllocLogsCommand) Synopsis() string { return "Streams the logs of a task." }

// Run implements cli.Command.
func (c *AllocLogsCommand) Run(args []string) int {
	const name = "alloc logs"
	var stderr, follow, tail, verbose bool
	var task string
	var lines, bytesN int64
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&stderr, "stderr", false, "")
	fs.BoolVar(&follow, "f", false, "")
	fs.BoolVar(&tail, "tail", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.StringVar(&task, "task", "", "")
	fs.Int64Var(&lines, "n", -1, "")
	fs.Int64Var(&bytesN, "c", -1, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return c.usageError(name, "This command takes one or two arguments: <allocation> [<task>]")
	}
	if lines >= 0 && bytesN >= 0 {
		return c.usageError(name, "Both -n and -c are set; use one")
	}
	if (lines >= 0 || bytesN >= 0) && !tail {
		return c.usageError(name, "-n and -c apply to -tail only")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	alloc, err := resolveAlloc(&c.Meta, client, fs.Arg(0), length)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if task == "" {
		task = fs.Arg(1)
	}
	if task, err = logTask(alloc, task, length); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	logType := "stdout"
	if stderr {
		logType = "stderr"
	}
	l := &logStream{meta: &c.Meta, client: client, alloc: alloc, task: task, logType: logType, out: rawOutput(c.Ui)}

	origin, offset := api.OriginStart, int64(0)
	if tail {
		origin = api.OriginEnd
		switch {
		case bytesN >= 0:
			offset = bytesN
		default:
			if lines < 0 {
				lines = defaultTailLines
			}
			if offset, err = l.tailOffset(lines); err != nil {
				c.Ui.Error(l.failure(err))
				return 1
			}
		}
	}
	if err := l.stream(follow, origin, offset); err != nil {
		c.Ui.Error(l.failure(err))
		return 1
	}
	return 0
}

// logTask picks the task to show: the one named, or the allocation's
// only task.
func logTask(alloc *api.Allocation, task string, length int) (string, error) {
	var tasks []string
	if alloc.Job != nil {
		for _, tg := range alloc.Job.TaskGroups {
			if tg.Name != nil && *tg.Name == alloc.TaskGroup {
				for _, t := range tg.Tasks {
					tasks = append(tasks, t.Name)
				}
			}
		}
	}
	if len(tasks) == 0 {
		for name := range alloc.TaskStates {
			tasks = append(tasks, name)
		}
	}
	sort.Strings(tasks)
	if task != "" {
		for _, t := range tasks {
			if t == task {
				return task, nil
			}
		}
		return "", fmt.Errorf("Could not find task named: %s. Valid tasks are: %s", task, strings.Join(tasks, ", "))
	}
	if len(tasks) == 1 {
		return tasks[0], nil
	}
	return "", fmt.Errorf("Allocation %q is running the following tasks:\n  * %s\n\nPlease select the task to view its logs.",
		limit(alloc.ID, length), strings.Join(tasks, "\n  * "))
}

// logStream reads one task log through the API.
type logStream struct {
	meta    *Meta
	client  *api.Client
	alloc   *api.Allocation
	task    string
	logType string
	out     io.Writer
}

// stream prints the log from origin+offset; with follow it keeps going
// until the command is interrupted.
func (l *logStream) stream(follow bool, origin string, offset int64) error {
	ctx := l.meta.ctx()
	frames, errs := l.client.AllocFS().Logs(l.alloc, follow, l.task, l.logType, origin, offset, ctx.Done(), l.meta.query().WithContext(ctx))
	if frames == nil {
		return <-errs
	}
	for f := range frames {
		if len(f.Data) > 0 {
			if _, err := l.out.Write(f.Data); err != nil {
				return err
			}
		}
	}
	select {
	case err := <-errs:
		return err
	default:
	}
	return nil
}

// tailOffset finds how many bytes from the end hold the last n lines: it
// reads ever larger ends of the log until they contain n full lines or
// the whole log.
func (l *logStream) tailOffset(n int64) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	for window := n * 128; ; window *= 4 {
		data, err := l.read(api.OriginEnd, window)
		if err != nil {
			return 0, err
		}
		if off, ok := lastLines(data, n); ok || int64(len(data)) < window {
			return off, nil
		}
	}
}

// read returns the log's bytes from origin+offset to its current end.
func (l *logStream) read(origin string, offset int64) ([]byte, error) {
	var buf bytes.Buffer
	saved := l.out
	l.out = &buf
	defer func() { l.out = saved }()
	err := l.stream(false, origin, offset)
	return buf.Bytes(), err
}

// lastLines returns the length of the suffix of data holding its last n
// lines (a final line without a newline counts), and whether data held
// that many; otherwise all of data.
func lastLines(data []byte, n int64) (int64, bool) {
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end-- // the newline ending the last line
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			if n--; n == 0 {
				return int64(len(data) - i - 1), true
			}
		}
	}
	return int64(len(data)), false
}

// failure words a log error for the user.
func (l *logStream) failure(err error) string {
	if errors.Is(err, l.meta.ctx().Err()) && l.meta.ctx().Err() != nil {
		return "Interrupted"
	}
	return fmt.Sprintf("Error reading the %s log of task %q: %s", l.logType, l.task, l.meta.describe(err))
}

// rawOutput is where log bytes go: the Ui's own writer, so output is
// passed through as written (Ui.Output would add a newline per chunk).
func rawOutput(ui cli.Ui) io.Writer {
	switch u := ui.(type) {
	case *cli.BasicUi:
		return u.Writer
	case *cli.MockUi:
		return u.OutputWriter
	}
	return uiWriter{ui}
}

// uiWriter writes through Ui.Output for Uis of other kinds.
type uiWriter struct{ ui cli.Ui }

func (w uiWriter) Write(p []byte) (int, error) {
	w.ui.Output(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
