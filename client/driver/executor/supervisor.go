//go:build unix

package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/opennomad/nomad/client/driver/cgroup"
	"github.com/opennomad/nomad/client/logmon"
)

// drainTimeout bounds how long the supervisor keeps reading output after
// the task exited: a grandchild that escaped the kill could otherwise hold
// the pipe open forever.
const drainTimeout = 2 * time.Second

// supervise is the supervisor's main. Its stdout and stderr are the
// executor.log of the task's state directory; fd 3 is the handshake pipe.
// It returns the process exit code.
func supervise(specPath string) int {
	// The task's parent-death signal fires when the thread that started
	// it exits, not the process; keep this goroutine on one thread for
	// the supervisor's whole life.
	runtime.LockOSThread()

	// The handshake pipe must not leak into the task.
	syscall.CloseOnExec(3)
	hs := os.NewFile(3, "handshake")
	logf := func(format string, args ...interface{}) {
		fmt.Fprintf(os.Stderr, "%s executor: %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
	}
	fail := func(err error) int {
		logf("%v", err)
		json.NewEncoder(hs).Encode(handshake{Error: err.Error()})
		hs.Close()
		return 1
	}

	b, err := os.ReadFile(specPath)
	if err != nil {
		return fail(fmt.Errorf("reading spec: %w", err))
	}
	var spec Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fail(fmt.Errorf("decoding spec %s: %w", specPath, err))
	}
	dir := filepath.Dir(specPath)

	// Signals aimed at the supervisor (a terminal's, a stray kill) must
	// not end it while the task runs. They are handled, not ignored: an
	// ignored disposition would be inherited by the task and make it deaf
	// to its kill signal.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			logf("ignoring %v", s)
		}
	}()

	out, err := openOutputs(&spec)
	if err != nil {
		return fail(err)
	}

	cmd := &exec.Cmd{
		Path: spec.Command,
		Args: append([]string{spec.Command}, spec.Args...),
		Env:  spec.Env,
		Dir:  spec.Dir,
	}
	if out != nil {
		cmd.Stdout, cmd.Stderr = out.stdoutW, out.stderrW
	}
	var cgroupFD *os.File
	if spec.Cgroup != "" {
		cgroupFD, err = os.Open(spec.Cgroup)
		if err != nil {
			return fail(fmt.Errorf("opening cgroup: %w", err))
		}
	}
	cmd.SysProcAttr = taskSysProcAttr(&spec, cgroupFD)
	// The task is started from this goroutine, on the thread that holds
	// its mounts.
	if err := enterTaskMounts(&spec); err != nil {
		if spec.Cgroup != "" {
			cgroup.Remove(spec.Cgroup)
		}
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		if spec.Cgroup != "" {
			cgroup.Remove(spec.Cgroup)
		}
		return fail(fmt.Errorf("starting %s: %w", spec.Command, err))
	}
	if cgroupFD != nil {
		cgroupFD.Close()
	}
	pid := cmd.Process.Pid
	start, _ := startTicks(pid)
	if out != nil {
		out.startCopying()
	}
	logf("started task pid %d", pid)

	if err := json.NewEncoder(hs).Encode(handshake{PID: pid, Start: start}); err != nil {
		// The client died while launching: nobody knows about this task,
		// so it must not run.
		logf("client gone before the handshake (%v); killing the task", err)
		killTask(pid, spec.Cgroup)
		cmd.Wait()
		return 1
	}
	hs.Close()

	state, werr := cmd.Process.Wait()
	res := Result{ExitedAt: time.Now().UTC()}
	switch {
	case werr != nil:
		res.ExitCode, res.Error = -1, werr.Error()
	default:
		res.ExitCode, res.Signal = exitStatus(state)
	}
	// What the task started in its group (or cgroup) ends with it.
	killTask(pid, spec.Cgroup)
	if spec.Cgroup != "" {
		res.OOMKilled = cgroup.OOMKilled(spec.Cgroup)
	}
	if out != nil {
		out.drain(drainTimeout)
	}
	if err := writeJSONAtomic(filepath.Join(dir, resultFile), &res); err != nil {
		logf("recording the exit: %v", err)
		return 1
	}
	if spec.Cgroup != "" {
		if err := cgroup.Remove(spec.Cgroup); err != nil {
			logf("%v", err)
		}
	}
	logf("task pid %d exited: code %d signal %d oom %v", pid, res.ExitCode, res.Signal, res.OOMKilled)
	return 0
}

// exitStatus converts a wait status into an exit code and signal. A task
// killed by a signal reports 128+signal as its code, as shells do.
func exitStatus(state *os.ProcessState) (code, sig int) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok {
		return state.ExitCode(), 0
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return ws.ExitStatus(), 0
}

// killTask kills what remains of the task: its process group, and its
// cgroup when it has one.
func killTask(pid int, cgroupDir string) {
	syscall.Kill(-pid, syscall.SIGKILL)
	if cgroupDir != "" {
		cgroup.Kill(cgroupDir)
	}
}

// outputs connects the task's stdout and stderr to log rotators.
type outputs struct {
	stdoutW, stderrW *os.File
	readers          []*os.File
	rotators         []*logmon.FileRotator
	wg               sync.WaitGroup
}

func openOutputs(spec *Spec) (*outputs, error) {
	if spec.LogsDisabled {
		return nil, nil
	}
	o := &outputs{}
	for _, stream := range []string{"stdout", "stderr"} {
		rot, err := logmon.NewFileRotator(spec.LogDir, spec.TaskName+"."+stream, spec.MaxFiles, spec.MaxFileSize)
		if err != nil {
			o.close()
			return nil, err
		}
		r, w, err := os.Pipe()
		if err != nil {
			rot.Close()
			o.close()
			return nil, fmt.Errorf("creating %s pipe: %w", stream, err)
		}
		o.rotators = append(o.rotators, rot)
		o.readers = append(o.readers, r)
		if stream == "stdout" {
			o.stdoutW = w
		} else {
			o.stderrW = w
		}
	}
	return o, nil
}

// startCopying closes the supervisor's copies of the write ends (the task
// holds its own) and pumps both pipes into the rotators.
func (o *outputs) startCopying() {
	o.stdoutW.Close()
	o.stderrW.Close()
	for i := range o.readers {
		o.wg.Add(1)
		go func(r io.Reader, w io.Writer) {
			defer o.wg.Done()
			io.Copy(w, r)
		}(o.readers[i], o.rotators[i])
	}
}

// drain waits for the pipes to reach end of file, at most timeout, then
// closes everything.
func (o *outputs) drain(timeout time.Duration) {
	done := make(chan struct{})
	go func() { o.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
	}
	o.close()
}

func (o *outputs) close() {
	for _, r := range o.readers {
		r.Close()
	}
	for _, r := range o.rotators {
		r.Close()
	}
}

// errSupervisorGone is returned for a supervisor that vanished.
var errSupervisorGone = errors.New("executor process is gone")
