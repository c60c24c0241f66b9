package structs

import (
	"fmt"
	"net"
	"slices"
)

// ServiceRegistration is one running instance of a `provider = "nomad"`
// service: the address and port an allocation publishes under a service
// name. Clients write them when an alloc starts and remove them when it
// stops; the servers also drop an alloc's registrations when it becomes
// terminal and a node's when the node goes down, so that a client that
// vanished leaves nothing behind.
type ServiceRegistration struct {
	// ID is built by the client from the alloc, task or group, service
	// name and port label, so re-registering is idempotent.
	ID          string
	ServiceName string
	Namespace   string
	NodeID      string
	Datacenter  string
	JobID       string
	AllocID     string
	Tags        []string
	Address     string
	Port        int
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (s *ServiceRegistration) Copy() *ServiceRegistration {
	if s == nil {
		return nil
	}
	n := *s
	n.Tags = slices.Clone(s.Tags)
	return &n
}

// Equal reports whether the two describe the same registration, apart
// from the indexes the store maintains.
func (s *ServiceRegistration) Equal(o *ServiceRegistration) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.ID == o.ID && s.ServiceName == o.ServiceName && s.Namespace == o.Namespace &&
		s.NodeID == o.NodeID && s.Datacenter == o.Datacenter && s.JobID == o.JobID &&
		s.AllocID == o.AllocID && slices.Equal(s.Tags, o.Tags) && s.Address == o.Address && s.Port == o.Port
}

// Validate checks what the store relies on. A wildcard address is
// refused: it tells a consumer nothing about where to connect.
func (s *ServiceRegistration) Validate() error {
	var p problems
	for _, f := range []struct{ name, v string }{
		{"ID", s.ID}, {"ServiceName", s.ServiceName}, {"Namespace", s.Namespace},
		{"NodeID", s.NodeID}, {"JobID", s.JobID}, {"AllocID", s.AllocID},
	} {
		if f.v == "" {
			p.add("", "missing %s", f.name)
		}
	}
	if ip := net.ParseIP(s.Address); s.Address == "" || (ip != nil && ip.IsUnspecified()) {
		p.add("", "invalid service registration address %q", s.Address)
	}
	if s.Port < 0 || s.Port > 65535 {
		p.add("", "Port must be 0..65535, got %d", s.Port)
	}
	if err := p.err(); err != nil {
		return fmt.Errorf("service registration %q: %w", s.ID, err)
	}
	return nil
}

// ServiceRegistrationStub is one service name of a namespace in a
// listing, with every tag its instances carry.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// ServiceRegistrationListStub is the services of one namespace.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationUpsertRequest writes registrations: the
// ServiceRegistration.Upsert RPC and its Raft entry.
type ServiceRegistrationUpsertRequest struct {
	Services []*ServiceRegistration
	WriteRequest
}

// ServiceRegistrationDeleteByIDRequest removes one registration: the
// ServiceRegistration.DeleteByID RPC and its Raft entry.
type ServiceRegistrationDeleteByIDRequest struct {
	ID string
	WriteRequest
}

// ServiceRegistrationDeleteByAllocIDsRequest removes every registration
// of the allocs: the ServiceRegistration.DeleteByAllocIDs RPC, with which
// a client removes a stopped alloc's services at once, and its Raft
// entry.
type ServiceRegistrationDeleteByAllocIDsRequest struct {
	AllocIDs []string
	WriteRequest
}

// ServiceRegistrationListRequest lists the service names of a namespace
// ("*": of every namespace the token may read).
type ServiceRegistrationListRequest struct {
	QueryOptions
}

// ServiceRegistrationListResponse answers ServiceRegistration.List.
type ServiceRegistrationListResponse struct {
	Services []*ServiceRegistrationListStub
	QueryMeta
}

// ServiceRegistrationByNameRequest reads the registrations of one service
// name in the request's namespace. Choose, "N|key", picks N of them by
// rendezvous hashing on key.
type ServiceRegistrationByNameRequest struct {
	ServiceName string
	Choose      string
	QueryOptions
}

// ServiceRegistrationByNameResponse answers ServiceRegistration.GetService.
type ServiceRegistrationByNameResponse struct {
	Services []*ServiceRegistration
	QueryMeta
}

// ServiceRegistrationsByJobRequest reads the registrations of one job of
// the request's namespace.
type ServiceRegistrationsByJobRequest struct {
	JobID string
	QueryOptions
}

// ServiceRegistrationsByAllocRequest reads the registrations of one
// allocation.
type ServiceRegistrationsByAllocRequest struct {
	AllocID string
	QueryOptions
}

// ServiceRegistrationsResponse answers the reads by job and by alloc:
// Services is nil when the job or allocation does not exist, empty when
// it has none.
type ServiceRegistrationsResponse struct {
	Services []*ServiceRegistration
	QueryMeta
}
