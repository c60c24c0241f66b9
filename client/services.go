package client

import (
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/opennomad/nomad/client/allocrunner"
	"github.com/opennomad/nomad/client/taskenv"
	"github.com/opennomad/nomad/structs"
)

// Native service registration: while an allocation runs, its
// `provider = "nomad"` services are in the servers' catalog; group
// services while the allocation runs, task services while their task
// does. The client reconciles an allocation whenever its status or its
// job changes, against what it registered before, and retries what
// failed. The servers also drop an allocation's registrations once it is
// terminal, so a client that dies leaves none behind for long.

// serviceSync is the client's record of what it registered, and of the
// allocations whose registrations must be looked at again.
type serviceSync struct {
	mu sync.Mutex
	// registered holds, per alloc, the registrations the servers took.
	registered map[string]map[string]*structs.ServiceRegistration
	dirty      map[string]struct{}
	kick       chan struct{}
}

func newServiceSync() *serviceSync {
	return &serviceSync{
		registered: map[string]map[string]*structs.ServiceRegistration{},
		dirty:      map[string]struct{}{},
		kick:       make(chan struct{}, 1),
	}
}

// mark queues allocs for reconciliation.
func (s *serviceSync) mark(allocIDs ...string) {
	s.mu.Lock()
	for _, id := range allocIDs {
		s.dirty[id] = struct{}{}
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *serviceSync) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.dirty))
	for id := range s.dirty {
		out = append(out, id)
	}
	clear(s.dirty)
	return out
}

// serviceLoop reconciles marked allocations, backing off after a
// failure. It starts once the node is registered: the servers take
// registrations only from a node they know.
func (c *Client) serviceLoop() {
	defer c.loops.Done()
	select {
	case <-c.registered:
	case <-c.shutdownCh:
		return
	}
	// Allocations restored from before a restart re-register: the
	// record of what was registered did not survive it.
	c.markAllServices(c.allocs.Runners())
	failures := 0
	for {
		if failures > 0 {
			if !c.sleep(c.retryWait(failures)) {
				return
			}
		} else {
			select {
			case <-c.services.kick:
			case <-c.shutdownCh:
				return
			}
		}
		failed := false
		for _, id := range c.services.take() {
			if err := c.syncServices(id); err != nil {
				failed = true
				c.services.mark(id)
				c.logger.Warn("syncing service registrations failed", "alloc_id", id, "error", err)
			}
		}
		if failed {
			failures++
		} else {
			failures = 0
		}
	}
}

// syncServices brings one allocation's registrations in line with what
// it should have now.
func (c *Client) syncServices(allocID string) error {
	var want map[string]*structs.ServiceRegistration
	var checks []checkSpec
	if ar := c.allocs.Runner(allocID); ar != nil {
		want, checks = wantedServices(ar.Alloc(), c.Node(), c.cfg.Region)
	}
	// Checks follow the services: they run while their service is
	// meant to be registered, whether or not the servers took it yet.
	c.checks.set(allocID, checks)
	c.services.mu.Lock()
	have := c.services.registered[allocID]
	c.services.mu.Unlock()

	var upserts []*structs.ServiceRegistration
	for id, r := range want {
		if !r.Equal(have[id]) {
			upserts = append(upserts, r)
		}
	}
	node := c.Node()
	if len(upserts) > 0 {
		req := &structs.ServiceRegistrationUpsertRequest{Services: upserts,
			WriteRequest: structs.WriteRequest{Region: c.cfg.Region, AuthToken: node.SecretID}}
		var resp structs.GenericResponse
		if err := c.servers.call("ServiceRegistration.Upsert", req, &resp); err != nil {
			return err
		}
	}
	kept := make(map[string]*structs.ServiceRegistration, len(want))
	for id, r := range want {
		kept[id] = r
	}
	var errs error
	if len(want) == 0 && len(have) > 0 {
		// The alloc is done with every service: one call removes them.
		req := &structs.ServiceRegistrationDeleteByAllocIDsRequest{AllocIDs: []string{allocID},
			WriteRequest: structs.WriteRequest{Region: c.cfg.Region, AuthToken: node.SecretID}}
		var resp structs.GenericResponse
		if err := c.servers.call("ServiceRegistration.DeleteByAllocIDs", req, &resp); err != nil {
			return err
		}
		have = nil
	}
	for id, r := range have {
		if want[id] != nil {
			continue
		}
		req := &structs.ServiceRegistrationDeleteByIDRequest{ID: id, WriteRequest: structs.WriteRequest{
			Region: c.cfg.Region, Namespace: r.Namespace, AuthToken: node.SecretID}}
		var resp structs.GenericResponse
		err := c.servers.call("ServiceRegistration.DeleteByID", req, &resp)
		if err != nil && !structs.IsKind(structs.ClassifyError(err), structs.ErrNotFound) {
			// Keep it, to try again.
			kept[id] = r
			errs = err
		}
	}
	c.services.mu.Lock()
	if len(kept) == 0 {
		delete(c.services.registered, allocID)
	} else {
		c.services.registered[allocID] = kept
	}
	c.services.mu.Unlock()
	return errs
}

