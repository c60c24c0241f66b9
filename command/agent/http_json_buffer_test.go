package agent

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestWrap_AnswersFromPooledBuffers checks that answers rendered through
// the pooled buffers are encodeJSON's bytes, whatever the answer before
// them: a long one, then a short one in the same buffer, pretty or not.
func TestWrap_AnswersFromPooledBuffers(t *testing.T) {
	answers := []interface{}{
		map[string]string{"long": strings.Repeat("<x&y>", 4000)},
		[]string{"a"},
		struct{ N int }{7},
		map[string]string{"long": strings.Repeat("z", 300<<10)}, // larger than the pool keeps
		"short",
	}
	srv := &HTTPServer{}
	for _, pretty := range []bool{false, true} {
		for i, a := range answers {
			h := srv.wrap(func(http.ResponseWriter, *http.Request) (interface{}, error) { return a, nil })
			target := "/v1/x"
			if pretty {
				target += "?pretty"
			}
			rec := httptest.NewRecorder()
			h(rec, httptest.NewRequest(http.MethodGet, target, nil))
			want, err := encodeJSON(a, pretty)
			must.NoError(t, err)
			must.Eq(t, string(want), rec.Body.String(), must.Sprintf("answer %d, pretty=%v", i, pretty))
			must.Eq(t, "application/json", rec.Header().Get("Content-Type"))
		}
	}
}
