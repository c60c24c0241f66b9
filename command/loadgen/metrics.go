package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProcMemory is a process's resident memory from /proc/<pid>/status:
// the current (VmRSS) and the peak over its life (VmHWM), in bytes.
type ProcMemory struct {
	RSS, Peak int64
}

// ReadProcMemory reads the memory of process pid (Linux only).
func ReadProcMemory(pid int) (ProcMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcMemory{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	defer f.Close()
	return parseProcStatus(f)
}

// parseProcStatus reads VmRSS and VmHWM ("VmHWM:    123456 kB").
func parseProcStatus(r io.Reader) (ProcMemory, error) {
	var m ProcMemory
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return m, fmt.Errorf("unexpected %s line %q", key, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("unexpected %s line %q: %w", key, sc.Text(), err)
		}
		if key == "VmRSS" {
			m.RSS = kb << 10
		} else {
			m.Peak = kb << 10
		}
	}
	return m, sc.Err()
}

// counterTotal follows a cumulative counter across scrapes of several
// servers. The first scrape of a server is its baseline. The Prometheus
// sink drops series idle for a minute and starts them again at zero, so a
// series that appears later, or reads below its previous value, counts
// from zero.
type counterTotal struct {
	mu     sync.Mutex
	last   map[string]map[string]float64
	total  float64
	failed int
}

// observe takes one scrape of server's series.
func (c *counterTotal) observe(server string, values map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]map[string]float64{}
	}
	prev, baselined := c.last[server]
	if baselined {
		for series, v := range values {
			if p, ok := prev[series]; ok && v >= p {
				c.total += v - p
			} else {
				c.total += v
			}
		}
	}
	c.last[server] = values
}

// fail counts a scrape that did not work.
func (c *counterTotal) fail() {
	c.mu.Lock()
	c.failed++
	c.mu.Unlock()
}

// planRejections follows nomad.plan.node_rejected on every server.
type planRejections struct {
	client    *http.Client
	addresses []string
	counter   counterTotal
}

// scrape reads the counter from every server once.
func (p *planRejections) scrape(ctx context.Context) {
	for _, addr := range p.addresses {
		values, err := scrapeCounter(ctx, p.client, addr, "plan_node_rejected")
		if err != nil {
			if ctx.Err() == nil {
				p.counter.fail()
			}
			continue
		}
		p.counter.observe(addr, values)
	}
}

// follow scrapes every interval until ctx ends, so no series expires
// unseen.
func (p *planRejections) follow(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.scrape(ctx)
		}
	}
}

// total returns the rejections counted and whether every scrape worked.
func (p *planRejections) total() (float64, bool) {
	p.counter.mu.Lock()
	defer p.counter.mu.Unlock()
	return p.counter.total, p.counter.failed == 0
}

// scrapeCounter reads /v1/metrics?format=prometheus of one agent and
// returns the series whose metric name ends with suffix, keyed by their
// name and labels.
func scrapeCounter(ctx context.Context, client *http.Client, address, suffix string) (map[string]float64, error) {
	if !strings.Contains(address, "://") {
		address = "http://" + address
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(address, "/")+"/v1/metrics?format=prometheus", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading metrics of %s: %w", address, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading metrics of %s: %s", address, resp.Status)
	}
	return parsePrometheus(resp.Body, suffix)
}

// parsePrometheus picks the samples of metrics named *suffix out of the
// Prometheus text format: "name{labels} value [timestamp]".
func parsePrometheus(r io.Reader, suffix string) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		series := line
		if i := strings.LastIndex(line, "}"); i >= 0 {
			series = line[:i+1]
		} else if i := strings.IndexByte(line, ' '); i >= 0 {
			series = line[:i]
		}
		name, _, _ := strings.Cut(series, "{")
		if !strings.HasSuffix(name, suffix) {
			continue
		}
		fields := strings.Fields(line[len(series):])
		if len(fields) == 0 {
			return nil, fmt.Errorf("metric line without a value: %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metric line %q: %w", line, err)
		}
		out[series] = v
	}
	return out, sc.Err()
}
