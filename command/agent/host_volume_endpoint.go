package agent

import (
	"net/http"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// The volumes API for dynamic host volumes, with Nomad's paths:
// /v1/volumes?type=host, /v1/volume/host/create, /v1/volume/host/register
// and /v1/volume/host/<id>, served by the HostVolume.* RPCs. CSI volumes
// and sticky-volume claims are not built: their paths answer 501.

// volumesRequest serves GET /v1/volumes?type=host&node_id=&node_pool=&prefix=.
func (s *HTTPServer) volumesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	switch typ := q.Get("type"); typ {
	case "host":
	case "csi":
		return nil, errNotSupported(r, featureCSI)
	default:
		return nil, codedError(http.StatusBadRequest, "Invalid volume type: "+typ+` (must be "host" or "csi")`)
	}
	args := structs.HostVolumeListRequest{NodeID: q.Get("node_id"), NodePool: q.Get("node_pool")}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.HostVolumeListResponse
	if err := s.rpc.RPC("HostVolume.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out.Volumes, nil
}

// volumeClaimsRequest serves /v1/volumes/claims and /v1/volumes/claim/:
// sticky host volume claims are not built.
func (s *HTTPServer) volumeClaimsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	return nil, codedError(http.StatusNotImplemented, r.URL.Path+": sticky host volume claims are not supported by this server")
}

// volumeSpecificRequest serves /v1/volume/host/... (/v1/volume/csi/ is
// one of the unsupported routes).
func (s *HTTPServer) volumeSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/volume/")
	typ, id, _ := strings.Cut(rest, "/")
	switch typ {
	case "host":
	default:
		return nil, codedError(http.StatusNotFound, "Invalid URL path")
	}
	switch {
	case id == "" || strings.Contains(id, "/"):
		return nil, codedError(http.StatusBadRequest, "Missing volume ID")
	case id == "create" || id == "register":
		if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
			return nil, err
		}
		return s.hostVolumeWrite(w, r, id == "register")
	}
	switch r.Method {
	case http.MethodGet:
		args := structs.HostVolumeGetRequest{ID: id}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.HostVolumeGetResponse
		if err := s.rpc.RPC("HostVolume.Get", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.Volume == nil {
			return nil, codedError(http.StatusNotFound, "volume not found")
		}
		return out.Volume, nil
	case http.MethodDelete:
		args := structs.HostVolumeDeleteRequest{VolumeID: id, Force: r.URL.Query().Get("force") == "true"}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.HostVolumeDeleteResponse
		if err := s.rpc.RPC("HostVolume.Delete", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return struct{}{}, nil
	}
	return nil, errInvalidMethod
}

// hostVolumeWrite creates or registers the volume of the body,
// {"Volume": {...}, "PolicyOverride": bool}, and answers
// {"Volume": {...}, "Warnings": ""}.
func (s *HTTPServer) hostVolumeWrite(w http.ResponseWriter, r *http.Request, register bool) (interface{}, error) {
	var args structs.HostVolumeCreateRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	if args.Volume == nil {
		return nil, codedError(http.StatusBadRequest, "missing volume definition")
	}
	// State, indexes, times and the volume's users are the server's.
	v := args.Volume
	v.State, v.CreateIndex, v.ModifyIndex, v.CreateTime, v.ModifyTime, v.Allocations = "", 0, 0, 0, 0, nil
	s.parseWriteRequest(r, &args.WriteRequest)
	if v.Namespace != "" && r.URL.Query().Get("namespace") == "" {
		// The volume names its namespace, as a job does.
		args.Namespace = v.Namespace
	}
	method := "HostVolume.Create"
	if register {
		method = "HostVolume.Register"
	}
	var out structs.HostVolumeCreateResponse
	if err := s.rpc.RPC(method, &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return struct {
		Volume   *structs.HostVolume
		Warnings string
	}{out.Volume, out.Warnings}, nil
}
