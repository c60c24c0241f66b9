package client

import (
	"context"
	"crypto/md5"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opennomad/nomad/client/taskrunner"
	"github.com/opennomad/nomad/structs"
)

// Checks of native services: the client probes each http or tcp check
// of a service it means to have registered, at the check's interval,
// and keeps the latest result per check for GET
// /v1/client/allocation/:id/checks. Results go when the service does.

// Check statuses and modes, as Nomad reports them.
const (
	CheckPending = "pending"
	CheckSuccess = "success"
	CheckFailure = "failure"

	CheckModeHealthiness = "healthiness"
	CheckModeReadiness   = "readiness"
)

// CheckResult is the latest result of one check; its JSON is Nomad's.
type CheckResult struct {
	ID         string
	Check      string
	Group      string
	Task       string
	Service    string
	Status     string
	StatusCode int
	Output     string
	Mode       string
	// Timestamp is when the result was taken, in Unix seconds.
	Timestamp int64
}

// checkSpec is one check as it runs: its definition and the address it
// probes.
type checkSpec struct {
	id      string
	group   string // the allocation's name, "<job>.<group>[<index>]"
	task    string
	service string
	check   structs.ServiceCheck
	addr    string
	port    int
}

// newCheckSpec builds the check of a service registration: the check's
// own port when it names one, otherwise the service's.
func newCheckSpec(a *structs.Allocation, t *structs.Task, s *structs.Service, r *structs.ServiceRegistration, chk *structs.ServiceCheck) checkSpec {
	spec := checkSpec{group: a.Name, service: r.ServiceName, check: *chk.Copy(), addr: r.Address, port: r.Port}
	if t != nil {
		spec.task = t.Name
	}
	if chk.PortLabel != "" && chk.PortLabel != s.PortLabel {
		alt := *s
		alt.PortLabel, alt.AddressMode = chk.PortLabel, chk.AddressMode
		_, spec.port = serviceAddress(a, nil, t, &alt)
	}
	// The ID only has to be stable and distinct per alloc, service and
	// check; a hash keeps it short and free of odd characters.
	h := md5.Sum([]byte(strings.Join([]string{a.ID, a.TaskGroup, spec.task, r.ID, chk.Name, chk.Type,
		chk.PortLabel, chk.Path}, "\x00")))
	spec.id = hex.EncodeToString(h[:])
	return spec
}

func (s checkSpec) mode() string {
	if s.check.OnUpdate == "ignore" {
		return CheckModeReadiness
	}
	return CheckModeHealthiness
}

func (s checkSpec) same(o checkSpec) bool {
	return s.id == o.id && s.addr == o.addr && s.port == o.port && s.check.Interval == o.check.Interval &&
		s.check.Timeout == o.check.Timeout && s.check.Method == o.check.Method && s.check.Protocol == o.check.Protocol
}

// checkRunner runs the checks of every allocation of the client.
type checkRunner struct {
	clock      taskrunner.Clock
	shutdownCh <-chan struct{}

	mu     sync.Mutex
	allocs map[string]map[string]*runningCheck
}

type runningCheck struct {
	spec   checkSpec
	stop   chan struct{}
	result CheckResult
}

func newCheckRunner(clock taskrunner.Clock, shutdownCh <-chan struct{}) *checkRunner {
	return &checkRunner{clock: clock, shutdownCh: shutdownCh, allocs: map[string]map[string]*runningCheck{}}
}

// set makes the allocation's running checks exactly specs: new ones
// start (pending), changed ones restart, missing ones stop and lose
// their results.
func (r *checkRunner) set(allocID string, specs []checkSpec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	current := r.allocs[allocID]
	next := make(map[string]*runningCheck, len(specs))
	for _, spec := range specs {
		if rc := current[spec.id]; rc != nil && rc.spec.same(spec) {
			next[spec.id] = rc
			delete(current, spec.id)
			continue
		}
		rc := &runningCheck{spec: spec, stop: make(chan struct{}), result: CheckResult{
			ID: spec.id, Check: spec.check.Name, Group: spec.group, Task: spec.task, Service: spec.service,
			Status: CheckPending, Mode: spec.mode(), Timestamp: r.clock.Now().Unix(),
		}}
		next[spec.id] = rc
		go r.loop(allocID, rc)
	}
	for _, rc := range current {
		close(rc.stop)
	}
	if len(next) == 0 {
		delete(r.allocs, allocID)
		return
	}
	r.allocs[allocID] = next
}

