package agent

import (
	"net/http"
	"strings"
)

// Nomad's endpoints that this server does not serve are registered all
// the same, so that a caller learns that the server lacks the feature
// (501) instead of taking a 404 "Invalid URL path" for a typo. Building
// one of them means taking its path out of this table.

// unsupportedRoute is a route this server does not serve, and the
// feature it belongs to ("" for a feature of Nomad's community edition
// not built here).
type unsupportedRoute struct {
	Path, Feature string
}

const (
	featureEnterprise = "Nomad Enterprise"
	featureCSI        = "CSI"
	featureVault      = "Vault"
)

var unsupportedRoutes = []unsupportedRoute{
	{"/v1/jobs/statuses", ""},
	{"/v1/evaluations/count", ""},
	{"/v1/agent/host", ""},
	{"/v1/agent/reload", ""},
	{"/v1/agent/monitor/export", ""},
	{"/v1/client/gc", ""},

	{"/v1/volume/csi/", featureCSI},
	{"/v1/volumes/external", featureCSI},
	{"/v1/volumes/snapshot", featureCSI},
	{"/v1/plugins", featureCSI},
	{"/v1/plugin/csi/", featureCSI},

	{"/v1/quotas", featureEnterprise},
	{"/v1/quota", featureEnterprise},
	{"/v1/quota/", featureEnterprise},
	{"/v1/quota-usages", featureEnterprise},
	{"/v1/sentinel/policies", featureEnterprise},
	{"/v1/sentinel/policy/", featureEnterprise},
	{"/v1/recommendations", featureEnterprise},
	{"/v1/recommendations/apply", featureEnterprise},
	{"/v1/recommendation", featureEnterprise},
	{"/v1/recommendation/", featureEnterprise},
	{"/v1/operator/utilization", featureEnterprise},

	{"/v1/operator/upgrade-check/", featureVault},
}

// unsupportedRoutesOn registers with h the unsupported routes that no
// route registered before has taken (a route built since wins, and
// TestUnsupportedRoutes asks to take its path out of the table), and
// the license route, which answers as Nomad's community edition does.
func (s *HTTPServer) unsupportedRoutesOn(h func(string, need, handlerFunc)) {
	taken := map[string]bool{}
	for _, rt := range s.routeTable {
		taken[rt.Path] = true
	}
	for _, rt := range unsupportedRoutes {
		if !taken[rt.Path] {
			h(rt.Path, notServed, notSupported(rt.Feature))
		}
	}
	h("/v1/operator/license", public, operatorLicenseRequest)
}

// notSupported answers 501 naming the path and, when there is one, the
// feature it needs.
func notSupported(feature string) handlerFunc {
	return func(_ http.ResponseWriter, r *http.Request) (interface{}, error) {
		return nil, errNotSupported(r, feature)
	}
}

func errNotSupported(r *http.Request, feature string) error {
	msg := r.URL.Path + " is not supported by this server"
	if feature != "" {
		msg += " (" + feature + " feature)"
	}
	return codedError(http.StatusNotImplemented, msg)
}

// operatorLicenseRequest answers as Nomad's community edition: no
// license to read (204, which Nomad's api package reports as an
// Enterprise-only endpoint), none to install (501).
func operatorLicenseRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	switch r.Method {
	case http.MethodGet:
		w.WriteHeader(http.StatusNoContent)
		return nil, nil
	case http.MethodPut, http.MethodPost:
		return nil, errNotSupported(r, featureEnterprise)
	}
	return nil, errInvalidMethod
}

// clientAllocNotServed are the client allocation operations this server
// does not serve, with the feature each needs.
var clientAllocNotServed = map[string]string{"gc": "", "pause": featureEnterprise}

// checkClientAllocPath answers a client allocation path whose operation
// is not served before anything looks the allocation up, so that the
// answer does not depend on whether the allocation exists.
func checkClientAllocPath(next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) (interface{}, error) {
		rest := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/client/allocation/"), "/")
		if _, op, ok := strings.Cut(rest, "/"); ok {
			if feature, known := clientAllocNotServed[op]; known {
				return nil, errNotSupported(r, feature)
			}
		}
		return next(w, r)
	}
}
