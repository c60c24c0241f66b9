package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of CPU times in
// /proc/<pid>/stat: 100 on every Linux architecture Go supports.
const clockTicks = 100

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
