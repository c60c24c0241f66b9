package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// VarLockCommand runs a command while holding a variable's lock.
type VarLockCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *VarLockCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad var lock [options] <path> [<spec file>] <child command> [<args>...]
       nomad var lock [options] <spec file> <child command> [<args>...]

  Take the lock of the variable at the path (creating the variable if
  needed, with the items of the specification given as @<file> or "-"),
  run the child command while holding it, renewing it as the child runs,
  and release it when the child exits. If another caller holds the lock,
  wait for it. Needs variables write on the path.

` + generalOptionsUsage() + `

Lock Options:

  -ttl <duration>
    How long the lock lives without a renewal; 15s by default.

  -delay <duration>
    How long an expired lock keeps others out; 15s by default.

  -max-retry <n>
    How many times a failing lock call is tried; 5 by default.

  -backoff <duration>
    The pause between attempts to take a held lock; 1.1 TTLs by default.

  -shell
    Run the child command through "sh -c"; true by default.

  -verbose
    Say what the command does with the lock.
`)
}

// Synopsis implements cli.Command.
func (c *VarLockCommand) Synopsis() string { return "Run a command while holding a variable's lock" }

// Run implements cli.Command.
func (c *VarLockCommand) Run(args []string) int {
	const name = "var lock"
	var ttl, delay, backoff time.Duration
	var maxRetry int64
	var shell, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.DurationVar(&ttl, "ttl", api.DefaultLockTTL, "")
	fs.DurationVar(&delay, "delay", api.DefaultLockDelay, "")
	fs.DurationVar(&backoff, "backoff", 0, "")
	fs.Int64Var(&maxRetry, "max-retry", 5, "")
	fs.BoolVar(&shell, "shell", true, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	rest := fs.Args()
	v := &api.Variable{}
	switch {
	case len(rest) > 0 && isVarSpecRef(rest[0]):
		spec, err := readVarSpec(c.stdin(), rest[0], varOutHCL)
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error parsing variable specification: %s", err))
			return 1
		}
		v, rest = spec, rest[1:]
	case len(rest) > 0:
		v.Path, rest = rest[0], rest[1:]
		if len(rest) > 0 && isVarSpecRef(rest[0]) {
			spec, err := readVarSpec(c.stdin(), rest[0], varOutHCL)
			if err != nil {
				c.Ui.Error(fmt.Sprintf("Error parsing variable specification: %s", err))
				return 1
			}
			spec.Path = v.Path
			v, rest = spec, rest[1:]
		}
	}
	if v.Path == "" || len(rest) == 0 {
		return c.usageError(name, "This command takes a path (or specification) and a child command")
	}
	if ns := c.clientConfig().Namespace; ns != "" {
		v.Namespace = ns
	}
	v.Lock = &api.VariableLock{TTL: ttl.String(), LockDelay: delay.String()}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	locks, err := client.Locks(*c.write(), *v, api.LocksOptionWithMaxRetries(maxRetry))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error initializing lock handler: %s", err))
		return 1
	}
	var opts []api.LockLeaserOption
	if backoff > 0 {
		opts = append(opts, api.LockLeaserOptionWithWaitPeriod(backoff))
	}
	leaser := client.NewLockLeaser(locks, opts...)

	var childErr error
	if verbose {
		c.Ui.Output(fmt.Sprintf("Attempting to acquire lock on %q", v.Path))
	}
	err = leaser.Start(c.ctx(), func(ctx context.Context) error {
		if verbose {
			c.Ui.Output(fmt.Sprintf("Lock acquired on %q; running the child command", v.Path))
		}
		childErr = c.runChild(ctx, rest, shell)
		return nil
	})
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error holding the lock: %s", err))
		return 1
	}
	if childErr != nil {
		c.Ui.Error(fmt.Sprintf("Child command failed: %s", childErr))
		return 1
	}
	if verbose {
		c.Ui.Output(fmt.Sprintf("Lock on %q released", v.Path))
	}
	return 0
}

// runChild runs the command, its output passed through; ctx ending (the
// lock lost, or the user's interrupt) kills it.
func (c *VarLockCommand) runChild(ctx context.Context, argv []string, shell bool) error {
	var cmd *exec.Cmd
	if shell {
		cmd = exec.CommandContext(ctx, "sh", "-c", strings.Join(argv, " "))
	} else {
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.stdin(), os.Stdout, os.Stderr
	err := cmd.Run()
	if ctx.Err() != nil && err != nil {
		return errors.New("the lock was lost or the command interrupted; the child was stopped")
	}
	return err
}
