package executor

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// startTicks returns the start time of a process in clock ticks since
// boot (field 22 of /proc/<pid>/stat). Together with the pid it names a
// process unambiguously: a recycled pid has a different start time.
func startTicks(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	st, err := parseStat(b)
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	return st.start, nil
}

type procStat struct {
	state byte
	start uint64
}

// parseStat reads the state and start time out of /proc/<pid>/stat. The
// command name (field 2) is in parentheses and may itself contain spaces
// and parentheses, so fields are counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("malformed stat %q", b)
	}
	fields := bytes.Fields(b[i+1:])
	// fields[0] is field 3 (state); field 22 (starttime) is fields[19].
	if len(fields) < 20 || len(fields[0]) != 1 {
		return procStat{}, fmt.Errorf("malformed stat %q", b)
	}
	start, err := strconv.ParseUint(string(fields[19]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed start time in stat: %w", err)
	}
	return procStat{state: fields[0][0], start: start}, nil
}

// alive reports whether pid is still the process that started at start
// and has not exited. A zombie (exited, not yet reaped) counts as exited.
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st, err := parseStat(b)
	if err != nil {
		return false
	}
	return st.start == start && st.state != 'Z' && st.state != 'X'
}