// results returns the latest result of each running check of the
// allocation, by check ID.
func (r *checkRunner) results(allocID string) map[string]CheckResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]CheckResult, len(r.allocs[allocID]))
	for id, rc := range r.allocs[allocID] {
		out[id] = rc.result
	}
	return out
}

// loop probes at the check's interval, the first time at once.
func (r *checkRunner) loop(allocID string, rc *runningCheck) {
	probe := newProber(rc.spec)
	for {
		res := probe.run(r.clock.Now())
		r.mu.Lock()
		if r.allocs[allocID][rc.spec.id] == rc {
			rc.result = res
		}
		r.mu.Unlock()
		select {
		case <-rc.stop:
			return
		case <-r.shutdownCh:
			return
		case <-r.clock.After(rc.spec.check.Interval):
		}
	}
}

// prober runs one check.
type prober struct {
	spec   checkSpec
	client *http.Client
}

func newProber(spec checkSpec) *prober {
	p := &prober{spec: spec}
	if spec.check.Type == structs.ServiceCheckHTTP {
		p.client = &http.Client{
			Transport: &http.Transport{
				TLSClientConfig:   &tls.Config{InsecureSkipVerify: spec.check.TLSSkipVerify}, //nolint:gosec // the job asked for it
				DisableKeepAlives: true,
			},
		}
	}
	return p
}

// run probes once, bounded by the check's timeout.
func (p *prober) run(now time.Time) CheckResult {
	s := p.spec
	res := CheckResult{ID: s.id, Check: s.check.Name, Group: s.group, Task: s.task, Service: s.service,
		Mode: s.mode(), Timestamp: now.Unix()}
	ctx, cancel := context.WithTimeout(context.Background(), s.check.Timeout)
	defer cancel()
	hostPort := net.JoinHostPort(s.addr, strconv.Itoa(s.port))
	switch s.check.Type {
	case structs.ServiceCheckTCP:
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", hostPort)
		if err != nil {
			res.Status, res.Output = CheckFailure, "nomad: "+err.Error()
			return res
		}
		_ = conn.Close()
		res.Status, res.Output = CheckSuccess, "nomad: tcp ok"
	case structs.ServiceCheckHTTP:
		code, err := p.http(ctx, hostPort)
		res.StatusCode = code
		switch {
		case err != nil:
			res.Status, res.Output = CheckFailure, "nomad: "+err.Error()
		case code >= 200 && code < 300:
			res.Status, res.Output = CheckSuccess, "nomad: http ok"
		default:
			res.Status, res.Output = CheckFailure, fmt.Sprintf("nomad: http status %d", code)
		}
	default:
		res.Status, res.Output = CheckFailure, fmt.Sprintf("nomad: check type %q is not supported", s.check.Type)
	}
	return res
}

func (p *prober) http(ctx context.Context, hostPort string) (int, error) {
	c := p.spec.check
	scheme := c.Protocol
	if scheme == "" {
		scheme = "http"
	}
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if c.Body != "" {
		body = strings.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, scheme+"://"+hostPort+c.Path, body)
	if err != nil {
		return 0, err
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// AllocChecks returns the latest result of each check of the
// allocation's native services, by check ID; none while no service of it
// is meant to be registered.
func (c *Client) AllocChecks(allocID string) (map[string]CheckResult, error) {
	if _, err := c.runner(allocID); err != nil {
		return nil, err
	}
	return c.checks.results(allocID), nil
}
