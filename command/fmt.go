package command

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// FormatCommand rewrites HCL job and agent files in the canonical layout.
type FormatCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *FormatCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad fmt [options] [<path>...]

  Rewrite job specifications and agent configuration files (HCL2) in the
  canonical layout: aligned equals signs, two-space indentation, one
  blank line at most between items. A directory means its .nomad and
  .hcl files (those of its subdirectories too with -recursive); no path
  means the current directory. A single "-" reads standard input and
  writes the result to standard output.

  Files that do not parse are reported with every error and left alone.

Format Options:

  -check
    Change no file: exit with code 1 when a file is not in the canonical
    layout or does not parse. Overrides -write.

  -list=<bool>
    Print the name of each file whose layout differs. Default = true

  -recursive
    Also format the files of subdirectories.

  -write=<bool>
    Write the result back to the files. Default = true
`)
}

// Synopsis implements cli.Command.
func (c *FormatCommand) Synopsis() string {
	return "Rewrites Nomad config and job files to canonical format"
}

// Run implements cli.Command.
func (c *FormatCommand) Run(args []string) int {
	const name = "fmt"
	var check, recursive bool
	list, write := true, true
	fs := c.flagSet(name, flagsNone)
	fs.BoolVar(&check, "check", false, "")
	fs.BoolVar(&list, "list", true, "")
	fs.BoolVar(&recursive, "recursive", false, "")
	fs.BoolVar(&write, "write", true, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if check {
		write = false
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"."}
	}
	if len(paths) == 1 && paths[0] == "-" {
		return c.formatStdin(check)
	}
	files, err := hclFilesAt(paths, recursive)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	code := 0
	for _, f := range files {
		changed, err := formatFile(f, write)
		switch {
		case err != nil:
			c.Ui.Error(err.Error())
			code = 1
		case changed:
			if list {
				c.Ui.Output(f)
			}
			if check {
				code = 1
			}
		}
	}
	return code
}

// formatStdin formats standard input onto standard output.
func (c *FormatCommand) formatStdin(check bool) int {
	src, err := io.ReadAll(c.stdin())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading standard input: %s", err))
		return 1
	}
	out, err := formatHCL("<stdin>", src)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if check {
		if !bytes.Equal(src, out) {
			return 1
		}
		return 0
	}
	c.Ui.Output(strings.TrimSuffix(string(out), "\n"))
	return 0
}

// formatHCL returns src in the canonical layout, or every syntax error.
func formatHCL(name string, src []byte) ([]byte, error) {
	_, diags := hclwrite.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		lines := make([]string, 0, len(diags))
		for _, d := range diags {
			if d.Severity != hcl.DiagError {
				continue
			}
			msg := d.Summary
			if d.Detail != "" {
				msg += ": " + d.Detail
			}
			if d.Subject != nil {
				msg = fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg)
			}
			lines = append(lines, msg)
		}
		return nil, fmt.Errorf("Error parsing %s:\n  * %s", name, strings.Join(lines, "\n  * "))
	}
	return hclwrite.Format(src), nil
}

// formatFile formats one file, writing it back when write is set and it
// changed, and reports whether it changed.
func formatFile(path string, write bool) (bool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("Error reading %s: %w", path, err)
	}
	out, err := formatHCL(path, src)
	if err != nil {
		return false, err
	}
	if bytes.Equal(src, out) {
		return false, nil
	}
	if write {
		info, err := os.Stat(path)
		if err != nil {
			return true, fmt.Errorf("Error writing %s: %w", path, err)
		}
		if err := os.WriteFile(path, out, info.Mode().Perm()); err != nil {
			return true, fmt.Errorf("Error writing %s: %w", path, err)
		}
	}
	return true, nil
}

// hclFilesAt lists the files paths name: a file as given, a directory's
// .nomad and .hcl files (walking subdirectories with recursive), sorted
// per directory.
func hclFilesAt(paths []string, recursive bool) ([]string, error) {
	var out []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("Error reading %s: %w", p, err)
		}
		if !info.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && (!recursive || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if ext := filepath.Ext(path); ext == ".nomad" || ext == ".hcl" {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("Error reading %s: %w", p, err)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
