package agent

import (
	"net/http"
	"net/url"
	"strings"
)

// splitObjectPath splits "/v1/<kind>/<id>[/<sub>]" into the object ID and
// the subresource. IDs may contain "/" (dispatched and periodic child
// jobs), sent either escaped as %2F or raw; the last segment is a
// subresource only if it is one of subs (or a two-segment one such as
// "periodic/force").
func splitObjectPath(r *http.Request, prefix string, subs ...map[string]bool) (id, sub string) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), prefix)
	parts := strings.Split(rest, "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	isSub := func(s string) bool {
		for _, m := range subs {
			if m[s] {
				return true
			}
		}
		return false
	}
	if n := len(parts); n >= 3 && isSub(parts[n-2]+"/"+parts[n-1]) {
		return strings.Join(parts[:n-2], "/"), parts[n-2] + "/" + parts[n-1]
	}
	if n := len(parts); n >= 2 && isSub(parts[n-1]) {
		return strings.Join(parts[:n-1], "/"), parts[n-1]
	}
	return strings.Join(parts, "/"), ""
}
