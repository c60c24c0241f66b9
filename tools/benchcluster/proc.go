package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of CPU times in
// /proc/<pid>/stat: 100 on every Linux architecture Go supports.
const clockTicks = 100

// proc is one child process: an agent or the node simulator. It runs in
// its own process group, and the kernel kills it if this program dies
// first, so nothing it started outlives a benchmark.
type proc struct {
	name    string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// startProc runs bin with args, its output appended to logPath.
func startProc(name, logPath, bin string, args ...string) (*proc, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process ID, 0 once stopped.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// running reports whether the process has not exited.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends sig to the process group and waits up to grace for the
// exit, then SIGKILLs the group. It is safe to call more than once.
func (p *proc) kill(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd := p.cmd
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// waitLog waits until the process's log has a line containing want, the
// process exits, or ctx ends.
func (p *proc) waitLog(ctx context.Context, want string) (string, error) {
	for {
		if buf, err := os.ReadFile(p.logPath); err == nil {
			for _, line := range strings.Split(string(buf), "\n") {
				if strings.Contains(line, want) {
					return line, nil
				}
			}
		}
		if !p.running() {
			return "", fmt.Errorf("%s exited before logging %q; see %s", p.name, want, p.logPath)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%s did not log %q: %w", p.name, want, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// cpuTime returns the CPU time (user + system) process pid used so far.
func cpuTime(pid int) (time.Duration, error) {
	buf, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	return parseStatCPU(string(buf))
}

// cpuTimes returns the CPU time of each process.
func cpuTimes(pids []int) ([]time.Duration, error) {
	out := make([]time.Duration, len(pids))
	for i, pid := range pids {
		d, err := cpuTime(pid)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may hold spaces, so fields are counted after its closing one.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat line")
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state); utime is field 14.
	if len(fields) < 13 {
		return 0, errors.New("short /proc stat line")
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed /proc stat line: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
