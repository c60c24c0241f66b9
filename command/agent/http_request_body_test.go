package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestDecodeBody_ReadsEveryLength reads bodies that declare their length
// truly, too short or too long, and bodies that declare none.
func TestDecodeBody_ReadsEveryLength(t *testing.T) {
	const body = `{"A": "value", "B": [1, 2, 3]}`
	cases := []struct {
		name     string
		declared int64
	}{
		{"exact", int64(len(body))},
		{"undeclared", -1},
		{"declared longer", int64(len(body)) + 100},
		{"declared shorter", 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPut, "/v1/x", io.NopCloser(strings.NewReader(body)))
			r.ContentLength = c.declared
			var out struct {
				A string
				B []int
			}
			must.NoError(t, decodeBody(r, &out))
			must.Eq(t, "value", out.A)
			must.Eq(t, []int{1, 2, 3}, out.B)
		})
	}
}

// TestDecodeBody_TooLarge refuses a body over the limit whether it
// declares its length, declares one within the limit, or declares none.
func TestDecodeBody_TooLarge(t *testing.T) {
	big := `"` + strings.Repeat("x", maxRequestBody) + `"`
	for _, declared := range []int64{int64(len(big)), maxRequestBody, -1} {
		r := httptest.NewRequest(http.MethodPut, "/v1/x", io.NopCloser(strings.NewReader(big)))
		r.ContentLength = declared
		var out string
		err := decodeBody(r, &out)
		must.Error(t, err)
		must.StrContains(t, err.Error(), "Request body is larger than")
	}
}
