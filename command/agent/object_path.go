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

// splitVersionTagPath recognises "/v1/job/<id>/versions/<name>/tag", the
// one job path with a variable segment after the ID, and returns the job
// ID and the tag name, unescaped.
func splitVersionTagPath(r *http.Request, prefix string) (id, name string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), prefix), "/")
	n := len(parts)
	if n < 4 || parts[n-1] != "tag" || parts[n-3] != "versions" || parts[n-2] == "" {
		return "", "", false
	}
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	id = strings.Join(parts[:n-3], "/")
	if id == "" {
		return "", "", false
	}
	return id, parts[n-2], true
}
