package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestACLHTTP_HugeTokenHeader: a token of a megabyte is an unknown token
// like any other (403, and the answer does not echo it); headers past the
// HTTP server's limit (1 MiB and a little slack) are refused before
// anything reads them (431); the agent keeps answering afterwards.
func TestACLHTTP_HugeTokenHeader(t *testing.T) {
	ra := startDevAgentWithACLs(t)
	mgmt := ra.bootstrapACLs()

	cases := []struct {
		name   string
		header string
		size   int
		status int
		body   string
	}{
		{"X-Nomad-Token of 2 MiB", "X-Nomad-Token", 2 << 20, http.StatusRequestHeaderFieldsTooLarge, ""},
		{"bearer of 2 MiB", "Authorization", 2 << 20, http.StatusRequestHeaderFieldsTooLarge, ""},
		{"X-Nomad-Token of 1 MiB", "X-Nomad-Token", 1 << 20, http.StatusForbidden, "ACL token not found"},
		{"bearer of 1 MiB", "Authorization", 1 << 20, http.StatusForbidden, "ACL token not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			value := strings.Repeat("a", c.size)
			if c.header == "Authorization" {
				value = "Bearer " + value
			}
			resp, body := ra.doWithHeaders("GET", "/v1/jobs", "", map[string]string{c.header: value})
			must.Eq(t, c.status, resp.StatusCode)
			if c.body != "" {
				must.Eq(t, c.body, body)
			}
			must.StrNotContains(t, body, "aaaaaaaa")
		})
	}

	resp, _ := ra.doWithHeaders("GET", "/v1/jobs", "", map[string]string{"X-Nomad-Token": mgmt})
	must.Eq(t, http.StatusOK, resp.StatusCode)
}
