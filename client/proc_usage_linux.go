package client

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Linux reports CPU times in clock ticks of USER_HZ, which is 100 on
// every architecture Go supports there.
const clockTicksPerSecond = 100

// procUsage is one process's CPU time (seconds) and resident memory.
type procUsage struct {
	pid       int
	user, sys float64
	rss       uint64
}

// sessionUsage reads every process of session sid from /proc.
func sessionUsage(sid int) ([]procUsage, error) {
	return sessionUsageIn("/proc", sid)
}

// sessionUsageIn is sessionUsage over a /proc tree at dir, for tests.
func sessionUsageIn(dir string, sid int) ([]procUsage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	page := uint64(os.Getpagesize())
	var out []procUsage
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(dir + "/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		st, err := parseProcStat(b)
		if err != nil || st.session != sid {
			continue
		}
		out = append(out, procUsage{
			pid:  pid,
			user: float64(st.utime) / clockTicksPerSecond,
			sys:  float64(st.stime) / clockTicksPerSecond,
			rss:  st.rssPages * page,
		})
	}
	return out, nil
}

// procStat holds the fields of /proc/<pid>/stat that usage needs.
type procStat struct {
	session      int
	utime, stime uint64
	rssPages     uint64
}

// parseProcStat reads /proc/<pid>/stat. The command name (field 2) may
// contain spaces and parentheses, so fields are counted from the last
// ')'; the first field after it is field 3.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("malformed stat %q", b)
	}
	f := bytes.Fields(b[i+1:])
	// field n is f[n-3]: session 6, utime 14, stime 15, rss 24.
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("malformed stat %q", b)
	}
	num := func(n int) (uint64, error) { return strconv.ParseUint(string(f[n-3]), 10, 64) }
	var st procStat
	sid, err := strconv.Atoi(string(f[6-3]))
	if err != nil {
		return procStat{}, fmt.Errorf("malformed session in stat: %w", err)
	}
	st.session = sid
	if st.utime, err = num(14); err != nil {
		return procStat{}, fmt.Errorf("malformed utime in stat: %w", err)
	}
	if st.stime, err = num(15); err != nil {
		return procStat{}, fmt.Errorf("malformed stime in stat: %w", err)
	}
	rss, err := strconv.ParseInt(string(f[24-3]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed rss in stat: %w", err)
	}
	st.rssPages = uint64(max(rss, 0))
	return st, nil
}
