package fingerprint

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// cpuInfo is what /proc/cpuinfo tells about the processors.
type cpuInfo struct {
	ModelName string
	// MHz is the reported clock of the first processor; 0 when the
	// kernel does not report one (most ARM machines).
	MHz   float64
	Cores int
}

// parseCPUInfo reads /proc/cpuinfo: one block per logical processor,
// "key : value" lines.
func parseCPUInfo(r io.Reader) (cpuInfo, error) {
	var ci cpuInfo
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			ci.Cores++
		case "model name", "Processor", "cpu model":
			if ci.ModelName == "" {
				ci.ModelName = v
			}
		case "cpu MHz", "clock":
			if ci.MHz == 0 {
				f, err := strconv.ParseFloat(strings.TrimSuffix(v, "MHz"), 64)
				if err == nil {
					ci.MHz = f
				}
			}
		}
	}
	return ci, sc.Err()
}

// parseMemTotal returns MemTotal of /proc/meminfo in bytes.
func parseMemTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("MemTotal %q: %w", fields[1], err)
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no MemTotal line")
}

// parseOSRelease returns ID and VERSION_ID of an os-release file.
func parseOSRelease(r io.Reader) (id, version string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "ID":
			id = v
		case "VERSION_ID":
			version = v
		}
	}
	return id, version
}

// parseDefaultRouteIface returns the interface of the IPv4 default route
// (destination 0.0.0.0 with the lowest metric) in /proc/net/route.
func parseDefaultRouteIface(r io.Reader) string {
	sc := bufio.NewScanner(r)
	best, bestMetric := "", -1
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[1] != "00000000" || f[7] != "00000000" {
			continue
		}
		metric, err := strconv.Atoi(f[6])
		if err != nil {
			continue
		}
		if bestMetric < 0 || metric < bestMetric {
			best, bestMetric = f[0], metric
		}
	}
	return best
}

// routeHexIP decodes an address of /proc/net/route (little-endian hex).
func routeHexIP(s string) (net.IP, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return nil, fmt.Errorf("bad route address %q", s)
	}
	return net.IPv4(b[3], b[2], b[1], b[0]), nil
}

// mountSource returns the device of the mount holding path: the entry of
// /proc/self/mountinfo with the longest mount point that is a prefix of
// path.
func mountSource(mountinfo io.Reader, path string) string {
	sc := bufio.NewScanner(mountinfo)
	best, bestLen := "", -1
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		left, right := strings.Fields(pre), strings.Fields(post)
		if len(left) < 5 || len(right) < 2 {
			continue
		}
		mp := left[4]
		if !pathUnder(path, mp) || len(mp) <= bestLen {
			continue
		}
		best, bestLen = right[1], len(mp)
	}
	return best
}

// pathUnder reports whether path is mount point mp or inside it.
func pathUnder(path, mp string) bool {
	if mp == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == mp || strings.HasPrefix(path, mp+"/")
}
