package api

import (
	"net/http"
)

// ServiceRegistration is one running instance of a `provider = "nomad"`
// service: where an allocation answers under the service's name. Its
// JSON is Nomad's.
type ServiceRegistration struct {
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

// ServiceRegistrationListStub is the services of one namespace, as
// GET /v1/services lists them.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationStub is one service name with every tag its
// instances carry.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// Services is the /v1/service endpoint group.
type Services struct {
	client *Client
}

// Services returns the service endpoint group.
func (c *Client) Services() *Services { return &Services{client: c} }

// List returns the service names of the namespace (q.Namespace "*": of
// every namespace the token may read), grouped per namespace.
func (s *Services) List(q *QueryOptions) ([]*ServiceRegistrationListStub, *QueryMeta, error) {
	var resp []*ServiceRegistrationListStub
	qm, err := s.client.query("/v1/services", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Get returns the registrations of one service name; none is an empty
// list, not an error. q.Params["choose"] = "N|key" picks N of them by
// rendezvous hashing on key.
func (s *Services) Get(serviceName string, q *QueryOptions) ([]*ServiceRegistration, *QueryMeta, error) {
	var resp []*ServiceRegistration
	qm, err := s.client.query("/v1/service/"+escape(serviceName), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Delete removes one registration of a service, for instance one a lost
// client left behind.
func (s *Services) Delete(serviceName, serviceID string, q *WriteOptions) (*WriteMeta, error) {
	return s.client.write(http.MethodDelete, "/v1/service/"+escape(serviceName)+"/"+escape(serviceID), nil, nil, q)
}

// Services returns the registrations of a job's allocations; a job that
// does not exist is a 404 error.
func (j *Jobs) Services(jobID string, q *QueryOptions) ([]*ServiceRegistration, *QueryMeta, error) {
	var resp []*ServiceRegistration
	qm, err := j.client.query("/v1/job/"+escape(jobID)+"/services", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Services returns an allocation's registrations; an allocation that
// does not exist is a 404 error.
func (a *Allocations) Services(allocID string, q *QueryOptions) ([]*ServiceRegistration, *QueryMeta, error) {
	var resp []*ServiceRegistration
	qm, err := a.client.query("/v1/allocation/"+escape(allocID)+"/services", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}