// wantedServices lists the registrations an allocation should have, as
// the client sees it: none once it is stopping or done, its group
// services while it runs, each task's services while that task runs.
func wantedServices(a *structs.Allocation, node *structs.Node, region string) (map[string]*structs.ServiceRegistration, []checkSpec) {
	w := &wanted{regs: map[string]*structs.ServiceRegistration{}}
	if a == nil || a.Job == nil || a.ServerTerminalStatus() || a.ClientTerminalStatus() {
		return w.regs, nil
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return w.regs, nil
	}
	if a.ClientStatus == structs.AllocClientStatusRunning {
		env := taskenv.New(taskenv.Params{Alloc: a, Node: node, Region: region})
		for _, s := range tg.Services {
			w.add(a, node, nil, s, "group-"+tg.Name, env)
		}
	}
	for _, t := range tg.Tasks {
		if ts := a.TaskStates[t.Name]; t == nil || ts == nil || ts.State != structs.TaskStateRunning {
			continue
		}
		env := taskenv.New(taskenv.Params{Alloc: a, Task: t, Node: node, Region: region})
		for _, s := range t.Services {
			w.add(a, node, t, s, t.Name, env)
		}
	}
	return w.regs, w.checks
}

// wanted gathers an allocation's registrations and the checks of their
// services.
type wanted struct {
	regs   map[string]*structs.ServiceRegistration
	checks []checkSpec
}

func (w *wanted) add(a *structs.Allocation, node *structs.Node, t *structs.Task, s *structs.Service, owner string, env *taskenv.Env) {
	if s == nil || s.Provider != structs.ServiceProviderNomad {
		return
	}
	name := env.Replace(s.Name)
	addr, port := serviceAddress(a, node, t, s)
	tags := make([]string, 0, len(s.Tags))
	for _, tag := range s.Tags {
		tags = append(tags, env.Replace(tag))
	}
	if a.DeploymentStatus != nil && a.DeploymentStatus.Canary && len(s.CanaryTags) > 0 {
		tags = tags[:0]
		for _, tag := range s.CanaryTags {
			tags = append(tags, env.Replace(tag))
		}
	}
	r := &structs.ServiceRegistration{
		ID:          fmt.Sprintf("_nomad-task-%s-%s-%s-%s", a.ID, owner, name, s.PortLabel),
		ServiceName: name,
		Namespace:   a.Namespace,
		NodeID:      a.NodeID,
		Datacenter:  node.Datacenter,
		JobID:       a.JobID,
		AllocID:     a.ID,
		Tags:        tags,
		Address:     addr,
		Port:        port,
	}
	w.regs[r.ID] = r
	for _, chk := range s.Checks {
		if chk != nil {
			w.checks = append(w.checks, newCheckSpec(a, t, s, r, chk))
		}
	}
}

// serviceAddress is where a service answers: its own address when set,
// else the host IP of its port (the node's address for a bare port
// number, or no port at all). In "alloc" mode the port is the one inside
// the allocation's network (the mapping's "to").
func serviceAddress(a *structs.Allocation, node *structs.Node, t *structs.Task, s *structs.Service) (string, int) {
	addr := nodeAddress(node)
	port := 0
	if n, err := strconv.Atoi(s.PortLabel); err == nil {
		port = n
	} else if s.PortLabel != "" {
		for _, p := range taskenv.AllocPorts(a, t) {
			if p.Label != s.PortLabel {
				continue
			}
			port = p.Value
			if s.AddressMode == structs.AddressModeAlloc && p.To > 0 {
				port = p.To
			}
			if ip := net.ParseIP(p.HostIP); ip != nil && !ip.IsUnspecified() {
				addr = p.HostIP
			}
			break
		}
	}
	if s.Address != "" {
		addr = s.Address
	}
	return addr, port
}

// nodeAddress is the node's advertised IP address.
func nodeAddress(node *structs.Node) string {
	if node == nil {
		return "127.0.0.1"
	}
	if ip := node.Attributes["unique.network.ip-address"]; ip != "" {
		return ip
	}
	if host, _, err := net.SplitHostPort(node.HTTPAddr); err == nil && host != "" {
		return host
	}
	return "127.0.0.1"
}

// markAllServices queues every allocation the client runs, and those it
// registered services for (which may be gone since).
func (c *Client) markAllServices(runners []*allocrunner.AllocRunner) {
	ids := make([]string, 0, len(runners))
	for _, ar := range runners {
		ids = append(ids, ar.ID())
	}
	c.services.mu.Lock()
	for id := range c.services.registered {
		ids = append(ids, id)
	}
	c.services.mu.Unlock()
	c.services.mark(ids...)
}
