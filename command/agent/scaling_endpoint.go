package agent

import (
	"net/http"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// scalingPoliciesRequest serves GET /v1/scaling/policies (?job=, ?type=).
func (s *HTTPServer) scalingPoliciesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.ScalingPolicyListRequest{Job: r.URL.Query().Get("job"), Type: r.URL.Query().Get("type")}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.ScalingPolicyListResponse
	if err := s.rpc.RPC("Scaling.ListPolicies", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return nonNil(out.Policies), nil
}

// scalingPolicyRequest serves GET /v1/scaling/policy/:id.
func (s *HTTPServer) scalingPolicyRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	id := strings.TrimPrefix(r.URL.Path, "/v1/scaling/policy/")
	if id == "" || strings.Contains(id, "/") {
		return nil, codedError(http.StatusNotFound, "scaling policy not found")
	}
	args := structs.ScalingPolicySpecificRequest{ID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleScalingPolicyResponse
	if err := s.rpc.RPC("Scaling.GetPolicy", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Policy == nil {
		return nil, codedError(http.StatusNotFound, "scaling policy not found")
	}
	return scalingPolicyJSON(out.Policy), nil
}

// scalingPolicyView is a policy as Nomad serves it: with its namespace
// beside its target.
type scalingPolicyView struct {
	*structs.ScalingPolicy
	Namespace string
}

func scalingPolicyJSON(p *structs.ScalingPolicy) scalingPolicyView {
	return scalingPolicyView{ScalingPolicy: p, Namespace: p.Target[structs.ScalingTargetNamespace]}
}
