package agent

import (
	"net/http"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// The native service discovery API: /v1/services and /v1/service/<name>
// (GET, with ?choose=N|key), /v1/service/<name>/<id> (DELETE), and the
// registrations of a job or an allocation (/v1/job/:id/services,
// /v1/allocation/:id/services), served by the ServiceRegistration.* RPCs
// with Nomad's paths and shapes.

// servicesRequest serves GET /v1/services: per namespace, the service
// names with the union of their tags.
func (s *HTTPServer) servicesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.ServiceRegistrationListRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.ServiceRegistrationListResponse
	if err := s.rpc.RPC("ServiceRegistration.List", &args, &out); err != nil {
		return nil, err
	}
	list, next, err := applyListOptions(lo, out.Services, func(l *structs.ServiceRegistrationListStub) string { return l.Namespace })
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return list, nil
}

// serviceSpecificRequest serves GET /v1/service/<name> and DELETE
// /v1/service/<name>/<id>.
func (s *HTTPServer) serviceSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/service/")
	name, id, hasID := strings.Cut(rest, "/")
	if name == "" {
		return nil, codedError(http.StatusBadRequest, "missing service name")
	}
	switch r.Method {
	case http.MethodGet:
		if hasID {
			return nil, codedError(http.StatusBadRequest, "invalid URI")
		}
		return s.serviceGet(w, r, name)
	case http.MethodDelete:
		if !hasID || id == "" {
			return nil, codedError(http.StatusBadRequest, "missing service id")
		}
		if strings.Contains(id, "/") {
			return nil, codedError(http.StatusBadRequest, "invalid URI")
		}
		args := structs.ServiceRegistrationDeleteByIDRequest{ID: id}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("ServiceRegistration.DeleteByID", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
	return nil, errInvalidMethod
}

// serviceGet answers the registrations of one service name ([] when
// there are none, not 404).
func (s *HTTPServer) serviceGet(w http.ResponseWriter, r *http.Request, name string) (interface{}, error) {
	args := structs.ServiceRegistrationByNameRequest{ServiceName: name, Choose: r.URL.Query().Get("choose")}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.ServiceRegistrationByNameResponse
	if err := s.rpc.RPC("ServiceRegistration.GetService", &args, &out); err != nil {
		return nil, err
	}
	list, next, err := applyListOptions(lo, out.Services, func(r *structs.ServiceRegistration) string { return r.ID })
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return list, nil
}

// jobServices serves GET /v1/job/:id/services: the job's registrations,
// 404 when the job does not exist.
func (s *HTTPServer) jobServices(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.ServiceRegistrationsByJobRequest{JobID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.ServiceRegistrationsResponse
	if err := s.rpc.RPC("ServiceRegistration.ListByJob", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Services == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownJob.Error())
	}
	return out.Services, nil
}

// allocServices serves GET /v1/allocation/:id/services: the allocation's
// registrations, 404 when it does not exist.
func (s *HTTPServer) allocServices(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.ServiceRegistrationsByAllocRequest{AllocID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.ServiceRegistrationsResponse
	if err := s.rpc.RPC("ServiceRegistration.ListByAlloc", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Services == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownAlloc.Error())
	}
	return out.Services, nil
}
