package command

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// AllocFSCommand reads an allocation's directory on its client: lists a
// directory, describes a file, or prints a file (or its end).
type AllocFSCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AllocFSCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad alloc fs [options] <allocation> [<path>]

  Read the directory of an allocation (by ID or unique prefix) on the
  client that runs it: a directory is listed, a file printed. <path> is
  relative to the allocation directory; the default is its root "/".

  When ACLs are enabled, this command needs the 'read-fs' capability in
  the allocation's namespace.

` + generalOptionsUsage() + `

FS Specific Options:

  -H
    Print sizes in bytes instead of human-readable units.

  -verbose
    Show full IDs.

  -job
    Take <allocation> as a job ID and read a running allocation of it.

  -stat
    Describe the file or directory instead of printing or listing it.

  -tail
    Print the end of the file: -c bytes, or -n lines.

  -n <lines>
    With -tail, the number of lines to print. Default = 10

  -c <bytes>
    With -tail, the number of bytes to print (wins over -n).

  -f
    Follow the file as it grows. Not supported by this server.
`)
}

// Synopsis implements cli.Command.
func (c *AllocFSCommand) Synopsis() string { return "Inspect the contents of an allocation directory" }

// Run implements cli.Command.
func (c *AllocFSCommand) Run(args []string) int {
	const name = "alloc fs"
	var machine, verbose, job, stat, tail, follow bool
	var lines, numBytes int64
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&machine, "H", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&job, "job", false, "")
	fs.BoolVar(&stat, "stat", false, "")
	fs.BoolVar(&tail, "tail", false, "")
	fs.BoolVar(&follow, "f", false, "")
	fs.Int64Var(&lines, "n", 10, "")
	fs.Int64Var(&numBytes, "c", -1, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	switch {
	case fs.NArg() < 1 || fs.NArg() > 2:
		return c.usageError(name, "This command takes one or two arguments: <allocation> [<path>]")
	case follow:
		c.Ui.Error("The -f option is not supported by this server: files are read once")
		return 1
	case tail && lines <= 0 && numBytes <= 0:
		return c.usageError(name, "-n and -c must be positive")
	}
	path := "/"
	if fs.NArg() == 2 {
		path = fs.Arg(1)
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	var alloc *api.Allocation
	var err error
	if job {
		alloc, err = (&AllocExecCommand{Meta: c.Meta}).execAlloc(client, fs.Arg(0), true, "")
	} else {
		alloc, err = resolveAlloc(&c.Meta, client, fs.Arg(0), length)
	}
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	info, _, err := client.AllocFS().Stat(alloc, path, c.query())
	if c.callFailed(err, "reading file info") {
		return 1
	}
	if stat {
		c.Ui.Output(formatFileInfos([]*api.AllocFileInfo{info}, machine))
		return 0
	}
	if info.IsDir {
		files, _, err := client.AllocFS().List(alloc, path, c.query())
		if c.callFailed(err, "listing directory") {
			return 1
		}
		if len(files) == 0 {
			c.Ui.Output(fmt.Sprintf("Empty directory %q", path))
			return 0
		}
		c.Ui.Output(formatFileInfos(files, machine))
		return 0
	}
	return c.printFile(client, alloc, path, info.Size, tail, lines, numBytes)
}

// printFile prints the file, or with tail its last numBytes bytes (when
// set) or last lines.
func (c *AllocFSCommand) printFile(client *api.Client, alloc *api.Allocation, path string, size int64, tail bool, lines, numBytes int64) int {
	var body io.ReadCloser
	var err error
	switch {
	case !tail:
		body, err = client.AllocFS().Cat(alloc, path, c.query())
	case numBytes > 0:
		off := max(size-numBytes, 0)
		body, err = client.AllocFS().ReadAt(alloc, path, off, size-off, c.query())
	default:
		body, err = client.AllocFS().Cat(alloc, path, c.query())
	}
	if c.callFailed(err, "reading file") {
		return 1
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if c.callFailed(err, "reading file") {
		return 1
	}
	if tail && numBytes <= 0 {
		data = lastNLines(data, lines)
	}
	if _, err := rawOutput(c.Ui).Write(data); err != nil {
		c.Ui.Error(fmt.Sprintf("Error writing output: %s", err))
		return 1
	}
	return 0
}

// lastNLines keeps the last n lines of data (a final newline does not
// start a line).
func lastNLines(data []byte, n int64) []byte {
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			n--
			if n == 0 {
				return data[i+1:]
			}
		}
	}
	return data
}

// formatFileInfos renders files as `Mode|Size|Modified Time|Name`, a
// directory's name ending in "/".
func formatFileInfos(files []*api.AllocFileInfo, machine bool) string {
	rows := []string{"Mode|Size|Modified Time|Name"}
	for _, f := range files {
		name := f.Name
		if f.IsDir {
			name += "/"
		}
		size := strconv.FormatInt(f.Size, 10)
		if !machine {
			size = humanBytes(f.Size)
		}
		rows = append(rows, strings.Join([]string{f.FileMode, size, formatTime(f.ModTime), name}, "|"))
	}
	return formatList(rows)
}

// humanBytes renders a size in B, KiB, MiB, GiB or TiB.
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	var unit string
	for _, unit = range units {
		v /= 1024
		if v < 1024 {
			break
		}
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}
