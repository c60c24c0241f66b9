package agent

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// The variables API: GET /v1/vars and /v1/var/<path>, served by the
// Variables.* RPCs with Nomad's paths, statuses and texts. A write
// refused by a check-and-set or a lock answers 409 with what is there as
// the body.

// variablesListRequest serves GET /v1/vars?prefix=&namespace=: the
// metadata of the variables the token may list, by namespace and path;
// pages are keyed "<namespace>.<path>".
func (s *HTTPServer) variablesListRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.VariablesListRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.VariablesListResponse
	if err := s.rpc.RPC("Variables.List", &args, &out); err != nil {
		return nil, err
	}
	list, next, err := applyListOptions(lo, out.Data, func(m *structs.VariableMetadata) string {
		return m.Namespace + "." + m.Path
	})
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return list, nil
}

// variableSpecificRequest serves /v1/var/<path>: GET reads, PUT/POST
// writes (?cas=, ?lock-acquire, ?lock-renew, ?lock-release), DELETE
// removes (?cas=). Other methods answer 400, as Nomad's.
func (s *HTTPServer) variableSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	path := strings.TrimPrefix(r.URL.Path, "/v1/var/")
	if path == "" {
		return nil, codedError(http.StatusBadRequest, "missing variable path")
	}
	switch r.Method {
	case http.MethodGet:
		return s.variableRead(w, r, path)
	case http.MethodPut, http.MethodPost:
		return s.variableWrite(w, r, path)
	case http.MethodDelete:
		return s.variableDelete(w, r, path)
	}
	return nil, codedError(http.StatusBadRequest, "Invalid method")
}

func (s *HTTPServer) variableRead(w http.ResponseWriter, r *http.Request, path string) (interface{}, error) {
	args := structs.VariablesReadRequest{Path: path}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.VariablesReadResponse
	if err := s.rpc.RPC("Variables.Read", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Data == nil {
		return nil, codedError(http.StatusNotFound, "variable not found")
	}
	return out.Data, nil
}

// lockOps are the query parameters that ask for a lock operation.
var lockOps = []struct {
	param string
	op    structs.VarOp
}{
	{"lock-acquire", structs.VarOpLockAcquire},
	{"lock-renew", structs.VarOpLockRenew},
	{"lock-release", structs.VarOpLockRelease},
}

// writeOp reads the operation a PUT asks for from its query.
func writeOp(r *http.Request) (structs.VarOp, uint64, error) {
	q := r.URL.Query()
	op := structs.VarOpSet
	for _, l := range lockOps {
		if _, ok := q[l.param]; !ok {
			continue
		}
		if op != structs.VarOpSet {
			return "", 0, codedError(http.StatusBadRequest, "multiple lock operations")
		}
		op = l.op
	}
	if _, ok := q["cas"]; !ok {
		return op, 0, nil
	}
	if op != structs.VarOpSet {
		return "", 0, codedError(http.StatusBadRequest, "CAS can't be used with lock operations")
	}
	cas, err := parseCAS(r)
	return structs.VarOpCAS, cas, err
}

func parseCAS(r *http.Request) (uint64, error) {
	n, err := strconv.ParseUint(r.URL.Query().Get("cas"), 10, 64)
	if err != nil {
		return 0, codedError(http.StatusBadRequest, fmt.Sprintf("can not parse cas: %v", err))
	}
	return n, nil
}

func (s *HTTPServer) variableWrite(w http.ResponseWriter, r *http.Request, path string) (interface{}, error) {
	op, cas, err := writeOp(r)
	if err != nil {
		return nil, err
	}
	var in structs.VariableDecrypted
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	in.Path = path
	// Indexes and times are the server's; ModifyIndex carries the
	// check-and-set index.
	in.CreateIndex, in.CreateTime, in.ModifyTime, in.ModifyIndex = 0, 0, 0, cas
	args := structs.VariablesApplyRequest{Op: op, Var: &in}
	s.parseWriteRequest(r, &args.WriteRequest)
	if in.Namespace != "" {
		args.Namespace = in.Namespace
	}
	var out structs.VariablesApplyResponse
	if err := s.rpc.RPC("Variables.Apply", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if out.IsConflict() {
		return nil, writeConflict(w, r, &out)
	}
	// Renewing or releasing a lock answers with the metadata only, as
	// Nomad does: the items are not the lock holder's to read back.
	if (op == structs.VarOpLockRenew || op == structs.VarOpLockRelease) && out.Output != nil {
		return out.Output.VariableMetadata, nil
	}
	return out.Output, nil
}

func (s *HTTPServer) variableDelete(w http.ResponseWriter, r *http.Request, path string) (interface{}, error) {
	in := structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: path}}
	args := structs.VariablesApplyRequest{Op: structs.VarOpDelete, Var: &in}
	if _, ok := r.URL.Query()["cas"]; ok {
		cas, err := parseCAS(r)
		if err != nil {
			return nil, err
		}
		args.Op, in.ModifyIndex = structs.VarOpDeleteCAS, cas
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.VariablesApplyResponse
	if err := s.rpc.RPC("Variables.Apply", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if out.IsConflict() {
		return nil, writeConflict(w, r, &out)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil, nil
}

// writeConflict answers 409: with what is there as JSON, or the reason
// as text when there is nothing to show.
func writeConflict(w http.ResponseWriter, r *http.Request, out *structs.VariablesApplyResponse) error {
	if out.Conflict == nil {
		msg := out.Refusal
		if msg == "" {
			msg = "conflict"
		}
		return codedError(http.StatusConflict, msg)
	}
	buf, err := encodeJSON(out.Conflict, isPretty(r))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusConflict)
	w.Write(buf) // the client went away if this fails; nothing to answer
	return nil
}
